// dtype conversions: hand-computed bit patterns (each comment shows the arithmetic), exhaustive round trips of
// every narrow code, and bulk-vs-scalar agreement. Rules under test: engines/dtype.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "neuronsim/engines/dtype.hpp"
#include "support/float_bits.hpp"
#include "neuronsim/error.hpp"

using namespace neuronsim;
using namespace neuronsim::engines;
using isa::Dtype;

namespace {
using floatbits::F;
using floatbits::kInf;
using floatbits::kNaN;
using floatbits::U;
}  // namespace

// ------------------------------------------------------------------------------------------------ bf16
TEST(Bf16, DecodeIsHighHalf) {
  EXPECT_EQ(U(bf16_to_f32(0x3f80)), 0x3f800000u);  // 1.0
  EXPECT_EQ(bf16_to_f32(0x4049), 3.140625f);       // 0x40490000 = 1.5703125 * 2
  EXPECT_EQ(U(bf16_to_f32(0x8000)), 0x80000000u);  // -0
  EXPECT_TRUE(std::isinf(bf16_to_f32(0xff80)) && bf16_to_f32(0xff80) < 0);
}

TEST(Bf16, RoundToNearestEven) {
  EXPECT_EQ(f32_to_bf16(F(0x3f800000)), 0x3f80);  // exact
  EXPECT_EQ(f32_to_bf16(F(0x3f808000)), 0x3f80);  // tie, kept LSB 0 -> stays (even)
  EXPECT_EQ(f32_to_bf16(F(0x3f818000)), 0x3f82);  // tie, kept LSB 1 -> rounds up to even
  EXPECT_EQ(f32_to_bf16(F(0x3f808001)), 0x3f81);  // just above the tie -> up
  EXPECT_EQ(f32_to_bf16(F(0x3f807fff)), 0x3f80);  // just below the tie -> down
  EXPECT_EQ(f32_to_bf16(F(0xbf818000)), 0xbf82);  // sign does not change the rule
  EXPECT_EQ(f32_to_bf16(F(0x3f7fffff)), 0x3f80);  // mantissa carry bumps the exponent: 0.99999994 -> 1.0
  EXPECT_EQ(f32_to_bf16(F(0x00018000)), 0x0002);  // fp32 subnormal tie (LSB 1) -> even, still subnormal
}

TEST(Bf16, OverflowNaNInf) {
  EXPECT_EQ(f32_to_bf16(F(0x7f7fffff)), 0x7f80);  // FLT_MAX rounds past 0x7f7f into Inf: no saturation
  EXPECT_EQ(f32_to_bf16(F(0x7f7f7fff)), 0x7f7f);  // below the tie: largest finite bf16
  EXPECT_EQ(f32_to_bf16(kInf), 0x7f80);
  EXPECT_EQ(f32_to_bf16(-kInf), 0xff80);
  EXPECT_EQ(f32_to_bf16(F(0xffc00001)), 0x7fc0);  // NaN -> canonical quiet NaN, sign dropped (birsim 0x7fc0)
  EXPECT_EQ(f32_to_bf16(F(0x7f800001)), 0x7fc0);  // signalling NaN whose payload would round away: still NaN
}

// ------------------------------------------------------------------------------------------------ fp16
TEST(Fp16, Decode) {
  EXPECT_EQ(fp16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(fp16_to_f32(0x3555), 0.333251953125f);    // 2^-2 * (1 + 341/1024)
  EXPECT_EQ(fp16_to_f32(0x7bff), 65504.0f);           // 2^15 * (2 - 2^-10)
  EXPECT_EQ(fp16_to_f32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(fp16_to_f32(0x03ff), std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_EQ(U(fp16_to_f32(0x8000)), 0x80000000u);
  EXPECT_EQ(fp16_to_f32(0xfc00), -kInf);
  EXPECT_TRUE(std::isnan(fp16_to_f32(0x7e00)));
}

TEST(Fp16, RoundToNearestEvenAndOverflow) {
  EXPECT_EQ(f32_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_fp16(F(0x3f801000)), 0x3c00);  // 1 + 2^-11: tie, LSB 0 -> down
  EXPECT_EQ(f32_to_fp16(F(0x3f803000)), 0x3c02);  // 1 + 3*2^-11: tie, LSB 1 -> up
  EXPECT_EQ(f32_to_fp16(F(0x3f801001)), 0x3c01);  // above the tie
  EXPECT_EQ(f32_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_fp16(65519.0f), 0x7bff);       // below the 65520 tie -> max finite
  EXPECT_EQ(f32_to_fp16(65520.0f), 0x7c00);       // tie with odd LSB rounds up past max -> Inf
  EXPECT_EQ(f32_to_fp16(1e6f), 0x7c00);           // overflow -> Inf (IEEE, no clamp)
  EXPECT_EQ(f32_to_fp16(-1e6f), 0xfc00);
  EXPECT_EQ(f32_to_fp16(kNaN), 0x7e00);
  EXPECT_EQ(f32_to_fp16(-kInf), 0xfc00);
}

TEST(Fp16, Subnormals) {
  EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // half the smallest: tie -> 0 (even)
  EXPECT_EQ(f32_to_fp16(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 units: tie -> 2 (even)
  EXPECT_EQ(f32_to_fp16(F(0x33000001)), 0x0001);          // just above 2^-25 -> 1 unit
  EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(f32_to_fp16(std::ldexp(1023.5f, -24)), 0x0400);  // rounds up out of the subnormals (tie, odd)
  EXPECT_EQ(f32_to_fp16(-std::ldexp(1.0f, -24)), 0x8001);
  EXPECT_EQ(f32_to_fp16(F(0x00000001)), 0x0000);  // fp32 subnormal -> +0
  EXPECT_EQ(f32_to_fp16(F(0x80000001)), 0x8000);  // -> -0
}

TEST(Fp16, ExhaustiveRoundTrip) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = fp16_to_f32(uint16_t(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_fp16(f), h) << std::hex << h;
  }
}

TEST(Bf16, ExhaustiveRoundTrip) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = bf16_to_f32(uint16_t(h));
    if (std::isnan(f)) {
      ASSERT_EQ(f32_to_bf16(f), 0x7fc0);
      continue;
    }
    ASSERT_EQ(f32_to_bf16(f), h) << std::hex << h;
  }
}

// ------------------------------------------------------------------------------------------------ fp8
TEST(Fp8, E4m3LegacyIs240Format) {
  EXPECT_EQ(fp8_e4m3_to_f32(0x38), 1.0f);      // exp 7 = bias
  EXPECT_EQ(fp8_e4m3_to_f32(0x77), 240.0f);    // 0.1110.111 = 2^7 * 1.875
  EXPECT_EQ(fp8_e4m3_to_f32(0x78), kInf);      // exp all ones, mantissa 0
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_f32(0x79)));
  EXPECT_EQ(fp8_e4m3_to_f32(0x01), std::ldexp(1.0f, -9));  // subnormal 2^-6 * 1/8
  EXPECT_EQ(fp8_e4m3_to_f32(0xb8), -1.0f);
  EXPECT_EQ(f32_to_fp8_e4m3(1.0f), 0x38);
  EXPECT_EQ(f32_to_fp8_e4m3(240.0f), 0x77);
  EXPECT_EQ(f32_to_fp8_e4m3(247.0f), 0x77);    // below the 248 tie
  EXPECT_EQ(f32_to_fp8_e4m3(248.0f), 0x78);    // tie with odd mantissa rounds up past max: Inf (FP8Config 0)
  EXPECT_EQ(f32_to_fp8_e4m3(-300.0f), 0xf8);   // overflow -> -Inf
  EXPECT_EQ(f32_to_fp8_e4m3(kInf), 0x78);
  EXPECT_EQ(f32_to_fp8_e4m3(1.0625f), 0x38);   // 1 + 1/16: tie, even -> down
  EXPECT_EQ(f32_to_fp8_e4m3(1.1875f), 0x3a);   // 1 + 3/16: tie, odd -> up to 1.25
  EXPECT_EQ(f32_to_fp8_e4m3(std::ldexp(1.0f, -10)), 0x00);  // half the smallest subnormal: tie -> 0
  EXPECT_EQ(f32_to_fp8_e4m3(std::ldexp(3.0f, -10)), 0x02);  // 1.5 units -> 2
  EXPECT_EQ(f32_to_fp8_e4m3(std::ldexp(7.75f, -9)), 0x08);  // rounds up into the smallest normal 2^-6
  EXPECT_EQ(f32_to_fp8_e4m3(kNaN) & 0x7f, 0x7c);  // canonical NaN 0.1111.100
  EXPECT_EQ(f32_to_fp8(Dtype::float8e4, 300.0f, Fp8Overflow::Saturate), 0x77);
}

TEST(Fp8, E4m3fnOcp448) {
  EXPECT_EQ(fp8_e4m3fn_to_f32(0x7e), 448.0f);  // 0.1111.110 = 2^8 * 1.75
  EXPECT_EQ(fp8_e4m3fn_to_f32(0x78), 256.0f);  // exp 15 is a normal exponent here
  EXPECT_TRUE(std::isnan(fp8_e4m3fn_to_f32(0x7f)));
  EXPECT_TRUE(std::isnan(fp8_e4m3fn_to_f32(0xff)));
  EXPECT_EQ(f32_to_fp8_e4m3fn(448.0f), 0x7e);
  EXPECT_EQ(f32_to_fp8_e4m3fn(464.0f), 0x7e);  // tie between 448 (even) and 480: down
  EXPECT_EQ(f32_to_fp8_e4m3fn(470.0f), 0x7e);  // would round to 480: saturate (default for e4m3fn)
  EXPECT_EQ(f32_to_fp8_e4m3fn(-1e9f), 0xfe);
  EXPECT_EQ(f32_to_fp8_e4m3fn(470.0f, Fp8Overflow::Inf), 0x7f);  // no Inf code: NaN
  EXPECT_EQ(f32_to_fp8_e4m3fn(kInf), 0x7f);
  EXPECT_EQ(f32_to_fp8_e4m3fn(kNaN), 0x7f);
  EXPECT_EQ(default_fp8_overflow(Dtype::float8_e4m3fn), Fp8Overflow::Saturate);
  EXPECT_EQ(default_fp8_overflow(Dtype::float8e4), Fp8Overflow::Inf);
}

TEST(Fp8, E5m2) {
  EXPECT_EQ(fp8_e5m2_to_f32(0x3c), 1.0f);
  EXPECT_EQ(fp8_e5m2_to_f32(0x7b), 57344.0f);  // 2^15 * 1.75
  EXPECT_EQ(fp8_e5m2_to_f32(0x7c), kInf);
  EXPECT_TRUE(std::isnan(fp8_e5m2_to_f32(0x7e)));
  EXPECT_EQ(fp8_e5m2_to_f32(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(f32_to_fp8_e5m2(57344.0f), 0x7b);
  EXPECT_EQ(f32_to_fp8_e5m2(61439.0f), 0x7b);
  EXPECT_EQ(f32_to_fp8_e5m2(61440.0f), 0x7c);  // tie, odd -> up past max -> Inf
  EXPECT_EQ(f32_to_fp8_e5m2(1.125f), 0x3c);    // tie, even -> down
  EXPECT_EQ(f32_to_fp8_e5m2(1.375f), 0x3e);    // tie, odd -> up to 1.5
  EXPECT_EQ(f32_to_fp8_e5m2(kNaN) & 0x7f, 0x7e);
}

TEST(Fp8, E3m4) {
  EXPECT_EQ(fp8_e3m4_to_f32(0x30), 1.0f);      // exp 3 = bias
  EXPECT_EQ(fp8_e3m4_to_f32(0x6f), 15.5f);     // 2^3 * (1 + 15/16)
  EXPECT_EQ(fp8_e3m4_to_f32(0x70), kInf);
  EXPECT_EQ(fp8_e3m4_to_f32(0x01), 0.015625f);  // 2^-2 * 1/16
  EXPECT_EQ(f32_to_fp8_e3m4(15.5f), 0x6f);
  EXPECT_EQ(f32_to_fp8_e3m4(15.75f), 0x70);    // tie, odd -> Inf
  EXPECT_EQ(f32_to_fp8_e3m4(1.03125f), 0x30);  // 1 + 1/32: tie, even -> down
  EXPECT_EQ(f32_to_fp8(Dtype::float8e3, 100.0f, Fp8Overflow::Saturate), 0x6f);
}

TEST(Fp8, ExhaustiveRoundTripEveryFormat) {
  const Dtype ds[] = {Dtype::float8e3, Dtype::float8e4, Dtype::float8e5, Dtype::float8_e4m3fn};
  for (Dtype d : ds) {
    for (int c = 0; c < 256; ++c) {
      uint8_t b = uint8_t(c), out = 0;
      float f = load_one_f32(d, &b);
      store_one_f32(d, f, &out);
      if (std::isnan(f)) {
        float g = load_one_f32(d, &out);
        ASSERT_TRUE(std::isnan(g));
        continue;
      }
      ASSERT_EQ(out, b) << isa::enum_name(d) << " code " << c;
    }
  }
}

// Monotonic: between two adjacent codes, values below the midpoint go down, above go up (checks the rounding
// boundary of every code, not only the hand-picked ones).
TEST(Fp8, MidpointsRoundCorrectlyEverywhere) {
  const Dtype ds[] = {Dtype::float8e3, Dtype::float8e4, Dtype::float8e5, Dtype::float8_e4m3fn};
  for (Dtype d : ds) {
    for (int c = 0; c < 0x7f; ++c) {
      uint8_t lo = uint8_t(c), hi = uint8_t(c + 1), o = 0;
      float a = load_one_f32(d, &lo), b = load_one_f32(d, &hi);
      if (!std::isfinite(a) || !std::isfinite(b)) continue;
      double mid = (double(a) + double(b)) / 2;
      store_one_f32(d, std::nextafter(float(mid), 0.0f), &o);
      ASSERT_EQ(o, lo) << isa::enum_name(d) << " below mid of " << c;
      store_one_f32(d, std::nextafter(float(mid), kInf), &o);
      ASSERT_EQ(o, hi) << isa::enum_name(d) << " above mid of " << c;
      store_one_f32(d, float(mid), &o);
      ASSERT_EQ(o, (c & 1) ? hi : lo) << isa::enum_name(d) << " tie at " << c;  // ties to the even code
    }
  }
}

TEST(Fp8, E8m0Decode) {
  EXPECT_EQ(e8m0_to_f32(127), 1.0f);
  EXPECT_EQ(e8m0_to_f32(130), 8.0f);
  EXPECT_EQ(e8m0_to_f32(0), std::ldexp(1.0f, -127));
  EXPECT_TRUE(std::isnan(e8m0_to_f32(255)));
}

// ------------------------------------------------------------------------------------------------ integers
namespace {
template <typename T> T store_as(Dtype d, float v) {
  T out{};
  store_f32(d, &v, reinterpret_cast<uint8_t *>(&out), 1);
  return out;
}
}  // namespace

TEST(IntConv, RoundNearestEvenAndSaturate) {
  EXPECT_EQ(store_as<int8_t>(Dtype::int8, 2.5f), 2);    // tie -> even
  EXPECT_EQ(store_as<int8_t>(Dtype::int8, 3.5f), 4);
  EXPECT_EQ(store_as<int8_t>(Dtype::int8, -2.5f), -2);
  EXPECT_EQ(store_as<int8_t>(Dtype::int8, 2.6f), 3);
  EXPECT_EQ(store_as<int8_t>(Dtype::int8, 127.6f), 127);  // rounds to 128, saturates
  EXPECT_EQ(store_as<int8_t>(Dtype::int8, -200.0f), -128);
  EXPECT_EQ(store_as<int8_t>(Dtype::int8, kNaN), 0);
  EXPECT_EQ(store_as<int8_t>(Dtype::int8, kInf), 127);
  EXPECT_EQ(store_as<uint8_t>(Dtype::uint8, -1.0f), 0);
  EXPECT_EQ(store_as<uint8_t>(Dtype::uint8, 254.5f), 254);
  EXPECT_EQ(store_as<uint8_t>(Dtype::uint8, 255.5f), 255);
  EXPECT_EQ(store_as<int16_t>(Dtype::int16, 40000.0f), 32767);
  EXPECT_EQ(store_as<uint16_t>(Dtype::uint16, 70000.0f), 65535);
  EXPECT_EQ(store_as<int32_t>(Dtype::int32, 3e9f), INT32_MAX);
  EXPECT_EQ(store_as<int32_t>(Dtype::int32, -3e9f), INT32_MIN);
  EXPECT_EQ(store_as<int32_t>(Dtype::int32, 2147483520.0f), 2147483520);  // largest float below 2^31
  EXPECT_EQ(store_as<uint32_t>(Dtype::uint32, 4294967296.0f), 0xffffffffu);
  EXPECT_EQ(store_as<uint32_t>(Dtype::uint32, 4294967040.0f), 4294967040u);
  EXPECT_EQ(store_as<int64_t>(Dtype::int64, 1e19f), INT64_MAX);
  EXPECT_EQ(store_as<int64_t>(Dtype::int64, -1e19f), INT64_MIN);
  EXPECT_EQ(store_as<uint64_t>(Dtype::uint64, 9223372036854775808.0f), 9223372036854775808ull);
  EXPECT_EQ(store_as<uint64_t>(Dtype::uint64, 1e20f), UINT64_MAX);
  EXPECT_EQ(f32_to_int_sat(-7.5f, -10, 10), -8);
  EXPECT_EQ(f32_to_int_sat(99.0f, -10, 10), 10);
}

TEST(IntConv, LoadWidensExactlyOrRne) {
  int64_t big = (int64_t(1) << 40) + 3;
  float f = 0;
  load_f32(Dtype::int64, reinterpret_cast<const uint8_t *>(&big), &f, 1);
  EXPECT_EQ(f, std::ldexp(1.0f, 40));
  int32_t i = 16777217;  // 2^24 + 1: tie between 2^24 and 2^24 + 2 -> even (2^24)
  load_f32(Dtype::int32, reinterpret_cast<const uint8_t *>(&i), &f, 1);
  EXPECT_EQ(f, 16777216.0f);
  uint8_t u = 200;
  int8_t s = -100;
  EXPECT_EQ(load_one_f32(Dtype::uint8, &u), 200.0f);
  EXPECT_EQ(load_one_f32(Dtype::int8, reinterpret_cast<const uint8_t *>(&s)), -100.0f);
}

TEST(IntLane, LoadStoreI32) {
  int32_t out[4];
  int64_t w[2] = {0x100000005ll, -1};
  load_i32(Dtype::int64, reinterpret_cast<const uint8_t *>(w), out, 2);
  EXPECT_EQ(out[0], 5);  // low 32 bits (wrap)
  EXPECT_EQ(out[1], -1);
  uint16_t u16 = 0xffff;
  load_i32(Dtype::uint16, reinterpret_cast<const uint8_t *>(&u16), out, 1);
  EXPECT_EQ(out[0], 65535);  // zero-extended
  int16_t s16 = -2;
  load_i32(Dtype::int16, reinterpret_cast<const uint8_t *>(&s16), out, 1);
  EXPECT_EQ(out[0], -2);  // sign-extended
  float one = 1.0f;
  load_i32(Dtype::float32, reinterpret_cast<const uint8_t *>(&one), out, 1);
  EXPECT_EQ(out[0], 0x3f800000);  // fp32: bit pattern
  uint16_t bf = 0x4020;           // bf16 2.5
  load_i32(Dtype::bfloat16, reinterpret_cast<const uint8_t *>(&bf), out, 1);
  EXPECT_EQ(out[0], 2);  // narrow float: value, RNE
  int32_t v = 300;
  int8_t o8 = 0;
  store_i32(Dtype::int8, &v, reinterpret_cast<uint8_t *>(&o8), 1);
  EXPECT_EQ(o8, 44);  // 300 mod 256: wrap
  int32_t neg = -1;
  uint64_t o64 = 0;
  store_i32(Dtype::uint64, &neg, reinterpret_cast<uint8_t *>(&o64), 1);
  EXPECT_EQ(o64, 0xffffffffull);
  int32_t three = 3;
  uint16_t obf = 0;
  store_i32(Dtype::bfloat16, &three, reinterpret_cast<uint8_t *>(&obf), 1);
  EXPECT_EQ(obf, 0x4040);  // 3.0 as bf16
}

// ------------------------------------------------------------------------------------------------ bulk
TEST(Bulk, AgreesWithScalarOnRandomBits) {
  std::mt19937 rng(1234);
  std::vector<float> src(4099);
  for (auto &f : src) f = F(rng());
  for (int i = 0; i < 200; ++i) src[size_t(i)] = std::ldexp(float(int(rng() % 2000) - 1000) / 8.0f, int(rng() % 40) - 30);
  const size_t n = src.size();
  std::vector<uint8_t> buf(n * 8);
  store_f32(Dtype::bfloat16, src.data(), buf.data(), int64_t(n));
  for (size_t i = 0; i < n; ++i) {
    uint16_t v;
    std::memcpy(&v, &buf[2 * i], 2);
    ASSERT_EQ(v, f32_to_bf16(src[i])) << i;
  }
  store_f32(Dtype::float16, src.data(), buf.data(), int64_t(n));
  for (size_t i = 0; i < n; ++i) {
    uint16_t v;
    std::memcpy(&v, &buf[2 * i], 2);
    ASSERT_EQ(v, f32_to_fp16(src[i])) << i;
  }
  store_f32(Dtype::float8e5, src.data(), buf.data(), int64_t(n));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(buf[i], f32_to_fp8_e5m2(src[i])) << i;
  std::vector<float> back(n);
  load_f32(Dtype::float8e5, buf.data(), back.data(), int64_t(n));
  for (size_t i = 0; i < n; ++i) {
    float s = fp8_e5m2_to_f32(buf[i]);
    ASSERT_TRUE(U(back[i]) == U(s) || (std::isnan(s) && std::isnan(back[i])));
  }
  // fp16 from random values vs a double-precision reference rounding (independent of the encoder's bit tricks).
  for (size_t i = 0; i < n; ++i) {
    float x = src[i];
    if (!std::isfinite(x) || std::fabs(x) >= 65520.0f) continue;
    float r = fp16_to_f32(f32_to_fp16(x));
    // |r - x| must be <= half an fp16 ulp at r's scale.
    int e;
    std::frexp(std::fabs(x) < std::ldexp(1.0f, -14) ? std::ldexp(1.0f, -14) : x, &e);
    double half_ulp = std::ldexp(1.0, e - 1 - 10 - 1);
    ASSERT_LE(std::fabs(double(r) - double(x)), half_ulp) << x;
  }
}

TEST(Bulk, UnsupportedMxContainersThrow) {
  uint8_t b[4] = {};
  float f = 0;
  EXPECT_THROW(load_f32(Dtype::float8_e4m3fn_x4, b, &f, 1), SemanticError);
  EXPECT_THROW(store_f32(Dtype::float4_e2m1fn_x4, &f, b, 1), SemanticError);
  EXPECT_THROW(store_f32(Dtype::float8_e8m0fnu, &f, b, 1), SemanticError);
  EXPECT_FALSE(dtype_supported(Dtype::float8_e5m2_x4));
  EXPECT_TRUE(dtype_supported(Dtype::float8_e8m0fnu));
}

TEST(Bulk, Float32rIsFp32Storage) {
  float v[2] = {1.1f, -3.3f}, out[2];
  uint8_t buf[8];
  store_f32(Dtype::float32r, v, buf, 2);
  load_f32(Dtype::float32r, buf, out, 2);
  EXPECT_EQ(U(out[0]), U(v[0]));
  EXPECT_EQ(U(out[1]), U(v[1]));
}
