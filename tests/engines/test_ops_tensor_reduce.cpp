// TensorReduce (engines/ops/tensor_reduce.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;
using isa::AxisListType;

namespace {
using V = std::vector<float>;
} // namespace

TEST(OpsTensorReduce, AddAndMaxWithNegateOverXAndXY) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 6});
  auto rx = h.b.sbuf("rx", {2, 2}), rxy = h.b.sbuf("rxy", {2, 1}), mx = h.b.sbuf("mx", {2, 1});
  // View each partition's 6 elements as [2, 3]: ap [[6,2],[3,2],[1,3]].
  Ap v = x.at(0, {{6, 2}, {3, 2}, {1, 3}});
  h.b.add(InstructionType::TensorReduce, {P(v)}, {P(rx.all())}).op(AluOp::add).axis(AxisListType::X).negate(true);
  h.b.add(InstructionType::TensorReduce, {P(v)}, {P(rxy.all())}).op(AluOp::add).axis(AxisListType::XY);
  h.b.add(InstructionType::TensorReduce, {P(v)}, {P(mx.all())})
      .op(AluOp::max).axis(AxisListType::XY).negate(true);
  h.place();
  h.set(x, {1, 2, 3, 4, 5, 6, -1, 7, 0, 2, 2, 9});
  h.run();
  EXPECT_EQ(h.get(rx), (V{-6, -15, -6, -13}));
  EXPECT_EQ(h.get(rxy), (V{21, 19}));
  EXPECT_EQ(h.get(mx), (V{-6, -9}));  // negate after the max fold
}

TEST(OpsTensorReduce, AverageIsARunningMeanAndAxisTooDeepIsAnError) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 4}), y = h.b.sbuf("y", {1, 1}), z = h.b.sbuf("z", {1, 1});
  h.b.add(InstructionType::TensorReduce, {P(x.all())}, {P(y.all())}).op(AluOp::average).axis(AxisListType::X);
  h.b.add(InstructionType::TensorReduce, {P(x.all())}, {P(z.all())}).op(AluOp::add).axis(AxisListType::XYZ);
  h.place();
  h.set(x, {1, 2, 3, 4});
  h.exec(0);
  EXPECT_EQ(h.get(y), (V{2.5f}));  // 0.25 + 0.5 + 0.75 + 1.0, exact in fp32
  try {
    h.exec(1);
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "axis");
  }
}
