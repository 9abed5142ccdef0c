// The sanitizer's words (sim/sanitizer.hpp): the regions of its findings as numpy slices over the tensor's logical
// shape (or over the NKI tile's, when the front end says which tile a tensor holds), the messages, the stats JSON.
#include <algorithm>
#include <sstream>

#include "sim/sanitizer_core.hpp"

namespace neuronsim::sim {

namespace sanitizer_detail {

std::vector<int64_t> region_coords(const std::vector<int64_t> &shape, int64_t x) {
  std::vector<int64_t> c(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = shape[d] > 0 ? x % shape[d] : 0;
    x = shape[d] > 0 ? x / shape[d] : 0;
  }
  return c;
}

// Adds the elements [a, b] of a row-major space of `shape` to the bounding box over region dims `dims` (one per
// dim of shape). Exact: up to the first dim where a's and b's coordinates differ the box is theirs, that dim spans
// from a's to b's, and every inner dim is whole (the elements between include both a 0 and a last index there).
void region_add_range(Region &r, const std::vector<int64_t> &shape, const std::vector<size_t> &dims, int64_t a,
                      int64_t b) {
  const std::vector<int64_t> ca = region_coords(shape, a), cb = region_coords(shape, b);
  bool split = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    const size_t k = dims[d];
    int64_t lo = ca[d], hi = cb[d];
    if (split) lo = 0, hi = shape[d] - 1;
    else if (ca[d] != cb[d]) split = true;
    r.lo[k] = std::min(r.lo[k], lo);
    r.hi[k] = std::max(r.hi[k], hi);
  }
  r.any = true;
}

} // namespace sanitizer_detail

void Sanitizer::init_region(Region &r, const isa::Tensor &t) {
  if (!t.is_dram() && t.nki && !t.nki->shape.empty()) r.shape = t.nki->shape;
  else r.shape = t.shape.empty() ? std::vector<int64_t>{t.num_elements()} : t.shape;
  r.lo.assign(r.shape.size(), INT64_MAX);
  r.hi.assign(r.shape.size(), INT64_MIN);
  r.any = false;
}

// The tensor's elements [first, last] (its logical row-major layout, in its dtype) into the region.
void Sanitizer::add_elements(Region &r, const isa::Tensor &t, int64_t first, int64_t last) const {
  if (first > last) return;
  std::vector<size_t> all(r.shape.size());
  for (size_t d = 0; d < all.size(); ++d) all[d] = d;
  const isa::NkiTile *tile = !t.is_dram() && t.nki && !t.nki->shape.empty() ? t.nki.get() : nullptr;
  if (!tile) {
    sanitizer_detail::region_add_range(r, r.shape, all, first, last);
    return;
  }
  // The front end's tensor is `buffers` copies of the tile side by side (cols elements of each partition each):
  // column c of partition p is element c % cols of the tile's free elements in buffer c / cols.
  const int64_t F = std::max<int64_t>(1, t.bytes_per_partition / std::max<int64_t>(1, isa::dtype_size(t.dtype)));
  const int64_t cols = tile->cols > 0 ? tile->cols : F;
  std::vector<int64_t> free_shape;
  std::vector<size_t> free_dims;
  for (size_t d = 0; d < tile->shape.size(); ++d)
    if (static_cast<int>(d) != tile->pdim) free_shape.push_back(tile->shape[d]), free_dims.push_back(d);
  int64_t row = 1;
  for (int64_t s : free_shape) row *= s;
  for (int64_t x = first; x <= last;) {
    const int64_t p = x / F, c = x % F;
    const int64_t end = std::min(last, p * F + F - 1);  // this partition's part
    for (int64_t c0 = c; c0 <= end - p * F;) {
      const int64_t f0 = c0 % cols, c1 = std::min(end - p * F, c0 - f0 + cols - 1);
      const int64_t a = f0, b = std::min(row - 1, f0 + (c1 - c0));
      if (a <= b) {
        const size_t pd = static_cast<size_t>(tile->pdim);
        r.lo[pd] = std::min(r.lo[pd], p);
        r.hi[pd] = std::max(r.hi[pd], p);
        if (free_shape.empty()) r.any = true;
        else sanitizer_detail::region_add_range(r, free_shape, free_dims, a, b);
      }
      c0 = c1 + 1;
    }
    x = end + 1;
  }
}

// Granules [g0, g1) of span s (one partition on chip), as elements of tensor `tensor`, into the region.
void Sanitizer::add_span(Region &r, const CoreState &c, int tensor, const Span &s, int64_t g0, int64_t g1) const {
  const isa::Tensor &t = c.prog->tensors[static_cast<size_t>(tensor)];
  const int64_t esz = std::max<int64_t>(1, isa::dtype_size(t.dtype)), G = s.sh->granule;
  if (t.is_dram()) {
    add_elements(r, t, g0 * G / esz, (g1 * G - 1) / esz);
    return;
  }
  const int64_t cap = t.mem == isa::MemoryType::PSUM ? c.psum_cap : c.sbuf_cap;
  const int64_t p = s.p - c.mem->placed_partition(tensor);
  const int64_t base = s.p * cap + c.mem->placed_addr(tensor);
  const int64_t b0 = std::max<int64_t>(0, g0 * G - base), b1 = std::min(t.bytes_per_partition, g1 * G - base);
  if (p < 0 || p >= t.partitions || b1 <= b0) return;
  const int64_t F = t.bytes_per_partition / esz;
  add_elements(r, t, p * F + b0 / esz, p * F + (b1 - 1) / esz);
}

std::string Sanitizer::region_text(const Region &r) {
  if (!r.any) return "";
  std::string s = "[";
  for (size_t d = 0; d < r.shape.size(); ++d) {
    const int64_t lo = r.lo[d] == INT64_MAX ? 0 : r.lo[d], hi = r.hi[d] == INT64_MIN ? r.shape[d] - 1 : r.hi[d];
    s += (d ? ", " : "") + std::to_string(lo) + ":" + std::to_string(hi + 1);
  }
  return s + "]";
}

namespace sanitizer_detail {

namespace {
std::string who(const SanitizerAccess &a) {
  std::string s = a.instruction + " (" + a.opcode + ")";
  if (!a.file.empty() || a.line >= 0)
    s += " at " + (a.file.empty() ? "line " + std::to_string(a.line)
                                  : a.file + (a.line >= 0 ? ":" + std::to_string(a.line) : ""));
  return s;
}
std::string where(const SanitizerAccess &a, bool cores) {
  return "on " + a.queue + (cores ? " of core " + std::to_string(a.core) : "");
}
} // namespace

std::string message_of(const Finding &f, const Pending &p) {
  const std::string &var = p.var, &loop = p.loop;
  const SanitizerAccess &a = f.first;
  std::ostringstream m;
  if (f.kind == "uninitialized-read") {
    m << who(a) << " reads " << a.tensor << a.range << ", which nothing wrote since the run started";
    return m.str();
  }
  if (!f.other) return who(a);
  const SanitizerAccess &b = *f.other;
  if (f.kind == "loop-carried-dependency") {
    // "trip 1 (i = 3)": the trip's number from 0 and the loop variable's value in it.
    auto trip = [&](const SanitizerAccess &x) {
      if (!x.trip) return std::string("a trip");
      return "trip " + std::to_string(*x.trip) +
             (var.empty() ? std::string() : " (" + var + " = " + std::to_string(p.start + *x.trip * p.step) + ")");
    };
    m << who(a) << (a.write ? " writes " : " reads ") << a.tensor << a.range << " in " << trip(a) << " of " << loop
      << ", and " << who(b) << (b.write ? " wrote " : " read ") << (b.tensor == a.tensor ? "it" : b.tensor + b.range)
      << " in " << trip(b)
      << ": the trips of an nl.affine_range may run in any order or overlap; use nl.sequential_range for a loop "
         "whose trips depend on each other";
    return m.str();
  }
  const bool cores = a.core != b.core;
  m << who(a) << " " << where(a, cores) << (a.write ? " writes " : " reads ") << a.tensor << a.range << " and "
    << who(b) << " " << where(b, cores) << (b.write ? " writes " : " reads ")
    << (b.tensor == a.tensor ? "it" : b.tensor + b.range)
    << " with nothing ordering them (no semaphore wait, DMA completion, barrier or collective between them)";
  return m.str();
}

} // namespace sanitizer_detail

nlohmann::json findings_json(const std::vector<Finding> &findings) {
  auto access = [](const SanitizerAccess &a) {
    nlohmann::json j;
    j["instruction"] = a.instruction;
    j["opcode"] = a.opcode;
    j["file"] = a.file.empty() ? nlohmann::json() : nlohmann::json(a.file);
    j["line"] = a.line >= 0 ? nlohmann::json(a.line) : nlohmann::json();
    j["tensor"] = a.tensor.empty() ? nlohmann::json() : nlohmann::json(a.tensor);
    j["range"] = a.range.empty() ? nlohmann::json() : nlohmann::json(a.range);
    j["core"] = a.core;
    j["trip"] = a.trip ? nlohmann::json(*a.trip) : nlohmann::json();
    return j;
  };
  nlohmann::json out = nlohmann::json::array();
  for (const auto &f : findings) {
    nlohmann::json j;
    j["kind"] = f.kind;
    nlohmann::json first = access(f.first);
    for (auto it = first.begin(); it != first.end(); ++it) j[it.key()] = it.value();
    j["other"] = f.other ? access(*f.other) : nlohmann::json();
    out.push_back(j);
  }
  return out;
}

} // namespace neuronsim::sim
