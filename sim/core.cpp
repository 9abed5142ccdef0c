// The SystemC core: one thread per in-order queue (five engines + DMA queues). An instruction waits on the
// completion counters (semaphores) of the queues it depends on, executes its semantics, then holds its queue for
// its cost before counting itself done. Time is event-driven (no clock ticking; DESIGN.md 4).
//
// SystemC modules can only be elaborated once per process, so the core is built on first use and reused: each
// run loads new queues, kicks the threads and calls sc_start() until the model starves.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <cstdlib>
#include <exception>
#include <systemc>

#include "neuronsim/engines/cost.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

namespace {

struct Job {
  const Schedule *schedule = nullptr;
  engines::Memory *memory = nullptr;
  const engines::ArchParams *arch = nullptr;
  bool timing_only = false;
  const std::function<void(const ScheduledInst &, const engines::Memory &)> *after = nullptr;  // RunOptions hook
  sc_core::sc_time t0;
  std::array<int64_t, kMaxQueues> done{};   // semaphores: completed instructions per queue
  std::array<int64_t, kMaxQueues> next{};   // next queue position to issue
  std::array<engines::EngineState, kMaxQueues> state;
  std::array<int64_t, kNumSemaphores> sem{};  // the program's own semaphores (explicit sync)
  RunResult *result = nullptr;
  std::exception_ptr error;
  bool aborted = false;
};

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

SC_MODULE(Core) {
  std::array<sc_core::sc_event, kMaxQueues> kick;
  std::array<sc_core::sc_event, kMaxQueues> completed;
  sc_core::sc_event sem_changed;
  Job *job = nullptr;

  SC_CTOR(Core) {
    for (int q = 0; q < kMaxQueues; ++q) {
      sc_core::sc_spawn_options opts;
      sc_core::sc_spawn([this, q] { queue_thread(q); }, sc_core::sc_gen_unique_name("queue"), &opts);
    }
  }

  // Bumped by every run: a thread still parked in an earlier run's wait (a deadlocked or aborted run leaves
  // them there) sees the change and drops that run's instruction without touching its state.
  uint64_t generation = 0;

  void queue_thread(int q) {
    for (;;) {
      while (!job || job->aborted || job->next[q] >= static_cast<int64_t>(job->schedule->queues[q].size()))
        wait(kick[q]);
      const uint64_t gen = generation;
      Job &j = *job;
      const ScheduledInst &si = j.schedule->insts[j.schedule->queues[q][j.next[q]]];
      // Semaphore waits: each producer queue's completion counter must reach the required count, and the
      // program's own semaphores their values.
      bool stale = false;
      for (const auto &w : si.waits)
        while (!(stale = generation != gen) && !j.aborted && j.done[w.queue] < w.count) wait(completed[w.queue]);
      for (const auto &w : si.d.inst->waits)
        while (!stale && !(stale = generation != gen) && !j.aborted && !sem_ready(j, w)) wait(sem_changed);
      if (stale || generation != gen || j.aborted) continue;
      const sc_core::sc_time start = sc_core::sc_time_stamp();
      const engines::Cost cost = engines::instruction_cost(si.d, queue_engine(q), *j.arch, *j.memory);
      if (!j.timing_only) {
        try {
          j.memory->set_context(ErrorContext{j.memory->program().file, si.d.inst->index, si.d.inst->name, ""});
          engines::execute(si.d, *j.memory, j.state[q]);
          if (j.after) (*j.after)(si, *j.memory);
        } catch (...) {
          j.error = std::current_exception();
          j.aborted = true;
          for (auto &k : kick) k.notify(sc_core::SC_ZERO_TIME);
          for (auto &c : completed) c.notify(sc_core::SC_ZERO_TIME);
          continue;
        }
      }
      wait(sc_core::sc_time(cost.ns * 1000.0, sc_core::SC_PS));
      ++j.next[q];
      ++j.done[q];
      completed[q].notify(sc_core::SC_ZERO_TIME);
      if (!si.d.inst->updates.empty()) {
        for (const auto &u : si.d.inst->updates) apply_update(j, u);
        sem_changed.notify(sc_core::SC_ZERO_TIME);
      }
      auto &qs = j.result->queues[q];
      ++qs.instructions;
      qs.busy_ns += cost.ns;
      qs.cycles += cost.cycles;
      if (q >= kNumEngines)
        for (const auto &o : si.d.outs)
          if (o.tensor >= 0) qs.bytes += o.partitions() * o.free_elements() * isa::dtype_size(o.dtype);
      j.result->events.push_back(TraceEvent{q, si.d.seq, si.d.inst->index, (start - j.t0).to_seconds() * 1e9,
                                            (sc_core::sc_time_stamp() - j.t0).to_seconds() * 1e9});
    }
  }
};

Core &core() {
  static Core *c = [] {
    // SystemC prints its banner on first elaboration; a simulator's output should be its own.
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    return new Core("neuroncore");
  }();
  return *c;
}

std::string describe_wait(const Job &j, int q) {
  const auto &qi = j.schedule->queues[q];
  const ScheduledInst &si = j.schedule->insts[qi[j.next[q]]];
  std::string s = std::string(queue_name(q)) + " blocked at instruction " + std::to_string(si.d.inst->index) +
                  " '" + si.d.inst->name + "' (" + isa::inst_type_name(si.d.inst->type) + ")";
  for (const auto &w : si.waits)
    if (j.done[w.queue] < w.count)
      s += ", waiting for queue semaphore " + std::string(queue_name(w.queue)) + " >= " + std::to_string(w.count) +
           " (is " + std::to_string(j.done[w.queue]) + ")";
  for (const auto &w : si.d.inst->waits)
    if (!sem_ready(j, w))
      s += ", waiting for semaphore " + std::to_string(w.sem) +
           (w.mode == isa::SemWait::Mode::EqImm ? " == " : " >= ") + std::to_string(w.value) + " (is " +
           std::to_string(j.sem[static_cast<size_t>(w.sem)]) + ")";
  return s;
}

} // namespace

Simulator::Simulator(const isa::Program &program, const RunOptions &options)
    : program_(program), options_(options), arch_(engines::builtin_arch(options.arch)) {
  memory_ = std::make_unique<engines::Memory>(program_, arch_);
  schedule_ = build_schedule(program_, *memory_, arch_);
}

Simulator::~Simulator() = default;

RunResult Simulator::run() {
  Core &c = core();
  RunResult result;
  result.arch = arch_.name;
  result.dynamic_instructions = static_cast<int64_t>(schedule_.insts.size());
  for (int q = 0; q < kMaxQueues; ++q) result.queues[q].name = queue_name(q);
  result.events.reserve(schedule_.insts.size());

  auto job = std::make_unique<Job>();
  job->schedule = &schedule_;
  job->memory = memory_.get();
  job->arch = &arch_;
  job->timing_only = options_.timing_only;
  if (options_.after_instruction) job->after = &options_.after_instruction;
  job->result = &result;
  job->t0 = sc_core::sc_time_stamp();
  c.job = job.get();
  ++c.generation;
  for (auto &k : c.kick) k.notify(sc_core::SC_ZERO_TIME);
  for (auto &e : c.completed) e.notify(sc_core::SC_ZERO_TIME);
  c.sem_changed.notify(sc_core::SC_ZERO_TIME);
  sc_core::sc_start();
  c.job = nullptr;

  if (job->error) std::rethrow_exception(job->error);
  std::string blocked;
  for (int q = 0; q < kMaxQueues; ++q)
    if (job->next[q] < static_cast<int64_t>(schedule_.queues[q].size()))
      blocked += (blocked.empty() ? "" : "; ") + describe_wait(*job, q);
  if (!blocked.empty()) throw SimulationError({program_.file, -1, "", ""}, "deadlock: " + blocked);

  for (const auto &e : result.events) result.total_ns = std::max(result.total_ns, e.end_ns);
  return result;
}

} // namespace neuronsim::sim
