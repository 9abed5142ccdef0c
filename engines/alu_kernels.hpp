// Internal: one functor per AluOpType, for the fp32 lane (F) and the int32 lane (I). The scalar oracle and the
// vector kernels both instantiate these, so the kernels differ from the oracle only in loop structure (tests
// still hold them to the oracle bit for bit, which catches a wrong dispatch or a native-Eigen fast path that
// rounds differently).
//
// Sources:
//   [SPEC]  spec 000 "Commutativity": redFn(acc, x), acc = running LHS / first input.
//   [ARITH] reference neuronx-cc/bir/sim-core-arithmetic.md (minss/maxss NaN rule, integer wrap).
//   [ELEM]  reference neuronx-cc/bir/sim-elementwise-datamove.md 2.1 (ts_ops / ts_int_ops membership;
//           ts_int_ops arithmetic is the saturating sq_* family; average = acc + (1/N)*x in TensorReduce).
//   [ARCH]  reference neuron-arch.md 3.4 (abs_max/abs_min "return the signed input with the larger/smaller
//           |x|").
// Where none of these gives a functor body (the reference lists membership, not bodies), the rule is the plain
// C/IEEE meaning of the name, marked INFERRED.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "neuronsim/isa/tables.hpp"

namespace neuronsim::engines::detail {

inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline float b2f(bool b) { return b ? 1.0f : 0.0f; }  // comparisons/logical ops return 1.0 / 0.0

// Shift counts: the birsim functors are scalar C++ (`a << b` in a std::function), which on x86 compiles to
// shl/sar/shr with the count masked to 5 bits. INFERRED from that, not read from a functor body.
inline uint32_t shamt(uint32_t s) { return s & 31u; }

inline int32_t sat32(int64_t v) {
  return v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : int32_t(v));
}
// fp -> int32 in the int lane (pow, rsqrt): RNE + saturate, NaN -> 0, the dtype.cpp conversion rule.
inline int32_t f2i32(double v) {
  if (v != v) return 0;
  double r = std::nearbyint(v);
  if (r >= 2147483647.0) return INT32_MAX;
  if (r <= -2147483648.0) return INT32_MIN;
  return int32_t(r);
}

#define NS_F(name) struct F_##name { float operator()(float a, float x) const
#define NS_I(name) struct I_##name { int32_t operator()(int32_t a, int32_t x) const
#define NS_END };

// ------------------------------------------------------------------------------------------- fp32 lane
// Bit-vector ops in the fp32 lane act on the int32 bit patterns of both operands (the shift count included).
NS_F(bypass) { (void)x; return a; } NS_END
NS_F(bitwise_not) { (void)x; return from_bits(~bits(a)); } NS_END
NS_F(arith_shift_left) { return from_bits(bits(a) << shamt(bits(x))); } NS_END
NS_F(arith_shift_right) { return from_bits(uint32_t(int32_t(bits(a)) >> shamt(bits(x)))); } NS_END
NS_F(add) { return a + x; } NS_END
NS_F(subtract) { return a - x; } NS_END  // acc - x [SPEC]
NS_F(mult) { return a * x; } NS_END
NS_F(divide) { return a / x; } NS_END    // acc / x, IEEE (x = 0 -> +-Inf, 0/0 -> NaN)
// [ARITH] "movss (x); maxss (acc)": x86 maxss returns the second operand (acc) unless x > acc strictly, so a
// NaN in x is dropped, a NaN in acc sticks, and ties (+0 vs -0) keep acc. (The page's prose also says a NaN in
// dst is "replaced by src"; the instruction semantics it quotes say otherwise, and we follow the instruction.)
NS_F(max) { return x > a ? x : a; } NS_END
NS_F(min) { return x < a ? x : a; } NS_END
NS_F(bitwise_and) { return from_bits(bits(a) & bits(x)); } NS_END
NS_F(bitwise_or) { return from_bits(bits(a) | bits(x)); } NS_END
NS_F(bitwise_xor) { return from_bits(bits(a) ^ bits(x)); } NS_END
// Logical ops on nonzero-ness (NaN counts as nonzero, -0 as zero); INFERRED.
NS_F(logical_and) { return b2f((a != 0.0f) & (x != 0.0f)); } NS_END
NS_F(logical_or) { return b2f((a != 0.0f) | (x != 0.0f)); } NS_END
NS_F(logical_xor) { return b2f((a != 0.0f) != (x != 0.0f)); } NS_END
NS_F(logical_shift_left) { return from_bits(bits(a) << shamt(bits(x))); } NS_END
NS_F(logical_shift_right) { return from_bits(bits(a) >> shamt(bits(x))); } NS_END
// Comparisons: acc op x -> 1.0f / 0.0f; any NaN compares false (is_equal 0, not_equal 1), IEEE.
NS_F(is_equal) { return b2f(a == x); } NS_END
NS_F(not_equal) { return b2f(a != x); } NS_END
NS_F(is_gt) { return b2f(a > x); } NS_END
NS_F(is_ge) { return b2f(a >= x); } NS_END
NS_F(is_lt) { return b2f(a < x); } NS_END
NS_F(is_le) { return b2f(a <= x); } NS_END
// average is not in ts_ops [ELEM]; TensorReduce binds acc + (1/N)*x itself. As a binary op we use the mean of
// the two operands, (acc + x) * 0.5 (INFERRED; engines doing an N-way average should use alu_average_step).
NS_F(average) { return (a + x) * 0.5f; } NS_END
NS_F(elemwise_mul) { return a * x; } NS_END
NS_F(pow) { return std::pow(a, x); } NS_END     // powf(acc, x)
// mod: C fmodf(acc, x) -- result has the sign of acc, |r| < |x|, x = 0 -> NaN. INFERRED: birsim's functor is
// C++ over float; numpy-style floor-mod would be a different rule and nothing in the reference points to it.
NS_F(mod) { return std::fmod(a, x); } NS_END
NS_F(rsqrt) { (void)x; return 1.0f / std::sqrt(a); } NS_END  // exact sqrt then divide (no approximation)
NS_F(abs) { (void)x; return std::fabs(a); } NS_END
// [ARCH] signed input with the larger / smaller magnitude. The public NKI pages give the rule with examples
// (nki.language.abs_max / abs_min: "x if |x| > |y|, else y" / "x if |x| < |y|, else y", with x the first operand
// = acc here): a tie of magnitudes returns the second operand, abs_max(1, -1) = -1. A NaN operand takes the same
// formula's else branch (comparisons with NaN are false), so it returns x (INFERRED: the pages show no NaN case).
NS_F(abs_max) { return std::fabs(a) > std::fabs(x) ? a : x; } NS_END
NS_F(abs_min) { return std::fabs(a) < std::fabs(x) ? a : x; } NS_END
// mod_int in the fp32 lane: integer remainder of the truncated operands (C sign rule), computed in float,
// which is exact for |values| < 2^24; x = 0 -> NaN. INFERRED.
NS_F(mod_int) { return std::fmod(std::trunc(a), std::trunc(x)); } NS_END

// ------------------------------------------------------------------------------------------- int32 lane
NS_I(bypass) { (void)x; return a; } NS_END
NS_I(bitwise_not) { (void)x; return ~a; } NS_END
NS_I(arith_shift_left) { return int32_t(uint32_t(a) << shamt(uint32_t(x))); } NS_END
NS_I(arith_shift_right) { return a >> shamt(uint32_t(x)); } NS_END  // arithmetic (sign-filling) shift
// [ELEM] ts_int_ops arithmetic is the saturating sq_* family: add/subtract/mult clamp to [INT32_MIN, INT32_MAX].
// (Memory accumulate, a different path, wraps [ARITH].)
NS_I(add) { return sat32(int64_t(a) + x); } NS_END
NS_I(subtract) { return sat32(int64_t(a) - x); } NS_END
NS_I(mult) { return sat32(int64_t(a) * x); } NS_END
// Truncating division; INT32_MIN / -1 saturates; x = 0 saturates toward the sign of acc (0 / 0 = 0).
// INFERRED (saturating family); C would trap on both.
NS_I(divide) {
  if (x == 0) return a > 0 ? INT32_MAX : (a < 0 ? INT32_MIN : 0);
  return sat32(int64_t(a) / x);
} NS_END
NS_I(max) { return x > a ? x : a; } NS_END  // signed, like pmaxsd [ARITH]
NS_I(min) { return x < a ? x : a; } NS_END
NS_I(bitwise_and) { return a & x; } NS_END
NS_I(bitwise_or) { return a | x; } NS_END
NS_I(bitwise_xor) { return a ^ x; } NS_END
NS_I(logical_and) { return int32_t((a != 0) & (x != 0)); } NS_END
NS_I(logical_or) { return int32_t((a != 0) | (x != 0)); } NS_END
NS_I(logical_xor) { return int32_t((a != 0) != (x != 0)); } NS_END
NS_I(logical_shift_left) { return int32_t(uint32_t(a) << shamt(uint32_t(x))); } NS_END
NS_I(logical_shift_right) { return int32_t(uint32_t(a) >> shamt(uint32_t(x))); } NS_END
NS_I(is_equal) { return int32_t(a == x); } NS_END  // signed compares, 1 / 0
NS_I(not_equal) { return int32_t(a != x); } NS_END
NS_I(is_gt) { return int32_t(a > x); } NS_END
NS_I(is_ge) { return int32_t(a >= x); } NS_END
NS_I(is_lt) { return int32_t(a < x); } NS_END
NS_I(is_le) { return int32_t(a <= x); } NS_END
NS_I(average) { return int32_t((int64_t(a) + x) >> 1); } NS_END  // floor of the exact mean; INFERRED
NS_I(elemwise_mul) { return sat32(int64_t(a) * x); } NS_END
NS_I(pow) { return f2i32(std::pow(double(a), double(x))); } NS_END  // INFERRED: exact-ish, RNE + saturate
// C remainder (sign of acc); x = 0 -> 0 (INFERRED: C would trap); INT32_MIN % -1 = 0.
NS_I(mod) { return x == 0 || x == -1 ? 0 : a % x; } NS_END
NS_I(rsqrt) { (void)x; return f2i32(1.0f / std::sqrt(float(a))); } NS_END
NS_I(abs) { (void)x; return a == INT32_MIN ? INT32_MAX : (a < 0 ? -a : a); } NS_END  // saturating
NS_I(abs_max) { return std::llabs(int64_t(a)) > std::llabs(int64_t(x)) ? a : x; } NS_END  // ties: x (as fp32)
NS_I(abs_min) { return std::llabs(int64_t(a)) < std::llabs(int64_t(x)) ? a : x; } NS_END
NS_I(mod_int) { return x == 0 || x == -1 ? 0 : a % x; } NS_END

#undef NS_F
#undef NS_I
#undef NS_END

// Calls fn(F_<op>{}, I_<op>{}) for the runtime op: the single switch every kernel goes through once per call.
#define NS_ALU(ord, name, cls, bitvec, v2, v3, v4) \
  case isa::AluOp::name:                                \
    return fn(F_##name{}, I_##name{});
template <typename Fn> decltype(auto) dispatch(isa::AluOp op, Fn &&fn) {
  switch (op) {
#include "neuronsim/isa/tables/alu_ops.def"
  }
  return fn(F_bypass{}, I_bypass{});  // unreachable for a valid enum; keeps -Wreturn-type quiet
}
#undef NS_ALU

}  // namespace neuronsim::engines::detail
