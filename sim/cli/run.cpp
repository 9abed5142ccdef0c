// `neuronsim run` (cli.hpp cmd_run): its help and option table, and the run in named steps -- the kernel read
// and the settings completed, where DevicePrint lines go, the header, the run, the outputs no instruction
// wrote, the summary (and its --json document), --sensitivity, the files the run writes, the outputs and
// their check.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/sim/analysis.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/report.hpp"
#include "neuronsim/sim/session.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "neuronsim/sim/stats.hpp"

#include "cli.hpp"

namespace fs = std::filesystem;

namespace neuronsim::cli {

namespace {

const char *kRunHelp = R"(usage: neuronsim run [KERNEL] [options]

  KERNEL                   a .json BIR file, or a directory holding one *.bir.json (plus optional
                           inputs/ and expected/ folders and run.json: cores, lnc, arch, tolerance),
                           or a bundle directory (manifest.json; its
                           generation picks --arch unless given), or a multi-core one (cores.json, encode
                           --cores: runs on its cores). Without KERNEL: the bundled default workload.
  --input NAME=FILE.npy    data for input tensor NAME (repeatable)
  --inputs DIR             DIR/<tensor>.npy for every input found there
  --outdir DIR             where <tensor>.npy is written for every output (default: neuronsim-out)
  --expect DIR             compare outputs with DIR/<tensor>.npy; exit 1 when outside tolerance
  --rtol R --atol A        comparison tolerance |got-want| <= A + R*|want| (default 1e-5, 1e-6; finite, >= 0)
  --arch trn1|trn2|trn3    NeuronCore-v2 / v3 / v4 (default: the folder's run.json, else trn1)
  --arch FILE.json         an architecture file of the schema of `neuronsim arch --show trn2` (a name with
                           a '/' or ending in .json is a file; every parameter given, each in its range)
  --set KEY=VALUE          an architecture parameter set over --arch (repeatable; `neuronsim arch --keys`):
                           the run is named "trn2+{dma_latency_ns=425}" in its header, stats and tables
  --why                    after the summary: per engine and DMA queue, busy / waiting by reason / idle, the
                           DMA bytes, achieved and allowed GB/s and time split, work rates against peak
  --sensitivity            rerun timing-only with each headline parameter (DMA rate, latency, per-row costs,
                           HBM rate, each engine clock) made 2x better; print the speed-ups, largest first
  --report FILE.html       one self-contained HTML page of the run (docs/profiling.md): verdict, timeline,
                           busy / wait / idle bars, critical path, top instructions
  --stats FILE.json        statistics and profile: per engine, per static instruction, opcode and source
                           line (executions, busy ns, wait ns by reason), critical path (docs/profiling.md)
  --seed N                 seed of the generated inputs (default 0: the documented deterministic draw;
                           printed in the run header)
  --save-inputs DIR        write every input as used (given or generated) to DIR/<tensor>.npy; a run of
                           several ranks writes rank r's to DIR/rank<r>/<tensor>.npy (--inputs DIR replays it)
  --json                   print the run summary as one JSON object on stdout (nothing else goes there;
                           DevicePrint lines go to stderr unless --device-print is given)
  --quiet                  print nothing on success (mismatches and errors still go out)
  --top N                  after the run, the N static instructions that hold the critical path longest
  --trace FILE.json        Chrome/Perfetto timeline (open in ui.perfetto.dev)
  --cores N                N NeuronCores (1..8) running the kernel in one simulation, sharing the
                           device's DRAM; collectives meet across them (docs/multicore.md).
                           Default: run.json's, else what the kernel names (replica groups, peers,
                           ShardIDKind ub); a number that contradicts the kernel is refused
  --lnc L                  physical cores per logical core (shard ids 0..L-1); --lnc 2 alone runs 2
                           cores (trn2, trn3: LNC=2; trn1 has no logical cores)
  --strict                 an output element no instruction wrote is an error (exit 4), not a warning
  --timing-only            timeline and statistics only: skip the numeric work, write no outputs
                           (so --input, --inputs and --expect cannot be given with it)
  --include-preamble       report the total as a profiler does: with the architecture's fixed start and end
                           of an execution (kernel_preamble_ns, 22 us; docs/timing-model.md 8)
  --max-instructions N     stop with an error (naming the instruction) when the run would execute more
                           than N dynamic instructions or loop trips (default 1000000000 = 1e9)
  --schedule MODE          auto (default), whole or streamed: how the run holds its dynamic schedule
                           (docs/cli.md "Long kernels"); auto streams a --timing-only run without --trace
  --kernel-sim PROG        run CustomOp / BIRKernel instructions with the external program PROG, as
                           `PROG DIR/config.json` (operands as DIR/in<i>.npy, results read from
                           DIR/out<i>.npy; DIR is a fresh temporary directory; docs/cli.md "External kernels")
  --device-print FILE      write DevicePrint lines to FILE (default: stdout, before the summary)
  --sanitize               check the run for uninitialized reads, loop-carried dependencies of NKI affine_range
                           loops and races (docs/sanitizer.md; with --timing-only too): one line per finding
                           on stderr, "sanitizer: KIND: ...", the stats' "sanitizer" list, exit 5

Output files (--outdir's, --stats, --trace, --report, --device-print, --save-inputs) are regular files,
replaced whole when the run succeeds, or character devices such as /dev/null, written in place; a FIFO,
socket, block device or directory is refused before the run. A write error on stdout is an error (exit 3).

Inputs that are not given are generated deterministically (floats uniform in [-1,1), integers small),
seeded by the tensor name (and --seed N when given). bf16 and fp8 .npy files hold raw bit patterns as uint16 / uint8.
Input and expected arrays must have exactly the tensor's shape. Outputs are written as <tensor>.npy inside
--outdir ('/' and control characters in a name become '_'); no output may be the kernel, an input or an expected
file, and every output path is checked before the run. A key a type does not have is warned about; a required
key that is missing is an error (docs/bad-input.md).

exit codes: 0 ok, 1 outputs differ, 2 usage, 3 invalid input, 4 simulation error (deadlock, fault),
            5 the sanitizer found something (--sanitize; outputs are written first; it wins over 1)
)";

std::string find_workloads_dir() {
  if (const char *env = std::getenv("NEURONSIM_WORKLOADS")) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path d : {exe.parent_path() / "workloads", exe.parent_path().parent_path() / "workloads"})
      if (fs::is_directory(d)) return d.string();
  }
  return std::string(NEURONSIM_SOURCE_DIR) + "/workloads";
}

// --seed N: a whole number from 0 to 2^64 - 1.
uint64_t parse_seed(const std::string &v) {
  size_t used = 0;
  uint64_t n = 0;
  try {
    if (!v.empty() && v[0] != '-') n = std::stoull(v, &used);
  } catch (...) {
    used = 0;
  }
  if (v.empty() || used != v.size()) throw UsageError("option --seed needs a whole number >= 0, got '" + v + "'");
  return n;
}

// --max-instructions: a whole number >= 1, in digits or as a power-of-ten form such as 1e9.
int64_t parse_instruction_count(const std::string &opt, const std::string &v) {
  size_t used = 0;
  try {
    const long long n = std::stoll(v, &used);
    if (used == v.size() && n >= 1) return n;
  } catch (...) {
  }
  if (used != v.size()) {
    const double d = parse_double(opt, v);
    if (d >= 1 && d <= 9.0e18 && d == std::floor(d)) return static_cast<int64_t>(d);
  }
  throw UsageError("option " + opt + " needs a whole number >= 1, got '" + v + "'");
}

// The progress line of a long run on a terminal (stderr), sim::ProgressLine's text, erased when the run ends.
struct Progress {
  sim::ProgressLine text;
  void operator()(int64_t done, int64_t total, double sim_ns) {
    const std::string l = text.line(done, total, sim_ns);
    if (!l.empty())
      std::cerr << "\r  " << l << "\033[K" << std::flush;
  }
  void clear() {
    if (text.shown())
      std::cerr << "\r\033[K" << std::flush;
  }
};

// What `run`'s options set (run_options), filled in command-line order.
struct RunArgs {
  std::string kernel, outdir = "neuronsim-out", expect, stats, trace, device_print, report;
  int top = 0;
  bool json = false, quiet = false, why = false, sensitivity = false, strict = false;
  sim::RunSettings set;
  RunArgs() {
    set.options.arch.clear(); // unset: the kernel decides (sim::complete_settings)
    set.options.schedule = sim::ScheduleMode::Auto;
  }
};

// The options of `run`, one row each (cli.hpp: parsing, the nearest of an unknown option, the help list);
// `nki` forwards the same rows (run_option_rows).
std::vector<Option> run_options(RunArgs &r) {
  return {
      {"--input", "NAME=FILE.npy", "data for input tensor NAME (repeatable)",
       [&r](const std::string &v) { add_input(r.set.inputs, v); }},
      {"--inputs", "DIR", "DIR/<tensor>.npy for every input found there",
       [&r](const std::string &v) { r.set.inputs.dir = need_path("--inputs", v); }},
      {"--outdir", "DIR", "where <tensor>.npy is written for every output",
       [&r](const std::string &v) { r.outdir = need_path("--outdir", v); }},
      {"--expect", "DIR", "compare outputs with DIR/<tensor>.npy",
       [&r](const std::string &v) { r.expect = need_path("--expect", v); }},
      {"--rtol", "R", "relative tolerance",
       [&r](const std::string &v) { r.set.rtol = parse_tolerance("--rtol", v); }},
      {"--atol", "A", "absolute tolerance",
       [&r](const std::string &v) { r.set.atol = parse_tolerance("--atol", v); }},
      {"--arch", "NAME|FILE.json", "the architecture",
       [&r](const std::string &v) { r.set.options.arch = sim::parse_arch(v, "--arch"); }},
      {"--set", "KEY=VALUE", "an architecture parameter set over --arch (repeatable)",
       [&r](const std::string &v) { r.set.arch_sets.push_back(sim::parse_arch_set(v, "--set")); }},
      {"--why", "", "per engine and DMA queue: busy, waiting by reason, idle",
       [&r](const std::string &) { r.why = true; }},
      {"--sensitivity", "", "timing-only reruns with each headline parameter made 2x better",
       [&r](const std::string &) { r.sensitivity = true; }},
      {"--report", "FILE.html", "one self-contained HTML page of the run",
       [&r](const std::string &v) { r.report = need_path("--report", v); }},
      {"--stats", "FILE.json", "statistics and profile",
       [&r](const std::string &v) { r.stats = need_path("--stats", v); }},
      {"--trace", "FILE.json", "Perfetto timeline",
       [&r](const std::string &v) { r.trace = need_path("--trace", v); }},
      {"--top", "N", "the N instructions holding the critical path longest",
       [&r](const std::string &v) { r.top = parse_count("--top", v); }},
      {"--json", "", "the run summary as one JSON object on stdout",
       [&r](const std::string &) { r.json = true; }},
      {"--seed", "N", "seed of the generated inputs",
       [&r](const std::string &v) { r.set.inputs.seed = parse_seed(v); }},
      {"--save-inputs", "DIR", "write every input as used",
       [&r](const std::string &v) { r.set.save_inputs = need_path("--save-inputs", v); }},
      {"--quiet", "", "nothing on success", [&r](const std::string &) { r.quiet = true; }},
      {"--timing-only", "", "timeline and statistics only",
       [&r](const std::string &) { r.set.options.timing_only = true; }},
      {"--include-preamble", "", "the total with the execution's fixed start and end, as a profiler shows it",
       [&r](const std::string &) { r.set.options.include_preamble = true; }},
      {"--schedule", "MODE", "auto, whole or streamed",
       [&r](const std::string &v) { r.set.options.schedule = sim::parse_schedule(v, "--schedule"); }},
      {"--max-instructions", "N", "stop past N dynamic instructions",
       [&r](const std::string &v) {
         r.set.options.max_instructions = parse_instruction_count("--max-instructions", v);
       }},
      {"--cores", "N", "N NeuronCores", [&r](const std::string &v) { r.set.cores = parse_cores("--cores", v); }},
      {"--lnc", "L", "physical cores per logical core",
       [&r](const std::string &v) { r.set.lnc = parse_cores("--lnc", v); }},
      {"--strict", "", "an output element no instruction wrote is an error (exit 4), not a warning",
       [&r](const std::string &) { r.strict = true; }},
      {"--kernel-sim", "PROG", "run CustomOp / BIRKernel with an external program",
       [&r](const std::string &v) {
         r.set.options.kernel_sim = v;
         if (r.set.options.kernel_sim.empty())
           throw UsageError("--kernel-sim needs a program");
       }},
      {"--sanitize", "", "check for uninitialized reads, loop-carried dependencies and races",
       [&r](const std::string &) { r.set.options.sanitize = true; }},
      {"--device-print", "FILE", "DevicePrint lines to FILE",
       [&r](const std::string &v) {
         r.device_print = v;
         if (r.device_print.empty())
           throw UsageError("--device-print needs a file name");
       }},
  };
}

// 1. The kernel read and the run's settings completed; `bundled`: no KERNEL was given, the bundled default
// workload runs.
sim::Kernel load_run_kernel(RunArgs &args, const RunFrom &from, bool &bundled) {
  std::string &kernel = args.kernel, &outdir = args.outdir, &expect = args.expect, &stats = args.stats,
              &trace = args.trace, &device_print = args.device_print, &report = args.report;
  sim::RunSettings &set = args.set;
  sim::RunOptions &opts = set.options;
  set.strict = args.strict;
  // What the command line gave is checked before the kernel is read (folders exist, tolerances, --timing-only).
  if (!expect.empty()) set.expect = sim::ExpectSpec{expect, {}};
  sim::check_settings(set);
  if (!set.save_inputs.empty() && opts.timing_only)
    throw UsageError("--timing-only runs no numerics: --save-inputs has no inputs to save");
  bundled = kernel.empty();
  if (bundled) kernel = find_workloads_dir() + "/kernel1";
  sim::Kernel k = sim::load_kernel(kernel);
  if (!from.label.empty()) k.label = from.label;
  if (!from.sources.empty() && !from.label.empty()) {
    // Made from the user's files (nki's FILE.py) through a BIR file of neuronsim's own: the stats, the warnings
    // and the errors name the kernel as the user gave it, never that file.
    for (auto &w : k.program.warnings)
      for (size_t at = 0; (at = w.find(k.program.file, at)) != std::string::npos; at += from.label.size())
        w.replace(at, k.program.file.size(), from.label);
    k.program.file = from.label;
  }
  k.files.insert(k.files.end(), from.sources.begin(), from.sources.end());
  const isa::Program &prog = k.program;
  print_warnings(prog);
  sim::complete_settings(k, set);
  // Every output path is checked (and --outdir created) before the run; no output may be a file the run reads.
  sim::prepare_run_outputs(k, set, outdir,
                           {stats, trace, report, opts.timing_only ? std::string() : device_print});
  // The report draws the engine timeline from the run's events, which a streamed run does not keep.
  if (!report.empty() && opts.schedule == sim::ScheduleMode::Auto)
    opts.schedule = sim::ScheduleMode::Whole;
  if (!report.empty())
    opts.record_dma_engine_slices = true; // and the DMA engines' rows
  return k;
}

// 2. DevicePrint lines: on stdout as they happen (so before the summary), or into --device-print FILE,
// written through a temporary that only a successful run renames into place (the file returned, committed
// after the run). A timing-only run prints nothing and creates no file.
std::unique_ptr<isa::AtomicFile> route_device_print(RunArgs &args) {
  const std::string &device_print = args.device_print;
  const bool &json = args.json;
  sim::RunOptions &opts = args.set.options;
  std::unique_ptr<isa::AtomicFile> print_file;
  if (!device_print.empty() && !opts.timing_only) {
    print_file = std::make_unique<isa::AtomicFile>(device_print);
    opts.device_print = [f = print_file.get()](const std::string &l) { f->write(l + "\n"); };
  } else if (json) {
    opts.device_print = [](const std::string &l) { std::cerr << l << "\n"; };  // stdout holds the JSON alone
  } else {
    opts.device_print = [](const std::string &l) { std::cout << l << "\n"; };
  }
  return print_file;
}

// 3. The run header, before the run (a long run is not silent about what it is doing).
void print_run_header(std::ostream &out, const sim::Kernel &k, const RunArgs &args, const RunFrom &from,
                      bool bundled) {
  const sim::RunSettings &set = args.set;
  const sim::RunOptions &opts = set.options;
  const isa::Program &prog = k.program;
  out << "neuronsim " << from.command << ": " << k.label << (bundled ? " (bundled default workload)" : "") << "\n";
  out << "arch " << set.options.arch << ", " << prog.insts.size() << " instructions"
      << (opts.timing_only ? " (timing only)" : ", input seed " + std::to_string(set.inputs.seed));
  if (set.cores > 1)
    out << ", " << set.cores << " cores (LNC=" << set.lnc
        << (set.cores_from.empty() ? "" : ", from " + set.cores_from) << ")";
  out << "\n" << std::flush;
}

// 4. Output elements no instruction wrote: one warning per tensor, or with --strict the run's error
// (returned, not thrown: an exception after SystemC has run is misreported under ASan, .ci/run): 4, else 0.
int report_unwritten(const sim::Kernel &k, const sim::Run &run, bool strict) {
  for (const auto &u : run.unwritten) {
    const std::string line = k.label + ": " + sim::unwritten_line(u, run.ranks());
    if (strict) {
      std::cerr << "neuronsim: " << sim::one_line(line) << " (--strict"
                << (run.unwritten.size() > 1
                        ? "; " + std::to_string(run.unwritten.size() - 1) + " more output" +
                              (run.unwritten.size() > 2 ? "s" : "") + " alike"
                        : std::string())
                << ")\n";
      return 4;
    }
    std::cerr << "neuronsim: warning: " << sim::one_line(line) << "\n";
  }
  return 0;
}

// 5. The --json document: the stats document without the profiles and critical paths (each core's too), and
// what the run read and left unwritten.
nlohmann::json json_summary(const nlohmann::json &doc, const sim::Run &run, const RunArgs &args) {
  const sim::RunSettings &set = args.set;
  const sim::RunOptions &opts = set.options;
  nlohmann::json summary = doc;
  summary.erase("profile");
  summary.erase("critical_path");
  if (summary.contains("cores")) // several cores: each core's document, as short as core 0's
    for (auto &c : summary["cores"])
      c.erase("profile"), c.erase("critical_path");
  summary["timing_only"] = opts.timing_only;
  summary["inputs"] = run.input_lines;
  if (!opts.timing_only) summary["seed"] = set.inputs.seed;
  if (!opts.timing_only) {
    summary["unwritten"] = nlohmann::json::object(); // per output: its elements no instruction wrote
    for (const auto &u : run.unwritten)
      summary["unwritten"][run.ranks() > 1 ? "rank" + std::to_string(u.rank) + "/" + u.tensor : u.tensor] =
          u.unwritten;
  }
  return summary;
}

// 6. --sensitivity: the timing-only reruns (their count on a terminal), their table, and their rows in the
// --json document.
void print_sensitivity(std::ostream &out, const sim::Kernel &k, const RunArgs &args, const sim::Run &run,
                       nlohmann::json &summary) {
  const bool &json = args.json, &quiet = args.quiet;
  const sim::RunSettings &set = args.set;
  const sim::RunResult &r = run.result;
  const double base = run.device ? run.device_result.total_ns : r.total_ns;
  const bool tty = !quiet && !json && isatty(STDERR_FILENO);
  const auto rows = sim::sensitivity(k, set, run, [&](size_t i, size_t n) {
    if (tty)
      std::cerr << "\r  sensitivity: rerun " << i + 1 << " of " << n << "\033[K" << std::flush;
  });
  if (tty)
    std::cerr << "\r\033[K" << std::flush;
  out << "sensitivity (timing-only reruns, one parameter made 2x better each; speed-up over "
      << sim::human_time(base) << "):\n";
  for (const auto &row : rows) {
    char line[96];
    if (!row.used) {
      std::snprintf(line, sizeof line, "  %7s  %12s  %-20s  ", "-", "-", row.parameter.c_str());
      out << line << "not used by this run\n";
      if (json)
        summary["sensitivity"].push_back({{"parameter", row.parameter}, {"used", false}});
      continue;
    }
    std::snprintf(line, sizeof line, "  %6.3fx  %12s  %-20s  ", row.speedup,
                  sim::human_time(row.total_ns).c_str(), row.parameter.c_str());
    out << line << row.arch << "\n";
    if (json)
      summary["sensitivity"].push_back({{"parameter", row.parameter},
                                        {"arch", row.arch},
                                        {"total_ns", row.total_ns},
                                        {"speedup", row.speedup},
                                        {"used", true}});
  }
}

// 7. The files the run writes besides its outputs (--stats, --report; --trace was streamed by the run), each
// named on `out` and in the --json document.
void write_run_files(std::ostream &out, const sim::Kernel &k, const sim::Run &run, const RunArgs &args,
                     const nlohmann::json &doc, nlohmann::json &summary) {
  const std::string &stats = args.stats, &trace = args.trace, &report = args.report;
  const bool &json = args.json;
  const sim::Simulator &simulator = *run.simulator;
  const sim::RunResult &r = run.result;
  const isa::Program &prog = k.program;
  if (!stats.empty()) {
    sim::write_json_file(stats, doc);
    out << "stats: " << stats << "\n";
    if (json)
      summary["stats"] = stats;
  }
  if (!report.empty()) {
    // The timeline: the trace the run wrote (--trace), else the run's events replayed as one.
    const nlohmann::json timeline = !trace.empty() ? isa::read_json_file(trace, "trace file")
                                    : run.device || simulator.schedule().insts.empty()
                                        ? nlohmann::json()
                                        : sim::trace_json(r, simulator.schedule(), prog);
    isa::write_file_atomic(report,
                           sim::run_report_html(doc, timeline.is_null() ? nullptr : &timeline, "", trace));
    out << "report: " << report << "\n";
    if (json)
      summary["report"] = report;
  }
  if (!trace.empty()) {
    out << "trace: " << trace << "\n";
    if (json) summary["trace"] = trace;
  }
}

// 8. The outputs written and compared with the expected ones (a timing-only run has none): 1 when they
// differ, else 0.
int write_and_check_outputs(std::ostream &out, const sim::Kernel &k, sim::Run &run, const RunArgs &args,
                            nlohmann::json &summary) {
  const std::string &outdir = args.outdir;
  const bool &json = args.json;
  const sim::RunSettings &set = args.set;
  const sim::RunOptions &opts = set.options;
  const isa::Program &prog = k.program;
  if (opts.timing_only) return 0;
  const double rtol = *set.rtol, atol = *set.atol;
  for (int r = 0; r < run.ranks(); ++r)  // several ranks: OUTDIR/rank<r>/ each (docs/multicore.md)
    for (const auto &p : sim::write_outputs(prog, run.rank_memory(r), sim::rank_outdir(outdir, r, run.ranks()))) {
      out << "  output " << p << "\n";
      if (json) summary["outputs"].push_back(p);
    }
  if (!set.no_expected.empty())
    out << "no expected outputs in " << set.no_expected << " (nothing compared)\n";
  if (set.expect) {
    std::vector<std::string> checked;
    const auto bad = sim::check_outputs(k, run, set, &checked);
    // Mismatches are reported with --quiet too (on stdout as before; into the document with --json).
    std::ostream &report = json ? out : std::cout;
    report << std::setprecision(6) << std::defaultfloat;
    for (const auto &m : bad) report << sim::mismatch_line(m, rtol, atol) << "\n";
    if (json) {
      summary["outputs_match"] = bad.empty();
      summary["expected"] = set.expect->dir;
      for (const auto &m : bad) summary["mismatches"].push_back(sim::mismatch_line(m, rtol, atol));
    }
    if (!bad.empty()) return 1;
    out << "outputs match " << set.expect->dir << " (" << checked.size() << " tensors, rtol " << rtol << ", atol "
              << atol << ")\n";
  }
  return 0;
}

} // namespace

// A sanitized run's findings, one line each on stderr (and in the --json document): true when there are any (the
// run then exits 5, docs/sanitizer.md).
static bool report_findings(const sim::Run &run, nlohmann::json &summary, bool json) {
  if (!run.result.sanitized) return false;
  for (const auto &f : run.result.findings) std::cerr << sim::one_line(sim::finding_line(f)) << "\n";
  if (json) summary["sanitizer"] = sim::findings_json(run.result.findings);
  return !run.result.findings.empty();
}

std::vector<Option> run_option_rows() {
  RunArgs unused;
  std::vector<Option> rows = run_options(unused);
  for (auto &row : rows)
    row.apply = nullptr;
  return rows;
}

int cmd_run(const std::vector<std::string> &a, const RunFrom &from) {
  RunArgs args;
  std::string &kernel = args.kernel;
  const bool go = parse_options(a, run_options(args), [&](const std::string &o) {
    if (o.empty())
      throw UsageError("KERNEL is an empty path (no KERNEL at all runs the bundled workload)");
    if (kernel.empty())
      kernel = o;
    else
      throw UsageError("more than one KERNEL given ('" + kernel + "', '" + o + "')");
  });
  if (!go) {
    std::cout << kRunHelp;
    return 0;
  }
  bool bundled = false;
  const sim::Kernel k = load_run_kernel(args, from, bundled);
  const std::unique_ptr<isa::AtomicFile> print_file = route_device_print(args);
  // The human-readable report: stdout, or nowhere with --json (which prints its own document) or --quiet.
  std::ostringstream discard;
  std::ostream &out = args.json || args.quiet ? static_cast<std::ostream &>(discard) : std::cout;
  print_run_header(out, k, args, from, bundled);
  // The progress line: on a terminal only, not with --quiet / --json, from one second into the run, at most five
  // times a second, erased when the run ends.
  Progress progress;
  if (!args.quiet && !args.json && isatty(STDERR_FILENO)) args.set.options.progress = std::ref(progress);
  args.set.trace = args.trace;  // streamed as the run goes, renamed into place when it succeeds
  sim::Run run = sim::run_kernel(k, args.set);
  const sim::RunResult &r = run.result;
  progress.clear();
  if (const int code = report_unwritten(k, run, args.strict)) return code;
  if (print_file) print_file->commit();

  out << r.dynamic_instructions << " dynamic instructions executed\n";
  for (const auto &l : run.input_lines) out << "  input  " << l << "\n";
  for (const auto &f : run.saved_inputs)
    out << "  saved  " << f << "\n";
  std::vector<std::string> command_line = from.command_line;
  if (command_line.empty()) {
    command_line = {"neuronsim", "run"};
    command_line.insert(command_line.end(), a.begin(), a.end());
  }
  // The stats document: with the profile when something shows it (--stats, --top, --why, --report), else the
  // cheap one the summary's verdict needs.
  const bool profile = !args.stats.empty() || args.top > 0 || args.why || !args.report.empty();
  const nlohmann::json doc = sim::run_stats(run, k.program, command_line, profile);
  out << sim::summary_text(run, doc, args.why);
  nlohmann::json summary;  // --json
  if (args.json) summary = json_summary(doc, run, args);
  // Printed last, whatever way the run ends from here (outputs differing included).
  struct PrintJson {
    const nlohmann::json *doc;
    ~PrintJson() {
      if (doc) std::cout << doc->dump() << "\n";
    }
  } print_json{args.json ? &summary : nullptr};
  if (args.top > 0)
    sim::print_top(out, doc, args.top);
  if (args.sensitivity) print_sensitivity(out, k, args, run, summary);
  write_run_files(out, k, run, args, doc, summary);
  const int code = write_and_check_outputs(out, k, run, args, summary);
  return report_findings(run, summary, args.json) ? 5 : code;
}

} // namespace neuronsim::cli
