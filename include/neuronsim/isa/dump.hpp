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

} // namespace neuronsim::isa
