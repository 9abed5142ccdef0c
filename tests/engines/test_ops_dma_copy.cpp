// DMACopy modes and the DMADescriptor family (engines/ops/dma_copy.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;

namespace {
using V = std::vector<float>;
} // namespace

// DMA CCE: add with constants 2 and 0.5 -> 2a + 0.5b; max folds from the first input. DMADescriptorCopy copies.
TEST(OpsDma, CceAddMaxAndDescriptorCopy) {
  Harness h;
  auto a = h.b.sbuf("a", {1, 3}), b = h.b.sbuf("b", {1, 3}), s = h.b.sbuf("s", {1, 3}), mx = h.b.sbuf("mx", {1, 3});
  auto c = h.b.sbuf("c", {1, 3});
  h.b.add(InstructionType::DMACopy, {P(a.all()), P(b.all())}, {P(s.all())})
      .copy_mode(isa::CopyMode::CCE).cce_op(AluOp::add).constants({2.0, 0.5});
  h.b.add(InstructionType::DMACopy, {P(a.all()), P(b.all())}, {P(mx.all())})
      .copy_mode(isa::CopyMode::CCE).cce_op(AluOp::max);
  h.b.add(InstructionType::DMADescriptorCopy, {P(b.all())}, {P(c.all())});
  // The descriptor form names its reduction `op`: 2a + 0.5b again.
  auto sd = h.b.sbuf("sd", {1, 3});
  h.b.add(InstructionType::DMADescriptorCCE, {P(a.all()), P(b.all())}, {P(sd.all())}).op(AluOp::add).constants({2.0, 0.5});
  h.place();
  h.set(a, {-1, 2, -3});
  h.set(b, {-4, 4, -2});
  h.run();
  EXPECT_EQ(h.get(s), (V{-4, 6, -7}));
  EXPECT_EQ(h.get(sd), (V{-4, 6, -7}));
  EXPECT_EQ(h.get(mx), (V{-1, 4, -2}));
  EXPECT_EQ(h.get(c), (V{-4, 4, -2}));
}

TEST(OpsDma, CopyTransposeAndReplicate) {
  Harness h;
  auto a = h.b.dram("a", {2, 3});
  auto tc = h.b.sbuf("tc", {2, 3}), tt = h.b.sbuf("tt", {3, 2}), tr = h.b.sbuf("tr", {4, 3});
  h.b.add(InstructionType::DMACopy, {P(a.all())}, {P(tc.all())}).copy_mode(isa::CopyMode::Copy);
  // [P=2, F=3] padded to [W=1, Z=1, Y=2, X=3]; WZXY swaps the last two axes.
  h.b.add(InstructionType::DMACopy, {P(a.all())}, {P(tt.all())})
      .copy_mode(isa::CopyMode::Transpose).transpose_op(isa::TransposeOps::WZXY);
  h.b.add(InstructionType::DMACopy, {P(tc.all())}, {P(tr.all())}).copy_mode(isa::CopyMode::Replicate);
  h.b.add(InstructionType::DMACopy, {P(a.all())}, {P(tc.all())}).copy_mode(isa::CopyMode::Dynamic);
  h.place();
  h.set(a, {1, 2, 3, 4, 5, 6});
  h.exec(0);
  h.exec(1);
  h.exec(2);
  EXPECT_EQ(h.get(tc), (V{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(h.get(tt), (V{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(h.get(tr), (V{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
  try {
    h.exec(3);
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "mode");
  }
}

// reference sim-bn-rng-collective-dma.md 5: descriptors re-dispatch to the DMACopy do* bodies (dma_copy.cpp).
// DMADescriptor (the base) follows its copy mode like DMACopy:
//   mode Copy (the default):  a 1 2 3 4 5 6 -> 1 2 3 4 5 6
//   mode Replicate, src [2, 2] 1 2 3 4 -> dst [4, 2]: partition r takes src partition r % 2 -> 1 2 3 4 1 2 3 4
//   mode Transpose, WZXY on [2, 3] (padded [W=1, Z=1, Y=2, X=3]; output axes W Z X Y) -> [3, 2] 1 4 2 5 3 6
// DMADescriptorTranspose forces Transpose: the same 1 4 2 5 3 6; DMADescriptorReplicate forces Replicate:
// src [1, 3] 7 8 9 -> dst [3, 3] 7 8 9 7 8 9 7 8 9 (even with mode Copy set, which it ignores).
TEST(OpsDma, DescriptorBaseFollowsItsModeAndLeavesForceTheirs) {
  Harness h;
  auto a = h.b.sbuf("a", {2, 3}), cp = h.b.sbuf("cp", {2, 3}), tr = h.b.sbuf("tr", {3, 2}), tr2 = h.b.sbuf("tr2", {3, 2});
  auto q = h.b.sbuf("q", {2, 2}), rep = h.b.sbuf("rep", {4, 2});
  auto s = h.b.sbuf("s", {1, 3}), rep2 = h.b.sbuf("rep2", {3, 3});
  h.b.add(InstructionType::DMADescriptor, {P(a.all())}, {P(cp.all())});
  h.b.add(InstructionType::DMADescriptor, {P(q.all())}, {P(rep.all())}).copy_mode(isa::CopyMode::Replicate);
  h.b.add(InstructionType::DMADescriptor, {P(a.all())}, {P(tr.all())})
      .copy_mode(isa::CopyMode::Transpose).transpose_op(isa::TransposeOps::WZXY);
  h.b.add(InstructionType::DMADescriptorTranspose, {P(a.all())}, {P(tr2.all())}).transpose_op(isa::TransposeOps::WZXY);
  h.b.add(InstructionType::DMADescriptorReplicate, {P(s.all())}, {P(rep2.all())}).copy_mode(isa::CopyMode::Copy);
  h.place();
  h.set(a, {1, 2, 3, 4, 5, 6});
  h.set(q, {1, 2, 3, 4});
  h.set(s, {7, 8, 9});
  h.run();
  EXPECT_EQ(h.get(cp), (V{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(h.get(rep), (V{1, 2, 3, 4, 1, 2, 3, 4}));
  EXPECT_EQ(h.get(tr), (V{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(h.get(tr2), (V{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(h.get(rep2), (V{7, 8, 9, 7, 8, 9, 7, 8, 9}));
}

// DMADescriptorTranspose with transpose_op None is the identity copy (doDMATranspose); DMADescriptorReplicate
// refuses dst partitions that are not a multiple of the source's (3 vs 2), naming outs[0].
TEST(OpsDma, DescriptorTransposeNoneCopiesAndReplicateChecksPartitions) {
  Harness h;
  auto a = h.b.sbuf("a", {2, 3}), c = h.b.sbuf("c", {2, 3}), r = h.b.sbuf("r", {3, 3});
  h.b.add(InstructionType::DMADescriptorTranspose, {P(a.all())}, {P(c.all())});
  h.b.add(InstructionType::DMADescriptorReplicate, {P(a.all())}, {P(r.all())});
  h.place();
  h.set(a, {1, 2, 3, 4, 5, 6});
  h.exec(0);
  EXPECT_EQ(h.get(c), (V{1, 2, 3, 4, 5, 6}));
  try {
    h.exec(1);
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "outs[0]");
  }
}
