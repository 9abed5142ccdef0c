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
// Here: the module's construction, the explicit semaphores, running an instruction's semantics, aborting a run,
// and the cores themselves (load_core, run_on_core ...); the queue threads are in sim/core_issue.cpp, the DMA
// thread in sim/core_dma.cpp, the shared resources in sim/core_resources.cpp (the module: sim/core_module.hpp).
//
// The run's state is a Job (sim/core_job.hpp); sim/core_run.cpp sets it up and assembles the result.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include "sim/core_module.hpp"

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

namespace {

void apply_update(Job &j, const isa::SemUpdate &u) {
  int64_t &v = j.sem[static_cast<size_t>(u.sem)];
  switch (u.mode) {
  case isa::SemUpdate::Mode::Inc: v += 1; break;
  case isa::SemUpdate::Mode::Dec: v -= 1; break;
  case isa::SemUpdate::Mode::Set: v = u.value; break;
  case isa::SemUpdate::Mode::Add: v += u.value; break;
  }
}

} // namespace

Core::Core(sc_core::sc_module_name) {
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

// Explicit semaphore updates take effect when the instruction completes (after its latency).
void Core::apply_completion(int q) {
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
void Core::abort_run(Job &j, std::exception_ptr error) {
  j.error = std::move(error);
  j.aborted = true;
  for (auto &k : kick) k.notify(sc_core::SC_ZERO_TIME);
  for (auto &e : issued) e.notify(sc_core::SC_ZERO_TIME);
  sem_changed.notify(sc_core::SC_ZERO_TIME);
  dma_kick.notify(sc_core::SC_ZERO_TIME);
}

// Runs one instruction's semantics (not in timing-only runs); false when it failed (the run is aborted).
bool Core::execute(Job &j, int q, const ScheduledInst &si) {
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

// Queue q's entry at pos; null when a streamed run's walk failed (the run is aborted with its error).
const ScheduledInst *Core::fetch(Job &j, int q, int64_t pos) {
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
const PosTimes *Core::times_of(Job &j, int q, int64_t pos) {
  if (j.times[q].has(pos)) return &j.times[q][pos];
  abort_run(j, std::make_exception_ptr(SimulationError(
                   {j.memory->program().file, -1, "", ""},
                   "internal: a dependency on " + std::string(queue_name(q)) + " position " + std::to_string(pos) +
                       " reaches back past the streamed run's window of " + std::to_string(kStreamHorizon) +
                       " positions; run with --schedule=whole")));
  return nullptr;
}

namespace {

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
