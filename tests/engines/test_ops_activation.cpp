// Activation, Reciprocal and Exponential (engines/ops/activation.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <cmath>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::ActivationFunctionType;

namespace {
using V = std::vector<float>;
} // namespace

TEST(OpsActivation, ReluExpSigmoidWithScaleAndPerPartitionBias) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 3}), bias = h.b.sbuf("bias", {2, 1});
  auto relu = h.b.sbuf("relu", {2, 3}), ex = h.b.sbuf("ex", {2, 3}), sg = h.b.sbuf("sg", {2, 3});
  // ins: [data, scale, bias]
  h.b.add(InstructionType::Activation, {P(x.all()), I(2.0), P(bias.all())}, {P(relu.all())})
      .act_func(ActivationFunctionType::Relu);
  h.b.add(InstructionType::Activation, {P(x.all()), I(0.5)}, {P(ex.all())}).act_func(ActivationFunctionType::Exp);
  h.b.add(InstructionType::Activation, {P(x.all()), I(1.0), I(-1.0)}, {P(sg.all())})
      .act_func(ActivationFunctionType::Sigmoid);
  h.place();
  h.set(x, {-1, 0, 1, 2, 3, -4});
  h.set(bias, {0.5f, -5.0f});
  h.run();
  // relu(2x + b[p]): p0 b=0.5 -> -1.5,0.5,2.5 ; p1 b=-5 -> -1,1,-13
  EXPECT_EQ(h.get(relu), (V{0, 0.5f, 2.5f, 0, 1, 0}));
  auto e = h.get(ex);
  const float xs[6] = {-1, 0, 1, 2, 3, -4};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(e[i], float(std::exp(double(xs[i] * 0.5f)))) << i;
  auto s = h.get(sg);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(s[i], float(1.0 / (std::exp(-double(xs[i] - 1.0f)) + 1.0))) << i;
  EXPECT_NEAR(s[2], 0.5f, 0.0f);  // sigmoid(0)
}

TEST(OpsActivation, ScaleFieldPreluAlphaAndAccumulator) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 2}), y = h.b.sbuf("y", {2, 2});
  h.b.add(InstructionType::Activation, {P(x.all())}, {P(y.all())})
      .act_func(ActivationFunctionType::Prelu).scale(3.0).alpha(0.25)
      .acc(isa::EngineAccumulationType::ZeroAccumulate);
  h.place();
  h.set(x, {-4, 1, 2, -2});
  h.run();
  EXPECT_EQ(h.get(y), (V{-3, 3, 6, -1.5f}));  // prelu(3x; 0.25)
  EXPECT_EQ(h.st.acc[0], 0.0f);              // -3 + 3
  EXPECT_EQ(h.st.acc[1], 4.5f);              // 6 - 1.5
}

// is_activate2: y = relu((imm0 - x) * 0.5 ... ) worked per element. Stage 0 subtract reversed (imm0 op0 x with
// imm0[p] = 1, 2), stage 1 mult by 0.5, then Relu; reduce_op max into the registers (ZeroAccumulate: -inf first).
// p0 x = -3, 1, 4 -> 1 - x = 4, 0, -3 -> *0.5 = 2, 0, -1.5 -> relu 2, 0, 0 (max 2)
// p1 x = 0, 6, -2 -> 2 - x = 2, -4, 4 -> 1, -2, 2 -> relu 1, 0, 2 (max 2)
// A second, bypass-bypass Identity instruction with reduce_op abs_min and Accumulate continues from 2, 2:
// p0 x = -3, 1, 4: abs_min(2, -3) = 2, abs_min(2, 1) = 1, abs_min(1, 4) = 1; p1 x = 0, 6, -2: 0, 0, 0.
TEST(OpsActivation, Activate2StagesAndReduceOps) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 3}), imm0 = h.b.sbuf("imm0", {2, 1}), y = h.b.sbuf("y", {2, 3});
  auto z = h.b.sbuf("z", {2, 3}), r = h.b.sbuf("r", {2, 1});
  h.b.add(InstructionType::Activation, {P(x.all()), P(imm0.all()), I(0.5)}, {P(y.all())})
      .act_func(ActivationFunctionType::Relu).is_activate2(true).op0(isa::AluOp::subtract).reverse0(true)
      .op1(isa::AluOp::mult).reduce_op(isa::AluOp::max).acc(isa::EngineAccumulationType::ZeroAccumulate);
  h.b.add(InstructionType::Activation, {P(x.all())}, {P(z.all()), P(r.all())})
      .act_func(ActivationFunctionType::Identity).is_activate2(true).reduce_op(isa::AluOp::abs_min)
      .acc(isa::EngineAccumulationType::Accumulate);
  h.place();
  h.set(x, {-3, 1, 4, 0, 6, -2});
  h.set(imm0, {1, 2});
  h.run();
  EXPECT_EQ(h.get(y), (V{2, 0, 0, 1, 0, 2}));
  EXPECT_EQ(h.get(z), (V{-3, 1, 4, 0, 6, -2}));
  EXPECT_EQ(h.get(r), (V{1, 0}));
}

TEST(OpsActivation, DerivativeOfGeluApprxSigmoid) {
  // d/dx [x sigmoid(1.702 x)] = s + u s (1 - s), u = 1.702 x, s = sigmoid(u) (reference sim-activation-pwp.md 5):
  // x = 0: s = 1/2, u = 0 -> 0.5; x large: s -> 1, u s (1 - s) -> 0 -> 1; x large negative -> 0.
  Harness h;
  auto x = h.b.sbuf("x", {1, 4}), y = h.b.sbuf("y", {1, 4});
  h.b.add(InstructionType::Activation, {P(x.all())}, {P(y.all())})
      .act_func(ActivationFunctionType::Derivative_Gelu_apprx_sigmoid);
  h.place();
  h.set(x, {0, 30, -30, 1});
  h.run();
  auto g = h.get(y);
  EXPECT_EQ(g[0], 0.5f);
  EXPECT_NEAR(g[1], 1.0f, 1e-6f);
  EXPECT_NEAR(g[2], 0.0f, 1e-6f);
  // x = 1: s = 1/(1 + e^-1.702) = 0.845796, 1.702 * s * (1 - s) = 0.221984 -> 1.067780
  EXPECT_NEAR(g[3], 1.067780f, 2e-6f);
}

TEST(OpsActivation, UnknownFunctionIsSemanticErrorNamingFunc) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 1});
  h.b.add(InstructionType::Activation, {P(x.all())}, {P(x.all())}).act_func(ActivationFunctionType::Unknown);
  h.place();
  h.set(x, {1});
  try {
    h.run();
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "func");
  }
}

TEST(OpsReciprocalExponential, ExactReciprocalAndExpMinusRowMaxWithRunningSum) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 3}), r = h.b.sbuf("r", {1, 3}), e = h.b.sbuf("e", {1, 3});
  h.b.add(InstructionType::Reciprocal, {P(x.all())}, {P(r.all())});
  h.b.add(InstructionType::Exponential, {P(x.all()), I(4.0)}, {P(e.all())})
      .acc(isa::EngineAccumulationType::ZeroAccumulate);
  h.place();
  h.set(x, {2, 4, -0.5f});
  h.run();
  EXPECT_EQ(h.get(r), (V{0.5f, 0.25f, -2.0f}));
  auto ev = h.get(e);
  EXPECT_EQ(ev[1], 1.0f);
  EXPECT_EQ(ev[0], std::exp(-2.0f));
  EXPECT_EQ(h.st.acc[0], (std::exp(-2.0f) + 1.0f) + std::exp(-4.5f));
}
