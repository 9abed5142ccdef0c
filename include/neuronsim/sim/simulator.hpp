// Running a program on the NeuronCore model: engine assignment, dependency inference (-> semaphores between
// engine queues), the SystemC core, and the results (time, per-engine statistics, timeline events).
#pragma once

#include <array>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <memory_resource>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/engines/dma.hpp"
#include "neuronsim/engines/host.hpp"
#include "neuronsim/engines/memory.hpp"
#include "neuronsim/engines/ops.hpp"
#include "neuronsim/isa/program.hpp"
#include "neuronsim/sim/sanitizer.hpp"

namespace neuronsim::sim {

// The in-order instruction queues: the five engines, then the DMA queues that SP drives.
inline constexpr int kNumEngines = 5;  // PE, ACT, POOL, DVE, SP (the wire engine ids 0..4)
inline constexpr int kMaxDmaQueues = 16;
inline constexpr int kMaxQueues = kNumEngines + kMaxDmaQueues;
inline constexpr int kNumSemaphores = 256;  // reference neuronx-cc/arch/execution-sync-model.md: 256 per core
const char *queue_name(int q);                 // "PE", "ACT", "POOL", "DVE", "SP", "DMA0".."DMA15" (the DMA queue
                                               // ids; a run names them after their BIR queues, Schedule)
isa::Engine queue_engine(int q);               // the engine whose cost model a queue uses (DMA for DMA queues)

// One semaphore wait: the queue's completion counter must reach `count` (the producer's position + 1).
struct QueueWait {
  int queue = 0;
  int64_t count = 0;
};

struct ScheduledInst {
  ScheduledInst() = default;
  explicit ScheduledInst(std::pmr::memory_resource *r) : d(r), waits(r), dep_seq(r) {}
  engines::DynInst d;
  int queue = 0;
  // The trigger of a DMA instruction: the part that runs on the engine issuing it (its sequencer instruction and
  // descriptor generation, docs/timing-model.md 2.4). The transfer itself follows it as a separate entry on its DMA
  // queue, waiting for the trigger; a trigger carries the instruction's dependencies and executes nothing.
  bool trigger = false;
  int32_t nki_ctx = -1;             // sanitized runs: its NKI context (its trips of the kernel's loops), else -1
  int64_t pos = 0;                  // position within its queue
  std::pmr::vector<QueueWait> waits;  // dependencies, at most one per producer queue (its own queue included:
                                    // a dependent instruction waits for its predecessor's completion latency)
  std::pmr::vector<int64_t> dep_seq;  // the dynamic instructions it waits for (for the trace's flow arrows)
};

struct Schedule {
  // Backs every instruction's small vectors; declared first so it is destroyed last.
  std::shared_ptr<std::pmr::monotonic_buffer_resource> arena = std::make_shared<std::pmr::monotonic_buffer_resource>();
  std::vector<ScheduledInst> insts;               // program order (loops unrolled)
  // True when the program carries its own semaphores (Inst::waits/updates, as scheduled BIR and bundle streams
  // do): then those order the queues and no dependencies are inferred.
  bool explicit_sync = false;
  std::array<std::vector<int64_t>, kMaxQueues> queues;  // indices into insts, per queue, in order
  int dma_queues = 0;
  // The BIR queue names each DMA queue id serves ("qSyncIO0"; several joined with "+" when more names than ids),
  // empty for an id no transfer used.
  std::array<std::string, kMaxDmaQueues> dma_queue_names;
  int64_t triggers = 0;  // entries that are DMA triggers (insts.size() - triggers = dynamic instructions)
  // Per queue, the on-chip memories its instructions touch (kTouches* bits): which shared ports can be contended.
  static constexpr uint8_t kTouchesSbuf = 1, kTouchesPsum = 2, kWritesPsum = 4;
  std::array<uint8_t, kMaxQueues> touches{};
};

// The BIR queue name of a DMA instruction that gives none: the compiler's convention of one queue per issuing
// engine, descriptor source and queue type (reference neuronx-cc/walrus/dma-queues.md): "q" + Sync / Scalar /
// GpSimd / Tensor / Vector + IO0 (from a kernel input), IO1 (into a kernel output), Data0 (other), Dynamic
// (SWDGE) or DynamicHW (HWDGE), in the style of the profiler's qSyncIO0, qGpSimdDynamic, qSyncDynamicHW
// (reference neuron-arch.md 1.5 [SCHEMA]).
enum class DmaQueueKind { Input, Output, Data };
std::string default_dma_queue_name(isa::Engine issuer, isa::DGEType dge, DmaQueueKind kind);

// Upper bounds on one run, each checked before the memory it stands for is committed: a program whose loops or
// branches go past them is reported (SemanticError) instead of exhausting memory or hanging.
//  - dynamic instructions, RunOptions::max_instructions (`--max-instructions`, default kDefaultMaxInstructions): a
//    static program's count is known before scheduling; one with run-time control flow is stopped, naming the
//    instruction, when it reaches the limit;
//  - loop trips, counted over every region against the same limit, so that an empty-bodied loop with a huge trip
//    count or a DoWhile whose register never clears ends instead of spinning;
//  - the schedule's memory (~0.2 KB per dynamic instruction + ~0.15 KB per operand): estimated before a static
//    program is scheduled, tracked as a run-time-controlled one grows (its instruction vector never grows past it).
inline constexpr int64_t kDefaultMaxInstructions = 1'000'000'000;
inline constexpr int64_t kMaxScheduleBytes = int64_t(2) << 30;  // 2 GiB

// Unrolls loops, resolves access patterns per iteration, picks each instruction's queue and infers RAW/WAR/WAW
// dependencies between queues from memory footprints. Throws SemanticError for an access pattern outside its
// tensor (naming the instruction and argument). With `dma_triggers` (the simulator's runs), a DMA instruction of a
// program without its own semaphores becomes a trigger on its issuing engine and a transfer on its DMA queue
// (ScheduledInst::trigger); without (lowering to bundle streams), one entry on its DMA queue.
// `max_instructions` bounds the dynamic instructions and the loop trips (kDefaultMaxInstructions).
// With `sanitizer`, each entry gets its NKI context (ScheduledInst::nki_ctx).
Schedule build_schedule(const isa::Program &program, const engines::Memory &mem, const engines::ArchParams &arch,
                        bool dma_triggers = false, int64_t max_instructions = kDefaultMaxInstructions,
                        Sanitizer *sanitizer = nullptr);

// Whether the program's path depends on run-time values (a CompareAndBranch on a register, DynamicForLoop, DoWhile,
// an access whose start reads a register): then the schedule can only be built by executing the program in order
// while walking it. A CompareAndBranch of two immediates (a symbolic_imm_value may select by the core's shard id) is
// fixed when the program is walked for its core.
bool has_data_dependent_control(const isa::Program &program);
// Whether a CompareAndBranch compares two immediates (its path is known without executing anything).
bool compares_immediates(const isa::Inst &inst);

// Builds the schedule of a program with data-dependent control flow: every instruction is executed in program
// order on `mem` (with one engine state per queue) as it is scheduled, so each branch sees the registers it
// compares. The caller restores `mem` before the timed run, which executes the same trace again.
Schedule build_schedule_executing(const isa::Program &program, engines::Memory &mem, const engines::ArchParams &arch,
                                  bool dma_triggers = false, int64_t max_instructions = kDefaultMaxInstructions,
                                  Sanitizer *sanitizer = nullptr);


struct QueueStats {
  std::string name;
  int64_t instructions = 0;  // engines: instructions (DMA triggers included); DMA queues: transfers
  double busy_ns = 0.0;      // engines: occupancy; DMA queues: DMA-engine time of the queue's descriptors
  int64_t cycles = 0;        // busy cycles in the engine's clock (0 for DMA queues)
  int64_t bytes = 0;         // DMA queues: bytes moved
  int64_t descriptors = 0;   // DMA queues: descriptors
  // DMA queues: its transfers' time split (engines::dma_time_split: fixed latency, per-row cost, transfer;
  // the latter two DMA-engine time), the time its bytes take at the rates the arch allows them, and its first
  // transfer's entry into the ring and its last one's end (ns from the run's start).
  double fixed_ns = 0.0, per_row_ns = 0.0, transfer_ns = 0.0, allowed_ns = 0.0;
  double first_issue_ns = 0.0, last_end_ns = 0.0;
  // Engines: the work of its instructions (engines::instruction_work): matmul FLOPs, other output elements.
  int64_t elements = 0, flops = 0;
};

// One DMA engine over a run: the DMA queues' busy_ns add up to the engines' busy_ns.
struct DmaEngineStats {
  double busy_ns = 0.0;
  int64_t descriptors = 0;
  int64_t transfers = 0;  // transfer parts it served
};

// Why an instruction started later than its queue was free (docs/timing-model.md 7; sim/core_issue.cpp decides it where
// it decides the start): the wait is cut into consecutive intervals, each charged to the constraint that held it.
enum class WaitReason : int {
  Dependency,  // a producer's completion (inferred dependencies, the queue's own order)
  Semaphore,   // an explicit semaphore wait
  SharedPort,  // a port or bus shared between engines (v2 SBUF/PSUM ports, the v3 perf-mode bus)
  PsumBank,    // a PSUM bank (writers serialize; v3 ACT/DVE bank collisions; the v2 PSUM-writer fence)
  DmaRing,     // a DMA transfer waiting for a slot in its queue's ring
  DmaEngine,   // a DMA transfer's first descriptor waiting for a DMA engine (after the fixed latency)
  Count
};
inline constexpr int kNumWaitReasons = static_cast<int>(WaitReason::Count);
// "dependency", "semaphore", "shared_port", "psum_bank", "dma_ring", "dma_engine" (the --stats keys)
const char *wait_reason_name(WaitReason r);

struct TraceEvent {
  int queue = 0;
  int64_t seq = 0;          // dynamic instruction number (program order)
  int inst = 0;             // static instruction index
  // Engines: the queue is occupied over [start, end). DMA transfers: the transfer entered its queue (ring) at
  // issue, its first descriptor started at start (after the fixed latency and the engines' arbitration) and its
  // last ended at end.
  double issue_ns = 0.0;
  double start_ns = 0.0, end_ns = 0.0;
  double finish_ns = 0.0;   // results visible to dependents (end + the engine's completion latency)
  int64_t gate = -1;        // the instruction whose completion (or queue release) let this one start, -1 if none
  double busy_ns = 0.0;     // engines: end - start; DMA: the DMA-engine time of its descriptors
  std::array<double, kNumWaitReasons> wait_ns{};  // from its queue being free to its start, by reason
};

struct RunResult;

// How a run holds its dynamic schedule (issue 18): Whole builds it before the run (every entry kept, within
// kMaxScheduleBytes) and records one TraceEvent per dynamic instruction; Streamed makes it on demand in a bounded
// window (sim/schedule_stream.hpp), keeps per queue only a window of completion times, and folds the profile and
// the critical path as the run goes (RunResult::streamed). Auto streams a timing-only run with no per-event hook
// (on_event, after_instruction, DMA slices) of a program whose structure fixes its path (instructions and constant
// loops). The results are the same bit for bit (tests/sim/test_streamed_run.cpp). RunOptions default to Whole, so
// that a caller reading Simulator::schedule() or RunResult::events gets them; `neuronsim run` defaults to Auto
// (`--schedule=auto|whole|streamed`).
enum class ScheduleMode { Auto, Whole, Streamed };

struct RunOptions {
  std::string arch = "trn1";
  bool timing_only = false;   // skip the numeric work: same timeline, no outputs
  // Report the total with the architecture's fixed start and end of an execution (kernel_preamble_ns, calibration.md
  // F1), as a profiler's kernel latency includes it: RunResult::preamble_ns, added to the stats' and summary's total.
  bool include_preamble = false;
  // Called right after each dynamic instruction's semantics ran (not in timing-only runs), with the memory as it
  // left it: `neuronsim validate` reads back what each instruction wrote. Unset: no cost.
  std::function<void(const ScheduledInst &, const engines::Memory &)> after_instruction;
  // CustomOp / BIRKernel run out of process (engines/ops/kernel.cpp, docs/cli.md "External kernels"): the program run
  // as `kernel_sim <tmpdir>/config.json`. Empty: a program containing them is refused (not in timing-only runs).
  std::string kernel_sim;
  // DevicePrint: receives one line per execution, in each queue's program order (not in timing-only runs).
  // Unset: the lines are dropped.
  std::function<void(const std::string &line)> device_print;
  // Polled by the running core once every kCancelPollInstructions issued instructions (so it should be cheap: a
  // flag read, e.g. one a SIGINT handler sets); returning true stops the run, which then throws RunCancelled and
  // leaves the simulator and the process usable for the next run. Unset: no cost. Not polled while the schedule
  // is built (Simulator's constructor, and run()'s first pass over a program with data-dependent branches).
  std::function<bool()> cancelled;
  // Called with the cancel poll (every kCancelPollInstructions engine instructions, not in the schedule-building
  // pass): engine-queue instructions issued so far (counted in poll steps) and in the run (DMA transfers, which
  // the DMA engines serve, are not counted), and the simulated time (ns) of the instruction being issued. The CLI's
  // progress line. Unset: no cost.
  std::function<void(int64_t done, int64_t total, double sim_ns)> progress;
  // Receives each timeline event as the core records it (in RunResult::events order), with its schedule entry and
  // the run's result so far (its queue names): sim::TraceWriter streams the trace from it. Must not throw. Unset:
  // no cost.
  std::function<void(const TraceEvent &, const ScheduledInst &, const RunResult &)> on_event;
  // With record_dma_engine_slices: receives the DMA engines' activity slices as the run fixes them, in order, times
  // from the run's start (TraceWriter writes them as they come); RunResult::dma_slices then stays empty. Must not
  // throw. Unset: the slices are kept in RunResult::dma_slices.
  std::function<void(std::vector<engines::DmaSlice> &)> on_dma_slices;
  // Keep the DMA engines' activity slices (RunResult::dma_slices) for the trace; off, only their totals.
  bool record_dma_engine_slices = false;
  // DMA instructions get a trigger on their issuing engine (docs/timing-model.md 2.4). Off, they sit on their DMA
  // queue alone, as in a bundle stream (which carries no trigger instruction): tests compare the two that way.
  bool dma_triggers = true;
  // The run stops with a SemanticError naming the instruction when it would execute more dynamic instructions (or
  // loop trips) than this: `--max-instructions N`, neuronsim.run(max_instructions=N). At least 1.
  int64_t max_instructions = kDefaultMaxInstructions;
  ScheduleMode schedule = ScheduleMode::Whole;
  // Streamed runs: the entries the schedule stream buffers per queue before its walk pauses (ScheduleStream).
  int64_t schedule_window = 4096;
  // Streamed runs: the critical-path records (one per dynamic instruction) each queue keeps in memory before it
  // spills them, as one block, to an unlinked temporary file under $TMPDIR (sim/path_log.hpp). At least 1.
  int64_t critical_path_block = 4096;
  // Set by sim::Device for each of its cores: its shard id (ShardIDKind) and rank (GetGlobalRankId), and its index.
  int64_t shard = 0, rank = 0;
  int core = 0;
  // The sanitizer (`--sanitize`, docs/sanitizer.md): uninitialized reads, loop-carried dependencies of NKI
  // affine_range loops and races are checked as the run goes (timing-only runs too) and listed in
  // RunResult::findings. The schedule is then whole. `sanitizer`: the state a Device shares between its cores (a
  // single-core run makes its own).
  bool sanitize = false;
  std::shared_ptr<Sanitizer> sanitizer;
};
inline constexpr int64_t kCancelPollInstructions = 256;

// Thrown by Simulator::run when RunOptions::cancelled asked it to stop. Not an Error: nothing is wrong with the input.
struct RunCancelled : std::runtime_error {
  RunCancelled() : std::runtime_error("the run was cancelled") {}
};

// The profile's sums over the dynamic instances of one row: a static instruction's engine-queue part (its execution
// or its DMA trigger) or its DMA transfer, row profile_row(inst, queue).
struct ProfileSums {
  int queue = -1;        // the queue of its first instance, -1 for a row that never ran
  bool trigger = false;  // a DMA trigger row
  int64_t executions = 0;
  double busy_ns = 0.0;
  std::array<double, kNumWaitReasons> wait_ns{};
  double critical_path_ns = 0.0;  // the time its links hold the critical path (stats.hpp, critical_path_shares)
};
inline int64_t profile_row(int inst, int queue) { return static_cast<int64_t>(inst) * 2 + (queue >= kNumEngines ? 1 : 0); }

struct RunResult {
  std::string arch;
  double total_ns = 0.0;            // when the last result is visible
  // Dynamic instruction numbers, first to last: every link in a whole run, the last kCriticalPathListed links
  // (those the stats list) in a streamed one; critical_path_length counts them all.
  std::vector<int64_t> critical_path;
  int64_t critical_path_length = 0;
  int64_t dynamic_instructions = 0;
  std::array<QueueStats, kMaxQueues> queues;
  std::vector<DmaEngineStats> dma_engines;
  std::vector<TraceEvent> events;
  std::vector<engines::DmaSlice> dma_slices;  // with RunOptions::record_dma_engine_slices (ids are event seqs)
  int dma_ring_depth = 1;      // transfers a DMA queue holds at once (the trace draws one track per ring slot)
  double dma_latency_ns = 0.0;  // from entering the ring to the first byte (dma_latency_ns)
  double preamble_ns = 0.0;     // RunOptions::include_preamble: kernel_preamble_ns (not in total_ns), else 0
  int64_t act_table_loads = 0;  // activation-table loads ScalarE made for functions the resident set lacked
  // Bytes of the DMAs on a spill queue (qSyncSpillReload*, the queue the compiler gives its spill code: NKI docs
  // "NKI Performance Guide"): Saves into DRAM and Loads back, as neuron-profile's spill_save_bytes and
  // spill_reload_bytes count them.
  int64_t spill_save_bytes = 0, spill_reload_bytes = 0;
  // A streamed run (ScheduleMode): `events` holds the events of the critical path's listed links (the stats'
  // critical-path list); the profile's sums, each row's time on the critical path included, come in `profile`
  // (indexed by profile_row), and the critical path's time per engine (DMA queues together as "DMA", in the order
  // the path first reaches them) in `critical_path_engines`, summed from the path's first link to its last as
  // stats.cpp sums a whole run's.
  bool streamed = false;
  std::vector<ProfileSums> profile;
  std::vector<std::pair<std::string, double>> critical_path_engines;
  double critical_path_dma_fixed_ns = 0.0; // streamed: the DMA links' time in fixed latency (stats.cpp)
  int64_t schedule_peak_held = 0;        // the most schedule entries the stream held at once (its window's bound)
  int schedule_walks = 0;                // walks of the program the stream made (1 + the queues it detached)
  // A sanitized run (RunOptions::sanitize): what the sanitizer found, every core's (in core 0's result).
  bool sanitized = false;
  std::vector<Finding> findings;
  int64_t critical_path_spilled = 0;     // bytes of critical-path records it wrote to its temporary file
};
inline constexpr int64_t kStreamedEventTail = int64_t(1) << 16;
inline constexpr size_t kCriticalPathListed = 10000;  // the stats' critical-path list: its last links

struct RunState;
class Device;
struct Rendezvous;

class Simulator {
public:
  Simulator(const isa::Program &program, const RunOptions &options);
  ~Simulator();
  const isa::Program &program() const { return program_; }
  const engines::ArchParams &arch() const { return arch_; }
  engines::Memory &memory() { return *memory_; }
  const Schedule &schedule() const { return shared_schedule_ ? *shared_schedule_ : schedule_; }

  // Runs the program to completion on the SystemC core. Throws SimulationError (exit code 4) on a deadlock
  // (naming every blocked queue, its instruction and the semaphore it waits for) or a run-time fault.
  RunResult run();

private:
  // A Device's core whose schedule is `share`'s (the same program and shard id: the schedule depends on nothing
  // else of the core, sim/device.cpp): it is not built again. `share` must outlive this simulator's runs.
  Simulator(const isa::Program &program, const RunOptions &options, const Simulator *share);
  void build(const Simulator *share = nullptr);  // the constructor's work, whose errors it completes with their
                                                 // source lines
  RunResult run_timed(); // run()'s work, likewise
  // run_timed split at its sc_start, so that a Device starts its cores together: begin_run loads the core
  // (`device` null: a single core), end_run collects its result. With `error`/`blocked` given, end_run returns
  // the run's error and its deadlock description there instead of throwing them (the Device reports all cores).
  friend class Device;
  void begin_run(Device *device, int core);
  RunResult end_run(std::exception_ptr *error = nullptr, std::string *blocked = nullptr);
  std::unique_ptr<RunState> running_;  // between begin_run and end_run (sim/core_run.cpp)
  const isa::Program &program_;
  RunOptions options_;
  engines::ArchParams arch_;
  // The host services the engines see through Memory::host(): the run's, and the same without the DevicePrint
  // sink for the pass that only learns a data-dependent path (its prints would come out twice).
  std::unique_ptr<engines::HostEnv> host_, host_quiet_;
  std::unique_ptr<engines::Memory> memory_;
  Schedule schedule_;  // streamed runs: its summary only (no entries)
  const Schedule *shared_schedule_ = nullptr;  // set: another core's schedule, used instead of schedule_
  bool schedule_deferred_ = false;  // data-dependent control flow: scheduled in run(), once inputs are loaded
  bool streamed_ = false;           // ScheduleMode::Streamed chosen (build())
};

} // namespace neuronsim::sim
