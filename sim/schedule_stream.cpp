// The schedule made on demand: see schedule_stream.hpp.
#include "sim/schedule_stream.hpp"

#include "sim/schedule_builder.hpp"

namespace neuronsim::sim {

namespace {
// Unwinds a paused walk when the stream is destroyed before the walk ended. Not an Error: the builder's handlers
// of bad input must let it through.
struct WalkCancelled {};
} // namespace

class ScheduleStream::Sink : public schedule_detail::EntrySink {
public:
  explicit Sink(ScheduleStream &s) : s_(s) {}
  std::pmr::memory_resource *resource() override { return &s_.pool_; }
  void take(ScheduledInst &&si) override { s_.take(std::move(si)); }

private:
  ScheduleStream &s_;
};

ScheduleStream::ScheduleStream(const isa::Program &program, const engines::Memory &mem,
                               const engines::ArchParams &arch, bool dma_triggers, int64_t max_instructions,
                               int64_t window)
    : sink_(std::make_unique<Sink>(*this)),
      builder_(std::make_unique<schedule_detail::Builder>(program, mem, arch, dma_triggers, max_instructions,
                                                          nullptr, sink_.get())),
      window_(std::max<int64_t>(1, window)) {}

ScheduleStream::~ScheduleStream() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lk(m_);
      cancel_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  for (auto &b : buf_) b.entries.clear();  // before the pool their vectors came from
}

const Schedule &ScheduleStream::summary() const { return builder_->summary(); }

int64_t ScheduleStream::made(int q) const {
  const Buffer &b = buf_[static_cast<size_t>(q)];
  return b.base + static_cast<int64_t>(b.entries.size());
}

const ScheduledInst *ScheduleStream::at(int q, int64_t pos) {
  Buffer &b = buf_[static_cast<size_t>(q)];
  for (;;) {
    if (pos < made(q)) return &b.entries[static_cast<size_t>(pos - b.base)];
    if (done_) {
      if (error_) std::rethrow_exception(error_);
      return nullptr;
    }
    resume_producer(q, pos);
  }
}

bool ScheduleStream::advance() {
  if (!done_) resume_producer(-1, 0);
  if (done_ && error_) std::rethrow_exception(error_);
  return !done_ || held_ > 0;
}

void ScheduleStream::release(int q, int64_t pos) {
  Buffer &b = buf_[static_cast<size_t>(q)];
  while (b.base < pos && !b.entries.empty()) {
    b.entries.pop_front();
    ++b.base;
    --held_;
  }
}

// Consumer side: hand the baton to the walk and wait until it hands it back.
void ScheduleStream::resume_producer(int q, int64_t pos) {
  want_q_ = q;
  want_pos_ = pos;
  std::unique_lock<std::mutex> lk(m_);
  producer_turn_ = true;
  if (!thread_.joinable()) thread_ = std::thread([this] { producer_main(); });
  else cv_.notify_all();
  cv_.wait(lk, [this] { return !producer_turn_; });
}

void ScheduleStream::producer_main() {
  {
    std::unique_lock<std::mutex> lk(m_);
    cv_.wait(lk, [this] { return producer_turn_ || cancel_; });
  }
  std::exception_ptr error;
  try {
    if (!cancel_) builder_->stream();
  } catch (const WalkCancelled &) {
  } catch (...) {
    error = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lk(m_);
    error_ = error;
    done_ = true;
    producer_turn_ = false;
  }
  cv_.notify_all();
}

// Producer side: keep the entry; pause once the window is full and the entry asked for exists.
void ScheduleStream::take(ScheduledInst &&si) {
  const int si_queue = si.queue;
  Buffer &b = buf_[static_cast<size_t>(si_queue)];
  b.entries.push_back(std::move(si));
  peak_ = std::max(peak_, ++held_);
  if (held_ < window_ || (want_q_ >= 0 && made(want_q_) <= want_pos_)) return;
  // A DMA's trigger and transfer are made together (the transfer's consumer finds both or neither).
  if (buf_[static_cast<size_t>(si_queue)].entries.back().trigger) return;
  std::unique_lock<std::mutex> lk(m_);
  producer_turn_ = false;
  cv_.notify_all();
  cv_.wait(lk, [this] { return producer_turn_ || cancel_; });
  if (cancel_) throw WalkCancelled{};
}

} // namespace neuronsim::sim
