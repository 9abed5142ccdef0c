// Matmult and MatmultSparse on PE (engines/ops/matmult.cpp): transposes, PSUM groups, zero points, perf modes.
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <cstring>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;

namespace {
using V = std::vector<float>;
} // namespace

TEST(OpsMatmult, StationaryTransposeTimesMovingByHand) {
  Harness h;
  auto s = h.b.sbuf("s", {2, 3}), m = h.b.sbuf("m", {2, 4}), ps = h.b.psum("ps", {3, 4});
  h.b.add(InstructionType::Matmult, {P(s.all()), P(m.all())}, {P(ps.all())}).start_tensor_calc(true);
  h.place();
  // S = [[1,2,3],[4,5,6]] (K=2, M=3); Mv = [[1,0,2,1],[0,1,1,-1]] (K=2, N=4)
  h.set(s, {1, 2, 3, 4, 5, 6});
  h.set(m, {1, 0, 2, 1, 0, 1, 1, -1});
  h.run();
  // out[i][j] = S[0][i]*Mv[0][j] + S[1][i]*Mv[1][j]
  EXPECT_EQ(h.get(ps), (V{1, 4, 6, -3,     //
                          2, 5, 9, -3,     //
                          3, 6, 12, -3})); //
}

TEST(OpsMatmult, GroupHeadCopiesLaterInstructionsAccumulate) {
  Harness h;
  auto s = h.b.sbuf("s", {2, 2}), m = h.b.sbuf("m", {2, 2}), ps = h.b.psum("ps", {2, 2});
  h.b.add(InstructionType::Matmult, {P(s.all()), P(m.all())}, {P(ps.all())}).start_tensor_calc(true);
  h.b.add(InstructionType::Matmult, {P(s.all()), P(m.all())}, {P(ps.all())})
      .start_tensor_calc(false).stop_tensor_calc(true);
  h.b.add(InstructionType::Matmult, {P(s.all()), P(m.all())}, {P(ps.all())}).start_tensor_calc(true);
  h.place();
  h.set(s, {1, 0, 0, 1});  // identity: out = moving
  h.set(m, {1, 2, 3, 4});
  h.set(ps, {100, 100, 100, 100});  // stale PSUM content: the group head must not add to it
  h.exec(0);
  EXPECT_EQ(h.get(ps), (V{1, 2, 3, 4}));
  h.exec(1);
  EXPECT_EQ(h.get(ps), (V{2, 4, 6, 8}));
  h.exec(2);
  EXPECT_EQ(h.get(ps), (V{1, 2, 3, 4}));
}

TEST(OpsMatmult, TransposeAndShapeErrors) {
  Harness h;
  auto s = h.b.sbuf("s", {2, 3}), ps = h.b.psum("ps", {3, 2}), bad = h.b.psum("bad", {2, 2});
  auto m = h.b.sbuf("m", {3, 2});
  h.b.add(InstructionType::Matmult, {P(s.all())}, {P(ps.all())}).is_transpose(true);
  h.b.add(InstructionType::Matmult, {P(s.all()), P(s.all())}, {P(bad.all())});
  h.b.add(InstructionType::Matmult, {P(s.all()), P(m.all())}, {P(ps.all())});
  h.b.add(InstructionType::Matmult, {P(s.all()), P(s.all())}, {P(ps.all())})
      .perf_mode(isa::MatmultPerfMode::DoubleRow);
  h.place();
  h.set(s, {1, 2, 3, 4, 5, 6});
  h.set(m, V(6, 1));
  h.exec(0);
  EXPECT_EQ(h.get(ps), (V{1, 4, 2, 5, 3, 6}));
  try {
    h.exec(1);
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "outs[0]");
  }
  EXPECT_THROW(h.exec(2), SemanticError);  // K mismatch 2 vs 3
  try {
    h.exec(3);
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "perf_mode");
  }
}

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

// A group body accumulating into PSUM, through the streamed path (operands straight from PSUM) and the tile
// path (taken when uninitialised-read tracking is on), in fp32 and bf16 PSUM: the same bits, and the hand values.
// s = {1, 2} (M = 2 output partitions, K = 1), v[n] = n % 16 for n < 300. Body 1 writes columns 0..149 of o
// (never written: a copy, o[m][n] = s[m] * v[n]); body 2 writes all 300 columns: columns 0..149 add (2 * s[m] *
// v[n]), columns 150..299 were never written and copy (s[m] * v[n]). Every value is a small integer, exact in
// bf16.
TEST(OpsMatmult, PsumGroupBodyStreamedGivesTheTilePathsBits) {
  for (Dtype dt : {Dtype::float32, Dtype::bfloat16}) {
    SCOPED_TRACE(isa::enum_name(dt));
    std::vector<std::vector<float>> got;
    for (bool tile : {false, true}) {
      Harness h;
      auto s = h.b.sbuf("s", {1, 2}), v = h.b.sbuf("v", {1, 300}), o = h.b.psum("o", {2, 300}, dt);
      h.b.add(InstructionType::Matmult, {P(s.all()), P(v.tile(0, 1, 0, 150))}, {P(o.tile(0, 2, 0, 150))})
          .start_tensor_calc(false);
      h.b.add(InstructionType::Matmult, {P(s.all()), P(v.all())}, {P(o.all())}).start_tensor_calc(false);
      h.place();
      h.set(s, {1, 2});
      V vv(300);
      for (int n = 0; n < 300; ++n) vv[static_cast<size_t>(n)] = float(n % 16);
      h.set(v, vv);
      h.mem->set_track_uninit(tile);
      h.run();
      got.push_back(h.get(o));
      V want(600);
      for (int m = 0; m < 2; ++m)
        for (int n = 0; n < 300; ++n)
          want[static_cast<size_t>(m * 300 + n)] = float((n < 150 ? 2 : 1) * (m + 1) * (n % 16));
      EXPECT_EQ(got.back(), want) << (tile ? "tile path" : "streamed");
    }
    ASSERT_EQ(got[0].size(), got[1].size());
    for (size_t i = 0; i < got[0].size(); ++i) {
      uint32_t a, b;
      std::memcpy(&a, &got[0][i], 4);
      std::memcpy(&b, &got[1][i], 4);
      ASSERT_EQ(a, b) << "i=" << i;
    }
  }
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
