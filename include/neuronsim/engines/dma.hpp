// The DMA engines of one NeuronCore as resources (docs/timing-model.md section 2; calibration.md D1-D5):
//  - a transfer is split into descriptors, at least one per partition per contiguous run of bytes on each side;
//  - its descriptors go to the engines that serve its partitions (an engine serves 8 partitions): its piece on an
//    engine is a per-piece overhead plus its bytes at the engine's read or write rate, which no payload exceeds;
//  - its first byte follows its entry into the queue by `dma_latency_ns`, during which nothing is busy (latency,
//    not occupancy: queued transfers run back to back, D5); its piece on its k-th engine may start k x
//    `dma_engine_stagger_ns` later (D2);
//  - each engine processes the descriptors it is given one at a time, `dma_engine_descriptor_ns` each, in arrival
//    order over all queues, a stage ahead of its data movement: a piece moves once the engine has processed all
//    its descriptors, so its start does not depend on its rate (D4's throughput proportional to the bytes per row
//    below ~2.4 KiB, the NKI DMA bandwidth guide's per-packet rate of the engines; hidden in a lone transfer's
//    latency);
//  - each engine moves one descriptor at a time and holds one FIFO per DMA queue; transfers of one queue run
//    in order on an engine, and the engine serves its queues round robin at descriptor granularity ([DMA] "DMA
//    Queues": v2/v3 round robin; v4 QoS is documented and not modelled: round robin too);
//  - a transfer completes `dma_completion_ns` after its last descriptor ends.
// The ring depth (a queue holds at most `dma_ring_depth` transfers between entering and completing), HBM as a pool
// shared by the transfers in flight (engines/hbm.hpp) and the triggers on the issuing engines are applied by
// sim/core_dma.cpp and sim/schedule.cpp.
//
// The model is plain C++ with integer picosecond times, so it is deterministic and independent of SystemC's
// thread order. Round robin makes a transfer's completion depend on transfers that arrive later; the model is
// therefore committed lazily: submit() fixes every decision taken before the submission time, and projects the
// rest assuming nothing else arrives. A projection that no arrival invalidated before it comes true is final.
#pragma once

#include <array>
#include <cstdint>
#include <algorithm>
#include <initializer_list>
#include <type_traits>
#include <string>
#include <vector>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/engines/memory.hpp"
#include "neuronsim/engines/ops.hpp"

namespace neuronsim::engines {

inline constexpr int kMaxDmaEngines = 32;
inline constexpr int kMaxDmaQueueIds = 32;

// The part of a transfer one engine moves.
struct DmaPart {
  int engine = 0;
  int64_t descriptors = 0;
  int64_t desc_ps = 0;    // engine time of one descriptor: its bytes over the rate
  int64_t offset_ps = 0;  // its earliest start after the transfer's first byte: the stagger of its engine (D2)
};

// The parts of one transfer, at most one per engine, held inline: a run makes one set per DMA instruction.
class DmaParts {
public:
  DmaParts() = default;
  DmaParts(std::initializer_list<DmaPart> parts) {
    for (const auto &p : parts) push_back(p);
  }
  DmaParts(const DmaParts &o) : n_(o.n_) { std::copy(o.begin(), o.end(), begin()); }
  DmaParts &operator=(const DmaParts &o) {
    n_ = o.n_;
    std::copy(o.begin(), o.end(), begin());
    return *this;
  }
  void push_back(const DmaPart &p) { begin()[n_++] = p; }  // at most kMaxDmaEngines
  size_t size() const { return static_cast<size_t>(n_); }
  bool empty() const { return n_ == 0; }
  const DmaPart &operator[](size_t i) const { return begin()[i]; }
  DmaPart &operator[](size_t i) { return begin()[i]; }
  const DmaPart *begin() const { return reinterpret_cast<const DmaPart *>(raw_); }
  const DmaPart *end() const { return begin() + n_; }
  DmaPart *begin() { return reinterpret_cast<DmaPart *>(raw_); }
  DmaPart *end() { return begin() + n_; }

private:
  // Storage for the parts, not constructed until used (DmaPart is trivially copyable): no 1 KiB to clear per
  // transfer.
  alignas(DmaPart) unsigned char raw_[sizeof(DmaPart) * kMaxDmaEngines];
  int n_ = 0;
};
static_assert(std::is_trivially_copyable_v<DmaPart>);

// One DMA transfer as the engines see it.
struct DmaTransfer {
  int64_t bytes = 0;        // bytes written
  int64_t descriptors = 0;  // over all engines
  int64_t desc_bytes = 0;   // bytes one descriptor moves (the larger element size of the two sides)
  bool touches_hbm = false;
  bool transpose = false;
  DmaParts parts;                    // one per engine used, by engine number
  int64_t transfer_overhead_ps = 0;  // engine time with the first descriptor on each engine (the piece's own)
  int64_t latency_ps = 0;            // from entering the queue to its first byte
  int64_t descriptor_ps = 0;         // an engine's processing of one descriptor: dma_engine_descriptor_ns
  int64_t completion_ps = 0;         // from its last byte to its completion
  double stream_bytes_per_ns = 0;    // the rate its engines move it at, overheads aside: engines used x rate
};

// Decomposes a DMA-queue instruction (Load, Save, DMACopy, indirect and descriptor forms, collectives' local
// movement) into descriptors and engines: source = the first tensor operand of `ins`, destination = the first of
// `outs`, `bytes` = every output's bytes. Its HBM traffic is timed by the caller (engines/hbm.hpp).
DmaTransfer dma_transfer(const DynInst &d, const ArchParams &arch, const Memory &mem);

// A transfer's DMA time in three components (the stats' per-queue split, docs/profiling.md), each one of the
// calibrated mechanisms: its fixed latency (entering its queue to its first byte, plus its last byte to its
// completion), its per-row cost (its engines' processing of its descriptors plus each piece's own engine time,
// summed over its engines) and its transfer (its bytes at its engines' rate, engine time summed over its engines); and the rate the
// arch allows it: its engines' rate, within its core's HBM share when it touches HBM (one-core runs).
struct DmaTimeSplit {
  int64_t fixed_ps = 0, per_row_ps = 0, transfer_ps = 0;
  double allowed_bytes_per_ns = 0;
};
DmaTimeSplit dma_time_split(const DmaTransfer &t, const ArchParams &arch, bool device_hbm = false);

// What one DMA engine did over a run.
struct DmaEngineTotals {
  int64_t busy_ps = 0;
  int64_t descriptors = 0;
  int64_t transfers = 0;  // transfer parts it served
};

// A stretch of one engine's activity, for the trace: one transfer's descriptors back to back (`xfer` = its id), or
// rounds of round robin between queues (`xfer` = -1, `ids` = the transfers involved).
struct DmaSlice {
  int engine = 0;
  int64_t start_ps = 0, end_ps = 0;
  int64_t xfer = -1;
  std::vector<int64_t> ids;
};

class DmaEngines {
public:
  // Forgets everything: `engines` engines with `queues` queues each, all idle.
  void reset(int engines, int queues, bool record_slices);

  // Transfer `id` (the caller's handle, unique while in flight) enters `queue` at `now`; its piece on an engine is
  // available from the later of `now + t.latency_ps + part.offset_ps` and the engine's processing of all its
  // descriptors (the engine processes the pieces given to it in arrival order from `now` on, t.descriptor_ps per
  // descriptor). Calls must come in non-decreasing `now`. Returns when its
  // first byte moves as projected now (transfers arriving later on other queues may delay it).
  int64_t submit(int64_t id, int queue, int64_t now, const DmaTransfer &t);

  // The earliest completion among transfers in flight, as projected now (INT64_MAX when none is in flight).
  int64_t next_completion() const;
  bool idle() const { return in_flight_ == 0; }

  struct Done {
    int64_t id;
    int64_t first_start;  // first descriptor's start (== completion for a transfer with no descriptors)
    int64_t last_byte;    // last descriptor's end
    int64_t completion;   // last_byte + the completion latency
    int64_t busy_ps;      // engine time its descriptors took, over all engines
    int64_t descriptor_ps;  // its engines' processing of its descriptors, summed over its engines
  };
  // Appends the transfers that completed by `now` (completion <= now), in completion order (then id). A projected
  // completion at or before `now` is final: no transfer entering at `now` or later can take a descriptor turn
  // before it.
  void take_completed(int64_t now, std::vector<Done> &out);
  // Fixes the remaining decisions (only the activity slices need it: the totals are known at submission).
  void finish();

  const DmaEngineTotals &engine_totals(int e) const { return engines_[static_cast<size_t>(e)].totals; }
  int64_t queue_busy_ps(int q) const { return queue_busy_[static_cast<size_t>(q)]; }
  int64_t queue_descriptors(int q) const { return queue_desc_[static_cast<size_t>(q)]; }
  const std::vector<DmaSlice> &slices() const { return slices_; }
  // Hands the slices over (a long run's trace records a million of them: no copy).
  std::vector<DmaSlice> take_slices() { return std::move(slices_); }
  // Moves the slices recorded so far, except the last (a following one may still extend it), to the end of `out`
  // once more than `keep` are held: a long run's trace takes them as they come. Those moved, then the rest, are the
  // whole list in order.
  void drain_slices(std::vector<DmaSlice> &out, size_t keep);

private:
  struct Run {
    int xfer = 0;       // slot in xfers_ (reused once the transfer completes, perhaps before finish() records
                        // this run's slices: so the run keeps its transfer's id too)
    int64_t id = -1;    // the transfer's id
    int queue = 0;
    int64_t n = 0;      // descriptors left
    int64_t d = 0;      // ps per descriptor
    int64_t extra = 0;  // added to the next descriptor (the per-transfer overhead, first descriptor only)
    int64_t eligible = 0;
    bool started = false;
    int64_t end = -1;   // its last descriptor's end when the engine is planned (-1: unknown)
  };
  struct Engine {
    std::vector<Run> runs;  // arrival order; a queue's FIFO is the subsequence of its runs
    size_t head = 0;        // runs before it have retired (a planned engine's; erased before any replanning)
    bool planned = true;    // its runs from head on run back to back in order, each with its final `end`
    int only = -1;          // when planned: the queue of all its runs from head on (-1: several, or none)
    int64_t free = 0;       // end of the last descriptor picked
    int rr = -1;            // the queue served last
    DmaEngineTotals totals;
  };
  struct Xfer {
    bool used = false;
    int64_t id = 0;
    int queue = 0;
    uint32_t all_engines = 0;
    int64_t busy = 0;        // engine time of all its descriptors (independent of the interleaving)
    int64_t descriptor_ps = 0;  // its engines' processing of its descriptors, summed over its engines
    int64_t completion_ps = 0;
    int64_t no_work_at = 0;  // completion of a transfer with no descriptors
    int64_t estimate = 0;    // projected completion: the latest of `projected` over its engines
    std::array<int64_t, kMaxDmaEngines> projected{};  // per engine: projected end of its last descriptor
    std::array<int64_t, kMaxDmaEngines> first{};      // per engine: projected start of its first descriptor
  };

  template <bool Commit> void advance(Engine &e, int ei, int64_t until);
  void project(int ei);
  void refresh_estimates(const DmaParts &parts);
  void record(int ei, int64_t start, int64_t end, int64_t id);

  std::vector<Engine> engines_;
  std::vector<Xfer> xfers_;
  std::vector<int> free_slots_;
  int in_flight_ = 0;
  std::array<int64_t, kMaxDmaQueueIds> queue_busy_{}, queue_desc_{};
  std::array<int64_t, kMaxDmaEngines> processed_{};  // per engine: when it has processed the descriptors given to it
  bool record_ = false;
  std::vector<DmaSlice> slices_;
  std::vector<Run> scratch_;
  int queues_ = 1;
};

// The time a DMA instruction's trigger occupies its issuing engine (docs/timing-model.md 2.4): an HWDGE
// instruction ~600 ns on ACT or SP [DGE]; an SWDGE one the GpSimd time that builds its descriptors; prebuilt
// descriptors (dge_type None) one sequencer slot. `issuer` is the engine whose queue runs the trigger.
struct TriggerCost {
  double ns = 0.0;
  int64_t cycles = 0;
};
TriggerCost dma_trigger_cost(const isa::Inst &inst, isa::Engine issuer, const ArchParams &arch);

} // namespace neuronsim::engines
