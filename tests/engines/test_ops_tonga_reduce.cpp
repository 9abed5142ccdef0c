// TongaReduceMacroSymbolic: neuronsim's reading (engines/ops/tonga_reduce.cpp) -- accumulate ins[0] into outs[0]
// across the iterations of the reduce_axes loops, is_first_reduce copying. Every expected value is worked out by
// hand in the comment beside it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_run.hpp"
#include "engines/program_builder.hpp"
#include "neuronsim/sim/simulator.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;

namespace {
using V = std::vector<float>;
} // namespace

// A reduce over the loop k of the columns of x = 1 5 2 / -1 -4 3 into acc [2, 1]: the first iteration is peeled
// (is_first_reduce: acc = x[:, 0] = 1 / -1), the loop k = 1, 2 accumulates acc = acc op x[:, k].
//   add: 1 + 5 + 2 = 8, -1 - 4 + 3 = -2;   max: max(1, 5, 2) = 5, max(-1, -4, 3) = 3.
TEST(OpsTongaReduce, AccumulatesAcrossTheIterationsOfALoop) {
  for (const auto &[op, want] : {std::pair{AluOp::add, V{8, -2}}, std::pair{AluOp::max, V{5, 3}},
                                 std::pair{AluOp::min, V{1, -4}}, std::pair{AluOp::mult, V{10, 12}}}) {
    SCOPED_TRACE(isa::alu_name(op));
    Builder b("tonga");
    auto x = b.sbuf("x", {2, 3}), acc = b.sbuf("acc", {2, 1});
    b.add(InstructionType::TongaReduceMacroSymbolic, {P(x.tile(0, 2, 0, 1))}, {P(acc.all())})
        .op(op)
        .is_first_reduce(true)
        .reduce_axes({"k"});
    b.loop("k", 1, 3, 1, [&](builder::Aff k) {
      b.add(InstructionType::TongaReduceMacroSymbolic, {P(x.tile(0, 2, k, 1))}, {P(acc.all())})
          .op(op)
          .is_first_reduce(false)
          .reduce_axes({"k"});
    });
    isa::Program p = b.finish();
    sim::Simulator s(p, {});
    write(s, x, {1, 5, 2, -1, -4, 3});
    write(s, acc, {100, 100});
    const auto r = s.run();
    EXPECT_EQ(r.dynamic_instructions, 3);
    EXPECT_EQ(read(s, acc), want);
  }
}

// is_first_reduce converts to the output dtype: 1.00390625 (1 + 2^-8) rounds to even in bf16, 1.0; the next step adds
// 3 (bf16 4.0). Bit-vector ops use the int32 pattern: 5 | 3 = 7.
TEST(OpsTongaReduce, ConvertsToTheOutputDtypeAndBitVectorOpsUseInt32) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 2}), a = h.b.sbuf("a", {1, 1}, Dtype::bfloat16);
  h.b.add(InstructionType::TongaReduceMacroSymbolic, {P(x.tile(0, 1, 0, 1))}, {P(a.all())}).op(AluOp::add).is_first_reduce(true);
  h.b.add(InstructionType::TongaReduceMacroSymbolic, {P(x.tile(0, 1, 1, 1))}, {P(a.all())}).op(AluOp::add);
  h.place();
  h.set(x, {1.00390625f, 3});
  h.exec(0);
  EXPECT_EQ(h.get(a), (V{1.0f}));
  h.exec(1);
  EXPECT_EQ(h.get(a), (V{4.0f}));
  Harness g;
  auto xi = g.b.sbuf("xi", {1, 2}, Dtype::int32), ai = g.b.sbuf("ai", {1, 1}, Dtype::int32);
  g.b.add(InstructionType::TongaReduceMacroSymbolic, {P(xi.tile(0, 1, 0, 1))}, {P(ai.all())})
      .op(AluOp::bitwise_or)
      .is_first_reduce(true);
  g.b.add(InstructionType::TongaReduceMacroSymbolic, {P(xi.tile(0, 1, 1, 1))}, {P(ai.all())})
      .op(AluOp::bitwise_or)
      .is_first_reduce(false);
  g.place();
  g.set(xi, {5, 3});
  g.run();
  EXPECT_EQ(g.get(ai), (V{7}));
}

TEST(OpsTongaReduce, RefusesNonReductionOpsAndUnknownAxes) {
  for (AluOp op : {AluOp::subtract, AluOp::divide, AluOp::bypass, AluOp::is_equal, AluOp::average}) {
    Harness h;
    auto x = h.b.sbuf("x", {1, 2}), a = h.b.sbuf("a", {1, 2});
    h.b.add(InstructionType::TongaReduceMacroSymbolic, {P(x.all())}, {P(a.all())}).op(op).is_first_reduce(false);
    h.place();
    try {
      h.exec(0);
      FAIL() << isa::alu_name(op);
    } catch (const SemanticError &e) {
      EXPECT_EQ(e.context().field, "op");
      EXPECT_EQ(e.message().rfind(std::string("'") + isa::alu_name(op) + "' is not a reduction op", 0), 0u)
          << e.message();
    }
  }
  Harness h;
  auto x = h.b.sbuf("x", {1, 2}), a = h.b.sbuf("a", {1, 2});
  h.b.add(InstructionType::TongaReduceMacroSymbolic, {P(x.all())}, {P(a.all())})
      .op(AluOp::add)
      .is_first_reduce(true)
      .reduce_axes({"nope"});
  h.place();
  try {
    h.exec(0);
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "reduce_axes");
    EXPECT_EQ(e.message(), "'nope' is not a loop axis of this program");
  }
}

// `neuronsim isa --json` says it executes.
TEST(OpsTongaReduce, IsaDumpSaysItExecutes) {
  EXPECT_TRUE(engines::executes(InstructionType::TongaReduceMacroSymbolic));
  auto r = clitest::run("isa --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["instruction_types"][109]["executes"], true);
}
