// A schedule made on demand (issue 18, item 1): the builder's walk (sim/schedule*.cpp) runs as a coroutine that
// hands each entry to per-queue buffers and pauses once the buffers hold `window` entries and the entry asked for
// exists, so memory is the static program plus a window instead of one entry per dynamic instruction. The entries,
// and their order per queue, are exactly those of build_schedule. Private to sim/.
//
// The walk is recursive (regions, calls, branches, DMA blocks), so it runs on its own thread used as a coroutine:
// only one of the two sides runs at a time (a baton passed under a mutex), so neither the builder nor the buffers
// need any other synchronisation, and the results do not depend on thread timing.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <thread>

#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

namespace schedule_detail {
class Builder;
}

class ScheduleStream {
public:
  ScheduleStream(const isa::Program &program, const engines::Memory &mem, const engines::ArchParams &arch,
                 bool dma_triggers, int64_t max_instructions, int64_t window);
  ~ScheduleStream();
  ScheduleStream(const ScheduleStream &) = delete;
  ScheduleStream &operator=(const ScheduleStream &) = delete;

  // Queue q's entry at position pos, made if need be; null when the walk ended without one. pos must not be below
  // a position released. Rethrows the error that stopped the walk (as build_schedule throws it) when the entry
  // would come after it.
  const ScheduledInst *at(int q, int64_t pos);
  // Makes entries (at least one, until the window is full) without asking for a particular one; false once the walk
  // has ended. Rethrows the walk's error.
  bool advance();
  // Queue q's entries before pos are not asked for again: they are freed.
  void release(int q, int64_t pos);
  // Everything the schedule records besides its entries (Schedule::insts and queues stay empty), as far as the
  // walk has gone: complete once finished().
  const Schedule &summary() const;
  bool finished() const { return done_; }
  // Entries made and not released, now and at most over the stream's life (the window's bound, for tests).
  int64_t held() const { return held_; }
  int64_t peak_held() const { return peak_; }
  // Entries made so far on queue q.
  int64_t made(int q) const;

private:
  class Sink;
  struct Buffer {
    int64_t base = 0;  // position of entries.front()
    std::deque<ScheduledInst> entries;
  };
  void take(ScheduledInst &&si);  // producer side
  void resume_producer(int q, int64_t pos);
  void producer_main();

  std::pmr::unsynchronized_pool_resource pool_;  // the entries' small vectors (one side uses it at a time)
  std::array<Buffer, kMaxQueues> buf_;
  std::unique_ptr<Sink> sink_;
  std::unique_ptr<schedule_detail::Builder> builder_;
  int64_t window_;
  int64_t held_ = 0, peak_ = 0;
  int want_q_ = -1;       // the entry asked for (queue -1: any, once the window is full)
  int64_t want_pos_ = 0;

  std::mutex m_;
  std::condition_variable cv_;
  bool producer_turn_ = false, done_ = false, cancel_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

} // namespace neuronsim::sim
