// What the `neuronsim` command and the Python module share above the simulator: naming a kernel (a BIR JSON
// file, a workload folder, a bundle-stream folder), completing a run's settings from the kernel's folder,
// running it, checking its outputs, encoding and validating, and the texts both give the user. The CLI
// (sim/cli/main.cpp) and python/ call these; neither has logic of its own beyond parsing its arguments and
// presenting the results.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/isa/program.hpp"
#include "neuronsim/isa/tables.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/lower.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "neuronsim/sim/validate.hpp"

namespace neuronsim::sim {

// A kernel as a user names it:
//   - a .json BIR file;
//   - a workload folder: exactly one *.bir.json, and optionally inputs/ and expected/ (<tensor>.npy each) and
//     tolerance.json ({"rtol": R, "atol": A}, the tolerance the workload's dtypes justify);
//   - a bundle-stream folder written by `neuronsim encode` (manifest.json + <engine>.bin).
struct Kernel {
  std::string path;  // as given
  std::string label; // how a run names it: the BIR file, or "DIR (bundle streams, v3)"
  isa::Program program;
  std::optional<isa::CoreGen> streams;                  // a bundle-stream folder: its generation
  std::string inputs_dir, expected_dir, tolerance_file; // a workload folder's, empty when it has none
};

// BirOnly: what `encode` and `validate` take, BIR (a file or a workload folder).
enum class KernelForms { Any, BirOnly };
// Reads the kernel. InputError (naming the path) when it does not exist, a folder holds no or several
// *.bir.json, or the BIR / streams do not read.
Kernel load_kernel(const std::string &path, KernelForms forms = KernelForms::Any);

// The settings of one run. What is left unset is completed from the kernel by complete_settings, as
// `neuronsim run` does.
struct RunSettings {
  RunOptions options;               // options.arch empty: the bundle streams' generation's, else trn1
  InputSpec inputs;                 // inputs.dir empty: the workload's inputs/ (given inputs take precedence)
  std::optional<ExpectSpec> expect; // unset: the workload's expected/, when it has one
  std::optional<double> rtol, atol; // neither given: the workload's tolerance.json, else the defaults below
};
inline constexpr double kDefaultRtol = 1e-5, kDefaultAtol = 1e-6;

// Fills in arch, inputs folder, expected tensors and tolerance (both or neither come from tolerance.json).
// InputError naming tolerance.json when it does not read, or an expected array that names no output tensor.
void complete_settings(const Kernel &k, RunSettings &s);

// One run: the simulator (its memory holds the outputs) and its result.
struct Run {
  std::unique_ptr<Simulator> simulator;
  RunResult result;
  std::vector<std::string> input_lines; // one per input: where its data came from (not for timing-only runs)
};
// Loads the inputs (not for a timing-only run) and runs the kernel with completed settings. The kernel must
// outlive the Run (the simulator refers to its program).
Run run_kernel(const Kernel &k, const RunSettings &s);

// Compares the run's outputs with s.expect (compare_outputs); empty when nothing is expected or all agree.
// `checked` receives the names of the tensors compared.
std::vector<Mismatch> check_outputs(const Kernel &k, Run &run, const RunSettings &s,
                                    std::vector<std::string> *checked = nullptr);
// The line `neuronsim run` prints for a mismatch: "MISMATCH b[3]: got 1.5, expected 2 (rtol 1e-05, atol
// 1e-06)", or "MISMATCH b: <message>" for a missing tensor or a shape error.
std::string mismatch_line(const Mismatch &m, double rtol, double atol);

// Lowers the BIR kernel for `arch` and writes its bundle streams for `gen` into `outdir` (created if missing;
// a non-empty folder is refused unless it holds a previous encode output, which is replaced).
struct EncodeSummary {
  LowerStats lowered;
  nlohmann::json manifest;
};
EncodeSummary encode_kernel(const Kernel &k, isa::CoreGen gen, const std::string &arch,
                            const std::string &outdir);
// The files of a bundle-stream folder (manifest.json and every <engine>.bin), by name.
std::map<std::string, std::vector<uint8_t>> read_bundle_files(const std::string &dir);

// Runs the BIR kernel and the streams of `bundle_dir` and compares them (validate_bundles); the inputs
// default to the workload's inputs/ as for a run.
ValidateReport validate_kernel(const Kernel &k, const std::string &bundle_dir, ValidateOptions options);
// The report as `neuronsim validate` prints it: the lint findings, "note: ..." lines, "divergence: ...", then
// the summary line; every line ends with a newline.
std::string report_text(const ValidateReport &r);

// The architectures and generations by name. UsageError "<option> takes trn1, trn2 or trn3, got 'x'".
std::string parse_arch(const std::string &value, const std::string &option);
isa::CoreGen parse_gen(const std::string &value, const std::string &option);

// Error messages may quote the input (a JSON parser's "last read" bytes, a .npy header): the user still gets
// one printable line -- control characters and bytes that are not valid UTF-8 as \xNN escapes.
std::string one_line(const std::string &message);

// Writes a JSON document (the stats, the trace) atomically: a temporary file beside it, then renamed over it.
void write_json_file(const std::string &path, const nlohmann::json &j);

} // namespace neuronsim::sim
