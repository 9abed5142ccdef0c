// engines/ops accumulator machine (EngineAccumulationType across instructions), TensorScalarCache and the
// TensorScalarPtr forms: hand-computed cases.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using A = isa::EngineAccumulationType;
using isa::AluOp;

namespace {
isa::Arg Ap_(const Ap &a) { return Builder::ap(a); }
using V = std::vector<float>;
} // namespace

// ACT registers across three Activations and two drains: reset_reduce, reduce, then LoadAccumulate and Zero.
TEST(OpsAccumulate, ActivationPhasesAcrossInstructionsAndDrains) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 2}), y = h.b.sbuf("y", {2, 2});
  auto r1 = h.b.sbuf("r1", {2, 1}), r2 = h.b.sbuf("r2", {2, 1}), r3 = h.b.sbuf("r3", {2, 1});
  h.b.add(InstructionType::Activation, {Ap_(x.all())}, {Ap_(y.all())}).acc(A::ZeroAccumulate);   // 0
  h.b.add(InstructionType::Activation, {Ap_(x.all())}, {Ap_(y.all())}).acc(A::Accumulate);       // 1
  h.b.add(InstructionType::ReadActivationAccumulator, {}, {Ap_(r1.all())});                        // 2
  // ins: data, scale, bias, alpha, load
  h.b.add(InstructionType::Activation, {Ap_(x.all()), I(1), I(0), I(0), I(100)}, {Ap_(y.all())})
      .acc(A::LoadAccumulate);                                                                      // 3
  h.b.add(InstructionType::ActivationReadAccumulator, {}, {Ap_(r2.all())});                        // 4
  h.b.add(InstructionType::Activation, {Ap_(x.all())}, {Ap_(y.all())}).acc(A::Zero);              // 5
  h.b.add(InstructionType::ReadActivationAccumulator, {}, {Ap_(r3.all())});                        // 6
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
  h.b.add(InstructionType::Activation, {Ap_(x.all())}, {Ap_(x.all())}).acc(A::LoadAccumulate);
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
  h.b.add(InstructionType::TensorTensor, {Ap_(a.all()), Ap_(b.all())}, {Ap_(o.all())})
      .op(AluOp::mult).acc(A::ZeroAccumulate);
  h.b.add(InstructionType::DveReadAccumulator, {}, {Ap_(r1.all())});
  h.b.add(InstructionType::TensorScalarPtr, {Ap_(a.all()), I(10)}, {Ap_(o.all()), Ap_(r2.all())})
      .op0(AluOp::add).op1(AluOp::max).acc(A::ZeroAccumulate).negate_second_output(true);
  h.b.add(InstructionType::Exponential, {Ap_(a.all()), I(0)}, {Ap_(o.all()), Ap_(r3.all())})
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
  h.b.add(InstructionType::RangeSelect, {Ap_(x.all()), I(1), I(4)}, {Ap_(y.all()), Ap_(r.all())})
      .compare_op0(AluOp::is_ge).compare_op1(AluOp::is_lt).fill_value(-9).reduce_op(AluOp::max)
      .reduce_cmd(A::ZeroAccumulate);
  h.place();
  h.set(x, {10, 2, 3, 4, 50, 60});
  h.run();
  EXPECT_EQ(h.get(y), (V{-9, 2, 3, 4, -9, -9}));
  EXPECT_EQ(h.get(r), (V{4}));
}

// TensorScalarCache: Cumulative add is a prefix sum of (x * 2); Reduce with LoadAccumulate folds mult from 10.
TEST(OpsTensorScalarCache, CumulativeReduceAndLoad) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 3}), y = h.b.sbuf("y", {2, 3}), r = h.b.sbuf("r", {2, 1});
  auto y2 = h.b.sbuf("y2", {2, 3});
  h.b.add(InstructionType::TensorScalarCache, {Ap_(x.all()), I(2)}, {Ap_(y.all())})
      .op0(AluOp::mult).op1(AluOp::add).tsc_mode(isa::TSCMode::Cumulative).acc(A::ZeroAccumulate);
  h.b.add(InstructionType::TensorScalarCache, {Ap_(x.all()), I(1), I(10)}, {Ap_(r.all())})
      .op0(AluOp::add).op1(AluOp::mult).tsc_mode(isa::TSCMode::Reduce).acc(A::LoadAccumulate);
  // op1 = subtract with reverse1: reg = reg - t (NKI: op1(t, reg) unless reversed), continuing the registers.
  h.b.add(InstructionType::TensorScalarCache, {Ap_(x.all()), I(0)}, {Ap_(y2.all())})
      .op0(AluOp::add).op1(AluOp::subtract).reverse1(true).tsc_mode(isa::TSCMode::Cumulative)
      .acc(A::Accumulate);
  h.place();
  h.set(x, {1, 2, 3, 0, 1, 1});
  h.run();
  EXPECT_EQ(h.get(y), (V{2, 6, 12, 0, 2, 4}));
  EXPECT_EQ(h.get(r), (V{240, 40}));  // 10*2*3*4, 10*1*2*2
  EXPECT_EQ(h.get(y2), (V{239, 237, 234, 40, 39, 38}));
}

// NKI tensor_tensor_scan: r[i] = (data0[i] * r[i-1]) + data1[i], r[-1] = initial.
TEST(OpsTensorScalarPtr, TensorTensorScanAndScalarTensorTensor) {
  Harness h;
  auto a = h.b.sbuf("a", {1, 3}), b = h.b.sbuf("b", {1, 3}), o = h.b.sbuf("o", {1, 3}), s = h.b.sbuf("s", {1, 3});
  h.b.add(InstructionType::TensorScalarPtr, {Ap_(a.all()), Ap_(b.all()), I(1)}, {Ap_(o.all())})
      .op0(AluOp::mult).op1(AluOp::add).is_tensor_tensor_scan(true);
  // (2 - a) * b with reverse0: s0 op0 x
  h.b.add(InstructionType::TensorScalarPtr, {Ap_(a.all()), I(2), Ap_(b.all())}, {Ap_(s.all())})
      .op0(AluOp::subtract).reverse0(true).op1(AluOp::mult).is_scalar_tensor_tensor(true);
  h.place();
  h.set(a, {2, 3, 0.5f});
  h.set(b, {1, 10, 4});
  h.run();
  EXPECT_EQ(h.get(o), (V{3, 19, 13.5f}));  // 2*1+1, 3*3+10, 0.5*19+4
  EXPECT_EQ(h.get(s), (V{0, -10, 6}));
}
