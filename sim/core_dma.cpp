// The DMA side of the core: a transfer entering its queue's ring (Core::dma_transfer, called by the queue's
// thread), the DMA thread that sleeps until the DMA engines' next completion, and the publication of final
// completions in queue order (docs/timing-model.md 2). The module: sim/core_module.hpp.
#include <algorithm>

#include "sim/core_module.hpp"

namespace neuronsim::sim::core_detail {

// A transfer of the compiler's spill code: on a qSyncSpillReload queue (a Save out to DRAM, a Load back), the queue
// the NKI docs' performance guide shows spills and reloads on.
static bool is_spill(const isa::Inst &inst) { return inst.f.queue.rfind("qSyncSpillReload", 0) == 0; }

// Publishes the completions of DMA queue q that are final, in queue order (completions stay in queue order: a
// queue's semaphore counts finished transfers).
void Core::publish(Job &j, int q) {
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
      j.pending[q].push_back(PendingUpdates{finish, &inst, pos});
      completion[q]->notify(sc_time(static_cast<double>(std::max<int64_t>(0, finish - now_ps())), SC_PS));
    }
    auto &qs = j.result->queues[q];
    ++qs.instructions;
    qs.busy_ns += static_cast<double>(f.busy) / 1000.0;
    qs.bytes += f.bytes;
    qs.descriptors += f.descriptors;
    if (is_spill(inst)) (inst.type == isa::InstructionType::Save ? j.result->spill_save_bytes
                                                                 : j.result->spill_reload_bytes) += f.bytes;
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
    // After entering the ring: the latency (part of the transfer), then the wait for its engines' descriptor
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
void Core::dma_thread() {
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
      f.descriptor_ps = d.descriptor_ps;
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
void Core::pass_slices(Job &j, size_t keep) {
  if (keep > 0) j.engines.drain_slices(j.slice_scratch, keep);
  else j.slice_scratch = j.engines.take_slices();
  if (j.slice_scratch.empty()) return;
  for (auto &sl : j.slice_scratch) sl.start_ps -= j.t0, sl.end_ps -= j.t0;
  (*j.on_slices)(j.slice_scratch);
  j.slice_scratch.clear();
}

// A DMA transfer (docs/timing-model.md 2): its trigger has issued (the waits); it waits for a slot in its queue's
// ring -- the transfer dma_ring_depth places earlier must have completed --, enters the ring and hands its
// descriptors to the DMA engines. Its completion is published by the DMA thread.
void Core::dma_transfer(Job &j, int q, int64_t pos, int64_t seq, const ScheduledInst &si, int64_t queue_free,
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

} // namespace neuronsim::sim::core_detail
