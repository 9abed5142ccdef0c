// Instructions that reach outside the simulated NeuronCore through the host services of engines/host.hpp.
//
// CustomOp (53), BIRKernel (54) -- birsim's "model A" (reference neuronx-cc/bir/sim-control-sync-customop.md
// 6.1): the simulator does not model the kernel's math. It saves each input operand (ins[i] read through its
// access pattern, reshaped to srcsShape[i] / srcs_shape[i]) as .npy, writes a JSON config, runs an external
// `kernel_sim` program, fails when it exits non-zero, and reads each output .npy back into outs[i] through its
// access pattern. neuronsim does exactly that, with the program named by `neuronsim run --kernel-sim PROG`
// (RunOptions::kernel_sim):
//
//   1. a fresh directory is made under $TMPDIR (or /tmp): neuronsim-kernel-XXXXXX; nothing is written anywhere
//      else, and the directory is removed afterwards, whatever happens;
//   2. <dir>/in<i>.npy for every ins[i] (which must be access patterns): the operand's elements in walk order,
//      in its own dtype (bf16 / fp8 as raw bits, the .npy convention of include/neuronsim/io/npy.hpp), shaped
//      srcsShape[i] (CustomOp) / srcs_shape[i] (BIRKernel) when the instruction gives it, else
//      [partitions, free dim 1, ...] (the access pattern's [step, num] counts);
//   3. <dir>/config.json:
//        {
//          "format": "neuronsim-kernel-sim-1",
//          "opcode": "CustomOp" | "BIRKernel",
//          "kernel_name": opFunctionName (CustomOp) | kernel_name (BIRKernel),
//          "lib_file": opLibFile (CustomOp; "" when absent or for BIRKernel),
//          "instruction": {"file": BIR file, "index": static index, "name": "I-3", "seq": dynamic number},
//          "inputs":  [{"path": "<dir>/in0.npy",  "shape": [..], "dtype": "float32", "descr": "<f4"}, ...],
//          "outputs": [{"path": "<dir>/out0.npy", "shape": [..], "dtype": "float32", "descr": "<f4"}, ...],
//          "fields": {every field the instruction carries, by its BIR JSON key: srcsShape, is_builtin,
//                     ulib_to_*_version; BIRKernel's kernel attributes is_causal, lower_bound, auto_cast, ...}
//        }
//      (BIRKernel's `kernel_attrs` list of string pairs and `psum_buf_shape` are not kept by the BIR reader, so
//      they are not in "fields".)
//   4. PROG is run as `PROG <dir>/config.json` with posix_spawnp (no shell; a PROG without '/' is looked up on
//      PATH), stdin /dev/null, stdout and stderr captured in <dir>; neuronsim waits for it. A PROG that cannot
//      be started, exits non-zero or dies on a signal is a SimulationError quoting the exit status and the last
//      line of its stderr;
//   5. <dir>/out<i>.npy is read for every outs[i]: it must exist, have exactly the output's shape (as in 2, from
//      dstsShape / dsts_shape) and a dtype that loads into the output's dtype under the --input rules of npy.hpp
//      (the same dtype; or <f4/<f2 for a float output, converted with the engines' rounding; or an integer
//      dtype whose values fit an integer output). Its elements are written to outs[i] in walk order.
//
// DevicePrint (57): nki.language.device_print(prefix, x) prints the prefix followed by the value of x. Each
// execution sends one line to the DevicePrint sink (RunOptions::device_print; `neuronsim run` prints to stdout or
// --device-print FILE):
//     <prefix> <values of ins[0]> (<instruction name>: <dtype> <shape>)      (no leading space without a prefix)
// e.g. `x = [[1, 2, 3], [4, 5, 6]] (I-2: float32 [2, 3])`: the values nested like numpy by the access pattern's
// [partitions, free dims...] counts, floats in the shortest form that reads back as the same fp32 value,
// integers as integers. Timing-only runs execute no semantics, so they print nothing.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engines/ops/common.hpp"
#include "neuronsim/engines/host.hpp"
#include "neuronsim/engines/npy_dtype.hpp"
#include "neuronsim/io/npy.hpp"

extern char **environ;

namespace neuronsim::engines {

namespace fs = std::filesystem;
using json = nlohmann::json;
using IT = isa::InstructionType;

namespace {

bool is_kernel(IT t) { return t == IT::CustomOp || t == IT::BIRKernel; }

// The BIR key and value of the kernel's name.
const char *name_key(const isa::Inst &I) { return I.type == IT::CustomOp ? "opFunctionName" : "kernel_name"; }
const std::string &kernel_name(const isa::Inst &I) {
  return I.type == IT::CustomOp ? I.f.op_function_name : I.f.kernel_name;
}

// Where PROG would be executed from: itself when it names a path, else the first executable PROG on PATH.
// Empty when there is none.
std::string resolve_program(const std::string &prog) {
  auto runnable = [](const fs::path &p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (prog.find('/') != std::string::npos) return runnable(prog) ? prog : std::string();
  const char *env = std::getenv("PATH");
  std::stringstream path(env ? env : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(path, dir, ':');) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / prog;
    if (runnable(p)) return p.string();
  }
  return {};
}

std::string shape_str(const std::vector<int64_t> &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::vector<int64_t> access_shape(const Access &a) {
  std::vector<int64_t> s;
  for (const auto &d : a.ap) s.push_back(d.num);
  if (s.empty()) s.push_back(1);
  return s;
}

// The shape an operand is exchanged in: the instruction's srcs/dsts shape when given, else the access's counts.
std::vector<int64_t> operand_shape(const Memory &m, const std::vector<std::vector<int64_t>> &declared,
                                   const char *key, const char *kind, size_t i, const Access &a) {
  if (declared.empty()) return access_shape(a);
  const std::string field = std::string(key) + "[" + std::to_string(i) + "]";
  if (i >= declared.size())
    ops::unsupported(m, key, std::string(key) + " has " + std::to_string(declared.size()) + " shapes but the " +
                                 "instruction has a " + kind + "[" + std::to_string(i) + "]");
  int64_t n = 1;
  for (int64_t v : declared[i]) {
    if (v < 0) ops::unsupported(m, field, "negative dimension in " + shape_str(declared[i]));
    n *= v;
  }
  if (n != ops::elems(a))
    ops::unsupported(m, field, shape_str(declared[i]) + " holds " + std::to_string(n) + " elements but " + kind +
                                   "[" + std::to_string(i) + "] accesses " + std::to_string(ops::elems(a)));
  return declared[i];
}

// The fields of an instruction as BIR JSON values (the generic field table, inst_fields.def).
template <typename T> json field_json(const T &v) {
  if constexpr (std::is_same_v<T, isa::AluOp>) return isa::alu_name(v);
  else if constexpr (std::is_enum_v<T>) return isa::enum_name(v);
  else return json(v);
}
json field_json(const std::vector<isa::ApDim> &v) {
  json a = json::array();
  for (const auto &d : v) a.push_back({d.step, d.num});
  return a;
}
json fields_json(const isa::Inst &I) {
  json j = json::object();
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  if (I.has(isa::Field::member))                                                                             \
    j[key] = field_json(I.f.member);
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  return j;
}

// A fresh directory under the system temporary directory, removed with everything in it on destruction.
struct TempDir {
  fs::path path;
  explicit TempDir(const Memory &m, const char *field) {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string tmpl = (base / "neuronsim-kernel-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      throw SimulationError(ops::ctx_field(m, field), "cannot create a temporary directory under " + base.string() +
                                                           ": " + std::strerror(errno));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
};

std::string last_line(const fs::path &file) {
  std::ifstream f(file, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  const size_t nl = s.find_last_of('\n');
  if (nl != std::string::npos) s = s.substr(nl + 1);
  if (s.size() > 400) s = s.substr(0, 400) + "...";
  return s;
}

// Runs `prog config` with stdin from /dev/null and stdout/stderr into files of `dir`; returns the wait status.
// Throws (naming `field`) when the program cannot be started.
int run_program(const Memory &m, const char *field, const std::string &prog, const std::string &config,
                const fs::path &dir) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const std::string out = (dir / "stdout.txt").string(), err = (dir / "stderr.txt").string();
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char *> argv = {const_cast<char *>(prog.c_str()), const_cast<char *>(config.c_str()), nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, prog.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    throw SimulationError(ops::ctx_field(m, field),
                          "cannot run the kernel program '" + prog + "' (--kernel-sim): " + std::strerror(rc));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      throw SimulationError(ops::ctx_field(m, field),
                            "waiting for the kernel program '" + prog + "' failed: " + std::strerror(errno));
  }
  return status;
}

[[noreturn]] void output_error(const Memory &m, size_t i, const std::string &what) {
  throw SimulationError(ops::ctx_field(m, "outs[" + std::to_string(i) + "]"), what);
}

// fp32 with the fewest significant digits that read back as the same value, written positionally when its
// decimal exponent is in [-4, 16) and in scientific form otherwise (Python's repr rule): 10 is "10", not the
// "1e+01" that "%.1g" gives; 1e20 is "1e+20".
std::string fmt_float(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  const double d = static_cast<double>(v);
  char buf[48];
  int digits = 1;
  for (; digits < 9; ++digits) {  // 9 significant digits always read back as the same fp32
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, d);
    if (std::strtof(buf, nullptr) == v) break;
  }
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, d);
  const int exp10 = std::atoi(std::strchr(buf, 'e') + 1);
  if (exp10 < -4 || exp10 >= 16) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, d);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, digits - 1 - exp10), d);
  return buf;
}

// Values in walk order, nested by `shape` (row-major), into `os`.
template <typename F>
void nest(std::string &os, const std::vector<int64_t> &shape, size_t dim, int64_t &k, const F &elem) {
  if (dim == shape.size()) {
    os += elem(k++);
    return;
  }
  os += '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i) os += ", ";
    nest(os, shape, dim + 1, k, elem);
  }
  os += ']';
}

} // namespace

void check_host_services(const isa::Inst &inst, const HostEnv *host, const std::string &file) {
  if (!is_kernel(inst.type)) return;
  const ErrorContext ctx{file, inst.index, inst.name, name_key(inst)};
  const std::string what = std::string(isa::inst_type_name(inst.type)) + " '" + kernel_name(inst) + "'";
  if (!host || host->kernel_sim.empty())
    throw SemanticError(ctx, what + " runs an external kernel: pass --kernel-sim PROG");
  if (resolve_program(host->kernel_sim).empty())
    throw SemanticError(ctx, what + " runs an external kernel, but the --kernel-sim program '" + host->kernel_sim +
                                 "' " +
                                 (host->kernel_sim.find('/') != std::string::npos
                                      ? "does not exist or is not executable"
                                      : "is not an executable file on PATH"));
}

namespace ops {

void exec_external_kernel(const DynInst &d, Memory &m, EngineState &) {
  const isa::Inst &I = *d.inst;
  check_host_services(I, m.host(), m.context().file);
  const bool custom = I.type == IT::CustomOp;
  const char *nkey = name_key(I);
  const auto &srcs = custom ? I.f.srcs_shape_custom : I.f.srcs_shape;
  const auto &dsts = custom ? I.f.dsts_shape_custom : I.f.dsts_shape;
  const char *srcs_key = custom ? "srcsShape" : "srcs_shape";
  const char *dsts_key = custom ? "dstsShape" : "dsts_shape";
  if (d.outs.empty()) unsupported(m, "outs", "an external kernel needs at least one output access");
  for (size_t i = 0; i < d.ins.size(); ++i)
    if (!has_in_ap(d, i))
      unsupported(m, "ins[" + std::to_string(i) + "]",
                  "an external kernel's operands must be access patterns (this one is " +
                      I.ins[i].json_kind + ")");

  // Shapes first: a malformed instruction is refused before anything is written.
  std::vector<std::vector<int64_t>> in_shape, out_shape;
  for (size_t i = 0; i < d.ins.size(); ++i) in_shape.push_back(operand_shape(m, srcs, srcs_key, "ins", i, d.ins[i]));
  for (size_t i = 0; i < d.outs.size(); ++i)
    out_shape.push_back(operand_shape(m, dsts, dsts_key, "outs", i, out_ap(d, m, i)));

  TempDir dir(m, nkey);
  json cfg;
  cfg["format"] = "neuronsim-kernel-sim-1";
  cfg["opcode"] = isa::inst_type_name(I.type);
  cfg["kernel_name"] = kernel_name(I);
  cfg["lib_file"] = custom ? I.f.op_lib_file : std::string();
  cfg["instruction"] = {{"file", m.context().file}, {"index", I.index}, {"name", I.name}, {"seq", d.seq}};
  cfg["inputs"] = json::array();
  cfg["outputs"] = json::array();
  for (size_t i = 0; i < d.ins.size(); ++i) {
    const Access &a = d.ins[i];
    io::NpyArray arr;
    arr.dtype = a.dtype;
    arr.shape = in_shape[i];
    arr.data.resize(static_cast<size_t>(elems(a) * isa::dtype_size(a.dtype)));
    m.read_raw(a, arr.data.data());
    const fs::path p = dir.path / ("in" + std::to_string(i) + ".npy");
    io::write_npy(p.string(), arr);
    cfg["inputs"].push_back({{"path", p.string()},
                             {"shape", in_shape[i]},
                             {"dtype", isa::enum_name(a.dtype)},
                             {"descr", io::npy_descr(a.dtype)}});
  }
  for (size_t i = 0; i < d.outs.size(); ++i) {
    const Access &a = d.outs[i];
    cfg["outputs"].push_back({{"path", (dir.path / ("out" + std::to_string(i) + ".npy")).string()},
                              {"shape", out_shape[i]},
                              {"dtype", isa::enum_name(a.dtype)},
                              {"descr", io::npy_descr(a.dtype)}});
  }
  cfg["fields"] = fields_json(I);
  const fs::path config = dir.path / "config.json";
  {
    std::ofstream f(config);
    f << cfg.dump(1) << "\n";
    if (!f)
      throw SimulationError(ctx_field(m, nkey), "cannot write the kernel config " + config.string());
  }

  const std::string &prog = m.host()->kernel_sim;
  const std::string what = std::string(isa::inst_type_name(I.type)) + " '" + kernel_name(I) + "'";
  const int status = run_program(m, nkey, prog, config.string(), dir.path);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string how = WIFEXITED(status) ? "exited with code " + std::to_string(WEXITSTATUS(status))
                                              : "was killed by signal " + std::to_string(WTERMSIG(status));
    const std::string err = last_line(dir.path / "stderr.txt");
    throw SimulationError(ctx_field(m, nkey), what + ": the kernel program '" + prog + "' " + how +
                                                  (err.empty() ? " (no stderr)" : ": " + err));
  }

  // Every output is read and checked before any is written: a bad output leaves memory as it was.
  std::vector<std::vector<uint8_t>> results(d.outs.size());
  for (size_t i = 0; i < d.outs.size(); ++i) {
    const std::string name = "out" + std::to_string(i) + ".npy";
    const fs::path p = dir.path / name;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
      output_error(m, i, what + ": the kernel program '" + prog + "' exited 0 but wrote no " + name);
    io::NpyArray arr;
    try {
      arr = io::read_npy(p.string());
    } catch (const Error &e) {
      output_error(m, i, what + ": " + name + " written by the kernel program: " + e.message());
    }
    if (arr.shape != out_shape[i])
      output_error(m, i, what + ": " + name + " has shape " + shape_str(arr.shape) + ", expected " +
                             shape_str(out_shape[i]) + (dsts.empty() ? " (the output access)" : std::string(" (") +
                                                                                                    dsts_key + ")"));
    try {
      results[i] = engines::npy_to_dtype(arr, d.outs[i].dtype, name);
    } catch (const Error &e) {
      output_error(m, i, what + ": " + name + ": " + e.message());
    }
  }
  for (size_t i = 0; i < d.outs.size(); ++i) m.write_raw(d.outs[i], results[i].data());
}

void exec_device_print(const DynInst &d, Memory &m, EngineState &) {
  const isa::Inst &I = *d.inst;
  const Access &a = in_ap(d, m, 0);
  const std::vector<int64_t> shape = access_shape(a);
  std::string line = I.f.prefix.empty() ? std::string() : I.f.prefix + " ";
  int64_t k = 0;
  if (is_int_dtype(a.dtype)) {
    std::vector<int32_t> v(static_cast<size_t>(elems(a)));
    m.read_i32(a, v.data());
    nest(line, shape, 0, k, [&](int64_t i) { return std::to_string(v[static_cast<size_t>(i)]); });
  } else {
    std::vector<float> v(static_cast<size_t>(elems(a)));
    m.read_f32(a, v.data());
    nest(line, shape, 0, k, [&](int64_t i) { return fmt_float(v[static_cast<size_t>(i)]); });
  }
  line += " (" + I.name + ": " + isa::enum_name(a.dtype) + " " + shape_str(shape) + ")";
  const HostEnv *h = m.host();
  if (h && h->device_print) h->device_print(line);
}

} // namespace ops

} // namespace neuronsim::engines
