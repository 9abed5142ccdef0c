// numpy's bfloat16 and fp8 dtypes when ml_dtypes is not installed (docs/nki-lowering.md "bfloat16 and fp8 arrays"):
// the entry points python/neuronsim/nki/dtypes.py calls, only when `import ml_dtypes` fails, so that one process never
// has two numpy dtypes of one name; and the four formats' traits, whose conversions are the simulator's own
// (engines/dtype.cpp). The shared registration machinery is python/float_dtype_scalar.hpp and
// python/float_dtype_numpy.hpp; bf16_dtype.cpp and fp8_dtypes.cpp instantiate it.
#pragma once

#include <cstdint>

#include <pybind11/pybind11.h>

#include "neuronsim/engines/dtype.hpp"

namespace neuronsim::python {

// The scalar type neuronsim.bfloat16 (np.dtype(it) is the dtype), registered with numpy on the first call.
pybind11::object bfloat16_type();

// {"float8_e4m3": neuronsim.float8_e4m3, "float8_e5m2": ..., "float8_e4m3fn": ...}, the fp8 scalar types, registered
// with numpy on the first call (bfloat16 too, and the casts between all four).
pybind11::dict float8_types();

namespace float_dtype {

// bfloat16: 1 sign, 8 exponent, 7 mantissa bits; float32 -> bf16 rounds to nearest even, any NaN -> the quiet 0x7fc0.
struct Bf16 {
  using Bits = uint16_t;
  static constexpr char kName[] = "bfloat16";
  static constexpr char kQualName[] = "neuronsim.bfloat16";
  static constexpr char kTypeChar = 'E';
  static constexpr char kDoc[] =
      "bfloat16: 1 sign, 8 exponent and 7 mantissa bits (numpy dtype kind 'V', as ml_dtypes')";
  static float to_f32(Bits b) { return engines::bf16_to_f32(b); }
  static Bits from_f32(float f) { return engines::f32_to_bf16(f); }
};

// NKI float8_e4m3, BIR float8e4: E4M3 bias 7, IEEE-like (Inf 0x78, NaN 0x79-0x7f), max finite 240; overflow -> Inf.
struct Fp8E4m3 {
  using Bits = uint8_t;
  static constexpr char kName[] = "float8_e4m3";
  static constexpr char kQualName[] = "neuronsim.float8_e4m3";
  static constexpr char kTypeChar = '7';
  static constexpr char kDoc[] = "float8_e4m3: E4M3, bias 7, with Inf and NaN, max 240 (BIR float8e4; kind 'V')";
  static float to_f32(Bits b) { return engines::fp8_e4m3_to_f32(b); }
  static Bits from_f32(float f) { return engines::f32_to_fp8_e4m3(f); }
};

// NKI float8_e5m2, BIR float8e5: E5M2 bias 15, IEEE-like, max finite 57344; overflow -> Inf.
struct Fp8E5m2 {
  using Bits = uint8_t;
  static constexpr char kName[] = "float8_e5m2";
  static constexpr char kQualName[] = "neuronsim.float8_e5m2";
  static constexpr char kTypeChar = '5';
  static constexpr char kDoc[] = "float8_e5m2: E5M2, bias 15, with Inf and NaN, max 57344 (BIR float8e5; kind 'V')";
  static float to_f32(Bits b) { return engines::fp8_e5m2_to_f32(b); }
  static Bits from_f32(float f) { return engines::f32_to_fp8_e5m2(f); }
};

// NKI and BIR float8_e4m3fn: OCP E4M3FN bias 7, no Inf, NaN S.1111.111, max finite 448; overflow saturates to +-448,
// the rule every engine store to it uses (engines::default_fp8_overflow: libBIR CastToNewDType's saturate).
struct Fp8E4m3fn {
  using Bits = uint8_t;
  static constexpr char kName[] = "float8_e4m3fn";
  static constexpr char kQualName[] = "neuronsim.float8_e4m3fn";
  static constexpr char kTypeChar = '4';
  static constexpr char kDoc[] =
      "float8_e4m3fn: E4M3, bias 7, no Inf, max 448, saturating (BIR float8_e4m3fn; kind 'V')";
  static float to_f32(Bits b) { return engines::fp8_e4m3fn_to_f32(b); }
  static Bits from_f32(float f) {
    return engines::f32_to_fp8_e4m3fn(f, engines::default_fp8_overflow(engines::Dtype::float8_e4m3fn));
  }
};

} // namespace float_dtype
} // namespace neuronsim::python
