// Timing mechanisms (docs/timing-model.md), each tested against the documented statement it comes from, not
// against the simulator's own earlier outputs: DMA engines, descriptors, queues and rings; descriptor generation on
// the issuing engine; PSUM / SBUF port conflicts; TensorE weight loads. Parameters are read from sim/arch/*.json
// (engines::builtin_arch), so a test restates the statement and derives the expected time from it.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "neuronsim/builder.hpp"
#include "neuronsim/engines/dma.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "support/timing_run.hpp"

// The helpers below live in namespace test_timing_mechanisms, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_timing_mechanisms {

using namespace neuronsim;
using builder::Builder;
using isa::Dtype;
using isa::Engine;
using isa::InstructionType;
using test::back_to_back_loads;
using test::timing_opts;
using test::trigger_event;
using test::work_event;

namespace {

// HBM -> SBUF throughput (B/ns) of back-to-back [128, bpp] fp32 loads on one queue from SP, from the first byte to
// the last completion, as bench/tools/dma_curve.cpp measures it for the README.
double steady_rate(const std::string &arch, int64_t bpp) {
  constexpr int kLoads = 32;
  isa::Program p = back_to_back_loads(kLoads, bpp);
  sim::Simulator s(p, timing_opts(arch));
  auto r = s.run();
  const double first = work_event(r, 0).start_ns, last = work_event(r, kLoads - 1).finish_ns;
  return static_cast<double>(kLoads * 128 * bpp) / (last - first);
}

} // namespace

// ---- DMA engines and descriptors ----------------------------------------------------------------------------

TEST(DmaMechanisms, AFourPartitionLoadUsesOneEngineWithOneDescriptorPerPartition) {
  // reference neuron-arch.md 1.5 [DMA example 1]: a [4, 4096] bf16 HBM -> SBUF load uses one DMA engine (an engine
  // serves 8 partitions); calibration.md D1 times it (tests/sim/test_dma_calibration.cpp).
  Builder b("a4x4096");
  auto a = b.input("a", {4, 4096}, Dtype::bfloat16);
  auto t = b.sbuf("t", {4, 4096}, Dtype::bfloat16);
  b.add(InstructionType::Load, {b.ap(a.all())}, {b.ap(t.all())});
  isa::Program p = b.finish();
  sim::Simulator s(p, timing_opts("trn2"));
  const auto tr = engines::dma_transfer(s.schedule().insts.back().d, s.arch(), s.memory());
  ASSERT_EQ(tr.parts.size(), 1u);
  EXPECT_EQ(tr.parts[0].engine, 0);
  EXPECT_EQ(tr.parts[0].descriptors, 4);  // one per partition: the SBUF side breaks the contiguous 32 KiB
  EXPECT_EQ(tr.parts[0].offset_ps, 0);    // its only engine starts at the first byte
  auto r = s.run();
  const auto &x = work_event(r, 0);
  EXPECT_NEAR(x.start_ns - x.issue_ns, 850.0, 1e-3);  // dma_latency_ns: no engine busy before the first byte
}

TEST(DmaMechanisms, A128By128LoadSpreadsEightPartitionsOverEachOfTheSixteenEngines) {
  // reference neuron-arch.md 1.5 [DMA example 2]: a [128, 128] bf16 load keeps all 16 engines active, each moving
  // 8 rows x 128 elements x 2 B = 2 KiB.
  Builder b("a128");
  auto a = b.input("a", {128, 128}, Dtype::bfloat16);
  auto t = b.sbuf("t", {128, 128}, Dtype::bfloat16);
  b.add(InstructionType::Load, {b.ap(a.all())}, {b.ap(t.all())});
  isa::Program p = b.finish();
  sim::Simulator s(p, timing_opts("trn2"));
  const auto tr = engines::dma_transfer(s.schedule().insts.back().d, s.arch(), s.memory());
  ASSERT_EQ(tr.parts.size(), 16u);
  for (const auto &part : tr.parts) EXPECT_EQ(part.descriptors, 8) << part.engine;
  EXPECT_EQ(tr.desc_bytes, 256);
  EXPECT_EQ(tr.bytes, 128 * 128 * 2);
}

TEST(DmaMechanisms, FourPartitionLoadsQueueOnOneEngine) {
  // Eight [4, 4096] fp32 loads go to engine 0 only; eight [128, 128] fp32 loads (the same 64 KiB each) spread over
  // 16 engines. trn1 (sim/arch/trn1.json): a [4, 4096] transfer's piece is dma_transfer_overhead_ns 7 + 65536 B /
  // 17 B/ns = 3862.06 ns of engine 0; a [128, 128] one 7 + 4096 / 17 = 247.94 ns of each engine.
  auto run = [](int64_t rows, int64_t cols) {
    Builder b("eight");
    auto a = b.input("a", {8 * rows, cols});
    auto t = b.sbuf("t", {rows, 8 * cols});
    for (int i = 0; i < 8; ++i) b.add(InstructionType::Load, {b.ap(a.tile(rows * i, rows, 0, cols))}, {b.ap(t.tile(0, rows, i * cols, cols))});
    isa::Program p = b.finish();
    return sim::Simulator(p, timing_opts("trn1")).run();
  };
  const auto narrow = run(4, 4096), wide = run(128, 128);
  EXPECT_NEAR(narrow.dma_engines[0].busy_ns, 8 * (7 + 65536 / 17.0), 0.05);
  for (size_t e = 1; e < narrow.dma_engines.size(); ++e) EXPECT_EQ(narrow.dma_engines[e].busy_ns, 0.0);
  for (const auto &e : wide.dma_engines) EXPECT_NEAR(e.busy_ns, 8 * (7 + 4096 / 17.0), 0.05);
  EXPECT_GT(narrow.total_ns, 2.5 * wide.total_ns);
}

TEST(DmaMechanisms, ThroughputRisesWithBytesPerPartitionAndSaturatesAt4KiB) {
  // reference neuron-arch.md 1.5 [DMABW]: below 256 B per partition a transfer is "severely overhead-bound" (a small
  // fraction of peak); 4 KiB per partition "fully amortizes per-packet overhead and saturates the DMA engines".
  // The peak is the engines' read rate (16 x 17 / 23 / 33 B/ns) or the core's HBM share, whichever is lower (trn2:
  // 360 < 368); calibration.md D4 checks the curve's shape on trn2 (tests/sim/test_dma_calibration.cpp).
  for (const std::string arch : {"trn1", "trn2", "trn3"}) {
    const auto a = engines::builtin_arch(arch);
    const double peak = std::min(a.dma_engine_bytes_per_ns * a.dma_engines, a.hbm_bytes_per_ns);
    double prev = 0;
    std::map<int64_t, double> frac;
    for (int64_t bpp : {256, 1024, 2048, 4096, 16384}) {
      const double rate = steady_rate(arch, bpp);
      EXPECT_GE(rate, prev * 0.99) << arch << " " << bpp;
      prev = rate;
      frac[bpp] = rate / peak;
    }
    EXPECT_LT(frac[256], 0.3) << arch;
    EXPECT_GT(frac[1024], frac[256] * 2) << arch;
    EXPECT_GT(frac[4096], 0.97) << arch;
    EXPECT_LE(frac[16384], 1.005) << arch;  // no payload moves faster than the engines or the pool
  }
}

// ---- DMA queues and rings -----------------------------------------------------------------------------------

TEST(DmaMechanisms, ARingHoldsFourTransfersTheFifthWaitsForTheFirst) {
  // A DMA queue holds dma_ring_depth = 4 transfers between entering and completing (the compiler's cost model's
  // finite descriptor ring, reference neuronx-cc/walrus/perfsim-cost-model.md): of 8 independent loads on one queue,
  // load k + 4 enters its ring when load k has completed.
  Builder b("ring");
  auto a = b.input("a", {8 * 128, 16});
  auto t = b.sbuf("t", {128, 8 * 16});
  for (int i = 0; i < 8; ++i) b.add(InstructionType::Load, {b.ap(a.tile(128 * i, 128, 0, 16))}, {b.ap(t.tile(0, 128, i * 16, 16))});
  isa::Program p = b.finish();
  auto r = sim::Simulator(p, timing_opts("trn1")).run();
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(work_event(r, k).issue_ns, trigger_event(r, k).end_ns, 1e-3) << k;  // a free slot: enters at once
    EXPECT_NEAR(work_event(r, k + 4).issue_ns, work_event(r, k).finish_ns, 1e-3) << k;
    EXPECT_GT(work_event(r, k + 4).issue_ns, trigger_event(r, k + 4).end_ns + 1000) << k;  // back-pressure, not its trigger
  }
}

TEST(DmaMechanisms, QueuesShareAnEngineRoundRobinAtDescriptorGranularity) {
  // reference neuron-arch.md 1.5 [DMA "DMA Queues"]: transfers of one queue run in order on an engine; queues are
  // served round robin (v2/v3). Two [4, 2048] fp32 loads (engine 0, 4 descriptors of 8 KiB) on two queues become
  // available at the same moment: their descriptors alternate, so both finish within one descriptor of each other;
  // on one queue the second waits for the first.
  auto run = [](bool two_queues) {
    Builder b("rr");
    auto a = b.input("a", {8, 2048});
    auto t = b.sbuf("t", {4, 4096});
    b.add(InstructionType::Load, {b.ap(a.tile(0, 4, 0, 2048))}, {b.ap(t.tile(0, 4, 0, 2048))}).engine(Engine::SP).queue("qA");
    b.add(InstructionType::Load, {b.ap(a.tile(4, 4, 0, 2048))}, {b.ap(t.tile(0, 4, 2048, 2048))})
        .engine(Engine::Activation)
        .queue(two_queues ? "qB" : "qA");
    isa::Program p = b.finish();
    return sim::Simulator(p, timing_opts("trn1")).run();
  };
  // trn1: a descriptor = 8192 / 17 = 481.88 ns; each transfer's first carries dma_transfer_overhead_ns 7 ns. Both
  // triggers take one cycle (SP, ACT at 1.4 GHz), so both transfers are available at 850.714 ns: engine 0 processes
  // the first's 4 descriptors by 4 x 106 = 424 ns and all the second's by 848 ns, within the latency.
  const double d = 8192 / 17.0, tx = 7.0;
  const auto two = run(true), one = run(false);
  EXPECT_NEAR(std::abs(work_event(two, 0).end_ns - work_event(two, 1).end_ns), d, 0.01);
  EXPECT_NEAR(std::max(work_event(two, 0).end_ns, work_event(two, 1).end_ns) - work_event(two, 0).start_ns, 2 * (tx + 4 * d), 0.01);
  EXPECT_NEAR(work_event(one, 1).start_ns, work_event(one, 0).end_ns, 1e-3);
  EXPECT_NEAR(work_event(one, 1).end_ns - work_event(one, 0).start_ns, 2 * (tx + 4 * d), 0.01);
  EXPECT_EQ(two.queues[sim::kNumEngines].name, "qA");
  EXPECT_EQ(two.queues[sim::kNumEngines + 1].name, "qB");
}

TEST(DmaMechanisms, SpreadingSmallRowLoadsOverQueuesDoesNotBeatTheEnginesDescriptorRate) {
  // docs/timing-model.md 2.1: the per-row cost of calibration.md D4 is each DMA engine's processing of the
  // descriptors it is given (the NKI DMA bandwidth guide: the engines' packet rate), whatever their queue. Sixteen
  // [128, 64] fp32 loads (one 256 B descriptor per partition, 8 on each of the 16 engines) triggered from SP, all on
  // one queue or alternating between two, take the same time: each engine processes 16 x 8 descriptors at
  // dma_engine_descriptor_ns 106 from the first trigger's end (1 SP cycle, 0.714 ns on trn1) on, and the last
  // piece moves once its 8 descriptors are processed (8 x 256 / 17 = 8 x 15.059 ns, the piece's 7 ns, completion
  // 10 ns).
  // Charged to a queue instead, two queues would have processed the rows side by side, twice as fast.
  auto run = [](bool two_queues) {
    Builder b("spread");
    auto a = b.input("a", {128, 16 * 64});
    auto t = b.sbuf("t", {128, 16 * 64});
    for (int i = 0; i < 16; ++i)
      b.add(InstructionType::Load, {b.ap(a.tile(0, 128, i * 64, 64))}, {b.ap(t.tile(0, 128, i * 64, 64))})
          .engine(Engine::SP)
          .queue(two_queues && i % 2 ? "qB" : "qA");
    isa::Program p = b.finish();
    const auto r = sim::Simulator(p, timing_opts("trn1")).run();
    double last = 0;
    for (int i = 0; i < 16; ++i) last = std::max(last, work_event(r, i).finish_ns);
    return last;
  };
  const double want = 1 / 1.4 + 16 * 8 * 106.0 + 8 * 15.059 + 7 + 10;
  EXPECT_NEAR(run(false), want, 1e-3);
  EXPECT_NEAR(run(true), want, 1e-3);
}

TEST(DmaMechanisms, StoresWithoutAQueueTriggerFromGpSimdAndHoldNoPrefetchBehindThem) {
  // docs/timing-model.md 2.4: a DMA naming no engine and no queue is triggered where the compiler's kernels trigger
  // it -- a load from SP, a store from GpSimd (calibration.md D1/D3 profiles) -- on queues of their own. A loop that
  // prefetches one tile ahead (load 0, load 1, exp 0, store 0, load 2, exp 1, store 1, load 3, ...): store k's
  // trigger waits for exp k; on SP it would hold load k + 2's trigger behind it. A BIR that names the engine and the
  // queue keeps them: then the loads serialise behind the stores.
  auto build = [](bool named) {
    Builder b("prefetch");
    auto in = b.input("in", {128, 4 * 512});
    auto out = b.output("out", {128, 4 * 512});
    auto t = b.sbuf("t", {128, 4 * 512}), u = b.sbuf("u", {128, 4 * 512});
    auto load = [&](int i) { b.add(InstructionType::Load, {b.ap(in.tile(0, 128, 512 * i, 512))}, {b.ap(t.tile(0, 128, 512 * i, 512))}); };
    load(0);
    for (int i = 0; i < 4; ++i) {
      if (i + 1 < 4) load(i + 1);
      b.add(InstructionType::Activation, {b.ap(t.tile(0, 128, 512 * i, 512))}, {b.ap(u.tile(0, 128, 512 * i, 512))})
          .act_func(isa::ActivationFunctionType::Exp);
      auto st = b.add(InstructionType::Save, {b.ap(u.tile(0, 128, 512 * i, 512))}, {b.ap(out.tile(0, 128, 512 * i, 512))});
      if (named) st.engine(Engine::SP).queue("qSyncIO1");
    }
    return b.finish();
  };
  isa::Program placed = build(false), named = build(true);
  auto r = sim::Simulator(placed, timing_opts("trn2")).run(), rn = sim::Simulator(named, timing_opts("trn2")).run();
  // Instructions: 0 load 0, 1 load 1, 2 exp 0, 3 store 0, 4 load 2, 5 exp 1, 6 store 1, 7 load 3, ...
  EXPECT_EQ(trigger_event(r, 3).queue, 2);   // GpSimd
  EXPECT_EQ(trigger_event(r, 4).queue, 4);   // SP
  EXPECT_EQ(trigger_event(rn, 3).queue, 4);  // named: SP, as the BIR says
  EXPECT_EQ(r.queues[sim::kNumEngines].name, "qSyncIO0");
  EXPECT_EQ(r.queues[sim::kNumEngines + 1].name, "qGpSimdIO1");
  // Placed: load 2 is triggered at once (right after load 1's trigger), before exp 0 is done; named: after store 0's
  // trigger, which waited for exp 0.
  EXPECT_LT(trigger_event(r, 4).start_ns, work_event(r, 2).end_ns);
  EXPECT_GE(trigger_event(rn, 4).start_ns, work_event(rn, 2).finish_ns);
  EXPECT_LT(work_event(r, 4).finish_ns, work_event(rn, 4).finish_ns);
  EXPECT_LT(r.total_ns, rn.total_ns);
}

// ---- descriptor generation on the issuing engine ------------------------------------------------------------

TEST(DmaMechanisms, HardwareDgeCostsSixHundredNsOnTheIssuingEngineBesidesTheTransfer) {
  // reference neuron-arch.md 1.5 [DGE]: "each hardware-DGE DMA instruction takes approximately 600 ns to execute",
  // triggered from the ACT or SP sequencer; NeuronCore-v3+ only.
  auto build = [](isa::DGEType dge, Engine e) {
    Builder b("dge");
    auto a = b.input("a", {128, 512});
    auto t = b.sbuf("t", {128, 512});
    b.add(InstructionType::Load, {b.ap(a.all())}, {b.ap(t.all())}).dge_type(dge).engine(e);
    return b.finish();
  };
  isa::Program hw = build(isa::DGEType::HWDGE, Engine::Activation), pre = build(isa::DGEType::None, Engine::Activation);
  // The refusals first: an exception thrown after SystemC ran in the process trips the sanitizer pass of CI.
  // trn1 (NeuronCore-v2) has no hardware DGE: refused, naming the instruction and the field.
  try {
    sim::Simulator s(hw, timing_opts("trn1"));
    FAIL() << "HWDGE accepted on trn1";
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "dge_type");
    EXPECT_EQ(e.context().inst_index, 0);
    EXPECT_NE(std::string(e.what()).find("NeuronCore-v3"), std::string::npos) << e.what();
  }
  // HWDGE is triggered from ACT or SP only [DGE].
  isa::Program pool = build(isa::DGEType::HWDGE, Engine::Pool);
  EXPECT_THROW(sim::Simulator(pool, timing_opts("trn2")), SemanticError);
  auto rh = sim::Simulator(hw, timing_opts("trn2")).run(), rp = sim::Simulator(pre, timing_opts("trn2")).run();
  EXPECT_EQ(rh.queues[1].instructions, 1);                     // the trigger ran on ACT
  EXPECT_NEAR(rh.queues[1].busy_ns, 600.0, 1e-3);
  EXPECT_NEAR(work_event(rh, 0).issue_ns, 600.0, 1e-3);              // the transfer follows its trigger
  EXPECT_NEAR(rp.queues[1].busy_ns, 1 / 1.2, 1e-3);            // prebuilt descriptors: one ACT sequencer cycle
  EXPECT_NEAR(rh.total_ns - rp.total_ns, 600.0 - 1 / 1.2, 1e-3);  // in addition to the same transfer
  EXPECT_EQ(rh.queues[sim::kNumEngines].name, "qScalarDynamicHW");
}

TEST(DmaMechanisms, SoftwareDgeBuildsDescriptorsOnGpSimd) {
  // reference neuron-arch.md 1.5 [DGE]: swdge descriptors are built by GpSimd; the compiler's cost model charges 500
  // on trn1 and 700 x 100 / 120 = 583.3 on trn2 (reference neuronx-cc/walrus/perfsim-cost-model.md).
  Builder b("swdge");
  auto a = b.input("a", {128, 512});
  auto t = b.sbuf("t", {128, 512});
  b.add(InstructionType::Load, {b.ap(a.all())}, {b.ap(t.all())}).dge_type(isa::DGEType::SWDGE);
  isa::Program p = b.finish();
  auto r1 = sim::Simulator(p, timing_opts("trn1")).run(), r2 = sim::Simulator(p, timing_opts("trn2")).run();
  EXPECT_NEAR(r1.queues[2].busy_ns, 500.0, 1e-3);  // POOL
  EXPECT_NEAR(r2.queues[2].busy_ns, 583.333, 1e-3);
  EXPECT_NEAR(work_event(r1, 0).issue_ns, 500.0, 1e-3);
  EXPECT_EQ(r1.queues[sim::kNumEngines].name, "qGpSimdDynamic");
}

// ---- port and bank conflicts --------------------------------------------------------------------------------

namespace {
// ACT reads PSUM tile `a`, DVE reads PSUM tile `b` (independent; each writes its own SBUF tile).
isa::Program psum_readers(int64_t a_col, int64_t b_col) {
  Builder b("psum");
  auto ps = b.psum("ps", {128, 2048});
  auto o1 = b.sbuf("o1", {128, 512}), o2 = b.sbuf("o2", {128, 512});
  b.add(InstructionType::Activation, {b.ap(ps.tile(0, 128, a_col, 512))}, {b.ap(o1.all())})
      .act_func(isa::ActivationFunctionType::Copy)
      .engine(Engine::Activation);
  b.add(InstructionType::TensorCopy, {b.ap(ps.tile(0, 128, b_col, 512))}, {b.ap(o2.all())}).engine(Engine::DVE);
  return b.finish();
}
} // namespace

TEST(PortMechanisms, ActAndDveCannotAccessPsumInParallelOnNeuronCoreV2) {
  // reference neuron-arch.md 1.4 [ARCH2]: "Vector Engine and Scalar Engine cannot access PSUM in parallel" on v2.
  // ACT (act_fixed_cycles 159 + 512 cycles at 1.4 GHz = 479.29 ns) holds PSUM; DVE (512 cycles at 1.12 GHz) starts
  // when ACT ends.
  isa::Program p = psum_readers(0, 512);
  auto r = sim::Simulator(p, timing_opts("trn1")).run();
  EXPECT_NEAR(work_event(r, 1).start_ns, work_event(r, 0).end_ns, 1e-3);
  EXPECT_NEAR(work_event(r, 0).end_ns, (159 + 512) / 1.4, 1e-3);
}

TEST(PortMechanisms, ActAndDveCollideOnlyOnOnePsumBankOnNeuronCoreV3) {
  // reference neuron-arch.md 1.4 [ARCH3]: ACT and DVE get full PSUM bandwidth "as long as their accesses do not
  // collide on the same PSUM bank". Banks are 2 KiB per partition = 512 fp32: columns 0 and 512 are banks 0 and 1.
  isa::Program apart = psum_readers(0, 512), same = psum_readers(0, 0);
  auto ra = sim::Simulator(apart, timing_opts("trn2")).run(), rs = sim::Simulator(same, timing_opts("trn2")).run();
  EXPECT_NEAR(work_event(ra, 1).start_ns, 0.0, 1e-3);
  EXPECT_NEAR(work_event(rs, 1).start_ns, work_event(rs, 0).end_ns, 1e-3);
}

TEST(PortMechanisms, ActStartsAfterTheDvePsumWritersOnNeuronCoreV2) {
  // reference neuronx-cc/walrus/perfsim-cost-model.md determine_start_time: on arch_version <= 29 (v2) Activation
  // starts after the DVE and Pool PSUM writers' ends, even without touching PSUM itself; not on v3.
  Builder b("fence");
  auto ps = b.psum("ps", {128, 512});
  auto s1 = b.sbuf("s1", {128, 512}), s2 = b.sbuf("s2", {128, 512}), s3 = b.sbuf("s3", {128, 512});
  b.add(InstructionType::TensorCopy, {b.ap(s1.all())}, {b.ap(ps.all())}).engine(Engine::DVE);
  b.add(InstructionType::Activation, {b.ap(s2.all())}, {b.ap(s3.all())})
      .act_func(isa::ActivationFunctionType::Copy)
      .engine(Engine::Activation);
  isa::Program p = b.finish();
  auto r1 = sim::Simulator(p, timing_opts("trn1")).run(), r2 = sim::Simulator(p, timing_opts("trn2")).run();
  EXPECT_NEAR(work_event(r1, 1).start_ns, work_event(r1, 0).end_ns, 1e-3);
  EXPECT_NEAR(work_event(r1, 0).end_ns, 512 / 1.12, 1e-3);
  EXPECT_NEAR(work_event(r2, 1).start_ns, 0.0, 1e-3);
}

TEST(PortMechanisms, DvePerfModeSharesItsBusWithGpSimdOnNeuronCoreV3) {
  // reference neuron-arch.md 1.4 [ARCH3]: the DVE perf mode "leverages a shared memory bus between the VectorE and
  // GpsimdE". A bf16 SBUF tensor_copy runs in the 4x perf mode and holds the bus: GpSimd's iota waits; an fp32 copy
  // (no perf mode) does not hold it.
  auto build = [](Dtype dt) {
    Builder b("bus");
    auto x = b.sbuf("x", {128, 512}, dt), y = b.sbuf("y", {128, 512}, dt);
    auto z = b.sbuf("z", {128, 512}, Dtype::int32);
    b.add(InstructionType::TensorCopy, {b.ap(x.all())}, {b.ap(y.all())}).engine(Engine::DVE);
    b.add(InstructionType::Iota, {}, {b.ap(z.all())}).engine(Engine::Pool);
    return b.finish();
  };
  isa::Program bf = build(Dtype::bfloat16), f32 = build(Dtype::float32);
  auto rb = sim::Simulator(bf, timing_opts("trn2")).run(), rf = sim::Simulator(f32, timing_opts("trn2")).run();
  EXPECT_NEAR(work_event(rb, 0).end_ns, 128 / 0.96, 1e-3);  // 512 / 4 = 128 DVE cycles at 0.96 GHz
  EXPECT_NEAR(work_event(rb, 1).start_ns, work_event(rb, 0).end_ns, 1e-3);
  EXPECT_NEAR(work_event(rf, 1).start_ns, 0.0, 1e-3);
}

TEST(PortMechanisms, DependentActivationsOnNeuronCoreV3PayTheMeasuredFixedOccupancy) {
  // The public NKI performance guide (nki/deep-dives/nki_perf_guide.rst, Opt #5a) gives dependent 1-element
  // ScalarE instructions an initiation interval of "222 ns (266 ScalarE cycles on NC-v3)"; calibration.md E1
  // measured a lone trn2 activation at 400 ns for 128 elements (~293 ns fixed), which no interval of 222 ns can
  // hold. calibration.md is measured and newer, and wins (sim/arch/trn2.json act_fixed_cycles): MIN_II 64 +
  // act_fixed_cycles 352 + act_dependent_overhead_cycles 41 = 457 cycles = 380.8 ns at 1.2 GHz. NC-v2's measured
  // 264 cycles (E3) stay exact (test_simulator.cpp, test_engine_calibration.cpp).
  Builder b("chain");
  auto t = b.sbuf("t", {128, 1});
  b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(0.5).engine(Engine::Activation);
  for (int k = 0; k < 6; ++k) b.add(InstructionType::Activation, {b.ap(t.all())}, {b.ap(t.all())}).act_func(isa::ActivationFunctionType::Exp);
  isa::Program p = b.finish();
  auto r = sim::Simulator(p, timing_opts("trn2")).run();
  EXPECT_NEAR((work_event(r, 6).start_ns - work_event(r, 5).start_ns) * 1.2, 64 + 352 + 41, 0.01);
}

// ---- TensorE weight loads -----------------------------------------------------------------------------------

namespace {
// `n` matmuls into one PSUM tile: moving [128, mov] bf16 (same tile), stationary [128, stat] either the same tile
// every time or a new one each time.
isa::Program matmuls(int n, int64_t stat, int64_t mov, bool new_weights, Dtype dt = Dtype::bfloat16,
                     isa::MatmultPerfMode mode = isa::MatmultPerfMode::None) {
  Builder b("mm");
  auto w = b.sbuf("w", {128, n * stat}, dt), x = b.sbuf("x", {128, mov}, dt);
  auto o = b.psum("o", {stat, mov > 512 ? 512 : mov});
  for (int i = 0; i < n; ++i)
    b.add(InstructionType::Matmult, {b.ap(w.tile(0, 128, new_weights ? i * stat : 0, stat)), b.ap(x.all())},
          {b.ap(o.all())})
        .start_tensor_calc(i == 0)
        .perf_mode(mode);
  return b.finish();
}
} // namespace

TEST(PeMechanisms, AWeightLoadHidesBehindTheMovingDataUnlessThePeWasIdle) {
  // reference neuron-arch.md 2.1 [ARCH2, PERF Opt #7]: a matmul is LoadStationary + MultiplyMoving; Fast
  // LoadStationary takes N_stationary / 4 cycles and loads in the background of the previous MultiplyMoving.
  // trn1 (2.8 GHz): stationary 128 -> LS 32 cycles; moving 128 -> MM max(128, 64) = 128 cycles.
  isa::Program same = matmuls(4, 128, 128, false), fresh = matmuls(4, 128, 128, true);
  auto rs = sim::Simulator(same, timing_opts("trn1")).run(), rf = sim::Simulator(fresh, timing_opts("trn1")).run();
  // The first matmul follows an idle PE: it pays its LS, at least pe_isolated_ls_cycles 73 (calibration.md E4), and
  // the array's fill and drain, pe_fill_drain_cycles 397 + 128 stationary columns; the next three reuse the weights
  // (same) or load theirs behind the previous 128-cycle MM (fresh): 128 each.
  const int64_t first = 73 + 397 + 128;
  EXPECT_NEAR(rs.queues[0].busy_ns, (first + 4 * 128) / 2.8, 3e-3);  // each part rounded to ps
  EXPECT_NEAR(rf.queues[0].busy_ns, (first + 4 * 128) / 2.8, 3e-3);
  EXPECT_EQ(rs.queues[0].cycles, first + 4 * 128);
}

TEST(PeMechanisms, AShortMovingIssuesEveryMmInitLatencyAShortStationaryEveryMovingLength) {
  // reference neuron-arch.md 2.1 [PERF Opt #7] on trn1: "Short Moving" (stationary 128, moving 1): LS_II = 128 / 4 =
  // 32, MM_II = max(1, MM_INIT_LATENCY = 64) -> a matmul about every 64 cycles; "Short Stationary" (stationary 1,
  // moving 128): every 128 cycles.
  isa::Program short_moving = matmuls(8, 128, 1, true), short_stationary = matmuls(8, 1, 128, true);
  auto rm = sim::Simulator(short_moving, timing_opts("trn1")).run(), rs = sim::Simulator(short_stationary, timing_opts("trn1")).run();
  EXPECT_NEAR(work_event(rm, 7).start_ns - work_event(rm, 6).start_ns, 64 / 2.8, 1e-3);
  EXPECT_NEAR(work_event(rs, 7).start_ns - work_event(rs, 6).start_ns, 128 / 2.8, 1e-3);
}

TEST(PeMechanisms, AWeightLoadLongerThanTheMovingDataShowsThrough) {
  // Stationary 128 x fp32 (4 passes: LS 4 x 32 = 128 cycles) behind an MM of max(32, 64) x 4 = 256 cycles: hidden;
  // bf16 stationary 128 (LS 32) behind a bf16 MM of max(8, 64) = 64: hidden; the array is never slower than
  // max(LS, MM) per matmul back to back [ARCH2].
  isa::Program f32 = matmuls(3, 128, 32, true, Dtype::float32);
  auto r = sim::Simulator(f32, timing_opts("trn1")).run();
  EXPECT_NEAR(work_event(r, 2).start_ns - work_event(r, 1).start_ns, 4 * 64 / 2.8, 1e-3);
}

TEST(PeMechanisms, Fp8DoubleRowDoublesThroughputOnNeuronCoreV3) {
  // reference neuron-arch.md 2.1 [ARCH3]: FP8 DoubleRow takes K = 256 (moving [128, 2, N]) in the time of BF16 with
  // K = 128: a moving free size of 2 x 512 costs 512 cycles, not 1024. Not on v2.
  isa::Program dr = matmuls(2, 128, 1024, false, Dtype::float8e4, isa::MatmultPerfMode::DoubleRow);
  auto r3 = sim::Simulator(dr, timing_opts("trn2")).run(), r2 = sim::Simulator(dr, timing_opts("trn1")).run();
  EXPECT_NEAR(work_event(r3, 1).end_ns - work_event(r3, 1).start_ns, 512 / 2.4, 1e-3);
  EXPECT_NEAR(work_event(r2, 1).end_ns - work_event(r2, 1).start_ns, 1024 / 2.8, 1e-3);
}

TEST(PeMechanisms, Fp32TransposesPayFourPassesOnV2AndTwoOnV3) {
  // reference neuron-arch.md 2.1: a PE transpose costs max(P, min(64, F)) [ISA226]; FP32 takes the 4 FP32 passes
  // on v2, and the v3 transpose mode gives "a 2x speedup in FP32 transpose" [ARCH3].
  Builder b("tr");
  auto x = b.sbuf("x", {128, 64}, Dtype::float32);
  auto o = b.psum("o", {64, 128}, Dtype::float32);
  b.add(InstructionType::Matmult, {b.ap(x.all())}, {b.ap(o.all())}).is_transpose(true);
  isa::Program p = b.finish();
  auto r1 = sim::Simulator(p, timing_opts("trn1")).run(), r2 = sim::Simulator(p, timing_opts("trn2")).run();
  EXPECT_EQ(r1.queues[0].cycles, 4 * 128);
  EXPECT_EQ(r2.queues[0].cycles, 2 * 128);
}

// ---- reporting that agrees with itself ----------------------------------------------------------------------

TEST(TimingReports, QueueFiguresAddUpToTheEnginesAndTheTraceEndsAtTheTotal) {
  // Loads from SP and ACT on two queues into one workload-like pipeline; stats and trace must tell one story.
  Builder b("report");
  auto a = b.input("a", {512, 256}), c = b.output("c", {512, 256});
  auto t = b.sbuf("t", {128, 4 * 256});
  for (int i = 0; i < 4; ++i) {
    b.add(InstructionType::Load, {b.ap(a.tile(128 * i, 128, 0, 256))}, {b.ap(t.tile(0, 128, 256 * i, 256))})
        .engine(i % 2 ? Engine::Activation : Engine::SP);
    b.add(InstructionType::Save, {b.ap(t.tile(0, 128, 256 * i, 256))}, {b.ap(c.tile(128 * i, 128, 0, 256))});
  }
  isa::Program p = b.finish();
  sim::RunOptions o = timing_opts("trn2");
  o.record_dma_engine_slices = true;
  sim::Simulator s(p, o);
  auto r = s.run();
  double queues = 0, engines = 0, slices = 0;
  for (int q = sim::kNumEngines; q < sim::kMaxQueues; ++q) queues += r.queues[q].busy_ns;
  for (const auto &e : r.dma_engines) engines += e.busy_ns;
  for (const auto &sl : r.dma_slices) slices += static_cast<double>(sl.end_ps - sl.start_ps) / 1000.0;
  EXPECT_NEAR(queues, engines, 1e-6);
  EXPECT_NEAR(slices, engines, 1e-6);
  auto stats = sim::stats_json(r, s.schedule(), p);
  EXPECT_NEAR(stats["dma"]["busy_ns"].get<double>(), engines, 1e-6);
  EXPECT_NEAR(stats["dma"]["utilization"].get<double>(), engines / (16 * r.total_ns), 1e-9);
  // Trace: engine slices last their stats busy time, and the timeline's last event ends at the total.
  auto j = sim::trace_json(r, s.schedule(), p);
  double end = 0, engine_busy = 0;
  std::array<double, sim::kNumEngines> queue_busy{};
  for (const auto &e : j["traceEvents"]) {
    if (e["ph"] == "X" || e["ph"] == "e") {
      const double ts = e["ts"].get<double>() + (e.contains("dur") ? e["dur"].get<double>() : 0.0);
      end = std::max(end, ts * 1000.0);
    }
    if (e["ph"] != "X") continue;
    const int tid = e["tid"].get<int>();
    if (tid >= 10000) engine_busy += e["dur"].get<double>() * 1000.0;
    if (tid < sim::kNumEngines) queue_busy[static_cast<size_t>(tid)] += e["dur"].get<double>() * 1000.0;
  }
  EXPECT_NEAR(end, r.total_ns, 1e-3);
  EXPECT_NEAR(engine_busy, engines, 1e-3);
  for (int q = 0; q < sim::kNumEngines; ++q) EXPECT_NEAR(queue_busy[static_cast<size_t>(q)], r.queues[q].busy_ns, 1e-3) << q;
  EXPECT_EQ(r.queues[4].instructions, 2);  // SP: the triggers of the 2 SP loads
  EXPECT_EQ(r.queues[2].instructions, 4);  // POOL: those of the 4 saves (no engine named: docs/timing-model.md 2.4)
  EXPECT_EQ(r.queues[1].instructions, 2);  // ACT: the triggers of the 2 ACT loads
}

}  // namespace test_timing_mechanisms
