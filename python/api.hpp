// The functions and result types of the `neuronsim` Python module (bound in python/module.cpp). Each calls
// the library's session functions (include/neuronsim/sim/session.hpp), the ones `neuronsim
// run|encode|validate` call.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "neuronsim/sim/session.hpp"

namespace neuronsim::python {

// One SystemC core per process: runs from several Python threads take turns (taken with the GIL released).
std::mutex &core_mutex();

struct TensorInfo {
  std::string name;
  pybind11::tuple shape;
  pybind11::dtype dtype; // the numpy dtype arrays of it are held in (bf16 -> uint16, fp8 -> uint8)
  std::string bir_dtype; // its dtype in the BIR ("bfloat16", "float32", ...)
  std::string kind;      // "ExternalInput", "ExternalOutput", "Internal", ...
  std::string memory;    // "DRAM", "SB", "PSUM"
};

struct KernelInfo {
  std::shared_ptr<const sim::Kernel> kernel;
  pybind11::list tensors(bool inputs, bool outputs) const;
  pybind11::dict instructions() const; // static instructions by type name
};

struct MismatchInfo {
  std::string tensor;
  int64_t index = -1;
  double got = 0, want = 0;
  std::string message;
  std::string line; // as `neuronsim run` prints it
};

// What a single-core streamed run's stats document is made from (sim::stats_json), kept by its Result until the
// document is first asked for: the run's records (a streamed run's are its folded profile and the critical path's
// listed links, not an event per dynamic instruction), its schedule's summary (no entries) and the kernel whose
// program the rows name.
struct RunRecords {
  std::shared_ptr<const sim::Kernel> kernel;
  sim::RunResult result;
  sim::Schedule schedule;
};

struct Result {
  std::string kernel; // how the run names the kernel (the BIR file, or the streams' folder)
  std::string arch;
  double total_ns = 0;
  int64_t dynamic_instructions = 0;
  pybind11::dict outputs; // name -> numpy array (empty for a timing-only run)
  // The --stats document as Python objects: made from `doc` the first time Result.stats is read (a tune candidate
  // that reads only total_ns never pays for converting a 10,000-row profile), then the same dict every time.
  mutable pybind11::object stats_cache = pybind11::none();
  pybind11::object trace_path = pybind11::none();
  pybind11::object mismatches = pybind11::none(); // list of MismatchInfo when outputs were compared
  pybind11::list device_prints;                   // DevicePrint lines, in order
  pybind11::dict unwritten;                       // output -> elements no instruction wrote (numeric runs)
  pybind11::list saved_inputs;                    // the files save_inputs= wrote
  std::string summary_text;                       // as `neuronsim run` prints it (sim::summary_text)
  std::string verdict;                            // the stats' analysis.verdict.text ("" when it has none)
  // The stats document (Result.stats, top(), report(): stats_doc). A single-core streamed run (a timing-only run,
  // what a tune candidate makes) builds it on first use from `records`, which are then dropped: a caller that
  // reads only total_ns, summary() or verdict never pays for its ~30 JSON nodes per static instruction (the
  // first run's page faults, docs/dev/performance.md rows (k)). A whole run's is built after the run, as its
  // events and schedule (per dynamic instruction) would cost more to keep.
  mutable std::shared_ptr<const nlohmann::json> doc;
  mutable std::shared_ptr<const RunRecords> records;
  pybind11::object findings = pybind11::none();   // a sanitized run's findings (list of dict), else None
  pybind11::list finding_lines;                   // ... as the CLI prints them ("sanitizer: KIND: ...")
  std::vector<std::string> read_files;            // what the run read, which report() may not replace
};
// Result.report(path): the run's page (sim/report.hpp), its timeline from the run's trace file when it wrote
// one.
void write_report(const Result &r, pybind11::handle path);
// Result.stats (see stats_cache).
pybind11::dict result_stats(const Result &r);
// The stats document of r, built from r.records on first use (with the GIL held; it is released while building).
const nlohmann::json &stats_doc(const Result &r);

struct Report {
  sim::ValidateReport report;
};

KernelInfo load(pybind11::handle kernel);
// Every keyword argument is taken as an object and converted here, so that a wrong type is a TypeError naming
// the argument (convert.hpp).
Result run(pybind11::handle kernel, pybind11::handle inputs, pybind11::handle arch,
           pybind11::handle timing_only, pybind11::handle expect, pybind11::handle rtol,
           pybind11::handle atol, pybind11::handle kernel_sim, pybind11::handle trace,
           pybind11::handle max_instructions, pybind11::handle cores, pybind11::handle lnc,
           pybind11::handle schedule, pybind11::handle strict, pybind11::handle set, pybind11::handle seed,
           pybind11::handle save_inputs, pybind11::handle progress, pybind11::handle report,
           pybind11::handle sanitize);
pybind11::object isa();
// The parameters of a built-in architecture or an architecture file, {"name": ..., <key>: value, ...}.
pybind11::object arch_params(pybind11::handle arch);
pybind11::dict encode(pybind11::handle kernel, pybind11::handle gen, pybind11::handle arch,
                      pybind11::handle outdir, pybind11::handle cores, pybind11::handle lnc);
Report validate(pybind11::handle kernel, pybind11::handle bundles, pybind11::handle inputs,
                pybind11::handle arch, pybind11::handle rtol, pybind11::handle atol, pybind11::handle cores,
                pybind11::handle lnc);
pybind11::array to_float32(pybind11::handle array, pybind11::handle dtype);
pybind11::array from_float32(pybind11::handle array, pybind11::handle dtype);
// A workload folder's run.json as a dict (sim/run_config.hpp; {} when it has none), checked as a run checks
// it.
pybind11::dict run_config(pybind11::handle kernel);
// An output path through the rule every output follows (isa::output_target): InvalidInput for a FIFO, socket,
// block device, directory; "regular" (or "absent") or "device" otherwise. The sweeps' results files use it.
std::string output_kind(pybind11::handle path);
// The rule of every output neuronsim writes (sim::prepare_output_paths), for the Python package's own writers
// (save_bir, the sweeps' results): each of `outputs` an acceptable output path (isa::output_target; its folder
// there and writable) that is none of `inputs` (the files of the same run: a kernel's source, its data) nor
// another output. InvalidInput naming the path otherwise. Writes nothing.
void check_output_paths(pybind11::handle outputs, pybind11::handle inputs);
// check_output_paths([path], inputs), then `text` (str) written to path whole (isa::write_file_atomic: a
// temporary renamed into place; a device written in place, every write error reported).
void write_output(pybind11::handle path, pybind11::handle text, pybind11::handle inputs);
// cores= / lnc=: None (0) or a whole number from 1 to sim::kMaxCores; TypeError naming the argument
// otherwise.
int count_arg(pybind11::handle v, const char *name);
// neuronsim._core.builder and neuronsim._core.lowering (python/builder.cpp): the BIR builder and the lowering
// library, for the NKI front end.
void bind_builder(pybind11::module_ &m);

// A Kernel object, or a path loaded now (with the GIL released).
std::shared_ptr<const sim::Kernel> kernel_arg(pybind11::handle kernel, sim::KernelForms forms);
// inputs=: None, a dict of name -> array or .npy path (--input NAME=FILE), or a folder of <name>.npy
// (--inputs DIR).
// With the kernel's program, each array's shape and dtype are checked against its tensor before it is copied.
sim::InputSpec inputs_arg(pybind11::handle inputs, const isa::Program *program = nullptr);

} // namespace neuronsim::python
