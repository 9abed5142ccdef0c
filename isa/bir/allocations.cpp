// A function's allocations: a memory_location_set (the compiler's form: name, kind, dtype, tensor_shape and
// one memory location) or a bare memory_location becomes a Tensor; registers hold no tensor data and are
// skipped (reference bir-json.md 1.4-1.5, neuronx-cc/bir/value-model.md).
#include "isa/bir/reader.hpp"

namespace neuronsim::isa::bir {

void Reader::read_allocation(const json &al, const std::string &field) {
  as_obj(al, field);
  std::string skind = "memory_location_set";
  if (const json *s = get(al, "Skind"))
    skind = as_str(*s, field + ".Skind");
  // Registers are function-level storages referenced by name (reference neuronx-cc/bir/value-model.md); they
  // hold no tensor data.
  if (skind == "register")
    return;
  Tensor t;
  const json *loc = &al;
  warn_unknown_level_keys(al, skind == "memory_location_set" ? "allocation" : "memory_location", field);
  if (skind == "memory_location_set") {
    t.set_name = as_str(need(al, "name", field + ".name"), field + ".name");
    const json &locs =
        as_arr(need(al, "memorylocations", field + ".memorylocations"), field + ".memorylocations");
    if (locs.empty())
      fail(field + ".memorylocations", "an allocation needs one memory location");
    loc = &as_obj(locs[0], field + ".memorylocations[0]");
    warn_unknown_level_keys(*loc, "memory_location", field + ".memorylocations[0]");
    if (const json *k = get(al, "kind"))
      t.kind = parse_enum<TensorKind>(as_str(*k, field + ".kind"), ctx(field + ".kind"));
    if (const json *d = get(al, "dtype"))
      t.dtype = parse_dtype(as_str(*d, field + ".dtype"), ctx(field + ".dtype"));
    if (const json *s = get(al, "tensor_shape"))
      t.shape = as_int_list(*s, field + ".tensor_shape");
    if (const json *io = get(al, "inout"))
      t.inout = as_bool(*io, field + ".inout");
    if (const json *dbg = get(al, "debug"))
      if (const json *nki = get(*dbg, "nki")) t.nki = read_nki_tile(*nki, field + ".debug.nki");
  } else if (skind != "memory_location") {
    fail(field + ".Skind", "unknown storage kind '" + skind + "'");
  }
  std::string lf = loc == &al ? field : field + ".memorylocations[0]";
  t.name = as_str(need(*loc, "name", lf + ".name"), lf + ".name");
  if (t.set_name.empty())
    t.set_name = t.name + "_set";
  MemoryType mt = MemoryType::Unallocated;
  if (const json *ty = get(*loc, "type"))
    mt = parse_enum<MemoryType>(as_str(*ty, lf + ".type"), ctx(lf + ".type"));
  // Input/Output/Unallocated locations live in DRAM (reference bir-json.md 1.5: KLR's Input/Output = the
  // compiler's DRAM).
  t.mem = (mt == MemoryType::Input || mt == MemoryType::Output || mt == MemoryType::Unallocated)
              ? MemoryType::DRAM
              : mt;
  std::vector<int64_t> dims;
  if (const json *d = get(*loc, "dims"))
    dims = as_int_list(*d, lf + ".dims");
  for (auto d : dims)
    if (d < 0)
      fail(lf + ".dims", "negative dimension");
  if (const json *v = get(*loc, "addr"))
    t.addr = as_int(*v, lf + ".addr");
  if (const json *v = get(*loc, "base"))
    t.base_partition = as_int(*v, lf + ".base");
  if (const json *v = get(*loc, "bank"))
    t.bank = as_int(*v, lf + ".bank");
  if (const json *v = get(*loc, "allocated"))
    t.allocated = as_bool(*v, lf + ".allocated");
  const int64_t esize = dtype_size(t.dtype);
  // dims = [partitions, bytes per partition...] (reference bir-json.md 1.5); the product of dims[1..] is the
  // partition size.
  if (!dims.empty()) {
    t.partitions = dims[0];
    t.bytes_per_partition = 1;
    for (size_t i = 1; i < dims.size(); ++i)
      t.bytes_per_partition = mul(t.bytes_per_partition, dims[i], lf + ".dims");
    if (dims.size() == 1)
      t.bytes_per_partition = esize;
  }
  if (t.shape.empty()) {
    if (dims.empty())
      fail(field, "allocation '" + t.set_name + "' has neither tensor_shape nor dims");
    if (esize <= 0 || t.bytes_per_partition % esize != 0)
      fail(lf + ".dims", "bytes per partition " + std::to_string(t.bytes_per_partition) +
                             " is not a multiple of the dtype size");
    t.shape = {t.partitions, t.bytes_per_partition / esize};
  } else if (dims.empty()) {
    t.partitions = t.shape[0];
    int64_t n = 1;
    for (size_t i = 1; i < t.shape.size(); ++i)
      n = mul(n, t.shape[i], field + ".tensor_shape");
    t.bytes_per_partition = mul(n, esize, field + ".tensor_shape");
  }
  for (auto s : t.shape)
    if (s < 0)
      fail(field + ".tensor_shape", "negative dimension");
  // The tensor's byte size must be a 64-bit number (every later size computation relies on it).
  int64_t elems = 1, bytes = 0;
  for (auto s : t.shape)
    if (__builtin_mul_overflow(elems, s, &elems))
      fail(field + ".tensor_shape", "the element count overflows 64 bits");
  if (__builtin_mul_overflow(elems, esize, &bytes))
    fail(field + ".tensor_shape", "the byte size overflows 64 bits");
  // tensor_shape (with the dtype) and the memory location's dims describe the same bytes; when they disagree
  // the tensor would be read or written as one and placed as the other (an output truncated to its dims, an
  // input refused for a shape the dims do not hold), so neither is guessed.
  if (!dims.empty() && skind == "memory_location_set" && get(al, "tensor_shape")) {
    int64_t free = 1;
    for (size_t i = 1; i < t.shape.size(); ++i)
      free = mul(free, t.shape[i], field + ".tensor_shape");
    const int64_t want_bpp = mul(free, esize, field + ".tensor_shape");
    const int64_t want_p = t.shape.empty() ? 1 : t.shape[0];
    if (want_p != t.partitions || (dims.size() > 1 && want_bpp != t.bytes_per_partition)) {
      auto list = [](const std::vector<int64_t> &v) {
        std::string r = "[";
        for (size_t i = 0; i < v.size(); ++i)
          r += (i ? ", " : "") + std::to_string(v[i]);
        return r + "]";
      };
      fail(lf + ".dims", "tensor '" + t.name + "' is declared " + list(t.shape) + " " + enum_name(t.dtype) +
                             " (" + std::to_string(want_p) + " partitions x " + std::to_string(want_bpp) +
                             " bytes), but its memory location's dims are " + list(dims) + " (" +
                             std::to_string(t.partitions) + " partitions x " +
                             std::to_string(t.bytes_per_partition) +
                             " bytes): tensor_shape and dims must describe the same tensor");
    }
  }
  if (p_.find_tensor(t.name) >= 0 || p_.find_tensor(t.set_name) >= 0)
    fail(field + ".name", "duplicate allocation '" + t.set_name + "'");
  p_.tensors.push_back(std::move(t));
}

} // namespace neuronsim::isa::bir
