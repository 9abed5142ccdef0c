// TensorScalarCache (engines/ops/tensor_scalar_cache.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using A = isa::EngineAccumulationType;
using isa::AluOp;

namespace {
using V = std::vector<float>;
} // namespace

// TensorScalarCache: Cumulative add is a prefix sum of (x * 2); Reduce with LoadAccumulate folds mult from 10.
TEST(OpsTensorScalarCache, CumulativeReduceAndLoad) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 3}), y = h.b.sbuf("y", {2, 3}), r = h.b.sbuf("r", {2, 1});
  auto y2 = h.b.sbuf("y2", {2, 3});
  h.b.add(InstructionType::TensorScalarCache, {P(x.all()), I(2)}, {P(y.all())})
      .op0(AluOp::mult).op1(AluOp::add).tsc_mode(isa::TSCMode::Cumulative).acc(A::ZeroAccumulate);
  h.b.add(InstructionType::TensorScalarCache, {P(x.all()), I(1), I(10)}, {P(r.all())})
      .op0(AluOp::add).op1(AluOp::mult).tsc_mode(isa::TSCMode::Reduce).acc(A::LoadAccumulate);
  // op1 = subtract with reverse1: reg = reg - t (NKI: op1(t, reg) unless reversed), continuing the registers.
  h.b.add(InstructionType::TensorScalarCache, {P(x.all()), I(0)}, {P(y2.all())})
      .op0(AluOp::add).op1(AluOp::subtract).reverse1(true).tsc_mode(isa::TSCMode::Cumulative)
      .acc(A::Accumulate);
  h.place();
  h.set(x, {1, 2, 3, 0, 1, 1});
  h.run();
  EXPECT_EQ(h.get(y), (V{2, 6, 12, 0, 2, 4}));
  EXPECT_EQ(h.get(r), (V{240, 40}));  // 10*2*3*4, 10*1*2*2
  EXPECT_EQ(h.get(y2), (V{239, 237, 234, 40, 39, 38}));
}
