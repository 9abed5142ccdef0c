// engines/ops elementwise and reduce families, each with a small hand-computed case.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;
using isa::AxisListType;

namespace {
isa::Arg A(const Ap &a) { return Builder::ap(a); }
using V = std::vector<float>;
} // namespace

TEST(OpsTensorScalar, PtrSubtractImmediateWithAndWithoutReverse0) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 2}), y = h.b.sbuf("y", {2, 2}), z = h.b.sbuf("z", {2, 2});
  // The compiler's form for nki tensor_scalar(t, subtract, 1.0) (reference bir-json.md 1.8).
  h.b.add(InstructionType::TensorScalarPtr, {A(x.all()), I(1.0)}, {A(y.all())})
      .op0(AluOp::subtract).op1(AluOp::bypass);
  h.b.add(InstructionType::TensorScalarPtr, {A(x.all()), I(1.0)}, {A(z.all())})
      .op0(AluOp::subtract).op1(AluOp::bypass).reverse0(true);
  h.place();
  h.set(x, {1, 2, 3, 4});
  h.run();
  EXPECT_EQ(h.get(y), (V{0, 1, 2, 3}));     // x - 1
  EXPECT_EQ(h.get(z), (V{0, -1, -2, -3}));  // 1 - x
}

TEST(OpsTensorScalar, TwoStageOp0ThenOp1WithReverse1) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 3}), y = h.b.sbuf("y", {1, 3}), z = h.b.sbuf("z", {1, 3});
  h.b.add(InstructionType::TensorScalar, {A(x.all())}, {A(y.all())})
      .op0(AluOp::mult).const0(2.0).op1(AluOp::add).const1(3.0);
  h.b.add(InstructionType::TensorScalar, {A(x.all())}, {A(z.all())})
      .op0(AluOp::mult).const0(2.0).op1(AluOp::subtract).const1(3.0).reverse1(true);
  h.place();
  h.set(x, {1, 2, 5});
  h.run();
  EXPECT_EQ(h.get(y), (V{5, 7, 13}));    // 2x + 3
  EXPECT_EQ(h.get(z), (V{1, -1, -7}));   // 3 - 2x
}

TEST(OpsTensorScalar, PerPartitionScalarTensorsBroadcastAlongFree) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 3}), s0 = h.b.sbuf("s0", {2, 1}), s1 = h.b.sbuf("s1", {2, 1});
  auto y = h.b.sbuf("y", {2, 3});
  h.b.add(InstructionType::TensorScalarPtr, {A(x.all()), A(s0.all()), A(s1.all())}, {A(y.all())})
      .op0(AluOp::add).op1(AluOp::mult);
  h.place();
  h.set(x, {1, 2, 3, 4, 5, 6});
  h.set(s0, {10, 20});
  h.set(s1, {2, -1});
  h.run();
  EXPECT_EQ(h.get(y), (V{22, 24, 26, -24, -25, -26}));  // (x + s0[p]) * s1[p]
}

TEST(OpsTensorScalar, BadScalarShapeIsSemanticErrorNamingTheOperand) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 3}), s = h.b.sbuf("s", {2, 2}), y = h.b.sbuf("y", {2, 3});
  h.b.add(InstructionType::TensorScalarPtr, {A(x.all()), A(s.all())}, {A(y.all())}).op0(AluOp::add);
  h.place();
  h.set(x, V(6, 0));
  h.set(s, V(4, 0));
  try {
    h.run();
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "ins[1]");
  }
}

TEST(OpsTensorTensor, SubtractIsFirstMinusSecondAndBitvecInInt32) {
  Harness h;
  auto a = h.b.sbuf("a", {2, 2}), b = h.b.sbuf("b", {2, 2}), y = h.b.sbuf("y", {2, 2});
  auto ia = h.b.sbuf("ia", {1, 2}, Dtype::int32), ib = h.b.sbuf("ib", {1, 2}, Dtype::int32);
  auto iy = h.b.sbuf("iy", {1, 2}, Dtype::int32);
  h.b.add(InstructionType::TensorTensor, {A(a.all()), A(b.all())}, {A(y.all())}).op(AluOp::subtract);
  h.b.add(InstructionType::TensorTensor, {A(ia.all()), A(ib.all())}, {A(iy.all())}).op(AluOp::bitwise_xor);
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

TEST(OpsTensorReduce, AddAndMaxWithNegateOverXAndXY) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 6});
  auto rx = h.b.sbuf("rx", {2, 2}), rxy = h.b.sbuf("rxy", {2, 1}), mx = h.b.sbuf("mx", {2, 1});
  // View each partition's 6 elements as [2, 3]: ap [[6,2],[3,2],[1,3]].
  Ap v = x.at(0, {{6, 2}, {3, 2}, {1, 3}});
  h.b.add(InstructionType::TensorReduce, {A(v)}, {A(rx.all())}).op(AluOp::add).axis(AxisListType::X).negate(true);
  h.b.add(InstructionType::TensorReduce, {A(v)}, {A(rxy.all())}).op(AluOp::add).axis(AxisListType::XY);
  h.b.add(InstructionType::TensorReduce, {A(v)}, {A(mx.all())})
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
  h.b.add(InstructionType::TensorReduce, {A(x.all())}, {A(y.all())}).op(AluOp::average).axis(AxisListType::X);
  h.b.add(InstructionType::TensorReduce, {A(x.all())}, {A(z.all())}).op(AluOp::add).axis(AxisListType::XYZ);
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

TEST(OpsPool, AvgAndMaxOverTheTwoInnermostDims) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 8}), a = h.b.sbuf("a", {2, 2}), m = h.b.sbuf("m", {2, 2});
  // Per partition two 2x2 windows: [[8,2],[4,2],[2,2],[1,2]].
  Ap v = x.at(0, {{8, 2}, {4, 2}, {2, 2}, {1, 2}});
  h.b.add(InstructionType::Pool, {A(v)}, {A(a.all())}).pool_func(isa::PoolFunctionType::Avg);
  h.b.add(InstructionType::Pool, {A(v)}, {A(m.all())}).pool_func(isa::PoolFunctionType::Max);
  h.place();
  h.set(x, {1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4, 0, 0, 0, 8});
  h.run();
  EXPECT_EQ(h.get(a), (V{2.5f, 6.5f, -2.5f, 2.0f}));
  EXPECT_EQ(h.get(m), (V{4, 8, -1, 8}));
}

TEST(OpsSelect, StrictPredicateAndImmediateFalse) {
  Harness h;
  auto p = h.b.sbuf("p", {1, 4}), t = h.b.sbuf("t", {1, 4}), y = h.b.sbuf("y", {1, 4});
  h.b.add(InstructionType::Select, {A(p.all()), A(t.all()), I(-5.0)}, {A(y.all())});
  h.place();
  h.set(p, {1, 0, 0, 1});
  h.set(t, {10, 20, 30, 40});
  h.run();
  EXPECT_EQ(h.get(y), (V{10, -5, -5, 40}));
  h.set(p, {1, 2, 0, 1});
  EXPECT_THROW(h.run(), SimulationError);
}

TEST(OpsCopyPredicated, CopiesWherePredicateHoldsAndReversePredInverts) {
  Harness h;
  auto s = h.b.sbuf("s", {1, 4}), p = h.b.sbuf("p", {1, 4}, Dtype::uint8);
  auto y = h.b.sbuf("y", {1, 4}), z = h.b.sbuf("z", {1, 4});
  h.b.add(InstructionType::CopyPredicated, {A(s.all()), A(p.all())}, {A(y.all())});
  h.b.add(InstructionType::CopyPredicated, {A(s.all()), A(p.all())}, {A(z.all())}).reverse_pred(true);
  h.place();
  h.set(s, {1, 2, 3, 4});
  h.set(y, {0, 0, 0, 0});
  h.set(z, {0, 0, 0, 0});
  h.set(p, {1, 0, 3, 0});
  h.run();
  EXPECT_EQ(h.get(y), (V{1, 0, 3, 0}));
  EXPECT_EQ(h.get(z), (V{0, 2, 0, 4}));
}

TEST(OpsTensorScalar, BitvecImmediateKeepsItsExactBits) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 2}, Dtype::int32), y = h.b.sbuf("y", {1, 2}, Dtype::int32);
  // 0x7FFFFF01 is not representable in fp32; the int32 lane must see it exactly.
  h.b.add(InstructionType::TensorScalarPtr, {A(x.all()), I(double(0x7FFFFF01))}, {A(y.all())})
      .op0(AluOp::bitwise_and);
  h.place();
  std::vector<int32_t> v{-1, 0x0F0F0F0F};
  h.mem->write_i32(whole(x), v.data());
  h.run();
  std::vector<int32_t> r(2);
  h.mem->read_i32(whole(y), r.data());
  EXPECT_EQ(r[0], 0x7FFFFF01);
  EXPECT_EQ(r[1], 0x0F0F0F01);
}
