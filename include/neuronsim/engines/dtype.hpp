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
