// `neuronsim isa`: every ISA table as the simulator knows it, as text or JSON, an instruction type's keys and
// operand roles as Markdown tables, or one type in full (--explain).
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/engines/cost.hpp"
#include "neuronsim/engines/ops.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/dump.hpp"
#include "neuronsim/isa/names.hpp"
#include "neuronsim/isa/tables.hpp"

#include "cli.hpp"

namespace neuronsim::cli {

int cmd_isa(const std::vector<std::string> &a) {
  bool json = false, keys = false, roles = false;
  std::string explain;
  const std::vector<Option> options = {
      {"--json", "", "every table as one JSON document", [&](const std::string &) { json = true; }},
      {"--keys", "",
       "the BIR JSON keys of each instruction type, required and optional, as a Markdown table "
       "(isa/tables/inst_keys.def; docs/bir-format.md)",
       [&](const std::string &) { keys = true; }},
      {"--roles", "",
       "the role of each ins[i] / outs[i] of every type that reads operands, as a Markdown table",
       [&](const std::string &) { roles = true; }},
      {"--explain", "TYPE",
       "one instruction type: its operands' roles, its keys (required, type, default, "
       "meaning), engines, opcode bytes and cost rule",
       [&](const std::string &v) { explain = v; }},
  };
  if (!parse_options(a, options,
                     [](const std::string &o) { throw UsageError("isa takes no argument '" + o + "'"); })) {
    std::cout << "usage: neuronsim isa [--json | --keys | --roles | --explain TYPE]\n"
              << options_help(options);
    return 0;
  }
  if (json + keys + roles + !explain.empty() > 1)
    throw UsageError("isa takes one of --json, --keys, --roles and --explain TYPE");
  const auto executes = [](isa::InstructionType t) { return engines::executes(t); };
  if (!explain.empty()) {
    std::vector<std::string> names;
    for (int i = 0; i < isa::kNumInstructionTypes; ++i)
      names.push_back(isa::inst_type_name(static_cast<isa::InstructionType>(i)));
    const auto t = isa::inst_type_from_name(explain);
    if (!t)
      throw UsageError("--explain: " + isa::unknown_name("instruction type", explain, names, {}, 0) +
                       "; `neuronsim isa` lists the " + std::to_string(names.size()) + " types");
    isa::ExplainExtras x;
    x.executes = engines::executes(*t);
    x.not_executed = engines::not_executed_reason(*t);
    if (const char *rule = engines::cost_rule_name(*t))
      x.cost_rule = rule, x.cost_why = engines::cost_rule_why(*t);
    std::cout << isa::explain_type(*t, x);
    return 0;
  }
  if (roles) {
    std::cout << isa::roles_table();
    return 0;
  }
  if (keys) {
    // The rows of the --json document's instruction_types, so that both read the one table.
    auto words = [](const nlohmann::json &list) {
      std::string s;
      for (const auto &k : list) s += (s.empty() ? "" : " ") + k.get<std::string>();
      return s.empty() ? std::string("-") : s;
    };
    std::cout << "| type | required keys | optional keys |\n|---|---|---|\n";
    const nlohmann::json tables = isa::isa_tables_json(executes);
    for (const auto &t : tables["instruction_types"])
      std::cout << "| " << t["name"].get<std::string>() << " | " << words(t["required_keys"]) << " | "
                << words(t["optional_keys"]) << " |\n";
    return 0;
  }
  if (json) std::cout << isa::isa_tables_json(executes).dump(1) << "\n";
  else std::cout << isa::isa_tables_text(executes);
  return 0;
}

} // namespace neuronsim::cli
