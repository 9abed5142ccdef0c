// What the `neuronsim` command and the Python module share above the simulator: naming a kernel (a BIR JSON
// file, a workload folder, a bundle-stream folder), completing a run's settings from the kernel's folder,
// running it, checking its outputs, encoding and validating, and the texts both give the user. The CLI
// (sim/cli/main.cpp) and python/ call these; neither has logic of its own beyond parsing its arguments and
// presenting the results.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/isa/program.hpp"
#include "neuronsim/isa/tables.hpp"
#include "neuronsim/sim/core_needs.hpp"
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/stream_form.hpp"
#include "neuronsim/sim/run_config.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "neuronsim/sim/validate.hpp"

namespace neuronsim::sim {

// A kernel as a user names it:
//   - a .json BIR file;
//   - a workload folder: exactly one *.bir.json, and optionally inputs/ and expected/ (<tensor>.npy each) and
//     tolerance.json ({"rtol": R, "atol": A}, the tolerance the workload's dtypes justify);
//   - a bundle-stream folder written by `neuronsim encode` (manifest.json + <engine>.bin);
//   - a multi-core bundle folder written by `neuronsim encode --cores N` (cores.json + core<i>/, one stream folder
//     per core: shard ids resolve per core when lowering, docs/multicore.md).
struct Kernel {
  std::string path;  // as given
  std::string label; // how a run names it: the BIR file, or "DIR (bundle streams, v3)"
  isa::Program program;
  std::optional<isa::CoreGen> streams;                  // a bundle-stream folder: its generation
  std::string inputs_dir, expected_dir, tolerance_file; // a workload folder's, empty when it has none
  // A multi-core bundle folder: core i's program (program is core 0's), and its cores per logical core.
  std::vector<isa::Program> core_programs;
  int core_lnc = 1;
  std::vector<std::string> files; // what it was read from (the BIR file, the streams folder's entries): no
                                  // output of a run may be one of them (prepare_run_outputs)
  RunConfig run_config;           // a workload folder's run.json (sim/run_config.hpp); empty file when none
};

// BirOnly: what `encode` and `validate` take, BIR (a file or a workload folder).
enum class KernelForms { Any, BirOnly };
// Reads the kernel. InputError (naming the path) when it does not exist, a folder holds no or several
// *.bir.json, or the BIR / streams do not read. A folder with any manifest.json is a bundle-stream folder (one
// that is not a regular file is refused by the reader, naming it). What the reader ignored (unknown keys) is in
// program.warnings, for the caller to show.
Kernel load_kernel(const std::string &path, KernelForms forms = KernelForms::Any);

// How messages name a run's settings: `neuronsim run`'s options, or the Python module's keywords.
struct SettingNames {
  std::string inputs;      // all the ways to give input data
  std::string inputs_dir;  // a folder of inputs
  std::string expect, rtol, atol, timing_only, max_instructions;
  CoreSettingNames cores; // --cores / --lnc
  std::string arch;
  std::string arch_set; // parameters set over the architecture
};
// "--input/--inputs", "--inputs", "--expect", "--rtol", "--atol", "--timing-only", "--max-instructions",
// "--cores", "--lnc", "--arch", "--set"
SettingNames cli_setting_names();
// "inputs", "inputs", "expect", "rtol", "atol", "timing_only", "max_instructions", "cores", "lnc", "arch", "set"
SettingNames python_setting_names();

// The settings of one run. What is left unset is completed from the kernel by complete_settings, as
// `neuronsim run` does.
struct RunSettings {
  RunOptions options; // options.arch empty: run.json's, the bundle streams' generation's, else trn1
  // Parameters set over the architecture (`--set KEY=VALUE`, set= in Python; each checked by parse_arch_set):
  // complete_settings writes them into options.arch once the base is known ("trn2+{dma_latency_ns=425}").
  std::vector<std::pair<std::string, std::string>> arch_sets;
  InputSpec inputs;                 // inputs.dir empty: the workload's inputs/ (given inputs take precedence)
  // A run of several ranks given one input set per rank (Python's inputs=[{...}, ...]): rank r's replaces
  // `inputs` (its dir empty: the workload's inputs/, rank folders included). Empty: every rank uses `inputs`.
  std::vector<InputSpec> rank_input_list;
  std::optional<ExpectSpec> expect; // unset: the workload's expected/, when it has one (not for timing only)
  std::string no_expected; // set by complete_settings: the workload's expected/ held no output's file
  std::optional<double> rtol,
      atol; // neither given: the workload's run.json or tolerance.json, else the defaults
  SettingNames names = cli_setting_names(); // how messages name the settings above
  // --save-inputs DIR: every input tensor as it was loaded or generated, as DIR/<tensor_file_name>, written before
  // the run (a kernel may write its inputs). Empty: none. prepare_run_outputs checks the paths.
  std::string save_inputs;
  // Non-empty: run_kernel streams the Perfetto trace here as the run goes (TraceWriter, with the DMA engines'
  // slices) and renames it into place when the run succeeds; a failed run leaves no file.
  std::string trace;
  // Physical cores and cores per logical core (sim/device.hpp): `--cores N`, `--lnc 2`, cores= / lnc= in
  // Python. 0: not given -- complete_settings takes the workload's run.json, else what the kernel needs
  // (core_needs), else 1. 1 and 1: the single-core simulator.
  int cores = 0, lnc = 0;
  // Where complete_settings took the cores from when they were not given ("run.json", "the kernel's
  // replica_groups"), for the run header; empty otherwise.
  std::string cores_from;
  // After the run: an output element no instruction wrote is an error (--strict, strict=True), not a warning.
  bool strict = false;
};
inline constexpr double kDefaultRtol = 1e-5, kDefaultAtol = 1e-6;

// The checks on what the caller gave, before the kernel's folder completes it (UsageError, naming the setting as
// s.names does): a folder of inputs or expected files must be a directory; a tolerance a finite number >= 0; a
// timing-only run takes no input data, expectations or tolerances (it would silently ignore them); the
// instruction limit is at least 1.
void check_settings(const RunSettings &s);
// UsageError "<setting> <dir>: no such directory" (or "not a directory").
void check_dir_setting(const std::string &dir, const std::string &setting);
// UsageError "<setting> needs a finite number >= 0, got <value>" (a NaN tolerance would pass every comparison).
void check_tolerance_setting(double value, const std::string &setting);

// check_settings, then fills in arch (run.json's, the streams' generation's, trn1), cores and LNC
// (resolve_cores), inputs folder, expected tensors and tolerance (both or neither come from run.json or
// tolerance.json; neither expected/ nor a tolerance for a timing-only run), and checks the expectations
// before the run (check_expected: files and arrays, shapes and dtypes). InputError naming tolerance.json when
// it is not a JSON object with a finite number >= 0 under "rtol" and "atol", or for an expected tensor that
// cannot be compared.
void complete_settings(const Kernel &k, RunSettings &s);
// The cores and LNC of a run (part of complete_settings): a multi-core bundle folder's own; else what was
// given, else run.json's, else what the kernel needs (core_needs: its named cores and ranks, its ShardIDKind
// ub); then checked against the kernel (check_kernel_cores) and the arch (lnc_max), one InputError naming the
// instruction and field that contradict. Needs s.options.arch set.
void resolve_cores(const Kernel &k, RunSettings &s);

// Checks a run's output paths before it starts (prepare_output_paths): `outdir` receives the outputs'
// <tensor_file_name> (empty: none are written, as from the Python module; their names are still checked), and
// `files` are further outputs (stats, trace, DevicePrint). No output may be a file the run reads: the kernel's
// files, the input and expected files, tolerance.json. A timing-only run writes no tensors. Call it after
// complete_settings.
void prepare_run_outputs(const Kernel &k, const RunSettings &s, const std::string &outdir,
                         const std::vector<std::string> &files);

// Per-rank data of a multi-core run (docs/multicore.md); a single-core run never looks for rank folders.
// The ranks of a run: its logical cores (1 for a single-core run).
int run_ranks(const RunSettings &s);
// A folder of per-rank data: DIR holds rank0 .. rank<R-1> folders (then every one of them, and no rank<k> with
// k >= R: InputError naming the path), or none (every rank reads DIR). `dir` empty or R == 1: false.
bool has_rank_dirs(const std::string &dir, int ranks);
// Rank r's input spec: per tensor, DIR/rank<r>/<tensor_file_name> when that file exists, else DIR/<file> (the
// replicated inputs); --input files and arrays are every rank's.
InputSpec rank_inputs(const isa::Program &p, const InputSpec &spec, int rank, int ranks);
// Rank r's input spec in a run with settings `s` (rank_input_list or inputs, then rank_inputs).
InputSpec run_rank_inputs(const isa::Program &p, const RunSettings &s, int rank, int ranks);
// Rank r's expected outputs: the folder DIR/rank<r> when DIR has rank folders, else DIR (arrays: every rank's).
ExpectSpec rank_expect(const ExpectSpec &e, int rank, int ranks);
// Where rank r's outputs go: OUTDIR/rank<r> with several ranks, OUTDIR itself with one.
std::string rank_outdir(const std::string &outdir, int rank, int ranks);

// The files --save-inputs DIR writes: (tensor index, DIR/<tensor_file_name>) for every DRAM input tensor.
std::vector<std::pair<int, std::string>> saved_input_files(const isa::Program &p, const std::string &dir);

// An output tensor of one rank with elements no instruction wrote in a numeric run (engines::Memory's written
// shadow of output tensors): they hold the 0xFF fill. A warning, or an error with RunSettings::strict.
struct UnwrittenOutput {
  int rank = 0;
  std::string tensor;
  int64_t unwritten = 0, elements = 0;
};
// "output 'b': 50 of 100 elements were written by no instruction (...)"; several ranks: 'rank1/b'.
std::string unwritten_line(const UnwrittenOutput &u, int ranks);

// One run: the simulator (its memory holds the outputs) and its result.
struct Run {
  std::unique_ptr<Device> device;   // several cores (RunSettings::cores > 1); simulator is then its core 0
  DeviceResult device_result;       // per core, and the device's totals
  std::unique_ptr<Simulator> simulator;
  RunResult result;                 // core 0's
  // The memory holding rank r's DRAM tensors (its outputs): the simulator's for one rank.
  engines::Memory &rank_memory(int r) { return device ? device->rank_memory(r) : simulator->memory(); }
  int ranks() const { return device ? device->ranks() : 1; }
  std::vector<std::string> input_lines; // one per input: where its data came from (not for timing-only runs)
  std::vector<std::string> saved_inputs; // the files RunSettings::save_inputs wrote
  std::vector<UnwrittenOutput> unwritten; // a numeric run's outputs with elements no instruction wrote
};
// Loads the inputs (not for a timing-only run) and runs the kernel with completed settings. The kernel must
// outlive the Run (the simulator refers to its program).
Run run_kernel(const Kernel &k, const RunSettings &s);

// `--sensitivity`: the first answer to "what should I change". Each headline parameter of the run's
// architecture (DMA rate, DMA fixed latency, DMA per-row cost, HBM rate, each engine clock) scaled 2x in its
// favour, the kernel rerun timing-only with that one setting (`--set`), and the speed-up it gives over
// `base_ns`, sorted fastest first (ties in the table's order). `s` is a completed run's settings (its arch
// named as run; timing-only reruns take no inputs or expectations). `progress` is called before each rerun
// with its index and the count.
struct Sensitivity {
  std::string parameter; // "DMA latency /2"
  std::string arch;      // the rerun's architecture, "trn2+{dma_latency_ns=425}"
  double total_ns = 0.0;
  double speedup = 0.0; // base_ns / total_ns
};
std::vector<Sensitivity> sensitivity(const Kernel &k, const RunSettings &s, double base_ns,
                                     const std::function<void(size_t, size_t)> &progress = {});
// The headline parameters, as (label, key, factor): `sensitivity` scales each key by its factor.
struct HeadlineParameter {
  const char *label, *key;
  double factor;
};
const std::vector<HeadlineParameter> &headline_parameters();

// The run's summary as `neuronsim run` prints it after the run (print_summary with the verdict; a multi-core
// run: one table per core, labelled "core i (shard s, rank r):", then the device's totals), and with `why`
// each analysis's --why table. `doc`: the run's stats document (stats_json, device_stats_json).
std::string summary_text(Run &run, const nlohmann::json &doc, bool why = false);
// The stats document of a finished run (stats_json, or device_stats_json for several cores).
nlohmann::json run_stats(Run &run, const isa::Program &p, const std::vector<std::string> &command_line,
                         bool with_profile = true);

// The progress line of a long run (`neuronsim run` on a terminal, neuronsim.run's default on one): dynamic
// instructions issued and the total, simulated time, wall time, and an ETA once it means something -- from
// the rate since the first report, once a tenth of the run is done and a second has passed since then (the
// rate of a run's first moments, schedule building and start-up included, is far off its steady one). Silent
// for the first second; at most five lines a second. `line` returns the text to show ("" when nothing is
// due).
class ProgressLine {
public:
  std::string line(int64_t done, int64_t total, double sim_ns);
  // The same at `wall` seconds since the line was made (line() passes the steady clock's; tests pass their
  // own).
  std::string line_at(double wall, int64_t done, int64_t total, double sim_ns);
  bool shown() const { return shown_; }

private:
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  bool shown_ = false, based_ = false;
  double last_ = 0.0, base_wall_ = 0.0, base_frac_ = 0.0;
};

// Compares the run's outputs with s.expect (compare_outputs); empty when nothing is expected or all agree.
// `checked` receives the names of the tensors compared. With several ranks, each rank's outputs against its
// rank_expect, a mismatch's tensor named "rank<r>/<tensor>".
std::vector<Mismatch> check_outputs(const Kernel &k, Run &run, const RunSettings &s,
                                    std::vector<std::string> *checked = nullptr);
// The line `neuronsim run` prints for a mismatch: "MISMATCH b[3]: got 1.5, expected 2 (rtol 1e-05, atol
// 1e-06)", or "MISMATCH b: <message>" for a missing tensor or a shape error.
std::string mismatch_line(const Mismatch &m, double rtol, double atol);

// Puts the BIR kernel in the stream form for `arch` (to_stream_form) and writes its bundle streams for `gen`
// into `outdir` (created if missing; a non-empty folder is refused unless it holds a previous encode output,
// which is replaced).
struct EncodeSummary {
  StreamFormStats stream_form;
  nlohmann::json manifest;
};
// A kernel written for several cores is refused (check_kernel_cores with one core), its message naming the
// settings as `names` does.
EncodeSummary encode_kernel(const Kernel &k, isa::CoreGen gen, const std::string &arch,
                            const std::string &outdir, const CoreSettingNames &names = {});
// The multi-core bundle folder's index file and its format tag.
inline constexpr const char *kCoresManifest = "cores.json";
inline constexpr const char *kCoresFormat = "neuronsim-core-bundles";
// `encode --cores N --lnc L`: the kernel lowered once per physical core i (shard i % L, rank i / L) and written as
// `outdir`/core<i>/ (each a stream folder as encode_kernel writes it), with `outdir`/cores.json {format,
// generation, arch, cores, lnc, dirs}. A non-empty `outdir` is refused unless it is a previous multi-core encode
// output (cores.json and core<i>/ folders of streams only), which is replaced. One summary per core.
std::vector<EncodeSummary> encode_kernel_cores(const Kernel &k, isa::CoreGen gen, const std::string &arch,
                                               const std::string &outdir, int cores, int lnc,
                                               const CoreSettingNames &names = {});
// Reads a multi-core bundle folder (cores.json): InputError naming the folder for a missing core<i> (or one
// cores.json does not list), a core whose streams are of another generation, or a malformed cores.json.
// `lnc` receives its cores per logical core; `gen` its generation.
std::vector<isa::Program> read_core_bundles(const std::string &dir, int *lnc, isa::CoreGen *gen);
// The files of a bundle-stream folder (manifest.json and every <engine>.bin), by name.
std::map<std::string, std::vector<uint8_t>> read_bundle_files(const std::string &dir);

// Runs the BIR kernel and the streams of `bundle_dir` and compares them (validate_bundles); the inputs
// default to the workload's inputs/ as for a run.
ValidateReport validate_kernel(const Kernel &k, const std::string &bundle_dir, ValidateOptions options);
// The report as `neuronsim validate` prints it: the lint findings, "note: ..." lines, "divergence: ...", then
// the summary line; every line ends with a newline.
std::string report_text(const ValidateReport &r);

// The architectures and generations by name. An architecture is a built-in name (UsageError "<option> takes
// trn1, trn2, trn3 or an architecture FILE.json, got 'x'") or a file (engines::names_arch_file), read and
// checked here (InputError naming the file and the key). A value with settings, "trn2+{KEY=VALUE,...}", has
// each checked as parse_arch_set does and is returned with the values in canonical form.
std::string parse_arch(const std::string &value, const std::string &option);
// One `--set KEY=VALUE`: (key, canonical JSON value). UsageError "<option> KEY=VALUE: <why>" for an unknown
// key or a value of the wrong type or outside the key's range (engines::arch_setting_value, the loader's own
// check).
std::pair<std::string, std::string> parse_arch_set(const std::string &setting, const std::string &option);
// `arch` with `sets` added to its settings ("trn2" + {a=1} -> "trn2+{a=1}"); UsageError for a key set twice.
std::string with_arch_sets(const std::string &arch,
                           const std::vector<std::pair<std::string, std::string>> &sets,
                           const std::string &option);
isa::CoreGen parse_gen(const std::string &value, const std::string &option);
// How a run holds its schedule (RunOptions::schedule): "auto", "whole" or "streamed" (`--schedule`,
// neuronsim.run(schedule=...)); UsageError "<option> takes auto, whole or streamed, got 'x'" otherwise.
ScheduleMode parse_schedule(const std::string &value, const std::string &option);

// Error messages may quote the input (a JSON parser's "last read" bytes, a .npy header): the user still gets
// one printable line -- control characters and bytes that are not valid UTF-8 as \xNN escapes.
std::string one_line(const std::string &message);

// Writes a JSON document (the stats, the trace) atomically: written in full or not at all (isa/file_output.hpp).
void write_json_file(const std::string &path, const nlohmann::json &j);

// Inside a catch block: rethrows the exception being handled as the Error `neuronsim` reports for it. An Error
// and RunCancelled pass unchanged; a file-system failure on a user's path becomes InputError "<path>: <OS
// reason>" (exit 3); a JSON value of the wrong type InputError "invalid JSON value: ..." (exit 3); running out of
// memory SimulationError "out of host memory"; anything else SimulationError "internal error: ..." (exit 4).
[[noreturn]] void rethrow_as_error();

} // namespace neuronsim::sim
