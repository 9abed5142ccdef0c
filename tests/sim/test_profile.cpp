// The profile (docs/profiling.md): wait reasons decided in sim/core_issue.cpp and the per-instruction / opcode /
// engine / source-line sums of stats_json, on hand-built kernels whose waits are known by construction.
#include <gtest/gtest.h>

#include "neuronsim/builder.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "neuronsim/sim/stats.hpp"
#include "support/timing_run.hpp"

// The helpers below live in namespace test_profile, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_profile {

using namespace neuronsim;
using builder::Builder;
using isa::Engine;
using isa::InstructionType;
using sim::WaitReason;
using test::timing_opts;
using test::work_event;

namespace {

double wait(const sim::TraceEvent &e, WaitReason w) { return e.wait_ns[static_cast<size_t>(w)]; }
double total_wait(const sim::TraceEvent &e) {
  double t = 0;
  for (double w : e.wait_ns) t += w;
  return t;
}

// ACT reads PSUM columns [a_col, a_col + 512), DVE columns [b_col, b_col + 512) (independent instructions).
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

TEST(Profile, SharedPsumPortWaitIsTheOtherEnginesOccupancyOnV2) {
  // reference neuron-arch.md 1.4 [ARCH2]: ACT and DVE cannot access PSUM in parallel on v2. ACT copies 512 fp32
  // elements per partition: act_fixed_cycles 159 + 512 cycles at 1.4 GHz = 479.286 ns (calibration.md E3); the
  // independent DVE copy waits exactly that, on the shared port, and nothing else.
  isa::Program p = psum_readers(0, 512);
  auto r = sim::Simulator(p, timing_opts("trn1")).run();
  EXPECT_NEAR(wait(work_event(r, 1), WaitReason::SharedPort), (159 + 512) / 1.4, 1e-3);
  EXPECT_NEAR(total_wait(work_event(r, 1)), (159 + 512) / 1.4, 1e-3);
  EXPECT_NEAR(total_wait(work_event(r, 0)), 0.0, 1e-9);
  EXPECT_NEAR(work_event(r, 0).busy_ns, (159 + 512) / 1.4, 1e-3);
}

TEST(Profile, PsumBankCollisionIsAPsumBankWaitOnV3) {
  // reference neuron-arch.md 1.4 [ARCH3]: ACT and DVE collide only on the same PSUM bank. Same bank (columns 0 and
  // 0): DVE waits ACT's occupancy, charged to psum_bank; different banks (0 and 512): no wait at all.
  isa::Program same = psum_readers(0, 0), apart = psum_readers(0, 512);
  auto rs = sim::Simulator(same, timing_opts("trn2")).run(), ra = sim::Simulator(apart, timing_opts("trn2")).run();
  EXPECT_GT(work_event(rs, 0).busy_ns, 0.0);
  EXPECT_NEAR(wait(work_event(rs, 1), WaitReason::PsumBank), work_event(rs, 0).busy_ns, 1e-3);
  EXPECT_NEAR(wait(work_event(rs, 1), WaitReason::SharedPort), 0.0, 1e-9);
  EXPECT_NEAR(total_wait(work_event(ra, 1)), 0.0, 1e-9);
}

TEST(Profile, ActWaitingForTheV2PsumWriterFenceIsAPsumBankWait) {
  // reference neuronx-cc/walrus/perfsim-cost-model.md determine_start_time: on v2 ACT starts after the DVE PSUM
  // writer's end. DVE copies 512 fp32 per partition: 512 cycles at 1.12 GHz = 457.143 ns.
  Builder b("fence");
  auto ps = b.psum("ps", {128, 512});
  auto s1 = b.sbuf("s1", {128, 512}), s2 = b.sbuf("s2", {128, 512}), s3 = b.sbuf("s3", {128, 512});
  b.add(InstructionType::TensorCopy, {b.ap(s1.all())}, {b.ap(ps.all())}).engine(Engine::DVE);
  b.add(InstructionType::Activation, {b.ap(s2.all())}, {b.ap(s3.all())})
      .act_func(isa::ActivationFunctionType::Copy)
      .engine(Engine::Activation);
  isa::Program p = b.finish();
  auto r = sim::Simulator(p, timing_opts("trn1")).run();
  EXPECT_NEAR(wait(work_event(r, 1), WaitReason::PsumBank), 512 / 1.12, 1e-3);
  EXPECT_NEAR(total_wait(work_event(r, 1)), 512 / 1.12, 1e-3);
}

TEST(Profile, ADependentInstructionWaitsForItsProducersCompletion) {
  // DVE reads the tile ACT writes: it starts when ACT's result is visible, i.e. at ACT's completion, and that
  // whole wait (from t = 0, when the DVE queue was free) is a dependency wait.
  Builder b("dep");
  auto s1 = b.sbuf("s1", {128, 512}), s2 = b.sbuf("s2", {128, 512}), s3 = b.sbuf("s3", {128, 512});
  b.add(InstructionType::Activation, {b.ap(s1.all())}, {b.ap(s2.all())})
      .act_func(isa::ActivationFunctionType::Copy)
      .engine(Engine::Activation);
  b.add(InstructionType::TensorCopy, {b.ap(s2.all())}, {b.ap(s3.all())}).engine(Engine::DVE);
  isa::Program p = b.finish();
  auto r = sim::Simulator(p, timing_opts("trn1")).run();
  const auto &act = work_event(r, 0), &dve = work_event(r, 1);
  EXPECT_GT(act.finish_ns, act.end_ns);  // the completion latency counts too
  EXPECT_NEAR(dve.start_ns, act.finish_ns, 1e-3);
  EXPECT_NEAR(wait(dve, WaitReason::Dependency), act.finish_ns, 1e-3);
  EXPECT_NEAR(total_wait(dve), act.finish_ns, 1e-3);
}

TEST(Profile, TheFifthTransferOnAQueueWaitsForARingSlot) {
  // dma_ring_depth = 4 (sim/arch/trn1.json): of 8 independent loads on one queue, load 4 enters its ring when load
  // 0 completes. Its wait after its queue was free (load 3 entering the ring) and its trigger ended is dma_ring.
  Builder b("ring");
  auto a = b.input("a", {8 * 128, 16});
  auto t = b.sbuf("t", {128, 8 * 16});
  for (int i = 0; i < 8; ++i) b.add(InstructionType::Load, {b.ap(a.tile(128 * i, 128, 0, 16))}, {b.ap(t.tile(0, 128, i * 16, 16))});
  isa::Program p = b.finish();
  auto r = sim::Simulator(p, timing_opts("trn1")).run();
  const double ring = wait(work_event(r, 4), WaitReason::DmaRing);
  EXPECT_GT(ring, 1000.0);  // the 1300 ns fixed latency of load 0 alone is more than that
  EXPECT_NEAR(work_event(r, 4).issue_ns - ring - wait(work_event(r, 4), WaitReason::Dependency), work_event(r, 3).issue_ns, 1e-3);
  EXPECT_NEAR(work_event(r, 4).issue_ns, work_event(r, 0).finish_ns, 1e-3);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(wait(work_event(r, k), WaitReason::DmaRing), 0.0, 1e-9) << k;
}

TEST(Profile, StatsSumPerInstructionOpcodeEngineAndSourceLine) {
  // The two-instruction PSUM-port kernel with source lines 7 and 9: each static instruction ran once; DVE's
  // wait is 479.286 ns on the shared port. The critical path follows completions, not shared-resource grants, so
  // it is DVE alone: from DVE's start (479.286) to the total time, and the sums by instruction and by line say so.
  isa::Program p = psum_readers(0, 512);
  p.insts[0].source_file = "k.py", p.insts[0].source_line = 7;
  p.insts[1].source_file = "k.py", p.insts[1].source_line = 9;
  sim::Simulator s(p, timing_opts("trn1"));
  auto r = s.run();
  const nlohmann::json j = sim::stats_json(r, s.schedule(), p, {"neuronsim", "run", "k.json"});
  ASSERT_TRUE(j.contains("engines"));  // the existing keys stay
  EXPECT_EQ(j["command_line"][2], "k.json");
  EXPECT_EQ(j["tool"]["name"], "neuronsim");
  const auto &prof = j["profile"];
  ASSERT_EQ(prof["instructions"].size(), 2u);
  const auto &dve = prof["instructions"][1];
  EXPECT_EQ(dve["engine"], "DVE");
  EXPECT_EQ(dve["opcode"], "TensorCopy");
  EXPECT_EQ(dve["file"], "k.py");
  EXPECT_EQ(dve["line"], 9);
  EXPECT_EQ(dve["executions"], 1);
  EXPECT_NEAR(dve["wait_ns"]["shared_port"].get<double>(), (159 + 512) / 1.4, 1e-3);
  EXPECT_NEAR(dve["wait_total_ns"].get<double>(), (159 + 512) / 1.4, 1e-3);
  EXPECT_NEAR(prof["engines"]["DVE"]["wait_ns"]["shared_port"].get<double>(), (159 + 512) / 1.4, 1e-3);
  EXPECT_NEAR(prof["opcodes"]["Activation"]["busy_ns"].get<double>(), (159 + 512) / 1.4, 1e-3);
  ASSERT_EQ(prof["source_lines"].size(), 2u);
  EXPECT_EQ(prof["source_lines"][0]["line"], 7);
  double cp = 0;
  for (const auto &row : prof["critical_path"]["instructions"]) cp += row["critical_path_ns"].get<double>();
  ASSERT_EQ(r.critical_path.size(), 1u);
  EXPECT_NEAR(cp, r.total_ns - (159 + 512) / 1.4, 1e-3);
  double lines = 0;
  for (const auto &row : prof["critical_path"]["source_lines"]) lines += row["critical_path_ns"].get<double>();
  EXPECT_NEAR(lines, r.total_ns - (159 + 512) / 1.4, 1e-3);
  // --top 1: the instruction holding the path longest, with its source line.
  std::ostringstream top;
  sim::print_top(top, j, 1);
  const std::string first = prof["critical_path"]["instructions"][0]["name"];
  EXPECT_NE(top.str().find(first), std::string::npos) << top.str();
  EXPECT_NE(top.str().find("k.py:"), std::string::npos) << top.str();
  EXPECT_NE(top.str().find("top 1 "), std::string::npos) << top.str();
}

}  // namespace test_profile
