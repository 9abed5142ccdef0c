// Golden cycle counts of the cost model, one per formula family, each with its derivation
// (engines/cost/cost.cpp; reference neuron-arch.md section 2, [ISA226] unless stated).
#include <gtest/gtest.h>

#include "neuronsim/builder.hpp"
#include "neuronsim/engines/cost.hpp"
#include "neuronsim/engines/dma.hpp"
#include "neuronsim/sim/simulator.hpp"

using namespace neuronsim;
using builder::Builder;
using isa::Dtype;
using isa::Engine;
using isa::InstructionType;

namespace {

// Builds a one-instruction program with `make`, and returns that instruction's cost on `engine`.
template <typename F> engines::Cost cost_of(F make, Engine engine, const std::string &arch = "trn1") {
  Builder b;
  make(b);
  isa::Program p = b.finish();
  sim::RunOptions o;
  o.arch = arch;
  o.timing_only = true;
  sim::Simulator s(p, o);
  const auto &si = s.schedule().insts.back();
  return engines::instruction_cost(si.d, engine, s.arch(), s.memory());
}

auto tensor_tensor(Dtype dt, bool psum_input, isa::AluOp op, int64_t n = 512) {
  return [=](Builder &b) {
    auto a = psum_input ? b.psum("a", {128, n}, dt) : b.sbuf("a", {128, n}, dt);
    auto c = b.sbuf("c", {128, n}, dt), o = b.sbuf("o", {128, n}, dt);
    b.add(InstructionType::TensorTensor, {b.ap(a.all()), b.ap(c.all())}, {b.ap(o.all())}).op(op);
  };
}

auto tensor_scalar(Dtype dt, int64_t n, int64_t step = 1) {
  return [=](Builder &b) {
    auto a = b.sbuf("a", {128, n * step}, dt), o = b.sbuf("o", {128, n}, dt);
    b.add(InstructionType::TensorScalarPtr, {b.ap(a.at(0, {{n * step, 128}, {step, n}})), Builder::imm(2.0)},
          {b.ap(o.all())})
        .op0(isa::AluOp::mult);
  };
}

auto unary(InstructionType t, Dtype dt, int64_t n) {
  return [=](Builder &b) {
    auto a = b.sbuf("a", {128, n}, dt), o = b.sbuf("o", {128, n}, dt);
    b.add(t, {b.ap(a.all())}, {b.ap(o.all())});
  };
}

} // namespace

TEST(Cost, TensorTensorTwoSbufInputsCosts2N) {
  // fp32, both inputs in SBUF: max(MIN_II, 2N) = 2 * 512.
  EXPECT_EQ(cost_of(tensor_tensor(Dtype::float32, false, isa::AluOp::max), Engine::DVE).cycles, 1024);
}
TEST(Cost, TensorTensorOnePsumInputCostsN) {
  EXPECT_EQ(cost_of(tensor_tensor(Dtype::float32, true, isa::AluOp::max), Engine::DVE).cycles, 512);
}
TEST(Cost, TensorTensorBf16AddContiguousSbufCostsN) {
  EXPECT_EQ(cost_of(tensor_tensor(Dtype::bfloat16, false, isa::AluOp::add), Engine::DVE).cycles, 512);
  EXPECT_EQ(cost_of(tensor_tensor(Dtype::bfloat16, false, isa::AluOp::max), Engine::DVE).cycles, 1024);
}
TEST(Cost, TensorTensorV3PerfModeHalvesAllBf16SbufInputs) {
  // [ARCH3] 2x on NeuronCore-v3 with both inputs in SBUF and all tensors BF16/FP16: 2N -> N.
  EXPECT_EQ(cost_of(tensor_tensor(Dtype::bfloat16, false, isa::AluOp::max), Engine::DVE, "trn2").cycles, 512);
}
TEST(Cost, TensorScalarIsMaxMinIiN) {
  EXPECT_EQ(cost_of(tensor_scalar(Dtype::float32, 512), Engine::DVE).cycles, 512);
  EXPECT_EQ(cost_of(tensor_scalar(Dtype::float32, 16), Engine::DVE).cycles, 64);  // MIN_II
}
TEST(Cost, TensorScalarV3PerfModeIs4xForContiguousBf16Sbuf) {
  EXPECT_EQ(cost_of(tensor_scalar(Dtype::bfloat16, 512), Engine::DVE, "trn2").cycles, 128);  // 512 / 4
  EXPECT_EQ(cost_of(tensor_scalar(Dtype::bfloat16, 512), Engine::DVE, "trn1").cycles, 512);
  // Non-contiguous (innermost step 2, 4 bytes): 2x only: 512 / 2.
  EXPECT_EQ(cost_of(tensor_scalar(Dtype::bfloat16, 512, 2), Engine::DVE, "trn2").cycles, 256);
}
TEST(Cost, InnermostStrideOver16BytesHalvesBandwidth) {
  // fp32 with innermost step 8 elements = 32 bytes > 16: the streaming term doubles, 2 * 512.
  EXPECT_EQ(cost_of(tensor_scalar(Dtype::float32, 512, 8), Engine::DVE).cycles, 1024);
  // step 4 = 16 bytes is not above 16: unchanged.
  EXPECT_EQ(cost_of(tensor_scalar(Dtype::float32, 512, 4), Engine::DVE).cycles, 512);
}
TEST(Cost, TensorReduceBf16AddIsHalfN) {
  auto reduce = [](Dtype dt) {
    return [=](Builder &b) {
      auto a = b.sbuf("a", {128, 512}, dt), o = b.sbuf("o", {128, 1}, dt);
      b.add(InstructionType::TensorReduce, {b.ap(a.all())}, {b.ap(o.all())}).op(isa::AluOp::add).axis(isa::AxisListType::X);
    };
  };
  EXPECT_EQ(cost_of(reduce(Dtype::bfloat16), Engine::DVE).cycles, 256);  // N/2 with N = 512 input elements
  EXPECT_EQ(cost_of(reduce(Dtype::float32), Engine::DVE).cycles, 512);
}
TEST(Cost, ReciprocalIs8N) {
  EXPECT_EQ(cost_of(unary(InstructionType::Reciprocal, Dtype::float32, 100), Engine::DVE).cycles, 800);
}
TEST(Cost, BnAggrIs13TimesNOver3) {
  EXPECT_EQ(cost_of(unary(InstructionType::BNStatsAggregate, Dtype::float32, 300), Engine::DVE).cycles, 1300);
  EXPECT_EQ(cost_of(unary(InstructionType::BNStatsAggregate, Dtype::float32, 6), Engine::DVE).cycles, 64);
}
TEST(Cost, MemsetZeroIntoBf16IsHalfN) {
  auto memset = [](Dtype dt, double v) {
    return [=](Builder &b) {
      auto o = b.sbuf("o", {128, 512}, dt);
      b.add(InstructionType::Memset, {}, {b.ap(o.all())}).memset_mode(isa::MemsetMode::Const).constant(v);
    };
  };
  EXPECT_EQ(cost_of(memset(Dtype::bfloat16, 0.0), Engine::DVE).cycles, 256);
  EXPECT_EQ(cost_of(memset(Dtype::bfloat16, 1.0), Engine::DVE).cycles, 512);
  EXPECT_EQ(cost_of(memset(Dtype::float32, 0.0), Engine::DVE).cycles, 512);
}
TEST(Cost, ActivationIsMaxMinIiNPlusReadoutWhenAccumulating) {
  auto act = [](isa::EngineAccumulationType acc, Dtype dt) {
    return [=](Builder &b) {
      auto a = b.sbuf("a", {128, 512}, dt), o = b.sbuf("o", {128, 512}, dt);
      b.add(InstructionType::Activation, {b.ap(a.all())}, {b.ap(o.all())}).act_func(isa::ActivationFunctionType::Exp).acc(acc);
    };
  };
  // Besides its stream, every ACT data-path instruction occupies ACT for act_fixed_cycles (calibration.md E1/E3):
  // 159 on trn1, 352 on trn2 and trn3.
  auto c = cost_of(act(isa::EngineAccumulationType::Idle, Dtype::float32), Engine::Activation);
  EXPECT_EQ(c.cycles, 159 + 512);
  EXPECT_NEAR(c.ns, (159 + 512) / 1.4, 1e-9);
  EXPECT_NEAR(c.latency_ns, 41 / 1.4, 1e-9);  // act_dependent_overhead_cycles (E3: 264 - 64 - 159)
  EXPECT_EQ(cost_of(act(isa::EngineAccumulationType::Accumulate, Dtype::float32), Engine::Activation).cycles, 159 + 576);
  // [ARCH4] v4 ScalarE streams 256 BF16 elements per cycle: 512 / 2.
  EXPECT_EQ(cost_of(act(isa::EngineAccumulationType::Idle, Dtype::bfloat16), Engine::Activation, "trn3").cycles, 352 + 256);
}
TEST(Cost, PoolIsStartupPlusN) {
  auto iota = [](Builder &b) {
    auto o = b.sbuf("o", {128, 512}, Dtype::int32);
    b.add(InstructionType::Iota, {}, {b.ap(o.all())});
  };
  EXPECT_EQ(cost_of(iota, Engine::Pool).cycles, 150 + 512);
}
TEST(Cost, MatmulMultiplyMovingIsMaxOfMovingAndMmInitLoadStationaryIsAQuarter) {
  // reference neuron-arch.md 2.1 [ARCH2, PERF Opt #7]: MultiplyMoving issues every max(N_moving, MM_INIT_LATENCY
  // = 64) PE cycles; Fast LoadStationary takes N_stationary / 4 (the core hides it behind the previous
  // MultiplyMoving, tests/sim/test_timing_mechanisms.cpp); FP32 runs 4 passes of both [ISA226].
  auto mm = [](int64_t m, int64_t n, Dtype dt) {
    return [=](Builder &b) {
      auto w = b.sbuf("w", {128, m}, dt), x = b.sbuf("x", {128, n}, dt);
      auto o = b.psum("o", {m, n}, Dtype::float32);
      b.add(InstructionType::Matmult, {b.ap(w.all()), b.ap(x.all())}, {b.ap(o.all())}).start_tensor_calc(true);
    };
  };
  auto c = cost_of(mm(128, 512, Dtype::bfloat16), Engine::PE);
  EXPECT_EQ(c.cycles, 512);                // max(512, 64)
  EXPECT_EQ(c.weight_load_cycles, 32);     // 128 / 4
  EXPECT_NEAR(c.ns, 512 / 2.8, 1e-9);
  EXPECT_NEAR(c.weight_load_ns, 32 / 2.8, 1e-9);
  EXPECT_EQ(cost_of(mm(128, 32, Dtype::bfloat16), Engine::PE).cycles, 64);   // max(32, 64): short moving
  // A short stationary does not shorten the MultiplyMoving ([PERF Opt #7] MM_II ~ max(1, MM_INIT_LATENCY)).
  EXPECT_EQ(cost_of(mm(16, 32, Dtype::bfloat16), Engine::PE).cycles, 64);
  EXPECT_EQ(cost_of(mm(16, 32, Dtype::bfloat16), Engine::PE).weight_load_cycles, 4);  // 16 / 4
  auto f = cost_of(mm(128, 512, Dtype::float32), Engine::PE);
  EXPECT_EQ(f.cycles, 4 * 512);            // x4 passes for fp32
  EXPECT_EQ(f.weight_load_cycles, 4 * 32);
}
TEST(Cost, PeTransposeIsMaxPMin64F) {
  auto tr = [](Builder &b) {
    auto x = b.sbuf("x", {128, 32}, Dtype::bfloat16);
    auto o = b.psum("o", {32, 128}, Dtype::bfloat16);
    b.add(InstructionType::Matmult, {b.ap(x.all())}, {b.ap(o.all())}).is_transpose(true);
  };
  EXPECT_EQ(cost_of(tr, Engine::PE).cycles, 128);  // max(P=128, min(64, F=32))
}
TEST(Cost, CompletionLatencyIsAccessStartupPlusDependentOverhead) {
  auto c = cost_of(tensor_scalar(Dtype::float32, 512), Engine::DVE);
  EXPECT_NEAR(c.latency_ns, (60 + 100) / 1.12, 1e-9);
}

TEST(Cost, EveryExecutingInstructionTypeHasAChosenCostRule) {
  // engines/cost/cost_rules.def (STYLE.md 4): no type reaches a default; the message names each one without a row.
  std::string missing;
  for (int t = 0; t < isa::kNumInstructionTypes; ++t) {
    const auto type = static_cast<InstructionType>(t);
    if (engines::executes(type) && !engines::cost_rule_name(type)) missing += std::string(" ") + isa::inst_type_name(type);
  }
  EXPECT_EQ(missing, "") << "executing instruction types without a cost rule:" << missing;
  // The types only --timing-only runs time (abstract bases, lowered-away forms) have one too.
  for (int t = 0; t < isa::kNumInstructionTypes; ++t)
    EXPECT_NE(engines::cost_rule_name(static_cast<InstructionType>(t)), nullptr)
        << isa::inst_type_name(static_cast<InstructionType>(t));
  EXPECT_STREQ(engines::cost_rule_name(InstructionType::TensorTensor), "tensor_tensor");
  EXPECT_STREQ(engines::cost_rule_name(InstructionType::Load), "dma_transfer");
}

TEST(Cost, DmaTriggersCostTheIssuingEngineByDescriptorSource) {
  // reference neuron-arch.md 1.5 [DGE]: HWDGE ~600 ns on the issuing ACT/SP; SWDGE the GpSimd descriptor build
  // (the compiler's 500 on trn1); prebuilt descriptors one sequencer cycle.
  isa::Inst inst;
  inst.type = InstructionType::Load;
  const auto a1 = engines::builtin_arch("trn1"), a2 = engines::builtin_arch("trn2");
  inst.f.dge_type = isa::DGEType::HWDGE;
  EXPECT_NEAR(engines::dma_trigger_cost(inst, Engine::Activation, a2).ns, 600.0, 1e-9);
  EXPECT_EQ(engines::dma_trigger_cost(inst, Engine::Activation, a2).cycles, 720);  // 600 ns x 1.2 GHz
  inst.f.dge_type = isa::DGEType::SWDGE;
  EXPECT_NEAR(engines::dma_trigger_cost(inst, Engine::Pool, a1).ns, 500.0, 1e-9);
  inst.f.dge_type = isa::DGEType::None;
  EXPECT_EQ(engines::dma_trigger_cost(inst, Engine::SP, a1).cycles, 1);
  EXPECT_NEAR(engines::dma_trigger_cost(inst, Engine::SP, a1).ns, 1 / 1.4, 1e-12);
}
