// Types with no effect on memory: the sync / hint types and LoadActFuncSet's gate (engines/ops/noop.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;

namespace {
using V = std::vector<float>;
} // namespace

// Drain, Halt, BranchHint and TensorCompletion have empty birsim bodies (reference sim-control-sync-customop.md
// 3.4 and its function map: "body is `ret`"); LoadActFuncSet is a validity gate only (sim-activation-pwp.md 1).
// Given an input and an output access anyway, none of them writes: o keeps 9 9 9 9, i keeps 1 2 3 4, no register
// and no random state changes.
TEST(OpsNoop, SyncAndHintTypesTouchNoMemory) {
  for (auto type : {InstructionType::Drain, InstructionType::Halt, InstructionType::BranchHint,
                    InstructionType::TensorCompletion, InstructionType::LoadActFuncSet}) {
    Harness h;
    auto i = h.b.sbuf("i", {2, 2}), o = h.b.sbuf("o", {2, 2});
    h.b.add(type, {P(i.all())}, {P(o.all())});
    h.place();
    h.set(i, {1, 2, 3, 4});
    h.set(o, {9, 9, 9, 9});
    const auto rng1 = h.st.rng1(), xorwow = h.st.xorwow();
    h.run();
    EXPECT_EQ(h.get(i), (V{1, 2, 3, 4})) << isa::inst_type_name(type);
    EXPECT_EQ(h.get(o), (V{9, 9, 9, 9})) << isa::inst_type_name(type);
    EXPECT_TRUE(h.st.regs.empty()) << isa::inst_type_name(type);
    EXPECT_EQ(h.st.rng1(), rng1) << isa::inst_type_name(type);
    EXPECT_EQ(h.st.xorwow(), xorwow) << isa::inst_type_name(type);
  }
}

// LoadActFuncSet: birsim asserts ActFuncSetId > -1 (reference sim-activation-pwp.md 1 QUIRK, visitInstLoadActFuncSet
// @0x1b2070). Set 0 and set 3 pass; -1 is refused naming act_func_set_id.
TEST(OpsNoop, LoadActFuncSetGatesItsSetId) {
  Harness h;
  h.b.add(InstructionType::LoadActFuncSet, {}, {}).act_func_set_id(0);
  h.b.add(InstructionType::LoadActFuncSet, {}, {}).act_func_set_id(3);
  h.b.add(InstructionType::LoadActFuncSet, {}, {}).act_func_set_id(-1);
  h.place();
  h.exec(0);
  h.exec(1);
  try {
    h.exec(2);
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "act_func_set_id");
    EXPECT_EQ(e.context().inst_index, 2);
  }
}
