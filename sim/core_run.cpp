// Simulator: the run's setup (the schedule, whole or streamed; the job) and its result (totals, the critical path)
// around the SystemC core (sim/core.cpp).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <algorithm>
#include <malloc.h>
#include <systemc>
#include <unordered_map>

#include "sim/core_job.hpp"
#include "sim/sanitizer.hpp"
#include "sim/schedule_builder.hpp"

namespace neuronsim::sim {

using namespace core_detail;

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

namespace {
// Inside a catch block: rethrows the Error being handled, with its source line (error_with_source). The
// scheduler's errors get it here; an op's or the memory's get it in Core::execute.
[[noreturn]] void rethrow_with_source(const isa::Program &p) {
  try {
    throw;
  } catch (const Error &e) {
    if (std::exception_ptr named = error_with_source(p, e)) std::rethrow_exception(named);
    throw;
  }
}
} // namespace

Simulator::Simulator(const isa::Program &program, const RunOptions &options)
    : Simulator(program, options, nullptr) {}

Simulator::Simulator(const isa::Program &program, const RunOptions &options, const Simulator *share)
    : program_(program), options_(options), arch_(engines::load_arch(options.arch)) {
  try {
    build(share);
  } catch (const Error &) {
    rethrow_with_source(program_);
  }
}

void Simulator::build(const Simulator *share) {
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
  memory_->set_core(options_.shard, options_.rank);
  if (options_.sanitize) {
    // The sanitizer numbers the run's dynamic instructions by schedule entry: the schedule is whole.
    if (!options_.sanitizer) options_.sanitizer = std::make_shared<Sanitizer>(1, 1);
    options_.sanitizer->attach(options_.core, program_, *memory_, static_cast<int>(options_.rank));
    if (options_.schedule == ScheduleMode::Streamed)
      throw SemanticError({program_.file, -1, "", "schedule"},
                          "--sanitize needs the whole schedule (--schedule=whole or auto), not --schedule=streamed");
    options_.schedule = ScheduleMode::Whole;
  }
  if (has_data_dependent_control(program_)) {
    schedule_deferred_ = true;
    if (options_.schedule == ScheduleMode::Streamed)
      throw SemanticError({program_.file, -1, "", "schedule"},
                          "--schedule=streamed needs a program whose structure fixes its path (instructions and "
                          "constant loops); this one branches on run-time values");
    return;
  }
  if (share && options_.schedule == ScheduleMode::Whole && !share->streamed_ && !share->schedule_deferred_) {
    shared_schedule_ = &share->schedule();
    return;
  }
  // Streamed (ScheduleMode): by request, or for a timing-only run nothing observes event by event.
  const bool hooks = options_.on_event || options_.after_instruction || options_.on_dma_slices ||
                     options_.record_dma_engine_slices;
  const bool want = options_.schedule == ScheduleMode::Streamed ||
                    (options_.schedule == ScheduleMode::Auto && options_.timing_only && !hooks);
  if (want) {
    schedule_detail::Builder counter(program_, *memory_, arch_, options_.dma_triggers, options_.max_instructions);
    std::array<int64_t, kMaxQueues> totals{};
    if (counter.queue_totals(totals)) {
      streamed_ = true;
      schedule_ = counter.summary();
      return;
    }
  }
  // Whole; also a program past --max-instructions, whose walk reports it (queue_totals does not count it).
  schedule_ = build_schedule(program_, *memory_, arch_, options_.dma_triggers, options_.max_instructions,
                             options_.sanitizer.get());
  if (options_.schedule == ScheduleMode::Streamed)
    throw SemanticError({program_.file, -1, "", "schedule"},
                        "--schedule=streamed needs a program whose structure fixes its path (instructions and "
                        "constant loops, no branch, call or DMA block)");
}

Simulator::~Simulator() = default;

RunResult Simulator::run() { return run_timed(); }

namespace {

// Which queues touch SBUF / PSUM (recorded by the scheduler): a resource that at most one queue can use is not
// contended, and is not claimed. Conservative: any PSUM access counts for every bank.
void find_contention(Job &j, const Schedule &s) {
  std::array<bool, kNumEngines> sbuf{}, psum{}, psum_write{};
  for (int q = 0; q < kNumEngines; ++q) {
    const uint8_t t = s.touches[static_cast<size_t>(q)];
    sbuf[q] = t & Schedule::kTouchesSbuf;
    psum[q] = t & Schedule::kTouchesPsum;
    psum_write[q] = t & Schedule::kWritesPsum;
  }
  j.dve_pool_psum_writers = psum_write[kDveQueue] || psum_write[kPoolQueue];
  int writers = 0;
  for (int q = 0; q < kNumEngines; ++q) writers += psum_write[q];
  auto &c = j.contended;
  for (int b = 0; b < kPsumBanks; ++b) {
    c[kPsumBankWriter + b] = writers >= 2;
    c[kPsumBankActDve + b] = psum[kActQueue] && psum[kDveQueue];
  }
  c[kDvePoolSbufPort] = sbuf[kDveQueue] && sbuf[kPoolQueue];
  c[kActDvePsumPort] = psum[kActQueue] && psum[kDveQueue];
  c[kPsumWriterFence] = j.dve_pool_psum_writers && j.length[kActQueue] > 0;
  c[kPoolBus] = sbuf[kDveQueue] && sbuf[kPoolQueue];
  const bool bank_writers = c[kPsumBankWriter], bank_act_dve = c[kPsumBankActDve];
  auto &m = j.may_claim;
  m[kPeQueue] = bank_writers;
  m[kActQueue] = bank_writers || bank_act_dve || c[kActDvePsumPort] || c[kPsumWriterFence];
  m[kPoolQueue] = bank_writers || c[kDvePoolSbufPort] || c[kPsumWriterFence] || c[kPoolBus];
  m[kDveQueue] = bank_writers || bank_act_dve || c[kDvePoolSbufPort] || c[kActDvePsumPort] || c[kPsumWriterFence] ||
                 c[kPoolBus];
  m[4] = bank_writers;  // SP
}

// A streamed run's critical path, from the records of its path log (sim/path_log.hpp): the gates followed back
// from the last completion, then each link's time on the path (from its issue to the next link's) added into its
// profile row and its engine's share from the first link to the last (the additions stats.cpp makes for a whole
// run, in the same order: the same doubles). The walk back counts the links, keeps the listed ones and marks
// every kFoldSegment-th; each segment is then walked again from its mark and summed forwards, so memory stays
// bounded whatever the path's length. Also the full events of the listed links that the tail still holds;
// returns the listed links whose events it does not hold.
constexpr int64_t kFoldSegment = int64_t(1) << 16;

std::vector<int64_t> fold_critical_path(Job &j, RunResult &r) {
  std::vector<int64_t> missing;
  if (j.last_seq < 0) return missing;
  r.total_ns = j.last_finish;
  PathLog &log = *j.path;
  auto record = [&](int64_t at) -> const PathRecord & {
    return log.at(static_cast<int>(at % kMaxQueues), at / kMaxQueues);
  };
  auto gate_of = [](const PathRecord &p) {
    return p.gate_pos1 ? path_at(p.gate_queue, static_cast<int64_t>(p.gate_pos1) - 1) : int64_t(-1);
  };
  std::vector<int64_t> marks;
  int64_t n = 0;
  for (int64_t at = j.last_at; at >= 0; ++n) {
    if (n % kFoldSegment == 0) marks.push_back(at);
    const PathRecord &p = record(at);
    if (n < static_cast<int64_t>(kCriticalPathListed)) r.critical_path.push_back(p.seq);
    at = gate_of(p);
  }
  std::reverse(r.critical_path.begin(), r.critical_path.end());
  r.critical_path_length = n;

  std::array<int, kMaxQueues> share_of;  // the queue's entry in critical_path_engines, -1 before its first link
  share_of.fill(-1);
  auto span = [&](const PathRecord &st, double until) {
    const double ns = std::max(0.0, until - st.issue_ns);
    ProfileSums &row = r.profile[static_cast<size_t>(st.row)];
    row.critical_path_ns += ns;
    int &k = share_of[static_cast<size_t>(row.queue)];
    if (k < 0) {
      const std::string name = row.queue < kNumEngines ? queue_name(row.queue) : "DMA";
      auto &e = r.critical_path_engines;
      k = static_cast<int>(std::find_if(e.begin(), e.end(), [&](const auto &x) { return x.first == name; }) - e.begin());
      if (k == static_cast<int>(e.size())) e.emplace_back(name, 0.0);
    }
    r.critical_path_engines[static_cast<size_t>(k)].second += ns;
    if (row.queue >= kNumEngines)
      r.critical_path_dma_fixed_ns += std::min(ns, r.dma_latency_ns);
  };
  std::vector<PathRecord> segment;
  PathRecord prev;
  bool have = false;
  for (size_t m = marks.size(); m-- > 0;) {
    segment.clear();
    int64_t at = marks[m];
    for (int64_t k = std::min(kFoldSegment, n - static_cast<int64_t>(m) * kFoldSegment); k > 0; --k) {
      segment.push_back(record(at));
      at = gate_of(segment.back());
    }
    for (auto it = segment.rbegin(); it != segment.rend(); ++it) {
      if (have) span(prev, it->issue_ns);
      prev = *it;
      have = true;
    }
  }
  if (have) span(prev, r.total_ns);

  std::unordered_map<int64_t, const TraceEvent *> tail;
  for (const auto &e : j.tail) tail.emplace(e.seq, &e);
  for (const int64_t seq : r.critical_path) {
    const auto it = tail.find(seq);
    if (it != tail.end()) r.events.push_back(*it->second);
    else missing.push_back(seq);
  }
  return missing;
}

} // namespace

// A run between begin_run and end_run: its job, its schedule stream (streamed runs) and its result.
struct RunState {
  std::unique_ptr<Job> job;
  std::unique_ptr<ScheduleStream> stream;
  RunResult result;
  int64_t entries = 0;
};

namespace {

// A job's setup (`hooks`: the caller's; a streamed run's replay has none).
void set_up_job(Job &j, RunResult &res, bool hooks, const RunOptions &o, engines::Memory &memory,
                const engines::ArchParams &arch, const Schedule &schedule, bool streamed, const std::string &file) {
  j.memory = &memory;
  j.arch = &arch;
  j.timing_only = o.timing_only;
  if (hooks && o.after_instruction) j.after = &o.after_instruction;
  if (hooks && o.on_event) j.on_event = &o.on_event;
  if (hooks && o.on_dma_slices && o.record_dma_engine_slices) j.on_slices = &o.on_dma_slices;
  if (o.cancelled) j.cancelled = &o.cancelled;
  if (hooks && o.progress) {
    j.progress = &o.progress;
    for (int q = 0; q < kNumEngines; ++q) j.engine_instructions += j.length[q];
  }
  j.result = &res;
  j.t0 = static_cast<int64_t>(sc_core::sc_time_stamp().value());
  j.dve_same_engine_ps = to_ps(static_cast<double>(arch.dve_dependent_latency_cycles) / arch.dve_ghz);
  j.resource_free.fill(j.t0);
  j.engines.reset(arch.dma_engines, std::max(1, schedule.dma_queues), hooks && o.record_dma_engine_slices);
  j.hbm_local.reset(arch.hbm_bytes_per_ns);  // a one-core run's HBM pool (Job::hbm_add)
  for (int q = 0; q < kMaxQueues; ++q) {
    // A whole run keeps every position; a streamed one grows its windows as it needs.
    if (!streamed) j.times[q].reserve(j.length[q]);
    if (!streamed && q >= kNumEngines) j.dma[q].reserve(j.length[q]);
  }
  find_contention(j, schedule);
  memory.set_context(ErrorContext{file, -1, "", ""});
}

} // namespace

RunResult Simulator::run_timed() {
  begin_run(nullptr, 0);
  start_simulation();
  return end_run();
}

void Simulator::begin_run(Device *device, int core_index) {
  if (schedule_deferred_) {
    // Branches compare run-time values: walk the program executing it in order to learn its path, then put the
    // memory back as the inputs left it and run the same trace timed (which executes it again).
    const engines::Memory initial(*memory_);
    memory_->set_host(host_quiet_.get());  // this pass's DevicePrints are not the run's: the timed run prints
    try {
      schedule_ = build_schedule_executing(program_, *memory_, arch_, options_.dma_triggers, options_.max_instructions,
                                           options_.sanitizer.get());
    } catch (const Error &) {
      rethrow_with_source(program_);
    }
    memory_ = std::make_unique<engines::Memory>(initial);
    memory_->set_host(host_.get());
    schedule_deferred_ = false;
  }
  running_ = std::make_unique<RunState>();
  RunResult &result = running_->result;
  running_->job = std::make_unique<Job>();
  Job *job = running_->job.get();
  job->device = device;
  job->core = core_index;
  std::unique_ptr<ScheduleStream> &stream = running_->stream;
  int64_t &entries = running_->entries;
  if (streamed_) {
    stream = std::make_unique<ScheduleStream>(program_, *memory_, arch_, options_.dma_triggers,
                                              options_.max_instructions, options_.schedule_window,
                                              static_cast<bool>(options_.on_event));
    job->stream = stream.get();
    for (int q = 0; q < kMaxQueues; ++q) job->length[q] = (*stream->totals())[static_cast<size_t>(q)], entries += job->length[q];
    if (entries >= int64_t(UINT32_MAX))
      throw SemanticError({program_.file, -1, "", "schedule"},
                          "a streamed run numbers at most 2^32 - 1 schedule entries, this one has " +
                              std::to_string(entries) + "; run with --schedule=whole");
    result.streamed = true;
    result.profile.resize(2 * program_.insts.size());
    job->path = std::make_unique<PathLog>(program_.file, options_.critical_path_block);
  } else {
    job->schedule = &schedule();
    for (int q = 0; q < kMaxQueues; ++q) job->length[q] = static_cast<int64_t>(schedule().queues[q].size());
    entries = static_cast<int64_t>(schedule().insts.size());
    result.events.reserve(schedule().insts.size());
  }
  result.arch = arch_.name;
  result.dynamic_instructions = entries - schedule().triggers;
  result.dma_ring_depth = std::max(1, arch_.dma_ring_depth);
  result.dma_latency_ns = arch_.dma_latency_ns;
  result.preamble_ns = options_.include_preamble ? arch_.kernel_preamble_ns : 0.0;
  for (int q = 0; q < kMaxQueues; ++q) {
    const std::string &bir = q >= kNumEngines ? schedule().dma_queue_names[static_cast<size_t>(q - kNumEngines)] : "";
    result.queues[q].name = bir.empty() ? queue_name(q) : bir;
  }

  set_up_job(*job, result, true, options_, *memory_, arch_, schedule(), streamed_, program_.file);
  if (options_.sanitizer) {
    job->sanitizer = options_.sanitizer.get();
    options_.sanitizer->begin(options_.core, *memory_);
  }
  load_core(*job);
}

RunResult Simulator::end_run(std::exception_ptr *error, std::string *blocked_out) {
  const std::unique_ptr<RunState> state = std::move(running_);
  Job *job = state->job.get();
  unload_core(*job);
  RunResult &result = state->result;
  const std::unique_ptr<ScheduleStream> &stream = state->stream;
  const int64_t entries = state->entries;

  if (job->error) {
    if (!error) {
      clear_stack_shadow();
      std::rethrow_exception(job->error);
    }
    *error = job->error;
    return std::move(result);
  }
  std::string blocked;
  for (int q = 0; q < kMaxQueues; ++q)
    if (job->known[q] < job->length[q]) blocked += (blocked.empty() ? "" : "; ") + describe_wait(*job, q);
  if (!blocked.empty()) {
    if (!blocked_out) {
      clear_stack_shadow();
      throw SimulationError({program_.file, -1, "", ""}, "deadlock: " + blocked);
    }
    *blocked_out = blocked;
    return std::move(result);
  }

  result.dma_engines.resize(static_cast<size_t>(arch_.dma_engines));
  for (int e = 0; e < arch_.dma_engines; ++e) {
    const auto &t = job->engines.engine_totals(e);
    result.dma_engines[static_cast<size_t>(e)] =
        DmaEngineStats{static_cast<double>(t.busy_ps) / 1000.0, t.descriptors, t.transfers};
  }
  if (options_.record_dma_engine_slices) {
    job->engines.finish();
    if (job->on_slices) {
      pass_last_slices(*job);
    } else {
      result.dma_slices = job->engines.take_slices();
      for (auto &sl : result.dma_slices) sl.start_ps -= job->t0, sl.end_ps -= job->t0;
    }
  }
  if (options_.sanitizer && !job->device) {
    result.sanitized = true;
    result.findings = options_.sanitizer->findings();
  }
  if (streamed_) {
    result.schedule_peak_held = stream->peak_held();
    result.schedule_walks = stream->walks();
    std::vector<int64_t> missing;
    try {
      missing = fold_critical_path(*job, result);
    } catch (...) {
      clear_stack_shadow();
      throw;
    }
    result.critical_path_spilled = job->path->spilled_bytes();
    job->path.reset();  // its file goes with it
    if (missing.empty()) return std::move(result);
    // Links the stats list shows whose events the tail no longer held: the same run again (it is deterministic,
    // and its times are relative to its start), keeping only those events.
    Job again;
    ScheduleStream replay(program_, *memory_, arch_, options_.dma_triggers, options_.max_instructions,
                          options_.schedule_window, false);
    again.stream = &replay;
    again.length = job->length;
    std::vector<bool> wanted(static_cast<size_t>(entries), false);
    for (int64_t s : missing) wanted[static_cast<size_t>(s)] = true;
    again.collect = &wanted;
    RunResult scratch;
    set_up_job(again, scratch, false, options_, *memory_, arch_, schedule(), streamed_, program_.file);
    run_on_core(again);
    if (again.error) {
      clear_stack_shadow();
      std::rethrow_exception(again.error);
    }
    std::unordered_map<int64_t, TraceEvent> found;
    for (auto &e : result.events) found.emplace(e.seq, e);
    for (auto &e : again.collected) found.emplace(e.seq, e);
    result.events.clear();
    const size_t n = result.critical_path.size();
    for (size_t i = n > kCriticalPathListed ? n - kCriticalPathListed : 0; i < n; ++i) {
      const auto it = found.find(result.critical_path[i]);
      if (it != found.end()) result.events.push_back(it->second);
    }
    return std::move(result);
  }
  // Total time: the last completion. Critical path: follow each instruction's gate back from the last one.
  std::vector<const TraceEvent *> by_seq(schedule().insts.size(), nullptr);
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
    result.critical_path_length = static_cast<int64_t>(result.critical_path.size());
  }
  return std::move(result);
}

} // namespace neuronsim::sim
