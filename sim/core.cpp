// The SystemC core: one thread per in-order queue (five engines + DMA queues) and one for the DMA engines. An
// engine instruction
//   1. waits for the instructions it depends on to complete (the inferred waits: a producer queue's i-th
//      instruction; or the program's own semaphores),
//   2. waits for the shared resources it needs (PSUM banks it writes, the ports and buses the architecture
//      shares between engines, docs/timing-model.md 3),
//   3. executes its semantics, occupies its queue for its cost, and completes `latency` later.
// A DMA transfer waits for its trigger (on the issuing engine) and for a slot in its queue's ring, enters the ring,
// and is timed by engines::DmaEngines (descriptors on the DMA engines, round robin between queues); the DMA thread
// publishes each completion when it is final.
// Time is event-driven (no clock ticking; DESIGN.md 4); the unit inside SystemC is ps.
//
// SystemC modules can only be elaborated once per process, so the core is built on first use and reused: each
// run loads new queues, kicks the threads and calls sc_start() until the model starves.
//
// The run's state is a Job (sim/core_job.hpp); sim/core_run.cpp sets it up and assembles the result.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <systemc>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include "neuronsim/engines/cost.hpp"
#include "sim/core_job.hpp"

namespace neuronsim::sim::core_detail {

// The Error `e` with the source line of the instruction it names when the program's debug information gives one
// (the message then ends "(kernel.py:42)"; issue 16 item 2); null when there is nothing to add. Made, not thrown:
// a run's errors get it where they are caught inside the simulation (Core::execute) or while building a schedule
// (rethrow_with_source), and leave Simulator::run by its one rethrow. (A catch-and-throw again in run() itself,
// after SystemC's coroutines have run, is what the ASan build misreports; .ci/run.)
std::exception_ptr error_with_source(const isa::Program &p, const Error &e) {
  if (!e.context().source.empty()) return nullptr;
  const std::string src = isa::source_location(p, e.context());
  if (src.empty()) return nullptr;
  ErrorContext c = e.context();
  c.source = src;
  if (dynamic_cast<const SimulationError *>(&e)) return std::make_exception_ptr(SimulationError(c, e.message()));
  if (dynamic_cast<const SemanticError *>(&e)) return std::make_exception_ptr(SemanticError(c, e.message()));
  if (dynamic_cast<const InputError *>(&e)) return std::make_exception_ptr(InputError(c, e.message()));
  return nullptr;
}

namespace {

using sc_core::sc_time;
using sc_core::SC_PS;

// The wait reason a shared resource stands for (WaitReason).
WaitReason resource_reason(int id) {
  if ((id >= kPsumBankWriter && id < kPsumBankWriter + kPsumBanks) || id == kPsumWriterFence ||
      (id >= kPsumBankActDve && id < kPsumBankActDve + kPsumBanks))
    return WaitReason::PsumBank;
  return WaitReason::SharedPort;
}


// GroupResetSemaphores writes 0 to every semaphore of its group (reference neuronx-cc/bir/
// sim-control-sync-customop.md 5.1: birsim ignores `mode`); SwitchQueueInstance clears the queue instance's
// semaphore group first (5.2; this reader takes the group from the instruction's `sema_group`).
bool resets_semaphores(const isa::Inst &inst) {
  return (inst.type == isa::InstructionType::GroupResetSemaphores ||
          inst.type == isa::InstructionType::SwitchQueueInstance) &&
         !inst.f.sema_group.empty();
}

bool sem_ready(const Job &j, const isa::SemWait &w) {
  const int64_t v = j.sem[static_cast<size_t>(w.sem)];
  switch (w.mode) {
  case isa::SemWait::Mode::GeImm: return v >= w.value;
  case isa::SemWait::Mode::EqImm: return v == w.value;
  case isa::SemWait::Mode::GeReg: return v >= w.value;  // register value resolved into `value` by the decoder
  }
  return true;
}

void apply_update(Job &j, const isa::SemUpdate &u) {
  int64_t &v = j.sem[static_cast<size_t>(u.sem)];
  switch (u.mode) {
  case isa::SemUpdate::Mode::Inc: v += 1; break;
  case isa::SemUpdate::Mode::Dec: v -= 1; break;
  case isa::SemUpdate::Mode::Set: v = u.value; break;
  case isa::SemUpdate::Mode::Add: v += u.value; break;
  }
}

// Grants every claim made before the current delta cycle, in program order: each starts when all its resources
// are free and holds the ones it holds for its occupancy.
void arbitrate(Job &j) {
  const uint64_t delta = sc_core::sc_delta_count();
  // Two buffers kept in the job: no allocation per arbitration.
  std::vector<Claim *> &batch = j.claim_batch, &later = j.claim_later;
  batch.clear(), later.clear();
  for (Claim *c : j.claims) (c->delta < delta ? batch : later).push_back(c);
  j.claims.swap(later);
  std::sort(batch.begin(), batch.end(), [](const Claim *a, const Claim *b) { return a->seq < b->seq; });
  const int64_t now = static_cast<int64_t>(sc_core::sc_time_stamp().value());
  for (Claim *c : batch) {
    int64_t start = now;
    for (const auto &r : *c->resources) {
      const int64_t t = j.resource_free[static_cast<size_t>(r.id)];
      if (t > start) start = t, c->limiting = r.id;
    }
    const int64_t end = start + c->occupancy_ps;
    for (const auto &r : *c->resources)
      if (r.hold) j.resource_free[static_cast<size_t>(r.id)] = end;
    c->start = start, c->end = end, c->granted = true;
  }
}

// The shared resources an engine instruction uses while it occupies its queue (docs/timing-model.md 3).
void resources_of(const Job &j, const ScheduledInst &si, int q, const engines::Cost &cost, std::vector<ResourceUse> &out) {
  out.clear();
  if (si.trigger) return;  // a sequencer instruction (and descriptor generation) touches no tensor
  const auto &prog = j.memory->program();
  const engines::ArchParams &a = *j.arch;
  const int64_t bank_bytes = a.psum_bytes_per_partition / std::max<int64_t>(1, a.psum_banks);
  bool touches_sbuf = false, touches_psum = false, writes_psum = false;
  uint32_t banks = 0;  // PSUM banks read or written
  auto psum_banks = [&](const engines::Access &x) {
    const engines::Footprint fp = j.memory->footprint(x);
    uint32_t m = 0;
    for (int64_t b = fp.b0 / bank_bytes; b <= (fp.b1 - 1) / bank_bytes && b < kPsumBanks; ++b) m |= 1u << b;
    return m;
  };
  for (const auto &x : si.d.outs) {
    if (x.tensor < 0) continue;
    const auto mem = prog.tensors[static_cast<size_t>(x.tensor)].mem;
    if (mem == isa::MemoryType::SB) touches_sbuf = true;
    if (mem != isa::MemoryType::PSUM) continue;
    touches_psum = writes_psum = true;
    const uint32_t m = psum_banks(x);
    banks |= m;
    // reference walrus/perfsim-cost-model.md: PSUM banks serialize their writers.
    for (int b = 0; b < kPsumBanks; ++b)
      if (m >> b & 1u) out.push_back({kPsumBankWriter + b, true});
  }
  for (const auto &x : si.d.ins) {
    if (x.tensor < 0) continue;
    const auto mem = prog.tensors[static_cast<size_t>(x.tensor)].mem;
    if (mem == isa::MemoryType::SB) touches_sbuf = true;
    if (mem == isa::MemoryType::PSUM) touches_psum = true, banks |= psum_banks(x);
  }
  const bool act = q == kActQueue, dve = q == kDveQueue, pool = q == kPoolQueue;
  // reference neuron-arch.md 1.4 [ARCH2]: on NeuronCore-v2 "Vector Engine and GpSimd Engine cannot access SBUF in
  // parallel" and "Vector Engine and Scalar Engine cannot access PSUM in parallel".
  if (a.dve_pool_shared_sbuf_port && touches_sbuf && (dve || pool)) out.push_back({kDvePoolSbufPort, true});
  if (a.act_dve_shared_psum_port && touches_psum && (act || dve)) out.push_back({kActDvePsumPort, true});
  // reference walrus/perfsim-cost-model.md determine_start_time: on v2 ACT starts after the DVE/POOL PSUM
  // writers' ends (the compiler's cost model).
  if (a.act_waits_psum_writers && j.dve_pool_psum_writers) {
    if (act) out.push_back({kPsumWriterFence, false});
    if ((dve || pool) && writes_psum) out.push_back({kPsumWriterFence, true});
  }
  // reference neuron-arch.md 1.4 [ARCH3]: ACT and DVE have full PSUM bandwidth unless they collide on a bank; the
  // DVE perf mode uses a memory bus shared with GpSimd.
  if (a.act_dve_psum_bank_collisions && (act || dve))
    for (int b = 0; b < kPsumBanks; ++b)
      if (banks >> b & 1u) out.push_back({kPsumBankActDve + b, true});
  if (a.dve_perf_mode_shares_pool_bus && ((dve && cost.dve_perf_mode) || (pool && touches_sbuf)))
    out.push_back({kPoolBus, true});
}

bool same_access(const engines::Access &a, const engines::Access &b) {
  if (a.tensor != b.tensor || a.start != b.start || a.dtype != b.dtype || a.ap.size() != b.ap.size()) return false;
  for (size_t i = 0; i < a.ap.size(); ++i)
    if (a.ap[i].step != b.ap[i].step || a.ap[i].num != b.ap[i].num) return false;
  return true;
}

bool is_collective(isa::InstructionType t) {
  return t == isa::InstructionType::CollectiveCompute || t == isa::InstructionType::CollectiveSend ||
         t == isa::InstructionType::CollectiveRecv || t == isa::InstructionType::CoreBarrier;
}

bool is_matmul(isa::InstructionType t) {
  return t == isa::InstructionType::Matmult || t == isa::InstructionType::MatmultSparse ||
         t == isa::InstructionType::MatmultMx || t == isa::InstructionType::MatmultBase;
}

SC_MODULE(Core) {
  std::array<sc_core::sc_event, kMaxQueues> kick;
  std::array<sc_core::sc_event, kMaxQueues> issued;      // a queue's known completions advanced
  std::array<sc_core::sc_event_queue *, kMaxQueues> completion{};  // fires at each completion with updates
  sc_core::sc_event sem_changed;
  sc_core::sc_event dma_kick;  // a transfer entered a ring (or a run started): the DMA thread re-plans
  sc_core::sc_event collective_done;  // a rendezvous this core waits on completed (sim/device.hpp)
  Job *job = nullptr;
  // Bumped by every run: a thread still parked in an earlier run's wait (a deadlocked or aborted run leaves
  // them there) sees the change and drops that run's instruction without touching its state.
  uint64_t generation = 0;

  SC_CTOR(Core) {
    for (int q = 0; q < kMaxQueues; ++q) {
      completion[q] = new sc_core::sc_event_queue(sc_core::sc_gen_unique_name("completion"));
      sc_core::sc_spawn([this, q] { queue_thread(q); }, sc_core::sc_gen_unique_name("queue"));
      sc_core::sc_spawn_options m;
      m.spawn_method();
      m.set_sensitivity(&completion[q]->default_event());
      m.dont_initialize();
      sc_core::sc_spawn([this, q] { apply_completion(q); }, sc_core::sc_gen_unique_name("sem"), &m);
    }
    sc_core::sc_spawn([this] { dma_thread(); }, sc_core::sc_gen_unique_name("dma"));
  }

  int64_t now_ps() const { return static_cast<int64_t>(sc_core::sc_time_stamp().value()); }
  void wait_until(int64_t t) {
    const int64_t now = now_ps();
    if (t > now) wait(sc_time(static_cast<double>(t - now), SC_PS));
  }

  // Explicit semaphore updates take effect when the instruction completes (after its latency).
  void apply_completion(int q) {
    if (!job) return;
    Job &j = *job;
    const int64_t now = now_ps();
    bool changed = false;
    while (!j.pending[q].empty() && j.pending[q].front().at_ps <= now) {
      const isa::Inst &inst = *j.pending[q].front().inst;
      if (resets_semaphores(inst))
        for (int64_t id : inst.f.sema_group) j.sem[static_cast<size_t>(id)] = 0;  // ids checked by the scheduler
      for (const auto &u : inst.updates) apply_update(j, u);
      j.pending[q].pop_front();
      changed = true;
    }
    if (changed) sem_changed.notify(sc_core::SC_ZERO_TIME);
  }

  // Ends the run with `error` (rethrown by Simulator::run): every thread is woken to see `aborted` and park.
  void abort_run(Job &j, std::exception_ptr error) {
    j.error = std::move(error);
    j.aborted = true;
    for (auto &k : kick) k.notify(sc_core::SC_ZERO_TIME);
    for (auto &e : issued) e.notify(sc_core::SC_ZERO_TIME);
    sem_changed.notify(sc_core::SC_ZERO_TIME);
    dma_kick.notify(sc_core::SC_ZERO_TIME);
  }

  // Runs one instruction's semantics (not in timing-only runs); false when it failed (the run is aborted).
  bool execute(Job &j, int q, const ScheduledInst &si) {
    if (j.timing_only || si.trigger) return true;
    const isa::Inst &inst = *si.d.inst;
    try {
      // The file is set once per run; per instruction only the (short) index and name change.
      j.memory->set_context_instruction(inst.index, inst.name);
      if (!j.state[q]) j.state[q] = std::make_unique<engines::EngineState>();
      engines::execute(si.d, *j.memory, *j.state[q]);
      if (j.after) (*j.after)(si, *j.memory);
    } catch (const Error &e) {
      std::exception_ptr named = error_with_source(j.memory->program(), e);
      abort_run(j, named ? named : std::current_exception());
      return false;
    } catch (...) {
      abort_run(j, std::current_exception());
      return false;
    }
    return true;
  }

  // Publishes the completions of DMA queue q that are final, in queue order (completions stay in queue order: a
  // queue's semaphore counts finished transfers).
  void publish(Job &j, int q) {
    bool any = false;
    while (j.known[q] < j.next[q] && j.dma[q][j.known[q]].done >= 0) {
      const int64_t pos = j.known[q];
      const DmaInFlight &f = j.dma[q][pos];
      const int64_t seq = f.seq;
      const ScheduledInst &si = j.entry(q, pos);  // made: a streamed run keeps it until here
      const isa::Inst &inst = *si.d.inst;
      int64_t finish = f.done;
      if (pos > 0) finish = std::max(finish, j.times[q][pos - 1].finish);
      j.times[q][pos].finish = finish;
      if (!inst.updates.empty() || resets_semaphores(inst)) {
        j.pending[q].push_back(PendingUpdates{finish, &inst});
        completion[q]->notify(sc_time(static_cast<double>(std::max<int64_t>(0, finish - now_ps())), SC_PS));
      }
      auto &qs = j.result->queues[q];
      ++qs.instructions;
      qs.busy_ns += static_cast<double>(f.busy) / 1000.0;
      qs.bytes += f.bytes;
      qs.descriptors += f.descriptors;
      auto ns = [&](int64_t t) { return static_cast<double>(t - j.t0) / 1000.0; };
      qs.fixed_ns += static_cast<double>(f.split.fixed_ps) / 1000.0;
      qs.per_row_ns += static_cast<double>(f.split.per_row_ps) / 1000.0;
      qs.transfer_ns += static_cast<double>(f.split.transfer_ps) / 1000.0;
      if (f.split.allowed_bytes_per_ns > 0)
        qs.allowed_ns += static_cast<double>(f.bytes) / f.split.allowed_bytes_per_ns;
      if (qs.instructions == 1)
        qs.first_issue_ns = ns(f.issue);
      qs.last_end_ns = std::max(qs.last_end_ns, ns(f.done));
      TraceEvent &ev = j.new_event();
      ev.queue = q, ev.seq = seq, ev.inst = inst.index;
      ev.issue_ns = ns(f.issue), ev.start_ns = ns(f.first), ev.end_ns = ns(f.last), ev.finish_ns = ns(finish);
      ev.gate = f.gate;
      ev.busy_ns = static_cast<double>(f.busy) / 1000.0;
      ev.wait_ns[static_cast<size_t>(WaitReason::Dependency)] = static_cast<double>(f.wait_dep) / 1000.0;
      ev.wait_ns[static_cast<size_t>(WaitReason::DmaRing)] = static_cast<double>(f.wait_ring) / 1000.0;
      ev.wait_ns[static_cast<size_t>(WaitReason::Semaphore)] = static_cast<double>(f.wait_sem) / 1000.0;
      // After entering the ring: the latency (part of the transfer), then the wait for its queue's descriptor
      // processing or a DMA engine.
      const int64_t engine_wait = f.first - f.issue - to_ps(j.arch->dma_latency_ns);
      ev.wait_ns[static_cast<size_t>(WaitReason::DmaEngine)] =
          static_cast<double>(std::max<int64_t>(0, engine_wait)) / 1000.0;
      if (j.stream && !j.recorded(ev, false, pos, f.gate_at)) abort_run(j, j.record_error);
      if (j.on_event) (*j.on_event)(ev, si, *j.result);
      j.known[q] = pos + 1;
      j.done_with(q, pos + 1);
      any = true;
    }
    if (any) issued[q].notify(sc_core::SC_ZERO_TIME);
  }

  // The DMA engines' clock: sleeps until the earliest projected completion (or until a transfer enters a ring,
  // which may change the plan), then publishes the transfers that are complete.
  void dma_thread() {
    for (;;) {
      while (!job || job->aborted || (job->engines.idle() && job->hbm_wait.empty())) wait(dma_kick);
      const uint64_t gen = generation;
      Job &j = *job;
      int64_t t = j.engines.next_completion();
      for (const auto &w : j.hbm_wait) t = std::min(t, j.hbm_finish_ps(j.dma[w.first][w.second].hbm));
      j.dma_target = t;
      if (t > now_ps()) {
        wait(sc_time(static_cast<double>(t - now_ps()), SC_PS), dma_kick);
        if (generation != gen || !job || job->aborted) continue;
        if (now_ps() < t) continue;  // kicked: plan again
      }
      j.dma_target = INT64_MAX;
      j.done_scratch.clear();
      j.engines.take_completed(now_ps(), j.done_scratch);
      uint32_t queues = 0;
      for (const auto &d : j.done_scratch) {
        // The transfer is in flight on its queue: between the queue's published positions and its next to enter
        // (at most a ring's depth each).
        int q = kNumEngines;
        int64_t pos = 0;
        for (; q < kMaxQueues; ++q) {
          for (pos = j.known[q]; pos < j.next[q] && j.dma[q][pos].seq != d.id;) ++pos;
          if (pos < j.next[q]) break;
        }
        DmaInFlight &f = j.dma[q][pos];
        f.first = d.first_start;
        f.busy = d.busy_ps;
        f.queue_ps = d.queue_ps;
        f.last = d.last_byte;
        if (f.hbm >= 0) {  // it completes when its bytes have also passed the HBM pool
          f.engine_done = d.completion;
          j.hbm_wait.emplace_back(q, pos);
          continue;
        }
        f.done = d.completion;
        queues |= 1u << q;
      }
      for (size_t i = 0; i < j.hbm_wait.size();) {
        const int q = j.hbm_wait[i].first;
        DmaInFlight &f = j.dma[q][j.hbm_wait[i].second];
        const int64_t h = j.hbm_finish_ps(f.hbm);
        if (h > now_ps()) {
          ++i;
          continue;
        }
        f.done = std::max(f.engine_done, h + to_ps(j.arch->dma_completion_ns));  // its last byte, then completion
        f.last = std::max(f.last, h);
        j.hbm_release(f.hbm);
        f.hbm = -1;
        queues |= 1u << q;
        j.hbm_wait.erase(j.hbm_wait.begin() + static_cast<std::ptrdiff_t>(i));
      }
      for (int q = kNumEngines; q < kMaxQueues; ++q)
        if (queues >> q & 1u) publish(j, q);
      if (j.on_slices) pass_slices(j, 4096);
    }
  }

  // Hands the DMA engines' slices fixed so far (keeping the last `keep`: 0 at the end of the run) to the hook, with
  // times from the run's start.
  static void pass_slices(Job &j, size_t keep) {
    if (keep > 0) j.engines.drain_slices(j.slice_scratch, keep);
    else j.slice_scratch = j.engines.take_slices();
    if (j.slice_scratch.empty()) return;
    for (auto &sl : j.slice_scratch) sl.start_ps -= j.t0, sl.end_ps -= j.t0;
    (*j.on_slices)(j.slice_scratch);
    j.slice_scratch.clear();
  }

  // Per-queue scratch kept by the (never destroyed) core, not on the thread's coroutine stack, which SystemC
  // never unwinds: a local there would be reported as leaked at exit.
  std::array<std::vector<ResourceUse>, kMaxQueues> resources_scratch;

  // Queue q's entry at pos; null when a streamed run's walk failed (the run is aborted with its error).
  const ScheduledInst *fetch(Job &j, int q, int64_t pos) {
    if (!j.stream) return &j.entry(q, pos);
    try {
      return &j.entry(q, pos);
    } catch (const Error &e) {
      std::exception_ptr named = error_with_source(j.memory->program(), e);
      abort_run(j, named ? named : std::current_exception());
    } catch (...) {
      abort_run(j, std::current_exception());
    }
    return nullptr;
  }

  // Queue q's position pos's times, which a streamed run may have dropped (kStreamHorizon): null, and the run
  // aborted with an internal error, then.
  const PosTimes *times_of(Job &j, int q, int64_t pos) {
    if (j.times[q].has(pos)) return &j.times[q][pos];
    abort_run(j, std::make_exception_ptr(SimulationError(
                     {j.memory->program().file, -1, "", ""},
                     "internal: a dependency on " + std::string(queue_name(q)) + " position " + std::to_string(pos) +
                         " reaches back past the streamed run's window of " + std::to_string(kStreamHorizon) +
                         " positions; run with --schedule=whole")));
    return nullptr;
  }

  void queue_thread(int q) {
    std::vector<ResourceUse> &res = resources_scratch[static_cast<size_t>(q)];
    for (;;) {
      while (!job || job->aborted || job->next[q] >= job->length[q]) wait(kick[q]);
      const uint64_t gen = generation;
      Job &j = *job;
      const int64_t pos = j.next[q];
      const ScheduledInst *sip = fetch(j, q, pos);
      if (!sip || generation != gen) continue;
      const ScheduledInst &si = *sip;
      const int64_t seq = si.d.seq;
      const isa::Inst &inst = *si.d.inst;

      // 1. Dependencies. The gate is whatever was satisfied last (for the critical path).
      const PosTimes *prev = pos > 0 ? times_of(j, q, pos - 1) : nullptr;
      if (pos > 0 && !prev) continue;
      int64_t gate = -1, gate_t = prev ? prev->release : -1, gate_at = -1;  // gate_at: its path_at (streamed runs)
      if (prev) gate = prev->seq, gate_at = path_at(q, pos - 1);
      // A producer's completion time is known as soon as it issues (a DMA transfer's when the DMA thread publishes
      // it), so the waits only block until then; the thread then sleeps once, until the latest completion (one
      // context switch, not one per dependency).
      // Temporal decoupling (DESIGN.md 4, TLM loosely-timed style): a queue does not sleep through its own
      // occupancy; it keeps its local time (the end of its previous instruction) and computes the next start from
      // it, synchronizing with SystemC time only where another thread's state matters (a producer not yet
      // issued, explicit semaphores, shared resources).
      bool stale = false;
      const int64_t queue_free = prev ? prev->release : j.t0;
      int64_t ready = std::max(now_ps(), queue_free);
      for (const auto &w : si.waits) {
        while (!(stale = generation != gen) && !j.aborted && j.known[w.queue] < w.count) wait(issued[w.queue]);
        if (stale || j.aborted) break;
        // A streamed run dropped the times of positions older than its window: a completion at or before both the
        // present and the gate so far cannot move the start nor become the gate (completions stay in queue order,
        // so the dropped ones end by trimmed_finish).
        if (!j.times[w.queue].has(w.count - 1) && w.count - 1 < j.times[w.queue].base() &&
            j.trimmed_finish[w.queue] <= std::min(now_ps(), gate_t))
          continue;
        const PosTimes *p = times_of(j, w.queue, w.count - 1);
        if (!p) break;
        const int64_t t = p->finish;
        if (t > gate_t) gate_t = t, gate = p->seq, gate_at = path_at(w.queue, w.count - 1);
        ready = std::max(ready, t);
      }
      if (stale || generation != gen || j.aborted) continue;

      const isa::Engine engine = queue_engine(q);
      if (engine == isa::Engine::DMA) {
        dma_transfer(j, q, pos, seq, si, queue_free, ready, gate, gate_at, gen);
        continue;
      }

      // 2. Cost and shared resources.
      engines::Cost cost;
      if (si.trigger) {
        const engines::TriggerCost t = engines::dma_trigger_cost(inst, engine, *j.arch);
        cost.ns = t.ns;
        cost.cycles = t.cycles;
      } else {
        cost = engines::instruction_cost(si.d, engine, *j.arch, *j.memory);
      }
      res.clear();
      if (j.may_claim[q]) {
        resources_of(j, si, q, cost, res);
        res.erase(std::remove_if(res.begin(), res.end(),
                                 [&](const ResourceUse &r) { return !j.contended[static_cast<size_t>(r.id)]; }),
                  res.end());
      }
      const bool shared = !res.empty();
      // Explicit semaphores and shared resources are decided at the moment the instruction is ready.
      if (shared || !inst.waits.empty()) wait_until(ready);
      for (const auto &w : inst.waits)
        while (!stale && !(stale = generation != gen) && !j.aborted && !sem_ready(j, w)) wait(sem_changed);
      if (stale || generation != gen || j.aborted) continue;
      int64_t start = std::max(ready, now_ps());
      const int64_t sem_ready_at = start;  // the waits' reasons: [queue_free, ready) dependency, then semaphore
      // TensorE LoadStationary (reference neuron-arch.md 2.1 [ARCH2, PERF Opt #7]): the weights stay in the array
      // for a matmul with the same stationary operand; a new one loads in the background of the previous
      // MultiplyMoving when the array runs back to back, and is paid in full after an idle gap. A matmul after an
      // idle gap also fills and drains the array, its MultiplyMoving starting at least ~26 ns after its
      // LoadStationary (calibration.md E4).
      int64_t occupancy = to_ps(cost.ns), extra_cycles = 0;
      const bool matmul = q == kPeQueue && !si.trigger && is_matmul(inst.type) && !inst.f.is_transpose;
      if (matmul && cost.weight_load_ns > 0) {
        const bool idle = j.pe_end == INT64_MIN || start > j.pe_end + j.pe_other_ps;
        const bool same = j.pe_stationary && !si.d.ins.empty() && same_access(*j.pe_stationary, si.d.ins[0]);
        int64_t exposed = 0;
        if (!same) {
          const int64_t ls = to_ps(cost.weight_load_ns);
          if (!idle) {
            exposed = std::max<int64_t>(0, ls - j.pe_mm_ps);
            extra_cycles = static_cast<int64_t>(static_cast<double>(cost.weight_load_cycles) * exposed /
                                                    static_cast<double>(ls) + 0.5);
          } else {
            // After an idle array: at least pe_isolated_ls_cycles; it loads behind the PE instructions that do not
            // use the array run just before (a sync carrier's slot).
            const bool iso = cost.isolated_ls_ns > cost.weight_load_ns;
            const int64_t full = iso ? to_ps(cost.isolated_ls_ns) : ls;
            const int64_t full_cycles = iso ? cost.isolated_ls_cycles : cost.weight_load_cycles;
            const int64_t behind = start == j.pe_other_end ? std::min(full, j.pe_other_run) : 0;
            exposed = full - behind;
            extra_cycles = static_cast<int64_t>(static_cast<double>(full_cycles) * exposed / static_cast<double>(full) + 0.5);
          }
        }
        if (idle) exposed += to_ps(cost.fill_drain_ns), extra_cycles += cost.fill_drain_cycles;
        occupancy += exposed;
      }
      // ScalarE holds one activation-function set (reference neuronx-cc/arch/activation-engine.md): an activation
      // whose function the resident set lacks loads the first set that holds it (the compiler's set order), for
      // act_table_load_ns of ACT (calibration.md E1); a LoadActFuncSet makes its set resident.
      if (q == kActQueue && !si.trigger) {
        if (inst.type == isa::InstructionType::LoadActFuncSet) {
          j.act_set = static_cast<int>(inst.f.act_func_set_id);
        } else if (inst.type == isa::InstructionType::Activation || inst.type == isa::InstructionType::Exponential) {
          const uint32_t holding = isa::act_func_sets_holding(
              inst.type == isa::InstructionType::Exponential ? isa::ActivationFunctionType::Exp : inst.f.act_func);
          if (holding && !(j.act_set >= 0 && j.act_set < 32 && (holding >> j.act_set & 1u))) {
            occupancy += to_ps(j.arch->act_table_load_ns);
            extra_cycles += static_cast<int64_t>(j.arch->act_table_load_ns * j.arch->act_ghz + 0.5);
            j.act_set = __builtin_ctz(holding);
            ++j.result->act_table_loads;
          }
        }
      }
      int64_t end = start + occupancy;
      int limiting = -1;
      if (shared) {
        // Shared resources are granted in program order among the requests made in the same delta cycle, so
        // that contention does not depend on the order SystemC happens to run its threads in.
        Claim c{seq, &res, occupancy, sc_core::sc_delta_count()};
        j.claims.push_back(&c);
        wait(sc_core::SC_ZERO_TIME);
        if (!c.granted) arbitrate(j);
        start = c.start;
        end = c.end;
        limiting = c.limiting;
        wait_until(start);
      }
      if (q == kPeQueue && !si.trigger) {
        // The array's last use: a PE instruction that does not use it (a semaphore carrier, a sequencer
        // instruction) leaves it idle for its own occupancy, and makes no gap by itself.
        if (is_matmul(inst.type)) {
          j.pe_end = end, j.pe_mm_ps = to_ps(cost.ns), j.pe_other_ps = 0;
        } else {
          j.pe_other_ps += occupancy;
          j.pe_other_run = start == j.pe_other_end ? j.pe_other_run + occupancy : occupancy;
          j.pe_other_end = end;
        }
        j.pe_stationary = matmul && !si.d.ins.empty() ? &si.d.ins[0] : nullptr;
        j.pe_stationary_pos = j.pe_stationary ? pos : INT64_MAX;
      }

      // 3. Semantics, then occupancy and completion. Every kCancelPollInstructions instructions (over all queues)
      // the caller may stop the run; it ends as a failing instruction ends it. (The exception is made, not thrown,
      // here: nothing unwinds a SystemC thread's stack.)
      if ((j.cancelled || j.progress) && --j.until_poll <= 0) {
        j.until_poll = kCancelPollInstructions;
        j.polled += kCancelPollInstructions;
        if (j.progress)
          (*j.progress)(j.polled, j.engine_instructions,
                        static_cast<double>(start - j.t0) / 1000.0);
        if (j.cancelled && (*j.cancelled)()) {
          abort_run(j, std::make_exception_ptr(RunCancelled()));
          continue;
        }
      }
      if (j.device && !si.trigger && is_collective(inst.type)) {
        // Several cores: the collective meets its group's other members (sim/device.hpp), which execute it when
        // the last one arrives; it occupies the queue until it completes.
        wait_until(start);
        bool stale = false;
        Rendezvous *rv = j.device->arrive(j.core, si, start);
        while (rv && !(stale = generation != gen) && !j.aborted && !rv->done) wait(collective_done);
        if (stale || generation != gen || j.aborted) continue;
        if (rv && rv->error) {
          abort_run(j, rv->error);
          continue;
        }
        // Its ring traffic shares the device's HBM: a transfer entering later may delay it (re-read until passed).
        for (int64_t f; rv && !rv->hbm.empty() && !(stale = generation != gen) && !j.aborted &&
                        (f = j.device->finish_ps(*rv)) > now_ps();)
          wait(sc_time(static_cast<double>(f - now_ps()), SC_PS));
        if (stale || generation != gen || j.aborted) continue;
        if (rv) end = std::max(end, j.device->finish_ps(*rv)), occupancy = end - start;
      } else if (!execute(j, q, si)) {
        continue;
      }
      int64_t finish = end + to_ps(cost.latency_ns);
      if (prev) finish = std::max(finish, prev->finish);  // completions stay in queue order
      PosTimes &here = j.times[q].make(pos);
      here.finish = finish;
      here.release = end;
      here.seq = seq;
      j.next[q] = pos + 1;
      j.known[q] = pos + 1;
      issued[q].notify(sc_core::SC_ZERO_TIME);
      if (!inst.updates.empty() || resets_semaphores(inst)) {
        j.pending[q].push_back(PendingUpdates{finish, &inst});
        completion[q]->notify(sc_time(static_cast<double>(finish - now_ps()), SC_PS));
      }
      auto &qs = j.result->queues[q];
      ++qs.instructions;
      const double busy = static_cast<double>(occupancy) / 1000.0;
      qs.busy_ns += busy;
      qs.cycles += cost.cycles + extra_cycles;
      if (!si.trigger) {
        const engines::Work w = engines::instruction_work(si.d);
        qs.elements += w.elements, qs.flops += w.flops;
      }
      TraceEvent &ev = j.new_event();
      ev.queue = q, ev.seq = seq, ev.inst = inst.index;
      ev.issue_ns = ev.start_ns = static_cast<double>(start - j.t0) / 1000.0;
      ev.end_ns = static_cast<double>(end - j.t0) / 1000.0;
      ev.finish_ns = static_cast<double>(finish - j.t0) / 1000.0;
      ev.gate = gate;
      ev.busy_ns = busy;
      auto waited = [&](WaitReason why, int64_t from, int64_t to) {
        if (to > from) ev.wait_ns[static_cast<size_t>(why)] += static_cast<double>(to - from) / 1000.0;
      };
      waited(WaitReason::Dependency, queue_free, ready);
      waited(inst.waits.empty() ? WaitReason::Dependency : WaitReason::Semaphore, ready, sem_ready_at);
      waited(resource_reason(limiting), std::max(sem_ready_at, queue_free), start);
      if (j.stream && !j.recorded(ev, si.trigger, pos, gate_at)) abort_run(j, j.record_error);
      if (j.on_event) (*j.on_event)(ev, si, *j.result);
      // The previous matmul's entry stays while pe_stationary points into it.
      j.done_with(q, q == kPeQueue ? std::min(pos + 1, j.pe_stationary_pos) : pos + 1);
    }
  }

  // A DMA transfer (docs/timing-model.md 2): its trigger has issued (the waits); it waits for a slot in its queue's
  // ring -- the transfer dma_ring_depth places earlier must have completed --, enters the ring and hands its
  // descriptors to the DMA engines. Its completion is published by the DMA thread.
  void dma_transfer(Job &j, int q, int64_t pos, int64_t seq, const ScheduledInst &si, int64_t queue_free,
                    int64_t ready, int64_t gate, int64_t gate_at, uint64_t gen) {
    const isa::Inst &inst = *si.d.inst;
    const int64_t dep_ready = ready;
    const int64_t depth = std::max(1, j.arch->dma_ring_depth);
    if (pos >= depth) {
      const int64_t k = pos - depth;
      bool stale = false;
      while (!(stale = generation != gen) && !j.aborted && j.known[q] <= k) wait(issued[q]);
      if (stale || j.aborted) return;
      const PosTimes *p = times_of(j, q, k);
      if (!p) return;
      if (p->finish > ready) ready = p->finish, gate = p->seq, gate_at = path_at(q, k);
    }
    wait_until(ready);
    bool stale = false;
    for (const auto &w : inst.waits)
      while (!stale && !(stale = generation != gen) && !j.aborted && !sem_ready(j, w)) wait(sem_changed);
    if (stale || generation != gen || j.aborted) return;
    if (!execute(j, q, si)) return;
    const int64_t now = now_ps();
    DmaInFlight &f = j.dma[q].make(pos);
    f.seq = seq;
    f.wait_dep = std::max<int64_t>(0, dep_ready - queue_free);
    f.wait_ring = std::max<int64_t>(0, ready - std::max(dep_ready, queue_free));
    f.wait_sem = std::max<int64_t>(0, now - std::max(ready, queue_free));
    const engines::DmaTransfer t = engines::dma_transfer(si.d, *j.arch, *j.memory);
    const int64_t first_byte = j.engines.submit(seq, q - kNumEngines, now, t);
    f.hbm = -1;
    if (t.touches_hbm && t.bytes > 0)  // its bytes pass the HBM pool from its first byte on (docs/timing-model.md 2.3)
      f.hbm = j.hbm_add(now, first_byte, static_cast<double>(t.bytes), t.stream_bytes_per_ns);
    f.issue = now;
    f.gate = gate;
    f.gate_at = gate_at;
    f.bytes = t.bytes;
    f.descriptors = t.descriptors;
    f.split = engines::dma_time_split(t, *j.arch, j.device_hbm());
    PosTimes &here = j.times[q].make(pos);
    here.release = now;
    here.seq = seq;
    j.next[q] = pos + 1;
    if (j.engines.next_completion() < j.dma_target) dma_kick.notify(sc_core::SC_ZERO_TIME);
  }
};

// Core i of a run. All kMaxCores are made on first use, before any sc_start (modules cannot be made after it); an
// idle core's threads sleep on their kicks and cost nothing.
Core &core(int i) {
  static std::array<Core *, kMaxCores> cores = [] {
    // SystemC prints its banner on first elaboration; a simulator's output should be its own.
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    std::array<Core *, kMaxCores> c{};
    c[0] = new Core("neuroncore");
    for (int k = 1; k < kMaxCores; ++k) c[static_cast<size_t>(k)] = new Core(("neuroncore" + std::to_string(k)).c_str());
    return c;
  }();
  return *cores[static_cast<size_t>(i)];
}

} // namespace

void load_core(Job &j) {
  Core &c = core(j.core);
  c.job = &j;
  ++c.generation;
  if (j.device) j.device->on_wake(j.core, [&c] { c.collective_done.notify(sc_core::SC_ZERO_TIME); });
  for (auto &k : c.kick) k.notify(sc_core::SC_ZERO_TIME);
  for (auto &e : c.issued) e.notify(sc_core::SC_ZERO_TIME);
  c.sem_changed.notify(sc_core::SC_ZERO_TIME);
  c.dma_kick.notify(sc_core::SC_ZERO_TIME);
  c.collective_done.notify(sc_core::SC_ZERO_TIME);  // a thread parked at an earlier run's rendezvous drops it
}

void unload_core(const Job &j) { core(j.core).job = nullptr; }

void run_on_core(Job &j) {
  load_core(j);
  start_simulation();
  unload_core(j);
}

void start_simulation() { sc_core::sc_start(); }

void clear_stack_shadow() {
#if defined(__SANITIZE_ADDRESS__)
  // Debian's SystemC switches to its coroutine stacks without telling AddressSanitizer, after which ASan no longer
  // knows the main stack's bounds: at a throw its __asan_handle_no_return gives up ("False positive error reports
  // may follow") and the unwound frames' redzones stay poisoned, so the next frames made there (or ASan's own
  // sigaltstack call) are misreported as stack-buffer-overflows. Done here by hand before such a throw, as ASan
  // does itself at every throw: the shadow around this frame is cleared (live frames lose their redzones until
  // they return; dead ones are made again with theirs).
  constexpr size_t kSpan = size_t(1) << 20;
  char *const here = static_cast<char *>(__builtin_frame_address(0));
  __asan_unpoison_memory_region(here - kSpan, 2 * kSpan);
#endif
}

void pass_last_slices(Job &j) { Core::pass_slices(j, 0); }

bool Job::recorded(const TraceEvent &ev, bool trigger, int64_t pos, int64_t gate_at) {
  if (collect) {
    if ((*collect)[static_cast<size_t>(ev.seq)]) collected.push_back(ev);
    return true;
  }
  ProfileSums &p = result->profile[static_cast<size_t>(profile_row(ev.inst, ev.queue))];
  if (p.queue < 0) p.queue = ev.queue, p.trigger = trigger;
  // The sums profile_json makes from RunResult::events, in the same order: the same doubles.
  ++p.executions;
  p.busy_ns += ev.busy_ns;
  for (int i = 0; i < kNumWaitReasons; ++i) p.wait_ns[static_cast<size_t>(i)] += ev.wait_ns[static_cast<size_t>(i)];
  if (last_seq < 0 || ev.finish_ns > last_finish) last_seq = ev.seq, last_at = path_at(ev.queue, pos), last_finish = ev.finish_ns;
  tail.push_back(ev);
  if (static_cast<int64_t>(tail.size()) > kStreamedEventTail) tail.pop_front();
  // Each queue records its positions in order, so its log's next record is this position's.
  if (pos != path->size(ev.queue)) {
    record_error = std::make_exception_ptr(std::logic_error("internal: the streamed run recorded " +
                                                            std::string(queue_name(ev.queue)) + " position " +
                                                            std::to_string(pos) + " out of order"));
    return false;
  }
  PathRecord r;
  r.issue_ns = ev.issue_ns;
  r.seq = static_cast<uint32_t>(ev.seq);
  r.row = static_cast<int32_t>(profile_row(ev.inst, ev.queue));
  if (gate_at >= 0) r.gate_pos1 = static_cast<uint32_t>(gate_at / kMaxQueues + 1), r.gate_queue = static_cast<uint8_t>(gate_at % kMaxQueues);
  if (path->add(ev.queue, r)) return true;
  record_error = path->error();
  return false;
}

void Job::done_with(int q, int64_t pos) {
  if (!stream) return;
  stream->release(q, pos);
  dma[q].trim(known[q]);
  const int64_t base = known[q] - kStreamHorizon;
  if (base > times[q].base() && times[q].has(base - 1)) trimmed_finish[q] = times[q][base - 1].finish;
  times[q].trim(base);
}

std::string describe_wait(const Job &j, int q) {
  const ScheduledInst &si = j.entry(q, std::min<int64_t>(j.next[q], j.known[q]));
  std::string s = std::string(queue_name(q)) + " blocked at instruction " + std::to_string(si.d.inst->index) +
                  " '" + si.d.inst->name + "' (" + isa::inst_type_name(si.d.inst->type) +
                  (si.trigger ? ", its DMA trigger" : "") + ")";
  for (const auto &w : si.waits)
    if (j.known[w.queue] < w.count)
      s += ", waiting for queue " + std::string(queue_name(w.queue)) + " to complete " + std::to_string(w.count) +
           " (has completed " + std::to_string(j.known[w.queue]) + ")";
  for (const auto &w : si.d.inst->waits)
    if (!sem_ready(j, w))
      s += ", waiting for semaphore " + std::to_string(w.sem) +
           (w.mode == isa::SemWait::Mode::EqImm ? " == " : " >= ") + std::to_string(w.value) + " (is " +
           std::to_string(j.sem[static_cast<size_t>(w.sem)]) + ")";
  return s;
}


} // namespace neuronsim::sim::core_detail
