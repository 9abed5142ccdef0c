// The state of one run on the SystemC core (sim/core.cpp runs it, sim/core_run.cpp sets it up and reads the
// result): private to sim/.
#pragma once

#include <cmath>
#include <deque>
#include <exception>
#include <memory>

#include "neuronsim/engines/dma.hpp"
#include "neuronsim/engines/hbm.hpp"
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "sim/path_log.hpp"
#include "sim/schedule_stream.hpp"

namespace neuronsim::sim::core_detail {

// Shared resources (docs/timing-model.md 3).
constexpr int kPsumBanks = 8;                           // reference neuron-arch.md 1.4: 8 banks per partition
constexpr int kPsumBankWriter = 0;                      // 8: PSUM bank b's writers serialize [walrus/perfsim]
constexpr int kDvePoolSbufPort = kPsumBankWriter + kPsumBanks;  // v2: DVE and POOL cannot access SBUF in parallel
constexpr int kActDvePsumPort = kDvePoolSbufPort + 1;   // v2: ACT and DVE cannot access PSUM in parallel
constexpr int kPsumWriterFence = kActDvePsumPort + 1;   // v2: ACT starts after the DVE/POOL PSUM writers
constexpr int kPoolBus = kPsumWriterFence + 1;          // v3+: the DVE perf-mode bus shared with POOL
constexpr int kPsumBankActDve = kPoolBus + 1;           // 8: v3+ ACT/DVE accesses collide on one PSUM bank
constexpr int kNumResources = kPsumBankActDve + kPsumBanks;

constexpr int kPeQueue = 0, kActQueue = 1, kPoolQueue = 2, kDveQueue = 3;

// A streamed run keeps the completion times of each queue's last kStreamHorizon positions: a dependency on an older
// one stops the run with an internal error (never a wrong time) naming --schedule=whole.
constexpr int64_t kStreamHorizon = int64_t(1) << 16;

inline int64_t to_ps(double ns) { return static_cast<int64_t>(ns * 1000.0 + 0.5); }

struct PendingUpdates {
  int64_t at_ps;
  const isa::Inst *inst;
  int64_t pos;  // its queue position (the sanitizer's clocks)
};

// A shared resource an instruction uses: it starts when the resource is free; if it holds it, the resource is
// busy until the instruction's occupancy ends (a wait-only use, as ACT's on the v2 PSUM-writer fence, does not).
struct ResourceUse {
  int id;
  bool hold;
};

// A request for shared resources made at one delta cycle.
struct Claim {
  int64_t seq;
  const std::vector<ResourceUse> *resources;
  int64_t occupancy_ps;
  uint64_t delta;
  bool granted = false;
  int64_t start = 0, end = 0;
  int limiting = -1;  // the resource that was free last (the wait's reason), -1 if none held it back
};

// A DMA transfer between entering its ring and its completion being published.
struct DmaInFlight {
  int64_t seq = 0;
  int64_t issue = 0;    // entered the ring (ps)
  int64_t done = -1;    // completion (after its last byte), -1 until final
  int64_t last = 0;     // its last byte (the engines' and the HBM pool's)
  int64_t first = 0;    // first descriptor's start
  int64_t busy = 0;     // DMA-engine time of its descriptors
  int64_t descriptor_ps = 0; // its engines' processing of its descriptors
  int64_t gate = -1;
  int64_t gate_at = -1; // the gate's path_at (streamed runs)
  int64_t bytes = 0, descriptors = 0;
  int64_t wait_dep = 0, wait_ring = 0, wait_sem = 0;  // ps, the wait reasons before it entered the ring
  engines::DmaTimeSplit split; // its time in fixed latency, per-row cost and transfer (the stats' DMA split)
  int hbm = -1;              // its stream on its HBM pool (Job::hbm_add), or -1
  int64_t engine_done = 0;   // its engines' completion, while it waits for its HBM stream
};

// What a queue position leaves for later readers: its completion time (dependents), the end of its occupancy or
// its ring entry (its queue's next instruction) and its dynamic instruction number (the gates).
struct PosTimes {
  int64_t finish = 0, release = 0, seq = 0;
};

// Per queue position, a window [base, end) of records, made in position order: the whole queue in a materialised
// run (reserved up front, never trimmed), the last positions in a streamed one (trim()).
template <class T> class PosRing {
public:
  void reserve(int64_t n) {
    if (n > static_cast<int64_t>(buf_.size())) grow(n);
  }
  bool has(int64_t pos) const { return pos >= base_ && pos < end_; }
  int64_t base() const { return base_; }
  T &operator[](int64_t pos) { return buf_[static_cast<size_t>(pos) & mask_]; }  // has(pos)
  const T &operator[](int64_t pos) const { return buf_[static_cast<size_t>(pos) & mask_]; }
  T &make(int64_t pos) {  // pos == end
    if (end_ - base_ >= static_cast<int64_t>(buf_.size())) grow(2 * static_cast<int64_t>(buf_.size()));
    end_ = pos + 1;
    T &t = (*this)[pos];
    t = T{};
    return t;
  }
  void trim(int64_t pos) { base_ = std::max(base_, std::min(pos, end_)); }

private:
  void grow(int64_t n) {
    size_t cap = 16;
    while (static_cast<int64_t>(cap) < n) cap *= 2;
    std::vector<T> b(cap);
    for (int64_t p = base_; p < end_; ++p) b[static_cast<size_t>(p) & (cap - 1)] = (*this)[p];
    buf_.swap(b);
    mask_ = cap - 1;
  }
  std::vector<T> buf_;
  size_t mask_ = 0;
  int64_t base_ = 0, end_ = 0;
};

struct Job {
  const Schedule *schedule = nullptr;  // a materialised run's entries
  ScheduleStream *stream = nullptr;    // a streamed run's
  std::array<int64_t, kMaxQueues> length{};  // entries per queue
  engines::Memory *memory = nullptr;
  const engines::ArchParams *arch = nullptr;
  bool timing_only = false;
  const std::function<void(const ScheduledInst &, const engines::Memory &)> *after = nullptr;  // RunOptions hook
  const std::function<void(const TraceEvent &, const ScheduledInst &, const RunResult &)> *on_event = nullptr;  // same
  const std::function<void(std::vector<engines::DmaSlice> &)> *on_slices = nullptr;  // RunOptions::on_dma_slices
  std::vector<engines::DmaSlice> slice_scratch;  // slices on their way to on_slices
  const std::function<bool()> *cancelled = nullptr;  // RunOptions hook
  const std::function<void(int64_t, int64_t, double)> *progress = nullptr;  // RunOptions hook
  int64_t polled = 0;                                // instructions issued at the polls so far
  int64_t engine_instructions = 0;                   // on the engine queues (where the polls are), for progress
  int64_t until_poll = kCancelPollInstructions;      // instructions to issue before `cancelled` is polled again
  int64_t t0 = 0;                                    // ps at the start of the run
  int64_t dve_same_engine_ps = 0;                    // dve_dependent_latency_cycles at the DVE clock, ps
  std::array<int64_t, kMaxQueues> next{};            // next queue position to issue (= instructions issued)
  // Positions whose completion time is known (engines: = next, known at issue; DMA queues: published by the DMA
  // thread, in queue order). Dependents wait on this.
  std::array<int64_t, kMaxQueues> known{};
  std::array<PosRing<PosTimes>, kMaxQueues> times;    // per queue position (PosTimes)
  std::array<int64_t, kMaxQueues> trimmed_finish{};  // a streamed run: the latest completion of the dropped times
  std::array<PosRing<DmaInFlight>, kMaxQueues> dma;   // DMA queues: per position entered in the ring
  // Made on a queue's first executed instruction: 21 fresh states (RNG state tables) per run were most of the
  // cost of a short run.
  std::array<std::unique_ptr<engines::EngineState>, kMaxQueues> state;
  std::array<int64_t, kNumSemaphores> sem{};         // the program's own semaphores (explicit sync)
  std::array<std::deque<PendingUpdates>, kMaxQueues> pending;
  std::array<int64_t, kNumResources> resource_free{};  // ps
  std::vector<Claim *> claim_batch, claim_later;  // arbitrate()'s scratch
  std::vector<Claim *> claims;                    // resource requests not yet granted
  engines::DmaEngines engines;                    // the DMA engines
  int64_t dma_target = INT64_MAX;                 // when the DMA thread next wakes by itself
  std::vector<engines::DmaEngines::Done> done_scratch;
  std::vector<std::pair<int, int64_t>> hbm_wait;  // (queue, position): its engines are done, its HBM stream not
  engines::HbmShare hbm_local;                    // a one-core run's HBM: the core's share, hbm_bytes_per_ns
  bool dve_pool_psum_writers = false;             // some DVE/POOL instruction writes PSUM (v2 ACT fence in use)
  // Per resource, whether two or more queues use it: a resource only one in-order queue uses never delays anything,
  // so claiming it (a SystemC context switch) is skipped.
  std::array<bool, kNumResources> contended{};
  std::array<bool, kMaxQueues> may_claim{};  // the queue can use a contended resource
  // TensorE: the weights loaded in the array and the previous matmul, for the LoadStationary hiding.
  const engines::Access *pe_stationary = nullptr;  // the previous matmul's stationary operand (in the schedule)
  int64_t pe_stationary_pos = INT64_MAX;           // its PE position (a streamed run keeps that entry)
  int64_t pe_end = INT64_MIN, pe_mm_ps = 0;  // the last matmul's end and occupancy
  int64_t pe_other_ps = 0;                   // PE occupancy since then by instructions that do not use the array
  int64_t pe_other_end = INT64_MIN, pe_other_run = 0;  // the last of those: its end, and the back-to-back run it ends
  int act_set = -1;  // ScalarE: the resident activation-function set (isa::act_func_set_name), -1 before any
  RunResult *result = nullptr;
  std::exception_ptr error;
  bool aborted = false;
  Device *device = nullptr;  // several cores (sim/device.hpp): collectives meet there
  int core = 0;              // this core's index on the device
  Sanitizer *sanitizer = nullptr;  // a sanitized run (RunOptions::sanitize): fed as instructions execute

  // A streamed run's folds (RunResult::streamed): the events are not kept.
  TraceEvent scratch;                   // the event being recorded
  std::deque<TraceEvent> tail;          // the last kStreamedEventTail events
  int64_t last_seq = -1;                // the first event with the latest finish so far
  int64_t last_at = -1;                 // its path_at
  std::unique_ptr<PathLog> path;        // every event's PathRecord, for the critical-path walk
  std::exception_ptr record_error;      // why recorded() failed
  const std::vector<bool> *collect = nullptr;  // a replay: keep only these events (by number), in `collected`
  std::vector<TraceEvent> collected;
  double last_finish = 0.0;

  // Queue q's entry at pos (< length[q]): from the schedule, or made by the stream (which may throw the error
  // that stopped its walk).
  const ScheduledInst &entry(int q, int64_t pos) const {
    if (schedule) return schedule->insts[static_cast<size_t>(schedule->queues[q][static_cast<size_t>(pos)])];
    return *stream->at(q, pos);
  }
  // The event about to be recorded: kept in RunResult::events, or the scratch one a streamed run folds (recorded()).
  TraceEvent &new_event() {
    if (!stream) return result->events.emplace_back();
    scratch = TraceEvent{};
    return scratch;
  }
  // `pos`: the event's queue position; `gate_at`: its gate's path_at (-1: none). False when the path log could
  // not take its record (the run stops with record_error).
  bool recorded(const TraceEvent &ev, bool trigger, int64_t pos, int64_t gate_at);
  // The HBM pool a DMA transfer's bytes pass (docs/timing-model.md 2.3): the device's, shared by its cores, in a
  // multi-core run (sim/device.hpp); the core's share of it, hbm_bytes_per_ns, shared by the core's transfers in
  // flight, in a one-core run. A stream of `bytes` from `start_ps` moving at most `cap` B/ns; returns its handle.
  bool device_hbm() const { return device && device->cores() > 1; }
  int hbm_add(int64_t now_ps, int64_t start_ps, double bytes, double cap) {
    if (device_hbm()) return device->hbm_add(core, now_ps, start_ps, bytes, cap);
    return hbm_local.add(static_cast<double>(now_ps) / 1000.0, static_cast<double>(start_ps) / 1000.0, bytes, cap);
  }
  int64_t hbm_finish_ps(int handle) {
    if (device_hbm()) return device->hbm_finish_ps(core, handle);
    return static_cast<int64_t>(std::ceil(hbm_local.finish_ns(handle) * 1000.0 - 1e-6));
  }
  void hbm_release(int handle) {
    if (device_hbm()) return device->hbm_release(core, handle);
    hbm_local.release(handle);
  }
  // Queue q's positions before pos are read no more (a streamed run frees their entries); the completion times
  // stay for kStreamHorizon positions.
  void done_with(int q, int64_t pos);
};

// The Error `e` with the source line of the instruction it names when the program's debug information gives one;
// null when there is nothing to add (sim/core.cpp).
std::exception_ptr error_with_source(const isa::Program &p, const Error &e);

// Runs the job on its core (Job::core) until the model starves (the run ended, deadlocked or was aborted).
void run_on_core(Job &j);
// The same in two halves, for a Device that starts its cores together and runs one sc_start for them all.
void load_core(Job &j);
void unload_core(const Job &j);
// sc_start() for the cores loaded.
void start_simulation();
// Under AddressSanitizer, called before an exception is thrown on the main stack after a simulation ran: see
// core.cpp. Nothing otherwise.
void clear_stack_shadow();
// Hands the DMA engines' slices still held to the job's hook (the end of the run).
void pass_last_slices(Job &j);
// Where queue q stands, for the deadlock report.
std::string describe_wait(const Job &j, int q);

} // namespace neuronsim::sim::core_detail
