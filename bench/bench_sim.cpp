// Simulator speed (project issue 8): the hot paths measured side by side with what they stand for, in one
// process, so that bench/run can print each as a ratio.
//   (a) BM_TensorTensorAdd/{Engine,Eigen}   fp32 TensorTensor add 128x2048 through sim::Simulator::run (schedule
//       already built: SystemC queue thread, dispatch, access-pattern walk, dtype conversion, ALU, written
//       shadow) vs a plain Eigen array loop c = a + b over the same values.
//   (b) BM_Matmul/{Engine,Eigen}   PE Matmult 128x128 stationary x 128x512 moving, bf16 operands, accumulating
//       into an fp32 PSUM tile (start_tensor_calc = false, the body of every accumulation group) vs Eigen GEMM
//       C += A^T B on the same (bf16-valued) fp32 data.
//   (c) BM_Dispatch/{numeric,timing_only}   100,000 [1,1] instructions (+ 2 memsets), a dependency ring SP -> PE
//       -> ACT -> POOL -> DVE -> SP, 20,000 times round (each reads the previous engine's output, so every
//       instruction waits on a semaphore of another queue): Simulator construction (loop unrolling, dependency
//       inference) + run, instructions/s.
//   (d) BM_MatmulTiledFull/{timing_only,full}   the matmul_tiled workload at 4096x8192 @ 8192x8192 (the BIR
//       file named by $NEURONSIM_BENCH_MATMUL_BIR, written by `neuronsim_workload_gen matmul_tiled --size full
//       --bir-only`; skipped when unset): Simulator construction + generated inputs (full run only) + run, as
//       `neuronsim run [--timing-only]` does after reading the file. Minutes for the full run: bench/run invokes
//       it separately with one repetition.
//   (h) BM_ScheduleStream/{whole,stream}   the schedule of (c)'s program (100,002 instructions) built whole
//       (build_schedule, as Simulator's constructor does) vs made on demand by sim::ScheduleStream (window 16384,
//       no flow arrows) for a consumer that takes up to 64 entries of every queue in turn, as the core's queue
//       threads would: entries/s, peak entries held.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <systemc>
#include <vector>

#include "neuronsim/builder.hpp"
#include "sim/schedule_stream.hpp"
#include "neuronsim/engines/dtype.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/simulator.hpp"

using namespace neuronsim;
using builder::Builder;
using isa::Dtype;
using isa::InstructionType;

namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::vector<float> uniform(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto &x : v) x = u(rng);
  return v;
}

// The access that covers a whole tensor (what builder's all() resolves to), for loading its data directly.
engines::Access whole(const isa::Program &p, const char *name) {
  const int t = p.find_tensor(name);
  const isa::Tensor &ts = p.tensors[static_cast<size_t>(t)];
  engines::Access a;
  a.tensor = t;
  a.dtype = ts.dtype;
  int64_t row = 1;
  for (size_t i = 1; i < ts.shape.size(); ++i) row *= ts.shape[i];
  a.ap = {isa::ApDim{row, ts.shape[0]}, isa::ApDim{1, row}};
  return a;
}

// ------------------------------------------------------------------------------------------------ (a)
constexpr int64_t kTtP = 128, kTtF = 2048;

isa::Program tensor_tensor_program() {
  Builder b("bench_tensor_tensor");
  auto a = b.sbuf("a", {kTtP, kTtF}), c = b.sbuf("b", {kTtP, kTtF}), o = b.sbuf("c", {kTtP, kTtF});
  b.add(InstructionType::TensorTensor, {b.ap(a.all()), b.ap(c.all())}, {b.ap(o.all())}).op(isa::AluOp::add);
  return b.finish();
}

void BM_TensorTensorAdd_Engine(benchmark::State &state) {
  const isa::Program p = tensor_tensor_program();
  sim::Simulator s(p, {});
  const auto va = uniform(kTtP * kTtF, 1), vb = uniform(kTtP * kTtF, 2);
  s.memory().write_f32(whole(p, "a"), va.data());
  s.memory().write_f32(whole(p, "b"), vb.data());
  for (auto _ : state) benchmark::DoNotOptimize(s.run());
  std::vector<float> got(kTtP * kTtF);
  s.memory().read_f32(whole(p, "c"), got.data());
  if (got[12345] != va[12345] + vb[12345]) state.SkipWithError("wrong result");
  state.SetItemsProcessed(state.iterations() * kTtP * kTtF);
}

void BM_TensorTensorAdd_Eigen(benchmark::State &state) {
  const auto va = uniform(kTtP * kTtF, 1), vb = uniform(kTtP * kTtF, 2);
  std::vector<float> vc(kTtP * kTtF);
  using Arr = Eigen::Array<float, Eigen::Dynamic, 1>;
  Eigen::Map<const Arr> A(va.data(), kTtP * kTtF), B(vb.data(), kTtP * kTtF);
  Eigen::Map<Arr> C(vc.data(), kTtP * kTtF);
  for (auto _ : state) {
    C = A + B;
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kTtP * kTtF);
}

// ------------------------------------------------------------------------------------------------ (b)
constexpr int64_t kK = 128, kM = 128, kN = 512;

isa::Program matmul_program() {
  Builder b("bench_matmul");
  auto st = b.sbuf("st", {kK, kM}, Dtype::bfloat16), mv = b.sbuf("mv", {kK, kN}, Dtype::bfloat16);
  auto ps = b.psum("ps", {kM, kN});
  b.add(InstructionType::Matmult, {b.ap(st.all()), b.ap(mv.all())}, {b.ap(ps.all())}).start_tensor_calc(false);
  return b.finish();
}

// bf16-valued fp32 data (the values the engine sees after widening its bf16 operands).
std::vector<float> bf16_values(size_t n, uint64_t seed) {
  auto v = uniform(n, seed);
  std::vector<uint8_t> raw(n * 2);
  engines::store_f32(Dtype::bfloat16, v.data(), raw.data(), static_cast<int64_t>(n));
  engines::load_f32(Dtype::bfloat16, raw.data(), v.data(), static_cast<int64_t>(n));
  return v;
}

void BM_Matmul_Engine(benchmark::State &state) {
  const isa::Program p = matmul_program();
  sim::Simulator s(p, {});
  const auto vs = bf16_values(kK * kM, 3), vm = bf16_values(kK * kN, 4);
  s.memory().write_f32(whole(p, "st"), vs.data());
  s.memory().write_f32(whole(p, "mv"), vm.data());
  const std::vector<float> zero(kM * kN, 0.0f);
  s.memory().write_f32(whole(p, "ps"), zero.data());
  for (auto _ : state) benchmark::DoNotOptimize(s.run());
  state.SetItemsProcessed(state.iterations() * 2 * kK * kM * kN);  // flops
}

void BM_Matmul_Eigen(benchmark::State &state) {
  const auto vs = bf16_values(kK * kM, 3), vm = bf16_values(kK * kN, 4);
  const RowMat A = Eigen::Map<const RowMat>(vs.data(), kK, kM), B = Eigen::Map<const RowMat>(vm.data(), kK, kN);
  RowMat C = RowMat::Zero(kM, kN);
  for (auto _ : state) {
    C.noalias() += A.transpose() * B;
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * 2 * kK * kM * kN);
}

// ------------------------------------------------------------------------------------------------ (c)
constexpr int64_t kDispatchRounds = 20000;  // x 5 instructions = 100,000

isa::Program dispatch_program(bool all_reduce = false) {
  Builder b("bench_dispatch");
  auto t0 = b.sbuf("t0", {1, 1}), t1 = b.sbuf("t1", {1, 1}), t2 = b.sbuf("t2", {1, 1}), t3 = b.sbuf("t3", {1, 1});
  auto one = b.sbuf("one", {1, 1});
  auto ps = b.psum("ps", {1, 1});
  using E = isa::Engine;
  b.add(InstructionType::Memset, {}, {b.ap(one.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0);
  b.add(InstructionType::Memset, {}, {b.ap(t3.all())}).memset_mode(isa::MemsetMode::Const).constant(0.0);
  auto add1 = [&](const builder::TensorHandle &in, const builder::TensorHandle &out, E e) {
    b.add(InstructionType::TensorScalarPtr, {b.ap(in.all()), Builder::imm(1.0)}, {b.ap(out.all())})
        .op0(isa::AluOp::add).op1(isa::AluOp::bypass).engine(e);
  };
  b.loop("i", 0, kDispatchRounds, 1, [&](builder::Aff) {
    add1(t3, t0, E::SP);
    b.add(InstructionType::Matmult, {b.ap(t0.all()), b.ap(one.all())}, {b.ap(ps.all())}).start_tensor_calc(true);
    add1(ps, t1, E::Activation);
    add1(t1, t2, E::Pool);
    add1(t2, t3, E::DVE);
  });
  if (all_reduce)  // every core of a multi-core run (no replica groups: all)
    b.add(InstructionType::CollectiveCompute, {b.ap(t3.all())}, {b.ap(t0.all())})
        .collective_kind("AllReduce").op(isa::AluOp::add).engine(E::Pool);
  return b.finish();
}

void dispatch(benchmark::State &state, bool timing_only) {
  const isa::Program p = dispatch_program();
  sim::RunOptions o;
  o.timing_only = timing_only;
  int64_t n = 0;
  for (auto _ : state) {
    sim::Simulator s(p, o);
    const sim::RunResult r = s.run();
    n += r.dynamic_instructions;
    benchmark::DoNotOptimize(r.total_ns);
  }
  state.counters["inst_per_s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
  state.SetItemsProcessed(n);
}
// (h) several cores (issue 17): the dispatch program (100,000 dynamic instructions) on every core of a Device, then
// an AllReduce of every core; timing-only. Wall time should grow about linearly with the cores (each core is its
// own set of SystemC threads in one simulation); the target is 8 cores in under 10 s.
void multi_core(benchmark::State &state) {
  const isa::Program p = dispatch_program(true);
  const int cores = static_cast<int>(state.range(0));
  sim::RunOptions o;
  o.arch = "trn2";
  o.timing_only = true;
  // The process's first run pays for SystemC's elaboration (the modules of every core) and for growing the heap
  // its schedule and events take (page faults; later runs reuse the freed memory): a 1-core run of the program
  // here, untimed, so that every row, the 1-core one included, is measured alike.
  static const bool warm = [&p, &o] {
    sim::Device(p, o, 1, 1).run();
    return true;
  }();
  benchmark::DoNotOptimize(warm);
  int64_t n = 0;
  for (auto _ : state) {
    sim::Device d(p, o, cores, 1);
    const sim::DeviceResult r = d.run();
    n += r.dynamic_instructions;
    benchmark::DoNotOptimize(r.total_ns);
  }
  state.counters["inst_per_s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
}
void BM_MultiCore(benchmark::State &state) { multi_core(state); }

void BM_Dispatch_numeric(benchmark::State &state) { dispatch(state, false); }
void BM_Dispatch_timing_only(benchmark::State &state) { dispatch(state, true); }

// ------------------------------------------------------------------------------------------------ (d)
void matmul_tiled_full(benchmark::State &state, bool timing_only) {
  const char *path = std::getenv("NEURONSIM_BENCH_MATMUL_BIR");
  if (!path || !*path) {
    state.SkipWithError("set NEURONSIM_BENCH_MATMUL_BIR to the full-size matmul_tiled BIR (see bench/run)");
    for (auto _ : state) {
    }
    return;
  }
  const isa::Program p = isa::read_bir_file(path);
  sim::RunOptions o;
  o.timing_only = timing_only;
  int64_t n = 0;
  double sim_ns = 0;
  for (auto _ : state) {
    sim::Simulator s(p, o);
    if (!o.timing_only) sim::load_inputs(p, s.memory(), {});
    const sim::RunResult r = s.run();
    n += r.dynamic_instructions;
    sim_ns = r.total_ns;
  }
  state.counters["inst_per_s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
  state.counters["simulated_us"] = sim_ns / 1000.0;
}
void BM_MatmulTiledFull_timing_only(benchmark::State &state) { matmul_tiled_full(state, true); }
void BM_MatmulTiledFull_full(benchmark::State &state) { matmul_tiled_full(state, false); }

// ------------------------------------------------------------------------------------------------ (h)
void BM_ScheduleStream_whole(benchmark::State &state) {
  const isa::Program p = dispatch_program();
  const engines::ArchParams arch = engines::builtin_arch("trn1");
  engines::Memory mem(p, arch);
  int64_t n = 0;
  for (auto _ : state) {
    const sim::Schedule s = sim::build_schedule(p, mem, arch, true);
    n += static_cast<int64_t>(s.insts.size());
  }
  state.counters["entries_per_s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
}

// Each pause of a walk is two thread switches, a scheduler time slice each when the machine is loaded: a
// window of a few thousand entries makes those switches most of the time (docs/dev/performance.md).
constexpr int64_t kStreamWindow = 16384;

void BM_ScheduleStream_stream(benchmark::State &state) {
  const isa::Program p = dispatch_program();
  const engines::ArchParams arch = engines::builtin_arch("trn1");
  engines::Memory mem(p, arch);
  int64_t n = 0, peak = 0, walks = 0;
  for (auto _ : state) {
    sim::ScheduleStream s(p, mem, arch, true, sim::kDefaultMaxInstructions, kStreamWindow, false);
    std::array<int64_t, sim::kMaxQueues> next{};
    for (bool any = true; any;) {
      any = false;
      for (int q = 0; q < sim::kMaxQueues; ++q)
        for (int k = 0; k < 64 && s.at(q, next[q]); ++k) s.release(q, ++next[q]), ++n, any = true;
    }
    peak = std::max(peak, s.peak_held());
    walks = s.walks();
  }
  state.counters["walks"] = static_cast<double>(walks);
  state.counters["entries_per_s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
  state.counters["peak_held"] = static_cast<double>(peak);
}

// Wall-clock time throughout (rates too): the figures are what a user waits for. The slow ones run a fixed,
// small number of iterations.
BENCHMARK(BM_TensorTensorAdd_Engine)->Name("BM_TensorTensorAdd/Engine")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_TensorTensorAdd_Eigen)->Name("BM_TensorTensorAdd/Eigen")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Matmul_Engine)->Name("BM_Matmul/Engine")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Matmul_Eigen)->Name("BM_Matmul/Eigen")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Dispatch_numeric)->Name("BM_Dispatch/numeric")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Dispatch_timing_only)->Name("BM_Dispatch/timing_only")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ScheduleStream_whole)->Name("BM_ScheduleStream/whole")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ScheduleStream_stream)->Name("BM_ScheduleStream/stream")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MultiCore)->Name("BM_MultiCore")->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kSecond)
    ->Iterations(1)->UseRealTime();
BENCHMARK(BM_MatmulTiledFull_timing_only)->Name("BM_MatmulTiledFull/timing_only")->Unit(benchmark::kMillisecond)
    ->Iterations(3)->UseRealTime();
BENCHMARK(BM_MatmulTiledFull_full)->Name("BM_MatmulTiledFull/full")->Unit(benchmark::kSecond)->Iterations(1)
    ->UseRealTime();

} // namespace

// SystemC's library defines main() and calls sc_main (as in tests/support/sc_main.cpp).
int sc_main(int argc, char **argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
