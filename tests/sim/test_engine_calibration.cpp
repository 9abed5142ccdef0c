// Engine instructions against the silicon micro-benchmarks of reference calibration.md (E1-E6), each on the
// architecture it was measured on, within 10% of the measured figure (written beside each check with the model's
// own figure worked out from sim/arch/<arch>.json).
#include <gtest/gtest.h>

#include "neuronsim/builder.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "support/calibration.hpp"
#include "support/timing_run.hpp"

// The helpers below live in namespace test_engine_calibration, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_engine_calibration {

using namespace neuronsim;
using builder::Builder;
using isa::ActivationFunctionType;
using isa::Dtype;
using isa::Engine;
using isa::InstructionType;

using neuronsim::test::timing_opts;
using neuronsim::test::within;
using neuronsim::test::work_event;

namespace {

// Activations on ACT, SBUF -> SBUF bf16, one per (function, elements per partition), each on its own tiles.
sim::RunResult activations(const std::string &arch, const std::vector<std::pair<ActivationFunctionType, int64_t>> &acts) {
  Builder b("act");
  int k = 0;
  for (const auto &[f, n] : acts) {
    auto x = b.sbuf("x" + std::to_string(k), {128, n}, Dtype::bfloat16);
    auto y = b.sbuf("y" + std::to_string(k++), {128, n}, Dtype::bfloat16);
    b.add(InstructionType::Activation, {b.ap(x.all())}, {b.ap(y.all())}).act_func(f).engine(Engine::Activation);
  }
  isa::Program p = b.finish();
  return sim::Simulator(p, timing_opts(arch)).run();
}

// E5's stream on trn2: four fp32 matmuls of a 128 x 128 stationary and 512 moving columns into one PSUM tile, the
// first `onezero` of them with is_weight_onezero set.
sim::RunResult fp32_matmul_stream(int onezero) {
  Builder b("mm32");
  auto w = b.sbuf("w", {128, 4 * 128}), x = b.sbuf("x", {128, 512});
  auto o = b.psum("o", {128, 512});
  for (int i = 0; i < 4; ++i)
    b.add(InstructionType::Matmult, {b.ap(w.tile(0, 128, i * 128, 128)), b.ap(x.all())}, {b.ap(o.all())})
        .start_tensor_calc(i == 0)
        .is_weight_onezero(i < onezero);
  isa::Program p = b.finish();
  return sim::Simulator(p, timing_opts("trn2")).run();
}

} // namespace

TEST(EngineCalibration, E1ActivationLasts400nsAt128And3710nsAt4096AfterOneTableLoad) {
  // calibration.md E1 (trn2): exp bf16 -> bf16, SBUF -> SBUF: 400 ns at 128 elements per partition, 3710 ns at 4096
  // (pixel), after a ~1287 ns activation-table load. Model: occupancy (act_fixed_cycles 352 + N) / 1.2 GHz = 400.0
  // ns (0%) and 3706.7 ns (-0.1%); the first exp also loads the table (act_table_load_ns 1287), the second finds
  // exp_and_others resident.
  const sim::RunResult r = activations("trn2", {{ActivationFunctionType::Exp, 128}, {ActivationFunctionType::Exp, 4096}});
  EXPECT_NEAR(work_event(r, 0).busy_ns, 1287.0 + 480 / 1.2, 0.01);
  EXPECT_TRUE(within(work_event(r, 0).busy_ns - 1287.0, 400.0));
  EXPECT_TRUE(within(work_event(r, 1).busy_ns, 3710.0));
  EXPECT_EQ(r.act_table_loads, 1);
}

TEST(EngineCalibration, E1TheTableLoadsWhenTheFunctionSetChanges) {
  // ScalarE holds one activation-function set (reference neuronx-cc/arch/activation-engine.md; the compiler's
  // roster, include/neuronsim/isa/tables/act_func_sets.def): exp and tanh share exp_and_others; sigmoid needs
  // sigmoid_and_others (which holds tanh too); copy and relu are hardwired and need none. trn2, 128 elements each.
  using F = ActivationFunctionType;
  const sim::RunResult r = activations(
      "trn2", {{F::Copy, 128}, {F::Exp, 128}, {F::Tanh, 128}, {F::Relu, 128}, {F::Sigmoid, 128}, {F::Tanh, 128}, {F::Exp, 128}});
  const double plain = 480 / 1.2;  // (352 + 128) cycles at 1.2 GHz
  const std::vector<bool> loads = {false, true, false, false, true, false, true};
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(work_event(r, i).busy_ns, plain + (loads[static_cast<size_t>(i)] ? 1287.0 : 0.0), 0.01) << i;
  EXPECT_EQ(r.act_table_loads, 3);
}

TEST(EngineCalibration, E2VectorTensorTensorTakesTwoCyclesPerElement) {
  // calibration.md E2 (NC-v2): DVE tensor_tensor fp32 with two SBUF inputs, 8192 elements per partition: 14968 ns
  // (add, 64 partitions), 14987 ns (multiply, 128 partitions). Model: 2N cycles at 1.12 GHz = 14628.6 ns (-2.3%,
  // -2.4%): the partition count makes no difference.
  for (const auto &[rows, op, silicon] : std::vector<std::tuple<int64_t, isa::AluOp, double>>{
           {64, isa::AluOp::add, 14968.0}, {128, isa::AluOp::mult, 14987.0}}) {
    Builder b("tt");
    auto x = b.sbuf("x", {rows, 8192}), y = b.sbuf("y", {rows, 8192}), z = b.sbuf("z", {rows, 8192});
    b.add(InstructionType::TensorTensor, {b.ap(x.all()), b.ap(y.all())}, {b.ap(z.all())}).op(op).engine(Engine::DVE);
    isa::Program p = b.finish();
    const sim::RunResult r = sim::Simulator(p, timing_opts("trn1")).run();
    EXPECT_TRUE(within(work_event(r, 0).busy_ns, silicon)) << rows;
    EXPECT_NEAR(work_event(r, 0).busy_ns, 2 * 8192 / 1.12, 0.01);
  }
}

TEST(EngineCalibration, E3ATinyActivationLasts159nsAndDependentOnesIssueEvery189ns) {
  // calibration.md E3 (NC-v2): an ACTIVATE on 1 element per partition lasts 159 ns; with a read-after-write
  // dependency on the previous one the interval is ~189 ns (264 ACT cycles). Model: occupancy MIN_II 64 +
  // act_fixed_cycles 159 = 223 cycles = 159.3 ns (+0.2%); + act_dependent_overhead_cycles 41 = 264 cycles = 188.6
  // ns (-0.2%). Identity is hardwired: no table load.
  Builder b("chain");
  auto t = b.sbuf("t", {128, 1});
  for (int k = 0; k < 4; ++k)
    b.add(InstructionType::Activation, {b.ap(t.all())}, {b.ap(t.all())}).act_func(ActivationFunctionType::Identity);
  isa::Program p = b.finish();
  const sim::RunResult r = sim::Simulator(p, timing_opts("trn1")).run();
  EXPECT_TRUE(within(work_event(r, 0).busy_ns, 159.0));
  EXPECT_NEAR(work_event(r, 0).busy_ns, 223 / 1.4, 0.01);
  EXPECT_TRUE(within(work_event(r, 3).start_ns - work_event(r, 2).start_ns, 189.0));
  EXPECT_NEAR((work_event(r, 3).start_ns - work_event(r, 2).start_ns) * 1.4, 264.0, 0.01);
}

TEST(EngineCalibration, E4ALoneMatmulShowsTheArraysFillAndDrain) {
  // calibration.md E4 (NC-v2, bf16): a lone MultiplyMoving of 128 moving columns lasts 188 ns with a 1-column
  // stationary and 219 ns with 96 columns; it starts ~26 ns after its LoadStationary started. Model: the matmul
  // after an idle PE occupies PE for pe_isolated_ls_cycles 73 (26.1 ns) + (128 + columns + pe_fill_drain_cycles
  // 397) / 2.8 GHz: 187.9 ns (-0.1%) and 221.8 ns (+1.3%) besides the 26.1.
  for (const auto &[cols, silicon] : std::vector<std::pair<int64_t, double>>{{1, 188.0}, {96, 219.0}}) {
    Builder b("mm");
    auto w = b.sbuf("w", {128, cols}, Dtype::bfloat16), x = b.sbuf("x", {128, 128}, Dtype::bfloat16);
    auto o = b.psum("o", {cols, 128});
    b.add(InstructionType::Matmult, {b.ap(w.all()), b.ap(x.all())}, {b.ap(o.all())}).start_tensor_calc(true);
    isa::Program p = b.finish();
    const sim::RunResult r = sim::Simulator(p, timing_opts("trn1")).run();
    const double ls = 73 / 2.8;
    EXPECT_TRUE(within(ls, 26.0));
    EXPECT_TRUE(within(work_event(r, 0).busy_ns - ls, silicon)) << cols;
    EXPECT_NEAR(work_event(r, 0).busy_ns, (73 + 128 + cols + 397) / 2.8, 0.01) << cols;
  }
}

TEST(EngineCalibration, E5Fp32MatmulsRunAtFourCyclesPerMovingColumn) {
  // calibration.md E5 (trn2): nc_matmul calls with a 128 x 128 fp32 stationary and 512 fp32 moving columns start
  // every ~858 ns back to back (4 PE cycles per moving column at 2.4 GHz). Model: pe_fp32_passes 4 x max(512,
  // MM_INIT 64) = 2048 cycles = 853.3 ns (-0.5%), the next weights loading behind it.
  const sim::RunResult r = fp32_matmul_stream(0);
  EXPECT_TRUE(within(work_event(r, 3).start_ns - work_event(r, 2).start_ns, 858.0));
  EXPECT_NEAR(work_event(r, 3).start_ns - work_event(r, 2).start_ns, 2048 / 2.4, 0.01);
}

TEST(EngineCalibration, Fp32MatmulsWithAOneZeroStationaryTakeHalfThePasses) {
  // The public nki.isa.nc_matmul page: is_stationary_onezero / is_moving_onezero (BIR is_weight_onezero /
  // is_fmap_onezero) "could lead to 2x better performance" for fp32 -- the form NKI's broadcast_to takes (a row of
  // ones). E5's stream with the hint: 2 passes x max(512, 64) = 1024 cycles = 426.7 ns apart on trn2; one matmul
  // without the hint keeps E5's 2048 cycles.
  const sim::RunResult r = fp32_matmul_stream(3);
  EXPECT_NEAR(work_event(r, 2).start_ns - work_event(r, 1).start_ns, 1024 / 2.4, 0.01);
  EXPECT_NEAR(work_event(r, 3).start_ns - work_event(r, 2).start_ns, 1024 / 2.4, 0.01);  // the hinted one before
  EXPECT_NEAR(work_event(r, 3).busy_ns, 2048 / 2.4, 1.0);
}

TEST(EngineCalibration, E6TinyVectorInstructionsIssueEveryMinIi) {
  // calibration.md E6 (trn1): back-to-back tensor_tensor on [128, 3] fp32 with one input in PSUM ~58.6 ns each, a
  // small tensor_reduce ~62.9 ns. Model: MIN_II 64 cycles at 1.12 GHz = 57.1 ns (-2.5%, -9.2%).
  Builder b("tiny");
  auto ps = b.psum("ps", {128, 3});
  auto s = b.sbuf("s", {128, 3});
  auto outs = b.sbuf("o", {128, 8 * 3});
  auto red = b.sbuf("r", {128, 8});
  for (int i = 0; i < 4; ++i)
    b.add(InstructionType::TensorTensor, {b.ap(ps.all()), b.ap(s.all())}, {b.ap(outs.tile(0, 128, 3 * i, 3))})
        .op(isa::AluOp::add)
        .engine(Engine::DVE);
  for (int i = 0; i < 4; ++i)
    b.add(InstructionType::TensorReduce, {b.ap(s.all())}, {b.ap(red.tile(0, 128, i, 1))})
        .op(isa::AluOp::add)
        .engine(Engine::DVE);
  isa::Program p = b.finish();
  const sim::RunResult r = sim::Simulator(p, timing_opts("trn1")).run();
  EXPECT_TRUE(within(work_event(r, 3).start_ns - work_event(r, 2).start_ns, 58.6));
  EXPECT_TRUE(within(work_event(r, 7).start_ns - work_event(r, 6).start_ns, 62.9));
}

TEST(EngineCalibration, E6DependentTensorTensorThenReducePairsCostTheirMinIiAndSixCycles) {
  // calibration.md E6 (trn1), the conv1d kernel it was measured on: each tensor_tensor ([128, 3] fp32, one input in
  // PSUM) is read by the tensor_reduce right after it (read-after-write on one engine): ~58.6 ns per tensor_tensor,
  // ~62.9 ns per tensor_reduce. Model: each occupies MIN_II 64 cycles at 1.12 GHz = 57.1 ns (-2.5%); the reduce
  // starts dve_dependent_latency_cycles 6 = 5.4 ns after the tensor_tensor ends, so each reduce adds 62.5 ns to the
  // engine's time (-0.6%), and a pair takes 119.6 ns (the ~262 ns of the [ARCH2] 100-cycle overhead before).
  Builder b("pairs");
  auto ps = b.psum("ps", {128, 3});
  auto s = b.sbuf("s", {128, 3});
  auto tt = b.sbuf("tt", {128, 8 * 3});
  auto red = b.sbuf("r", {128, 8});
  for (int i = 0; i < 8; ++i) {
    b.add(InstructionType::TensorTensor, {b.ap(ps.all()), b.ap(s.all())}, {b.ap(tt.tile(0, 128, 3 * i, 3))})
        .op(isa::AluOp::mult)
        .engine(Engine::DVE);
    b.add(InstructionType::TensorReduce, {b.ap(tt.tile(0, 128, 3 * i, 3))}, {b.ap(red.tile(0, 128, i, 1))})
        .op(isa::AluOp::add)
        .engine(Engine::DVE);
  }
  isa::Program p = b.finish();
  const sim::RunResult r = sim::Simulator(p, timing_opts("trn1")).run();
  for (int i = 1; i < 8; ++i) {
    const auto &t = work_event(r, 2 * i), &red_i = work_event(r, 2 * i + 1);
    EXPECT_TRUE(within(t.end_ns - t.start_ns, 58.6)) << i;
    EXPECT_TRUE(within(red_i.end_ns - t.end_ns, 62.9)) << i;  // the reduce's share of the engine's time
    EXPECT_NEAR(red_i.end_ns - t.end_ns, (6 + 64) / 1.12, 0.01) << i;
    EXPECT_NEAR(t.start_ns - work_event(r, 2 * i - 1).end_ns, 0.0, 0.01) << i;  // the next pair follows at once
  }
  // Per pair ~59 + ~63 ns, not ~262.
  EXPECT_NEAR(work_event(r, 15).end_ns - work_event(r, 1).end_ns, 7 * (64 + 6 + 64) / 1.12, 0.05);
}

}  // namespace test_engine_calibration
