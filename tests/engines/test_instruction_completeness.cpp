// Every place an instruction type must appear (docs/architecture.md, "Adding an instruction"), read from the tables
// themselves, for all 110 InstructionTypes: a failure names each type that misses a place.
//   1. dispatch: a row of engines/ops/dispatch.cpp, or a refusal with its reason (not_executed_reason);
//   2. engine policy: its default engine (engines/ops/engine_policy.cpp) is one the wire table
//      (instruction_wire.def + engines_allowed.def) lets it run on, or the wire row pins no engine and says why;
//   3. cost: a row of engines/cost/cost_rules.def;
//   4. wire: on every generation its instruction_wire.def row gives an opcode for, a bundle form of
//      bundle_fields.def; where the row gives none, that is its explicit "no wire form" (then no form may claim
//      it unless flagged EXTRA), and an executing type with no opcode anywhere is a Base, Lowered or Carrier row.
#include <gtest/gtest.h>

#include <string>

#include "neuronsim/engines/cost.hpp"
#include "neuronsim/engines/ops.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/isa/inst_rules.hpp"
#include "neuronsim/isa/tables.hpp"

using namespace neuronsim;
using isa::CoreGen;
using isa::InstructionType;

namespace {

std::string name(InstructionType t) { return isa::inst_type_name(t); }

template <typename F> std::string types_where(F bad) {
  std::string out;
  for (int i = 0; i < isa::kNumInstructionTypes; ++i) {
    const auto t = static_cast<InstructionType>(i);
    const std::string why = bad(t);
    if (!why.empty()) out += "\n  " + name(t) + ": " + why;
  }
  return out;
}

bool has_form(InstructionType t, CoreGen g) {
  for (const auto &f : isa::bundle_forms())
    if ((f.gens >> static_cast<int>(g)) & 1u)
      for (InstructionType u : f.types)
        if (u == t) return true;
  return false;
}

}  // namespace

TEST(InstructionCompleteness, EveryTypeIsDispatchedOrRefusedWithAReason) {
  const std::string missing = types_where([](InstructionType t) -> std::string {
    if (engines::executes(t)) return "";
    const std::string why = engines::not_executed_reason(t);
    return why.empty() || why == "not implemented" ? "no dispatch row and no reason for refusing it" : "";
  });
  EXPECT_EQ(missing, "") << "instruction types missing from engines/ops/dispatch.cpp:" << missing;
}

TEST(InstructionCompleteness, EveryExecutingTypeHasAnEnginePolicy) {
  const std::string missing = types_where([](InstructionType t) -> std::string {
    if (!engines::executes(t)) return "";
    const auto &allowed = isa::allowed_engines(t);
    const isa::Engine e = engines::default_engine(t);
    if (allowed.empty())
      return std::string(isa::inst_type_info(t).engine_text).empty()
                 ? "its wire row pins no engine and says nothing about it"
                 : "";
    return isa::engine_allowed(t, e) ? ""
                                     : std::string("default engine ") + isa::enum_name(e) +
                                           " is not one instruction_wire.def / engines_allowed.def allow (" +
                                           isa::allowed_engines_text(t) + ")";
  });
  EXPECT_EQ(missing, "") << "instruction types without a consistent engine policy:" << missing;
}

TEST(InstructionCompleteness, EveryTypeHasAChosenCostRule) {
  const std::string missing = types_where([](InstructionType t) -> std::string {
    return engines::cost_rule_name(t) ? "" : "no row in engines/cost/cost_rules.def";
  });
  EXPECT_EQ(missing, "") << "instruction types without a cost rule:" << missing;
}

TEST(InstructionCompleteness, EveryWireOpcodeHasABundleFormAndEveryOtherTypeSaysNoWireForm) {
  int forms_checked = 0;
  const std::string missing = types_where([&](InstructionType t) -> std::string {
    const auto &info = isa::inst_type_info(t);
    std::string why;
    bool any_opcode = false;
    for (CoreGen g : isa::kCoreGens) {
      if (info.encoded_on(g)) {
        any_opcode = true;
        ++forms_checked;
        if (!has_form(t, g))
          why += std::string(" opcode on ") + isa::core_gen_name(g) + " but no bundle form in bundle_fields.def;";
      }
    }
    if (!any_opcode && engines::executes(t) && info.kind == isa::InstKind::Concrete)
      why += " a Concrete row with no opcode on any generation (make it Base, Lowered or Carrier, with its reason);";
    return why;
  });
  EXPECT_EQ(missing, "") << "instruction types whose wire form is missing:" << missing;
  EXPECT_GT(forms_checked, 200);  // about 90 encoded types on three generations: the loop did look at the table

  // A form that claims a type on a generation its wire row gives no opcode for must say so (EXTRA).
  std::string unlisted;
  for (const auto &f : isa::bundle_forms())
    for (InstructionType t : f.types)
      for (CoreGen g : isa::kCoreGens)
        if (((f.gens >> static_cast<int>(g)) & 1u) && !isa::inst_type_info(t).encoded_on(g) && !f.extra)
          unlisted += "\n  form " + f.name + " claims " + name(t) + " on " + isa::core_gen_name(g);
  EXPECT_EQ(unlisted, "") << "bundle forms for a type/generation without an opcode in instruction_wire.def:"
                          << unlisted;
}
