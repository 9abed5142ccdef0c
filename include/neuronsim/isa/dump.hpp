// Every ISA table as the simulator knows it, for `neuronsim isa [--json]` (DESIGN.md section 5). Both forms are
// generated from the same rows as the codecs (the .def tables), so the dump cannot drift from what runs.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "neuronsim/isa/tables.hpp"

namespace neuronsim::isa {

// `executes(t)` says whether the simulator has semantics for t (the engines layer knows; the ISA layer does not).
// Shape:
//   {"alu_ops": [{"ordinal", "name", "class": "unary"|"commutative"|"order_sensitive", "bitvec",
//                 "wire": {"v2", "v3", "v4"}}],            (a missing wire byte is null; mod_int v4 = 4294967240)
//    "enums": {"<Type>": [{"ordinal", "name"}]}, "enum_info": {"<Type>": {"json_key", "source"}},
//    "instruction_types": [{"ordinal", "name", "family", "kind", "engines", "engine_text",
//                           "l2": {"v2": [..], ...}, "l3": {"v2": [..], ...}, "bundles": {"min", "max"},
//                           "split", "col", "shared", "confidence", "executes"}],
//    "l3_rule": "..."}
nlohmann::json isa_tables_json(const std::function<bool(InstructionType)> &executes);
// The same content as aligned plain-text tables.
std::string isa_tables_text(const std::function<bool(InstructionType)> &executes);

// What the engines layer knows of a type, for explain_type (the ISA layer does not reach it).
struct ExplainExtras {
  bool executes = false;
  std::string not_executed;        // why not, when it is not executed
  std::string cost_rule, cost_why; // its row of engines/cost/cost_rules.def; empty: none
};
// `neuronsim isa --explain TYPE`: the role of every ins[i] and outs[i], every key with whether it is
// required, its type, default and meaning, the engines that may run it, its opcode bytes and its cost rule --
// all from the tables the reader and the engines read (inst_keys.def, inst_fields.def, instruction_wire.def,
// engines_allowed.def; the cost rule through `x`).
std::string explain_type(InstructionType t, const ExplainExtras &x);
// `neuronsim isa --roles`: a Markdown table of the operand roles of every type that has any
// (docs/bir-format.md's table is rows of it).
std::string roles_table();

} // namespace neuronsim::isa
