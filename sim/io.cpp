#include "neuronsim/sim/io.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "neuronsim/engines/dtype.hpp"
#include "neuronsim/engines/npy_dtype.hpp"
#include "neuronsim/io/npy.hpp"
#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/isa/names.hpp"

namespace neuronsim::sim {

namespace fs = std::filesystem;
using engines::npy_to_dtype;
using io::NpyArray;
using io::npy_descr;
using io::read_npy;
using io::read_npy_header;
using io::write_npy;

namespace {

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The values are drawn in order and converted a block at a time: the same bytes as drawing them all first,
// without an fp32 copy of the whole tensor (256 MiB for the full-size matmul's rhs, which put the run's peak RSS
// above its DRAM + SBUF + PSUM by 1.9x).
void generate(const isa::Tensor &t, std::vector<uint8_t> &bytes, uint64_t seed) {
  std::mt19937_64 rng(fnv1a(seed == 0 ? t.name : t.name + "#" + std::to_string(seed)));
  const int64_t n = t.num_elements();
  const int sz = isa::dtype_size(t.dtype);
  constexpr int64_t kBlock = 1 << 16;
  std::vector<float> vals(static_cast<size_t>(std::min(n, kBlock)));
  bytes.assign(static_cast<size_t>(std::max<int64_t>(n * sz, static_cast<int64_t>(bytes.size()))), 0);
  const bool is_float = isa::dtype_is_float(t.dtype), is_signed = isa::dtype_is_signed_int(t.dtype);
  std::uniform_real_distribution<float> uf(-1.0f, 1.0f);
  std::uniform_int_distribution<int> ui(is_signed ? -8 : 0, is_signed ? 7 : 15);
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t m = std::min(kBlock, n - i0);
    if (is_float)
      for (int64_t k = 0; k < m; ++k) vals[static_cast<size_t>(k)] = uf(rng);
    else
      for (int64_t k = 0; k < m; ++k) vals[static_cast<size_t>(k)] = static_cast<float>(ui(rng));
    engines::store_f32(t.dtype, vals.data(), bytes.data() + i0 * sz, m);
  }
}

} // namespace

std::string array_source(const std::string &what, const std::string &name) { return what + "['" + name + "']"; }

// ------------------------------------------------------------------------------------------ tensors by name

namespace {
std::string names_of(const isa::Program &p, bool inputs) {
  std::string s;
  for (const auto &t : p.tensors)
    if ((inputs ? t.is_input() : t.is_output()) && t.is_dram()) s += (s.empty() ? "'" : ", '") + t.name + "'";
  return s.empty() ? "none" : s;
}

int tensor_by_name(const isa::Program &p, const std::string &name, const std::string &source, bool input) {
  const int t = p.find_tensor(name);
  const char *want = input ? "input" : "output";
  if (t >= 0 && (input ? p.tensors[t].is_input() : p.tensors[t].is_output())) return t;
  std::string why;
  if (t >= 0)
    why = "'" + name + "' is " + (p.tensors[t].is_output() ? "an output" : p.tensors[t].is_input() ? "an input" : "an internal tensor") +
          ", not an " + want;
  else
    why = "the kernel has no " + std::string(want) + " tensor named '" + name + "'";
  std::vector<std::string> names;  // the nearest of them (isa/names.hpp), after the list
  for (const auto &tt : p.tensors)
    if ((input ? tt.is_input() : tt.is_output()) && tt.is_dram()) names.push_back(tt.name);
  throw InputError({source, -1, "", ""},
                   why + " (its " + want + "s: " + names_of(p, input) + ")" + (t >= 0 ? "" : isa::did_you_mean(name, names)));
}
} // namespace

int input_tensor(const isa::Program &p, const std::string &name, const std::string &source) {
  return tensor_by_name(p, name, source, true);
}
int output_tensor(const isa::Program &p, const std::string &name, const std::string &source) {
  return tensor_by_name(p, name, source, false);
}

std::string tensor_file_name(const std::string &tensor_name) {
  std::string n;
  for (char c : tensor_name) {
    const unsigned char u = static_cast<unsigned char>(c);
    n += (c == '/' || c == '\\' || u < 0x20 || u == 0x7F) ? '_' : c;
  }
  if (n.empty() || n == "." || n == "..") n = "_" + n;
  n += ".npy";
  if (n.size() > 255)
    throw InputError({}, "tensor name '" + tensor_name.substr(0, 40) + "...' is " + std::to_string(tensor_name.size()) +
                             " bytes: too long for a file name (255)");
  return n;
}

// ------------------------------------------------------------------------------------------ arrays for tensors

std::string shape_text(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {
// The dtypes an array may have for a tensor of dtype `t` (npy.hpp, "Loading into a tensor").
bool dtype_fits(isa::Dtype array, isa::Dtype t) {
  using D = isa::Dtype;
  if (array == t) return true;
  const bool raw8 = t == D::float8e3 || t == D::float8e4 || t == D::float8e5 || t == D::float8_e4m3fn ||
                    t == D::float8_e8m0fnu;
  if ((t == D::bfloat16 && array == D::uint16) || (raw8 && array == D::uint8) ||
      (t == D::float32r && array == D::float32) || (t == D::float4_e2m1fn_x4 && array == D::uint16) ||
      ((t == D::float8_e4m3fn_x4 || t == D::float8_e5m2_x4) && array == D::uint32))
    return true;
  if ((array == D::float32 || array == D::float16) && isa::dtype_is_float(t) && engines::dtype_supported(t) &&
      t != D::float8_e8m0fnu)
    return true;
  return !isa::dtype_is_float(array) && !isa::dtype_is_float(t);
}
} // namespace

void check_array(const isa::Tensor &t, const std::vector<int64_t> &shape, isa::Dtype dtype, const std::string &source,
                 const std::string &role) {
  const ErrorContext c{source, -1, "", "shape"};
  if (shape != t.shape)
    throw InputError(c, role + " '" + t.name + "' has shape " + shape_text(shape) + ", the kernel declares " +
                            shape_text(t.shape) + " (shapes must match exactly; reshape the array)");
  // An expected array may also be float32/float16 whatever the tensor's dtype: it is compared as fp32.
  const bool float_expected = role == "expected" && (dtype == isa::Dtype::float32 || dtype == isa::Dtype::float16);
  if (!float_expected && !dtype_fits(dtype, t.dtype))
    throw InputError({source, -1, "", "dtype"},
                     role + " '" + t.name + "': an array of dtype " + isa::enum_name(dtype) + " (" + npy_descr(dtype) +
                         ") cannot be used for a " + isa::enum_name(t.dtype) + " tensor (" +
                         (isa::dtype_is_float(t.dtype) ? "float tensors take <f4, <f2 or their raw-bits container"
                                                       : "integer tensors take integer arrays") + ")");
}

void load_input(const isa::Program &p, engines::Memory &mem, int tensor, const NpyArray &a, const std::string &source) {
  const isa::Tensor &t = p.tensors.at(static_cast<size_t>(tensor));
  check_array(t, a.shape, a.dtype, source, "input");
  auto &bytes = mem.dram(tensor);
  const size_t want = static_cast<size_t>(t.num_elements()) * static_cast<size_t>(isa::dtype_size(t.dtype));
  if (bytes.size() < want) bytes.resize(want);
  if (a.dtype == t.dtype && a.data.size() == want) {
    std::copy(a.data.begin(), a.data.end(), bytes.begin());  // same dtype: no converted copy
  } else {
    std::vector<uint8_t> data = npy_to_dtype(a, t.dtype, source);
    std::copy(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(std::min(data.size(), bytes.size())), bytes.begin());
  }
}

namespace {
// Reading bound for a .npy file meant for tensor `t`: its elements at up to 8 bytes each (an int64 array for an
// int32 tensor, float32 for a bf16 output) plus 1 MiB of header.
uint64_t npy_bound(const isa::Tensor &t) {
  const uint64_t n = static_cast<uint64_t>(std::max<int64_t>(t.num_elements(), 0));
  return n > (uint64_t(1) << 59) ? UINT64_MAX : n * 8 + (uint64_t(1) << 20);
}

std::string input_dir_file(const isa::Tensor &t, const std::string &dir) {
  if (dir.empty()) return {};
  const fs::path f = fs::path(dir) / tensor_file_name(t.name);
  std::error_code ec;
  return fs::exists(f, ec) ? f.string() : std::string();
}
} // namespace

std::vector<std::string> input_files(const isa::Program &p, const InputSpec &spec) {
  std::vector<std::string> files;
  for (const auto &[name, file] : spec.files) files.push_back(file);
  for (const auto &t : p.tensors)
    if (t.is_input() && t.is_dram() && !spec.files.count(t.name) && !spec.arrays.count(t.name))
      if (auto f = input_dir_file(t, spec.dir); !f.empty()) files.push_back(f);
  return files;
}

std::vector<std::string> load_inputs(const isa::Program &p, engines::Memory &mem, const InputSpec &spec) {
  std::vector<std::string> lines;
  std::map<int, std::string> given;  // tensor -> file
  std::map<int, const NpyArray *> arrays;  // tensor -> array held in memory
  for (const auto &[name, array] : spec.arrays) {
    const int t = input_tensor(p, name, array_source("inputs", name));
    arrays[t] = &array;
  }
  for (const auto &[name, file] : spec.files) {
    const int t = input_tensor(p, name, file);
    if (given.count(t) || arrays.count(t))
      throw InputError({file, -1, "", "--input"}, "input '" + p.tensors[t].name + "' is given twice (also as " +
                                                      (given.count(t) ? given[t] : array_source("inputs", name)) + ")");
    given[t] = file;
  }
  if (!spec.dir.empty()) {
    std::error_code ec;
    if (!fs::is_directory(spec.dir, ec))
      throw InputError({spec.dir, -1, "", "--inputs"}, fs::exists(spec.dir, ec) ? "not a directory" : "no such directory");
  }
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const auto &t = p.tensors[i];
    if (!t.is_input() || !t.is_dram()) continue;
    if (auto it = arrays.find(static_cast<int>(i)); it != arrays.end()) {
      const std::string source = array_source("inputs", t.name);
      load_input(p, mem, static_cast<int>(i), *it->second, source);
      lines.push_back(t.name + ": " + source);
      continue;
    }
    std::string file;
    if (auto it = given.find(static_cast<int>(i)); it != given.end()) file = it->second;
    else file = input_dir_file(t, spec.dir);
    auto &bytes = mem.dram(static_cast<int>(i));
    if (file.empty()) {
      generate(t, bytes, spec.seed);
      lines.push_back(t.name + ": generated (deterministic, seed " + std::to_string(spec.seed) + ")");
      continue;
    }
    load_input(p, mem, static_cast<int>(i), read_npy(file, npy_bound(t)), file);
    lines.push_back(t.name + ": " + file);
  }
  return lines;
}

std::vector<std::pair<int, std::string>> output_files(const isa::Program &p, const std::string &outdir) {
  std::vector<std::pair<int, std::string>> out;
  std::map<std::string, std::string> seen;  // file name -> tensor
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const auto &t = p.tensors[i];
    if (!t.is_output()) continue;
    std::string name;
    try {
      name = tensor_file_name(t.name);
    } catch (const InputError &e) {
      throw InputError({p.file, -1, "", "allocations"}, e.message());
    }
    if (auto it = seen.find(name); it != seen.end())
      throw InputError({p.file, -1, "", "allocations"}, "outputs '" + it->second + "' and '" + t.name +
                                                              "' would both be written as " + name);
    seen[name] = t.name;
    out.emplace_back(static_cast<int>(i), (fs::path(outdir) / name).string());
  }
  return out;
}

std::vector<std::string> write_outputs(const isa::Program &p, const engines::Memory &mem, const std::string &outdir) {
  std::vector<std::string> written;
  std::error_code ec;
  fs::create_directories(outdir, ec);
  if (ec) throw InputError({outdir, -1, "", "--outdir"}, "cannot create the output directory: " + ec.message());
  for (const auto &[i, path] : output_files(p, outdir)) {
    const auto &t = p.tensors[static_cast<size_t>(i)];
    NpyArray a;
    a.dtype = t.dtype;
    a.shape = t.shape;
    const auto &bytes = mem.dram(i);
    const size_t n = static_cast<size_t>(t.num_elements() * isa::dtype_size(t.dtype));
    if (bytes.size() == n) {
      // The tensor's own buffer is lent to the writer and taken back, whatever happens: a copy of a large output
      // (128 MiB for the full-size matmul) raised the run's peak RSS by its size. The Memory is never a const
      // object (Simulator owns it); only this function's view of it is.
      auto &buf = const_cast<std::vector<uint8_t> &>(bytes);
      a.data = std::move(buf);
      try {
        write_npy(path, a);
      } catch (...) {
        buf = std::move(a.data);
        throw;
      }
      buf = std::move(a.data);
    } else {
      a.data.assign(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(std::min(n, bytes.size())));
      a.data.resize(n, 0xFF);
      write_npy(path, a);
    }
    written.push_back(path);
  }
  return written;
}

namespace {
// The identity of an existing file (device, inode), or nothing.
std::optional<std::pair<dev_t, ino_t>> file_id(const std::string &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(st.st_dev, st.st_ino);
}
std::string canonical_or_same(const std::string &path) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? path : c.string();
}
[[noreturn]] void path_error(const std::string &path, const std::string &what, int err) {
  throw InputError({path, -1, "", ""}, what + ": " + std::strerror(err));
}
void make_dirs(const std::string &dir, const std::string &what) {
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError({dir, -1, "", ""}, "cannot create the " + what + ": " + ec.message());
  if (!fs::is_directory(dir, ec)) throw InputError({dir, -1, "", ""}, "the " + what + " is not a directory");
}
// Writable directory: a temporary file is created and removed (access(2) is not the whole story: read-only
// mounts, ACLs).
void probe_writable(const std::string &dir) {
  std::string tmpl = (fs::path(dir.empty() ? "." : dir) / ".neuronsim-probe-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const int fd = ::mkstemp(buf.data());
  if (fd < 0) path_error(dir.empty() ? "." : dir, "cannot write in this directory", errno);
  ::close(fd);
  ::unlink(buf.data());
}
} // namespace

void prepare_output_paths(const std::vector<std::string> &dirs, const std::vector<std::string> &files,
                          const std::vector<std::string> &inputs) {
  // What each output path names decides how it is written (isa::output_target: a FIFO, socket, block device
  // or directory is refused now, before the run); a character device is written in place and never probed.
  std::vector<isa::OutputTarget> targets;
  for (const auto &f : files)
    targets.push_back(isa::output_target(f));
  std::vector<std::pair<std::string, std::optional<std::pair<dev_t, ino_t>>>> ins;
  for (const auto &in : inputs) ins.emplace_back(canonical_or_same(in), file_id(in));
  std::map<std::string, std::string> outs;  // canonical -> as given
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string &f = files[i];
    if (targets[i].kind == isa::OutputTarget::Kind::CharDevice)
      continue; // /dev/null twice discards twice
    const std::string c = canonical_or_same(f);
    const auto id = file_id(f);
    for (size_t k = 0; k < ins.size(); ++k)
      if (c == ins[k].first || (id && ins[k].second && *id == *ins[k].second))
        throw InputError({f, -1, "", ""}, "an output would overwrite the input file " + inputs[k] +
                                              " (choose another output path)");
    if (auto it = outs.find(c); it != outs.end())
      throw InputError({f, -1, "", ""}, "two outputs name the same file (" + it->second + ")");
    outs[c] = f;
  }
  for (const auto &d : dirs) {
    make_dirs(d, "output directory");
    probe_writable(d);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (targets[i].kind == isa::OutputTarget::Kind::CharDevice)
      continue;
    const std::string &f = files[i];
    std::error_code ec;
    // An output file's directory must exist (a misspelt directory is refused, not created); the temporary is
    // made next to the file a symbolic link names.
    std::string parent = fs::path(targets[i].path).parent_path().string();
    if (parent.empty()) parent = ".";
    if (!fs::exists(parent, ec)) throw InputError({f, -1, "", ""}, "its directory " + parent + " does not exist");
    if (!fs::is_directory(parent, ec)) throw InputError({f, -1, "", ""}, parent + " is not a directory");
    probe_writable(parent);
  }
}

void check_tolerances(double rtol, double atol, const std::string &source) {
  for (const auto &[name, v] : {std::pair<const char *, double>{"rtol", rtol}, {"atol", atol}})
    if (!std::isfinite(v) || v < 0)
      throw InputError({source, -1, "", name}, std::string(name) + " must be a finite number >= 0, got " +
                                                    std::to_string(v));
}

std::vector<float> tensor_f32(const isa::Program &p, const engines::Memory &mem, int tensor) {
  const auto &t = p.tensors[tensor];
  std::vector<float> out(static_cast<size_t>(t.num_elements()));
  engines::load_f32(t.dtype, mem.dram(tensor).data(), out.data(), t.num_elements());
  return out;
}

std::optional<Mismatch> compare_output(const isa::Program &p, const engines::Memory &mem, int tensor,
                                       const NpyArray &want, double rtol, double atol, const std::string &source) {
  const isa::Tensor &t = p.tensors.at(static_cast<size_t>(tensor));
  check_array(t, want.shape, want.dtype, source, "expected");
  // The expected values are widened to fp32 a block at a time, next to the tensor's: a raw-bits container holds
  // the tensor's own encoding; any other dtype is read as itself (float32, float16, integers).
  isa::Dtype wd = want.dtype;
  if (wd != t.dtype && isa::dtype_size(wd) == isa::dtype_size(t.dtype) && !isa::dtype_is_float(wd) &&
      isa::dtype_is_float(t.dtype))
    wd = t.dtype;
  const int64_t n = t.num_elements();
  const uint8_t *src = mem.dram(tensor).data(), *wsrc = want.data.data();
  const int esz = isa::dtype_size(t.dtype), wsz = isa::dtype_size(wd);
  constexpr int64_t kBlock = 1 << 16;
  std::vector<float> got(static_cast<size_t>(std::min(n, kBlock))), exp(got.size());
  double worst = 0, worst_got = 0, worst_want = 0;
  int64_t worst_i = -1;
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int64_t m = std::min(kBlock, n - b0);
    engines::load_f32(t.dtype, src + b0 * esz, got.data(), m);
    engines::load_f32(wd, wsrc + b0 * wsz, exp.data(), m);
    for (int64_t k = 0; k < m; ++k) {
      const double g = got[static_cast<size_t>(k)], e = exp[static_cast<size_t>(k)];
      if (std::isnan(g) && std::isnan(e)) continue;
      const double err = std::fabs(g - e);
      const double excess = std::isnan(err) ? INFINITY : err - (atol + rtol * std::fabs(e));
      if (excess > 0 && (worst_i < 0 || excess > worst)) worst = excess, worst_i = b0 + k, worst_got = g, worst_want = e;
    }
  }
  if (worst_i < 0) return std::nullopt;
  return Mismatch{t.name, worst_i, worst_got, worst_want, ""};
}

std::vector<std::string> expected_files(const isa::Program &p, const std::string &dir) {
  std::vector<std::string> files;
  if (dir.empty()) return files;
  for (const auto &t : p.tensors)
    if (t.is_output()) {
      std::error_code ec;
      std::string name;
      try {
        name = tensor_file_name(t.name);
      } catch (const InputError &) {
        continue;  // output_files reports it
      }
      const fs::path f = fs::path(dir) / name;
      if (fs::exists(f, ec)) files.push_back(f.string());
    }
  return files;
}

void check_expected_files(const isa::Program &p, const std::string &dir) {
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return;  // compare_outputs reports a missing directory
  for (const auto &[i, file] : output_files(p, dir)) {
    if (!fs::exists(file, ec)) continue;  // a missing expected file is a mismatch, not an input error
    const NpyArray head = read_npy_header(file);
    check_array(p.tensors[static_cast<size_t>(i)], head.shape, head.dtype, file, "expected");
  }
}

std::vector<Mismatch> compare_outputs(const isa::Program &p, const engines::Memory &mem, const std::string &dir,
                                      double rtol, double atol, std::vector<std::string> *checked) {
  std::vector<Mismatch> bad;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError({dir, -1, "", "--expect"}, fs::exists(dir, ec) ? "not a directory" : "no such directory");
  for (const auto &[i, file] : output_files(p, dir)) {
    const auto &t = p.tensors[static_cast<size_t>(i)];
    if (!fs::exists(file, ec)) {
      bad.push_back(Mismatch{t.name, -1, 0, 0, "no expected file " + file});
      continue;
    }
    const NpyArray want = read_npy(file, npy_bound(t));
    if (checked) checked->push_back(t.name);
    if (auto m = compare_output(p, mem, i, want, rtol, atol, file)) bad.push_back(*m);
  }
  return bad;
}

void check_expected(const isa::Program &p, const ExpectSpec &e) {
  if (!e.dir.empty()) check_expected_files(p, e.dir);
  for (const auto &[name, array] : e.arrays) {
    const std::string source = array_source("expect", name);
    const int t = output_tensor(p, name, source);
    check_array(p.tensors[static_cast<size_t>(t)], array.shape, array.dtype, source, "expected");
  }
}

std::vector<Mismatch> compare_outputs(const isa::Program &p, const engines::Memory &mem, const ExpectSpec &e,
                                      double rtol, double atol, std::vector<std::string> *checked) {
  if (!e.dir.empty()) return compare_outputs(p, mem, e.dir, rtol, atol, checked);
  std::vector<Mismatch> bad;
  std::map<int, std::pair<std::string, const NpyArray *>> by_tensor;  // in tensor order, as for a folder
  for (const auto &[name, array] : e.arrays) {
    const std::string source = array_source("expect", name);
    by_tensor[output_tensor(p, name, source)] = {source, &array};
  }
  for (const auto &[i, want] : by_tensor) {
    if (checked) checked->push_back(p.tensors[static_cast<size_t>(i)].name);
    if (auto m = compare_output(p, mem, i, *want.second, rtol, atol, want.first)) bad.push_back(*m);
  }
  return bad;
}

} // namespace neuronsim::sim
