// TensorTensor (engines/ops/tensor_tensor.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "engines/program_builder.hpp"
#include "neuronsim/engines/alu.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;

namespace {
using V = std::vector<float>;

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The same bits, except that when both operands (element k of a and b) are NaN, which payload the NaN result
// carries is the compiler's choice (test_alu.cpp, agree): both must then be NaNs. k = SIZE_MAX: not computed.
bool same(float x, float y, size_t k, const V &va, const V &vb) {
  if (bits_of(x) == bits_of(y)) return true;
  return k != SIZE_MAX && std::isnan(va[k]) && std::isnan(vb[k]) && std::isnan(x) && std::isnan(y);
}

// TensorTensor y = a op b on [4, 1200] SBUF tensors of the given dtypes; `strided` runs it on every other
// element of each row instead ([[1200, 4], [2, 600]] from element 1); `in_place` writes the result over a.
// Returns y (or a) read back as fp32, and how many of the output's elements were left unwritten.
struct TtRun {
  std::vector<float> out;
  int64_t unwritten = 0;
};
TtRun run_tt(AluOp op, Dtype da, Dtype db, Dtype dy, const V &va, const V &vb, bool strided, bool tile,
             bool in_place = false) {
  constexpr int64_t kP = 4, kF = 1200;
  Harness h;
  auto a = h.b.sbuf("a", {kP, kF}, da), b = h.b.sbuf("b", {kP, kF}, db), y = h.b.sbuf("y", {kP, kF}, dy);
  auto view = [&](const TensorHandle &t) { return strided ? t.at(1, {{kF, kP}, {2, kF / 2}}) : t.all(); };
  const TensorHandle &o = in_place ? a : y;
  h.b.add(InstructionType::TensorTensor, {P(view(a)), P(view(b))}, {P(view(o))}).op(op);
  h.place();
  h.set(a, va);
  h.set(b, vb);
  h.mem->set_track_uninit(tile);  // the streamed path refuses to run while reads are counted
  h.run();
  TtRun r;
  h.mem->set_track_uninit(true);
  const int64_t before = h.mem->uninit_reads();
  r.out = h.get(o);
  r.unwritten = h.mem->uninit_reads() - before;
  return r;
}
} // namespace

TEST(OpsTensorTensor, SubtractIsFirstMinusSecondAndBitvecInInt32) {
  Harness h;
  auto a = h.b.sbuf("a", {2, 2}), b = h.b.sbuf("b", {2, 2}), y = h.b.sbuf("y", {2, 2});
  auto ia = h.b.sbuf("ia", {1, 2}, Dtype::int32), ib = h.b.sbuf("ib", {1, 2}, Dtype::int32);
  auto iy = h.b.sbuf("iy", {1, 2}, Dtype::int32);
  h.b.add(InstructionType::TensorTensor, {P(a.all()), P(b.all())}, {P(y.all())}).op(AluOp::subtract);
  h.b.add(InstructionType::TensorTensor, {P(ia.all()), P(ib.all())}, {P(iy.all())}).op(AluOp::bitwise_xor);
  h.place();
  h.set(a, {10, 20, 30, 40});
  h.set(b, {1, 2, 3, 4});
  std::vector<int32_t> va{0x0F0F0F0F, 7}, vb{0x00FF00FF, 5};
  h.mem->write_i32(whole(ia), va.data());
  h.mem->write_i32(whole(ib), vb.data());
  h.run();
  EXPECT_EQ(h.get(y), (V{9, 18, 27, 36}));
  std::vector<int32_t> r(2);
  h.mem->read_i32(whole(iy), r.data());
  EXPECT_EQ(r[0], 0x0FF00FF0);
  EXPECT_EQ(r[1], 2);
}

// The streamed fp32 lane (the fast path: operands straight from SBUF, row by row) against the tile path (the
// same instruction with uninitialised-read tracking on, which the streamed path leaves to the tile path; and
// with the output written over an input, which it refuses too) and the scalar oracle, bit for bit, for every op
// of the fp32 lane: every pair of special values (NaNs with different payloads, infinities, denormals, signed
// zeros) and random bit patterns, in fp32, in bf16/fp32 mixes (converted through the block buffers), and on a
// strided view. The tile path and the oracle are what every TensorTensor ran before the streamed path existed.
TEST(OpsTensorTensor, StreamedFp32LaneGivesTheTilePathsBitsForEveryOp) {
  const uint32_t special_bits[] = {0x00000000u, 0x80000000u, 0x3f800000u, 0xc0e00000u, 0x00000001u, 0x807fffffu,
                                   0x7f7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc12345u, 0x7f800001u,
                                   0x41f80000u, 0x3effffffu};
  V va, vb;
  for (uint32_t u : special_bits)
    for (uint32_t v : special_bits) {
      va.push_back(float_of(u));
      vb.push_back(float_of(v));
    }
  std::mt19937 rng(1234);
  while (va.size() < 4 * 1200) {
    va.push_back(float_of(rng()));
    vb.push_back(float_of(rng()));
  }
  struct Case {
    Dtype da, db, dy;
    bool strided;
  };
  const Case cases[] = {{Dtype::float32, Dtype::float32, Dtype::float32, false},
                        {Dtype::float32, Dtype::float32, Dtype::float32, true},
                        {Dtype::bfloat16, Dtype::float32, Dtype::bfloat16, false},
                        {Dtype::float32, Dtype::bfloat16, Dtype::float32, true}};
  for (const auto &info : isa::alu_ops()) {
    if (info.bitvec) continue;  // the int32 lane
    SCOPED_TRACE(info.name);
    for (const Case &c : cases) {
      SCOPED_TRACE(std::string(isa::enum_name(c.da)) + " " + isa::enum_name(c.db) + " -> " + isa::enum_name(c.dy) +
                   (c.strided ? ", strided" : ""));
      const TtRun fast = run_tt(info.op, c.da, c.db, c.dy, va, vb, c.strided, false);
      const TtRun tile = run_tt(info.op, c.da, c.db, c.dy, va, vb, c.strided, true);
      ASSERT_EQ(fast.out.size(), tile.out.size());
      EXPECT_EQ(fast.unwritten, c.strided ? 4 * 600 : 0);  // the streamed writes are marked written
      // Output element i holds a[i] op b[i]; the strided view leaves the even ones unwritten (poison in both).
      auto input = [&](size_t i) { return c.strided && i % 2 == 0 ? SIZE_MAX : i; };
      for (size_t i = 0; i < fast.out.size(); ++i)
        ASSERT_TRUE(same(fast.out[i], tile.out[i], input(i), va, vb))
            << "i=" << i << std::hex << " streamed 0x" << bits_of(fast.out[i]) << ", tile 0x" << bits_of(tile.out[i]);
      if (c.da != Dtype::float32 || c.db != Dtype::float32 || c.strided) continue;
      for (size_t i = 0; i < fast.out.size(); ++i) {
        const float want = engines::alu_apply(info.op, va[i], vb[i]);
        ASSERT_TRUE(same(fast.out[i], want, i, va, vb))
            << "i=" << i << std::hex << " got 0x" << bits_of(fast.out[i]) << ", oracle 0x" << bits_of(want);
      }
      const TtRun over = run_tt(info.op, c.da, c.db, c.dy, va, vb, false, false, true);  // y over a: tile path
      for (size_t i = 0; i < fast.out.size(); ++i)
        ASSERT_TRUE(same(fast.out[i], over.out[i], i, va, vb)) << "in place, i=" << i;
    }
  }
}
