// The engines' accumulation state machine (EngineAccumulationType across instructions: reset, reduce,
// LoadAccumulate, Zero) on ACT, DVE and Pool, and the accumulator drains (engines/ops/accumulator.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <cmath>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using A = isa::EngineAccumulationType;
using isa::AluOp;

namespace {
using V = std::vector<float>;
} // namespace

// ACT registers across three Activations and two drains: reset_reduce, reduce, then LoadAccumulate and Zero.
TEST(OpsAccumulate, ActivationPhasesAcrossInstructionsAndDrains) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 2}), y = h.b.sbuf("y", {2, 2});
  auto r1 = h.b.sbuf("r1", {2, 1}), r2 = h.b.sbuf("r2", {2, 1}), r3 = h.b.sbuf("r3", {2, 1});
  h.b.add(InstructionType::Activation, {P(x.all())}, {P(y.all())}).acc(A::ZeroAccumulate);   // 0
  h.b.add(InstructionType::Activation, {P(x.all())}, {P(y.all())}).acc(A::Accumulate);       // 1
  h.b.add(InstructionType::ReadActivationAccumulator, {}, {P(r1.all())});                        // 2
  // ins: data, scale, bias, alpha, load
  h.b.add(InstructionType::Activation, {P(x.all()), I(1), I(0), I(0), I(100)}, {P(y.all())})
      .acc(A::LoadAccumulate);                                                                      // 3
  h.b.add(InstructionType::ActivationReadAccumulator, {}, {P(r2.all())});                        // 4
  h.b.add(InstructionType::Activation, {P(x.all())}, {P(y.all())}).acc(A::Zero);              // 5
  h.b.add(InstructionType::ReadActivationAccumulator, {}, {P(r3.all())});                        // 6
  h.place();
  h.set(x, {1, 2, 3, 4});
  h.run();
  EXPECT_EQ(h.get(r1), (V{6, 14}));     // (1+2)*2, (3+4)*2
  EXPECT_EQ(h.get(r2), (V{103, 107}));  // 100 + row sum
  EXPECT_EQ(h.get(r3), (V{0, 0}));      // Zero resets, folds nothing
}

TEST(OpsAccumulate, LoadAccumulateWithoutValueIsSemanticError) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 2});
  h.b.add(InstructionType::Activation, {P(x.all())}, {P(x.all())}).acc(A::LoadAccumulate);
  h.place();
  h.set(x, {1, 2});
  try {
    h.run();
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "acc");
  }
}

// DVE: TensorTensor accumulates sums; TensorScalarPtr's fused reduce folds with op1 (max) and the second output
// is negated; Exponential's reduce_cmd continues the same registers.
TEST(OpsAccumulate, DveTensorTensorTensorScalarReduceAndExponential) {
  Harness h;
  auto a = h.b.sbuf("a", {2, 3}), b = h.b.sbuf("b", {2, 3}), o = h.b.sbuf("o", {2, 3});
  auto r1 = h.b.sbuf("r1", {2, 1}), r2 = h.b.sbuf("r2", {2, 1}), r3 = h.b.sbuf("r3", {2, 1});
  h.b.add(InstructionType::TensorTensor, {P(a.all()), P(b.all())}, {P(o.all())})
      .op(AluOp::mult).acc(A::ZeroAccumulate);
  h.b.add(InstructionType::DveReadAccumulator, {}, {P(r1.all())});
  h.b.add(InstructionType::TensorScalarPtr, {P(a.all()), I(10)}, {P(o.all()), P(r2.all())})
      .op0(AluOp::add).op1(AluOp::max).acc(A::ZeroAccumulate).negate_second_output(true);
  h.b.add(InstructionType::Exponential, {P(a.all()), I(0)}, {P(o.all()), P(r3.all())})
      .reduce_cmd(A::Zero);
  h.place();
  h.set(a, {1, 2, 3, -1, -2, -3});
  h.set(b, {1, 1, 2, 2, 0, 1});
  h.run();
  EXPECT_EQ(h.get(r1), (V{9, -5}));   // 1+2+6, -2+0-3
  EXPECT_EQ(h.get(r2), (V{-13, -9}));  // -max(a + 10)
  EXPECT_EQ(h.get(o), (V{std::exp(1.0f), std::exp(2.0f), std::exp(3.0f), std::exp(-1.0f), std::exp(-2.0f),
                         std::exp(-3.0f)}));
  EXPECT_EQ(h.get(r3), (V{0, 0}));
}

// RangeSelect keeps free indices 1..3 (is_ge 1, is_lt 4), fills the rest and leaves the row max in the
// registers.
TEST(OpsAccumulate, RangeSelectFillAndMaxReduce) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 6}), y = h.b.sbuf("y", {1, 6}), r = h.b.sbuf("r", {1, 1});
  h.b.add(InstructionType::RangeSelect, {P(x.all()), I(1), I(4)}, {P(y.all()), P(r.all())})
      .compare_op0(AluOp::is_ge).compare_op1(AluOp::is_lt).fill_value(-9).reduce_op(AluOp::max)
      .reduce_cmd(A::ZeroAccumulate);
  h.place();
  h.set(x, {10, 2, 3, 4, 50, 60});
  h.run();
  EXPECT_EQ(h.get(y), (V{-9, 2, 3, 4, -9, -9}));
  EXPECT_EQ(h.get(r), (V{4}));
}
