// The `neuronsim` command (DESIGN.md section 5). Calls public headers only.
// Exit codes: 0 success; 1 outputs differ from --expect / validation divergence; 2 usage; 3 invalid input;
// 4 simulation error.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "neuronsim/engines/ops.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/isa/dump.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/lower.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "neuronsim/sim/stats.hpp"
#include "neuronsim/sim/validate.hpp"
#include "neuronsim/sim/version.hpp"

namespace fs = std::filesystem;
using namespace neuronsim;

namespace {

// SystemC prints its banner from its own main() before sc_main; a simulator's output should be its own.
const bool kQuietSystemC = [] { return setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0; }();

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Error messages may quote the input (a JSON parser's "last read" bytes, a .npy header): the user still gets one
// printable line -- control characters and bytes that are not valid UTF-8 as \xNN escapes.
std::string one_line(const std::string &m) {
  static const char *hex = "0123456789ABCDEF";
  std::string s;
  for (size_t i = 0; i < m.size();) {
    const unsigned char c = static_cast<unsigned char>(m[i]);
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 1;
    for (size_t k = 1; k < n; ++k)
      if (i + k >= m.size() || (static_cast<unsigned char>(m[i + k]) & 0xC0) != 0x80) n = 0;
    if (n > 1) {
      s.append(m, i, n);
      i += n;
      continue;
    }
    if (c >= 0x20 && c < 0x7F) s += static_cast<char>(c);
    else s += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    ++i;
  }
  return s;
}

const char *kHelp = R"(neuronsim - cycle-level simulator of an AWS NeuronCore (PE, ACT, POOL, DVE, SP)

usage:
  neuronsim run [KERNEL] [options]    run a BIR JSON kernel (file, or a workload directory)
  neuronsim run DIR [options]         run the bundle streams of DIR (written by `neuronsim encode`)
  neuronsim encode KERNEL --gen v2|v3|v4 -o DIR     BIR -> per-engine 64-byte bundle streams
  neuronsim disasm FILE_OR_DIR [--gen v2|v3|v4]    bundles -> one readable line per bundle
  neuronsim validate --bir KERNEL --bundles DIR [options]   run both, compare, lint the streams
  neuronsim isa [--json]              print every ISA table the simulator knows
  neuronsim --version | --help

run options:
  KERNEL                   a .json BIR file, or a directory holding one *.bir.json (plus optional
                           inputs/ and expected/ folders), or a bundle directory (manifest.json; its
                           generation picks --arch unless given). Without KERNEL: the bundled default workload.
  --input NAME=FILE.npy    data for input tensor NAME (repeatable)
  --inputs DIR             DIR/<tensor>.npy for every input found there
  --outdir DIR             where <tensor>.npy is written for every output (default: neuronsim-out)
  --expect DIR             compare outputs with DIR/<tensor>.npy; exit 1 when outside tolerance
  --rtol R --atol A        comparison tolerance |got-want| <= A + R*|want| (default 1e-5, 1e-6; finite, >= 0)
  --arch trn1|trn2|trn3    NeuronCore-v2 / v3 / v4 (default trn1)
  --stats FILE.json        per-engine statistics
  --trace FILE.json        Chrome/Perfetto timeline (open in ui.perfetto.dev)
  --timing-only            timeline and statistics only: skip the numeric work, write no outputs
                           (so --input, --inputs and --expect cannot be given with it)
  --kernel-sim PROG        run CustomOp / BIRKernel instructions with the external program PROG, as
                           `PROG DIR/config.json` (operands as DIR/in<i>.npy, results read from
                           DIR/out<i>.npy; DIR is a fresh temporary directory; README "External kernels")
  --device-print FILE      write DevicePrint lines to FILE (default: stdout, before the summary)

Inputs that are not given are generated deterministically (floats uniform in [-1,1), integers small),
seeded by the tensor name. bf16 and fp8 .npy files hold raw bit patterns as uint16 / uint8.
Input and expected arrays must have exactly the tensor's shape. Outputs are written as <tensor>.npy inside
--outdir ('/' and control characters in a name become '_'); no output may be the kernel, an input or an expected
file, and every output path is checked before the run. A key a type does not have is warned about; a required
key that is missing is an error (README "Bad input").

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

struct KernelPaths {
  std::string bir;
  std::string inputs;    // workload inputs/ folder, if any
  std::string expected;  // workload expected/ folder, if any
  std::string tolerance; // workload tolerance.json ({"rtol": R, "atol": A}), if any
};

KernelPaths resolve_kernel(const std::string &arg) {
  KernelPaths k;
  fs::path p = arg;
  if (!fs::exists(p)) throw InputError({arg, -1, "", ""}, "no such file or directory");
  if (fs::is_directory(p)) {
    std::vector<fs::path> birs;
    for (const auto &e : fs::directory_iterator(p)) {
      const std::string n = e.path().filename().string();
      if (e.is_regular_file() && n.size() > 9 && n.substr(n.size() - 9) == ".bir.json") birs.push_back(e.path());
    }
    if (birs.size() != 1)
      throw InputError({arg, -1, "", ""}, "a workload directory must hold exactly one *.bir.json file (found " +
                                              std::to_string(birs.size()) + ")");
    k.bir = birs[0].string();
    if (fs::is_directory(p / "inputs")) k.inputs = (p / "inputs").string();
    if (fs::is_directory(p / "expected")) k.expected = (p / "expected").string();
    if (fs::is_regular_file(p / "tolerance.json")) k.tolerance = (p / "tolerance.json").string();
  } else {
    k.bir = p.string();
  }
  return k;
}

std::string need_value(const std::vector<std::string> &a, size_t &i) {
  if (i + 1 >= a.size()) throw UsageError("option " + a[i] + " needs a value");
  return a[++i];
}

double parse_double(const std::string &opt, const std::string &v) {
  try {
    size_t used = 0;
    double d = std::stod(v, &used);
    if (used == v.size()) return d;
  } catch (...) {
  }
  throw UsageError("option " + opt + " needs a number, got '" + v + "'");
}

// --rtol / --atol: a finite number >= 0 (a NaN tolerance would pass every comparison).
double parse_tolerance(const std::string &opt, const std::string &v) {
  const double d = parse_double(opt, v);
  if (!std::isfinite(d) || d < 0) throw UsageError("option " + opt + " needs a finite number >= 0, got '" + v + "'");
  return d;
}

// An option whose value names a file or directory: an empty value is a usage error, not "the current directory".
std::string need_path(const std::vector<std::string> &a, size_t &i) {
  std::string v = need_value(a, i);
  if (v.empty()) throw UsageError("option " + a[i - 1] + " needs a path, got an empty one");
  return v;
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

// What the reader ignored (unknown keys), one line each on stderr before the run.
void print_warnings(const isa::Program &p) {
  for (const auto &w : p.warnings) std::cerr << "neuronsim: warning: " << one_line(w) << "\n";
}

// Stats and trace documents: written in full or not at all (isa/file_output.hpp).
void write_json_file(const std::string &path, const nlohmann::json &j) {
  isa::write_file_atomic(path, j.dump(1) + "\n");
}

int cmd_run(const std::vector<std::string> &a) {
  std::string kernel, outdir = "neuronsim-out", expect, stats, trace, device_print;
  sim::InputSpec spec;
  sim::RunOptions opts;
  double rtol = 1e-5, atol = 1e-6;
  bool tol_given = false;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string &o = a[i];
    if (o == "--input") add_input(spec, need_value(a, i));
    else if (o == "--inputs") spec.dir = need_path(a, i);
    else if (o == "--outdir") outdir = need_path(a, i);
    else if (o == "--expect") expect = need_path(a, i);
    else if (o == "--rtol") rtol = parse_tolerance(o, need_value(a, i)), tol_given = true;
    else if (o == "--atol") atol = parse_tolerance(o, need_value(a, i)), tol_given = true;
    else if (o == "--arch") {
      opts.arch = need_value(a, i);
      if (opts.arch != "trn1" && opts.arch != "trn2" && opts.arch != "trn3")
        throw UsageError("--arch takes trn1, trn2 or trn3, got '" + opts.arch + "'");
    } else if (o == "--stats") stats = need_path(a, i);
    else if (o == "--trace") trace = need_path(a, i);
    else if (o == "--timing-only") opts.timing_only = true;
    else if (o == "--kernel-sim") {
      opts.kernel_sim = need_value(a, i);
      if (opts.kernel_sim.empty()) throw UsageError("--kernel-sim needs a program");
    } else if (o == "--device-print") {
      device_print = need_value(a, i);
      if (device_print.empty()) throw UsageError("--device-print needs a file name");
    } else if (o == "--help" || o == "-h") {
      std::cout << kHelp;
      return 0;
    } else if (!o.empty() && o[0] == '-') throw UsageError("unknown option '" + o + "'");
    else if (kernel.empty()) kernel = o;
    else throw UsageError("more than one KERNEL given ('" + kernel + "', '" + o + "')");
  }
  // Directories given on the command line must exist (a misspelt one would silently mean "no inputs").
  std::error_code dir_ec;
  if (!spec.dir.empty() && !fs::is_directory(spec.dir, dir_ec))
    throw UsageError("--inputs " + spec.dir + ": " + (fs::exists(spec.dir, dir_ec) ? "not a directory" : "no such directory"));
  if (!expect.empty() && !fs::is_directory(expect, dir_ec))
    throw UsageError("--expect " + expect + ": " + (fs::exists(expect, dir_ec) ? "not a directory" : "no such directory"));
  // A timing-only run does no numerics: data and expectations given for it would be silently ignored.
  if (opts.timing_only && (!spec.files.empty() || !spec.dir.empty() || !expect.empty() || tol_given))
    throw UsageError(std::string("--timing-only runs no numerics: ") +
                     (!expect.empty() || tol_given ? "--expect/--rtol/--atol" : "--input/--inputs") +
                     " cannot be used with it");
  const bool bundled = kernel.empty();
  if (bundled) kernel = find_workloads_dir() + "/kernel1";
  // A directory written by `neuronsim encode` (manifest.json + <engine>.bin) runs its streams.
  // (Any manifest.json counts: one that is not a regular file is refused by the reader, naming it.)
  std::error_code mec;
  const bool streams = fs::is_directory(kernel, mec) && fs::exists(fs::path(kernel) / "manifest.json", mec);
  KernelPaths kp;
  isa::Program prog;
  std::vector<std::string> read_files;  // every file the run reads: no output may be one of them
  if (streams) {
    isa::CoreGen gen = isa::CoreGen::V2;
    prog = isa::read_bundle_dir(kernel, &gen);
    kp.bir = kernel + " (bundle streams, " + isa::core_gen_name(gen) + ")";
    if (std::find(a.begin(), a.end(), "--arch") == a.end()) opts.arch = sim::arch_for_gen(gen);
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(kernel, ec)) read_files.push_back(e.path().string());
  } else {
    kp = resolve_kernel(kernel);
    prog = isa::read_bir_file(kp.bir);
    read_files.push_back(kp.bir);
  }
  print_warnings(prog);
  if (spec.dir.empty()) spec.dir = kp.inputs;
  if (expect.empty() && !opts.timing_only) expect = kp.expected;
  if (!tol_given && !kp.tolerance.empty() && !opts.timing_only) {
    // A workload states the tolerance its dtypes justify (workloads/<name>/README.md explains it).
    const nlohmann::json t = isa::read_json_file(kp.tolerance, "tolerance file");
    for (const char *key : {"rtol", "atol"})
      if (!t.is_object() || !t.contains(key) || !t.at(key).is_number())
        throw InputError({kp.tolerance, -1, "", key}, "the tolerance file needs a number under this key");
    rtol = t.at("rtol").get<double>();
    atol = t.at("atol").get<double>();
    sim::check_tolerances(rtol, atol, kp.tolerance);
    read_files.push_back(kp.tolerance);
  }

  // Every output path is checked (and the output directory created) before the run: a path that cannot be
  // written fails now, not after the simulation, and no output may overwrite the kernel, an input or an
  // expected file (--expect equal to --outdir would rewrite the expectations before comparing them).
  {
    std::vector<std::string> out_files;
    if (!opts.timing_only)
      for (const auto &[t, path] : sim::output_files(prog, outdir)) out_files.push_back(path), (void)t;
    for (const auto &f : {stats, trace}) if (!f.empty()) out_files.push_back(f);
    if (!device_print.empty() && !opts.timing_only) out_files.push_back(device_print);
    for (const auto &f : sim::input_files(prog, spec)) read_files.push_back(f);
    if (!expect.empty()) {
      // Expected files are checked now (shape, dtype, regular file): a wrong one is reported before the run.
      sim::check_expected_files(prog, expect);
      for (const auto &f : sim::expected_files(prog, expect)) read_files.push_back(f);
    }
    sim::prepare_output_paths(opts.timing_only ? std::vector<std::string>{} : std::vector<std::string>{outdir},
                              out_files, read_files);
  }

  // DevicePrint lines: on stdout as they happen (so before the summary), or into --device-print FILE, written
  // through a temporary that only a successful run renames into place. A timing-only run prints nothing and
  // creates no file.
  std::unique_ptr<isa::AtomicFile> print_file;
  if (!device_print.empty() && !opts.timing_only) {
    print_file = std::make_unique<isa::AtomicFile>(device_print);
    opts.device_print = [f = print_file.get()](const std::string &l) { f->write(l + "\n"); };
  } else {
    opts.device_print = [](const std::string &l) { std::cout << l << "\n"; };
  }
  opts.record_dma_engine_slices = !trace.empty();  // the trace shows the DMA engines' activity
  sim::Simulator simulator(prog, opts);
  std::vector<std::string> in_lines;
  if (!opts.timing_only) in_lines = sim::load_inputs(prog, simulator.memory(), spec);
  sim::RunResult r = simulator.run();
  if (print_file) print_file->commit();

  std::cout << "neuronsim run: " << kp.bir << (bundled ? " (bundled default workload)" : "") << "\n";
  std::cout << "arch " << r.arch << ", " << prog.insts.size() << " instructions, " << r.dynamic_instructions
            << " executed" << (opts.timing_only ? " (timing only)" : "") << "\n";
  for (const auto &l : in_lines) std::cout << "  input  " << l << "\n";
  sim::print_summary(std::cout, r, simulator.schedule());
  if (!stats.empty()) {
    write_json_file(stats, sim::stats_json(r, simulator.schedule(), prog));
    std::cout << "stats: " << stats << "\n";
  }
  if (!trace.empty()) {
    write_json_file(trace, sim::trace_json(r, simulator.schedule(), prog));
    std::cout << "trace: " << trace << "\n";
  }
  if (opts.timing_only) return 0;
  for (const auto &p : sim::write_outputs(prog, simulator.memory(), outdir)) std::cout << "  output " << p << "\n";
  if (!expect.empty()) {
    std::vector<std::string> checked;
    auto bad = sim::compare_outputs(prog, simulator.memory(), expect, rtol, atol, &checked);
    std::cout << std::setprecision(6) << std::defaultfloat;
    for (const auto &m : bad) {
      if (m.index < 0) std::cout << "MISMATCH " << m.tensor << ": " << m.message << "\n";
      else
        std::cout << "MISMATCH " << m.tensor << "[" << m.index << "]: got " << m.got << ", expected " << m.want
                  << " (rtol " << rtol << ", atol " << atol << ")\n";
    }
    if (!bad.empty()) return 1;
    std::cout << "outputs match " << expect << " (" << checked.size() << " tensors, rtol " << rtol << ", atol "
              << atol << ")\n";
  }
  return 0;
}

int cmd_isa(const std::vector<std::string> &a) {
  bool json = false;
  for (const auto &o : a) {
    if (o == "--json") json = true;
    else if (o == "--help" || o == "-h") {
      std::cout << "usage: neuronsim isa [--json]\n";
      return 0;
    } else throw UsageError("unknown option '" + o + "'");
  }
  const auto executes = [](isa::InstructionType t) { return engines::executes(t); };
  if (json) std::cout << isa::isa_tables_json(executes).dump(1) << "\n";
  else std::cout << isa::isa_tables_text(executes);
  return 0;
}

// ------------------------------------------------------------------------------------------- bundle streams
const char *kEncodeHelp = R"(usage: neuronsim encode KERNEL --gen v2|v3|v4 -o DIR [--arch trn1|trn2|trn3]

Lowers the BIR kernel (loops unrolled, tensors placed, the scheduler's dependencies written as semaphores) and
writes one <engine>.bin stream of 64-byte bundles per engine plus DIR/manifest.json (docs/bundle-layout.md).
  KERNEL     a .json BIR file or a workload directory holding one *.bir.json
  --gen      the NeuronCore generation to encode for: v2 (trn1), v3 (trn2), v4 (trn3)
  -o DIR     output directory; created if missing. A non-empty DIR is refused unless it holds a previous
             `neuronsim encode` output (manifest.json and *.bin only), which is replaced.
  --arch     the architecture whose scheduler (DMA queues) is lowered for (default: the generation's)
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
  --arch trn1|trn2|trn3   default: the streams' generation's
exit codes: 0 they agree, 1 divergence or lint error, 2 usage, 3 invalid input
)";

isa::CoreGen parse_gen(const std::string &v) {
  if (v == "v2" || v == "V2") return isa::CoreGen::V2;
  if (v == "v3" || v == "V3") return isa::CoreGen::V3;
  if (v == "v4" || v == "V4") return isa::CoreGen::V4;
  throw UsageError("--gen takes v2, v3 or v4, got '" + v + "'");
}

std::string parse_arch(const std::string &v) {
  if (v != "trn1" && v != "trn2" && v != "trn3") throw UsageError("--arch takes trn1, trn2 or trn3, got '" + v + "'");
  return v;
}

// A directory `neuronsim encode` may write into: missing, empty, or a previous encode output (manifest.json with
// our format tag, and nothing but *.bin files besides). Anything else may be a user's data: refuse.
void prepare_encode_dir(const std::string &dir) {
  fs::path d = dir;
  if (!fs::exists(d)) return;
  if (!fs::is_directory(d)) throw InputError({dir, -1, "", ""}, "exists and is not a directory");
  std::vector<fs::path> ours;
  bool manifest = false;
  for (const auto &e : fs::directory_iterator(d)) {
    const std::string n = e.path().filename().string();
    if (n == "manifest.json" && e.is_regular_file()) {
      std::ifstream is(e.path());
      nlohmann::json m = nlohmann::json::parse(is, nullptr, false);
      manifest = !m.is_discarded() && m.is_object() && m.value("format", "") == "neuronsim-bundles";
      ours.push_back(e.path());
    } else if (e.is_regular_file() && e.path().extension() == ".bin") {
      ours.push_back(e.path());
    } else {
      manifest = false;
      ours.clear();
      break;
    }
  }
  if (ours.empty() && fs::is_empty(d)) return;
  if (!manifest)
    throw InputError({dir, -1, "", ""},
                     "directory is not empty and is not a previous `neuronsim encode` output; refusing to write there");
  for (const auto &p : ours) fs::remove(p);
}

int cmd_encode(const std::vector<std::string> &a) {
  std::string kernel, out, arch;
  std::optional<isa::CoreGen> gen;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string &o = a[i];
    if (o == "--gen") gen = parse_gen(need_value(a, i));
    else if (o == "-o" || o == "--outdir") out = need_value(a, i);
    else if (o == "--arch") arch = parse_arch(need_value(a, i));
    else if (o == "--help" || o == "-h") {
      std::cout << kEncodeHelp;
      return 0;
    } else if (!o.empty() && o[0] == '-') throw UsageError("unknown option '" + o + "'");
    else if (kernel.empty()) kernel = o;
    else throw UsageError("more than one KERNEL given ('" + kernel + "', '" + o + "')");
  }
  if (kernel.empty()) throw UsageError("encode needs a KERNEL (try neuronsim encode --help)");
  if (!gen) throw UsageError("encode needs --gen v2|v3|v4");
  if (out.empty()) throw UsageError("encode needs -o DIR");
  if (arch.empty()) arch = sim::arch_for_gen(*gen);
  const KernelPaths kp = resolve_kernel(kernel);
  const isa::Program prog = isa::read_bir_file(kp.bir);
  print_warnings(prog);
  sim::LowerStats st;
  const isa::Program low = sim::lower_to_stream(prog, engines::builtin_arch(arch), {}, &st);
  prepare_encode_dir(out);
  isa::write_bundle_dir(low, *gen, out);
  std::ifstream ms(fs::path(out) / "manifest.json");
  const nlohmann::json m = nlohmann::json::parse(ms);
  std::cout << "neuronsim encode: " << kp.bir << " -> " << out << " (" << isa::core_gen_name(*gen) << ", arch "
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
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string &o = a[i];
    if (o == "--gen") gen = parse_gen(need_value(a, i));
    else if (o == "--help" || o == "-h") {
      std::cout << kDisasmHelp;
      return 0;
    } else if (!o.empty() && o[0] == '-') throw UsageError("unknown option '" + o + "'");
    else if (target.empty()) target = o;
    else throw UsageError("more than one FILE_OR_DIR given");
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
    if (!gen && m.contains("generation")) gen = parse_gen(m.at("generation").get<std::string>());
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
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string &o = a[i];
    if (o == "--bir") bir = need_value(a, i);
    else if (o == "--bundles") bundles = need_value(a, i);
    else if (o == "--input") add_input(vo.inputs, need_value(a, i));
    else if (o == "--inputs") vo.inputs.dir = need_path(a, i);
    else if (o == "--rtol") vo.rtol = parse_tolerance(o, need_value(a, i));
    else if (o == "--atol") vo.atol = parse_tolerance(o, need_value(a, i));
    else if (o == "--arch") vo.arch = parse_arch(need_value(a, i));
    else if (o == "--help" || o == "-h") {
      std::cout << kValidateHelp;
      return 0;
    } else throw UsageError("unknown argument '" + o + "' (validate takes --bir KERNEL --bundles DIR)");
  }
  if (bir.empty() || bundles.empty()) throw UsageError("validate needs --bir KERNEL and --bundles DIR");
  std::error_code dir_ec;
  if (!vo.inputs.dir.empty() && !fs::is_directory(vo.inputs.dir, dir_ec))
    throw UsageError("--inputs " + vo.inputs.dir + ": " +
                     (fs::exists(vo.inputs.dir, dir_ec) ? "not a directory" : "no such directory"));
  const KernelPaths kp = resolve_kernel(bir);
  if (vo.inputs.dir.empty()) vo.inputs.dir = kp.inputs;
  const isa::Program prog = isa::read_bir_file(kp.bir);
  print_warnings(prog);
  const sim::ValidateReport r = sim::validate_bundles(prog, bundles, vo);
  for (const auto &l : r.lint) std::cout << l << "\n";
  for (const auto &l : r.notes) std::cout << "note: " << l << "\n";
  if (!r.divergence.empty()) std::cout << "divergence: " << r.divergence << "\n";
  std::cout << r.summary << "\n";
  return r.agree ? 0 : 1;
}

} // namespace

int sc_main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
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
    if (args[0] == "run") return cmd_run(rest);
    if (args[0] == "isa") return cmd_isa(rest);
    if (args[0] == "encode") return cmd_encode(rest);
    if (args[0] == "disasm") return cmd_disasm(rest);
    if (args[0] == "validate") return cmd_validate(rest);
    throw UsageError("unknown command '" + args[0] + "' (try --help)");
  } catch (const UsageError &e) {
    std::cerr << "neuronsim: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const Error &e) {
    std::cerr << "neuronsim: " << one_line(e.what()) << "\n";
    return e.exit_code();
  } catch (const fs::filesystem_error &e) {
    // A file-system call on a user's path (a directory listing, a permission): the path and the OS reason.
    std::cerr << "neuronsim: " << one_line(e.path1().string()) << ": " << one_line(e.code().message()) << "\n";
    return 3;
  } catch (const nlohmann::json::exception &e) {
    // A JSON value of the wrong type in a document only the CLI reads (a manifest entry).
    std::cerr << "neuronsim: invalid JSON value: " << one_line(e.what()) << "\n";
    return 3;
  } catch (const std::bad_alloc &) {
    std::cerr << "neuronsim: out of host memory\n";
    return 4;
  } catch (const std::exception &e) {
    std::cerr << "neuronsim: internal error: " << one_line(e.what()) << "\n";
    return 4;
  }
}
