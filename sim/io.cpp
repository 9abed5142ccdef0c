#include "neuronsim/sim/io.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "neuronsim/engines/dtype.hpp"
#include "neuronsim/sim/npy.hpp"

namespace neuronsim::sim {

namespace fs = std::filesystem;

namespace {

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The values are drawn in order and converted a block at a time: the same bytes as drawing them all first,
// without an fp32 copy of the whole tensor (256 MiB for the full-size matmul's rhs, which put the run's peak RSS
// above its DRAM + SBUF + PSUM by 1.9x).
void generate(const isa::Tensor &t, std::vector<uint8_t> &bytes) {
  std::mt19937_64 rng(fnv1a(t.name));
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

std::vector<std::string> load_inputs(const isa::Program &p, engines::Memory &mem, const InputSpec &spec) {
  std::vector<std::string> lines;
  for (const auto &[name, file] : spec.files)
    if (p.find_tensor(name) < 0 || !p.tensors[p.find_tensor(name)].is_input())
      throw InputError({file, -1, "", "--input"}, "the kernel has no input tensor named '" + name + "'");
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const auto &t = p.tensors[i];
    if (!t.is_input() || !t.is_dram()) continue;
    std::string file;
    if (auto it = spec.files.find(t.name); it != spec.files.end()) file = it->second;
    else if (!spec.dir.empty() && fs::exists(fs::path(spec.dir) / (t.name + ".npy")))
      file = (fs::path(spec.dir) / (t.name + ".npy")).string();
    auto &bytes = mem.dram(static_cast<int>(i));
    if (file.empty()) {
      generate(t, bytes);
      lines.push_back(t.name + ": generated (deterministic, seeded by name)");
      continue;
    }
    NpyArray a = read_npy(file);
    int64_t count = 1;
    for (auto s : a.shape) count *= s;
    if (count != t.num_elements()) {
      std::string want, got;
      for (auto s : t.shape) want += (want.empty() ? "" : "x") + std::to_string(s);
      for (auto s : a.shape) got += (got.empty() ? "" : "x") + std::to_string(s);
      throw InputError({file, -1, "", "shape"}, "input '" + t.name + "' has shape " + got + ", the kernel declares " + want);
    }
    if (a.dtype == t.dtype && a.data.size() <= bytes.size()) {
      std::copy(a.data.begin(), a.data.end(), bytes.begin());  // same dtype: no converted copy
    } else {
      std::vector<uint8_t> data = npy_to_dtype(a, t.dtype, file);
      std::copy(data.begin(), data.end(), bytes.begin());
    }
    lines.push_back(t.name + ": " + file);
  }
  return lines;
}

std::vector<std::string> write_outputs(const isa::Program &p, const engines::Memory &mem, const std::string &outdir) {
  std::vector<std::string> written;
  fs::create_directories(outdir);
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const auto &t = p.tensors[i];
    if (!t.is_output()) continue;
    NpyArray a;
    a.dtype = t.dtype;
    a.shape = t.shape;
    const auto &bytes = mem.dram(static_cast<int>(i));
    const size_t n = static_cast<size_t>(t.num_elements() * isa::dtype_size(t.dtype));
    std::string path = (fs::path(outdir) / (t.name + ".npy")).string();
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
      write_npy(path, a);
    }
    written.push_back(path);
  }
  return written;
}

std::vector<float> tensor_f32(const isa::Program &p, const engines::Memory &mem, int tensor) {
  const auto &t = p.tensors[tensor];
  std::vector<float> out(static_cast<size_t>(t.num_elements()));
  engines::load_f32(t.dtype, mem.dram(tensor).data(), out.data(), t.num_elements());
  return out;
}

std::vector<Mismatch> compare_outputs(const isa::Program &p, const engines::Memory &mem, const std::string &dir,
                                      double rtol, double atol, std::vector<std::string> *checked) {
  std::vector<Mismatch> bad;
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const auto &t = p.tensors[i];
    if (!t.is_output()) continue;
    const std::string file = (fs::path(dir) / (t.name + ".npy")).string();
    if (!fs::exists(file)) {
      bad.push_back(Mismatch{t.name, -1, 0, 0, "no expected file " + file});
      continue;
    }
    // The expected file as fp32 (read in place when it already is), the tensor converted a block at a time: a
    // comparison holds one extra copy of the expected data, not three.
    NpyArray want = read_npy(file);
    std::vector<uint8_t> converted;
    if (want.dtype != isa::Dtype::float32) converted = npy_to_dtype(want, isa::Dtype::float32, file);
    const std::vector<uint8_t> &wbytes = want.dtype == isa::Dtype::float32 ? want.data : converted;
    const int64_t n = t.num_elements();
    if (static_cast<int64_t>(wbytes.size()) != n * 4) {
      bad.push_back(Mismatch{t.name, -1, 0, 0, "expected " + file + " has a different element count"});
      continue;
    }
    const float *w = reinterpret_cast<const float *>(wbytes.data());
    const uint8_t *src = mem.dram(static_cast<int>(i)).data();
    const int esz = isa::dtype_size(t.dtype);
    constexpr int64_t kBlock = 1 << 16;
    std::vector<float> got(static_cast<size_t>(std::min(n, kBlock)));
    double worst = 0, worst_got = 0;
    int64_t worst_i = -1;
    for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
      const int64_t m = std::min(kBlock, n - b0);
      engines::load_f32(t.dtype, src + b0 * esz, got.data(), m);
      for (int64_t k = 0; k < m; ++k) {
        const double g = got[static_cast<size_t>(k)], e = w[b0 + k];
        if (std::isnan(g) && std::isnan(e)) continue;
        const double err = std::fabs(g - e);
        const double excess = std::isnan(err) ? INFINITY : err - (atol + rtol * std::fabs(e));
        if (excess > 0 && (worst_i < 0 || excess > worst)) worst = excess, worst_i = b0 + k, worst_got = g;
      }
    }
    if (checked) checked->push_back(t.name);
    if (worst_i >= 0)
      bad.push_back(Mismatch{t.name, worst_i, worst_got, w[worst_i], ""});
  }
  return bad;
}

} // namespace neuronsim::sim
