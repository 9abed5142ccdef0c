// QuantizeMx and MatmultMx (engines/ops/mx.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;

namespace {
using V = std::vector<float>;
std::vector<uint8_t> raw(const Harness &h, const TensorHandle &t) {
  Access a = whole(t);
  std::vector<uint8_t> v(static_cast<size_t>(a.partitions() * a.free_elements() * isa::dtype_size(a.dtype)));
  h.mem->read_raw(a, v.data());
  return v;
}
} // namespace

// QuantizeMx to e4m3fn x4: block of ones with one 3.0 -> max exponent byte 128 (3.0), E = 128 - 8 = 120,
// data x 2^7: 3 -> 384 = 1.5*2^8 = 0x7C, 1 -> 128 = 2^7 = 0x70. All ones: E = 127 - 8 = 119, 1 -> 256 = 0x78.
// MatmultMx of the two (32 contraction rows, dequantized back to 3 and 31 ones, times 1) = 34.
TEST(OpsMx, QuantizeE4m3AndMatmultMxRoundTrip) {
  Harness h;
  auto x1 = h.b.sbuf("x1", {8, 4}, Dtype::bfloat16), x2 = h.b.sbuf("x2", {8, 4}, Dtype::bfloat16);
  auto d1 = h.b.sbuf("d1", {8, 1}, Dtype::float8_e4m3fn_x4), d2 = h.b.sbuf("d2", {8, 1}, Dtype::float8_e4m3fn_x4);
  auto s1 = h.b.sbuf("s1", {1, 1}, Dtype::uint8), s2 = h.b.sbuf("s2", {1, 1}, Dtype::uint8);
  auto o = h.b.psum("o", {1, 1});
  h.b.add(InstructionType::QuantizeMx, {P(x1.all())}, {P(d1.all()), P(s1.all())});
  h.b.add(InstructionType::QuantizeMx, {P(x2.all())}, {P(d2.all()), P(s2.all())});
  h.b.add(InstructionType::MatmultMx, {P(d1.all()), P(d2.all()), P(s1.all()), P(s2.all())}, {P(o.all())});
  h.place();
  V ones(32, 1.0f), with3 = ones;
  with3[0] = 3.0f;
  h.set(x1, with3);
  h.set(x2, ones);
  h.run();
  EXPECT_EQ(raw(h, s1), (std::vector<uint8_t>{120}));
  EXPECT_EQ(raw(h, s2), (std::vector<uint8_t>{119}));
  std::vector<uint8_t> want1(32, 0x70);
  want1[0] = 0x7C;
  EXPECT_EQ(raw(h, d1), want1);
  EXPECT_EQ(raw(h, d2), std::vector<uint8_t>(32, 0x78));
  EXPECT_EQ(h.get(o), (V{34}));
}

// FP4 e2m1: block max 6 or 7 has exponent byte 129, E = 129 - 2 = 127 (x 1). 6 -> 6 (nibble 7), 0.75 -> tie
// 0.5 | 1.0 -> even 1.0 (2), 5 -> tie 4 | 6 -> even 4 (6), 7 -> tie 6 | 8 -> 8 overflows -> saturate 6 (7):
// container nibbles 7 2 6 7 (low first) = 0x7627.
TEST(OpsMx, QuantizeFp4RneAndSaturate) {
  Harness h;
  auto x = h.b.sbuf("x", {8, 4}, Dtype::float32), d = h.b.sbuf("d", {8, 1}, Dtype::float4_e2m1fn_x4);
  auto s = h.b.sbuf("s", {1, 1}, Dtype::uint8);
  h.b.add(InstructionType::QuantizeMx, {P(x.all())}, {P(d.all()), P(s.all())});
  h.place();
  V v(32, 0.0f);
  v[0] = 6;
  v[1] = 0.75f;
  v[2] = 5;
  v[3] = 7;
  h.set(x, v);
  h.run();
  EXPECT_EQ(raw(h, s), (std::vector<uint8_t>{127}));
  std::vector<uint8_t> want(16, 0);
  want[0] = 0x27;
  want[1] = 0x76;
  EXPECT_EQ(raw(h, d), want);
}

// nki_scale_rule (NKI's nki.isa.quantize_mx page: X = 2^(floor(log2 amax) - (Emax - 1))). e4m3fn, Emax 8: a block
// of ones with one 3.0 has max exponent byte 128, E = 128 - 7 = 121 (X = 2^-6), data x 2^6: 3 -> 192 = 1.5*2^7 =
// 0x74, 1 -> 64 = 2^6 = 0x68. An all-zero block: E = max(0, 0 - 7) = 0 (2^-127, no floor to 1); its data are 0.
TEST(OpsMx, QuantizeByNkiScaleRule) {
  Harness h;
  auto x1 = h.b.sbuf("x1", {8, 4}, Dtype::bfloat16), x2 = h.b.sbuf("x2", {8, 4}, Dtype::bfloat16);
  auto d1 = h.b.sbuf("d1", {8, 1}, Dtype::float8_e4m3fn_x4), d2 = h.b.sbuf("d2", {8, 1}, Dtype::float8_e4m3fn_x4);
  auto s1 = h.b.sbuf("s1", {1, 1}, Dtype::uint8), s2 = h.b.sbuf("s2", {1, 1}, Dtype::uint8);
  h.b.add(InstructionType::QuantizeMx, {P(x1.all())}, {P(d1.all()), P(s1.all())}).nki_scale_rule(true);
  h.b.add(InstructionType::QuantizeMx, {P(x2.all())}, {P(d2.all()), P(s2.all())}).nki_scale_rule(true);
  h.place();
  V with3(32, 1.0f);
  with3[0] = 3.0f;
  h.set(x1, with3);
  h.set(x2, V(32, 0.0f));
  h.run();
  EXPECT_EQ(raw(h, s1), (std::vector<uint8_t>{121}));
  EXPECT_EQ(raw(h, s2), (std::vector<uint8_t>{0}));
  std::vector<uint8_t> want1(32, 0x68);
  want1[0] = 0x74;
  EXPECT_EQ(raw(h, d1), want1);
  EXPECT_EQ(raw(h, d2), std::vector<uint8_t>(32, 0));
}
