// An engine queue's thread (sim/core.cpp step list): an instruction waits for its dependencies, then for the
// shared resources it needs, executes, occupies its queue for its cost (TensorE's LoadStationary hiding and
// ScalarE's activation-table loads included) and completes `latency` later; a DMA transfer is handed to
// Core::dma_transfer (sim/core_dma.cpp). The module: sim/core_module.hpp.
#include <algorithm>

#include "sim/core_module.hpp"
#include "sim/sanitizer.hpp"

namespace neuronsim::sim::core_detail {

namespace {

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

} // namespace

void Core::queue_thread(int q) {
  std::vector<ResourceUse> &res = resources_scratch[static_cast<size_t>(q)];
  for (;;) {
    while (!job || job->aborted || job->next[q] >= job->length[q]) wait(kick[q]);
    const uint64_t gen = generation;
    Job &j = *job;
    const int64_t pos = j.next[q];
    // A streamed run's entry far ahead whose walk would pass the other queues' (detaching them: a walk each
    // again) is asked for once a wait it is sure to have is met, as its own waits below would block until then
    // anyway; the time it was asked at stays `asked` (ScheduleStream::certain_wait).
    const int64_t asked = now_ps();
    if (const QueueWait *cw = j.stream ? j.stream->certain_wait(q, pos) : nullptr) {
      const QueueWait w = *cw;
      bool stale_early = false;
      while (!(stale_early = generation != gen) && !j.aborted && j.known[w.queue] < w.count) wait(issued[w.queue]);
      if (stale_early || j.aborted) continue;
    }
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
    int64_t ready = std::max(asked, queue_free);
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
      int64_t t = p->finish;
      // A DVE instruction reading what the DVE instruction before it wrote sees it dve_dependent_latency_cycles
      // after that one's occupancy (calibration.md E6: dependent tiny DVE instructions issue about every MIN_II),
      // not after the ~100-cycle static overhead another engine's reader waits (docs/timing-model.md 4).
      if (w.queue == q && q == kDveQueue) t = std::min(t, p->release + j.dve_same_engine_ps);
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
      if (j.sanitizer) j.sanitizer->on_arrive(j.core, q, pos, si, rv);
      while (rv && !(stale = generation != gen) && !j.aborted && !rv->done) wait(collective_done);
      if (stale || generation != gen || j.aborted) continue;
      if (j.sanitizer && rv && !rv->error && !sanitize_meet(j, q, pos, si, rv)) continue;
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
      j.pending[q].push_back(PendingUpdates{finish, &inst, pos});
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

} // namespace neuronsim::sim::core_detail
