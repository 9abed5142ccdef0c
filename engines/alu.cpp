// AluOpType evaluation: the scalar oracle, the Eigen array kernels, and an AVX2 build of the vv loop for CPUs
// that have it (chosen at run time; the build targets baseline x86-64). The per-op semantics (and their sources)
// live in engines/alu_kernels.hpp; this file only chooses loop shapes. Every entry point switches on the op once
// (detail::dispatch) and then runs one loop with the op's functor inlined: no per-element switch, virtual call
// or std::function.
#include "neuronsim/engines/alu.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <limits>

#include "engines/alu_kernels.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NS_ALU_AVX2 1
#endif

namespace neuronsim::engines {

namespace {

using namespace detail;
using ArrF = Eigen::Array<float, Eigen::Dynamic, 1>;
using ArrI = Eigen::Array<int32_t, Eigen::Dynamic, 1>;
using CMapF = Eigen::Map<const ArrF>;
using MapF = Eigen::Map<ArrF>;
using CMapI = Eigen::Map<const ArrI>;
using MapI = Eigen::Map<ArrI>;

// ---- fp32 lane, generic: Eigen evaluates the functor in its assignment loop (plain contiguous loop, inlined).
// `out` may alias `acc` or `x`: every element is read before its own slot is written, and only that slot.
template <class F> void vv(F f, const float *a, const float *x, float *o, int64_t n) {
  MapF(o, n) = CMapF(a, n).binaryExpr(CMapF(x, n), f);
}
template <class F> void vs(F f, const float *a, float x, float *o, int64_t n) {
  MapF(o, n) = CMapF(a, n).unaryExpr([f, x](float v) { return f(v, x); });
}
template <class F> void sv(F f, float a, const float *x, float *o, int64_t n) {
  MapF(o, n) = CMapF(x, n).unaryExpr([f, a](float v) { return f(a, v); });
}

// ---- fp32 lane, native Eigen packet math for the IEEE-exact arithmetic ops (same results as the functors:
// +, -, *, / and fabs are correctly rounded in both).
#define NS_NATIVE(F, EXPR_VV, EXPR_VS, EXPR_SV)                                                                  \
  void vv(F, const float *a, const float *x, float *o, int64_t n) {                                             \
    CMapF A(a, n), X(x, n);                                                                                      \
    (void)A; (void)X;                                                                                            \
    MapF(o, n) = EXPR_VV;                                                                                        \
  }                                                                                                              \
  void vs(F, const float *a, float x, float *o, int64_t n) {                                                    \
    CMapF A(a, n);                                                                                               \
    (void)x;                                                                                                     \
    MapF(o, n) = EXPR_VS;                                                                                        \
  }                                                                                                              \
  void sv(F, float a, const float *x, float *o, int64_t n) {                                                    \
    CMapF X(x, n);                                                                                               \
    (void)a; (void)X;                                                                                            \
    MapF(o, n) = EXPR_SV;                                                                                        \
  }
NS_NATIVE(F_add, A + X, A + x, a + X)
NS_NATIVE(F_subtract, A - X, A - x, a - X)
NS_NATIVE(F_mult, A * X, A * x, a * X)
NS_NATIVE(F_elemwise_mul, A * X, A * x, a * X)
NS_NATIVE(F_divide, A / X, A / x, a / X)
NS_NATIVE(F_abs, A.abs(), A.abs(), ArrF::Constant(n, std::fabs(a)))
NS_NATIVE(F_bypass, A, A, ArrF::Constant(n, a))
#undef NS_NATIVE

// ---- fp32 lane, AVX2 (x86-64 CPUs that have it, chosen once per call), for alu_vv: the same plain loop over the
// same functor, compiled for AVX2 and vectorised by the compiler, 8 lanes wide. Only AVX2 is enabled, not FMA, so
// nothing is contracted and every lane computes what the functor computes (one IEEE operation per lane for the
// arithmetic ops, compare-and-select for max/min, integer ops on the bit patterns). `out` may alias `acc` or `x`
// (the compiler checks the overlap at run time; an exact alias vectorises). Tests hold it to the portable
// kernels bit for bit, up to which payload a NaN op NaN result carries (the compiler's operand order: the
// release build gives the portable kernels' payloads, the -O1 sanitizer build does not). vs/sv stay portable:
// in the release build their AVX2 loop would give the other operand's payload. A stand-alone loop over the
// layout of bench (a) (fp32, 128 rows of 2048 at a 24 KiB stride, 64-byte aligned) took 40.7 us in SSE, 36.9 us
// in AVX2; a contiguous Eigen loop over the same data 35.6-38.3 us.
#ifdef NS_ALU_AVX2
// Blocks of 64 elements, each starting with a prefetch of both inputs 512 bytes ahead (a prefetch never faults,
// so it may reach past the end): an operand is a partition row at a time, and the hardware prefetcher starts over
// at every row (the stand-alone loop over bench (a)'s layout, on the loaded machine: 41.4 -> 39.8 us, and 38.8 us
// on huge pages, Memory::alloc_buffer, against 38.4 us for a contiguous Eigen loop; quiet, the three are within
// 2 us of each other).
template <class F>
__attribute__((target("avx2"))) void vv_avx2(F f, const float *a, const float *x, float *o, int64_t n) {
  constexpr int64_t kBlock = 64, kAhead = 512;
  for (int64_t i = 0; i < n; i += kBlock) {
    const uintptr_t pa = reinterpret_cast<uintptr_t>(a + i) + kAhead, px = reinterpret_cast<uintptr_t>(x + i) + kAhead;
    for (int64_t l = 0; l < kBlock * 4; l += 64) {
      __builtin_prefetch(reinterpret_cast<const void *>(pa + l));
      __builtin_prefetch(reinterpret_cast<const void *>(px + l));
    }
    const int64_t m = std::min(kBlock, n - i);
    for (int64_t j = 0; j < m; ++j) o[i + j] = f(a[i + j], x[i + j]);
  }
}
bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}
bool g_avx2 = cpu_has_avx2();
#endif

// The fp32 vv kernel set, chosen once per call.
template <class F> void run_vv(F f, const float *a, const float *x, float *o, int64_t n) {
#ifdef NS_ALU_AVX2
  if (g_avx2) return vv_avx2(f, a, x, o, n);
#endif
  vv(f, a, x, o, n);
}

// ---- int32 lane (functors only: the saturating arithmetic and bit ops have no Eigen array operators).
template <class I> void vv_i(I f, const int32_t *a, const int32_t *x, int32_t *o, int64_t n) {
  MapI(o, n) = CMapI(a, n).binaryExpr(CMapI(x, n), f);
}
template <class I> void vs_i(I f, const int32_t *a, int32_t x, int32_t *o, int64_t n) {
  MapI(o, n) = CMapI(a, n).unaryExpr([f, x](int32_t v) { return f(v, x); });
}
template <class I> void sv_i(I f, int32_t a, const int32_t *x, int32_t *o, int64_t n) {
  MapI(o, n) = CMapI(x, n).unaryExpr([f, a](int32_t v) { return f(a, v); });
}

// Folds are strictly sequential: fp addition is not associative and the reduce recurrence is in order
// (sim-elementwise-datamove.md 3.1 applyEngReduce: acc = reduceFn(acc, in[j]) for j = 1..extent).
template <class F, class T> T fold(F f, T acc, const T *x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc = f(acc, x[i]);
  return acc;
}

}  // namespace

bool alu_set_wide_kernels(bool on) {
#ifdef NS_ALU_AVX2
  const bool was = g_avx2;
  g_avx2 = on && cpu_has_avx2();
  return was;
#else
  (void)on;
  return false;
#endif
}

float alu_apply(AluOp op, float acc, float x) {
  return dispatch(op, [&](auto f, auto) { return f(acc, x); });
}
int32_t alu_apply_i32(AluOp op, int32_t acc, int32_t x) {
  return dispatch(op, [&](auto, auto i) { return i(acc, x); });
}

void alu_vv(AluOp op, const float *acc, const float *x, float *out, int64_t n) {
  dispatch(op, [&](auto f, auto) { run_vv(f, acc, x, out, n); });
}
void alu_vs(AluOp op, const float *acc, float x, float *out, int64_t n) {
  dispatch(op, [&](auto f, auto) { vs(f, acc, x, out, n); });
}
void alu_sv(AluOp op, float acc, const float *x, float *out, int64_t n) {
  dispatch(op, [&](auto f, auto) { sv(f, acc, x, out, n); });
}
void alu_vv_i32(AluOp op, const int32_t *acc, const int32_t *x, int32_t *out, int64_t n) {
  dispatch(op, [&](auto, auto i) { vv_i(i, acc, x, out, n); });
}
void alu_vs_i32(AluOp op, const int32_t *acc, int32_t x, int32_t *out, int64_t n) {
  dispatch(op, [&](auto, auto i) { vs_i(i, acc, x, out, n); });
}
void alu_sv_i32(AluOp op, int32_t acc, const int32_t *x, int32_t *out, int64_t n) {
  dispatch(op, [&](auto, auto i) { sv_i(i, acc, x, out, n); });
}

float alu_fold(AluOp op, float acc, const float *x, int64_t n) {
  return dispatch(op, [&](auto f, auto) { return fold(f, acc, x, n); });
}
int32_t alu_fold_i32(AluOp op, int32_t acc, const int32_t *x, int64_t n) {
  return dispatch(op, [&](auto, auto i) { return fold(i, acc, x, n); });
}

// Left identities (id op x == x for every x, NaN aside). max's -Inf and min's +Inf are identities under the
// maxss/minss rule for every non-NaN x; abs_max's 0 and abs_min's +Inf return x for every x (a tie of
// magnitudes returns the second operand, x). logical ops normalise to 1/0, so their identities hold for
// 1/0 inputs (the only values a logical result takes).
bool alu_has_identity(AluOp op) {
  switch (op) {
  case AluOp::add: case AluOp::mult: case AluOp::elemwise_mul: case AluOp::max: case AluOp::min:
  case AluOp::bitwise_and: case AluOp::bitwise_or: case AluOp::bitwise_xor: case AluOp::logical_and:
  case AluOp::logical_or: case AluOp::logical_xor: case AluOp::abs_max: case AluOp::abs_min:
    return true;
  default:
    return false;
  }
}

float alu_identity(AluOp op) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  switch (op) {
  case AluOp::add: return -0.0f;  // -0 + x == x for x = +0 and -0 alike (+0 would turn -0 into +0)
  case AluOp::mult: case AluOp::elemwise_mul: return 1.0f;
  case AluOp::max: return -inf;
  case AluOp::min: return inf;
  case AluOp::bitwise_and: return from_bits(0xffffffffu);
  case AluOp::bitwise_or: case AluOp::bitwise_xor: return 0.0f;
  case AluOp::logical_and: return 1.0f;
  case AluOp::logical_or: case AluOp::logical_xor: return 0.0f;
  case AluOp::abs_max: return 0.0f;
  case AluOp::abs_min: return inf;
  default: return std::numeric_limits<float>::quiet_NaN();
  }
}

int32_t alu_identity_i32(AluOp op) {
  switch (op) {
  case AluOp::add: return 0;
  case AluOp::mult: case AluOp::elemwise_mul: return 1;
  case AluOp::max: return INT32_MIN;
  case AluOp::min: return INT32_MAX;
  case AluOp::bitwise_and: return -1;
  case AluOp::bitwise_or: case AluOp::bitwise_xor: return 0;
  case AluOp::logical_and: return 1;
  case AluOp::logical_or: case AluOp::logical_xor: return 0;
  case AluOp::abs_max: return 0;
  case AluOp::abs_min: return INT32_MAX;  // |INT32_MIN| > INT32_MAX, so abs_min(INT32_MAX, INT32_MIN) keeps acc
  default: return 0;
  }
}

}  // namespace neuronsim::engines
