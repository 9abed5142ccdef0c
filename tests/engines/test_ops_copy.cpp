// Copies: Load / Save, TensorCopy casts, the GenericCopy / AbstractCopy thunks and GPSIMDSB2SB
// (engines/ops/copy.cpp). Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <cmath>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;

namespace {
using V = std::vector<float>;
std::vector<uint16_t> raw_u16(const Harness &h, const TensorHandle &t) {
  Access a = whole(t);
  std::vector<uint16_t> v(static_cast<size_t>(a.partitions() * a.free_elements()));
  h.mem->read_raw(a, reinterpret_cast<uint8_t *>(v.data()));
  return v;
}
} // namespace

TEST(OpsCopy, LoadComputeSaveRoundTripWithStridedLoad) {
  Harness h;
  auto in = h.b.input("in", {2, 4}), out = h.b.output("out", {2, 2});
  auto t = h.b.sbuf("t", {2, 2});
  h.b.add(InstructionType::Load, {P(in.at(1, {{4, 2}, {2, 2}}))}, {P(t.all())});  // columns 1 and 3
  h.b.add(InstructionType::Save, {P(t.all())}, {P(out.all())});
  h.place();
  h.set(in, {0, 1, 2, 3, 4, 5, 6, 7});
  h.run();
  EXPECT_EQ(h.get(out), (V{1, 3, 5, 7}));
}

TEST(OpsCopy, TensorCopyFp32ToBf16RoundsToNearestEven) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 4}), y = h.b.sbuf("y", {1, 4}, Dtype::bfloat16);
  h.b.add(InstructionType::TensorCopy, {P(x.all())}, {P(y.all())});
  h.place();
  const float ulp = std::ldexp(1.0f, -7);  // bf16 spacing at 1.0
  // tie -> even (1.0); above tie -> up; tie at odd mantissa -> up to even; plain value exact
  h.set(x, {1.0f + ulp / 2, 1.0f + ulp / 2 + ulp / 8, 1.0f + ulp + ulp / 2, -2.5f});
  h.run();
  std::vector<uint8_t> raw(8);
  h.mem->read_raw(whole(y), raw.data());
  auto u16 = [&](int i) { return int(raw[size_t(2 * i)] | raw[size_t(2 * i + 1)] << 8); };
  EXPECT_EQ(u16(0), 0x3F80);
  EXPECT_EQ(u16(1), 0x3F81);
  EXPECT_EQ(u16(2), 0x3F82);
  EXPECT_EQ(u16(3), 0xC020);
}

// reference sim-elementwise-datamove.md 5.1: GenericCopy and AbstractCopy are one-line thunks to doCopy.
// GenericCopy with a strided source: src 10 11 12 13 14 15, pattern start 1, [step 2, num 3] -> 11 13 15.
// AbstractCopy fp32 -> bf16 is a cast-on-copy: 1.0 = 0x3F800000 -> 0x3F80; -2.5 = 0xC0200000 -> 0xC020;
// 0.75 = 0x3F400000 -> 0x3F40 (all exact in bf16, the low 16 bits are zero).
TEST(OpsCopy, GenericCopyStridedAndAbstractCopyCasts) {
  Harness h;
  auto src = h.b.sbuf("src", {1, 6}), g = h.b.sbuf("g", {1, 3});
  auto f = h.b.sbuf("f", {1, 3}), bf = h.b.sbuf("bf", {1, 3}, Dtype::bfloat16);
  h.b.add(InstructionType::GenericCopy, {P(src.at(1, {{6, 1}, {2, 3}}))}, {P(g.all())});
  h.b.add(InstructionType::AbstractCopy, {P(f.all())}, {P(bf.all())});
  h.place();
  h.set(src, {10, 11, 12, 13, 14, 15});
  h.set(f, {1.0f, -2.5f, 0.75f});
  h.run();
  EXPECT_EQ(h.get(g), (V{11, 13, 15}));
  EXPECT_EQ(raw_u16(h, bf), (std::vector<uint16_t>{0x3F80, 0xC020, 0x3F40}));
}

// GPSIMDSB2SB is dispatched as a plain SBUF -> SBUF copy (dispatch.cpp, INFERRED): [2, 2] 1 2 3 4 lands as is,
// and a [2, 1] column (start 1, partition step 2) picks 2 and 4.
TEST(OpsCopy, Gpsimdsb2sbIsAPlainSbufCopy) {
  Harness h;
  auto a = h.b.sbuf("a", {2, 2}), b = h.b.sbuf("b", {2, 2}), c = h.b.sbuf("c", {2, 1});
  h.b.add(InstructionType::GPSIMDSB2SB, {P(a.all())}, {P(b.all())});
  h.b.add(InstructionType::GPSIMDSB2SB, {P(a.at(1, {{2, 2}, {1, 1}}))}, {P(c.all())});
  h.place();
  h.set(a, {1, 2, 3, 4});
  h.run();
  EXPECT_EQ(h.get(b), (V{1, 2, 3, 4}));
  EXPECT_EQ(h.get(c), (V{2, 4}));
}
