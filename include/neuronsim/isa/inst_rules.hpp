// What an instruction may carry and where it may run, from the tables: the BIR JSON keys of each
// InstructionType (isa/tables/inst_keys.def: required / optional, after reference
// neuronx-cc/bir/json-schema-catalog.md "Required vs optional") and the engines it may be assigned to
// (instruction_wire.def's engines plus isa/tables/engines_allowed.def). The BIR JSON reader, the bundle stream
// reader, the writer and `neuronsim isa --json` read these.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "neuronsim/isa/names.hpp"
#include "neuronsim/isa/tables.hpp"

namespace neuronsim::isa {

// The keys of the bir::Instruction base header, known for every type (reference
// neuronx-cc/bir/instruction-base.md 4: origin, opcode, engine, ..., plus `name` and `descendants` as real
// compiler output carries them, reference bir-json.md 1.7).
const std::vector<std::string> &base_instruction_keys();

// The role of one ins[i] / outs[i] of a type (inst_keys.def's last two columns).
struct OperandRole {
  std::string name;      // "scale"
  std::string meaning;   // "immediate or [P, 1] per-partition tensor multiplying data (absent: key `scale`)"
  bool optional = false; // may be left out
  bool repeats = false;  // stands for every further operand ("src...")
};

struct InstKeys {
  std::vector<std::string> required;  // absent or null: the compiler's loader throws
  std::vector<std::string> optional;  // read when present
  std::vector<OperandRole> ins, outs; // the operands' roles, in order; empty: none read
};
// The op-specific keys of a type (one row of inst_keys.def).
const InstKeys &inst_keys(InstructionType t);
// The position of the operand called `role` among the type's ins (or outs): the semantics read their operands
// by these names, so that the table is the convention they follow. std::logic_error when the table has no
// such role.
size_t operand_index(InstructionType t, std::string_view role, bool outs = false);
// Whether `key` is a base key or one of the type's own keys.
bool is_known_key(InstructionType t, std::string_view key);
// The known key (base or the type's own) nearest to `key` (isa/names.hpp: the "did you mean" of a misspelt
// key), or "".
std::string closest_key(InstructionType t, std::string_view key);

// One row of inst_fields.def as the user reads it: the JSON key, its type, its default and what it means.
struct FieldInfo {
  std::string key;      // "func"
  std::string type;     // "ActivationFunctionType", "float", "bool", "int", "[int]", "str", ...
  std::string fallback; // the default as JSON spells it: "Identity", "1", "false", "[]", "\"\""
  std::string only;     // the type it belongs to when the key means different things per type, else ""
  std::string meaning;
};
// The row of `key` for type `t` (the ONLY column decides between rows of one key), or nullptr when the key
// has none: the simulator reads it without a model ("read, not modelled").
const FieldInfo *field_info(InstructionType t, std::string_view key);
// Every row, in table order.
const std::vector<FieldInfo> &field_infos();

// The engines a type may be assigned to; empty when its table row pins none (then any engine is accepted).
const std::vector<Engine> &allowed_engines(InstructionType t);
// True for Unassigned, for a type whose row pins no engine, and for an engine in allowed_engines(t).
bool engine_allowed(InstructionType t, Engine e);
// "DVE, Pool" -- the allowed engines as BIR spells them, for messages.
std::string allowed_engines_text(InstructionType t);

} // namespace neuronsim::isa
