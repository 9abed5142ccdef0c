// The SystemC core: one thread per in-order queue (five engines + DMA queues). An instruction
//   1. waits for the instructions it depends on to complete (the inferred waits: a producer queue's i-th
//      instruction; or the program's own semaphores),
//   2. waits for the shared resources it needs (PSUM banks it writes, the DVE/POOL SBUF port on NeuronCore-v2,
//      the DMA engines' bandwidth),
//   3. executes its semantics, occupies its queue for its cost, and completes `latency` later.
// Time is event-driven (no clock ticking; DESIGN.md 4); the unit inside SystemC is ps.
//
// SystemC modules can only be elaborated once per process, so the core is built on first use and reused: each
// run loads new queues, kicks the threads and calls sc_start() until the model starves.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <cstdlib>
#include <algorithm>
#include <deque>
#include <exception>
#include <malloc.h>
#include <systemc>

#include "neuronsim/engines/cost.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

namespace {

using sc_core::sc_time;
using sc_core::SC_PS;

constexpr int kPsumBankResources = 8;                  // one per PSUM bank (reference neuron-arch.md 1.4)
constexpr int kDvePoolPort = kPsumBankResources;       // NeuronCore-v2 shared DVE/POOL SBUF port [ARCH2]
constexpr int kNumResources = kPsumBankResources + 1;

int64_t to_ps(double ns) { return static_cast<int64_t>(ns * 1000.0 + 0.5); }

struct PendingUpdates {
  int64_t at_ps;
  const isa::Inst *inst;
};

// GroupResetSemaphores writes 0 to every semaphore of its group (reference neuronx-cc/bir/
// sim-control-sync-customop.md 5.1: birsim ignores `mode`); SwitchQueueInstance clears the queue instance's
// semaphore group first (5.2; this reader takes the group from the instruction's `sema_group`).
bool resets_semaphores(const isa::Inst &inst) {
  return (inst.type == isa::InstructionType::GroupResetSemaphores ||
          inst.type == isa::InstructionType::SwitchQueueInstance) &&
         !inst.f.sema_group.empty();
}

// A request for shared resources (PSUM banks, the DVE/POOL port, DMA bandwidth) made at one delta cycle.
struct Claim {
  int64_t seq;
  const std::vector<int> *resources;
  bool dma;
  int64_t occupancy_ps;
  uint64_t delta;
  bool granted = false;
  int64_t start = 0, end = 0;
};

struct Job {
  const Schedule *schedule = nullptr;
  engines::Memory *memory = nullptr;
  const engines::ArchParams *arch = nullptr;
  bool timing_only = false;
  const std::function<void(const ScheduledInst &, const engines::Memory &)> *after = nullptr;  // RunOptions hook
  const std::function<bool()> *cancelled = nullptr;  // RunOptions hook
  int64_t until_poll = kCancelPollInstructions;      // instructions to issue before `cancelled` is polled again
  int64_t t0 = 0;                                    // ps at the start of the run
  std::array<int64_t, kMaxQueues> next{};            // next queue position to issue (= instructions issued)
  std::array<std::vector<int64_t>, kMaxQueues> finish;   // per queue position: completion time (ps, absolute)
  std::array<std::vector<int64_t>, kMaxQueues> release;  // per queue position: end of occupancy (ps, absolute)
  // Made on a queue's first executed instruction: 21 fresh states (RNG state tables) per run were most of the
  // cost of a short run.
  std::array<std::unique_ptr<engines::EngineState>, kMaxQueues> state;
  std::array<int64_t, kNumSemaphores> sem{};         // the program's own semaphores (explicit sync)
  std::array<std::deque<PendingUpdates>, kMaxQueues> pending;
  std::array<int64_t, kNumResources> resource_free{};  // ps
  int64_t dma_free = 0;                              // ps: when the DMA engines' bandwidth is free again
  std::vector<Claim *> claim_batch, claim_later;  // arbitrate()'s scratch
  std::vector<Claim *> claims;                    // resource requests not yet granted
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

// Grants every claim made before the current delta cycle, in program order: each starts when all its resources
// are free and holds them for its occupancy; a DMA transfer's bytes go through the DMA engines' bandwidth, which
// all queues share, one transfer after another.
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
    for (int r : *c->resources) start = std::max(start, j.resource_free[static_cast<size_t>(r)]);
    int64_t end = start + c->occupancy_ps;
    if (c->dma) {
      end = std::max(start, j.dma_free) + c->occupancy_ps;
      j.dma_free = end;
    }
    for (int r : *c->resources) j.resource_free[static_cast<size_t>(r)] = end;
    c->start = start, c->end = end, c->granted = true;
  }
}

// The shared resources an instruction holds while it occupies its queue.
void resources_of(const Job &j, const ScheduledInst &si, int q, std::vector<int> &out) {
  out.clear();
  const auto &prog = j.memory->program();
  const int64_t bank_bytes = j.arch->psum_bytes_per_partition / std::max<int64_t>(1, j.arch->psum_banks);
  bool touches_sbuf = false;
  for (const auto &a : si.d.outs) {
    if (a.tensor < 0) continue;
    const auto mem = prog.tensors[a.tensor].mem;
    if (mem == isa::MemoryType::SB) touches_sbuf = true;
    if (mem != isa::MemoryType::PSUM) continue;
    // reference walrus/perfsim-cost-model.md: PSUM banks serialize their writers.
    const engines::Footprint fp = j.memory->footprint(a);
    for (int64_t b = fp.b0 / bank_bytes; b <= (fp.b1 - 1) / bank_bytes && b < kPsumBankResources; ++b)
      out.push_back(static_cast<int>(b));
  }
  for (const auto &a : si.d.ins)
    if (a.tensor >= 0 && prog.tensors[a.tensor].mem == isa::MemoryType::SB) touches_sbuf = true;
  // reference neuron-arch.md 1.4 [ARCH2]: on NeuronCore-v2 "Vector Engine and GpSimd Engine cannot access SBUF in
  // parallel" (v3 arbitrates in hardware).
  if (j.arch->dve_pool_shared_sbuf_port && touches_sbuf && (q == 2 || q == 3)) out.push_back(kDvePoolPort);
}

SC_MODULE(Core) {
  std::array<sc_core::sc_event, kMaxQueues> kick;
  std::array<sc_core::sc_event, kMaxQueues> issued;      // a queue issued an instruction (its finish is known)
  std::array<sc_core::sc_event_queue *, kMaxQueues> completion{};  // fires at each completion with updates
  sc_core::sc_event sem_changed;
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
  }

  // Per-queue scratch kept by the (never destroyed) core, not on the thread's coroutine stack, which SystemC
  // never unwinds: a local there would be reported as leaked at exit.
  std::array<std::vector<int>, kMaxQueues> resources_scratch;

  void queue_thread(int q) {
    std::vector<int> &res = resources_scratch[static_cast<size_t>(q)];
    for (;;) {
      while (!job || job->aborted || job->next[q] >= static_cast<int64_t>(job->schedule->queues[q].size()))
        wait(kick[q]);
      const uint64_t gen = generation;
      Job &j = *job;
      const int64_t pos = j.next[q];
      const int64_t seq = j.schedule->queues[q][pos];
      const ScheduledInst &si = j.schedule->insts[seq];
      const isa::Inst &inst = *si.d.inst;

      // 1. Dependencies. The gate is whatever was satisfied last (for the critical path).
      int64_t gate = -1, gate_t = pos > 0 ? j.release[q][pos - 1] : -1;
      if (pos > 0) gate = j.schedule->queues[q][pos - 1];
      // A producer's completion time is known as soon as it issues, so the waits only block until each producer
      // has issued; the thread then sleeps once, until the latest completion (one context switch, not one per
      // dependency).
      // Temporal decoupling (DESIGN.md 4, TLM loosely-timed style): a queue does not sleep through its own
      // occupancy; it keeps its local time (the end of its previous instruction) and computes the next start from
      // it, synchronizing with SystemC time only where another thread's state matters (a producer not yet
      // issued, explicit semaphores, shared resources).
      bool stale = false;
      int64_t ready = std::max(now_ps(), pos > 0 ? j.release[q][pos - 1] : j.t0);
      for (const auto &w : si.waits) {
        while (!(stale = generation != gen) && !j.aborted && j.next[w.queue] < w.count) wait(issued[w.queue]);
        if (stale || j.aborted) break;
        const int64_t t = j.finish[w.queue][w.count - 1];
        if (t > gate_t) gate_t = t, gate = j.schedule->queues[w.queue][w.count - 1];
        ready = std::max(ready, t);
      }
      if (stale || generation != gen || j.aborted) continue;

      // 2. Cost and shared resources.
      const isa::Engine engine = queue_engine(q);
      const engines::Cost cost = engines::instruction_cost(si.d, engine, *j.arch, *j.memory);
      resources_of(j, si, q, res);
      const bool shared = engine == isa::Engine::DMA || !res.empty();
      // Explicit semaphores and shared resources are decided at the moment the instruction is ready.
      if (shared || !inst.waits.empty()) wait_until(ready);
      for (const auto &w : inst.waits)
        while (!stale && !(stale = generation != gen) && !j.aborted && !sem_ready(j, w)) wait(sem_changed);
      if (stale || generation != gen || j.aborted) continue;
      int64_t start = std::max(ready, now_ps()), end = start + to_ps(cost.ns);
      if (shared) {
        // Shared resources are granted in program order among the requests made in the same delta cycle, so
        // that contention does not depend on the order SystemC happens to run its threads in.
        Claim c{seq, &res, engine == isa::Engine::DMA, to_ps(cost.ns), sc_core::sc_delta_count()};
        j.claims.push_back(&c);
        wait(sc_core::SC_ZERO_TIME);
        if (!c.granted) arbitrate(j);
        start = c.start;
        end = c.end;
        wait_until(start);
      }

      // 3. Semantics, then occupancy and completion. Every kCancelPollInstructions instructions (over all queues)
      // the caller may stop the run; it ends as a failing instruction ends it. (The exception is made, not thrown,
      // here: nothing unwinds a SystemC thread's stack.)
      if (j.cancelled && --j.until_poll <= 0) {
        j.until_poll = kCancelPollInstructions;
        if ((*j.cancelled)()) {
          abort_run(j, std::make_exception_ptr(RunCancelled()));
          continue;
        }
      }
      if (!j.timing_only) {
        try {
          // The file is set once per run; per instruction only the (short) index and name change.
          j.memory->set_context_instruction(inst.index, inst.name);
          if (!j.state[q]) j.state[q] = std::make_unique<engines::EngineState>();
          engines::execute(si.d, *j.memory, *j.state[q]);
          if (j.after) (*j.after)(si, *j.memory);
        } catch (...) {
          abort_run(j, std::current_exception());
          continue;
        }
      }
      int64_t finish = end + to_ps(cost.latency_ns);
      if (pos > 0) finish = std::max(finish, j.finish[q][pos - 1]);  // completions stay in queue order
      j.finish[q][pos] = finish;
      j.release[q][pos] = end;
      j.next[q] = pos + 1;
      issued[q].notify(sc_core::SC_ZERO_TIME);
      if (!inst.updates.empty() || resets_semaphores(inst)) {
        j.pending[q].push_back(PendingUpdates{finish, &inst});
        completion[q]->notify(sc_time(static_cast<double>(finish - now_ps()), SC_PS));
      }
      auto &qs = j.result->queues[q];
      ++qs.instructions;
      qs.busy_ns += cost.ns;  // its own occupancy (a DMA transfer may also have waited for the shared bandwidth)
      qs.cycles += cost.cycles;
      qs.bytes += cost.bytes;
      j.result->events.push_back(TraceEvent{q, seq, inst.index, static_cast<double>(start - j.t0) / 1000.0,
                                            static_cast<double>(end - j.t0) / 1000.0,
                                            static_cast<double>(finish - j.t0) / 1000.0, gate});
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
    if (j.next[w.queue] < w.count)
      s += ", waiting for queue " + std::string(queue_name(w.queue)) + " to issue " + std::to_string(w.count) +
           " (has issued " + std::to_string(j.next[w.queue]) + ")";
  for (const auto &w : si.d.inst->waits)
    if (!sem_ready(j, w))
      s += ", waiting for semaphore " + std::to_string(w.sem) +
           (w.mode == isa::SemWait::Mode::EqImm ? " == " : " >= ") + std::to_string(w.value) + " (is " +
           std::to_string(j.sem[static_cast<size_t>(w.sem)]) + ")";
  return s;
}

} // namespace

namespace {
// Engine semantics allocate and free tile buffers of a few hundred KiB per instruction. glibc serves blocks above
// its mmap threshold (128 KiB until it adapts) with mmap/munmap, so each instruction page-faulted its buffers in
// again: a full-size matmul spent half its time in the kernel. Keeping such blocks on the heap removes that.
void tune_allocator_once() {
  static const bool done = [] {
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    return true;
  }();
  (void)done;
}
} // namespace

Simulator::Simulator(const isa::Program &program, const RunOptions &options)
    : program_(program), options_(options), arch_(engines::builtin_arch(options.arch)) {
  tune_allocator_once();
  host_ = std::make_unique<engines::HostEnv>();
  host_->kernel_sim = options_.kernel_sim;
  host_->device_print = options_.device_print;
  host_quiet_ = std::make_unique<engines::HostEnv>(*host_);
  host_quiet_->device_print = nullptr;
  // Refuse up front what cannot be executed, rather than part-way through a run (timing needs no semantics).
  if (!options_.timing_only)
    for (const auto &inst : program_.insts) {
      if (!engines::executes(inst.type))
        throw SemanticError({program_.file, inst.index, inst.name, "opcode"},
                            std::string(isa::inst_type_name(inst.type)) + " is not executed: " +
                                engines::not_executed_reason(inst.type) + " (--timing-only still times it)");
      engines::check_host_services(inst, host_.get(), program_.file);  // e.g. a CustomOp without --kernel-sim
    }
  memory_ = std::make_unique<engines::Memory>(program_, arch_);
  memory_->set_host(host_.get());
  if (has_data_dependent_control(program_)) schedule_deferred_ = true;
  else schedule_ = build_schedule(program_, *memory_, arch_);
}

Simulator::~Simulator() = default;

RunResult Simulator::run() {
  if (schedule_deferred_) {
    // Branches compare run-time values: walk the program executing it in order to learn its path, then put the
    // memory back as the inputs left it and run the same trace timed (which executes it again).
    const engines::Memory initial(*memory_);
    memory_->set_host(host_quiet_.get());  // this pass's DevicePrints are not the run's: the timed run prints
    schedule_ = build_schedule_executing(program_, *memory_, arch_);
    memory_ = std::make_unique<engines::Memory>(initial);
    memory_->set_host(host_.get());
    schedule_deferred_ = false;
  }
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
  if (options_.cancelled) job->cancelled = &options_.cancelled;
  job->result = &result;
  job->t0 = static_cast<int64_t>(sc_core::sc_time_stamp().value());
  job->dma_free = job->t0;
  job->resource_free.fill(job->t0);
  for (int q = 0; q < kMaxQueues; ++q) {
    job->finish[q].assign(schedule_.queues[q].size(), 0);
    job->release[q].assign(schedule_.queues[q].size(), 0);
  }
  memory_->set_context(ErrorContext{program_.file, -1, "", ""});
  c.job = job.get();
  ++c.generation;
  for (auto &k : c.kick) k.notify(sc_core::SC_ZERO_TIME);
  for (auto &e : c.issued) e.notify(sc_core::SC_ZERO_TIME);
  c.sem_changed.notify(sc_core::SC_ZERO_TIME);
  sc_core::sc_start();
  c.job = nullptr;

  if (job->error) std::rethrow_exception(job->error);
  std::string blocked;
  for (int q = 0; q < kMaxQueues; ++q)
    if (job->next[q] < static_cast<int64_t>(schedule_.queues[q].size()))
      blocked += (blocked.empty() ? "" : "; ") + describe_wait(*job, q);
  if (!blocked.empty()) throw SimulationError({program_.file, -1, "", ""}, "deadlock: " + blocked);

  // Total time: the last completion. Critical path: follow each instruction's gate back from the last one.
  std::vector<const TraceEvent *> by_seq(schedule_.insts.size(), nullptr);
  const TraceEvent *last = nullptr;
  for (const auto &e : result.events) {
    by_seq[static_cast<size_t>(e.seq)] = &e;
    if (!last || e.finish_ns > last->finish_ns) last = &e;
  }
  if (last) {
    result.total_ns = last->finish_ns;
    for (const TraceEvent *e = last; e; e = e->gate >= 0 ? by_seq[static_cast<size_t>(e->gate)] : nullptr)
      result.critical_path.push_back(e->seq);
    std::reverse(result.critical_path.begin(), result.critical_path.end());
  }
  return result;
}

} // namespace neuronsim::sim
