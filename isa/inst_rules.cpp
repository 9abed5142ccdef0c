// Lookups over isa/tables/inst_keys.def and engines_allowed.def (see include/neuronsim/isa/inst_rules.hpp). No
// ISA fact is written here except the base-header key list, which is quoted from its reference page.
#include "neuronsim/isa/inst_rules.hpp"

#include "isa/tables/engine_tokens.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <unordered_set>

namespace neuronsim::isa {

namespace {

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const size_t sp = s.find(' ');
    if (sp != 0) out.emplace_back(s.substr(0, sp));
    if (sp == std::string_view::npos) break;
    s.remove_prefix(sp + 1);
  }
  return out;
}

// "data: the tile | scale?: ... | ..." -> the roles in order (a name ending in "?" is optional, "..."
// repeats).
std::vector<OperandRole> split_roles(std::string_view s, const char *type, const char *side) {
  std::vector<OperandRole> out;
  while (!s.empty()) {
    const size_t bar = s.find(" | ");
    std::string_view item = s.substr(0, bar);
    OperandRole r;
    const size_t colon = item.find(": ");
    r.name = std::string(item.substr(0, colon));
    if (colon != std::string_view::npos)
      r.meaning = std::string(item.substr(colon + 2));
    if (!r.name.empty() && r.name.back() == '?')
      r.optional = true, r.name.pop_back();
    if (r.name.size() > 3 && r.name.compare(r.name.size() - 3, 3, "...") == 0)
      r.repeats = true, r.name.resize(r.name.size() - 3);
    if (r.name.empty() || r.name.find(' ') != std::string::npos)
      throw std::logic_error(std::string("inst_keys.def ") + type + " " + side +
                             ": a role is \"name: meaning\", got '" + std::string(item) + "'");
    out.push_back(std::move(r));
    if (bar == std::string_view::npos)
      break;
    s.remove_prefix(bar + 3);
  }
  return out;
}

const std::array<InstKeys, kNumInstructionTypes> &key_table() {
  static const std::array<InstKeys, kNumInstructionTypes> table = [] {
    std::array<InstKeys, kNumInstructionTypes> t;
    std::array<int, kNumInstructionTypes> rows{};
#define NS_KEYS(type, req, opt, ins, outs)                                                                   \
  t[static_cast<size_t>(InstructionType::type)] = InstKeys{                                                  \
      split_words(req), split_words(opt), split_roles(ins, #type, "ins"), split_roles(outs, #type, "outs")}; \
  ++rows[static_cast<size_t>(InstructionType::type)];
#include "tables/inst_keys.def"
#undef NS_KEYS
    for (int i = 0; i < kNumInstructionTypes; ++i)
      if (rows[static_cast<size_t>(i)] != 1)
        throw std::logic_error(std::string("inst_keys.def: need exactly one row for ") +
                               inst_type_name(static_cast<InstructionType>(i)));
    return t;
  }();
  return table;
}

using namespace engine_tokens;  // engines_allowed.def's engine columns

const std::array<std::vector<Engine>, kNumInstructionTypes> &engine_table() {
  static const std::array<std::vector<Engine>, kNumInstructionTypes> table = [] {
    std::array<std::vector<Engine>, kNumInstructionTypes> t;
    for (const auto &info : inst_type_infos()) t[static_cast<size_t>(info.type)] = info.engines;
    auto add = [&](InstructionType type, std::vector<Engine> extra) {
      auto &v = t[static_cast<size_t>(type)];
      if (v.empty())
        throw std::logic_error(std::string("engines_allowed.def: ") + inst_type_name(type) +
                               " has no wire engine to widen");
      if (std::find(extra.begin(), extra.end(), ALL) != extra.end()) extra = {PE, ACT, POOL, DVE, SP, DMA};
      for (Engine e : extra)
        if (std::find(v.begin(), v.end(), e) == v.end()) v.push_back(e);
    };
#define NS_LIST(...) {__VA_ARGS__}
#define NS_ENG(type, engines, source) add(InstructionType::type, std::vector<Engine> NS_LIST engines);
#include "tables/engines_allowed.def"
#undef NS_ENG
#undef NS_LIST
    return t;
  }();
  return table;
}

} // namespace

const std::vector<std::string> &base_instruction_keys() {
  static const std::vector<std::string> keys = {
      "origin", "opcode", "engine", "engine_id", "scheduled_start", "scheduled_end", "optin_passes",
      "dependencies", "loop_carried_dependencies", "unroll_dependencies", "sync_info", "ins", "indirection_ins",
      "outs", "debug", "loopnest", "predicates", "order", "dma_trigger_debug_update_semaphore_id", "name",
      "descendants"};
  return keys;
}

const InstKeys &inst_keys(InstructionType t) { return key_table().at(static_cast<size_t>(t)); }

bool is_known_key(InstructionType t, std::string_view key) {
  // One hash set per type (base + required + optional): the reader asks for every key of every instruction.
  static const std::array<std::unordered_set<std::string>, kNumInstructionTypes> known = [] {
    std::array<std::unordered_set<std::string>, kNumInstructionTypes> a;
    for (int i = 0; i < kNumInstructionTypes; ++i) {
      const InstKeys &k = inst_keys(static_cast<InstructionType>(i));
      auto &set = a[static_cast<size_t>(i)];
      set.insert(base_instruction_keys().begin(), base_instruction_keys().end());
      set.insert(k.required.begin(), k.required.end());
      set.insert(k.optional.begin(), k.optional.end());
    }
    return a;
  }();
  return known.at(static_cast<size_t>(t)).count(std::string(key)) != 0;
}

namespace {

// "AluOp::bypass" -> "bypass", "0.0" -> "0", "{}" -> "[]", "\"AllReduce\"" -> "\"AllReduce\"".
std::string default_text(std::string d, const std::string &kind) {
  if (const size_t c = d.rfind("::"); c != std::string::npos)
    d = d.substr(c + 2);
  if (d == "{}")
    return "[]";
  if (kind == "FLOAT" && d.size() > 2 && d.compare(d.size() - 2, 2, ".0") == 0)
    d.resize(d.size() - 2);
  return d;
}

std::string type_text(const std::string &kind, const std::string &ctype) {
  if (kind == "ENUM")
    return ctype;
  if (kind == "BOOL")
    return "bool";
  if (kind == "INT")
    return "int";
  if (kind == "FLOAT")
    return "number";
  if (kind == "STRING")
    return "str";
  if (kind == "INTLIST")
    return "[int]";
  if (kind == "FLOATLIST")
    return "[number]";
  if (kind == "STRLIST")
    return "[str]";
  if (kind == "INTLISTLIST")
    return "[[int]]";
  if (kind == "PATTERN")
    return "[[step, num]]";
  return kind;
}

struct FieldRow {
  FieldInfo info;
  int only = -1; // InstructionType ordinal, -1 for ANY
};

// The ONLY column's names as ordinals (ANY = -1), as the reader's field loop reads them (isa/bir/reader.hpp).
namespace only_ordinal {
constexpr int ANY = -1;
#define NS_IT(ord, name, family) constexpr int name = ord;
#include "neuronsim/isa/tables/instruction_types.def"
#undef NS_IT
} // namespace only_ordinal

const std::vector<FieldRow> &field_rows() {
  static const std::vector<FieldRow> rows = [] {
    std::vector<FieldRow> v;
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  v.push_back(FieldRow{                                                                                      \
      FieldInfo{key, type_text(#kind, #ctype), default_text(#def, #kind), "", std::string("" __VA_ARGS__)},  \
      only_ordinal::only});
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
    for (auto &r : v)
      if (r.only >= 0)
        r.info.only = inst_type_name(static_cast<InstructionType>(r.only));
    return v;
  }();
  return rows;
}

} // namespace

const FieldInfo *field_info(InstructionType t, std::string_view key) {
  const FieldInfo *any = nullptr;
  for (const auto &r : field_rows()) {
    if (r.info.key != key)
      continue;
    if (r.only == static_cast<int>(t))
      return &r.info;
    if (r.only < 0)
      any = &r.info;
  }
  return any;
}

const std::vector<FieldInfo> &field_infos() {
  static const std::vector<FieldInfo> v = [] {
    std::vector<FieldInfo> out;
    for (const auto &r : field_rows())
      out.push_back(r.info);
    return out;
  }();
  return v;
}

size_t operand_index(InstructionType t, std::string_view role, bool outs) {
  const auto &roles = outs ? inst_keys(t).outs : inst_keys(t).ins;
  for (size_t i = 0; i < roles.size(); ++i)
    if (roles[i].name == role)
      return i;
  throw std::logic_error(std::string("inst_keys.def: ") + inst_type_name(t) + " has no " +
                         (outs ? "outs" : "ins") + " role '" + std::string(role) + "'");
}

std::string closest_key(InstructionType t, std::string_view key) {
  const InstKeys &k = inst_keys(t);
  std::vector<std::string> known = k.required;
  known.insert(known.end(), k.optional.begin(), k.optional.end());
  known.insert(known.end(), base_instruction_keys().begin(), base_instruction_keys().end());
  return nearest_name(key, known);
}

const std::vector<Engine> &allowed_engines(InstructionType t) { return engine_table().at(static_cast<size_t>(t)); }

bool engine_allowed(InstructionType t, Engine e) {
  if (e == Engine::Unassigned) return true;
  const auto &v = allowed_engines(t);
  return v.empty() || std::find(v.begin(), v.end(), e) != v.end();
}

std::string allowed_engines_text(InstructionType t) {
  std::string s;
  for (Engine e : allowed_engines(t)) s += (s.empty() ? "" : ", ") + std::string(enum_name(e));
  return s;
}

} // namespace neuronsim::isa
