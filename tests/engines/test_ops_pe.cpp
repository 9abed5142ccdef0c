// engines/ops PE coverage: Matmult zero points, perf modes, PSUM group semantics, MatmultSparse, QuantizeMx and
// MatmultMx. Expected values are worked out by hand beside each check.
#include <gtest/gtest.h>

#include <cstring>

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

// uint8 zero points: weights {3, 5} - 1 = {2, 4}, ifmap {10, 20} - 10 = {0, 10}: 2*0 + 4*10 = 40.
TEST(OpsMatmult, ZeroPointOffsets) {
  Harness h;
  auto s = h.b.sbuf("s", {2, 1}, Dtype::uint8), v = h.b.sbuf("v", {2, 1}, Dtype::uint8), o = h.b.psum("o", {1, 1});
  h.b.add(InstructionType::Matmult, {P(s.all()), P(v.all())}, {P(o.all())})
      .weights_quant_offset(1).ifmap_quant_offset(10);
  h.place();
  h.set(s, {3, 5});
  h.set(v, {10, 20});
  h.run();
  EXPECT_EQ(h.get(o), (V{40}));
}

// One partition carrying two K-rows. Stationary {1, 2, 3, 4} as [1, 2M], moving {10, 100} as [1, 2N]:
// DoubleRow de-interleaves the stationary: W = [[1, 3], [2, 4]] (row r = elements r, r + 2), moving rows 10 | 100:
// out = (1*10 + 2*100, 3*10 + 4*100) = (210, 430). DoublePixel splits both in halves: W = [[1, 2], [3, 4]]:
// (1*10 + 3*100, 2*10 + 4*100) = (310, 420). DoubleColumn has no numeric effect: K = 1, a [1, 4] x [1, 2] product.
TEST(OpsMatmult, PerfModesDoubleRowAndDoublePixel) {
  Harness h;
  auto s = h.b.sbuf("s", {1, 4}), v = h.b.sbuf("v", {1, 2});
  auto o1 = h.b.psum("o1", {2, 1}), o2 = h.b.psum("o2", {2, 1}), o3 = h.b.psum("o3", {4, 2});
  h.b.add(InstructionType::Matmult, {P(s.all()), P(v.all())}, {P(o1.all())})
      .perf_mode(isa::MatmultPerfMode::DoubleRow);
  h.b.add(InstructionType::Matmult, {P(s.all()), P(v.all())}, {P(o2.all())})
      .perf_mode(isa::MatmultPerfMode::DoublePixel);
  h.b.add(InstructionType::Matmult, {P(s.all()), P(v.all())}, {P(o3.all())})
      .perf_mode(isa::MatmultPerfMode::DoubleColumn);
  h.place();
  h.set(s, {1, 2, 3, 4});
  h.set(v, {10, 100});
  h.run();
  EXPECT_EQ(h.get(o1), (V{210, 430}));
  EXPECT_EQ(h.get(o2), (V{310, 420}));
  EXPECT_EQ(h.get(o3), (V{10, 100, 20, 200, 30, 300, 40, 400}));
}

// A group body onto never-written PSUM copies (birsim's written shadow), later bodies add, a head resets.
TEST(OpsMatmult, PsumGroupFirstWriteCopiesThenAdds) {
  Harness h;
  auto s = h.b.sbuf("s", {1, 1}), v = h.b.sbuf("v", {1, 2}), o = h.b.psum("o", {1, 2});
  auto p1 = h.b.sbuf("p1", {1, 2}), p2 = h.b.sbuf("p2", {1, 2});
  h.b.add(InstructionType::Matmult, {P(s.all()), P(v.all())}, {P(o.all())}).start_tensor_calc(false);  // copy
  h.b.add(InstructionType::Matmult, {P(s.all()), P(v.all())}, {P(o.all())}).start_tensor_calc(false);  // add
  h.b.add(InstructionType::TensorCopy, {P(o.all())}, {P(p1.all())});
  h.b.add(InstructionType::Matmult, {P(s.all()), P(v.all())}, {P(o.all())}).start_tensor_calc(true);   // head
  h.b.add(InstructionType::TensorCopy, {P(o.all())}, {P(p2.all())});
  h.place();
  h.set(s, {2});
  h.set(v, {1, 5});
  h.run();
  EXPECT_EQ(h.get(p1), (V{4, 20}));
  EXPECT_EQ(h.get(p2), (V{2, 10}));
}

// Sparse: active stationary rows {2, 3} belong to dense rows {3, 0} of the moving {1, 10, 100, 1000}:
// 2*1000 + 3*1 = 2003.
TEST(OpsMatmult, SparseActiveRows) {
  Harness h;
  auto s = h.b.sbuf("s", {2, 1}), ix = h.b.sbuf("ix", {2, 1}, Dtype::int32), v = h.b.sbuf("v", {4, 1});
  auto o = h.b.psum("o", {1, 1});
  h.b.add(InstructionType::MatmultSparse, {P(s.all()), P(v.all()), P(ix.all())}, {P(o.all())});
  h.place();
  h.set(s, {2, 3});
  h.set(ix, {3, 0});
  h.set(v, {1, 10, 100, 1000});
  h.run();
  EXPECT_EQ(h.get(o), (V{2003}));
}

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
