// A schedule made on demand (issue 18, item 1): the builder's walk (sim/schedule*.cpp) runs as a coroutine that
// hands each entry to per-queue buffers and pauses once the buffers hold `window` entries (at most 1.5 windows:
// a resumed walk makes half a window at least) and the entry asked for exists, so memory is the static program plus a window instead of one entry per dynamic instruction. The entries,
// and their order per queue, are exactly those of build_schedule. Private to sim/.
//
// The walk is recursive (regions, calls, branches, DMA blocks), so it runs on its own thread used as a coroutine:
// only one side runs at a time (a baton passed under a mutex), so neither the builder nor the buffers need any
// other synchronisation, and nothing depends on thread timing. The walk thread is bound to the CPU its consumer is on
// when it is handed the baton (follow_consumer_cpu: on another core the run phase took twice as long).
//
// Consumers do not ask in program order: the core's queue threads each look at their next entry as soon as the
// previous one issued, and a queue's next entry may lie far ahead (a loop's Save after the loop is asked for when
// the run starts). Making it means walking past everything in between; a queue whose buffer then outgrows the
// window is detached: that walk drops its entries from then on, and the queue gets a walk of its own, which
// repeats the walk from the start keeping only that queue's later entries (the walk is deterministic, so they are
// the same). A queue asked past its last entry would send the walk to the end too: when the program's structure
// fixes its path (instructions and constant loops), each queue's entry count is known before the walk and such
// a question is answered at once, and a queue's last entry with a wait known before the walk (certain_wait: a
// store's trigger after a loop) is asked for only once that wait is met, when the walk has come near it for the
// other queues. Memory stays bounded by the window per queue; each detached queue costs one more walk. Without flow
// arrows (no trace) the walks' footprint trackers are bounded too (Tracker's latest_per_queue).
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <thread>

#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

class ScheduleStream {
public:
  ScheduleStream(const isa::Program &program, const engines::Memory &mem, const engines::ArchParams &arch,
                 bool dma_triggers, int64_t max_instructions, int64_t window, bool flow_arrows = true);
  ~ScheduleStream();
  ScheduleStream(const ScheduleStream &) = delete;
  ScheduleStream &operator=(const ScheduleStream &) = delete;

  // Queue q's entry at position pos, made if need be; null when the walk ended without one. pos must not be below
  // a position released. Rethrows the error that stopped the walk (as build_schedule throws it) when the entry
  // would come after it.
  const ScheduledInst *at(int q, int64_t pos);
  // Makes entries (at least one, until the window is full) without asking for a particular one; false once the
  // first walk has ended and every entry it kept was released. Rethrows the walk's error.
  bool advance();
  // Queue q's entries before pos are not asked for again: they are freed.
  void release(int q, int64_t pos);
  // Everything the schedule records besides its entries (Schedule::insts and queues stay empty), as far as the
  // first walk has gone: complete once finished().
  const Schedule &summary() const;
  bool finished() const;
  // Entries made and not released, now and at most over the stream's life (the window's bound, for tests).
  int64_t held() const { return held_; }
  int64_t peak_held() const { return peak_; }
  // Entries of queue q made so far (the position after the last one buffered).
  int64_t made(int q) const;
  // Records held by the first walk's footprint tracker (tests: bounded without flow arrows).
  int64_t tracker_records() const;
  // How many entries each queue gets, when that is known before the walk (Builder::queue_totals): then a
  // consumer asking past a queue's last entry is answered without walking to the end.
  const std::optional<std::array<int64_t, kMaxQueues>> &totals() const { return totals_; }
  // With totals(): what summary() will hold once the walk ends, known now (the core needs Schedule::touches before
  // the first instruction); null without.
  const Schedule *summary_before_walk() const { return known_ ? &*known_ : nullptr; }
  // Walks started (1 + the queues detached), for tests.
  int walks() const { return static_cast<int>(walks_.size()); }
  // The CPUs walk `walk`'s thread may run on (empty before it started), for tests: the one its consumer was on
  // when it last handed the walk the baton.
  std::vector<int> walk_thread_cpus(int walk) const;
  // A wait queue q's entry at pos is sure to have, known without walking (Builder::last_entry_waits: a queue's
  // last entry, e.g. a store's trigger after a loop), while that entry is not made yet; null otherwise. A consumer
  // that would block on the entry's waits anyway waits for this one first and asks for the entry after: the walk
  // has then come near it for the other queues, instead of running to it at once and detaching the queues it
  // passes (a second walk each).
  const QueueWait *certain_wait(int q, int64_t pos) const {
    const auto &w = last_waits_[static_cast<size_t>(q)];
    return w && totals_ && pos == (*totals_)[static_cast<size_t>(q)] - 1 && pos >= made(q) ? &*w : nullptr;
  }

private:
  struct Walk;
  static void follow_consumer_cpu(Walk &w);
  struct Buffer {
    int64_t base = 0;  // position of entries.front()
    std::deque<ScheduledInst> entries;
    int walk = 0;      // the walk that makes its entries
  };
  void take(Walk &w, ScheduledInst &&si);  // a walk's side
  ScheduledInst blank();                   // a walk's side: an empty entry, recycled when one was released
  void resume(Walk &w, int q, int64_t pos);
  Walk &walk_for(int q);
  void rethrow_if_failed(const Walk &w) const;

  const isa::Program &program_;
  const engines::Memory &mem_;
  const engines::ArchParams &arch_;
  bool dma_triggers_;
  bool flow_arrows_;  // entries carry dep_seq (Builder::without_flow_arrows when not)
  int64_t max_instructions_;
  std::pmr::unsynchronized_pool_resource pool_;  // the entries' small vectors (one side uses it at a time)
  std::array<Buffer, kMaxQueues> buf_;
  // Released entries, emptied by blank() and reused (their vectors keep their memory); at most a window of them.
  std::vector<ScheduledInst> spare_;
  std::vector<std::unique_ptr<Walk>> walks_;
  std::optional<std::array<int64_t, kMaxQueues>> totals_;
  std::optional<Schedule> known_;  // the summary found with totals_
  std::array<std::optional<QueueWait>, kMaxQueues> last_waits_{};  // with totals_: certain_wait's
  int64_t window_;
  int64_t held_ = 0, peak_ = 0;
};

} // namespace neuronsim::sim
