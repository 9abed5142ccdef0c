// What an instruction may carry and where it may run, from the tables: the BIR JSON keys of each
// InstructionType (isa/tables/inst_keys.def: required / optional, after reference
// neuronx-cc/bir/json-schema-catalog.md "Required vs optional") and the engines it may be assigned to
// (instruction_wire.def's engines plus isa/tables/engines_allowed.def). The BIR JSON reader, the bundle stream
// reader, the writer and `neuronsim isa --json` read these.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "neuronsim/isa/tables.hpp"

namespace neuronsim::isa {

// The keys of the bir::Instruction base header, known for every type (reference
// neuronx-cc/bir/instruction-base.md 4: origin, opcode, engine, ..., plus `name` and `descendants` as real
// compiler output carries them, reference bir-json.md 1.7).
const std::vector<std::string> &base_instruction_keys();

struct InstKeys {
  std::vector<std::string> required;  // absent or null: the compiler's loader throws
  std::vector<std::string> optional;  // read when present
};
// The op-specific keys of a type (one row of inst_keys.def).
const InstKeys &inst_keys(InstructionType t);
// Whether `key` is a base key or one of the type's own keys.
bool is_known_key(InstructionType t, std::string_view key);
// The known key (base or the type's own) closest to `key` by edit distance, or "" when none is within
// max(1, |key| / 3) edits: the "did you mean" of a misspelt key.
std::string closest_key(InstructionType t, std::string_view key);
// Edit distance: insert, delete, substitute or swap two adjacent characters, one edit each (optimal string
// alignment).
size_t edit_distance(std::string_view a, std::string_view b);

// The engines a type may be assigned to; empty when its table row pins none (then any engine is accepted).
const std::vector<Engine> &allowed_engines(InstructionType t);
// True for Unassigned, for a type whose row pins no engine, and for an engine in allowed_engines(t).
bool engine_allowed(InstructionType t, Engine e);
// "DVE, Pool" -- the allowed engines as BIR spells them, for messages.
std::string allowed_engines_text(InstructionType t);

} // namespace neuronsim::isa
