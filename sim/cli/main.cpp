// The `neuronsim` command (DESIGN.md section 5). Calls public headers only.
// Exit codes: 0 success; 1 outputs differ from --expect / validation divergence; 2 usage; 3 invalid input;
// 4 simulation error.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <systemc>
#include <unistd.h>
#include <vector>

#include "neuronsim/engines/cost.hpp"
#include "neuronsim/engines/ops.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/isa/dump.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/isa/names.hpp"
#include "neuronsim/sim/analysis.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/stream_form.hpp"
#include "neuronsim/sim/report.hpp"
#include "neuronsim/sim/session.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "neuronsim/sim/stats.hpp"
#include "neuronsim/sim/validate.hpp"
#include "neuronsim/sim/version.hpp"

#include "cli.hpp"

namespace fs = std::filesystem;
using namespace neuronsim;
using namespace neuronsim::cli;

namespace {

// SystemC prints its banner from its own main() before sc_main; a simulator's output should be its own.
const bool kQuietSystemC = [] { return setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0; }();

const char *kHelp = R"(neuronsim - cycle-level simulator of an AWS NeuronCore (PE, ACT, POOL, DVE, SP)

usage:
  neuronsim run [KERNEL] [options]    run a BIR JSON kernel (file, or a workload directory)
  neuronsim run DIR [options]         run the bundle streams of DIR (written by `neuronsim encode`)
  neuronsim encode KERNEL --gen v2|v3|v4 -o DIR [--cores N --lnc L]   BIR -> per-engine 64-byte bundle streams
                                      (--cores: one set per core, DIR/core<i>)
  neuronsim disasm FILE_OR_DIR [--gen v2|v3|v4]    bundles -> one readable line per bundle
  neuronsim validate --bir KERNEL --bundles DIR [options]   run both, compare, lint the streams
  neuronsim isa [--json | --keys | --roles | --explain TYPE]
                                      print every ISA table the simulator knows (--keys: each instruction
                                      type's BIR JSON keys, required and optional; --roles: what each ins[i] /
                                      outs[i] is; --explain TYPE: one type in full; docs/bir-format.md)
  neuronsim arch --list | --keys | --show NAME   the built-in architectures; the parameters --set takes;
                                      one's JSON (a start for --arch FILE.json)
  neuronsim sweep KERNEL_OR_DIR... [--arch trn1,trn2,trn3] [--scheduler tcp://HOST:PORT] [--workers N]
                  [-o RESULTS.csv] [--resume] [--rank-by COLUMN] [--numeric]
                                      one run per (kernel, arch) on Dask: a local cluster, or a scheduler's
                                      workers; a row of results per run (neuronsim sweep --help)
  neuronsim nki FILE.py::FUNCTION [--input NAME=X.npy | --shape NAME=128x512[:DTYPE]]... [--emit-bir FILE]
                  [run options]   an NKI kernel file traced to BIR and run (neuronsim nki --help)
  neuronsim compare A B [--fail-if-slower PCT] [--top N] [--arch NAME|FILE.json] [--set KEY=VALUE]
                  [--arch-b NAME|FILE.json] [--set-b KEY=VALUE]
                                      two --stats files (or two kernels, run timing-only; or one kernel on two
                                      machines) side by side
  neuronsim report STATS.json [TRACE.json] | RESULTS.csv -o FILE.html
                                      one self-contained HTML page of a run or a sweep (docs/profiling.md)
  neuronsim --version | --help

Each command's options: neuronsim COMMAND --help (neuronsim run --help, ...).

`neuronsim sweep` is the Python package's (neuronsim.sweeps, Dask): it runs `python3 -m neuronsim sweep ARGS`
with the interpreter the package was built for (NEURONSIM_PYTHON overrides it), the build's package first on
PYTHONPATH. It needs Debian's python3-distributed.

exit codes: 0 ok, 1 outputs differ, 2 usage, 3 invalid input, 4 simulation error (deadlock, fault)
)";

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

Output files (--outdir's, --stats, --trace, --report, --device-print, --save-inputs) are regular files,
replaced whole when the run succeeds, or character devices such as /dev/null, written in place; a FIFO,
socket, block device or directory is refused before the run. A write error on stdout is an error (exit 3).

Inputs that are not given are generated deterministically (floats uniform in [-1,1), integers small),
seeded by the tensor name (and --seed N when given). bf16 and fp8 .npy files hold raw bit patterns as uint16 / uint8.
Input and expected arrays must have exactly the tensor's shape. Outputs are written as <tensor>.npy inside
--outdir ('/' and control characters in a name become '_'); no output may be the kernel, an input or an expected
file, and every output path is checked before the run. A key a type does not have is warned about; a required
key that is missing is an error (docs/bad-input.md).

exit codes: 0 ok, 1 outputs differ, 2 usage, 3 invalid input, 4 simulation error (deadlock, fault)
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

// --input NAME=FILE.npy: both parts non-empty, each NAME once.
void add_input(sim::InputSpec &spec, const std::string &v) {
  const auto eq = v.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError("--input takes NAME=FILE.npy, got '" + v + "'");
  const std::string name = v.substr(0, eq), file = v.substr(eq + 1);
  if (file.empty()) throw UsageError("--input " + name + "= needs a file name after '='");
  if (!spec.files.emplace(name, file).second)
    throw UsageError("--input " + name + " is given twice ('" + spec.files[name] + "' and '" + file + "')");
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

// What the reader ignored (unknown keys), one line each on stderr before the run.
void print_warnings(const isa::Program &p) {
  for (const auto &w : p.warnings) std::cerr << "neuronsim: warning: " << sim::one_line(w) << "\n";
}

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
      {"--device-print", "FILE", "DevicePrint lines to FILE",
       [&r](const std::string &v) {
         r.device_print = v;
         if (r.device_print.empty())
           throw UsageError("--device-print needs a file name");
       }},
  };
}

} // namespace

std::vector<Option> neuronsim::cli::run_option_rows() {
  RunArgs unused;
  std::vector<Option> rows = run_options(unused);
  for (auto &row : rows)
    row.apply = nullptr;
  return rows;
}

int neuronsim::cli::cmd_run(const std::vector<std::string> &a, const RunFrom &from) {
  RunArgs args;
  std::string &kernel = args.kernel, &outdir = args.outdir, &expect = args.expect, &stats = args.stats,
              &trace = args.trace, &device_print = args.device_print, &report = args.report;
  const int &top = args.top;
  const bool &json = args.json, &quiet = args.quiet, &why = args.why, &sensitivity = args.sensitivity,
             &strict = args.strict;
  sim::RunSettings &set = args.set;
  sim::RunOptions &opts = set.options;
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
  set.strict = strict;
  // What the command line gave is checked before the kernel is read (folders exist, tolerances, --timing-only).
  if (!expect.empty()) set.expect = sim::ExpectSpec{expect, {}};
  sim::check_settings(set);
  if (!set.save_inputs.empty() && opts.timing_only)
    throw UsageError("--timing-only runs no numerics: --save-inputs has no inputs to save");
  const bool bundled = kernel.empty();
  if (bundled) kernel = find_workloads_dir() + "/kernel1";
  sim::Kernel k = sim::load_kernel(kernel);
  if (!from.label.empty()) k.label = from.label;
  const isa::Program &prog = k.program;
  print_warnings(prog);
  sim::complete_settings(k, set);
  const double rtol = *set.rtol, atol = *set.atol;
  // Every output path is checked (and --outdir created) before the run; no output may be a file the run reads.
  sim::prepare_run_outputs(k, set, outdir,
                           {stats, trace, report, opts.timing_only ? std::string() : device_print});
  // The report draws the engine timeline from the run's events, which a streamed run does not keep.
  if (!report.empty() && opts.schedule == sim::ScheduleMode::Auto)
    opts.schedule = sim::ScheduleMode::Whole;
  if (!report.empty())
    opts.record_dma_engine_slices = true; // and the DMA engines' rows

  // DevicePrint lines: on stdout as they happen (so before the summary), or into --device-print FILE, written
  // through a temporary that only a successful run renames into place. A timing-only run prints nothing and
  // creates no file.
  std::unique_ptr<isa::AtomicFile> print_file;
  if (!device_print.empty() && !opts.timing_only) {
    print_file = std::make_unique<isa::AtomicFile>(device_print);
    opts.device_print = [f = print_file.get()](const std::string &l) { f->write(l + "\n"); };
  } else if (json) {
    opts.device_print = [](const std::string &l) { std::cerr << l << "\n"; };  // stdout holds the JSON alone
  } else {
    opts.device_print = [](const std::string &l) { std::cout << l << "\n"; };
  }
  // The human-readable report: stdout, or nowhere with --json (which prints its own document) or --quiet.
  std::ostringstream discard;
  std::ostream &out = json || quiet ? static_cast<std::ostream &>(discard) : std::cout;
  // The run header, before the run (a long run is not silent about what it is doing).
  out << "neuronsim " << from.command << ": " << k.label << (bundled ? " (bundled default workload)" : "") << "\n";
  out << "arch " << set.options.arch << ", " << prog.insts.size() << " instructions"
      << (opts.timing_only ? " (timing only)" : ", input seed " + std::to_string(set.inputs.seed));
  if (set.cores > 1)
    out << ", " << set.cores << " cores (LNC=" << set.lnc
        << (set.cores_from.empty() ? "" : ", from " + set.cores_from) << ")";
  out << "\n" << std::flush;
  // The progress line: on a terminal only, not with --quiet / --json, from one second into the run, at most five
  // times a second, erased when the run ends.
  Progress progress;
  if (!quiet && !json && isatty(STDERR_FILENO)) opts.progress = std::ref(progress);
  set.trace = trace;  // streamed as the run goes, renamed into place when it succeeds
  sim::Run run = sim::run_kernel(k, set);
  const sim::Simulator &simulator = *run.simulator;
  const sim::RunResult &r = run.result;
  progress.clear();
  // Output elements no instruction wrote: one warning per tensor, or with --strict the run's error (returned,
  // not thrown: an exception after SystemC has run is misreported under ASan, .ci/run).
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
  const bool profile = !stats.empty() || top > 0 || why || !report.empty();
  const nlohmann::json doc = sim::run_stats(run, prog, command_line, profile);
  out << sim::summary_text(run, doc, why);
  nlohmann::json summary;  // --json
  if (json) {
    summary = doc;
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
  }
  // Printed last, whatever way the run ends from here (outputs differing included).
  struct PrintJson {
    const nlohmann::json *doc;
    ~PrintJson() {
      if (doc) std::cout << doc->dump() << "\n";
    }
  } print_json{json ? &summary : nullptr};
  if (top > 0)
    sim::print_top(out, doc, top);
  if (sensitivity) {
    const double base = run.device ? run.device_result.total_ns : r.total_ns;
    const bool tty = !quiet && !json && isatty(STDERR_FILENO);
    const auto rows = sim::sensitivity(k, set, base, [&](size_t i, size_t n) {
      if (tty)
        std::cerr << "\r  sensitivity: rerun " << i + 1 << " of " << n << "\033[K" << std::flush;
    });
    if (tty)
      std::cerr << "\r\033[K" << std::flush;
    out << "sensitivity (timing-only reruns, one parameter made 2x better each; speed-up over "
        << sim::human_time(base) << "):\n";
    for (const auto &row : rows) {
      char line[96];
      std::snprintf(line, sizeof line, "  %6.3fx  %12s  %-20s  ", row.speedup,
                    sim::human_time(row.total_ns).c_str(), row.parameter.c_str());
      out << line << row.arch << "\n";
      if (json)
        summary["sensitivity"].push_back({{"parameter", row.parameter},
                                          {"arch", row.arch},
                                          {"total_ns", row.total_ns},
                                          {"speedup", row.speedup}});
    }
  }
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
    isa::write_file_atomic(report, sim::run_report_html(doc, timeline.is_null() ? nullptr : &timeline));
    out << "report: " << report << "\n";
    if (json)
      summary["report"] = report;
  }
  if (!trace.empty()) {
    out << "trace: " << trace << "\n";
    if (json) summary["trace"] = trace;
  }
  if (opts.timing_only) return 0;
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


namespace {

int cmd_isa(const std::vector<std::string> &a) {
  bool json = false, keys = false, roles = false;
  std::string explain;
  const std::vector<Option> options = {
      {"--json", "", "every table as one JSON document", [&](const std::string &) { json = true; }},
      {"--keys", "",
       "the BIR JSON keys of each instruction type, required and optional, as a Markdown table "
       "(isa/tables/inst_keys.def; docs/bir-format.md)",
       [&](const std::string &) { keys = true; }},
      {"--roles", "",
       "the role of each ins[i] / outs[i] of every type that reads operands, as a Markdown table",
       [&](const std::string &) { roles = true; }},
      {"--explain", "TYPE",
       "one instruction type: its operands' roles, its keys (required, type, default, "
       "meaning), engines, opcode bytes and cost rule",
       [&](const std::string &v) { explain = v; }},
  };
  if (!parse_options(a, options,
                     [](const std::string &o) { throw UsageError("isa takes no argument '" + o + "'"); })) {
    std::cout << "usage: neuronsim isa [--json | --keys | --roles | --explain TYPE]\n"
              << options_help(options);
    return 0;
  }
  if (json + keys + roles + !explain.empty() > 1)
    throw UsageError("isa takes one of --json, --keys, --roles and --explain TYPE");
  const auto executes = [](isa::InstructionType t) { return engines::executes(t); };
  if (!explain.empty()) {
    std::vector<std::string> names;
    for (int i = 0; i < isa::kNumInstructionTypes; ++i)
      names.push_back(isa::inst_type_name(static_cast<isa::InstructionType>(i)));
    const auto t = isa::inst_type_from_name(explain);
    if (!t)
      throw UsageError("--explain: " + isa::unknown_name("instruction type", explain, names, {}, 0) +
                       "; `neuronsim isa` lists the " + std::to_string(names.size()) + " types");
    isa::ExplainExtras x;
    x.executes = engines::executes(*t);
    x.not_executed = engines::not_executed_reason(*t);
    if (const char *rule = engines::cost_rule_name(*t))
      x.cost_rule = rule, x.cost_why = engines::cost_rule_why(*t);
    std::cout << isa::explain_type(*t, x);
    return 0;
  }
  if (roles) {
    std::cout << isa::roles_table();
    return 0;
  }
  if (keys) {
    // The rows of the --json document's instruction_types, so that both read the one table.
    auto words = [](const nlohmann::json &list) {
      std::string s;
      for (const auto &k : list) s += (s.empty() ? "" : " ") + k.get<std::string>();
      return s.empty() ? std::string("-") : s;
    };
    std::cout << "| type | required keys | optional keys |\n|---|---|---|\n";
    const nlohmann::json tables = isa::isa_tables_json(executes);
    for (const auto &t : tables["instruction_types"])
      std::cout << "| " << t["name"].get<std::string>() << " | " << words(t["required_keys"]) << " | "
                << words(t["optional_keys"]) << " |\n";
    return 0;
  }
  if (json) std::cout << isa::isa_tables_json(executes).dump(1) << "\n";
  else std::cout << isa::isa_tables_text(executes);
  return 0;
}

// ------------------------------------------------------------------------------------------- bundle streams
const char *kEncodeHelp = R"(usage: neuronsim encode KERNEL --gen v2|v3|v4 -o DIR [--arch NAME|FILE.json]

Lowers the BIR kernel (loops unrolled, tensors placed, the scheduler's dependencies written as semaphores) and
writes one <engine>.bin stream of 64-byte bundles per engine plus DIR/manifest.json (docs/bundle-layout.md).
  KERNEL     a .json BIR file or a workload directory holding one *.bir.json
  --gen      the NeuronCore generation to encode for: v2 (trn1), v3 (trn2), v4 (trn3)
  -o DIR     output directory; created if missing. A non-empty DIR is refused unless it holds a previous
             `neuronsim encode` output (manifest.json and *.bin only), which is replaced.
  --arch     the architecture whose scheduler (DMA queues) is lowered for (default: the generation's)
  --cores N  --lnc L   one bundle set per physical core (docs/multicore.md): core i lowered with shard id
             i % L and rank i / L into DIR/core<i>/, indexed by DIR/cores.json; `neuronsim run DIR` runs them
             on N cores, `validate` compares each core with the BIR's run on N cores
)";

const char *kDisasmHelp = R"(usage: neuronsim disasm FILE_OR_DIR [--gen v2|v3|v4]

One line per 64-byte bundle: engine, byte offset, instruction name (from the manifest), the 64 raw bytes as 16
little-endian words' bytes in file order, then the decoded fields (opcode word, form, every field of the form).
  FILE_OR_DIR  a bundle directory (manifest.json) or one <engine>.bin stream
  --gen        generation of a lone .bin file (default: the manifest beside it); overrides the manifest's
)";

const char *kValidateHelp = R"(usage: neuronsim validate --bir KERNEL --bundles DIR [options]

Runs the BIR kernel and the bundle streams of DIR on the same model with the same inputs, compares what every
instruction wrote (instructions matched by name, BIR program order) and every output tensor, and lints the
streams: header words, opcodes, bytes that decode to no op, ALU bytes that decode to another op than the BIR's
(a comparison written as its L1 ordinal, 24/25 on the ALU path). Prints the findings, then one summary line.
  --bir KERNEL            the BIR the streams were encoded from (.json file or workload directory)
  --bundles DIR           manifest.json + <engine>.bin
  --input NAME=FILE.npy   data for input tensor NAME (repeatable); --inputs DIR: DIR/<tensor>.npy
                          (default: the workload's inputs/); missing inputs are generated from the tensor name
  --rtol R --atol A       tolerance for the comparisons (default 0, 0: both sides run the same semantics)
  --arch NAME|FILE.json   default: the streams' generation's
  --cores N --lnc L       a multi-core bundle folder (encode --cores): both run on its N cores and each core is
                          compared (default and required: the folder's cores.json); inputs per rank as for run
exit codes: 0 they agree, 1 divergence or lint error, 2 usage, 3 invalid input
)";

int cmd_encode(const std::vector<std::string> &a) {
  std::string kernel, out, arch;
  std::vector<std::pair<std::string, std::string>> sets;
  std::optional<isa::CoreGen> gen;
  int cores = 0, lnc = 0;  // 0: not given (one bundle set)
  const std::vector<Option> options = {
      {"--gen", "v2|v3|v4", "the generation encoded for",
       [&](const std::string &v) { gen = sim::parse_gen(v, "--gen"); }},
      {"-o", "DIR", "the output folder", [&](const std::string &v) { out = need_path("-o", v); }},
      {"--outdir", "DIR", "the same as -o", [&](const std::string &v) { out = need_path("--outdir", v); }},
      {"--arch", "NAME|FILE.json", "the architecture lowered for",
       [&](const std::string &v) { arch = sim::parse_arch(v, "--arch"); }},
      {"--set", "KEY=VALUE", "an architecture parameter set over --arch (repeatable)",
       [&](const std::string &v) { sets.push_back(sim::parse_arch_set(v, "--set")); }},
      {"--cores", "N", "one bundle set per core",
       [&](const std::string &v) { cores = parse_cores("--cores", v); }},
      {"--lnc", "L", "cores per logical core", [&](const std::string &v) { lnc = parse_cores("--lnc", v); }},
  };
  if (!parse_options(a, options, [&](const std::string &o) {
        if (o.empty())
          throw UsageError("KERNEL is an empty path");
        if (!kernel.empty())
          throw UsageError("more than one KERNEL given ('" + kernel + "', '" + o + "')");
        kernel = o;
      })) {
    std::cout << kEncodeHelp;
    return 0;
  }
  if (kernel.empty()) throw UsageError("encode needs a KERNEL (try neuronsim encode --help)");
  if (!gen) throw UsageError("encode needs --gen v2|v3|v4");
  if (out.empty()) throw UsageError("encode needs -o DIR");
  if (arch.empty()) arch = sim::arch_for_gen(*gen);
  arch = sim::with_arch_sets(arch, sets, "--set");
  const sim::Kernel k = sim::load_kernel(kernel, sim::KernelForms::BirOnly);
  print_warnings(k.program);
  if (cores > 0 || lnc > 0) {  // one bundle set per core, as `run --cores N --lnc L` counts them
    const int l = std::max(lnc, 1), n = std::max(cores, l);
    const std::vector<sim::EncodeSummary> es = sim::encode_kernel_cores(k, *gen, arch, out, n, l);
    std::cout << "neuronsim encode: " << k.label << " -> " << out << " (" << isa::core_gen_name(*gen) << ", arch "
              << arch << ", " << n << " cores, LNC=" << l << ")\n";
    for (size_t c = 0; c < es.size(); ++c) {
      const sim::StreamFormStats &st = es[c].stream_form;
      std::cout << "  core" << c << " (shard " << c % static_cast<size_t>(l) << ", rank " << c / static_cast<size_t>(l)
                << "): " << st.instructions << " instructions: " << (st.instructions - st.carriers) << " dynamic + "
                << st.carriers << " sync carriers (" << st.waits_dropped << " implied waits dropped)\n";
      for (const auto &[file, count] : es[c].manifest.at("files").items())
        std::cout << "    " << file << " " << count.get<int64_t>() << " bundles\n";
    }
    return 0;
  }
  const sim::EncodeSummary e = sim::encode_kernel(k, *gen, arch, out);
  const sim::StreamFormStats &st = e.stream_form;
  const nlohmann::json &m = e.manifest;
  std::cout << "neuronsim encode: " << k.label << " -> " << out << " (" << isa::core_gen_name(*gen) << ", arch "
            << arch << ")\n";
  std::cout << "  " << st.instructions << " instructions: " << (st.instructions - st.carriers)
            << " dynamic + " << st.carriers << " sync carriers (" << st.waits_dropped
            << " implied waits dropped)\n";
  for (const auto &[file, count] : m.at("files").items())
    std::cout << "  " << file << " " << count.get<int64_t>() << " bundles\n";
  return 0;
}

int cmd_disasm(const std::vector<std::string> &a) {
  std::string target;
  std::optional<isa::CoreGen> gen;
  const std::vector<Option> options = {
      {"--gen", "v2|v3|v4", "the generation of a lone .bin file",
       [&](const std::string &v) { gen = sim::parse_gen(v, "--gen"); }},
  };
  if (!parse_options(a, options, [&](const std::string &o) {
        if (o.empty())
          throw UsageError("FILE_OR_DIR is an empty path");
        if (!target.empty())
          throw UsageError("more than one FILE_OR_DIR given");
        target = o;
      })) {
    std::cout << kDisasmHelp;
    return 0;
  }
  if (target.empty()) throw UsageError("disasm needs a FILE_OR_DIR (try neuronsim disasm --help)");
  if (!fs::exists(target)) throw InputError({target, -1, "", ""}, "no such file or directory");
  const fs::path dir = fs::is_directory(target) ? fs::path(target) : fs::path(target).parent_path();
  std::vector<std::string> files;
  std::map<std::pair<std::string, size_t>, std::string> names;  // (file, bundle offset) -> instruction name
  const fs::path mpath = dir / "manifest.json";
  std::error_code mec;
  if (fs::exists(mpath, mec)) {
    const nlohmann::json m = isa::read_json_file(mpath.string(), "bundle manifest");
    if (!m.is_object()) throw InputError({mpath.string(), -1, "", ""}, "the manifest is not a JSON object");
    if (!gen && m.contains("generation")) gen = sim::parse_gen(m.at("generation").get<std::string>(), "--gen");
    if (m.contains("files"))
      for (const auto &[f, n] : m.at("files").items()) files.push_back(f), (void)n;
    if (m.contains("instructions"))
      for (const auto &ji : m.at("instructions")) {
        const size_t off = ji.value("offset", size_t(0)), n = ji.value("bundles", size_t(1));
        for (size_t k = 0; k < n; ++k)
          names[{ji.value("file", std::string()), off + 64 * k}] = ji.value("name", std::string());
      }
  } else if (fs::is_directory(target)) {
    throw InputError({mpath.string(), -1, "", ""}, "not a bundle directory: no manifest.json");
  }
  if (!fs::is_directory(target)) files = {fs::path(target).filename().string()};
  if (!gen) throw UsageError("disasm of a lone .bin file needs --gen v2|v3|v4");
  for (const auto &f : files) {
    const fs::path p = dir / f;
    if (f.empty() || f.find('/') != std::string::npos || f == "." || f == "..")
      throw InputError({mpath.string(), -1, "", "files"}, "stream file name '" + f + "' must be a plain file name");
    const std::vector<uint8_t> bytes = isa::read_regular_file_bytes(p.string(), isa::kMaxInputFileBytes, "bundle stream");
    const std::string engine = fs::path(f).stem().string();
    for (size_t off = 0; off + 64 <= bytes.size(); off += 64) {
      std::ostringstream os;
      os << engine << " +0x" << std::hex << std::setw(4) << std::setfill('0') << off << std::dec;
      auto it = names.find({f, off});
      if (it != names.end()) os << " " << it->second;
      os << " |";
      for (size_t k = 0; k < 64; ++k) {
        if (k % 4 == 0) os << ' ';
        os << std::hex << std::setw(2) << std::setfill('0') << static_cast<int>(bytes[off + k]) << std::dec;
      }
      os << " | " << isa::disasm_line(bytes.data() + off, *gen);
      std::cout << os.str() << "\n";
    }
    if (bytes.size() % 64)
      throw InputError({p.string(), -1, "", ""}, "truncated bundle at byte offset " +
                                                     std::to_string(bytes.size() - bytes.size() % 64) + ": " +
                                                     std::to_string(bytes.size() % 64) + " of 64 bytes");
  }
  return 0;
}

int cmd_validate(const std::vector<std::string> &a) {
  std::string bir, bundles;
  sim::ValidateOptions vo;
  const std::vector<Option> options = {
      {"--bir", "KERNEL", "the BIR the streams were encoded from",
       [&](const std::string &v) { bir = need_path("--bir", v); }},
      {"--bundles", "DIR", "the streams", [&](const std::string &v) { bundles = need_path("--bundles", v); }},
      {"--input", "NAME=FILE.npy", "data for input tensor NAME",
       [&](const std::string &v) { add_input(vo.inputs, v); }},
      {"--inputs", "DIR", "DIR/<tensor>.npy",
       [&](const std::string &v) { vo.inputs.dir = need_path("--inputs", v); }},
      {"--rtol", "R", "relative tolerance",
       [&](const std::string &v) { vo.rtol = parse_tolerance("--rtol", v); }},
      {"--atol", "A", "absolute tolerance",
       [&](const std::string &v) { vo.atol = parse_tolerance("--atol", v); }},
      {"--arch", "NAME|FILE.json", "the architecture",
       [&](const std::string &v) { vo.arch = sim::parse_arch(v, "--arch"); }},
      {"--set", "KEY=VALUE", "an architecture parameter set over --arch (repeatable)",
       [&](const std::string &v) { vo.arch_sets.push_back(sim::parse_arch_set(v, "--set")); }},
      {"--cores", "N", "a multi-core bundle folder's cores",
       [&](const std::string &v) { vo.cores = parse_cores("--cores", v); }},
      {"--lnc", "L", "its cores per logical core",
       [&](const std::string &v) { vo.lnc = parse_cores("--lnc", v); }},
  };
  if (!parse_options(a, options, [](const std::string &o) {
        throw UsageError("unknown argument '" + o + "' (validate takes --bir KERNEL --bundles DIR)");
      })) {
    std::cout << kValidateHelp;
    return 0;
  }
  if (bir.empty() || bundles.empty()) throw UsageError("validate needs --bir KERNEL and --bundles DIR");
  if (!vo.inputs.dir.empty()) sim::check_dir_setting(vo.inputs.dir, "--inputs");
  const sim::Kernel k = sim::load_kernel(bir, sim::KernelForms::BirOnly);
  print_warnings(k.program);
  const sim::ValidateReport r = sim::validate_kernel(k, bundles, vo);
  std::cout << sim::report_text(r);
  return r.agree ? 0 : 1;
}

const char *kReportHelp = R"(usage: neuronsim report STATS.json [TRACE.json] -o REPORT.html
       neuronsim report RESULTS.csv -o SWEEP.html [--baseline ARCH]

One self-contained HTML page to look at (docs/profiling.md): no network fetch, nothing to install, opens from a
file.
  STATS.json   a `neuronsim run --stats` document: the verdict, per engine and DMA queue the busy / waiting by
               reason / idle bars and rates, the critical path, the instructions holding it longest with their
               source lines; TRACE.json (`run --trace`) adds the engine timeline (wheel zooms, drag pans)
  RESULTS.csv  a `neuronsim sweep -o` file: a kernel x arch table of total times with speed-ups against
               --baseline ARCH (default: the file's first arch; the page can switch it), and a bar chart
  -o FILE      the page to write (never one of the inputs)
`neuronsim run KERNEL --report FILE.html` writes a run's page directly, timeline included.
)";

int cmd_report(const std::vector<std::string> &a) {
  std::vector<std::string> files;
  std::string out, baseline;
  const std::vector<Option> options = {
      {"-o", "FILE.html", "the page to write", [&](const std::string &v) { out = need_path("-o", v); }},
      {"--output", "FILE.html", "the same as -o", [&](const std::string &v) { out = need_path("--output", v); }},
      {"--baseline", "ARCH", "a sweep's arch the speed-ups are against",
       [&](const std::string &v) {
         if (v.empty())
           throw UsageError("--baseline needs an arch, got an empty one");
         baseline = v;
       }},
  };
  if (!parse_options(a, options, [&](const std::string &f) {
        if (f.empty())
          throw UsageError("report: an empty path given as an input file");
        files.push_back(f);
      })) {
    std::cout << kReportHelp;
    return 0;
  }
  if (files.empty() || files.size() > 2)
    throw UsageError("report takes STATS.json [TRACE.json] or RESULTS.csv (neuronsim report --help)");
  if (out.empty())
    throw UsageError("report needs -o FILE.html");
  const bool sweep = files[0].size() >= 4 && files[0].compare(files[0].size() - 4, 4, ".csv") == 0;
  if (sweep && files.size() > 1)
    throw UsageError("report of a sweep's RESULTS.csv takes no second file");
  if (!sweep && !baseline.empty())
    throw UsageError("--baseline is for a sweep's RESULTS.csv");
  // The page is never written over an input (the check `run` makes for its outputs).
  sim::prepare_output_paths({}, {out}, files);
  std::string html;
  if (sweep) {
    html = sim::sweep_report_html(isa::read_regular_file(files[0], isa::kMaxInputFileBytes, "sweep results"),
                                  files[0], baseline);
  } else {
    const nlohmann::json stats = isa::read_json_file(files[0], "stats file");
    if (!stats.is_object() || !stats.contains("total_ns") || !stats.contains("analysis"))
      throw InputError(
          {files[0], -1, "", "analysis"},
          "not a --stats document of this version (run it again with --stats to get its analysis)");
    std::optional<nlohmann::json> trace;
    if (files.size() == 2) {
      trace = isa::read_json_file(files[1], "trace file");
      if (!trace->is_object() || !trace->contains("traceEvents"))
        throw InputError({files[1], -1, "", "traceEvents"}, "not a --trace document");
    }
    html = sim::run_report_html(stats, trace ? &*trace : nullptr);
  }
  isa::write_file_atomic(out, html);
  std::cout << "report: " << out << "\n";
  return 0;
}

} // namespace

// The Python interpreter the package was built for (NEURONSIM_PYTHON overrides it), with this build's package
// (build/python, beside the binary) first on PYTHONPATH; an installed one (cmake --install) is on the interpreter's
// own path. `neuronsim sweep` and `neuronsim nki` run Python through it.
std::string neuronsim::cli::python_interpreter() {
#ifndef NEURONSIM_PYTHON
  throw UsageError("this command runs on the neuronsim Python package, which this build lacks (install pybind11-dev "
                   "and python3-dev, as scripts/bootstrap does, and reconfigure)");
#else
  const char *env = std::getenv("NEURONSIM_PYTHON");
  const std::string python = env && *env ? env : NEURONSIM_PYTHON;
  std::error_code ec;
  const fs::path package = fs::read_symlink("/proc/self/exe", ec).parent_path() / "python";
  if (!ec && fs::is_regular_file(package / "neuronsim" / "__init__.py")) {
    const char *old = std::getenv("PYTHONPATH");
    const std::string path = package.string() + (old && *old ? ":" + std::string(old) : "");
    setenv("PYTHONPATH", path.c_str(), 1);
  }
  return python;
#endif
}

namespace {

// `neuronsim sweep`: the sweep is Python (python/neuronsim/sweeps.py, on Dask); this command only starts it.
// The package of this build (build/python, beside the binary) goes first on PYTHONPATH; an installed one
// (cmake --install) is on the interpreter's own path. Returns only when the interpreter cannot be started.
int cmd_sweep(const std::vector<std::string> &a) {
  std::vector<std::string> words = {python_interpreter(), "-m", "neuronsim", "sweep"};
  words.insert(words.end(), a.begin(), a.end());
  std::vector<char *> argv;
  for (auto &w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  execvp(words[0].c_str(), argv.data());
  throw UsageError("sweep: cannot start " + words[0] + ": " + std::strerror(errno) +
                   " (NEURONSIM_PYTHON names the Python interpreter)");
}

} // namespace

namespace {

// stdout is an output like any file: a write error there (a full disk, /dev/full, a closed pipe) is an error
// naming the stream, never an exit 0 with the output lost. std::cout buffers, so the error shows at the
// flush.
int finish_stdout(int code) {
  errno = 0;
  std::cout.flush();
  if (std::cout.good() && std::fflush(stdout) == 0)
    return code;
  const int err = errno;
  if (code != 0)
    return code; // the command's own error was already reported
  std::cerr << "neuronsim: stdout: write failed"
            << (err ? std::string(": ") + std::strerror(err) : std::string())
            << " (the command's output is incomplete)\n";
  return 3;
}

int run_command(const std::vector<std::string> &args);

} // namespace

int sc_main(int argc, char **argv) {
  // SIGPIPE would end the process silently on a closed pipe (`neuronsim isa --json | head -1`): the write
  // error is reported instead.
  std::signal(SIGPIPE, SIG_IGN);
  return finish_stdout(run_command(std::vector<std::string>(argv + 1, argv + argc)));
}

namespace {

int run_command(const std::vector<std::string> &args) {
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      std::cout << kHelp;
      return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version") {
      std::cout << "neuronsim " << sim::version() << "\n";
      return 0;
    }
    std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "run") return cmd_run(rest, RunFrom{});
    if (args[0] == "nki") return cmd_nki(rest);
    if (args[0] == "isa") return cmd_isa(rest);
    if (args[0] == "arch") return cmd_arch(rest);
    if (args[0] == "compare") return cmd_compare(rest);
    if (args[0] == "encode") return cmd_encode(rest);
    if (args[0] == "disasm") return cmd_disasm(rest);
    if (args[0] == "validate") return cmd_validate(rest);
    if (args[0] == "sweep") return cmd_sweep(rest);
    if (args[0] == "report")
      return cmd_report(rest);
    throw UsageError("unknown command '" + args[0] + "'" +
                     isa::did_you_mean(args[0], {"run", "nki", "isa", "arch", "compare", "encode", "disasm",
                                                 "validate", "sweep", "report"}) +
                     " (try --help)");
  } catch (const Error &e) {  // UsageError included (exit 2)
    std::cerr << "neuronsim: " << sim::one_line(e.what()) << "\n";
    return e.exit_code();
  } catch (const std::exception &) {
    // Any other failure as the library reports it (sim::rethrow_as_error): a file-system error on a user's path
    // or a JSON value of the wrong type (exit 3), out of host memory or an internal error (exit 4).
    try {
      sim::rethrow_as_error();
    } catch (const Error &e) {
      std::cerr << "neuronsim: " << sim::one_line(e.what()) << "\n";
      return e.exit_code();
    } catch (const std::exception &e) {
      std::cerr << "neuronsim: internal error: " << sim::one_line(e.what()) << "\n";
      return 4;
    }
  }
}

} // namespace
