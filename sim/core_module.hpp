// The SystemC module of a NeuronCore (sim/core.cpp): its events, its threads -- one per in-order queue
// (sim/core_issue.cpp) and one for the DMA engines (sim/core_dma.cpp) -- and the helpers they share, the shared
// resources among them (sim/core_resources.cpp). Private to sim/; only the files that define the module include
// it (it brings in SystemC). The run's state is a Job (sim/core_job.hpp).
#pragma once

#ifndef SC_INCLUDE_DYNAMIC_PROCESSES
#define SC_INCLUDE_DYNAMIC_PROCESSES
#endif
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <vector>
#include <systemc>

#include "neuronsim/engines/cost.hpp"
#include "sim/core_job.hpp"

namespace neuronsim::sim::core_detail {

using sc_core::sc_time;
using sc_core::SC_PS;

// Explicit semaphores (sim/core.cpp): whether an instruction's completion clears a semaphore group, and whether
// a wait holds.
bool resets_semaphores(const isa::Inst &inst);
bool sem_ready(const Job &j, const isa::SemWait &w);

// Shared resources (sim/core_resources.cpp): the wait reason a resource stands for, the grant of the claims made
// before the current delta cycle, and the resources an engine instruction uses.
WaitReason resource_reason(int id);
void arbitrate(Job &j);
void resources_of(const Job &j, const ScheduledInst &si, int q, const engines::Cost &cost,
                  std::vector<ResourceUse> &out);

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

  SC_CTOR(Core);

  int64_t now_ps() const { return static_cast<int64_t>(sc_core::sc_time_stamp().value()); }
  void wait_until(int64_t t) {
    const int64_t now = now_ps();
    if (t > now) wait(sc_time(static_cast<double>(t - now), SC_PS));
  }

  // sim/core.cpp
  void apply_completion(int q);
  void abort_run(Job &j, std::exception_ptr error);
  bool execute(Job &j, int q, const ScheduledInst &si);
  const ScheduledInst *fetch(Job &j, int q, int64_t pos);
  const PosTimes *times_of(Job &j, int q, int64_t pos);
  // sim/core_issue.cpp
  void queue_thread(int q);
  // sim/core_dma.cpp
  void publish(Job &j, int q);
  void dma_thread();
  static void pass_slices(Job &j, size_t keep);
  void dma_transfer(Job &j, int q, int64_t pos, int64_t seq, const ScheduledInst &si, int64_t queue_free,
                    int64_t ready, int64_t gate, int64_t gate_at, uint64_t gen);

  // Per-queue scratch kept by the (never destroyed) core, not on the thread's coroutine stack, which SystemC
  // never unwinds: a local there would be reported as leaked at exit.
  std::array<std::vector<ResourceUse>, kMaxQueues> resources_scratch;
};

} // namespace neuronsim::sim::core_detail
