// Tensors in and out of a run: .npy inputs (or deterministic generated ones), .npy outputs, comparison with
// expected tensors, and the stats document.
#pragma once

#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <string_view>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/engines/memory.hpp"
#include "neuronsim/io/npy.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::isa {
class AtomicFile;
}

namespace neuronsim::sim {

struct InputSpec {
  std::map<std::string, std::string> files;  // tensor name -> .npy path (--input NAME=FILE)
  std::string dir;                           // --inputs DIR: <tensor file name> for every input found there
  // Arrays held in memory (the Python module's inputs=), under the same rules as a file (check_array, load_input);
  // named "inputs['NAME']" in messages (array_source). A name may be given once over `files` and `arrays`.
  std::map<std::string, io::NpyArray> arrays;
  // Generated inputs: 0 (the default) seeds each tensor's generator with the FNV-1a hash of its name, as always; N
  // with the hash of "<name>#N" (--seed N): another deterministic draw.
  uint64_t seed = 0;
};

// The source name of an in-memory array in messages: "inputs['a']", "expect['b']".
std::string array_source(const std::string &what, const std::string &name);

// ------------------------------------------------------------------------------------------ tensors by name
// The input (resp. output) tensor called `name` (memory-location or set name). An unknown name is an InputError
// naming `source` (a path, "--input", "inputs['x']") that lists the valid names and says when the name is an
// output (resp. an input) instead.
int input_tensor(const isa::Program &p, const std::string &name, const std::string &source);
int output_tensor(const isa::Program &p, const std::string &name, const std::string &source);

// The file name a tensor is written as (outputs) and looked up as (--inputs DIR, --expect DIR): its name with
// '/', '\\', NUL and other control characters replaced by '_' ("", "." and ".." become "_", "_." and "_.."),
// plus ".npy" -- never a path out of the directory. InputError when the result exceeds 255 bytes (NAME_MAX).
std::string tensor_file_name(const std::string &tensor_name);

// ------------------------------------------------------------------------------------------ arrays for tensors
// "[128, 512]".
std::string shape_text(const std::vector<int64_t> &shape);
// Whether an array of this shape and dtype may fill input tensor `t` (role "input") or be compared with output
// tensor `t` (role "expected"). The shape must equal the tensor's exactly (the message shows both); the dtype
// must be one engines::npy_to_dtype accepts for the tensor (engines/npy_dtype.hpp: the tensor's own, its raw-bits
// container, <f4/<f2 for a float tensor, an integer dtype for an integer tensor). Throws InputError naming `source`.
void check_array(const isa::Tensor &t, const std::vector<int64_t> &shape, isa::Dtype dtype, const std::string &source,
                 const std::string &role);
// Fills input tensor `tensor` from an array already in memory (a .npy file's content, or a numpy array handed
// over by the Python module): check_array, then the bytes converted to the tensor's dtype (npy_to_dtype).
void load_input(const isa::Program &p, engines::Memory &mem, int tensor, const io::NpyArray &a, const std::string &source);

// Fills every input tensor of the program; returns one line per tensor saying where its data came from.
// --input names and in-memory arrays must name input tensors (input_tensor), each once over both; an array fills
// its tensor through load_input exactly as a file's content does. --inputs DIR must be a directory, and its
// files are looked up by tensor_file_name. Inputs not given are generated deterministically: floats uniform in
// [-1, 1), signed integers in [-8, 8), unsigned in [0, 16), from a 64-bit Mersenne Twister seeded with the
// FNV-1a hash of the tensor name (with a seed: of "<name>#<seed>"). Files must be regular .npy files (read_npy) of exactly the tensor's shape.
std::vector<std::string> load_inputs(const isa::Program &p, engines::Memory &mem, const InputSpec &spec);

// The files write_outputs writes: (tensor index, <outdir>/<tensor_file_name>) for every ExternalOutput, in
// tensor order. InputError when two outputs map to one file name.
std::vector<std::pair<int, std::string>> output_files(const isa::Program &p, const std::string &outdir);

// Writes <outdir>/<tensor_file_name>.npy for every ExternalOutput (each atomically); returns the paths written.
std::vector<std::string> write_outputs(const isa::Program &p, const engines::Memory &mem, const std::string &outdir);

// Checks a run's output paths before it starts, so that a bad path fails at once rather than after the run:
// every directory in `dirs` (--outdir) is created (with its parents) and must be a writable directory; every
// file in `files` (outputs, --stats, --trace, --device-print) must not be a directory, and its directory must
// exist and be writable (probed with a temporary file, removed); and no output may be the same file as any of
// `inputs` (the kernel, input and expected files: same path after resolving symlinks, or same inode), nor two
// outputs one file. Creates nothing else and truncates nothing. InputError naming the path and the OS reason.
void prepare_output_paths(const std::vector<std::string> &dirs, const std::vector<std::string> &files,
                          const std::vector<std::string> &inputs);

// Tolerances for comparisons: finite and non-negative, else InputError naming `source` and the value.
void check_tolerances(double rtol, double atol, const std::string &source);

struct Mismatch {
  std::string tensor;
  int64_t index = -1;      // flat element index of the worst element, -1 for a missing/shape error
  double got = 0, want = 0;
  std::string message;
};
// Compares output tensor `tensor` with an expected array in memory: |got - want| <= atol + rtol * |want|
// element-wise (NaN equals NaN). check_array(role "expected") first: a wrong shape or dtype is an InputError, not a
// mismatch. Returns the worst element when any is outside the tolerance.
std::optional<Mismatch> compare_output(const isa::Program &p, const engines::Memory &mem, int tensor,
                                       const io::NpyArray &want, double rtol, double atol, const std::string &source);
// Compares every output with <dir>/<tensor_file_name>: a missing file is a Mismatch (message), a file of the
// wrong shape or dtype an InputError. Returns one entry per output that differs, empty when all agree.
std::vector<Mismatch> compare_outputs(const isa::Program &p, const engines::Memory &mem, const std::string &dir,
                                      double rtol, double atol, std::vector<std::string> *checked = nullptr);
// Checks before a run what compare_outputs will read from `dir`: every expected file that exists is a regular .npy
// file whose shape and dtype suit its output (check_array), read from its header only. InputError otherwise.
void check_expected_files(const isa::Program &p, const std::string &dir);
// The expected files compare_outputs would read from `dir` (those that exist), for prepare_output_paths.
std::vector<std::string> expected_files(const isa::Program &p, const std::string &dir);
// The input files load_inputs would read for `spec` (for prepare_output_paths).
std::vector<std::string> input_files(const isa::Program &p, const InputSpec &spec);

// The expected outputs of a run: a folder (--expect DIR), where every output must have its <tensor_file_name>, or
// arrays held in memory (the Python module's expect=), where exactly the outputs given are compared.
struct ExpectSpec {
  std::string dir;
  std::map<std::string, io::NpyArray> arrays;  // output name -> expected values; named "expect['NAME']" in messages
};
// Checks before a run what compare_outputs will compare with: a folder's files as check_expected_files does; each
// array names an output tensor (output_tensor: an unknown name lists the outputs) and suits it (check_array, role
// "expected"). InputError otherwise, so that a typo or a wrong shape does not cost a run.
void check_expected(const isa::Program &p, const ExpectSpec &e);
// Compares as above with each expected tensor of `e`: a folder's missing file is a Mismatch; an array naming no
// output tensor, or of the wrong shape or dtype, an InputError.
std::vector<Mismatch> compare_outputs(const isa::Program &p, const engines::Memory &mem, const ExpectSpec &e,
                                      double rtol, double atol, std::vector<std::string> *checked = nullptr);

// Output tensor values as fp32 (for comparisons and tests).
std::vector<float> tensor_f32(const isa::Program &p, const engines::Memory &mem, int tensor);

// How much of the critical path each engine (and the DMA queues together, as "DMA") accounts for: the time from
// each critical-path instruction's start to the next one's, in ns. The bottleneck is the largest share.
std::vector<std::pair<std::string, double>> critical_path_shares(const RunResult &r, const Schedule &s);

// The --stats document (docs/profiling.md): the summary, plus "tool", "command_line" (as given)
// and "profile" (per static instruction, opcode, engine and source line: executions, busy and wait ns by
// reason, and the critical path's share), and "analysis" (neuronsim/sim/analysis.hpp: the time split per
// engine and DMA queue, rates against peak, the verdict). Without `with_profile`, no "profile" (the analysis
// then has no wait sums): the cheap document a run's summary and verdict need.
nlohmann::json stats_json(const RunResult &r, const Schedule &s, const isa::Program &p,
                          const std::vector<std::string> &command_line = {}, bool with_profile = true);
// The analysis of the document stats_json makes without the profile, built without its critical-path list (what
// the summary's verdict line reads: the verdict comes from the engines', DMA's and critical-path shares' numbers,
// never from the profile's wait sums, so it is the full document's verdict). A run whose caller may never read
// its stats document (a tune candidate, neuronsim.run) gets its summary and verdict from this alone.
nlohmann::json summary_analysis_json(const RunResult &r, const Schedule &s, const isa::Program &p);
// The trace of a finished run as a document (TraceWriter replayed over r.events: the same text a streamed trace has).
nlohmann::json trace_json(const RunResult &r, const Schedule &s, const isa::Program &p);

// The Chrome / Perfetto trace of a run, formatted event by event as the core records them (RunOptions::on_event) and
// written to disk in 1 MiB pieces, so a long run's trace is never held whole (sim/trace.cpp: tracks and events).
//   auto w = TraceWriter::to_file(path, program, arch);
//   options.on_event = [&](auto &e, auto &si, auto &r) { w->event(e, si, r); };
//   ... run ...; w->finish(result);      // renames the file into place; a run that fails leaves none
class TraceWriter {
public:
  // Into a string, which finish() returns.
  // `core` >= 0: a core of a multi-core run (sim/device.hpp), its track group (pid) core + 1, "NeuronCore <core>".
  TraceWriter(const isa::Program &p, const std::string &arch, int dma_ring_depth, double dma_latency_ns, int core = -1);
  // Into `path`, through a temporary next to it (isa::AtomicFile) that finish() renames into place; destroyed
  // before finish(), the temporary is removed.
  static std::unique_ptr<TraceWriter> to_file(const std::string &path, const isa::Program &p,
                                              const engines::ArchParams &arch, int core = -1);
  ~TraceWriter();
  TraceWriter(const TraceWriter &) = delete;
  TraceWriter &operator=(const TraceWriter &) = delete;

  // One recorded event, its schedule entry and the run's result so far (its queue names). Never throws (the core's
  // threads cannot unwind): a write error is kept and thrown by finish().
  void event(const TraceEvent &e, const ScheduledInst &si, const RunResult &r) noexcept;
  // DMA-engine slices as the run fixes them (RunOptions::on_dma_slices), moved from `s`. Each is written once the
  // transfers it names are recorded (their labels). Never throws, as event().
  void slices(std::vector<engines::DmaSlice> &s) noexcept;
  // After a successful run: the ring and DMA-engine tracks, the engines' slices, the closing; commits the file
  // (returning "") or returns the document.
  std::string finish(const RunResult &r);
  // A multi-core run: core `core`'s recorded events (its own result and schedule) as a further track group, written
  // by finish().
  void add_core(const RunResult &r, const Schedule &s, const isa::Program &p, int core);

private:
  // Where a flow arrow from a recorded instruction starts (tid < 0: not recorded), and its static instruction.
  struct FlowEnd {
    int tid = -1;
    int inst = 0;
    double ts_us = 0.0;
  };
  void write_event(const TraceEvent &e, const ScheduledInst &si, const RunResult &r);
  void str(std::string_view s);
  void num(double v);
  void num(int64_t v);
  void key(const char *k);
  void track(int tid, const std::string &name);
  void label(const isa::Inst &inst);
  void operands(const ScheduledInst &si, const std::pmr::vector<engines::Access> &acc, const std::vector<isa::Arg> &argv);
  void flush();
  void write_slice(const engines::DmaSlice &sl);
  void write_ready_slices();  // the pending slices, in order, while their transfers are recorded

  const isa::Program &prog_;
  int depth_;
  double dma_latency_ns_;
  std::unique_ptr<isa::AtomicFile> file_;
  std::string buf_, label_;
  std::vector<FlowEnd> flow_;  // by dynamic instruction number
  std::deque<engines::DmaSlice> pending_;  // slices naming a transfer not recorded yet
  bool any_slices_ = false;
  std::exception_ptr error_;
  std::string pid_;   // the track group: "1", or core + 1
  std::string more_;  // add_core's events
};

} // namespace neuronsim::sim
