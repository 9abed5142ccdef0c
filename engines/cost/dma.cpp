// The DMA engine model (neuronsim/engines/dma.hpp; docs/timing-model.md section 2 derives its parameters).
#include "neuronsim/engines/dma.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "neuronsim/engines/cost.hpp"

namespace neuronsim::engines {

namespace {

// Rounded to the nearest ps, halves away from zero (std::llround's rounding, without its library call: a run
// converts a dozen times per DMA transfer).
int64_t to_ps(double ns) {
  const double ps = ns * 1000.0;
  return ps >= 0 ? static_cast<int64_t>(ps + 0.5) : static_cast<int64_t>(ps - 0.5);
}
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

const Access *first_tensor(const std::pmr::vector<Access> &v) {
  for (const auto &a : v)
    if (a.tensor >= 0) return &a;
  return nullptr;
}

// The contiguous run, in elements, of an access within one partition row: its free dimensions merged from the
// innermost while each is dense over the ones inside it. An innermost step other than 1 gives runs of 1.
int64_t run_elements(const Access &a) {
  int64_t run = 1;
  for (size_t i = a.ap.size(); i-- > 1;) {
    const isa::ApDim &dim = a.ap[i];
    if (dim.num == 1) continue;
    if (dim.step != run) break;
    run *= dim.num;
  }
  return run;
}

bool transposes(const isa::Inst &inst) {
  return inst.type == isa::InstructionType::DMADescriptorTranspose ||
         (inst.type == isa::InstructionType::DMACopy && inst.f.copy_mode == isa::CopyMode::Transpose);
}

} // namespace

DmaTransfer dma_transfer(const DynInst &d, const ArchParams &arch, const Memory &mem) {
  DmaTransfer t;
  t.latency_ps = to_ps(arch.dma_latency_ns);
  t.completion_ps = to_ps(arch.dma_completion_ns);
  t.transfer_overhead_ps = to_ps(arch.dma_transfer_overhead_ns);
  for (const auto &o : d.outs)
    if (o.tensor >= 0) t.bytes += o.partitions() * o.free_elements() * isa::dtype_size(o.dtype);
  const Access *src = first_tensor(d.ins), *dst = first_tensor(d.outs);
  if (!src && !dst) return t;  // nothing moves: the transfer is its latency
  const auto &tensors = mem.program().tensors;
  auto dram = [&](const Access *a) { return a && tensors[static_cast<size_t>(a->tensor)].is_dram(); };
  t.touches_hbm = dram(src) || dram(dst);
  t.transpose = transposes(*d.inst);

  // Rows: the partitions of the on-chip side (the destination's when both are on chip); for DRAM -> DRAM the
  // destination's rows, numbered from 0.
  const Access &rows = dst ? *dst : *src;
  const Access *chip = (dst && !dram(dst)) ? dst : (src && !dram(src)) ? src : nullptr;
  const int64_t P = std::max<int64_t>(1, (chip ? *chip : rows).partitions());
  const int64_t p0 = chip ? mem.footprint(*chip).p0 : 0;
  const int64_t F = std::max<int64_t>(1, rows.free_elements());
  const int64_t esz = std::max(src ? isa::dtype_size(src->dtype) : 1, dst ? isa::dtype_size(dst->dtype) : 1);

  // Descriptors per row: a new descriptor wherever either side's contiguous run breaks (the breaks of runs of a
  // and b elements fall at multiples of a or of b); a transpose with transpose hardware (NeuronCore-v3+), the
  // destination's runs. A transpose without it (NeuronCore-v2, docs/timing-model.md 2.5): one descriptor per row
  // whose strided pattern gathers the row's elements one by one (a descriptor carries a step and a count of
  // up to 65535 per dimension and side, reference neuronx-cc/isa/dma-encoding.md, DIRECT2D), each element costing
  // the engine what one tiny transfer does (desc_ps below). A copy that transposes by its access pattern (single
  // elements on one side, contiguous runs on the other: an nl.store to out[j, i] of a tile indexed [i, j]) is that
  // same movement, timed the same on every generation (INFERRED: whether the compiler turns it into a hardware
  // transpose on v3+ is not documented).
  int64_t per_row;
  bool elementwise = false;
  const int64_t a = std::min(F, src ? run_elements(*src) : F), b = std::min(F, dst ? run_elements(*dst) : F);
  if ((t.transpose && !arch.dma_transpose_hardware) || (!t.transpose && std::min(a, b) == 1 && std::max(a, b) > 1)) {
    per_row = ceil_div(F, 65535);
    elementwise = true;
  } else {
    if (t.transpose) {
      per_row = ceil_div(F, b);
    } else {
      const int64_t l = std::lcm(a, b);
      per_row = ceil_div(F, a) + ceil_div(F, b) - ceil_div(F, l);
    }
  }
  t.desc_bytes = ceil_div(F * esz, per_row);

  // Rows to engines: partition p is served by engine (p / partitions_per_engine) mod engines.
  const int engines = std::clamp(arch.dma_engines, 1, kMaxDmaEngines);
  const int64_t ppe = std::max<int64_t>(1, arch.dma_partitions_per_engine);
  std::array<int64_t, kMaxDmaEngines> rows_on{};
  int used = 0;
  int e = static_cast<int>((p0 / ppe) % engines);
  for (int64_t p = p0, end = p0 + P, block_end = (p0 / ppe + 1) * ppe; p < end; block_end += ppe) {
    const int64_t take = std::min(end, block_end) - p;
    used += rows_on[static_cast<size_t>(e)] == 0;
    rows_on[static_cast<size_t>(e)] += take;
    p += take;
    if (++e == engines) e = 0;
  }

  // The rate: an engine writing into HBM from on chip at its write rate (calibration.md D3), otherwise at its read
  // rate (D1, D5; a DRAM -> DRAM copy at the slower read, INFERRED); a transpose at its efficiency [ARCH3]. No
  // payload size moves faster ("What these say together" 1). HBM is a pool the caller shares among the transfers
  // in flight (engines/hbm.hpp), not a per-transfer floor.
  double rate = dram(dst) && !dram(src) ? arch.dma_engine_write_bytes_per_ns : arch.dma_engine_bytes_per_ns;
  if (t.transpose && arch.dma_transpose_hardware)
    rate *= t.touches_hbm ? arch.dma_transpose_dram_efficiency : arch.dma_transpose_sbuf_efficiency;
  int64_t desc_ps = std::max<int64_t>(1, to_ps(static_cast<double>(t.desc_bytes) / rate));
  if (elementwise) {
    // Element-granular movement on v2: each element of a row costs what a tiny 4-byte transfer costs an engine,
    // dma_transfer_overhead_ns (calibration.md D5, ~7 ns on trn1), its bytes included -- INFERRED: no public profile
    // times a v2 transposing DMA; [PERF] Opt #8/#10 say only that load_transpose2d has "much lower DMA bandwidth"
    // than nl.load. A faster rate or a smaller overhead can only shorten it (docs/timing-model.md 2.1).
    desc_ps = std::max(desc_ps, ceil_div(F, per_row) * t.transfer_overhead_ps);
  }
  t.stream_bytes_per_ns = rate * used;
  // The pieces start in engine order, dma_engine_stagger_ns apart (calibration.md D2).
  const int64_t stagger_ps = to_ps(arch.dma_engine_stagger_ns);
  int k = 0;
  for (int g = 0; g < engines; ++g) {
    const int64_t n = rows_on[static_cast<size_t>(g)] * per_row;
    if (n == 0) continue;
    t.parts.push_back(DmaPart{g, n, desc_ps, k++ * stagger_ps});
    t.descriptors += n;
  }
  t.descriptor_ps = to_ps(arch.dma_engine_descriptor_ns);
  return t;
}

TriggerCost dma_trigger_cost(const isa::Inst &inst, isa::Engine issuer, const ArchParams &arch) {
  TriggerCost c;
  const double ghz = engine_ghz(issuer, arch);
  switch (inst.f.dge_type) {
  case isa::DGEType::HWDGE:  // [DGE] ~600 ns per instruction on the issuing ACT or SP, besides the transfer
    c.ns = arch.hwdge_trigger_ns;
    c.cycles = static_cast<int64_t>(std::llround(c.ns * ghz));
    return c;
  case isa::DGEType::SWDGE:  // [DGE] GpSimd builds the descriptors (the compiler's DGE overhead)
    c.ns = arch.swdge_pool_ns;
    c.cycles = static_cast<int64_t>(std::llround(c.ns * ghz));
    return c;
  case isa::DGEType::None:  // prebuilt descriptors in HBM: the trigger is one sequencer instruction
    c.cycles = arch.sequencer_instruction_cycles;
    c.ns = static_cast<double>(c.cycles) / ghz;
    return c;
  }
  throw std::logic_error("dma_trigger_cost: a DGEType without a rule");
}

// ---------------------------------------------------------------------------------------------------------------
// DmaEngines

void DmaEngines::reset(int engines, int queues, bool record_slices) {
  if (engines < 1 || engines > kMaxDmaEngines || queues < 1 || queues > kMaxDmaQueueIds)
    throw std::logic_error("DmaEngines: engines must be 1.." + std::to_string(kMaxDmaEngines) + " and queues 1.." +
                           std::to_string(kMaxDmaQueueIds));
  engines_.assign(static_cast<size_t>(engines), Engine{});
  xfers_.clear();
  free_slots_.clear();
  in_flight_ = 0;
  queue_busy_.fill(0);
  queue_desc_.fill(0);
  processed_.fill(0);
  record_ = record_slices;
  slices_.clear();
  queues_ = queues;
}

int64_t DmaEngines::submit(int64_t id, int queue, int64_t now, const DmaTransfer &t) {
  int slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<int>(xfers_.size());
    xfers_.emplace_back();
  }
  Xfer &x = xfers_[static_cast<size_t>(slot)];
  // Reset field by field: `first` and `projected` are read only for the engines in all_engines, set below.
  x.all_engines = 0;
  x.busy = 0;
  x.used = true;
  x.id = id;
  x.queue = queue;
  x.descriptor_ps = 0;
  x.completion_ps = t.completion_ps;
  x.no_work_at = now + t.latency_ps + t.completion_ps;
  x.estimate = x.no_work_at;
  ++in_flight_;
  // Busy times do not depend on how descriptors interleave: counted here, once.
  for (const auto &p : t.parts) {
    x.all_engines |= 1u << p.engine;
    const int64_t busy = t.transfer_overhead_ps + p.descriptors * p.desc_ps;
    x.busy += busy;
    DmaEngineTotals &tot = engines_[static_cast<size_t>(p.engine)].totals;
    tot.busy_ps += busy;
    tot.descriptors += p.descriptors;
    ++tot.transfers;
    queue_busy_[static_cast<size_t>(queue)] += busy;
    queue_desc_[static_cast<size_t>(queue)] += p.descriptors;
  }
  bool replanned = false;
  for (const auto &p : t.parts) {
    Engine &e = engines_[static_cast<size_t>(p.engine)];
    // The engine processes the piece's descriptors after those given to it before (calibration.md D4), a stage
    // ahead of the data movement: the piece moves once all of them are processed. Gated so, its start does not
    // depend on how fast its bytes move, and a faster rate can only end it sooner (docs/timing-model.md 2.1).
    int64_t &processed = processed_[static_cast<size_t>(p.engine)];
    const int64_t prep_start = std::max(processed, now), prep = p.descriptors * t.descriptor_ps;
    processed = prep_start + prep;
    x.descriptor_ps += prep;
    const int64_t eligible = std::max(now + t.latency_ps + p.offset_ps, processed);
    Run run{slot, id, queue, p.descriptors, p.desc_ps, t.transfer_overhead_ps, eligible, false};
    // A planned engine (its runs back to back, each with its final `end`) takes the new run after them without
    // replanning when no other queue's run can take a turn beside it: all its runs are of this queue, or the new
    // run becomes available only after the last one ends. Picks before `now` need not be committed one by one:
    // the runs that ended by `now` retire. Recording slices commits every pick.
    if (!record_ && e.planned) {
      while (e.head < e.runs.size() && e.runs[e.head].end <= now) {
        e.free = e.runs[e.head].end, e.rr = e.runs[e.head].queue;
        ++e.head;
      }
      if (e.head == e.runs.size()) {
        e.runs.clear(), e.head = 0;
      } else if (e.head >= 32 && 2 * e.head >= e.runs.size()) {
        // An engine that never drains (its next transfers are always processed while the last ones move) drops its
        // retired runs now and then, not only when empty: its vector stays the size of what is in flight.
        e.runs.erase(e.runs.begin(), e.runs.begin() + static_cast<std::ptrdiff_t>(e.head));
        e.head = 0;
      }
      const int64_t last = e.runs.empty() ? e.free : e.runs.back().end;
      if (e.runs.empty() || e.only == queue || run.eligible >= last) {
        const int64_t start = std::max(last, run.eligible);
        run.end = start + run.extra + run.n * run.d;
        e.only = e.runs.empty() || e.only == queue ? queue : -1;
        e.runs.push_back(run);
        x.first[static_cast<size_t>(p.engine)] = start;
        x.projected[static_cast<size_t>(p.engine)] = run.end;
        continue;
      }
    }
    if (e.head > 0) {
      e.runs.erase(e.runs.begin(), e.runs.begin() + static_cast<std::ptrdiff_t>(e.head));
      e.head = 0;
    }
    advance<true>(e, p.engine, now);
    bool one_queue = true;
    for (const Run &r : e.runs) one_queue &= r.queue == queue;
    if (one_queue) {
      // Only this queue on the engine: the new run follows the runs already there, whose plan does not change.
      const int64_t after = e.runs.empty()
                                ? e.free
                                : xfers_[static_cast<size_t>(e.runs.back().xfer)].projected[static_cast<size_t>(p.engine)];
      const int64_t start = std::max(after, run.eligible);
      // The runs left are in flight (advance retired the finished ones) and their projections final: planned.
      for (Run &r : e.runs) r.end = xfers_[static_cast<size_t>(r.xfer)].projected[static_cast<size_t>(p.engine)];
      run.end = start + run.extra + run.n * run.d;
      e.planned = true;
      e.only = queue;
      e.runs.push_back(run);
      x.first[static_cast<size_t>(p.engine)] = start;
      x.projected[static_cast<size_t>(p.engine)] = run.end;
    } else {
      for (Run &r : e.runs) r.end = -1;  // round robin between queues moves the plans
      e.planned = false;
      e.runs.push_back(run);
      project(p.engine);
      replanned = true;
    }
  }
  // Round robin with the new run may move the other transfers on its engines; otherwise only its own estimate is new.
  if (replanned) {
    refresh_estimates(t.parts);
  } else {
    int64_t c = 0;
    for (uint32_t m = x.all_engines; m; m &= m - 1) c = std::max(c, x.projected[static_cast<size_t>(__builtin_ctz(m))]);
    if (x.all_engines) x.estimate = c + x.completion_ps;
  }
  // Its projected first byte: the earliest start of its pieces (a transfer with no pieces: its completion).
  int64_t first = t.parts.empty() ? x.no_work_at : INT64_MAX;
  for (const auto &p : t.parts) first = std::min(first, x.first[static_cast<size_t>(p.engine)]);
  return first;
}

// A transfer's completion as projected now: the latest projected end over its engines.
void DmaEngines::refresh_estimates(const DmaParts &parts) {
  uint32_t touched = 0;
  for (const auto &p : parts) touched |= 1u << p.engine;
  for (auto &x : xfers_) {
    if (!x.used || !(x.all_engines & touched)) continue;
    int64_t c = 0;
    for (uint32_t m = x.all_engines; m; m &= m - 1) c = std::max(c, x.projected[static_cast<size_t>(__builtin_ctz(m))]);
    x.estimate = c + x.completion_ps;
  }
}

int64_t DmaEngines::next_completion() const {
  int64_t best = INT64_MAX;
  for (const auto &x : xfers_)
    if (x.used) best = std::min(best, x.estimate);
  return best;
}

void DmaEngines::take_completed(int64_t now, std::vector<Done> &out) {
  const size_t first = out.size();
  for (size_t s = 0; s < xfers_.size(); ++s) {
    Xfer &x = xfers_[s];
    if (!x.used || x.estimate > now) continue;
    int64_t start = x.all_engines == 0 ? x.estimate : INT64_MAX;
    for (uint32_t m = x.all_engines; m; m &= m - 1) start = std::min(start, x.first[static_cast<size_t>(__builtin_ctz(m))]);
    out.push_back(Done{x.id, start, x.estimate - x.completion_ps, x.estimate, x.busy, x.descriptor_ps});
    x.used = false;
    free_slots_.push_back(static_cast<int>(s));
    --in_flight_;
  }
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(), [](const Done &a, const Done &b) {
    return a.completion != b.completion ? a.completion < b.completion : a.id < b.id;
  });
}

void DmaEngines::finish() {
  if (!record_) return;
  for (size_t e = 0; e < engines_.size(); ++e) advance<true>(engines_[e], static_cast<int>(e), INT64_MAX);
}

void DmaEngines::drain_slices(std::vector<DmaSlice> &out, size_t keep) {
  if (slices_.size() <= std::max<size_t>(keep, 1)) return;
  const auto last = slices_.end() - 1;
  out.insert(out.end(), std::make_move_iterator(slices_.begin()), std::make_move_iterator(last));
  slices_.erase(slices_.begin(), last);
}

void DmaEngines::record(int ei, int64_t start, int64_t end, int64_t id) {
  if (!slices_.empty()) {
    DmaSlice &last = slices_.back();
    if (last.engine == ei && last.end_ps == start && last.xfer == id && id >= 0) {
      last.end_ps = end;
      return;
    }
  }
  slices_.push_back(DmaSlice{ei, start, end, id, {}});
}

void DmaEngines::project(int ei) {
  // The same decisions as advance<true>, on a copy, to the end: where each transfer's last descriptor on this
  // engine would end if nothing else arrived.
  Engine copy;
  copy.free = engines_[static_cast<size_t>(ei)].free;
  copy.rr = engines_[static_cast<size_t>(ei)].rr;
  copy.runs.swap(scratch_);
  copy.runs.assign(engines_[static_cast<size_t>(ei)].runs.begin(), engines_[static_cast<size_t>(ei)].runs.end());
  advance<false>(copy, ei, INT64_MAX);
  copy.runs.swap(scratch_);
}

// Processes the descriptor picks of engine `e` that happen before `until`. An engine that becomes free picks the
// next queue after the one it served last, among the queues whose head transfer is available (round robin at
// descriptor granularity). Stretches where the choice cannot change -- one queue available until the next one
// becomes available, or whole rounds over a fixed set of queues -- are taken in one step.
template <bool Commit> void DmaEngines::advance(Engine &e, int ei, int64_t until) {
  auto &runs = e.runs;
  std::array<int, kMaxDmaQueueIds> head{};
  std::array<int, kMaxDmaQueueIds> order{};
  const uint32_t all = queues_ >= 32 ? ~0u : (1u << queues_) - 1;
  while (!runs.empty() && e.free < until) {  // an engine busy until `until` picks nothing before it
    uint32_t heads = 0;
    int64_t earliest = INT64_MAX;
    for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
      const int q = runs[static_cast<size_t>(i)].queue;
      if (heads >> q & 1u) continue;
      heads |= 1u << q;
      head[static_cast<size_t>(q)] = i;
      earliest = std::min(earliest, runs[static_cast<size_t>(i)].eligible);
    }
    const int64_t t = std::max(e.free, earliest);
    if (t >= until) break;
    // The queues whose head is available at t, in round-robin order after the one served last.
    uint32_t ready = 0;
    int64_t next_eligible = INT64_MAX;
    for (uint32_t m = heads; m; m &= m - 1) {
      const int q = __builtin_ctz(m);
      const Run &r = runs[static_cast<size_t>(head[static_cast<size_t>(q)])];
      if (r.eligible <= t) ready |= 1u << q;
      else next_eligible = std::min(next_eligible, r.eligible);
    }
    const int first = (e.rr + 1) % queues_;
    const uint32_t above = ready & (all << first), below = ready & ~(all << first);
    int n_order = 0;
    for (uint32_t m = above; m; m &= m - 1) order[static_cast<size_t>(n_order++)] = __builtin_ctz(m);
    for (uint32_t m = below; m; m &= m - 1) order[static_cast<size_t>(n_order++)] = __builtin_ctz(m);
    const int64_t limit = std::min(until, next_eligible);

    // Bookkeeping of `count` picks of run `r`: the first at `first_t`, the last ending at `end`. Its transfer's
    // projected start and end on this engine are where the picks put them (a committed pick never moves).
    auto take = [&](Run &r, int64_t first_t, int64_t count, int64_t end, int64_t) {
      r.n -= count;
      Xfer &x = xfers_[static_cast<size_t>(r.xfer)];
      if (!x.used || x.id != r.id) return;  // completed, its slot perhaps reused: nothing of it is read any more
      if (!r.started) x.first[static_cast<size_t>(ei)] = first_t, r.started = true;
      if (r.n == 0) x.projected[static_cast<size_t>(ei)] = end;
    };

    bool one = n_order == 1;
    for (int k = 0; k < n_order && !one; ++k)
      if (runs[static_cast<size_t>(head[static_cast<size_t>(order[k])])].extra > 0) one = true;
    if (n_order == 1) {
      // One queue available until `limit`: its picks start at t, t + d + extra, t + 2d + extra, ...
      const int q = order[0];
      Run &r = runs[static_cast<size_t>(head[static_cast<size_t>(q)])];
      const int64_t second = t + r.d + r.extra;
      int64_t k = r.n;
      if (limit != INT64_MAX) k = std::min(r.n, 1 + (limit > second ? ceil_div(limit - second, r.d) : 0));
      const int64_t busy = r.extra + k * r.d;
      r.extra = 0;
      e.free = t + busy;
      if (Commit && record_) record(ei, t, e.free, r.id);
      take(r, t, k, e.free, busy);
      e.rr = q;
    } else if (!one) {
      // Whole rounds: every available queue once, in round-robin order, while none runs out and no other queue
      // becomes available before a round's last pick.
      int64_t R = 0, m = INT64_MAX;
      for (int k = 0; k < n_order; ++k) {
        const Run &r = runs[static_cast<size_t>(head[static_cast<size_t>(order[k])])];
        R += r.d;
        m = std::min(m, r.n);
      }
      const int64_t d_last = runs[static_cast<size_t>(head[static_cast<size_t>(order[n_order - 1])])].d;
      const int64_t span = limit == INT64_MAX ? INT64_MAX : limit - t - (R - d_last);
      const int64_t rounds = span <= 0 ? 0 : span == INT64_MAX ? m : std::min(m, ceil_div(span, R));
      if (rounds > 0) {
        int64_t prefix = 0;
        if (Commit && record_) {
          DmaSlice sl{ei, t, t + rounds * R, -1, {}};
          for (int k = 0; k < n_order; ++k)
            sl.ids.push_back(runs[static_cast<size_t>(head[static_cast<size_t>(order[k])])].id);
          slices_.push_back(std::move(sl));
        }
        for (int k = 0; k < n_order; ++k) {
          Run &r = runs[static_cast<size_t>(head[static_cast<size_t>(order[k])])];
          take(r, t + prefix, rounds, t + (rounds - 1) * R + prefix + r.d, rounds * r.d);
          prefix += r.d;
        }
        e.free = t + rounds * R;
        e.rr = order[n_order - 1];
      } else {
        one = true;  // fall through to one pick
      }
    }
    if (one && n_order > 1) {
      // One descriptor from the next queue in round-robin order.
      const int q = order[0];
      Run &r = runs[static_cast<size_t>(head[static_cast<size_t>(q)])];
      const int64_t dur = r.d + r.extra;
      r.extra = 0;
      e.free = t + dur;
      if (Commit && record_) record(ei, t, e.free, r.id);
      take(r, t, 1, e.free, dur);
      e.rr = q;
    }
    if (runs[static_cast<size_t>(head[static_cast<size_t>(e.rr)])].n == 0 || n_order > 1)
      runs.erase(std::remove_if(runs.begin(), runs.end(), [](const Run &r) { return r.n == 0; }), runs.end());
  }
}

template void DmaEngines::advance<true>(Engine &, int, int64_t);
template void DmaEngines::advance<false>(Engine &, int, int64_t);

DmaTimeSplit dma_time_split(const DmaTransfer &t, const ArchParams &arch, bool device_hbm) {
  // The calibrated components themselves (docs/timing-model.md 2): the latency to the first byte and from the last
  // byte to the completion (dma_latency_ns + dma_completion_ns, calibration.md D1-D3); the per-row cost, its
  // engines' processing of its descriptors (dma_engine_descriptor_ns each, D4) and each piece's own engine time
  // (dma_transfer_overhead_ns, D5); the transfer, its bytes at its engines' read or write rate (D1, D3, D5).
  DmaTimeSplit s;
  s.fixed_ps = t.latency_ps + t.completion_ps;
  for (const auto &p : t.parts) {
    s.per_row_ps += t.transfer_overhead_ps + p.descriptors * t.descriptor_ps;
    s.transfer_ps += p.descriptors * p.desc_ps;
  }
  s.allowed_bytes_per_ns = t.stream_bytes_per_ns;
  if (t.touches_hbm && !device_hbm && s.allowed_bytes_per_ns > 0)
    s.allowed_bytes_per_ns = std::min(s.allowed_bytes_per_ns, arch.hbm_bytes_per_ns);
  return s;
}

} // namespace neuronsim::engines
