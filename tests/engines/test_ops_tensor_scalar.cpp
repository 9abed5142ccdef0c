// TensorScalar and TensorScalarPtr, including the scan forms (engines/ops/tensor_scalar.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;

namespace {
using V = std::vector<float>;
} // namespace

// NKI tensor_tensor_scan: r[i] = (data0[i] * r[i-1]) + data1[i], r[-1] = initial.
TEST(OpsTensorScalarPtr, TensorTensorScanAndScalarTensorTensor) {
  Harness h;
  auto a = h.b.sbuf("a", {1, 3}), b = h.b.sbuf("b", {1, 3}), o = h.b.sbuf("o", {1, 3}), s = h.b.sbuf("s", {1, 3});
  h.b.add(InstructionType::TensorScalarPtr, {P(a.all()), P(b.all()), I(1)}, {P(o.all())})
      .op0(AluOp::mult).op1(AluOp::add).is_tensor_tensor_scan(true);
  // (2 - a) * b with reverse0: s0 op0 x
  h.b.add(InstructionType::TensorScalarPtr, {P(a.all()), I(2), P(b.all())}, {P(s.all())})
      .op0(AluOp::subtract).reverse0(true).op1(AluOp::mult).is_scalar_tensor_tensor(true);
  h.place();
  h.set(a, {2, 3, 0.5f});
  h.set(b, {1, 10, 4});
  h.run();
  EXPECT_EQ(h.get(o), (V{3, 19, 13.5f}));  // 2*1+1, 3*3+10, 0.5*19+4
  EXPECT_EQ(h.get(s), (V{0, -10, 6}));
}

TEST(OpsTensorScalar, PtrSubtractImmediateWithAndWithoutReverse0) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 2}), y = h.b.sbuf("y", {2, 2}), z = h.b.sbuf("z", {2, 2});
  // The compiler's form for nki tensor_scalar(t, subtract, 1.0) (reference bir-json.md 1.8).
  h.b.add(InstructionType::TensorScalarPtr, {P(x.all()), I(1.0)}, {P(y.all())})
      .op0(AluOp::subtract).op1(AluOp::bypass);
  h.b.add(InstructionType::TensorScalarPtr, {P(x.all()), I(1.0)}, {P(z.all())})
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
  h.b.add(InstructionType::TensorScalar, {P(x.all())}, {P(y.all())})
      .op0(AluOp::mult).const0(2.0).op1(AluOp::add).const1(3.0);
  h.b.add(InstructionType::TensorScalar, {P(x.all())}, {P(z.all())})
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
  h.b.add(InstructionType::TensorScalarPtr, {P(x.all()), P(s0.all()), P(s1.all())}, {P(y.all())})
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
  h.b.add(InstructionType::TensorScalarPtr, {P(x.all()), P(s.all())}, {P(y.all())}).op0(AluOp::add);
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

TEST(OpsTensorScalar, BitvecImmediateKeepsItsExactBits) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 2}, Dtype::int32), y = h.b.sbuf("y", {1, 2}, Dtype::int32);
  // 0x7FFFFF01 is not representable in fp32; the int32 lane must see it exactly.
  h.b.add(InstructionType::TensorScalarPtr, {P(x.all()), I(double(0x7FFFFF01))}, {P(y.all())})
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
