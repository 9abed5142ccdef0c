// The SystemC core and scheduler: overlap, serialization, semaphores, deadlock, loops, end-to-end numerics.
// Cost figures follow engines/cost/cost.cpp (reference neuron-arch.md section 2) with trn1 clocks
// (sim/arch/trn1.json: DVE 1.12 GHz, POOL 1.4 GHz, ACT 1.4 GHz).
#include <gtest/gtest.h>

#include <map>

#include "neuronsim/builder.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/simulator.hpp"

// The helpers below live in namespace test_simulator, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_simulator {

using namespace neuronsim;
using builder::Builder;
using isa::InstructionType;

namespace {

// Occupancy and completion latency, trn1 (engines/cost/cost.cpp):
//   DVE memset, 512 fp32 per partition: max(MIN_II=64, N=512) = 512 cycles / 1.12 GHz = 457.142857 ns
//   ACT copy activation, N=512: max(64, 512) = 512 cycles / 1.4 GHz = 365.714286 ns
//   POOL memset, N=512: GPSIMD_START 150 + 512 = 662 cycles / 1.4 GHz = 472.857143 ns
//   completion latency: SBUF access start-up 60 + dependent overhead 100 = 160 engine cycles (DVE, POOL); on ACT
//   60 + 140 = 200, the overhead derived from the documented 264-cycle interval of dependent 1-element ACT
//   instructions (264 - MIN_II 64 - 60; docs/timing-model.md 4)
constexpr double kDve512 = 512 / 1.12, kAct512 = 512 / 1.4, kPool512 = 662 / 1.4;
constexpr double kDveLat = 160 / 1.12, kActLat = 200 / 1.4, kPoolLat = 160 / 1.4;

sim::RunOptions opts(const char *arch, bool timing_only) {
  sim::RunOptions o;
  o.arch = arch;
  o.timing_only = timing_only;
  return o;
}

// The event of an instruction's work: for a DMA instruction its transfer (on a DMA queue), not its trigger.
const sim::TraceEvent &event_of(const sim::RunResult &r, int inst) {
  const sim::TraceEvent *found = nullptr;
  for (const auto &e : r.events)
    if (e.inst == inst && (!found || e.queue >= sim::kNumEngines)) found = &e;
  if (!found) throw std::runtime_error("no event");
  return *found;
}

} // namespace

TEST(Simulator, IndependentInstructionsOnTwoEnginesOverlap) {
  Builder b;
  auto t1 = b.sbuf("t1", {128, 512}), t2 = b.sbuf("t2", {128, 512});
  b.add(InstructionType::Memset, {}, {b.ap(t1.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0).engine(isa::Engine::DVE);
  b.add(InstructionType::Memset, {}, {b.ap(t2.all())}).memset_mode(isa::MemsetMode::Const).constant(2.0).engine(isa::Engine::Activation);
  isa::Program p = b.finish();
  sim::Simulator s(p, {});
  auto r = s.run();
  // Total = max(457.14 + 142.86 = 600, 365.71 + 142.86 = 508.57) = 600 ns, not the sum.
  EXPECT_NEAR(r.total_ns, std::max(kDve512 + kDveLat, kAct512 + kActLat), 0.01);
  EXPECT_NEAR(r.total_ns, 600.0, 0.01);
  EXPECT_EQ(r.queues[3].instructions, 1);  // DVE
  EXPECT_EQ(r.queues[1].instructions, 1);  // ACT
}

TEST(Simulator, DvePoolShareTheSbufPortOnlyOnNeuronCoreV2) {
  auto build = [] {
    Builder b;
    auto t1 = b.sbuf("t1", {128, 512}), t2 = b.sbuf("t2", {128, 512});
    b.add(InstructionType::Memset, {}, {b.ap(t1.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0).engine(isa::Engine::DVE);
    b.add(InstructionType::Memset, {}, {b.ap(t2.all())}).memset_mode(isa::MemsetMode::Const).constant(2.0).engine(isa::Engine::Pool);
    return b.finish();
  };
  isa::Program p1 = build(), p2 = build();
  auto r1 = sim::Simulator(p1, opts("trn1", false)).run();
  // trn1: contention is granted in program order, so POOL waits for DVE to release the port:
  // 457.14 + 472.86 + 114.29 = 1044.29 ns.
  EXPECT_NEAR(event_of(r1, 1).start_ns, event_of(r1, 0).end_ns, 1e-3);
  EXPECT_NEAR(r1.total_ns, kDve512 + kPool512 + kPoolLat, 0.01);
  auto r2 = sim::Simulator(p2, opts("trn2", false)).run();
  // trn2 (DVE 0.96 GHz, POOL 1.2 GHz): in parallel, max((512+160)/0.96 = 700, (662+160)/1.2 = 685) = 700 ns.
  EXPECT_NEAR(r2.total_ns, 700.0, 0.01);
}

TEST(Simulator, DependentPairOnTwoEnginesSerializes) {
  Builder b;
  auto t1 = b.sbuf("t1", {128, 512}), t2 = b.sbuf("t2", {128, 512});
  b.add(InstructionType::Memset, {}, {b.ap(t1.all())}).memset_mode(isa::MemsetMode::Const).constant(3.0).engine(isa::Engine::DVE);
  b.add(InstructionType::Activation, {b.ap(t1.all())}, {b.ap(t2.all())}).act_func(isa::ActivationFunctionType::Copy).engine(isa::Engine::Activation);
  isa::Program p = b.finish();
  sim::Simulator s(p, {});
  ASSERT_EQ(s.schedule().insts[1].waits.size(), 1u);  // RAW on t1: ACT waits for DVE's first instruction
  EXPECT_EQ(s.schedule().insts[1].waits[0].queue, 3);
  EXPECT_EQ(s.schedule().insts[1].waits[0].count, 1);
  auto r = s.run();
  EXPECT_NEAR(r.total_ns, kDve512 + kDveLat + kAct512 + kActLat, 0.01);  // 600 + 508.57 = 1108.57 ns
  EXPECT_NEAR(event_of(r, 1).start_ns, event_of(r, 0).finish_ns, 1e-3);
  ASSERT_EQ(r.critical_path.size(), 2u);
  EXPECT_EQ(r.critical_path[0], 0);
  EXPECT_EQ(r.critical_path[1], 1);
}

TEST(Simulator, DependentInstructionsOnOneEnginePayTheLatencyIndependentOnesDoNot) {
  auto build = [](bool dependent) {
    Builder b;
    auto t1 = b.sbuf("t1", {128, 64}), t2 = b.sbuf("t2", {128, 64}), t3 = b.sbuf("t3", {128, 64});
    b.add(InstructionType::Memset, {}, {b.ap(t1.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0).engine(isa::Engine::DVE);
    b.add(InstructionType::TensorCopy, {b.ap(dependent ? t1.all() : t3.all())}, {b.ap(t2.all())}).engine(isa::Engine::DVE);
    return b.finish();
  };
  isa::Program dep = build(true), indep = build(false);
  sim::Simulator sd(dep, {}), si(indep, {});
  ASSERT_EQ(sd.schedule().insts[1].waits.size(), 1u);  // its own queue: wait for the memset to complete
  EXPECT_EQ(sd.schedule().insts[1].waits[0].queue, 3);
  EXPECT_TRUE(si.schedule().insts[1].waits.empty());
  // Dependent: a DVE instruction reading what the DVE instruction before it wrote starts
  // dve_dependent_latency_cycles (6, calibration.md E6) after that one's occupancy, not after its whole latency:
  // 64 + 6 + (64 + 160) = 294 cycles / 1.12 = 262.5 ns. Independent: 64 + 64 + 160 = 288 cycles.
  EXPECT_NEAR(sd.run().total_ns, 294 / 1.12, 0.01);
  EXPECT_NEAR(si.run().total_ns, 288 / 1.12, 0.01);
}

TEST(Simulator, DependentActivationChainMatchesTheDocumentedMeasurement) {
  // reference neuron-arch.md 2.3 [PERF Opt #5a]: dependent 1-element activations issue every 264 ScalarE cycles
  // (189 ns) on NC-v2: MIN_II 64 occupancy + 60 access start-up + the 140-cycle dependent overhead that
  // sim/arch/trn1.json derives from this very statement (docs/timing-model.md 4).
  Builder b;
  auto t = b.sbuf("t", {128, 1});
  b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(0.5).engine(isa::Engine::Activation);
  for (int k = 0; k < 10; ++k)
    b.add(InstructionType::Activation, {b.ap(t.all())}, {b.ap(t.all())}).act_func(isa::ActivationFunctionType::Exp);
  isa::Program p = b.finish();
  auto r = sim::Simulator(p, {}).run();
  const double ii_cycles = (event_of(r, 10).start_ns - event_of(r, 9).start_ns) * 1.4;
  EXPECT_NEAR(ii_cycles, 264.0, 0.01);
  EXPECT_NEAR(event_of(r, 10).start_ns - event_of(r, 9).start_ns, 188.57, 0.01);  // 264 / 1.4 GHz: "189 ns"
}

TEST(Simulator, WriteAfterReadAcrossEnginesWaits) {
  Builder b;
  auto t1 = b.sbuf("t1", {128, 512}), t2 = b.sbuf("t2", {128, 512});
  b.add(InstructionType::Activation, {b.ap(t1.all())}, {b.ap(t2.all())}).act_func(isa::ActivationFunctionType::Copy);
  b.add(InstructionType::Memset, {}, {b.ap(t1.all())}).memset_mode(isa::MemsetMode::Const).constant(0.0).engine(isa::Engine::DVE);
  isa::Program p = b.finish();
  sim::Simulator s(p, opts("trn1", true));
  ASSERT_EQ(s.schedule().insts[1].waits.size(), 1u);
  EXPECT_EQ(s.schedule().insts[1].waits[0].queue, 1);  // WAR: the memset waits for ACT's read
}

TEST(Simulator, ExplicitSemaphoresOrderQueues) {
  Builder b;
  auto t1 = b.sbuf("t1", {128, 512}), t2 = b.sbuf("t2", {128, 512});
  // DVE first in program order but waits for semaphore 3, which POOL's instruction increments.
  auto i0 = b.add(InstructionType::Memset, {}, {b.ap(t1.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0).engine(isa::Engine::DVE);
  i0.inst().waits.push_back(isa::SemWait{3, isa::SemWait::Mode::GeImm, 1, ""});
  auto i1 = b.add(InstructionType::Memset, {}, {b.ap(t2.all())}).memset_mode(isa::MemsetMode::Const).constant(2.0).engine(isa::Engine::Pool);
  i1.inst().updates.push_back(isa::SemUpdate{3, isa::SemUpdate::Mode::Inc, 1});
  isa::Program p = b.finish();
  sim::Simulator s(p, {});
  EXPECT_TRUE(s.schedule().explicit_sync);
  auto r = s.run();
  // DVE starts when POOL's instruction completes and its update lands: (472.86 + 114.29) + (457.14 + 142.86).
  EXPECT_NEAR(event_of(r, 0).start_ns, event_of(r, 1).finish_ns, 1e-3);
  EXPECT_NEAR(r.total_ns, kPool512 + kPoolLat + kDve512 + kDveLat, 0.01);
}

TEST(Simulator, UnmetSemaphoreWaitIsReportedAsDeadlock) {
  Builder b;
  auto t1 = b.sbuf("t1", {128, 64});
  auto i0 = b.add(InstructionType::Memset, {}, {b.ap(t1.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0).engine(isa::Engine::DVE);
  i0.inst().waits.push_back(isa::SemWait{7, isa::SemWait::Mode::GeImm, 1, ""});
  isa::Program p = b.finish();
  sim::Simulator s(p, {});
  try {
    s.run();
    FAIL() << "expected a deadlock";
  } catch (const SimulationError &e) {
    EXPECT_EQ(e.exit_code(), 4);
    const std::string m = e.what();
    EXPECT_NE(m.find("deadlock"), std::string::npos) << m;
    EXPECT_NE(m.find("DVE blocked at instruction 0 'I-1'"), std::string::npos) << m;
    EXPECT_NE(m.find("semaphore 7 >= 1 (is 0)"), std::string::npos) << m;
    EXPECT_NE(m.find("builder: deadlock"), std::string::npos) << m;
  }
}

TEST(Simulator, SemaphoreIndexOutOfRangeIsRejected) {
  Builder b;
  auto t1 = b.sbuf("t1", {128, 64});
  auto i0 = b.add(InstructionType::Memset, {}, {b.ap(t1.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0);
  i0.inst().updates.push_back(isa::SemUpdate{256, isa::SemUpdate::Mode::Inc, 1});
  isa::Program p = b.finish();
  EXPECT_THROW(sim::Simulator(p, {}), SemanticError);
}

TEST(Simulator, AddKernelEndToEnd) {
  Builder b("add");
  auto a = b.input("a", {128, 64}), c = b.input("c", {128, 64}), o = b.output("o", {128, 64});
  auto ta = b.sbuf("ta", {128, 64}), tc = b.sbuf("tc", {128, 64}), to = b.sbuf("to", {128, 64});
  b.add(InstructionType::Load, {b.ap(a.all())}, {b.ap(ta.all())});
  b.add(InstructionType::Load, {b.ap(c.all())}, {b.ap(tc.all())});
  b.add(InstructionType::TensorTensor, {b.ap(ta.all()), b.ap(tc.all())}, {b.ap(to.all())}).op(isa::AluOp::subtract);
  b.add(InstructionType::Save, {b.ap(to.all())}, {b.ap(o.all())});
  isa::Program p = b.finish();
  sim::Simulator s(p, {});
  auto &av = s.memory().dram(0), &cv = s.memory().dram(1);
  for (int i = 0; i < 128 * 64; ++i) {
    float x = static_cast<float>(i % 97) * 0.5f, y = static_cast<float>(i % 13);
    std::memcpy(&av[static_cast<size_t>(i) * 4], &x, 4);
    std::memcpy(&cv[static_cast<size_t>(i) * 4], &y, 4);
  }
  auto r = s.run();
  auto out = sim::tensor_f32(p, s.memory(), 2);
  for (int i = 0; i < 128 * 64; ++i)
    ASSERT_EQ(out[i], static_cast<float>(i % 97) * 0.5f - static_cast<float>(i % 13)) << i;  // acc - x
  EXPECT_EQ(r.dynamic_instructions, 4);
  // The subtract waits for both loads, the save for the subtract.
  EXPECT_GE(event_of(r, 2).start_ns, std::max(event_of(r, 0).finish_ns, event_of(r, 1).finish_ns) - 1e-6);
  EXPECT_GE(event_of(r, 3).start_ns, event_of(r, 2).finish_ns - 1e-6);
  // Both loads read kernel inputs from SP: one queue (qSyncIO0), in order on every DMA engine
  // (docs/timing-model.md 2). Each is 128 partitions x 256 B: 8 descriptors of 256 B on each of the 16 engines.
  // trn1 (sim/arch/trn1.json): a piece is dma_transfer_overhead_ns 7 + 8 x 256 B / 17 B/ns (integer ps 15059) =
  // 127.472 ns. Load 0's trigger ends at 1 SP cycle = 0.714 ns; its first byte follows dma_latency_ns 850 later, and
  // its pieces start dma_engine_stagger_ns 21.5 apart: the last ends at 0.714 + 850 + 15 x 21.5 + 127.472. Each
  // engine processes its 8 descriptors of a transfer in 8 x dma_engine_descriptor_ns 106 = 848 ns (load 0's within
  // its latency), then load 1's (entered at 1.429 ns), by 0.714 + 2 x 848 = 1696.714 ns; a piece moves once its
  // descriptors are processed, so load 1's pieces all start then (the stagger is long past).
  const double piece = 7 + 8 * 15.059, start0 = 1 / 1.4 + 850.0, start1 = 1 / 1.4 + 16 * 106.0;
  EXPECT_NEAR(event_of(r, 0).issue_ns, 1 / 1.4, 1e-3);
  EXPECT_NEAR(event_of(r, 0).start_ns, start0, 1e-3);
  EXPECT_NEAR(event_of(r, 0).end_ns, start0 + 15 * 21.5 + piece, 1e-3);
  EXPECT_NEAR(event_of(r, 1).start_ns, start1, 1e-3);
  EXPECT_NEAR(event_of(r, 1).end_ns, start1 + piece, 1e-3);
}

TEST(Simulator, LoopVariableDrivesAccessPatterns) {
  // for i in range(4): o[:, 8i:8i+8] = a[:, 8i:8i+8] + 1   (tile by tile through SBUF)
  Builder b("loop");
  auto a = b.input("a", {16, 32}), o = b.output("o", {16, 32});
  auto t = b.sbuf("t", {16, 8});
  b.loop("i", 0, 4, 1, [&](builder::Aff i) {
    b.add(InstructionType::Load, {b.ap(a.tile(0, 16, i * 8, 8))}, {b.ap(t.all())});
    b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), Builder::imm(1.0)}, {b.ap(t.all())})
        .op0(isa::AluOp::add).op1(isa::AluOp::bypass);
    b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.tile(0, 16, i * 8, 8))});
  });
  isa::Program p = b.finish();
  sim::Simulator s(p, {});
  auto &av = s.memory().dram(0);
  for (int i = 0; i < 16 * 32; ++i) {
    float x = static_cast<float>(i);
    std::memcpy(&av[static_cast<size_t>(i) * 4], &x, 4);
  }
  auto r = s.run();
  EXPECT_EQ(r.dynamic_instructions, 12);
  auto out = sim::tensor_f32(p, s.memory(), 1);
  for (int i = 0; i < 16 * 32; ++i) ASSERT_EQ(out[i], static_cast<float>(i) + 1.0f) << i;
}

TEST(Simulator, TimingOnlyGivesTheSameTimeline) {
  auto build = [] {
    Builder b("t");
    auto a = b.input("a", {128, 256}), o = b.output("o", {128, 256});
    auto t = b.sbuf("t", {128, 256}), u = b.sbuf("u", {128, 256});
    b.add(InstructionType::Load, {b.ap(a.all())}, {b.ap(t.all())});
    b.add(InstructionType::Activation, {b.ap(t.all())}, {b.ap(u.all())}).act_func(isa::ActivationFunctionType::Exp);
    b.add(InstructionType::Save, {b.ap(u.all())}, {b.ap(o.all())});
    return b.finish();
  };
  isa::Program p1 = build(), p2 = build();
  sim::Simulator full(p1, {}), fast(p2, opts("trn1", true));
  auto r1 = full.run(), r2 = fast.run();
  EXPECT_DOUBLE_EQ(r1.total_ns, r2.total_ns);
  EXPECT_EQ(r1.events.size(), r2.events.size());
}

namespace {
// for (r = 3; r > 0; --r) t += 1, written with basic blocks and a CompareAndBranch back edge.
isa::Program countdown(const std::string &on_false = "") {
  Builder b("countdown");
  auto o = b.output("o", {8, 4});
  auto t = b.sbuf("t", {8, 4});
  b.block("entry");
  b.add(InstructionType::RegisterMove, {Builder::imm(3, isa::Dtype::int32)}, {Builder::reg("r")});
  b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(0.0);
  b.block("body");
  b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), Builder::imm(1.0)}, {b.ap(t.all())})
      .op0(isa::AluOp::add).op1(isa::AluOp::bypass);
  b.add(InstructionType::RegisterAlu, {Builder::reg("r"), Builder::imm(1, isa::Dtype::int32)}, {Builder::reg("r")})
      .op(isa::AluOp::subtract);
  b.add(InstructionType::CompareAndBranch, {Builder::reg("r"), Builder::imm(0, isa::Dtype::int32)}, {})
      .comp_op(isa::BranchCompareOp::IS_GTIMM).on_true("body").on_false(on_false);
  b.block("exit");
  b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.all())});
  return b.finish();
}
} // namespace

TEST(SimulatorControlFlow, CompareAndBranchLoopsOverABlock) {
  isa::Program p = countdown();
  ASSERT_TRUE(sim::has_data_dependent_control(p));
  sim::Simulator s(p, {});
  auto r = s.run();
  // entry 2 + body 3 x 3 + exit 1 = 12 dynamic instructions; t = 0 + 1 + 1 + 1.
  EXPECT_EQ(r.dynamic_instructions, 12);
  for (float v : sim::tensor_f32(p, s.memory(), 0)) EXPECT_EQ(v, 3.0f);
}

TEST(SimulatorControlFlow, BranchToAnUnknownBlockNamesTheField) {
  isa::Program p = countdown("nowhere");
  sim::Simulator s(p, {});
  try {
    s.run();
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "on_false");
    EXPECT_NE(std::string(e.what()).find("no basic block named 'nowhere'"), std::string::npos) << e.what();
  }
}

TEST(SimulatorControlFlow, UnconditionalBranchSkipsABlockAndReturnEndsTheRun) {
  Builder b("skip");
  auto o = b.output("o", {4, 4});
  auto t = b.sbuf("t", {4, 4});
  b.block("a");
  b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0);
  b.add(InstructionType::UnconditionalBranch, {}, {}).target("c");
  b.block("b");
  b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(7.0);
  b.block("c");
  b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.all())});
  b.add(InstructionType::Return, {}, {});
  b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(9.0);
  isa::Program p = b.finish();
  sim::Simulator s(p, {});
  auto r = s.run();
  EXPECT_EQ(r.dynamic_instructions, 4);  // memset, branch, save, return
  for (float v : sim::tensor_f32(p, s.memory(), 0)) EXPECT_EQ(v, 1.0f);
}

TEST(SimulatorControlFlow, BlocksAndBranchesRoundTripThroughBirJson) {
  isa::Program p = isa::parse_bir(isa::to_bir_json(countdown()), "countdown.bir.json");
  ASSERT_EQ(p.blocks.size(), 3u);
  EXPECT_EQ(p.blocks[1].name, "body");
  EXPECT_EQ(p.blocks[1].first, 2u);
  sim::Simulator s(p, {});
  auto r = s.run();
  EXPECT_EQ(r.dynamic_instructions, 12);
  for (float v : sim::tensor_f32(p, s.memory(), 0)) EXPECT_EQ(v, 3.0f);
}

TEST(Simulator, AllEngineBarrierOrdersIndependentWork) {
  auto build = [](bool barrier) {
    Builder b;
    auto t1 = b.sbuf("t1", {128, 512}), t2 = b.sbuf("t2", {128, 512});
    b.add(InstructionType::Memset, {}, {b.ap(t1.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0).engine(isa::Engine::DVE);
    if (barrier) b.add(InstructionType::AllEngineBarrier, {}, {}).engine(isa::Engine::SP);
    b.add(InstructionType::Memset, {}, {b.ap(t2.all())}).memset_mode(isa::MemsetMode::Const).constant(2.0).engine(isa::Engine::Activation);
    return b.finish();
  };
  isa::Program free_p = build(false), bar_p = build(true);
  auto r0 = sim::Simulator(free_p, {}).run();
  EXPECT_NEAR(r0.total_ns, 600.0, 0.01);  // independent: max(600, 508.57)
  auto r1 = sim::Simulator(bar_p, {}).run();
  // DVE completes at 600 ns; the SP barrier (1 SP cycle, no latency) at 600.71; then ACT's 508.57 ns.
  EXPECT_NEAR(r1.total_ns, 600.0 + 1 / 1.4 + kAct512 + kActLat, 0.01);
  EXPECT_GE(event_of(r1, 2).start_ns, event_of(r1, 1).finish_ns - 1e-6);
}

TEST(Simulator, AnInstructionWithoutSemanticsIsRefusedBeforeTheRunButTimed) {
  Builder b("custom");
  auto t = b.sbuf("t", {4, 4});
  b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0);
  b.add(InstructionType::InlineASMBytes, {b.ap(t.all())}, {b.ap(t.all())}).engine(isa::Engine::Pool);
  isa::Program p = b.finish();
  try {
    sim::Simulator s(p, {});
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().inst_index, 1);
    EXPECT_EQ(e.context().field, "opcode");
    EXPECT_NE(std::string(e.what()).find("birsim skips it"), std::string::npos) << e.what();
  }
  sim::Simulator timing(p, opts("trn1", true));
  EXPECT_EQ(timing.run().dynamic_instructions, 2);
}

TEST(Simulator, TraceSlicesNeverPartiallyOverlapOnATrack) {
  // Perfetto rejects partially overlapping slices on one track: every queue is in order, so its slices must be
  // disjoint. Checked on a real workload with loops, PSUM groups and 16 DMA queues.
  isa::Program p = isa::read_bir_file(std::string(NEURONSIM_SOURCE_DIR) +
                                      "/workloads/matmul_blocked_mnk/matmul_blocked_mnk.bir.json");
  sim::Simulator s(p, opts("trn1", true));
  auto r = s.run();
  auto j = sim::trace_json(r, s.schedule(), p);
  std::map<int, std::vector<std::pair<double, double>>> tracks;
  int starts = 0, finishes = 0;
  for (const auto &e : j["traceEvents"]) {
    if (e["ph"] == "X") {
      ASSERT_GE(e["dur"].get<double>(), 0.0);
      tracks[e["tid"].get<int>()].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
    }
    starts += e["ph"] == "s";
    finishes += e["ph"] == "f";
  }
  EXPECT_EQ(starts, finishes);
  EXPECT_GT(starts, 0);
  for (auto &[tid, v] : tracks) {
    std::sort(v.begin(), v.end());
    for (size_t i = 1; i < v.size(); ++i) ASSERT_GE(v[i].first, v[i - 1].second - 1e-9) << "track " << tid;
  }
}

TEST(SimulatorControlFlow, DoWhileRepeatsWhileItsRegisterIsNonZero) {
  // r = 3; do { t += 1; r -= 1; } while (r != 0)   -> t = 3
  Builder b("dowhile");
  auto o = b.output("o", {4, 4});
  auto t = b.sbuf("t", {4, 4});
  b.add(InstructionType::RegisterMove, {Builder::imm(3, isa::Dtype::int32)}, {Builder::reg("r")});
  b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(0.0);
  b.do_while("r", [&] {
    b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), Builder::imm(1.0)}, {b.ap(t.all())})
        .op0(isa::AluOp::add).op1(isa::AluOp::bypass);
    b.add(InstructionType::RegisterAlu, {Builder::reg("r"), Builder::imm(1, isa::Dtype::int32)}, {Builder::reg("r")})
        .op(isa::AluOp::subtract);
  });
  b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.all())});
  for (const isa::Program &p : {b.program(), isa::parse_bir(isa::to_bir_json(b.program()), "dowhile.bir.json")}) {
    sim::Simulator s(p, {});
    auto r = s.run();
    EXPECT_EQ(r.dynamic_instructions, 2 + 3 * 2 + 1);
    for (float v : sim::tensor_f32(p, s.memory(), 0)) EXPECT_EQ(v, 3.0f);
  }
}

TEST(SimulatorControlFlow, DynamicForLoopReadsItsUpperBoundFromARegister) {
  // n = 4; for i in range(0, 1 * n + 0): t[:, i] += 1   over 6 columns -> 1 1 1 1 0 0 per row
  Builder b("dynfor");
  auto o = b.output("o", {2, 6});
  auto t = b.sbuf("t", {2, 6});
  b.add(InstructionType::RegisterMove, {Builder::imm(4, isa::Dtype::int32)}, {Builder::reg("n")});
  b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(0.0);
  b.dynamic_loop("i", 0, "n", 1, 0, 1, [&](builder::Aff i) {
    b.add(InstructionType::TensorScalarPtr, {b.ap(t.tile(0, 2, i, 1)), Builder::imm(1.0)}, {b.ap(t.tile(0, 2, i, 1))})
        .op0(isa::AluOp::add).op1(isa::AluOp::bypass);
  });
  b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.all())});
  for (const isa::Program &p : {b.program(), isa::parse_bir(isa::to_bir_json(b.program()), "dynfor.bir.json")}) {
    sim::Simulator s(p, {});
    auto r = s.run();
    EXPECT_EQ(r.dynamic_instructions, 2 + 4 + 1);
    EXPECT_EQ(sim::tensor_f32(p, s.memory(), 0), (std::vector<float>{1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0}));
  }
}

TEST(Simulator, ALoopTooLargeToUnrollIsRefusedAtOnce) {
  Builder b("huge");
  auto t = b.sbuf("t", {4, 4});
  b.loop("i", 0, 1000000000000LL, 1, [&](builder::Aff) {
    b.loop("j", 0, 1000000000000LL, 1, [&](builder::Aff) {
      b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(0.0);
    });
  });
  isa::Program p = b.finish();
  try {
    sim::Simulator s(p, opts("trn1", true));
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_NE(std::string(e.what()).find("more than the 1000000000 one run may execute"), std::string::npos) << e.what();
  }
}

}  // namespace test_simulator
