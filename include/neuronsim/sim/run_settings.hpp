// The settings of one run and how they become complete: the names messages give them (the CLI's options, the
// Python module's keywords), the checks on what the caller gave, completing them from the kernel's folder
// (arch, cores and LNC, inputs, expected outputs, tolerance), the check of the run's output paths, and the
// parsers of the values an architecture, a generation and a schedule mode are given as.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "neuronsim/isa/tables.hpp"
#include "neuronsim/sim/core_needs.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/kernel.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

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
// The files a run with settings `s` reads, which none of its outputs may replace: the kernel's files, the input and
// expected files of every rank, tolerance.json. Call it after complete_settings.
std::vector<std::string> run_read_files(const Kernel &k, const RunSettings &s);

// The ranks of a run: its logical cores (1 for a single-core run).
int run_ranks(const RunSettings &s);
// Rank r's input spec in a run with settings `s` (rank_input_list or inputs, then rank_inputs, ranks.hpp).
InputSpec run_rank_inputs(const isa::Program &p, const RunSettings &s, int rank, int ranks);

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

} // namespace neuronsim::sim
