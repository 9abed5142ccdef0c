// engines::DmaEngines against a brute-force oracle: the model commits lazily and takes stretches of picks in one
// step (one available queue until the next becomes available, whole rounds of round robin); the oracle replays
// the same rule one descriptor at a time, knowing every submission in advance. Both must agree on every
// transfer's first descriptor and completion, for random transfers on random queues and engines. This is the
// scalar-oracle pattern of the ALU tests (DESIGN.md 4), for the DMA scheduler.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "neuronsim/engines/dma.hpp"

using namespace neuronsim;
using engines::DmaEngines;
using engines::DmaPart;
using engines::DmaTransfer;

namespace {

struct Sub {
  int64_t id, now;
  int queue;
  DmaTransfer t;
};

struct Times {
  int64_t first = INT64_MAX, end = 0;
};

// The rule of docs/timing-model.md 2.1, one descriptor at a time: an engine processes the descriptors of the pieces
// given to it in submission order (descriptor_ps each, from the submission on); a piece on an engine is available
// from the later of its submission + latency + the piece's offset and the processing of its last descriptor (each
// descriptor's processing checked in turn here); a free engine picks, among the queues whose
// head run is available (submitted by now, eligible by now), the next one after the queue it served last; a
// transfer completes completion_ps after its last descriptor.
std::map<int64_t, Times> oracle(const std::vector<Sub> &subs, int engines, int queues) {
  struct Run {
    int64_t id, submit, eligible, n, d, extra;
    int queue;
  };
  std::map<int64_t, Times> out;
  std::map<std::pair<int64_t, int>, int64_t> ready;  // per (transfer id, engine): when its piece is available
  std::vector<int64_t> processed(static_cast<size_t>(engines), 0);
  for (const auto &s : subs) {
    for (const auto &p : s.t.parts) {
      int64_t &f = processed[static_cast<size_t>(p.engine)];
      const int64_t start = std::max(f, s.now);
      f = start + p.descriptors * s.t.descriptor_ps;
      // The piece waits for every one of its descriptors, descriptor k being processed at start + (k + 1) x
      // descriptor_ps, whatever its bytes take to move.
      int64_t at = s.now + s.t.latency_ps + p.offset_ps;
      for (int64_t k = 0; k < p.descriptors; ++k) at = std::max(at, start + (k + 1) * s.t.descriptor_ps);
      ready[{s.id, p.engine}] = at;
    }
    const int64_t none = s.now + s.t.latency_ps + s.t.completion_ps;
    if (s.t.parts.empty()) out[s.id] = Times{none, none};
  }
  for (int e = 0; e < engines; ++e) {
    std::vector<Run> runs;  // submission order
    for (const auto &s : subs)
      for (const auto &p : s.t.parts)
        if (p.engine == e)
          runs.push_back({s.id, s.now, ready.at({s.id, e}), p.descriptors,
                          p.desc_ps, s.t.transfer_overhead_ps, s.queue});
    int64_t t = 0;
    int rr = -1;
    for (;;) {
      // Heads: the first unfinished run of each queue, among the runs submitted by t.
      std::vector<int> head(static_cast<size_t>(queues), -1);
      bool any = false;
      int64_t next_event = INT64_MAX;
      for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
        Run &r = runs[static_cast<size_t>(i)];
        if (r.n == 0) continue;
        any = true;
        if (r.submit > t) {
          next_event = std::min(next_event, r.submit);
          continue;
        }
        if (head[static_cast<size_t>(r.queue)] < 0) head[static_cast<size_t>(r.queue)] = i;
      }
      if (!any) break;
      int pick = -1;
      for (int k = 1; k <= queues && pick < 0; ++k) {
        const int q = (rr + k + queues) % queues;
        const int h = head[static_cast<size_t>(q)];
        if (h >= 0 && runs[static_cast<size_t>(h)].eligible <= t) pick = h;
      }
      if (pick < 0) {
        for (int q = 0; q < queues; ++q)
          if (head[static_cast<size_t>(q)] >= 0) next_event = std::min(next_event, runs[static_cast<size_t>(head[static_cast<size_t>(q)])].eligible);
        t = next_event;
        continue;
      }
      Run &r = runs[static_cast<size_t>(pick)];
      Times &tm = out[r.id];
      tm.first = std::min(tm.first, t);
      t += r.d + r.extra;
      r.extra = 0;
      --r.n;
      rr = r.queue;
      if (r.n == 0) tm.end = std::max(tm.end, t);
    }
  }
  for (const auto &s : subs)
    if (!s.t.parts.empty()) out[s.id].end += s.t.completion_ps;
  return out;
}

} // namespace

TEST(DmaEngines, LazyRoundRobinAgreesWithADescriptorByDescriptorOracle) {
  std::mt19937_64 rng(0xd3a);
  for (int trial = 0; trial < 300; ++trial) {
    const int engines = 1 + static_cast<int>(rng() % 4), queues = 1 + static_cast<int>(rng() % 4);
    std::vector<Sub> subs;
    int64_t now = 0;
    const int n = 1 + static_cast<int>(rng() % 24);
    for (int i = 0; i < n; ++i) {
      now += static_cast<int64_t>(rng() % 60);
      Sub s{i, now, static_cast<int>(rng() % static_cast<uint64_t>(queues)), {}};
      s.t.latency_ps = static_cast<int64_t>(rng() % 80);
      s.t.transfer_overhead_ps = static_cast<int64_t>(rng() % 30);
      s.t.descriptor_ps = static_cast<int64_t>(rng() % 20);
      s.t.completion_ps = static_cast<int64_t>(rng() % 5);
      const int64_t d = 1 + static_cast<int64_t>(rng() % 15), stagger = static_cast<int64_t>(rng() % 6);
      int k = 0;
      for (int e = 0; e < engines; ++e)
        if (rng() % 2 == 0) s.t.parts.push_back(DmaPart{e, 1 + static_cast<int64_t>(rng() % 12), d, k++ * stagger});
      subs.push_back(s);
    }
    DmaEngines m;
    m.reset(engines, queues, false);
    std::vector<DmaEngines::Done> done;
    for (const auto &s : subs) {
      m.take_completed(s.now - 1, done);  // what was complete before this submission
      m.submit(s.id, s.queue, s.now, s.t);
    }
    m.take_completed(INT64_MAX, done);
    const auto want = oracle(subs, engines, queues);
    ASSERT_EQ(done.size(), subs.size()) << "trial " << trial;
    for (const auto &d : done) {
      const Times &w = want.at(d.id);
      EXPECT_EQ(d.first_start, w.first) << "trial " << trial << " transfer " << d.id;
      EXPECT_EQ(d.completion, w.end) << "trial " << trial << " transfer " << d.id;
    }
  }
}

TEST(DmaEngines, BusyTimesAreEveryDescriptorOnce) {
  // Two transfers on two queues sharing engine 0: the engine's busy time is the sum of both transfers' descriptor
  // times, whatever the interleaving; each queue's share is its own transfer's.
  DmaEngines m;
  m.reset(2, 2, true);
  DmaTransfer a, b;
  a.transfer_overhead_ps = 10;
  a.parts = {DmaPart{0, 4, 7}};
  b.transfer_overhead_ps = 10;
  b.parts = {DmaPart{0, 3, 5}, DmaPart{1, 2, 5}};
  m.submit(1, 0, 0, a);
  m.submit(2, 1, 0, b);
  std::vector<DmaEngines::Done> done;
  m.take_completed(INT64_MAX, done);
  m.finish();
  EXPECT_EQ(m.engine_totals(0).busy_ps, (10 + 4 * 7) + (10 + 3 * 5));
  EXPECT_EQ(m.engine_totals(1).busy_ps, 10 + 2 * 5);
  EXPECT_EQ(m.queue_busy_ps(0), 10 + 4 * 7);
  EXPECT_EQ(m.queue_busy_ps(1), (10 + 3 * 5) + (10 + 2 * 5));
  int64_t sliced = 0;
  for (const auto &s : m.slices()) sliced += s.end_ps - s.start_ps;
  EXPECT_EQ(sliced, m.engine_totals(0).busy_ps + m.engine_totals(1).busy_ps);
}

TEST(DmaEngines, SlicesNameTheirTransferAfterItsSlotIsReused) {
  // Transfer 1 runs on engines 0 and 1 and completes (its slot freed); transfer 2, submitted later on engine 0 only,
  // takes the freed slot. Engine 1 commits transfer 1's picks only at finish(), after the reuse: its slice must
  // still name transfer 1. Times: transfer 1 = 10 + 2 x 5 = 20 ps on each engine, [0, 20); transfer 2 at 100 ps,
  // [100, 120) on engine 0.
  DmaEngines m;
  m.reset(2, 1, true);
  DmaTransfer a, b;
  a.transfer_overhead_ps = 10;
  a.parts = {DmaPart{0, 2, 5}, DmaPart{1, 2, 5}};
  b.transfer_overhead_ps = 10;
  b.parts = {DmaPart{0, 2, 5}};
  m.submit(1, 0, 0, a);
  std::vector<DmaEngines::Done> done;
  m.take_completed(50, done);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].id, 1);
  EXPECT_EQ(done[0].completion, 20);
  m.submit(2, 0, 100, b);
  m.take_completed(INT64_MAX, done);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[1].id, 2);
  EXPECT_EQ(done[1].first_start, 100);
  EXPECT_EQ(done[1].completion, 120);
  m.finish();
  std::map<std::pair<int, int64_t>, int64_t> by_engine_start;  // (engine, start) -> transfer id
  for (const auto &s : m.slices()) by_engine_start[{s.engine, s.start_ps}] = s.xfer;
  EXPECT_EQ((by_engine_start[{0, 0}]), 1);
  EXPECT_EQ((by_engine_start[{1, 0}]), 1);
  EXPECT_EQ((by_engine_start[{0, 100}]), 2);
  EXPECT_EQ(by_engine_start.size(), 3u);
}

TEST(DmaEngines, APieceStartsOnceItsDescriptorsAreProcessedWhateverItsRate) {
  // docs/timing-model.md 2.1: a piece moves once its engine has processed all its descriptors, so a faster rate
  // never starts it later. Transfer 1 (queue 0): 4 descriptors, processed 50 ps each from 0 on, so its piece
  // starts at 200 and moves 4 x d. Transfer 2 (queue 1, entered at 0 too): 1 descriptor of 5 ps, processed after
  // transfer 1's, by 250; the engine turns to it at its next descriptor boundary from then on (round robin). d = 20:
  // transfer 1's descriptors at 200, 220, 240, then transfer 2's [260, 265), transfer 1's last [265, 285); d = 10:
  // transfer 1 [200, 240), transfer 2 [250, 255). (Planned so that only its last descriptor followed its
  // processing, transfer 1 would start at 200 - 3d: later at the faster rate.)
  struct Want {
    int64_t d, end1, start2;
  };
  for (const Want w : {Want{20, 285, 260}, Want{10, 240, 250}}) {
    const int64_t d = w.d;
    DmaEngines m;
    m.reset(1, 2, false);
    DmaTransfer a, b;
    a.descriptor_ps = b.descriptor_ps = 50;
    a.parts = {DmaPart{0, 4, d}};
    b.parts = {DmaPart{0, 1, 5}};
    m.submit(1, 0, 0, a);
    m.submit(2, 1, 0, b);
    std::vector<DmaEngines::Done> done;
    m.take_completed(INT64_MAX, done);
    ASSERT_EQ(done.size(), 2u);
    std::map<int64_t, DmaEngines::Done> by_id;
    for (const auto &x : done) by_id.emplace(x.id, x);
    EXPECT_EQ(by_id.at(1).first_start, 200) << d;
    EXPECT_EQ(by_id.at(1).completion, w.end1) << d;
    EXPECT_EQ(by_id.at(2).first_start, w.start2) << d;
    EXPECT_EQ(by_id.at(2).completion, w.start2 + 5) << d;
  }
}
