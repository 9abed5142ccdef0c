// The schedule made on demand: see schedule_stream.hpp.
#include "sim/schedule_stream.hpp"

#include "sim/schedule_builder.hpp"

#include <pthread.h>
#include <sched.h>

namespace neuronsim::sim {

namespace {
// Unwinds a paused walk when the stream is destroyed before the walk ended. Not an Error: the builder's handlers
// of bad input must let it through.
struct WalkCancelled {};
} // namespace

// One walk over the program: its builder, the thread it runs on and the baton.
struct ScheduleStream::Walk : schedule_detail::EntrySink {
  Walk(ScheduleStream &s, int id) : stream(s), index(id) {}
  std::pmr::memory_resource *resource() override { return &stream.pool_; }
  ScheduledInst blank() override { return stream.blank(); }
  void take(ScheduledInst &&si) override { stream.take(*this, std::move(si)); }

  ScheduleStream &stream;
  int index;
  std::unique_ptr<schedule_detail::Builder> builder;
  // Per queue: whether this walk keeps its entries, and from which position (a queue's own walk starts where the
  // first walk stopped keeping it).
  std::array<bool, kMaxQueues> keeps{};
  std::array<int64_t, kMaxQueues> from{};
  int want_q = -1;  // the entry asked for (queue -1: any, once the window is full)
  int64_t want_pos = 0;
  int64_t held = 0;  // entries of the queues it makes, not released
  int64_t made_since_resume = 0;  // entries kept since the consumer last handed it the baton

  std::mutex m;
  std::condition_variable cv;
  bool turn = false, done = false, cancel = false;
  std::exception_ptr error;
  std::thread thread;
  int cpu = -1;  // the CPU the walk thread is bound to (the consumer's when it last resumed it)

  void main() {
    {
      std::unique_lock<std::mutex> lk(m);
      cv.wait(lk, [this] { return turn || cancel; });
    }
    std::exception_ptr e;
    try {
      if (!cancel) builder->stream();
    } catch (const WalkCancelled &) {
    } catch (...) {
      e = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lk(m);
      error = e;
      done = true;
      turn = false;
    }
    cv.notify_all();
  }
};

ScheduleStream::ScheduleStream(const isa::Program &program, const engines::Memory &mem,
                               const engines::ArchParams &arch, bool dma_triggers, int64_t max_instructions,
                               int64_t window, bool flow_arrows)
    : program_(program), mem_(mem), arch_(arch), dma_triggers_(dma_triggers), flow_arrows_(flow_arrows),
      max_instructions_(max_instructions), window_(std::max<int64_t>(1, window)) {
  auto w = std::make_unique<Walk>(*this, 0);
  w->builder = std::make_unique<schedule_detail::Builder>(program, mem, arch, dma_triggers, max_instructions,
                                                          nullptr, w.get());
  if (!flow_arrows_) w->builder->without_flow_arrows();
  w->keeps.fill(true);
  walks_.push_back(std::move(w));
  schedule_detail::Builder counter(program, mem, arch, dma_triggers, max_instructions);
  std::array<int64_t, kMaxQueues> totals{};
  if (counter.queue_totals(totals)) {
    totals_ = totals;
    known_ = counter.summary();
    last_waits_ = counter.last_entry_waits(totals);
  }
}

ScheduleStream::~ScheduleStream() {
  for (auto &w : walks_) {
    if (!w->thread.joinable()) continue;
    {
      std::lock_guard<std::mutex> lk(w->m);
      w->cancel = true;
    }
    w->cv.notify_all();
    w->thread.join();
  }
  for (auto &b : buf_) b.entries.clear();  // before the pool their vectors came from
  spare_.clear();
}

const Schedule &ScheduleStream::summary() const { return walks_.front()->builder->summary(); }
int64_t ScheduleStream::tracker_records() const { return walks_.front()->builder->tracker_records(); }
bool ScheduleStream::finished() const { return walks_.front()->done; }

int64_t ScheduleStream::made(int q) const {
  const Buffer &b = buf_[static_cast<size_t>(q)];
  return b.base + static_cast<int64_t>(b.entries.size());
}

void ScheduleStream::rethrow_if_failed(const Walk &w) const {
  if (w.done && w.error) std::rethrow_exception(w.error);
}

// The walk that makes queue q's entries; a detached queue's own walk is set up on first use.
ScheduleStream::Walk &ScheduleStream::walk_for(int q) {
  Buffer &b = buf_[static_cast<size_t>(q)];
  if (b.walk >= 0) return *walks_[static_cast<size_t>(b.walk)];
  auto w = std::make_unique<Walk>(*this, static_cast<int>(walks_.size()));
  w->builder = std::make_unique<schedule_detail::Builder>(program_, mem_, arch_, dma_triggers_, max_instructions_,
                                                          nullptr, w.get());
  if (!flow_arrows_) w->builder->without_flow_arrows();
  w->keeps[static_cast<size_t>(q)] = true;
  w->from[static_cast<size_t>(q)] = made(q);
  w->held = static_cast<int64_t>(b.entries.size());
  b.walk = w->index;
  walks_.push_back(std::move(w));
  return *walks_.back();
}

const ScheduledInst *ScheduleStream::at(int q, int64_t pos) {
  Buffer &b = buf_[static_cast<size_t>(q)];
  for (;;) {
    if (pos < made(q)) return &b.entries[static_cast<size_t>(pos - b.base)];
    if (totals_ && pos >= (*totals_)[static_cast<size_t>(q)]) return nullptr;
    Walk &w = walk_for(q);
    if (w.done) {
      rethrow_if_failed(w);
      return nullptr;
    }
    resume(w, q, pos);
  }
}

bool ScheduleStream::advance() {
  Walk &w = *walks_.front();
  if (!w.done) resume(w, -1, 0);
  rethrow_if_failed(w);
  return !w.done || held_ > 0;
}

void ScheduleStream::release(int q, int64_t pos) {
  Buffer &b = buf_[static_cast<size_t>(q)];
  Walk *w = b.walk >= 0 ? walks_[static_cast<size_t>(b.walk)].get() : nullptr;
  while (b.base < pos && !b.entries.empty()) {
    if (static_cast<int64_t>(spare_.size()) < window_) spare_.push_back(std::move(b.entries.front()));
    b.entries.pop_front();
    ++b.base;
    --held_;
    if (w) --w->held;
  }
}

// A released entry emptied, its vectors' memory kept (allocating and freeing five small vectors per entry was a
// tenth of a streamed run); a new one when there is none. Every field is reset to ScheduledInst's default.
ScheduledInst ScheduleStream::blank() {
  if (spare_.empty()) return ScheduledInst(&pool_);
  ScheduledInst e = std::move(spare_.back());
  spare_.pop_back();
  e.d.inst = nullptr;
  e.d.ins.clear();
  e.d.outs.clear();
  e.d.imm.clear();
  e.d.seq = 0;
  e.queue = 0;
  e.trigger = false;
  e.pos = 0;
  e.waits.clear();
  e.dep_seq.clear();
  return e;
}

// The walk thread runs where the consumer runs. Only one of the two runs at a time, so nothing is lost, and the
// entries the walk makes are read by the consumer from the same core's cache. Left to the scheduler, the walk thread
// of a process often stayed on the other core of the 2-core EPYC the suite runs on, and the run phase of bench/
// tune_candidate.py's candidate then took 1.06-1.30 s instead of 0.44-0.56 s (the walk thread bound to the other
// core on purpose, against the same core; docs/dev/performance.md). Rebound only when the consumer has moved; if
// binding fails (a CPU set the process may not use), the thread stays where the scheduler puts it.
void ScheduleStream::follow_consumer_cpu(Walk &w) {
  const int cpu = sched_getcpu();
  if (cpu < 0 || cpu == w.cpu || cpu >= CPU_SETSIZE) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(w.thread.native_handle(), sizeof set, &set) == 0) w.cpu = cpu;
}

std::vector<int> ScheduleStream::walk_thread_cpus(int walk) const {
  std::vector<int> cpus;
  const Walk &w = *walks_.at(static_cast<size_t>(walk));
  if (!w.thread.joinable()) return cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(const_cast<std::thread &>(w.thread).native_handle(), sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// The consumer's side: hand walk w the baton and wait until it hands it back.
void ScheduleStream::resume(Walk &w, int q, int64_t pos) {
  w.want_q = q;
  w.want_pos = pos;
  w.made_since_resume = 0;
  std::unique_lock<std::mutex> lk(w.m);
  w.turn = true;
  if (!w.thread.joinable()) w.thread = std::thread([&w] { w.main(); });
  follow_consumer_cpu(w);
  w.cv.notify_all();
  w.cv.wait(lk, [&w] { return !w.turn; });
}

// A walk's side: keep the entry (or drop it: a queue this walk does not make), detach a queue that outgrew the
// window, and pause once the window is full and the entry asked for exists.
void ScheduleStream::take(Walk &w, ScheduledInst &&si) {
  const size_t q = static_cast<size_t>(si.queue);
  if (!w.keeps[q] || si.pos < w.from[q]) {  // dropped: its vectors serve the next entry (blank)
    if (static_cast<int64_t>(spare_.size()) < window_) spare_.push_back(std::move(si));
    return;
  }
  Buffer &b = buf_[q];
  b.entries.push_back(std::move(si));
  ++w.held;
  peak_ = std::max(peak_, ++held_);
  if (static_cast<int>(q) != w.want_q && static_cast<int64_t>(b.entries.size()) > window_ && w.index == 0 &&
      walks_.front()->keeps[q]) {
    w.keeps[q] = false;  // detached: its own walk takes over from made(q) when it is asked for more
    w.held -= static_cast<int64_t>(b.entries.size());
    b.walk = -1;
  }
  ++w.made_since_resume;
  // Pausing costs two thread switches (a scheduler time slice on a loaded machine): once resumed, a walk makes at
  // least half a window before it pauses again, so a consumer that takes a few entries at a time does not pay a
  // switch for each few. A walk thus holds at most 1.5 windows (its detached queues' buffers aside).
  if (w.held < window_ || w.made_since_resume < window_ / 2 || (w.want_q >= 0 && made(w.want_q) <= w.want_pos))
    return;
  std::unique_lock<std::mutex> lk(w.m);
  w.turn = false;
  w.cv.notify_all();
  w.cv.wait(lk, [&w] { return w.turn || w.cancel; });
  if (w.cancel) throw WalkCancelled{};
}

} // namespace neuronsim::sim
