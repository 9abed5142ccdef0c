// Streamed runs (RunOptions::schedule, issue 18 item 1): the schedule made on demand, completion times kept in
// windows, the profile and the critical path folded as the run goes. Every result is the materialised run's, bit
// for bit: totals, per-queue and per-DMA-engine statistics, the critical path, the stats document (profile rows,
// shares, critical-path list) and the printed summary; errors are reported the same.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "neuronsim/builder.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/stats.hpp"
#include "sim/path_log.hpp"
#include "support/temp_dir.hpp"

// The helpers below live in namespace test_streamed_run, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_streamed_run {

using namespace neuronsim;
using builder::Builder;
using isa::InstructionType;

namespace {

struct Outcome {
  sim::RunResult r;
  nlohmann::json stats;
  std::string summary;
};

Outcome run(const isa::Program &p, const std::string &arch, sim::ScheduleMode mode, int64_t window = 4096,
            int64_t path_block = 4096) {
  sim::RunOptions o;
  o.arch = arch;
  o.timing_only = true;
  o.schedule = mode;
  o.schedule_window = window;
  o.critical_path_block = path_block;
  sim::Simulator s(p, o);
  Outcome out;
  out.r = s.run();
  out.stats = sim::stats_json(out.r, s.schedule(), p);
  std::ostringstream os;
  sim::print_summary(os, out.r, s.schedule());
  out.summary = os.str();
  return out;
}

// Exact comparison, field by field (doubles with ==).
void expect_same(const Outcome &w, const Outcome &s) {
  EXPECT_FALSE(w.r.streamed);
  EXPECT_TRUE(s.r.streamed);
  EXPECT_EQ(w.r.total_ns, s.r.total_ns);
  EXPECT_EQ(w.r.dynamic_instructions, s.r.dynamic_instructions);
  EXPECT_EQ(w.r.critical_path, s.r.critical_path);
  for (int q = 0; q < sim::kMaxQueues; ++q) {
    SCOPED_TRACE(sim::queue_name(q));
    const auto &a = w.r.queues[q], &b = s.r.queues[q];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.instructions, b.instructions);
    EXPECT_EQ(a.busy_ns, b.busy_ns);
    EXPECT_EQ(a.cycles, b.cycles);
    EXPECT_EQ(a.bytes, b.bytes);
    EXPECT_EQ(a.descriptors, b.descriptors);
  }
  ASSERT_EQ(w.r.dma_engines.size(), s.r.dma_engines.size());
  for (size_t e = 0; e < w.r.dma_engines.size(); ++e) {
    EXPECT_EQ(w.r.dma_engines[e].busy_ns, s.r.dma_engines[e].busy_ns);
    EXPECT_EQ(w.r.dma_engines[e].descriptors, s.r.dma_engines[e].descriptors);
    EXPECT_EQ(w.r.dma_engines[e].transfers, s.r.dma_engines[e].transfers);
  }
  // The stats document: engines, DMA, critical-path list and shares, the profile's rows by instruction, opcode,
  // engine and source line (nlohmann compares the doubles exactly).
  for (const char *k : {"engines", "dma", "critical_path", "critical_path_ns", "bottleneck", "critical_path_length"})
    EXPECT_EQ(w.stats.at(k), s.stats.at(k)) << k;
  const auto &pw = w.stats.at("profile"), &ps = s.stats.at("profile");
  ASSERT_EQ(pw.at("instructions").size(), ps.at("instructions").size());
  for (size_t i = 0; i < pw.at("instructions").size(); ++i)
    EXPECT_EQ(pw.at("instructions")[i], ps.at("instructions")[i]) << pw.at("instructions")[i].dump();
  EXPECT_EQ(pw, ps);
  EXPECT_EQ(w.stats, s.stats);
  EXPECT_EQ(w.summary, s.summary);
}

const char *const kWorkloads[] = {"attention",  "cumsum",         "kernel1", "layernorm", "matmul_blocked_free",
                                  "matmul_blocked_mnk", "matmul_hoisted", "matmul_tiled", "rmsnorm", "softmax",
                                  "tensor_add", "transpose"};

isa::Program workload(const std::string &w) {
  return isa::read_bir_file(std::string(NEURONSIM_SOURCE_DIR) + "/workloads/" + w + "/" + w + ".bir.json");
}

// A loop kernel with a DMA in and out per trip and dependencies across three engines.
isa::Program loop_kernel(int64_t trips) {
  Builder b("loop_kernel");
  auto a = b.input("a", {16, 64}), o = b.output("o", {16, 64});
  auto t = b.sbuf("t", {16, 8}), u = b.sbuf("u", {16, 8}), w = b.sbuf("w", {16, 8});
  b.add(InstructionType::Memset, {}, {b.ap(w.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0)
      .engine(isa::Engine::Pool);
  b.loop("i", 0, trips / 8, 1, [&](builder::Aff) {
    b.loop("j", 0, 8, 1, [&](builder::Aff j) {
      b.add(InstructionType::Load, {b.ap(a.tile(0, 16, j * 8, 8))}, {b.ap(t.all())});
      b.add(InstructionType::Activation, {b.ap(t.all())}, {b.ap(u.all())}).act_func(isa::ActivationFunctionType::Copy);
      b.add(InstructionType::TensorTensor, {b.ap(u.all()), b.ap(w.all())}, {b.ap(t.all())}).op(isa::AluOp::add)
          .engine(isa::Engine::DVE);
      b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.tile(0, 16, j * 8, 8))});
    });
  });
  return b.finish();
}

template <class F> std::string message_of(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

TEST(StreamedRun, EveryWorkloadRunsAsTheWholeScheduleDoesBitForBit) {
  for (const char *w : kWorkloads)
    for (const char *a : {"trn1", "trn3"}) {
      SCOPED_TRACE(std::string(w) + " " + a);
      const isa::Program p = workload(w);
      expect_same(run(p, a, sim::ScheduleMode::Whole), run(p, a, sim::ScheduleMode::Streamed));
    }
}

TEST(StreamedRun, TheStatsDocumentCanBeBuiltAfterTheSimulatorIsGone) {
  // neuronsim.run keeps a streamed run's RunResult and its schedule's summary (no entries), and builds the stats
  // document from them when it is first read (python/run.cpp): the document built right after the run. Its summary
  // and verdict come from summary_analysis_json (no profile, no critical-path list): the full document's.
  for (const char *w : kWorkloads)
    for (const char *a : {"trn1", "trn3"}) {
      SCOPED_TRACE(std::string(w) + " " + a);
      const isa::Program p = workload(w);
      sim::RunOptions o;
      o.arch = a;
      o.timing_only = true;
      o.schedule = sim::ScheduleMode::Streamed;
      nlohmann::json now, light;
      std::string summary, light_summary;
      sim::RunResult kept;
      sim::Schedule summary_only;
      {
        sim::Simulator s(p, o);
        kept = s.run();
        now = sim::stats_json(kept, s.schedule(), p);
        light = sim::summary_analysis_json(kept, s.schedule(), p);
        std::ostringstream full_os, light_os;
        sim::print_summary(full_os, kept, s.schedule(), &now.at("analysis"));
        sim::print_summary(light_os, kept, s.schedule(), &light);
        summary = full_os.str(), light_summary = light_os.str();
        summary_only = s.schedule();
        summary_only.arena.reset();
        EXPECT_TRUE(summary_only.insts.empty());
      }
      const sim::RunResult moved = std::move(kept);
      EXPECT_EQ(sim::stats_json(moved, summary_only, p).dump(), now.dump());
      EXPECT_EQ(light.at("verdict"), now.at("analysis").at("verdict"));
      EXPECT_EQ(light_summary, summary);
      EXPECT_FALSE(light.at("engines").at("DVE").contains("wait_ns"));  // the analysis without the profile's sums
    }
}

TEST(StreamedRun, TinyAndHugeWindowsGiveTheSameRun) {
  // The stream's window only changes how far its walk runs ahead of the queues (and how many walks it makes).
  const isa::Program loop = loop_kernel(800);
  const Outcome whole = run(loop, "trn1", sim::ScheduleMode::Whole);
  for (int64_t window : {1, 3, 1 << 20}) {
    SCOPED_TRACE(window);
    expect_same(whole, run(loop, "trn1", sim::ScheduleMode::Streamed, window));
  }
  for (const char *w : {"attention", "matmul_tiled"}) {
    SCOPED_TRACE(w);
    const isa::Program p = workload(w);
    const Outcome wr = run(p, "trn3", sim::ScheduleMode::Whole);
    for (int64_t window : {1, 3, 1 << 20}) expect_same(wr, run(p, "trn3", sim::ScheduleMode::Streamed, window));
  }
}

TEST(StreamedRun, AutoStreamsTimingOnlyRunsWithoutHooks) {
  const isa::Program p = loop_kernel(64);
  sim::RunOptions o;
  o.timing_only = true;
  o.schedule = sim::ScheduleMode::Auto;
  EXPECT_TRUE(sim::Simulator(p, o).run().streamed);
  o.on_event = [](const sim::TraceEvent &, const sim::ScheduledInst &, const sim::RunResult &) {};
  EXPECT_FALSE(sim::Simulator(p, o).run().streamed);  // a per-event hook: the whole schedule
  o.on_event = nullptr;
  o.timing_only = false;
  EXPECT_FALSE(sim::Simulator(p, o).run().streamed);  // numerics: the whole schedule
}

TEST(StreamedRun, MillionsOfDynamicInstructionsHoldABoundedWindowOfEntries) {
  // 4 instructions per trip + 2 DMA triggers (Load and Save issue on SP) + the Memset: 6 * 400000 + 1 entries,
  // 4 * 400000 + 1 dynamic instructions. The stream holds at most 1.5 windows for its first walk plus one window
  // per queue detached to a walk of its own (schedule_stream.hpp): with 64 entries and 21 queues, under 21 * 96.
  const int64_t trips = 400000;
  const isa::Program p = loop_kernel(trips);
  const Outcome s = run(p, "trn1", sim::ScheduleMode::Streamed, 64);
  EXPECT_EQ(s.r.dynamic_instructions, 4 * trips + 1);
  EXPECT_GT(s.r.schedule_peak_held, 0);
  EXPECT_LE(s.r.schedule_peak_held, sim::kMaxQueues * 96);
  EXPECT_EQ(s.r.queues[1].instructions, trips);  // ACT's activations
  EXPECT_EQ(s.r.queues[3].instructions, trips);  // DVE's adds
  EXPECT_TRUE(s.r.events.size() <= sim::kCriticalPathListed);
}

// A tune candidate's shape (bench/tune_candidate.py): a load, `trips` x `per_trip` DVE adds accumulating into one
// tile, and a store after the loop of the accumulator (`store_acc`) or of the loaded tile.
isa::Program accumulate_kernel(int64_t trips, int per_trip, bool store_acc) {
  Builder b("accumulate");
  auto x = b.input("x", {128, 64}), y = b.output("y", {128, 64});
  auto t = b.sbuf("t", {128, 64}), acc = b.sbuf("acc", {128, 64});
  b.add(InstructionType::Load, {b.ap(x.all())}, {b.ap(t.all())});
  b.loop("i", 0, trips, 1, [&](builder::Aff) {
    for (int k = 0; k < per_trip; ++k)
      b.add(InstructionType::TensorTensor, {b.ap(acc.all()), b.ap(t.all())}, {b.ap(acc.all())})
          .op(isa::AluOp::add).engine(isa::Engine::DVE);
  });
  b.add(InstructionType::Save, {b.ap(store_acc ? acc.all() : t.all())}, {b.ap(y.all())});
  return b.finish();
}

TEST(StreamedRun, AStoreAfterALoopIsAskedForOnceItsProducerIsDoneSoTheProgramIsWalkedOnce) {
  // SP issues the load's trigger, then asks for its next entry, the store's trigger after the loop. Made at once,
  // it would send the walk to the end past DVE's 3,000 adds, which outgrow the window: DVE's queue would be
  // detached and walked again from the start (two walks). The store reads the accumulator the loop's last add
  // writes, so its trigger waits for DVE's 3,000th entry: SP waits for that before asking, and one walk makes
  // everything, in step with DVE. The run is the whole schedule's, bit for bit.
  const isa::Program p = accumulate_kernel(30, 100, true);
  const Outcome s = run(p, "trn1", sim::ScheduleMode::Streamed, 64);
  EXPECT_EQ(s.r.dynamic_instructions, 3002);
  EXPECT_EQ(s.r.queues[3].instructions, 3000);
  EXPECT_EQ(s.r.schedule_walks, 1);
  EXPECT_LE(s.r.schedule_peak_held, 96 + 2);
  expect_same(run(p, "trn1", sim::ScheduleMode::Whole), s);
  // Storing the loaded tile: no instruction of the loop's last trip writes what the store reads, so no wait is
  // known before the walk; the store's trigger is made at once (DVE detached, two walks), with the same run.
  const isa::Program q = accumulate_kernel(30, 100, false);
  const Outcome s2 = run(q, "trn1", sim::ScheduleMode::Streamed, 64);
  EXPECT_EQ(s2.r.schedule_walks, 2);
  expect_same(run(q, "trn1", sim::ScheduleMode::Whole), s2);
}

TEST(StreamedRun, AStoreOfATileTheLoopsLastTripWritesWaitsForThatWrite) {
  // Nested loops, each add writing column block j of the accumulator: the store of block 3 reads what the last
  // trip's last add writes (DVE's last entry: one walk); the store of block 0, what an earlier trip wrote (not
  // looked for before the walk: two walks). Both runs are the whole schedule's.
  for (int block : {3, 0}) {
    SCOPED_TRACE(block);
    Builder b("blocks");
    auto x = b.input("x", {128, 64}), y = b.output("y", {128, 16});
    auto t = b.sbuf("t", {128, 64}), acc = b.sbuf("acc", {128, 64});
    b.add(InstructionType::Load, {b.ap(x.all())}, {b.ap(t.all())});
    b.loop("i", 0, 200, 1, [&](builder::Aff) {
      b.loop("j", 0, 4, 1, [&](builder::Aff j) {
        b.add(InstructionType::TensorTensor, {b.ap(acc.tile(0, 128, j * 16, 16)), b.ap(t.tile(0, 128, j * 16, 16))},
              {b.ap(acc.tile(0, 128, j * 16, 16))})
            .op(isa::AluOp::add).engine(isa::Engine::DVE);
      });
    });
    b.add(InstructionType::Save, {b.ap(acc.tile(0, 128, block * 16, 16))}, {b.ap(y.all())});
    const isa::Program p = b.finish();
    const Outcome s = run(p, "trn1", sim::ScheduleMode::Streamed, 64);
    EXPECT_EQ(s.r.queues[3].instructions, 800);
    EXPECT_EQ(s.r.schedule_walks, block == 3 ? 1 : 2);
    expect_same(run(p, "trn1", sim::ScheduleMode::Whole), s);
  }
}

// Each error in its own test (process, under ctest): a throw from the Simulator's constructor after SystemC ran
// in the process is what the ASan build misreports (.ci/run), so the whole run, whose errors come from there, goes
// first.
std::string both(const isa::Program &p, int64_t max_instructions) {
  std::string m[2];
  int i = 0;
  for (auto mode : {sim::ScheduleMode::Whole, sim::ScheduleMode::Streamed}) {
    sim::RunOptions o;
    o.timing_only = true;
    o.schedule = mode;
    o.max_instructions = max_instructions;
    m[i++] = message_of([&] { sim::Simulator(p, o).run(); });
  }
  EXPECT_EQ(m[0], m[1]);
  return m[0];
}

TEST(StreamedRun, ADeadlockIsReportedAsTheWholeScheduleReportsIt) {
  // A semaphore wait never met.
  Builder b;
  auto t1 = b.sbuf("t1", {128, 64});
  auto i0 = b.add(InstructionType::Memset, {}, {b.ap(t1.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0)
                .engine(isa::Engine::DVE);
  i0.inst().waits.push_back(isa::SemWait{7, isa::SemWait::Mode::GeImm, 1, ""});
  const std::string m = both(b.finish(), sim::kDefaultMaxInstructions);
  EXPECT_NE(m.find("deadlock: DVE blocked at instruction 0 'I-1'"), std::string::npos) << m;
  EXPECT_NE(m.find("semaphore 7 >= 1 (is 0)"), std::string::npos) << m;
}

TEST(StreamedRun, MaxInstructionsIsReportedAsTheWholeScheduleReportsIt) {
  // 6 * 64 + 1 entries, 4 * 64 + 1 = 257 dynamic instructions.
  const std::string m = both(loop_kernel(64), 200);
  EXPECT_NE(m.find("257 dynamic instructions, more than the 200"), std::string::npos) << m;
}

TEST(StreamedRun, AnAccessPastItsTensorPartWayIsReportedAsTheWholeScheduleReportsIt) {
  // Trip 5's Load runs past its tensor: the streamed run's walk finds it part-way through the run.
  Builder b;
  auto a = b.input("a", {16, 40});
  auto t = b.sbuf("t", {16, 8});
  b.loop("i", 0, 10, 1, [&](builder::Aff i) {
    b.add(InstructionType::Load, {b.ap(a.tile(0, 16, i * 8, 8))}, {b.ap(t.all())});
  });
  const std::string m = both(b.finish(), sim::kDefaultMaxInstructions);
  EXPECT_NE(m.find("out of bounds of tensor 'a'"), std::string::npos) << m;
  EXPECT_NE(m.find("(start 40, ap"), std::string::npos) << m;  // trip 5: 5 * 8
}

namespace {
// $TMPDIR set for one scope (the critical-path records' temporary file goes there), put back after.
struct TmpdirFor {
  explicit TmpdirFor(const std::string &dir) {
    if (const char *v = std::getenv("TMPDIR")) old = v, had = true;
    ::setenv("TMPDIR", dir.c_str(), 1);
  }
  ~TmpdirFor() {
    if (had) ::setenv("TMPDIR", old.c_str(), 1);
    else ::unsetenv("TMPDIR");
  }
  std::string old;
  bool had = false;
};
} // namespace

TEST(PathLog, RecordsReadBackAsWrittenFromTheFileAndTheTail) {
  // Blocks of 4: queue 0's 10 records are 2 spilled blocks and a tail of 2, queue 5's 7 one block and a tail of 3,
  // queue 20's 3 a tail only. Spilled: (8 + 4) records of 24 bytes = 288 bytes.
  sim::core_detail::PathLog log("k.json", 4);
  const int queues[3] = {0, 5, 20};
  const int counts[3] = {10, 7, 3};
  auto make = [](int q, int64_t pos) {
    sim::core_detail::PathRecord r;
    r.issue_ns = q * 1000.0 + static_cast<double>(pos) + 0.25;
    r.seq = static_cast<uint32_t>(q * 100 + pos);
    r.row = q + static_cast<int32_t>(pos);
    r.gate_pos1 = static_cast<uint32_t>(pos);
    r.gate_queue = static_cast<uint8_t>(q);
    return r;
  };
  for (int64_t pos = 0; pos < 10; ++pos)
    for (int i = 0; i < 3; ++i)
      if (pos < counts[i]) {
        EXPECT_TRUE(log.add(queues[i], make(queues[i], pos)));
      }
  EXPECT_EQ(sizeof(sim::core_detail::PathRecord), 24u);
  EXPECT_EQ(log.spilled_bytes(), 288);
  EXPECT_EQ(log.size(0), 10);
  EXPECT_EQ(log.size(5), 7);
  EXPECT_EQ(log.size(20), 3);
  EXPECT_FALSE(std::filesystem::exists(log.file())) << log.file();  // unlinked as soon as it was made
  // Backwards, as the walk reads them, then forwards across the queues (each switch re-reads a block).
  for (int i = 0; i < 3; ++i)
    for (int64_t pos = counts[i] - 1; pos >= 0; --pos) {
      const auto &got = log.at(queues[i], pos), want = make(queues[i], pos);
      EXPECT_EQ(got.issue_ns, want.issue_ns);
      EXPECT_EQ(got.seq, want.seq);
      EXPECT_EQ(got.row, want.row);
      EXPECT_EQ(got.gate_pos1, want.gate_pos1);
      EXPECT_EQ(got.gate_queue, want.gate_queue);
    }
  for (int64_t pos = 0; pos < 10; ++pos)
    for (int i = 0; i < 3; ++i)
      if (pos < counts[i]) {
        EXPECT_EQ(log.at(queues[i], pos).seq, static_cast<uint32_t>(queues[i] * 100 + pos));
      }
}

TEST(StreamedRun, CriticalPathRecordsSpilledToDiskGiveTheSameRunAndLeaveNoFile) {
  // Blocks of 1 and 5 records: every record, or nearly, goes through the temporary file and is read back from it.
  const std::string dir = neuronsim::testing::temp_dir("tmpdir");
  const TmpdirFor tmp(dir);
  const isa::Program loop = loop_kernel(800);
  const Outcome whole = run(loop, "trn1", sim::ScheduleMode::Whole);
  for (int64_t block : {1, 5}) {
    SCOPED_TRACE(block);
    const Outcome s = run(loop, "trn1", sim::ScheduleMode::Streamed, 4096, block);
    expect_same(whole, s);
    // 4 * 800 + 1 dynamic instructions and 2 * 800 DMA triggers, 24 bytes each; block 5 leaves a partial tail on
    // some queues (at most 4 records each), and spills whole blocks of 5.
    const int64_t all = 24 * (6 * 800 + 1);
    if (block == 1) {
      EXPECT_EQ(s.r.critical_path_spilled, all);
    }
    EXPECT_LE(s.r.critical_path_spilled, all);
    EXPECT_GE(s.r.critical_path_spilled, all - 24 * 4 * sim::kMaxQueues);
    EXPECT_EQ(s.r.critical_path_spilled % (24 * block), 0);
    EXPECT_TRUE(std::filesystem::is_empty(dir));
  }
  for (const char *w : {"attention", "matmul_tiled"}) {
    SCOPED_TRACE(w);
    const isa::Program p = workload(w);
    expect_same(run(p, "trn3", sim::ScheduleMode::Whole), run(p, "trn3", sim::ScheduleMode::Streamed, 4096, 3));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(StreamedRun, ACriticalPathLongerThanItsListAndAFoldSegmentSumsAsTheWholeRunDoes) {
  // 20,000 trips: 80,001 dynamic instructions and a critical path of more than the 65,536 links core_run.cpp
  // folds at a time, of which the result keeps the last kCriticalPathListed; every stats figure is the whole run's.
  const isa::Program p = loop_kernel(20000);
  const Outcome w = run(p, "trn1", sim::ScheduleMode::Whole);
  const Outcome s = run(p, "trn1", sim::ScheduleMode::Streamed, 4096, 1000);
  ASSERT_GT(w.r.critical_path.size(), size_t(1) << 16);
  EXPECT_EQ(s.r.critical_path_length, static_cast<int64_t>(w.r.critical_path.size()));
  ASSERT_EQ(s.r.critical_path.size(), sim::kCriticalPathListed);
  EXPECT_TRUE(std::equal(s.r.critical_path.begin(), s.r.critical_path.end(),
                         w.r.critical_path.end() - static_cast<std::ptrdiff_t>(sim::kCriticalPathListed)));
  EXPECT_EQ(w.r.total_ns, s.r.total_ns);
  EXPECT_EQ(w.stats, s.stats);
  EXPECT_EQ(w.summary, s.summary);
}

TEST(StreamedRun, AMissingTmpdirIsReportedNamingTheRunAndTheDirectory) {
  const std::string dir = neuronsim::testing::temp_dir("tmpdir") + "/missing";
  const TmpdirFor tmp(dir);
  sim::RunOptions o;
  o.timing_only = true;
  o.schedule = sim::ScheduleMode::Streamed;
  o.critical_path_block = 1;
  const isa::Program p = workload("kernel1");
  const std::string m = message_of([&] { sim::Simulator(p, o).run(); });
  EXPECT_EQ(m, p.file + ": the streamed run's critical-path records: cannot create a temporary file in " + dir +
                   " ($TMPDIR): No such file or directory (set TMPDIR to a directory with room, or run with "
                   "--schedule=whole)");
}

}  // namespace test_streamed_run
