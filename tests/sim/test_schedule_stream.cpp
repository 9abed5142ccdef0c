// The streamed schedule (sim/schedule_stream.hpp, issue 18 item 1): made on demand in a bounded window, its entries
// per queue are those of the whole schedule (build_schedule), whatever the window.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include "neuronsim/builder.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "sim/schedule_builder.hpp"
#include "sim/schedule_stream.hpp"

using namespace neuronsim;
using builder::Builder;
using isa::InstructionType;

namespace {

// A loop kernel with a DMA in and out per trip, dependencies across three engines (the inferred semaphore waits),
// an AllEngineBarrier, and a branch that skips a block before the loop.
isa::Program loop_kernel(int64_t trips, bool branch = true) {  // trips: a multiple of 8
  Builder b("loop_kernel");
  auto a = b.input("a", {16, 64}), o = b.output("o", {16, 64});
  auto t = b.sbuf("t", {16, 8}), u = b.sbuf("u", {16, 8}), w = b.sbuf("w", {16, 8});
  b.block("entry");
  b.add(InstructionType::Memset, {}, {b.ap(w.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0)
      .engine(isa::Engine::Pool);
  if (branch) {
    b.add(InstructionType::UnconditionalBranch, {}, {}).target("main");
    b.block("skipped");
    b.add(InstructionType::Memset, {}, {b.ap(w.all())}).memset_mode(isa::MemsetMode::Const).constant(0.0)
        .engine(isa::Engine::DVE);
    b.block("main");
  }
  b.loop("i", 0, trips / 8, 1, [&](builder::Aff) {
    b.loop("j", 0, 8, 1, [&](builder::Aff j) {
      b.add(InstructionType::Load, {b.ap(a.tile(0, 16, j * 8, 8))}, {b.ap(t.all())});
      b.add(InstructionType::Activation, {b.ap(t.all())}, {b.ap(u.all())}).act_func(isa::ActivationFunctionType::Copy);
      b.add(InstructionType::TensorTensor, {b.ap(u.all()), b.ap(w.all())}, {b.ap(t.all())}).op(isa::AluOp::add)
          .engine(isa::Engine::DVE);
      b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.tile(0, 16, j * 8, 8))});
    });
  });
  b.add(InstructionType::AllEngineBarrier, {}, {}).engine(isa::Engine::SP);
  b.add(InstructionType::Memset, {}, {b.ap(w.all())}).memset_mode(isa::MemsetMode::Const).constant(2.0)
      .engine(isa::Engine::Activation);
  return b.finish();
}

void expect_same_access(const engines::Access &x, const engines::Access &y) {
  EXPECT_EQ(x.tensor, y.tensor);
  EXPECT_EQ(x.start, y.start);
  EXPECT_EQ(x.dtype, y.dtype);
  ASSERT_EQ(x.ap.size(), y.ap.size());
  for (size_t k = 0; k < x.ap.size(); ++k) {
    EXPECT_EQ(x.ap[k].step, y.ap[k].step);
    EXPECT_EQ(x.ap[k].num, y.ap[k].num);
  }
}

// y from the whole schedule; x from a stream, without dep_seq when !flow_arrows.
void expect_same_entry(const sim::ScheduledInst &x, const sim::ScheduledInst &y, bool flow_arrows) {
  EXPECT_EQ(x.d.inst, y.d.inst);
  EXPECT_EQ(x.d.seq, y.d.seq);
  EXPECT_EQ(x.queue, y.queue);
  EXPECT_EQ(x.pos, y.pos);
  EXPECT_EQ(x.trigger, y.trigger);
  ASSERT_EQ(x.waits.size(), y.waits.size());
  for (size_t k = 0; k < x.waits.size(); ++k) {
    EXPECT_EQ(x.waits[k].queue, y.waits[k].queue);
    EXPECT_EQ(x.waits[k].count, y.waits[k].count);
  }
  if (flow_arrows)
    EXPECT_EQ(std::vector<int64_t>(x.dep_seq.begin(), x.dep_seq.end()), std::vector<int64_t>(y.dep_seq.begin(), y.dep_seq.end()));
  else
    EXPECT_TRUE(x.dep_seq.empty());
  ASSERT_EQ(x.d.ins.size(), y.d.ins.size());
  for (size_t k = 0; k < x.d.ins.size(); ++k) expect_same_access(x.d.ins[k], y.d.ins[k]);
  ASSERT_EQ(x.d.outs.size(), y.d.outs.size());
  for (size_t k = 0; k < x.d.outs.size(); ++k) expect_same_access(x.d.outs[k], y.d.outs[k]);
  EXPECT_EQ(std::vector<double>(x.d.imm.begin(), x.d.imm.end()), std::vector<double>(y.d.imm.begin(), y.d.imm.end()));
}

// Takes the stream's entries queue by queue in turn (each time the entry asked for and those already made after it),
// releasing as it goes, and
// compares each with the whole schedule's. `walks`: the walks the stream made (more than one: queues were detached).
void expect_stream_matches(const isa::Program &p, int64_t window, int &walks, bool flow_arrows = true) {
  const engines::ArchParams arch = engines::builtin_arch("trn1");
  engines::Memory mem(p, arch);
  const sim::Schedule whole = sim::build_schedule(p, mem, arch, true);
  sim::ScheduleStream stream(p, mem, arch, true, sim::kDefaultMaxInstructions, window, flow_arrows);
  std::array<int64_t, sim::kMaxQueues> next{};
  for (bool any = true; any;) {
    any = false;
    for (int q = 0; q < sim::kMaxQueues; ++q) {
      if (!stream.at(q, next[q])) continue;
      do {  // the entry asked for and those made with it
        const sim::ScheduledInst *e = stream.at(q, next[q]);
        SCOPED_TRACE("queue " + std::to_string(q) + " position " + std::to_string(next[q]));
        ASSERT_LT(next[q], static_cast<int64_t>(whole.queues[q].size()));
        expect_same_entry(*e, whole.insts[static_cast<size_t>(whole.queues[q][static_cast<size_t>(next[q])])], flow_arrows);
        stream.release(q, ++next[q]);
      } while (next[q] < stream.made(q));
      any = true;
    }
  }
  while (!stream.finished()) stream.advance();  // the summary is complete once the first walk ended
  for (int q = 0; q < sim::kMaxQueues; ++q) EXPECT_EQ(next[q], static_cast<int64_t>(whole.queues[q].size())) << q;
  const sim::Schedule &s = stream.summary();
  EXPECT_EQ(s.triggers, whole.triggers);
  EXPECT_EQ(s.explicit_sync, whole.explicit_sync);
  EXPECT_EQ(s.touches, whole.touches);
  EXPECT_EQ(s.dma_queue_names, whole.dma_queue_names);
  EXPECT_EQ(stream.held(), 0);
  walks = stream.walks();
}

} // namespace

TEST(ScheduleStream, EntriesAreThoseOfTheWholeScheduleWhateverTheWindow) {
  const isa::Program p = loop_kernel(48);
  for (int64_t window : {1, 3, 17, 1 << 20}) {
    SCOPED_TRACE("window " + std::to_string(window));
    int walks = 0;
    expect_stream_matches(p, window, walks);
    // PE has no entry: asking it sends the first walk to the end, past more than a small window of every queue.
    if (window < 100) EXPECT_GT(walks, 1);
    else EXPECT_EQ(walks, 1);
    // Without the trace's flow arrows the tracker keeps one record per queue and group: the waits are the same.
    expect_stream_matches(p, window, walks, false);
  }
}

TEST(ScheduleStream, ProgramWithExplicitSemaphoresStreamsTheSame) {
  Builder b;
  auto t1 = b.sbuf("t1", {128, 512}), t2 = b.sbuf("t2", {128, 512});
  auto i0 = b.add(InstructionType::Memset, {}, {b.ap(t1.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0)
                .engine(isa::Engine::DVE);
  i0.inst().waits.push_back(isa::SemWait{3, isa::SemWait::Mode::GeImm, 1, ""});
  auto i1 = b.add(InstructionType::Memset, {}, {b.ap(t2.all())}).memset_mode(isa::MemsetMode::Const).constant(2.0)
                .engine(isa::Engine::Pool);
  i1.inst().updates.push_back(isa::SemUpdate{3, isa::SemUpdate::Mode::Inc, 1});
  const isa::Program p = b.finish();
  int walks = 0;
  expect_stream_matches(p, 1, walks);
  EXPECT_EQ(walks, 1);  // one entry per queue: nothing outgrows the window
}

TEST(ScheduleStream, HeldEntriesStayWithinTheWindowOverAMillionInstructions) {
  // 2 + 200000 x 4 + 2 dynamic instructions (each DMA with its trigger: 1.2M entries). A consumer that takes the
  // entries as they are made, in program order, never finds more than the window held (plus the DMA transfer made
  // with the trigger that filled it). Without flow arrows the tracker's records stay within (groups x queues):
  // 5 SBUF tiles, 8 + 8 DRAM tiles, at most 3 queues (ACT, DVE, a DMA queue) reading or writing each, twice
  // (reads and writes) = 126. With them, the tile w every trip's TensorTensor reads keeps a record per trip.
  const isa::Program p = loop_kernel(200000);
  const engines::ArchParams arch = engines::builtin_arch("trn1");
  engines::Memory mem(p, arch);
  constexpr int64_t kWindow = 4096;
  for (bool flow_arrows : {false, true}) {
    SCOPED_TRACE(flow_arrows ? "flow arrows" : "no flow arrows");
    sim::ScheduleStream stream(p, mem, arch, true, sim::kDefaultMaxInstructions, kWindow, flow_arrows);
    std::array<int64_t, sim::kMaxQueues> next{};
    int64_t entries = 0, records = 0;
    while (stream.advance()) {
      for (int q = 0; q < sim::kMaxQueues; ++q)
        for (; next[q] < stream.made(q); ++entries) stream.release(q, ++next[q]);
      records = std::max(records, stream.tracker_records());
    }
    EXPECT_EQ(entries - stream.summary().triggers, 2 + 200000 * 4 + 2);
    EXPECT_EQ(stream.summary().triggers, 2 * 200000);
    EXPECT_LE(stream.peak_held(), kWindow + 1);
    EXPECT_GE(stream.peak_held(), kWindow);
    if (flow_arrows) EXPECT_GE(records, 200000);
    else EXPECT_LE(records, 126);
  }
}

TEST(ScheduleStream, AConsumerAskingFarAheadDetachesTheQueuesLeftBehind) {
  // The core's way of asking: every queue its next entry in turn. PE has none, so the first walk goes to the end
  // to find that out; the queues it passes outgrow the window and are detached, each then made by a walk of its
  // own. A buffer the first walk makes holds at most the window (+1: the entry that outgrew it), a detached queue's
  // walk at most 1.5 windows (a resumed walk makes half a window at least), so the stream never holds more than
  // 1.5 windows + 1 per queue.
  const isa::Program p = loop_kernel(24000);
  const engines::ArchParams arch = engines::builtin_arch("trn1");
  engines::Memory mem(p, arch);
  constexpr int64_t kWindow = 256;
  sim::ScheduleStream stream(p, mem, arch, true, sim::kDefaultMaxInstructions, kWindow);
  std::array<int64_t, sim::kMaxQueues> next{};
  int64_t entries = 0;
  for (bool any = true; any;) {
    any = false;
    for (int q = 0; q < sim::kMaxQueues; ++q)
      for (int k = 0; k < 64 && stream.at(q, next[q]); ++k) stream.release(q, ++next[q]), ++entries, any = true;
  }
  EXPECT_EQ(entries - stream.summary().triggers, 2 + 24000 * 4 + 2);
  EXPECT_GT(stream.walks(), 1);
  EXPECT_LE(stream.peak_held(), (kWindow * 3 / 2 + 1) * sim::kMaxQueues);
  EXPECT_EQ(stream.held(), 0);
}

TEST(ScheduleStream, WithoutControlFlowEachQueuesCountIsKnownSoNoQueueIsDetached) {
  // Instructions and constant loops only: each queue's entry count is known before the walk, so asking PE (none)
  // or a queue past its last entry is answered at once, and a consumer taking up to 64 entries of every queue in
  // turn needs one walk when the window holds what the others make meanwhile (SP makes 2 entries a trip: 64 SP
  // entries come with 32 of each other queue).
  const isa::Program p = loop_kernel(4800, false);
  const engines::ArchParams arch = engines::builtin_arch("trn1");
  engines::Memory mem(p, arch);
  const sim::Schedule whole = sim::build_schedule(p, mem, arch, true);
  sim::ScheduleStream stream(p, mem, arch, true, sim::kDefaultMaxInstructions, 256);
  ASSERT_TRUE(stream.totals());
  for (int q = 0; q < sim::kMaxQueues; ++q)
    EXPECT_EQ((*stream.totals())[static_cast<size_t>(q)], static_cast<int64_t>(whole.queues[q].size())) << q;
  // So is the rest of the summary: the core needs the touches before the first instruction.
  const sim::Schedule *known = stream.summary_before_walk();
  ASSERT_NE(known, nullptr);
  EXPECT_EQ(known->touches, whole.touches);
  EXPECT_EQ(known->dma_queue_names, whole.dma_queue_names);
  EXPECT_EQ(known->triggers, whole.triggers);
  EXPECT_EQ(known->explicit_sync, whole.explicit_sync);
  int walks = 0;
  expect_stream_matches(p, 256, walks);
  EXPECT_EQ(walks, 1);
  // With the branch the counts are not known: the same consumer detaches queues.
  sim::ScheduleStream branchy(loop_kernel(48, true), mem, arch, true, sim::kDefaultMaxInstructions, 4);
  EXPECT_FALSE(branchy.totals());
  EXPECT_EQ(branchy.summary_before_walk(), nullptr);
}

TEST(ScheduleStream, TheWorkloadsStreamTheirWholeSchedulesAndTheirCountsAreKnownBeforeTheWalk) {
  // The committed workloads (compiler output: PSUM accumulation, DMA queues by name, transposes) at trn1 and trn3:
  // entries identical, and where the structure fixes the path, counts and summary known before the walk.
  int known = 0;
  for (const char *w : {"attention", "cumsum", "kernel1", "layernorm", "matmul_blocked_free", "matmul_blocked_mnk",
                        "matmul_hoisted", "matmul_tiled", "rmsnorm", "softmax", "tensor_add", "transpose"})
    for (const char *a : {"trn1", "trn3"}) {
      SCOPED_TRACE(std::string(w) + " " + a);
      const isa::Program p = isa::read_bir_file(std::string(NEURONSIM_SOURCE_DIR) + "/workloads/" + w + "/" + w +
                                                ".bir.json");
      const engines::ArchParams arch = engines::builtin_arch(a);
      engines::Memory mem(p, arch);
      const sim::Schedule whole = sim::build_schedule(p, mem, arch, true);
      int walks = 0;
      expect_stream_matches(p, 64, walks);
      sim::ScheduleStream stream(p, mem, arch, true, sim::kDefaultMaxInstructions, 64);
      if (!stream.totals()) continue;
      ++known;
      for (int q = 0; q < sim::kMaxQueues; ++q)
        EXPECT_EQ((*stream.totals())[static_cast<size_t>(q)], static_cast<int64_t>(whole.queues[q].size())) << q;
      EXPECT_EQ(stream.summary_before_walk()->touches, whole.touches);
      EXPECT_EQ(stream.summary_before_walk()->dma_queue_names, whole.dma_queue_names);
      EXPECT_EQ(stream.summary_before_walk()->triggers, whole.triggers);
    }
  EXPECT_EQ(known, 24);  // every committed workload is instructions and constant loops
}

TEST(ScheduleStream, AnErrorPartWayThroughComesWithTheEntryAfterIt) {
  // The access of trip 5 runs past its tensor: the entries before it are made, then asking for more throws.
  Builder b;
  auto a = b.input("a", {16, 40});
  auto t = b.sbuf("t", {16, 8});
  b.loop("i", 0, 10, 1, [&](builder::Aff i) {
    b.add(InstructionType::Load, {b.ap(a.tile(0, 16, i * 8, 8))}, {b.ap(t.all())});
  });
  const isa::Program p = b.finish();
  const engines::ArchParams arch = engines::builtin_arch("trn1");
  engines::Memory mem(p, arch);
  sim::ScheduleStream stream(p, mem, arch, true, sim::kDefaultMaxInstructions, 1);
  EXPECT_NE(stream.at(4, 4), nullptr);  // SP's fifth trigger: trip 4's (bytes 32..40 of each row)
  EXPECT_THROW(stream.at(4, 5), SemanticError);
}

TEST(ScheduleStream, DestroyedPartWayItsPausedWalksEnd) {
  // Streams left with paused walks (the first one and a detached queue's) are destroyed: the walks unwind and their
  // threads end (no hang; under ASan, nothing leaks or is used after it is freed).
  const isa::Program p = loop_kernel(4000);
  const engines::ArchParams arch = engines::builtin_arch("trn1");
  engines::Memory mem(p, arch);
  for (int64_t window : {1, 64}) {
    sim::ScheduleStream stream(p, mem, arch, true, sim::kDefaultMaxInstructions, window, false);
    ASSERT_NE(stream.at(1, 10), nullptr);  // ACT's 11th entry: the first walk pauses after it
    ASSERT_NE(stream.at(4, 0), nullptr);   // SP: the walk has made it already
    EXPECT_FALSE(stream.finished());
  }
  sim::ScheduleStream detached(p, mem, arch, true, sim::kDefaultMaxInstructions, 8, false);
  EXPECT_EQ(detached.at(0, 0), nullptr);  // PE has none: the first walk runs to the end, detaching the others
  ASSERT_NE(detached.at(1, 100), nullptr);  // ACT's own walk, paused past its 101st entry
  EXPECT_EQ(detached.walks(), 2);
}

// The operand memo (sim/schedule_builder.hpp, Builder::OperandMemo, with its Tracker::Hint): an operand whose
// start is the one of its previous dynamic instance reuses that access and footprint instead of walking it again,
// and the tracker's group found for it last time while no group moved. Every entry -- accesses,
// waits, flow arrows -- must be the general walk's, for operands that are loop-invariant, that change once per
// outer trip, and that move every trip (affine in the inner variable), with dependencies that follow the moving
// addresses (t is written at i*8 and read at j*8 and i*8).
TEST(ScheduleStream, OperandMemoGivesTheGeneralWalksEntries) {
  Builder b("memo");
  auto a = b.input("a", {16, 64}), o = b.output("o", {16, 64});
  auto t = b.sbuf("t", {16, 32}), w = b.sbuf("w", {16, 8});
  b.block("entry");
  b.add(InstructionType::Memset, {}, {b.ap(w.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0)
      .engine(isa::Engine::Pool);
  b.loop("i", 0, 3, 1, [&](builder::Aff i) {
    b.loop("j", 0, 4, 1, [&](builder::Aff j) {
      b.add(InstructionType::Load, {b.ap(a.tile(0, 16, j * 8, 8))}, {b.ap(t.tile(0, 16, i * 8, 8))});
      b.add(InstructionType::TensorTensor, {b.ap(t.tile(0, 16, i * 8, 8)), b.ap(w.all())},
            {b.ap(t.tile(0, 16, j * 8, 8))}).op(isa::AluOp::add).engine(isa::Engine::DVE);
      b.add(InstructionType::Save, {b.ap(t.tile(0, 16, j * 8, 8))}, {b.ap(o.tile(0, 16, i * 8 + j * 8, 8))});
    });
  });
  const isa::Program p = b.finish();
  const engines::ArchParams arch = engines::builtin_arch("trn1");
  engines::Memory mem(p, arch);
  for (bool flow_arrows : {true, false}) {
    SCOPED_TRACE(flow_arrows ? "with flow arrows" : "without");
    sim::schedule_detail::Builder general(p, mem, arch, true, sim::kDefaultMaxInstructions);
    sim::schedule_detail::Builder memo(p, mem, arch, true, sim::kDefaultMaxInstructions);
    general.without_operand_memo();
    if (!flow_arrows) general.without_flow_arrows(), memo.without_flow_arrows();
    const sim::Schedule x = memo.build(), y = general.build();
    // Of the 12 trips: Load's out (t at i*8) repeats on 3 of every 4 (j = 1..3): 9; TensorTensor's in0 (t at i*8)
    // the same: 9; its in1 (all of w) on all 11 after the first: 11. The operands at j*8 or i*8 + j*8 move every
    // trip (j wrapping from 3 to 0 moves them too): 0. 9 + 9 + 11 = 29.
    EXPECT_EQ(memo.memo_hits(), 29);
    EXPECT_EQ(general.memo_hits(), 0);
    ASSERT_EQ(x.insts.size(), y.insts.size());
    for (size_t k = 0; k < x.insts.size(); ++k) {
      SCOPED_TRACE("entry " + std::to_string(k));
      expect_same_entry(x.insts[k], y.insts[k], flow_arrows);
    }
    EXPECT_EQ(x.touches, y.touches);
  }
}

TEST(ScheduleStream, TheWalkThreadRunsOnTheCpuOfItsConsumer) {
  // Only one of the walk's thread and its consumer runs at a time; on two cores the consumer reads every entry
  // from the other core's cache (the tuner candidate's run phase took twice as long, docs/dev/performance.md), so
  // the walk is bound to the consumer's CPU whenever it is handed the baton, and follows the consumer when it moves.
  cpu_set_t allowed;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  const isa::Program p = loop_kernel(2400);
  const engines::ArchParams arch = engines::builtin_arch("trn1");
  engines::Memory mem(p, arch);
  sim::ScheduleStream stream(p, mem, arch, true, sim::kDefaultMaxInstructions, 64);
  EXPECT_TRUE(stream.walk_thread_cpus(0).empty());  // no thread before the first entry is asked for
  ASSERT_TRUE(stream.advance());
  const std::vector<int> first = stream.walk_thread_cpus(0);
  ASSERT_EQ(first.size(), 1u);  // not every CPU the consumer may use: the one it was on
  EXPECT_TRUE(CPU_ISSET(first[0], &allowed));
  if (cpus.size() < 2) return;  // one CPU: the consumer cannot move
  const int other = first[0] == cpus[0] ? cpus[1] : cpus[0];
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(other, &one);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
  const bool more = stream.advance();
  pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);  // this test's thread as it was
  ASSERT_TRUE(more);
  EXPECT_EQ(stream.walk_thread_cpus(0), std::vector<int>{other});
}
