// Conversions between stored dtypes and the engines' fp32 (int32 for bit-vector ops) compute types.
// Engines compute in fp32 and convert at memory reads/writes; each rounding rule is documented where it is
// implemented (engines/dtype.cpp).
#pragma once

#include <cstdint>

#include "neuronsim/isa/tables.hpp"

namespace neuronsim::engines {

using isa::Dtype;

// Scalar conversions (the oracle; the bulk loops below must agree with them bit for bit).
float bf16_to_f32(uint16_t v);
uint16_t f32_to_bf16(float v);   // round-to-nearest-even; NaN stays NaN (quiet)
float fp16_to_f32(uint16_t v);
uint16_t f32_to_fp16(float v);   // round-to-nearest-even; overflow -> +-Inf
float fp8_e4m3_to_f32(uint8_t v);
uint8_t f32_to_fp8_e4m3(float v);
float fp8_e5m2_to_f32(uint8_t v);
uint8_t f32_to_fp8_e5m2(float v);
float fp8_e3m4_to_f32(uint8_t v);
uint8_t f32_to_fp8_e3m4(float v);

// The four 8-bit float formats (sim-core-arithmetic.md; mx-microscaling.md "FP8 e4m3fn ... delegated"):
//   float8e3       E3M4, bias 3, IEEE-like (exp all-ones = Inf/NaN), max finite 15.5
//   float8e4       E4M3 "E4M3-240", bias 7, IEEE-like, max finite 240 (NKI float8_e4m3, ml_dtypes float8_e4m3)
//   float8e5       E5M2, bias 15, IEEE-like, max finite 57344
//   float8_e4m3fn  OCP E4M3FN, bias 7, no Inf, NaN = S.1111.111, max finite 448
// fp8_e4m3_* above are float8e4 (the legacy 240 format), not e4m3fn.
float fp8_e4m3fn_to_f32(uint8_t v);
// Overflow rule selector for the fp8 narrows. Inf = birsim FP8Config 0 (Inf on overflow; e4m3fn has no Inf so
// it gives NaN); Saturate = FP8Config saturate bit (max finite). See dtype.cpp.
enum class Fp8Overflow { Inf, Saturate };
uint8_t f32_to_fp8_e4m3fn(float v, Fp8Overflow ovf = Fp8Overflow::Saturate);
uint8_t f32_to_fp8(Dtype d, float v, Fp8Overflow ovf);  // d in {float8e3, float8e4, float8e5, float8_e4m3fn}
// The overflow rule store_f32 uses for d (Inf for the legacy e3/e4/e5 formats, Saturate for e4m3fn).
Fp8Overflow default_fp8_overflow(Dtype d);
// float8_e8m0fnu (OCP MX scale): 2^(v-127), 0xFF = NaN. Decode only; see dtype.cpp.
float e8m0_to_f32(uint8_t v);

// fp32 -> integer: round to nearest, ties to even, then saturate to the type's range; NaN -> 0 (dtype.cpp).
int64_t f32_to_int_sat(float v, int64_t lo, int64_t hi);

// True when load/store support d (every dtype but the x4-packed MX containers).
bool dtype_supported(Dtype d);

// Bulk conversions of n contiguous elements. `src`/`dst` point at stored bytes (little-endian).
void load_f32(Dtype d, const uint8_t *src, float *dst, int64_t n);
void store_f32(Dtype d, const float *src, uint8_t *dst, int64_t n);
// The same for the int32 lane of bit-vector ops: integers are sign/zero-extended, floats reinterpret their bits
// for 32-bit types and convert for narrower ones (documented in dtype.cpp).
void load_i32(Dtype d, const uint8_t *src, int32_t *dst, int64_t n);
void store_i32(Dtype d, const int32_t *src, uint8_t *dst, int64_t n);

// One element, for scalars read from memory (per-partition scale/bias, register values).
float load_one_f32(Dtype d, const uint8_t *src);
void store_one_f32(Dtype d, float v, uint8_t *dst);

} // namespace neuronsim::engines
