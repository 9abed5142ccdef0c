// The .npy arrays of io/npy.cpp as tensor bytes and fp32 values: the conversions that apply the engines' rounding
// rules (engines/dtype.cpp), so they live in the engines layer, above the .npy format itself (io/npy.hpp).
#include "neuronsim/engines/npy_dtype.hpp"

#include <cstring>
#include <limits>

#include "neuronsim/engines/dtype.hpp"
#include "neuronsim/error.hpp"

namespace neuronsim::engines {

using io::NpyArray;
using io::npy_shape_str;
using isa::Dtype;

namespace {

bool is_raw_u8_float(Dtype d) {
  return d == Dtype::float8e3 || d == Dtype::float8e4 || d == Dtype::float8e5 || d == Dtype::float8_e4m3fn ||
         d == Dtype::float8_e8m0fnu;
}
bool is_int(Dtype d) { return !isa::dtype_is_float(d); }

template <typename T> bool ints_fit(const uint8_t *p, int64_t n, int64_t lo, uint64_t hi) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * int64_t(sizeof(T)), sizeof(T));
    if (std::numeric_limits<T>::is_signed) {
      if (int64_t(v) < lo || (int64_t(v) >= 0 && uint64_t(int64_t(v)) > hi)) return false;
    } else if (uint64_t(v) > hi) {
      return false;
    }
  }
  return true;
}
template <typename T> int64_t int_at(const uint8_t *p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * int64_t(sizeof(T)), sizeof(T));
  return int64_t(v);  // uint64 above INT64_MAX wraps; only reached after the range check below
}
template <typename T> void int_put(uint8_t *p, int64_t i, int64_t v) {
  T t = T(v);
  std::memcpy(p + i * int64_t(sizeof(T)), &t, sizeof(T));
}

// Integer -> integer with an exact range check (no wrap, no saturate: a value that does not fit is an input
// error, because silently changing a user's integer data would hide a mistake).
std::vector<uint8_t> convert_ints(const NpyArray &a, Dtype target, const std::string &file) {
  const int64_t n = a.numel();
  int64_t lo;
  uint64_t hi;
  switch (target) {
  case Dtype::uint8: lo = 0, hi = 0xff; break;
  case Dtype::int8: lo = -128, hi = 127; break;
  case Dtype::uint16: lo = 0, hi = 0xffff; break;
  case Dtype::int16: lo = -32768, hi = 32767; break;
  case Dtype::uint32: lo = 0, hi = 0xffffffffull; break;
  case Dtype::int32: lo = INT32_MIN, hi = INT32_MAX; break;
  case Dtype::uint64: lo = 0, hi = UINT64_MAX; break;
  default: lo = INT64_MIN, hi = uint64_t(INT64_MAX); break;
  }
  const uint8_t *p = a.data.data();
  bool ok;
  switch (a.dtype) {
  case Dtype::uint8: ok = ints_fit<uint8_t>(p, n, lo, hi); break;
  case Dtype::int8: ok = ints_fit<int8_t>(p, n, lo, hi); break;
  case Dtype::uint16: ok = ints_fit<uint16_t>(p, n, lo, hi); break;
  case Dtype::int16: ok = ints_fit<int16_t>(p, n, lo, hi); break;
  case Dtype::uint32: ok = ints_fit<uint32_t>(p, n, lo, hi); break;
  case Dtype::int32: ok = ints_fit<int32_t>(p, n, lo, hi); break;
  case Dtype::uint64: ok = ints_fit<uint64_t>(p, n, lo, hi); break;
  default: ok = ints_fit<int64_t>(p, n, lo, hi); break;
  }
  if (!ok)
    throw InputError(ErrorContext::of_file(file), std::string("integer values do not fit the tensor dtype ") + isa::enum_name(target) + " (file dtype " +
                   isa::enum_name(a.dtype) + ")");
  std::vector<uint8_t> out(size_t(n) * size_t(isa::dtype_size(target)));
  for (int64_t i = 0; i < n; ++i) {
    int64_t v;
    switch (a.dtype) {
    case Dtype::uint8: v = int_at<uint8_t>(p, i); break;
    case Dtype::int8: v = int_at<int8_t>(p, i); break;
    case Dtype::uint16: v = int_at<uint16_t>(p, i); break;
    case Dtype::int16: v = int_at<int16_t>(p, i); break;
    case Dtype::uint32: v = int_at<uint32_t>(p, i); break;
    case Dtype::int32: v = int_at<int32_t>(p, i); break;
    case Dtype::uint64: v = int_at<uint64_t>(p, i); break;
    default: v = int_at<int64_t>(p, i); break;
    }
    switch (target) {
    case Dtype::uint8: int_put<uint8_t>(out.data(), i, v); break;
    case Dtype::int8: int_put<int8_t>(out.data(), i, v); break;
    case Dtype::uint16: int_put<uint16_t>(out.data(), i, v); break;
    case Dtype::int16: int_put<int16_t>(out.data(), i, v); break;
    case Dtype::uint32: int_put<uint32_t>(out.data(), i, v); break;
    case Dtype::int32: int_put<int32_t>(out.data(), i, v); break;
    case Dtype::uint64: int_put<uint64_t>(out.data(), i, v); break;
    default: int_put<int64_t>(out.data(), i, v); break;
    }
  }
  return out;
}

}  // namespace

NpyArray npy_from_f32(const std::vector<float> &values, const std::vector<int64_t> &shape, Dtype d) {
  NpyArray a;
  a.dtype = d;
  a.shape = shape;
  if (a.numel() != int64_t(values.size()))
    throw InputError({}, "npy_from_f32: " + std::to_string(values.size()) + " values for shape " + npy_shape_str(shape));
  a.data.resize(values.size() * size_t(isa::dtype_size(d)));
  if (!values.empty()) store_f32(d, values.data(), a.data.data(), int64_t(values.size()));
  return a;
}

std::vector<float> npy_to_f32(const NpyArray &a) {
  std::vector<float> out(size_t(a.numel()));
  // An empty array (a 0 in its shape) has no data pointer: memcpy(nullptr, ...) is undefined even for 0 bytes.
  if (!out.empty()) load_f32(a.dtype, a.data.data(), out.data(), a.numel());
  return out;
}

std::vector<uint8_t> npy_to_dtype(const NpyArray &a, Dtype target, const std::string &file) {
  const int64_t n = a.numel();
  if (a.data.size() != size_t(n) * size_t(isa::dtype_size(a.dtype)))
    throw InputError(ErrorContext::of_file(file), "array data size does not match its shape " + npy_shape_str(a.shape));
  if (a.dtype == target) return a.data;
  // Raw-bit containers for the dtypes NumPy lacks.
  if ((target == Dtype::bfloat16 && a.dtype == Dtype::uint16) || (is_raw_u8_float(target) && a.dtype == Dtype::uint8) ||
      (target == Dtype::float32r && a.dtype == Dtype::float32) ||
      (target == Dtype::float4_e2m1fn_x4 && a.dtype == Dtype::uint16) ||
      ((target == Dtype::float8_e4m3fn_x4 || target == Dtype::float8_e5m2_x4) && a.dtype == Dtype::uint32))
    return a.data;
  // Float file -> float tensor: through fp32 with the engines' store rounding (RNE; fp8 overflow per dtype.cpp).
  if ((a.dtype == Dtype::float32 || a.dtype == Dtype::float16) && isa::dtype_is_float(target) &&
      dtype_supported(target) && target != Dtype::float8_e8m0fnu) {
    std::vector<float> f = npy_to_f32(a);
    std::vector<uint8_t> out(size_t(n) * size_t(isa::dtype_size(target)));
    if (n > 0) store_f32(target, f.data(), out.data(), n);  // (empty: no data pointers, see npy_to_f32)
    return out;
  }
  if (is_int(a.dtype) && is_int(target)) return convert_ints(a, target, file);
  throw InputError(ErrorContext::of_file(file), std::string("a .npy array of dtype ") + isa::enum_name(a.dtype) + " (" + io::npy_descr(a.dtype) +
                 ") cannot be loaded into a " + isa::enum_name(target) + " tensor" +
                 (target == Dtype::bfloat16 ? " (bfloat16 takes <f4, <f2 or raw bits as <u2)"
                  : is_raw_u8_float(target) ? " (8-bit floats take <f4, <f2 or raw bits as |u1)"
                                            : ""));
}

}  // namespace neuronsim::engines
