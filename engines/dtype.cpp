// Conversions between stored dtypes and the engines' fp32 / int32 compute lanes.
//
// Sources (each rule below cites the one it comes from):
//   [ARITH] reference neuronx-cc/bir/sim-core-arithmetic.md  (birsim cast/accumulate: RNE narrows,
//           bf16/fp16 encoders, fp8 FP8Config 0 = Inf on overflow, canonical NaNs)
//   [MX]    reference neuronx-cc/numerics/mx-microscaling.md  (e4m3fn 448 / e5m2 57344 maxima,
//           libBIR CastToNewDType saturate for the OCP formats, "E4M3-240" legacy float8e4)
//   [ARCH]  reference neuron-arch.md 3.6 (dtype list, RNE default, "FP32->BF16/FP16/FP8 does
//           not saturate")
//   [NKI]   public NKI ISA docs (nki.api.shared "Supported Data Types") where the reference is silent.
//
// Bulk loops: the dtype switch happens once per call; each arm is a plain loop over contiguous arrays calling an
// inline, branch-light per-element function, so the compiler can vectorize the simple ones (bf16, ints, fp32).
#include "neuronsim/engines/dtype.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "neuronsim/error.hpp"

namespace neuronsim::engines {

namespace {

inline uint32_t f2u(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float u2f(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// ------------------------------------------------------------------------------------------------ bf16
// [ARITH] "bf16 ... decode (0x2a42d0) is a lossless <<16".
inline float bf16_dec(uint16_t v) { return u2f(uint32_t(v) << 16); }
// [ARITH] cast_fp32_to_bf16 @0x2a42e0: NaN -> canonical 0x7fc0 (sign dropped); Inf kept; otherwise conditional
// RNE on the 16 discarded bits (guard && (lsbKept || sticky)) with the carry allowed to bump the exponent (a
// value rounding past 0x7f7f becomes Inf: "no saturation"). The add-0x7fff-plus-lsb form below is the same
// predicate: it carries into bit 16 exactly when guard && (lsb || sticky). Inf + 0x7fff never carries because
// its mantissa is zero, so only NaN needs its own branch.
inline uint16_t bf16_enc(float f) {
  uint32_t u = f2u(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

// ------------------------------------------------------------------------------------------------ fp16
// [ARITH] fp16 inline decode @0x28ffd0: exponent rebase by (127-15)<<23, Inf/NaN rebase, subnormals renormalised.
inline float fp16_dec(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t em = uint32_t(h & 0x7fffu) << 13;  // exponent+mantissa moved to fp32 position
  uint32_t e = em & 0x0f800000u;
  float mag;
  if (e == 0x0f800000u) {
    mag = u2f(em + 0x70000000u);  // Inf / NaN (payload kept)
  } else if (e != 0) {
    mag = u2f(em + 0x38000000u);  // normal
  } else {
    mag = u2f(em + 0x38800000u) - u2f(0x38800000u);  // subnormal: exact, via 2^-14 bias subtract
  }
  return u2f(f2u(mag) | sign);
}
// [ARITH] fp16 inline encode: hard RNE, overflow (finite or Inf) -> Inf 0x7c00, NaN -> qNaN 0x7e00, subnormal
// outputs rounded RNE through an fp32 add of 0.5 (here: the magic-number add, which is the same SSE RNE).
inline uint16_t fp16_enc(float f) {
  uint32_t u = f2u(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t mag = u & 0x7fffffffu;
  uint16_t out;
  if (mag >= 0x47800000u) {  // >= 65536: overflow (65520..65535.99 round up into it below) or Inf/NaN
    out = mag > 0x7f800000u ? 0x7e00 : 0x7c00;
  } else if (mag < 0x38800000u) {  // below 2^-14: result is fp16 subnormal (or zero)
    // Adding 0.5 (0x3f000000) shifts the value so the fp16 subnormal grid (2^-24) lands on the fp32 ulp of
    // [0.5,1): the FPU's RNE then rounds exactly as the fp16 subnormal encode must.
    float t = u2f(mag) + 0.5f;
    out = uint16_t(f2u(t) - 0x3f000000u);
  } else {
    // Normal: rebias and round-to-nearest-even on the 13 dropped bits. [ARITH]'s constant 0x37FFF001 is
    // -rebias(0x38000000) + 0xfff + 1 folded together.
    uint32_t m = mag + ((mag >> 13) & 1u) - 0x37FFF001u;
    m >>= 13;
    out = uint16_t(m > 0x7c00u ? 0x7c00u : m);  // a round-up past 65504 lands exactly on 0x7c00 (Inf)
  }
  return uint16_t(out | sign);
}

// ------------------------------------------------------------------------------------------------ fp8 family
// Generic small-float codec parameterised at compile time. E exponent bits, M mantissa bits, FN = "finite only"
// (OCP e4m3fn: no Inf, the single NaN code S.1111.111).
template <int E, int M, bool FN> struct Fp8 {
  static constexpr int kBias = (1 << (E - 1)) - 1;
  static constexpr uint32_t kExpMax = (1u << E) - 1;
  // Largest finite code (magnitude): IEEE-like = exp kExpMax-1, mantissa all ones; FN = exp kExpMax, mantissa
  // all ones minus one (0x7E for e4m3fn = 448, [MX] table).
  static constexpr uint32_t kMaxFinite = FN ? ((kExpMax << M) | ((1u << M) - 2)) : (((kExpMax - 1) << M) | ((1u << M) - 1));
  static constexpr uint32_t kInf = kExpMax << M;                                  // IEEE-like only
  static constexpr uint32_t kNaN = FN ? 0x7fu : ((kExpMax << M) | (1u << (M - 1)));  // canonical quiet NaN

  static float decode(uint8_t v) {
    uint32_t sign = uint32_t(v & 0x80u) << 24;
    uint32_t e = (v >> M) & kExpMax;
    uint32_t m = v & ((1u << M) - 1);
    float mag;
    if (!FN && e == kExpMax) {
      mag = m ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    } else if (FN && e == kExpMax && m == ((1u << M) - 1)) {
      mag = std::numeric_limits<float>::quiet_NaN();
    } else if (e == 0) {
      mag = std::ldexp(float(m), 1 - kBias - M);  // subnormal: m * 2^(1-bias-M), exact
    } else {
      mag = u2f(((e - kBias + 127) << 23) | (m << (23 - M)));
    }
    return u2f(f2u(mag) | sign);
  }

  // RNE narrow [ARITH "fp8 ... narrow RNE": round bias plus guard/round/sticky/odd correction]. Overflow: Inf mode
  // gives +-Inf for IEEE-like formats and NaN for FN (it has no Inf); Saturate mode gives +-max finite. NaN input
  // gives the canonical NaN with the input's sign [ARITH "NaN emits canonical NaN"; the sign rule is ours].
  // An Inf input is "overflow" too: Inf in Inf mode, max finite in Saturate mode for IEEE-like formats; for FN,
  // Inf -> NaN in both modes (an infinite input has no finite value to saturate to -- INFERRED, the reference
  // gives no rule; ml_dtypes does the same).
  static uint8_t encode(float f, Fp8Overflow ovf) {
    uint32_t u = f2u(f);
    uint32_t sign = (u >> 24) & 0x80u;
    uint32_t mag = u & 0x7fffffffu;
    if (mag > 0x7f800000u) return uint8_t(sign | kNaN);
    if (mag == 0x7f800000u) {
      if (FN) return uint8_t(sign | kNaN);
      return uint8_t(sign | (ovf == Fp8Overflow::Inf ? kInf : kMaxFinite));
    }
    int exp = int(mag >> 23);
    if (exp == 0) return uint8_t(sign);  // fp32 subnormal: far below half the smallest fp8 subnormal
    uint64_t full = (mag & 0x7fffffu) | 0x800000u;  // 24-bit significand, value = full * 2^(exp-150)
    int te = exp - 127;                             // unbiased exponent of the input
    int shift = (23 - M) + (te < 1 - kBias ? (1 - kBias - te) : 0);
    uint32_t code;
    if (shift > 25) {
      code = 0;  // below a quarter of the smallest subnormal: rounds to zero
    } else {
      uint64_t q = full >> shift;
      uint64_t rem = full & ((uint64_t(1) << shift) - 1);
      uint64_t half = uint64_t(1) << (shift - 1);
      q += (rem > half || (rem == half && (q & 1u))) ? 1u : 0u;
      if (te < 1 - kBias) {
        code = uint32_t(q);  // subnormal; a carry to 1<<M is exactly the smallest normal code
      } else {
        // q in [2^M, 2^(M+1)]: adding the biased exponent to the implicit-bit position gives the code, and a
        // mantissa carry correctly bumps the exponent.
        code = uint32_t(((uint64_t(te + kBias)) << M) + (q - (uint64_t(1) << M)));
      }
    }
    if (code > kMaxFinite) {
      if (ovf == Fp8Overflow::Saturate) return uint8_t(sign | kMaxFinite);
      return uint8_t(sign | (FN ? kNaN : kInf));
    }
    return uint8_t(sign | code);
  }
};
using E3M4 = Fp8<3, 4, false>;
using E4M3 = Fp8<4, 3, false>;
using E5M2 = Fp8<5, 2, false>;
using E4M3FN = Fp8<4, 3, true>;

// 256-entry decode tables: an 8-bit decode is one load, so bulk loads are a gather loop.
struct Fp8Tables {
  std::array<float, 256> e3m4, e4m3, e5m2, e4m3fn, e8m0;
  Fp8Tables() {
    for (int i = 0; i < 256; ++i) {
      e3m4[i] = E3M4::decode(uint8_t(i));
      e4m3[i] = E4M3::decode(uint8_t(i));
      e5m2[i] = E5M2::decode(uint8_t(i));
      e4m3fn[i] = E4M3FN::decode(uint8_t(i));
      // OCP MX E8M0: unsigned power of two 2^(v-127); 0xFF = NaN [ARCH 3.6 "float8_e8m0fnu (unsigned, 0xFF =
      // NaN)"]. 2^-127 is an fp32 subnormal, representable exactly.
      e8m0[i] = i == 255 ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, i - 127);
    }
  }
};
const Fp8Tables &fp8_tables() {
  static const Fp8Tables t;
  return t;
}

// ------------------------------------------------------------------------------------------------ integers
// fp32 -> integer. The reference does not pin this conversion for engine outputs ([ARITH] covers only the
// float narrows and the integer *accumulate*, which wraps). We follow the NKI ISA type-casting rule (public
// docs, nki.api.shared "Type Casting"): round to nearest with ties to even, and clamp to the destination range
// (saturate), NaN -> 0. std::nearbyint under the default FE_TONEAREST mode is RNE. Comparisons are made in
// float against the exactly representable bounds (2^31 etc.), so no UB from out-of-range casts.
template <typename T> inline T f2i(float v) {
  float r = std::nearbyint(v);
  constexpr float lo = float(std::numeric_limits<T>::min());
  // hi_excl = 2^bits(T) for unsigned, 2^(bits-1) for signed: exactly representable in float.
  constexpr float hi_excl = std::numeric_limits<T>::is_signed ? -lo : 2.0f * float(uint64_t(1) << (8 * sizeof(T) - 1));
  if (!(r == r)) return T(0);
  if (r <= lo) return std::numeric_limits<T>::min();
  if (r >= hi_excl) return std::numeric_limits<T>::max();
  return T(r);
}

[[noreturn]] void unsupported(Dtype d, const char *what) {
  throw SemanticError({}, std::string("dtype ") + isa::enum_name(d) + " not supported by " + what +
                              " (x4-packed MX containers: no element rule in the reference)");
}

template <typename T> inline T rd(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> inline void wr(uint8_t *p, T v) { std::memcpy(p, &v, sizeof(T)); }

template <typename T> void load_int_f32(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = float(rd<T>(src + i * sizeof(T)));  // int -> fp32: RNE [ARCH]
}
template <typename T> void store_int_f32(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) wr<T>(dst + i * sizeof(T), f2i<T>(src[i]));
}
void load_table(const std::array<float, 256> &t, const uint8_t *src, float *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = t[src[i]];
}
template <typename Codec> void store_fp8(const float *src, uint8_t *dst, int64_t n, Fp8Overflow ovf) {
  for (int64_t i = 0; i < n; ++i) dst[i] = Codec::encode(src[i], ovf);
}

// int32 lane store of an integer type: wrap (truncate to the low bits), like a C integer narrowing. Used only
// by bit-vector results, whose meaning is their bit pattern. INFERRED: the reference gives no narrowing rule
// for the int lane; [ARITH] shows integer arithmetic wraps rather than saturates.
template <typename T> void store_i32_int(const int32_t *src, uint8_t *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) wr<T>(dst + i * sizeof(T), T(src[i]));
}
template <typename T> void load_i32_int(const uint8_t *src, int32_t *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = int32_t(rd<T>(src + i * sizeof(T)));  // sign/zero-extend (or wrap)
}

}  // namespace

// ------------------------------------------------------------------------------------------------ public scalar
float bf16_to_f32(uint16_t v) { return bf16_dec(v); }
uint16_t f32_to_bf16(float v) { return bf16_enc(v); }
float fp16_to_f32(uint16_t v) { return fp16_dec(v); }
uint16_t f32_to_fp16(float v) { return fp16_enc(v); }
float fp8_e4m3_to_f32(uint8_t v) { return fp8_tables().e4m3[v]; }
uint8_t f32_to_fp8_e4m3(float v) { return E4M3::encode(v, Fp8Overflow::Inf); }
float fp8_e5m2_to_f32(uint8_t v) { return fp8_tables().e5m2[v]; }
uint8_t f32_to_fp8_e5m2(float v) { return E5M2::encode(v, Fp8Overflow::Inf); }
float fp8_e3m4_to_f32(uint8_t v) { return fp8_tables().e3m4[v]; }
uint8_t f32_to_fp8_e3m4(float v) { return E3M4::encode(v, Fp8Overflow::Inf); }
float fp8_e4m3fn_to_f32(uint8_t v) { return fp8_tables().e4m3fn[v]; }
uint8_t f32_to_fp8_e4m3fn(float v, Fp8Overflow ovf) { return E4M3FN::encode(v, ovf); }
float e8m0_to_f32(uint8_t v) { return fp8_tables().e8m0[v]; }

// [ARITH] "fp8 reduce hard-codes FP8Config = 0 ... Overflow therefore emits Inf" for the legacy dtypes 3/4/7,
// which are the only fp8 dtypes birsim narrows itself; we use the same rule for every engine write to them.
// float8_e4m3fn is narrowed by libBIR CastToNewDType with saturate on ([MX] "FP8 e4m3fn ... delegated":
// overflow -> 0x7E = 448); it has no Inf code anyway.
Fp8Overflow default_fp8_overflow(Dtype d) {
  return d == Dtype::float8_e4m3fn ? Fp8Overflow::Saturate : Fp8Overflow::Inf;
}

uint8_t f32_to_fp8(Dtype d, float v, Fp8Overflow ovf) {
  switch (d) {
  case Dtype::float8e3: return E3M4::encode(v, ovf);
  case Dtype::float8e4: return E4M3::encode(v, ovf);
  case Dtype::float8e5: return E5M2::encode(v, ovf);
  case Dtype::float8_e4m3fn: return E4M3FN::encode(v, ovf);
  default: unsupported(d, "f32_to_fp8");
  }
}

int64_t f32_to_int_sat(float v, int64_t lo, int64_t hi) {
  if (v != v) return 0;
  double r = std::nearbyint(double(v));
  if (r <= double(lo)) return lo;
  if (r >= double(hi)) return hi;
  return int64_t(r);
}

bool dtype_supported(Dtype d) {
  return d != Dtype::float4_e2m1fn_x4 && d != Dtype::float8_e4m3fn_x4 && d != Dtype::float8_e5m2_x4;
}

// ------------------------------------------------------------------------------------------------ bulk fp32 lane
void load_f32(Dtype d, const uint8_t *src, float *dst, int64_t n) {
  const auto &t = fp8_tables();
  switch (d) {
  case Dtype::float32:
  case Dtype::float32r:  // fp32 storage; its reduced precision is a PE-operand rounding (reference
                         // neuronx-cc/arch/pe-engine.md, "float32r (Dtype 17) ... single-pass reduced-precision")
    std::memcpy(dst, src, size_t(n) * 4);
    return;
  case Dtype::bfloat16:
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_dec(rd<uint16_t>(src + 2 * i));
    return;
  case Dtype::float16:
    for (int64_t i = 0; i < n; ++i) dst[i] = fp16_dec(rd<uint16_t>(src + 2 * i));
    return;
  case Dtype::float8e3: load_table(t.e3m4, src, dst, n); return;
  case Dtype::float8e4: load_table(t.e4m3, src, dst, n); return;
  case Dtype::float8e5: load_table(t.e5m2, src, dst, n); return;
  case Dtype::float8_e4m3fn: load_table(t.e4m3fn, src, dst, n); return;
  case Dtype::float8_e8m0fnu: load_table(t.e8m0, src, dst, n); return;
  case Dtype::uint8: load_int_f32<uint8_t>(src, dst, n); return;
  case Dtype::int8: load_int_f32<int8_t>(src, dst, n); return;
  case Dtype::uint16: load_int_f32<uint16_t>(src, dst, n); return;
  case Dtype::int16: load_int_f32<int16_t>(src, dst, n); return;
  case Dtype::uint32: load_int_f32<uint32_t>(src, dst, n); return;
  case Dtype::int32: load_int_f32<int32_t>(src, dst, n); return;
  case Dtype::uint64: load_int_f32<uint64_t>(src, dst, n); return;
  case Dtype::int64: load_int_f32<int64_t>(src, dst, n); return;
  default: unsupported(d, "load_f32");
  }
}

void store_f32(Dtype d, const float *src, uint8_t *dst, int64_t n) {
  switch (d) {
  case Dtype::float32:
  case Dtype::float32r:
    std::memcpy(dst, src, size_t(n) * 4);
    return;
  case Dtype::bfloat16:
    for (int64_t i = 0; i < n; ++i) wr<uint16_t>(dst + 2 * i, bf16_enc(src[i]));
    return;
  case Dtype::float16:
    for (int64_t i = 0; i < n; ++i) wr<uint16_t>(dst + 2 * i, fp16_enc(src[i]));
    return;
  case Dtype::float8e3: store_fp8<E3M4>(src, dst, n, Fp8Overflow::Inf); return;
  case Dtype::float8e4: store_fp8<E4M3>(src, dst, n, Fp8Overflow::Inf); return;
  case Dtype::float8e5: store_fp8<E5M2>(src, dst, n, Fp8Overflow::Inf); return;
  case Dtype::float8_e4m3fn: store_fp8<E4M3FN>(src, dst, n, Fp8Overflow::Saturate); return;
  case Dtype::uint8: store_int_f32<uint8_t>(src, dst, n); return;
  case Dtype::int8: store_int_f32<int8_t>(src, dst, n); return;
  case Dtype::uint16: store_int_f32<uint16_t>(src, dst, n); return;
  case Dtype::int16: store_int_f32<int16_t>(src, dst, n); return;
  case Dtype::uint32: store_int_f32<uint32_t>(src, dst, n); return;
  case Dtype::int32: store_int_f32<int32_t>(src, dst, n); return;
  case Dtype::uint64: store_int_f32<uint64_t>(src, dst, n); return;
  case Dtype::int64: store_int_f32<int64_t>(src, dst, n); return;
  // e8m0 is a scale type ("not a compute datum", reference neuronx-cc/bir/dtype-tables.md): no engine writes it
  // element-wise, and the reference gives no fp32 -> e8m0 rounding rule outside QuantizeMx's exponent extract.
  default: unsupported(d, "store_f32");
  }
}

// ------------------------------------------------------------------------------------------------ bulk int32 lane
// Per dtype.hpp: integers are sign/zero-extended (64-bit ones truncated to their low 32 bits, the wrap rule);
// fp32/float32r reinterpret their bits (the bit-vector ops act on the stored bit pattern); narrower floats are
// widened to fp32 and converted by value (RNE, saturate, NaN -> 0), the same cast birsim applies before
// ts_int_ops (sim-elementwise-datamove.md 2.2: "bitvec -> ts_int_ops (cast dt15 ...)").
void load_i32(Dtype d, const uint8_t *src, int32_t *dst, int64_t n) {
  switch (d) {
  case Dtype::float32:
  case Dtype::float32r:
  case Dtype::int32:
  case Dtype::uint32:
    std::memcpy(dst, src, size_t(n) * 4);
    return;
  case Dtype::uint8: load_i32_int<uint8_t>(src, dst, n); return;
  case Dtype::int8: load_i32_int<int8_t>(src, dst, n); return;
  case Dtype::uint16: load_i32_int<uint16_t>(src, dst, n); return;
  case Dtype::int16: load_i32_int<int16_t>(src, dst, n); return;
  case Dtype::uint64: load_i32_int<uint64_t>(src, dst, n); return;
  case Dtype::int64: load_i32_int<int64_t>(src, dst, n); return;
  default: {
    if (!dtype_supported(d)) unsupported(d, "load_i32");
    // Narrow floats: widen, then value-convert. Chunked so no allocation.
    float buf[256];
    for (int64_t i = 0; i < n; i += 256) {
      int64_t k = n - i < 256 ? n - i : 256;
      load_f32(d, src + i * isa::dtype_size(d), buf, k);
      for (int64_t j = 0; j < k; ++j) dst[i + j] = f2i<int32_t>(buf[j]);
    }
    return;
  }
  }
}

void store_i32(Dtype d, const int32_t *src, uint8_t *dst, int64_t n) {
  switch (d) {
  case Dtype::float32:
  case Dtype::float32r:
  case Dtype::int32:
  case Dtype::uint32:
    std::memcpy(dst, src, size_t(n) * 4);
    return;
  case Dtype::uint8: store_i32_int<uint8_t>(src, dst, n); return;
  case Dtype::int8: store_i32_int<int8_t>(src, dst, n); return;
  case Dtype::uint16: store_i32_int<uint16_t>(src, dst, n); return;
  case Dtype::int16: store_i32_int<int16_t>(src, dst, n); return;
  case Dtype::uint64:
    for (int64_t i = 0; i < n; ++i) wr<uint64_t>(dst + 8 * i, uint64_t(uint32_t(src[i])));  // zero-extend
    return;
  case Dtype::int64:
    for (int64_t i = 0; i < n; ++i) wr<int64_t>(dst + 8 * i, int64_t(src[i]));  // sign-extend
    return;
  default: {
    if (!dtype_supported(d)) unsupported(d, "store_i32");
    float buf[256];
    for (int64_t i = 0; i < n; i += 256) {
      int64_t k = n - i < 256 ? n - i : 256;
      for (int64_t j = 0; j < k; ++j) buf[j] = float(src[i + j]);
      store_f32(d, buf, dst + i * isa::dtype_size(d), k);
    }
    return;
  }
  }
}

float load_one_f32(Dtype d, const uint8_t *src) {
  float v;
  load_f32(d, src, &v, 1);
  return v;
}
void store_one_f32(Dtype d, float v, uint8_t *dst) { store_f32(d, &v, dst, 1); }

}  // namespace neuronsim::engines
