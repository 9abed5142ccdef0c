// Lookups over isa/tables/inst_keys.def and engines_allowed.def (see include/neuronsim/isa/inst_rules.hpp). No
// ISA fact is written here except the base-header key list, which is quoted from its reference page.
#include "neuronsim/isa/inst_rules.hpp"

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

const std::array<InstKeys, kNumInstructionTypes> &key_table() {
  static const std::array<InstKeys, kNumInstructionTypes> table = [] {
    std::array<InstKeys, kNumInstructionTypes> t;
    std::array<int, kNumInstructionTypes> rows{};
#define NS_KEYS(type, req, opt)                                                                               \
  t[static_cast<size_t>(InstructionType::type)] = InstKeys{split_words(req), split_words(opt)};              \
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

// Engine tokens of engines_allowed.def.
constexpr Engine PE = Engine::PE, ACT = Engine::Activation, POOL = Engine::Pool, DVE = Engine::DVE,
                 SP = Engine::SP, DMA = Engine::DMA, ALL = Engine::ALL;

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

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insert, delete, substitute, or swap two adjacent characters ("scael" -> "scale").
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string closest_key(InstructionType t, std::string_view key) {
  std::string best;
  size_t best_d = std::max<size_t>(1, key.size() / 3) + 1;
  const InstKeys &k = inst_keys(t);
  for (const auto *list : {&k.required, &k.optional, &base_instruction_keys()})
    for (const auto &cand : *list) {
      const size_t d = edit_distance(key, cand);
      if (d < best_d) best_d = d, best = cand;
    }
  return best;
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
