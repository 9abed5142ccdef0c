// ALU: (1) the vector kernels and folds against the scalar oracle for every AluOpType, both lanes, on random
// inputs from a fixed seed plus special values; (2) hand-computed operand-order vectors (acc op x); (3) the
// operand classes in alu_ops.def hold for the implementation (unary ignores x, commutative is symmetric).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "neuronsim/engines/alu.hpp"
#include "support/float_bits.hpp"

using namespace neuronsim;
using namespace neuronsim::engines;
using isa::AluOp;

namespace {
using floatbits::F;
using floatbits::kInf;
using floatbits::kNaN;
using floatbits::U;

bool same(float a, float b) { return U(a) == U(b) || (std::isnan(a) && std::isnan(b)); }

std::vector<float> random_floats(std::mt19937 &rng, size_t n) {
  std::vector<float> v(n);
  std::uniform_real_distribution<float> wide(-100.0f, 100.0f);
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, kInf, -kInf, kNaN, 2.0f, 0.5f, 3.0f, -7.0f, 1e-40f};
  for (size_t i = 0; i < n; ++i) {
    switch (rng() % 4) {
    case 0: v[i] = specials[rng() % 12]; break;
    case 1: v[i] = float(int(rng() % 64) - 32); break;  // small integers: shifts, mod, compares with ties
    case 2: v[i] = F(rng()); break;                     // arbitrary bit patterns: bit-vector ops
    default: v[i] = wide(rng); break;
    }
  }
  return v;
}
std::vector<int32_t> random_ints(std::mt19937 &rng, size_t n) {
  std::vector<int32_t> v(n);
  const int32_t specials[] = {0, 1, -1, INT32_MAX, INT32_MIN, 31, 32, 33, -32};
  for (size_t i = 0; i < n; ++i) {
    switch (rng() % 3) {
    case 0: v[i] = specials[rng() % 9]; break;
    case 1: v[i] = int32_t(rng() % 80) - 40; break;
    default: v[i] = int32_t(rng()); break;
    }
  }
  return v;
}
}  // namespace

// ------------------------------------------------------------------------------------------------ kernels
// Both kernel sets: the wide (AVX2) kernels where the CPU has them, and the portable ones.
class AluKernelSet : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override { was_ = alu_set_wide_kernels(GetParam()); }
  void TearDown() override { alu_set_wide_kernels(was_); }
  bool was_ = false;
};
INSTANTIATE_TEST_SUITE_P(AluKernels, AluKernelSet, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &i) { return i.param ? "Wide" : "Portable"; });

TEST_P(AluKernelSet, Fp32MatchOracleForEveryOp) {
  std::mt19937 rng(20240601);
  const size_t n = 1031;  // odd length: exercises the packet tail
  auto a = random_floats(rng, n), x = random_floats(rng, n);
  std::vector<float> out(n), alias;
  for (const auto &info : isa::alu_ops()) {
    AluOp op = info.op;
    SCOPED_TRACE(info.name);
    alu_vv(op, a.data(), x.data(), out.data(), int64_t(n));
    for (size_t i = 0; i < n; ++i)
      ASSERT_TRUE(same(out[i], alu_apply(op, a[i], x[i]))) << "vv i=" << i << " a=" << a[i] << " x=" << x[i];
    const float s = x[7];
    alu_vs(op, a.data(), s, out.data(), int64_t(n));
    for (size_t i = 0; i < n; ++i) ASSERT_TRUE(same(out[i], alu_apply(op, a[i], s))) << "vs i=" << i;
    alu_sv(op, s, a.data(), out.data(), int64_t(n));
    for (size_t i = 0; i < n; ++i) ASSERT_TRUE(same(out[i], alu_apply(op, s, a[i]))) << "sv i=" << i;
    // out aliasing acc
    alias = a;
    alu_vv(op, alias.data(), x.data(), alias.data(), int64_t(n));
    for (size_t i = 0; i < n; ++i) ASSERT_TRUE(same(alias[i], alu_apply(op, a[i], x[i]))) << "alias i=" << i;
    // fold, in order
    float ref = a[0];
    for (size_t i = 0; i < n; ++i) ref = alu_apply(op, ref, x[i]);
    ASSERT_TRUE(same(alu_fold(op, a[0], x.data(), int64_t(n)), ref));
  }
}

namespace {
// Special values (NaNs of both signs with different payloads, signalling NaNs, infinities, denormals, signed
// zeros, the largest and smallest normals), every pair of them, then random bit patterns.
const uint32_t kSpecialBits[] = {
    0x00000000u, 0x80000000u,                            // +0, -0
    0x3f800000u, 0xbf800000u, 0x40400000u, 0xc0e00000u,  // 1, -1, 3, -7
    0x00000001u, 0x80000001u, 0x007fffffu, 0x80400000u,  // denormals: smallest, largest, -2^-127
    0x00800000u, 0x7f7fffffu, 0xff7fffffu,               // smallest normal, +-largest finite
    0x7f800000u, 0xff800000u,                            // +-inf
    0x7fc00000u, 0xffc00000u, 0x7fc12345u, 0xffe54321u,  // quiet NaNs, both signs, two payloads
    0x7f800001u, 0xffa00000u,                            // signalling NaNs
    0x41f80000u, 0x4b000001u, 0x3effffffu};              // 31, 2^23 + 1, just below 0.5
struct SpecialPairs {
  std::vector<float> a, x;
  SpecialPairs() {
    for (uint32_t u : kSpecialBits)
      for (uint32_t v : kSpecialBits) {
        a.push_back(F(u));
        x.push_back(F(v));
      }
    std::mt19937 rng(4242);
    for (int k = 0; k < 1000; ++k) {
      a.push_back(F(rng()));
      x.push_back(F(rng()));
    }
  }
};

// Every form of every fp32 kernel on the special pairs: vv, vv with out = acc and out = x (the tile path runs
// in place), vs and sv with each special scalar. Calls check(form, got, acc, x) per result vector.
template <class Check> void run_every_form(AluOp op, const SpecialPairs &sp, Check &&check) {
  const auto &a = sp.a, &x = sp.x;
  const size_t n = a.size();
  std::vector<float> out(n), alias, bcast(n);
  alu_vv(op, a.data(), x.data(), out.data(), int64_t(n));
  check("vv", out, a, x);
  alias = a;
  alu_vv(op, alias.data(), x.data(), alias.data(), int64_t(n));
  check("vv, out = acc", alias, a, x);
  alias = x;
  alu_vv(op, a.data(), alias.data(), alias.data(), int64_t(n));
  check("vv, out = x", alias, a, x);
  for (uint32_t u : kSpecialBits) {
    std::fill(bcast.begin(), bcast.end(), F(u));
    alu_vs(op, a.data(), F(u), out.data(), int64_t(n));
    check("vs", out, a, bcast);
    alu_sv(op, F(u), x.data(), out.data(), int64_t(n));
    check("sv", out, bcast, x);
  }
}

std::string hex(float f) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", U(f));
  return b;
}

// Whether two results of `acc op x` agree bit for bit. The one freedom: when both operands are NaN, IEEE 754
// (6.2.3) and C++ leave which payload the (quiet) result carries to the compiler's operand order, and compilers
// do pick differently -- the oracle and the portable kernels differ in vs/sv of add and mult, and the -O1
// sanitizer build's AVX2 loop picks the other operand from the release build's in vv of add. Both results must
// then be one of the two quieted input NaNs. Bit-vector ops have no such freedom.
bool agree(const isa::AluOpInfo &info, float got, float want, float a, float x) {
  if (U(got) == U(want)) return true;
  if (info.bitvec || !std::isnan(a) || !std::isnan(x)) return false;
  const uint32_t qa = U(a) | 0x00400000u, qx = U(x) | 0x00400000u;
  return (U(got) == qa || U(got) == qx) && (U(want) == qa || U(want) == qx);
}
}  // namespace

// Bit for bit against the scalar oracle (up to agree's NaN-pair payload): every op, both kernel sets, special
// pairs. A kernel that rounded differently, flushed denormals, lost a sign or made up a NaN fails here.
TEST_P(AluKernelSet, Fp32BitsMatchOracleForEveryOpOnSpecialValues) {
  const SpecialPairs sp;
  for (const auto &info : isa::alu_ops()) {
    const AluOp op = info.op;
    SCOPED_TRACE(info.name);
    run_every_form(op, sp, [&](const char *form, const std::vector<float> &got, const std::vector<float> &a,
                               const std::vector<float> &x) {
      for (size_t i = 0; i < got.size(); ++i) {
        const float want = alu_apply(op, a[i], x[i]);
        if (!agree(info, got[i], want, a[i], x[i])) {
          ADD_FAILURE() << form << " i=" << i << " acc=" << hex(a[i]) << " x=" << hex(x[i]) << ": got "
                        << hex(got[i]) << ", oracle " << hex(want);
          return;
        }
      }
    });
  }
}

// alu_vv's AVX2 build against the portable kernels (the ones every run used before it): the same bits for every
// op and form (up to agree's NaN-pair payload; vs/sv, which have no AVX2 build, are compared too).
TEST(AluKernels, Avx2BuildGivesThePortableKernelsBits) {
  const bool was = alu_set_wide_kernels(true);
  const bool on = alu_set_wide_kernels(true);
  if (!on) {
    alu_set_wide_kernels(was);
    GTEST_SKIP() << "this CPU has no AVX2";
  }
  const SpecialPairs sp;
  for (const auto &info : isa::alu_ops()) {
    const AluOp op = info.op;
    SCOPED_TRACE(info.name);
    std::vector<std::vector<float>> wide;
    alu_set_wide_kernels(true);
    run_every_form(op, sp, [&](const char *, const std::vector<float> &got, auto &, auto &) { wide.push_back(got); });
    alu_set_wide_kernels(false);
    size_t k = 0;
    run_every_form(op, sp, [&](const char *form, const std::vector<float> &got, const std::vector<float> &a,
                               const std::vector<float> &x) {
      const std::vector<float> &w = wide.at(k++);
      for (size_t i = 0; i < got.size(); ++i)
        if (!agree(info, w[i], got[i], a[i], x[i])) {
          ADD_FAILURE() << form << " i=" << i << " acc=" << hex(a[i]) << " x=" << hex(x[i]) << ": AVX2 "
                        << hex(w[i]) << ", portable " << hex(got[i]);
          return;
        }
    });
  }
  alu_set_wide_kernels(was);
}

TEST(AluKernels, Int32MatchOracleForEveryOp) {
  std::mt19937 rng(777);
  const size_t n = 1031;
  auto a = random_ints(rng, n), x = random_ints(rng, n);
  std::vector<int32_t> out(n);
  for (const auto &info : isa::alu_ops()) {
    AluOp op = info.op;
    SCOPED_TRACE(info.name);
    alu_vv_i32(op, a.data(), x.data(), out.data(), int64_t(n));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], alu_apply_i32(op, a[i], x[i])) << "vv " << a[i] << "," << x[i];
    alu_vs_i32(op, a.data(), x[3], out.data(), int64_t(n));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], alu_apply_i32(op, a[i], x[3]));
    alu_sv_i32(op, x[3], a.data(), out.data(), int64_t(n));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], alu_apply_i32(op, x[3], a[i]));
    int32_t ref = a[0];
    for (size_t i = 0; i < n; ++i) ref = alu_apply_i32(op, ref, x[i]);
    ASSERT_EQ(alu_fold_i32(op, a[0], x.data(), int64_t(n)), ref);
  }
}

// ------------------------------------------------------------------------------------------------ classes
TEST(AluClasses, UnaryIgnoresXAndCommutativeIsSymmetric) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> d(-50.0f, 50.0f);
  for (const auto &info : isa::alu_ops()) {
    SCOPED_TRACE(info.name);
    for (int k = 0; k < 200; ++k) {
      float a = d(rng), x = d(rng);
      if (std::fabs(a) == std::fabs(x)) continue;  // signed ties: max picks acc, abs_max/abs_min pick x
      int32_t ia = int32_t(rng() % 1000) - 500, ix = int32_t(rng() % 1000) - 500;
      if (ia == -ix) continue;
      if (info.order == isa::OperandOrder::Unary) {
        ASSERT_TRUE(same(alu_apply(info.op, a, x), alu_apply(info.op, a, 1234.5f)));
        ASSERT_EQ(alu_apply_i32(info.op, ia, ix), alu_apply_i32(info.op, ia, 77));
      } else if (info.order == isa::OperandOrder::Commutative) {
        ASSERT_TRUE(same(alu_apply(info.op, a, x), alu_apply(info.op, x, a))) << a << " " << x;
        ASSERT_EQ(alu_apply_i32(info.op, ia, ix), alu_apply_i32(info.op, ix, ia));
      }
    }
  }
}

TEST(AluClasses, IdentityIsALeftIdentity) {
  const float xs[] = {3.5f, -2.0f, 1e30f, -0.0f, 0.0f, 1.0f};
  for (const auto &info : isa::alu_ops()) {
    SCOPED_TRACE(info.name);
    if (!alu_has_identity(info.op)) {
      EXPECT_TRUE(std::isnan(alu_identity(info.op)));
      continue;
    }
    bool logical = info.op == AluOp::logical_and || info.op == AluOp::logical_or || info.op == AluOp::logical_xor;
    for (float x : xs) {
      if (logical && U(x) != U(0.0f) && x != 1.0f) continue;  // logical results are +0 / 1
      EXPECT_TRUE(same(alu_apply(info.op, alu_identity(info.op), x), x)) << x;
    }
    for (int32_t x : {5, -9, 0, 1, INT32_MAX}) {
      if (logical && x != 0 && x != 1) continue;
      EXPECT_EQ(alu_apply_i32(info.op, alu_identity_i32(info.op), x), x) << x;
    }
  }
  EXPECT_EQ(alu_identity(AluOp::max), -kInf);
  EXPECT_EQ(alu_identity(AluOp::min), kInf);
  EXPECT_EQ(alu_identity_i32(AluOp::bitwise_and), -1);
  EXPECT_FALSE(alu_has_identity(AluOp::subtract));
}

// ------------------------------------------------------------------------------------------------ operand order
TEST(AluOrder, ArithmeticIsAccOpX) {
  EXPECT_EQ(alu_apply(AluOp::subtract, 5.0f, 3.0f), 2.0f);  // acc - x
  EXPECT_EQ(alu_apply(AluOp::divide, 6.0f, 3.0f), 2.0f);    // acc / x
  EXPECT_EQ(alu_apply(AluOp::divide, 1.0f, 0.0f), kInf);
  EXPECT_EQ(alu_apply(AluOp::divide, -1.0f, 0.0f), -kInf);
  EXPECT_EQ(alu_apply(AluOp::pow, 2.0f, 3.0f), 8.0f);        // acc ^ x
  EXPECT_EQ(alu_apply(AluOp::pow, 4.0f, 0.5f), 2.0f);
  EXPECT_EQ(alu_apply(AluOp::pow, 3.0f, -1.0f), 1.0f / 3.0f);
  EXPECT_EQ(alu_apply(AluOp::mod, 7.0f, 3.0f), 1.0f);        // fmod: sign of acc
  EXPECT_EQ(alu_apply(AluOp::mod, -7.0f, 3.0f), -1.0f);
  EXPECT_EQ(alu_apply(AluOp::mod, 7.0f, -3.0f), 1.0f);
  EXPECT_EQ(alu_apply(AluOp::mod, 5.5f, 2.0f), 1.5f);
  EXPECT_TRUE(std::isnan(alu_apply(AluOp::mod, 1.0f, 0.0f)));
  EXPECT_EQ(alu_apply(AluOp::mod_int, 7.9f, 3.2f), 1.0f);    // trunc(7.9)=7 mod trunc(3.2)=3
  EXPECT_EQ(alu_apply(AluOp::rsqrt, 4.0f, 99.0f), 0.5f);
  EXPECT_EQ(alu_apply(AluOp::abs, -2.5f, 99.0f), 2.5f);
  EXPECT_EQ(alu_apply(AluOp::bypass, -2.5f, 99.0f), -2.5f);
  EXPECT_EQ(alu_apply(AluOp::average, 1.0f, 4.0f), 2.5f);
  EXPECT_EQ(alu_apply(AluOp::elemwise_mul, 1.5f, 4.0f), 6.0f);
  // the reversed (scalar-as-accumulator) kernel: 10 - x
  float xs[2] = {1.0f, 2.0f}, out[2];
  alu_sv(AluOp::subtract, 10.0f, xs, out, 2);
  EXPECT_EQ(out[0], 9.0f);
  EXPECT_EQ(out[1], 8.0f);
  alu_vs(AluOp::divide, xs, 4.0f, out, 2);  // x[i] / 4
  EXPECT_EQ(out[0], 0.25f);
  EXPECT_EQ(out[1], 0.5f);
  alu_sv(AluOp::divide, 4.0f, xs, out, 2);  // 4 / x[i]
  EXPECT_EQ(out[0], 4.0f);
  EXPECT_EQ(out[1], 2.0f);
}

TEST(AluOrder, ComparisonsAreAccOpXReturningOneZero) {
  EXPECT_EQ(alu_apply(AluOp::is_gt, 2.0f, 1.0f), 1.0f);
  EXPECT_EQ(alu_apply(AluOp::is_gt, 1.0f, 2.0f), 0.0f);
  EXPECT_EQ(alu_apply(AluOp::is_gt, 2.0f, 2.0f), 0.0f);
  EXPECT_EQ(alu_apply(AluOp::is_ge, 2.0f, 2.0f), 1.0f);
  EXPECT_EQ(alu_apply(AluOp::is_ge, 1.0f, 2.0f), 0.0f);
  EXPECT_EQ(alu_apply(AluOp::is_lt, 1.0f, 2.0f), 1.0f);
  EXPECT_EQ(alu_apply(AluOp::is_lt, 2.0f, 1.0f), 0.0f);
  EXPECT_EQ(alu_apply(AluOp::is_le, 2.0f, 2.0f), 1.0f);
  EXPECT_EQ(alu_apply(AluOp::is_le, 3.0f, 2.0f), 0.0f);
  EXPECT_EQ(alu_apply(AluOp::is_equal, 0.0f, -0.0f), 1.0f);
  EXPECT_EQ(alu_apply(AluOp::is_equal, kNaN, kNaN), 0.0f);
  EXPECT_EQ(alu_apply(AluOp::not_equal, kNaN, kNaN), 1.0f);
  EXPECT_EQ(alu_apply(AluOp::is_gt, kNaN, 1.0f), 0.0f);
  EXPECT_EQ(alu_apply_i32(AluOp::is_gt, -1, -2), 1);  // signed
  EXPECT_EQ(alu_apply_i32(AluOp::is_lt, INT32_MIN, 0), 1);
  EXPECT_EQ(alu_apply_i32(AluOp::is_le, 5, 4), 0);
  EXPECT_EQ(alu_apply(AluOp::logical_and, 2.0f, -3.0f), 1.0f);
  EXPECT_EQ(alu_apply(AluOp::logical_and, 2.0f, -0.0f), 0.0f);
  EXPECT_EQ(alu_apply(AluOp::logical_xor, 2.0f, 5.0f), 0.0f);
  EXPECT_EQ(alu_apply(AluOp::logical_or, 0.0f, kNaN), 1.0f);  // NaN is nonzero
}

TEST(AluOrder, MaxMinFollowMaxssWithAccAsSecondOperand) {
  EXPECT_EQ(alu_apply(AluOp::max, 1.0f, kNaN), 1.0f);          // NaN in x dropped
  EXPECT_TRUE(std::isnan(alu_apply(AluOp::max, kNaN, 1.0f)));  // NaN in acc sticks
  EXPECT_EQ(alu_apply(AluOp::min, 1.0f, kNaN), 1.0f);
  EXPECT_TRUE(std::isnan(alu_apply(AluOp::min, kNaN, 1.0f)));
  EXPECT_EQ(U(alu_apply(AluOp::max, -0.0f, 0.0f)), 0x80000000u);  // tie keeps acc (-0)
  EXPECT_EQ(U(alu_apply(AluOp::min, 0.0f, -0.0f)), 0x00000000u);
  EXPECT_EQ(alu_apply(AluOp::max, 1.0f, 2.0f), 2.0f);
  EXPECT_EQ(alu_apply(AluOp::min, 1.0f, 2.0f), 1.0f);
  // abs_max / abs_min return the signed operand with the larger / smaller magnitude
  EXPECT_EQ(alu_apply(AluOp::abs_max, -3.0f, 2.0f), -3.0f);
  EXPECT_EQ(alu_apply(AluOp::abs_max, 2.0f, -3.0f), -3.0f);
  EXPECT_EQ(alu_apply(AluOp::abs_min, -3.0f, 2.0f), 2.0f);
  EXPECT_EQ(alu_apply(AluOp::abs_max, -2.0f, 2.0f), 2.0f);  // tie: the second operand
  EXPECT_EQ(alu_apply_i32(AluOp::abs_max, 5, -7), -7);
}

// The public NKI pages' own examples (nki.language.abs_max / abs_min: "x if |x| > |y|, else y" and
// "x if |x| < |y|, else y"; x = the first operand = acc): abs_max(-5, 3) = -5, abs_min(5, -3) = -3, and the
// tie-breaking examples abs_max(1, -1) = -1 and abs_min(1, -1) = -1 (a tie returns y).
TEST(AluOrder, AbsMaxAbsMinFollowTheDocumentedExamples) {
  EXPECT_EQ(alu_apply(AluOp::abs_max, -5.0f, 3.0f), -5.0f);
  EXPECT_EQ(alu_apply(AluOp::abs_min, 5.0f, -3.0f), -3.0f);
  EXPECT_EQ(alu_apply(AluOp::abs_max, 1.0f, -1.0f), -1.0f);
  EXPECT_EQ(alu_apply(AluOp::abs_min, 1.0f, -1.0f), -1.0f);
  // The same examples the other way round give the other signed value on a tie: the rule is positional.
  EXPECT_EQ(alu_apply(AluOp::abs_max, -1.0f, 1.0f), 1.0f);
  EXPECT_EQ(alu_apply(AluOp::abs_min, -1.0f, 1.0f), 1.0f);
  // The int32 lane and the vector kernels (a [128, 512] tile against a [128, 1] broadcast, as on the pages).
  EXPECT_EQ(alu_apply_i32(AluOp::abs_max, 1, -1), -1);
  EXPECT_EQ(alu_apply_i32(AluOp::abs_min, 1, -1), -1);
  EXPECT_EQ(alu_apply_i32(AluOp::abs_max, -5, 3), -5);
  std::vector<float> a(512, 1.0f), out(512);
  alu_vs(AluOp::abs_max, a.data(), -1.0f, out.data(), 512);
  EXPECT_EQ(out, std::vector<float>(512, -1.0f));
  alu_vs(AluOp::abs_min, a.data(), -1.0f, out.data(), 512);
  EXPECT_EQ(out, std::vector<float>(512, -1.0f));
  std::vector<float> b(512, -5.0f);
  alu_vs(AluOp::abs_max, b.data(), 3.0f, out.data(), 512);
  EXPECT_EQ(out, std::vector<float>(512, -5.0f));
}

TEST(AluOrder, ShiftsAndBitVectors) {
  EXPECT_EQ(alu_apply_i32(AluOp::arith_shift_left, 1, 4), 16);    // acc << x
  EXPECT_EQ(alu_apply_i32(AluOp::arith_shift_right, -16, 2), -4);  // sign-filling
  EXPECT_EQ(alu_apply_i32(AluOp::logical_shift_right, -16, 28), 0xf);  // 0xfffffff0 >> 28
  EXPECT_EQ(alu_apply_i32(AluOp::logical_shift_left, 3, 1), 6);
  EXPECT_EQ(alu_apply_i32(AluOp::logical_shift_left, 1, 33), 2);  // count masked to 5 bits (x86 shl)
  EXPECT_EQ(alu_apply_i32(AluOp::arith_shift_right, 4, 1), 2);    // not 1 >> 4
  EXPECT_EQ(alu_apply_i32(AluOp::bitwise_not, 0, 123), -1);
  EXPECT_EQ(alu_apply_i32(AluOp::bitwise_and, 0xff0, 0x0ff), 0x0f0);
  EXPECT_EQ(alu_apply_i32(AluOp::bitwise_or, 0xf00, 0x00f), 0xf0f);
  EXPECT_EQ(alu_apply_i32(AluOp::bitwise_xor, 0xff, 0x0f), 0xf0);
  // fp32 lane: the same ops on the bit patterns
  EXPECT_EQ(U(alu_apply(AluOp::bitwise_and, F(0xff00ff00u), F(0x0ff00ff0u))), 0x0f000f00u);
  EXPECT_EQ(U(alu_apply(AluOp::bitwise_not, F(0x3f800000u), 0.0f)), 0xc07fffffu);
  EXPECT_EQ(U(alu_apply(AluOp::logical_shift_right, F(0x80000000u), F(31))), 1u);
  EXPECT_EQ(U(alu_apply(AluOp::arith_shift_right, F(0x80000000u), F(31))), 0xffffffffu);
}

TEST(AluOrder, Int32ArithmeticSaturates) {
  EXPECT_EQ(alu_apply_i32(AluOp::add, INT32_MAX, 1), INT32_MAX);
  EXPECT_EQ(alu_apply_i32(AluOp::subtract, INT32_MIN, 1), INT32_MIN);
  EXPECT_EQ(alu_apply_i32(AluOp::subtract, 3, 10), -7);  // acc - x
  EXPECT_EQ(alu_apply_i32(AluOp::mult, 65536, 65536), INT32_MAX);
  EXPECT_EQ(alu_apply_i32(AluOp::divide, 7, 2), 3);  // truncation
  EXPECT_EQ(alu_apply_i32(AluOp::divide, -7, 2), -3);
  EXPECT_EQ(alu_apply_i32(AluOp::divide, INT32_MIN, -1), INT32_MAX);
  EXPECT_EQ(alu_apply_i32(AluOp::divide, 5, 0), INT32_MAX);
  EXPECT_EQ(alu_apply_i32(AluOp::mod, -7, 3), -1);      // C remainder: sign of acc
  EXPECT_EQ(alu_apply_i32(AluOp::mod_int, 7, -3), 1);
  EXPECT_EQ(alu_apply_i32(AluOp::mod_int, 7, 0), 0);
  EXPECT_EQ(alu_apply_i32(AluOp::pow, 3, 4), 81);
  EXPECT_EQ(alu_apply_i32(AluOp::pow, 2, 40), INT32_MAX);
  EXPECT_EQ(alu_apply_i32(AluOp::abs, INT32_MIN, 0), INT32_MAX);
  EXPECT_EQ(alu_apply_i32(AluOp::average, -3, 0), -2);  // floor(-1.5)
  EXPECT_EQ(alu_apply_i32(AluOp::max, -3, 2), 2);
}
