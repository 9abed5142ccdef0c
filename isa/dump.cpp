// Renders the ISA tables (the .def tables via tables.hpp and bundle.hpp) as JSON and as aligned text. No fact
// lives here.
#include "neuronsim/isa/dump.hpp"

#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/isa/inst_rules.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <vector>

namespace neuronsim::isa {

namespace {
using nlohmann::json;

constexpr const char *kL3Rule = "L3 word = (0x10 << 8) | L2; QuantizeMx with SATURATE sets the high byte to 0x11 "
                                "(spec 003 INV-1)";

// The bundle codec's view of a type (isa/tables/bundle_fields.def): encodable = a form on every generation where
// instruction_wire.def gives it an opcode; layout = "reference" / "neuronsim" when all its forms are, else "mixed";
// "" when it has no form.
struct BundleSummary {
  bool encodable = false;
  std::string layout;
};
BundleSummary bundle_summary(const InstTypeInfo &it) {
  static const std::vector<BundleFormInfo> forms = bundle_forms();
  BundleSummary s;
  unsigned gens = 0;
  std::set<std::string> layouts;
  for (const auto &f : forms)
    if (std::find(f.types.begin(), f.types.end(), it.type) != f.types.end()) {
      gens |= f.gens;
      layouts.insert(f.layout);
    }
  bool any = false, all = true;
  for (CoreGen g : kCoreGens)
    if (it.encoded_on(g)) {
      any = true;
      all = all && ((gens >> static_cast<int>(g)) & 1u);
    }
  s.encodable = any && all;
  if (layouts.size() == 1) s.layout = *layouts.begin();
  else if (!layouts.empty()) s.layout = "mixed";
  return s;
}

std::string hex_upper(uint32_t v, int digits = 2) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*X", digits, v);
  return buf;
}

json bytes_json(const std::vector<uint8_t> &v) {
  json a = json::array();
  for (auto b : v) a.push_back(b);
  return a;
}

json names_json(const std::vector<InstructionType> &v) {
  json a = json::array();
  for (auto t : v) a.push_back(inst_type_name(t));
  return a;
}

std::string join(const std::vector<std::string> &parts, const char *sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

// Left-aligned columns separated by two spaces; trailing blanks trimmed.
void print_table(std::ostringstream &os, const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> width;
  for (const auto &r : rows)
    for (size_t c = 0; c < r.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], r[c].size());
    }
  for (const auto &r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      line += r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << '\n';
  }
}
} // namespace

json isa_tables_json(const std::function<bool(InstructionType)> &executes) {
  json j;
  json alu = json::array();
  for (const auto &op : alu_ops()) {
    json wire = json::object();
    for (CoreGen g : kCoreGens) {
      auto w = op.wire[static_cast<int>(g) - 2];
      wire[core_gen_name(g)] = w ? json(*w) : json(nullptr);
    }
    alu.push_back({{"ordinal", static_cast<int>(op.op)},
                   {"name", op.name},
                   {"class", operand_order_name(op.order)},
                   {"bitvec", op.bitvec},
                   {"wire", wire}});
  }
  j["alu_ops"] = alu;

  json enums = json::object(), info = json::object();
  for (const auto &t : enum_tables()) {
    json vals = json::array();
    for (int i = 0; i < t.count; ++i) vals.push_back({{"ordinal", t.entries[i].ordinal}, {"name", t.entries[i].name}});
    enums[t.type_name] = vals;
    info[t.type_name] = {{"json_key", t.json_key}, {"source", t.source}};
  }
  j["enums"] = enums;
  j["enum_info"] = info;

  const auto engine_names = [](const std::vector<Engine> &v) {
    json a = json::array();
    for (auto e : v) a.push_back(enum_name(e));
    return a;
  };
  json its = json::array();
  for (const auto &it : inst_type_infos()) {
    json engines = json::array();
    for (auto e : it.engines) engines.push_back(enum_name(e));
    json l2 = json::object(), l3 = json::object();
    for (CoreGen g : kCoreGens) {
      l2[core_gen_name(g)] = bytes_json(it.l2_for(g));
      json words = json::array();
      for (auto w : it.l3_for(g)) words.push_back(w);
      l3[core_gen_name(g)] = words;
    }
    its.push_back({{"ordinal", static_cast<int>(it.type)},
                   {"name", it.name},
                   {"family", it.family},
                   {"kind", inst_kind_name(it.kind)},
                   {"engines", engines},
                   {"engine_text", it.engine_text},
                   {"l2", l2},
                   {"l3", l3},
                   {"bundles", {{"min", it.min_bundles}, {"max", it.max_bundles < 0 ? json(nullptr) : json(it.max_bundles)}}},
                   {"split", it.split},
                   {"col", names_json(it.col)},
                   {"shared", names_json(it.shared)},
                   {"confidence", it.confidence},
                   {"executes", executes ? executes(it.type) : false},
                   // inst_keys.def / engines_allowed.def (isa/inst_rules.hpp)
                   {"required_keys", inst_keys(it.type).required},
                   {"optional_keys", inst_keys(it.type).optional},
                   {"allowed_engines", engine_names(allowed_engines(it.type))},
                   {"bundle", {{"encodable", bundle_summary(it).encodable},
                               {"layout", bundle_summary(it).layout.empty() ? json(nullptr)
                                                                            : json(bundle_summary(it).layout)}}}});
  }
  j["instruction_types"] = its;
  j["l3_rule"] = kL3Rule;
  return j;
}

std::string isa_tables_text(const std::function<bool(InstructionType)> &executes) {
  std::ostringstream os;

  os << "AluOpType (" << kNumAluOps << " ops; wire = L3 ALU_OP value per generation, '-' = none)\n";
  std::vector<std::vector<std::string>> rows = {{"ord", "name", "class", "bitvec", "v2", "v3", "v4"}};
  for (const auto &op : alu_ops()) {
    std::vector<std::string> r = {std::to_string(static_cast<int>(op.op)), op.name, operand_order_name(op.order),
                                  op.bitvec ? "yes" : "no"};
    for (CoreGen g : kCoreGens) {
      auto w = op.wire[static_cast<int>(g) - 2];
      r.push_back(w ? hex_upper(*w, *w > 0xFF ? 8 : 2) : "-");
    }
    rows.push_back(r);
  }
  print_table(os, rows);

  for (const auto &t : enum_tables()) {
    os << '\n' << t.type_name << "  (json: " << t.json_key << "; source: " << t.source << ")\n";
    std::vector<std::vector<std::string>> er;
    for (int i = 0; i < t.count; ++i) er.push_back({"  " + std::to_string(t.entries[i].ordinal), t.entries[i].name});
    print_table(os, er);
  }

  os << "\nInstructionType (" << kNumInstructionTypes << " types; L2 opcode bytes per generation, '-' = not "
     << "encoded; " << kL3Rule << ")\n";
  std::vector<std::vector<std::string>> ir = {
      {"ord", "name", "kind", "engines", "v2", "v3", "v4", "bundles", "col", "shared", "conf", "exec", "layout"}};
  for (const auto &it : inst_type_infos()) {
    std::vector<std::string> engines;
    for (auto e : it.engines) engines.push_back(enum_name(e));
    std::vector<std::string> r = {std::to_string(static_cast<int>(it.type)), it.name, inst_kind_name(it.kind),
                                  engines.empty() ? std::string("-") : join(engines, "/")};
    for (CoreGen g : kCoreGens) {
      std::vector<std::string> b;
      for (auto x : it.l2_for(g)) b.push_back(hex_upper(x));
      r.push_back(b.empty() ? std::string("-") : join(b, ","));
    }
    std::string bundles = std::to_string(it.min_bundles);
    if (it.max_bundles < 0)
      bundles += "+";
    else if (it.max_bundles != it.min_bundles)
      bundles += "-" + std::to_string(it.max_bundles);
    r.push_back(bundles);
    std::vector<std::string> col, shared;
    for (auto c : it.col) col.push_back(inst_type_name(c));
    for (auto c : it.shared) shared.push_back(inst_type_name(c));
    r.push_back(col.empty() ? std::string("-") : join(col, ","));
    r.push_back(shared.empty() ? std::string("-") : join(shared, ","));
    r.push_back(it.confidence);
    r.push_back(executes && executes(it.type) ? "yes" : "no");
    const BundleSummary bs = bundle_summary(it);
    r.push_back(bs.layout.empty() ? std::string("-") : bs.layout + (bs.encodable ? "" : " (partial)"));
    ir.push_back(r);
  }
  print_table(os, ir);

  os << "\nInstructionType selectors ([split] / multi-bundle)\n";
  std::vector<std::vector<std::string>> sr;
  for (const auto &it : inst_type_infos())
    if (*it.split) sr.push_back({"  " + std::string(it.name), it.split});
  print_table(os, sr);
  return os.str();
}

} // namespace neuronsim::isa

namespace neuronsim::isa {

namespace {

std::string role_line(const char *side, size_t i, const OperandRole &r) {
  std::string where = std::string(side) + "[" + std::to_string(i) + (r.repeats ? "...]" : "]");
  std::string s = "  " + where;
  s.resize(std::max<size_t>(s.size() + 2, 12), ' ');
  std::string name = r.name;
  name.resize(std::max<size_t>(name.size() + 2, 14), ' ');
  return s + name + (r.optional ? "optional: " : "") + r.meaning + "\n";
}

} // namespace

std::string explain_type(InstructionType t, const ExplainExtras &x) {
  const InstTypeInfo &it = inst_type_info(t);
  const InstKeys &k = inst_keys(t);
  std::ostringstream os;
  os << it.name << "  (" << it.family << ", " << inst_kind_name(it.kind) << "; "
     << (x.executes ? "the simulator executes it" : "not executed: " + x.not_executed) << ")\n";
  std::vector<std::string> bytes;
  for (CoreGen g : kCoreGens) {
    std::vector<std::string> b;
    for (auto v : it.l2_for(g))
      b.push_back(hex_upper(v));
    if (!b.empty())
      bytes.push_back(std::string(core_gen_name(g)) + " " + join(b, ","));
  }
  os << "opcode bytes: " << (bytes.empty() ? std::string("none (no 64-byte bundle)") : join(bytes, "; "))
     << "\n";
  const std::string engines = allowed_engines_text(t);
  os << "engines: " << (engines.empty() ? std::string("any (the table pins none)") : engines) << "\n";
  os << "operands:";
  if (k.ins.empty() && k.outs.empty())
    os << " none read\n";
  else
    os << "\n";
  for (size_t i = 0; i < k.ins.size(); ++i)
    os << role_line("ins", i, k.ins[i]);
  for (size_t i = 0; i < k.outs.size(); ++i)
    os << role_line("outs", i, k.outs[i]);
  std::vector<std::vector<std::string>> rows = {{"  key", "required", "type", "default", "meaning"}};
  for (const auto *list : {&k.required, &k.optional})
    for (const auto &key : *list) {
      const FieldInfo *f = field_info(t, key);
      rows.push_back({"  " + key, list == &k.required ? "yes" : "no", f ? f->type : "-",
                      f ? f->fallback : "-", f ? f->meaning : "read, not modelled"});
    }
  os << "keys (besides the base keys opcode, name, engine, ins, outs, dependencies, debug, ...):";
  if (rows.size() == 1)
    os << " none\n";
  else {
    os << "\n";
    print_table(os, rows);
  }
  os << "cost: "
     << (x.cost_rule.empty() ? std::string("none (not executed)") : x.cost_rule + " -- " + x.cost_why)
     << "\n";
  return os.str();
}

std::string roles_table() {
  std::string s = "| type | ins | outs |\n|---|---|---|\n";
  auto list = [](const std::vector<OperandRole> &v) {
    std::string r;
    for (size_t i = 0; i < v.size(); ++i)
      r += (i ? ", " : "") + std::string("`") + v[i].name + (v[i].repeats ? "..." : "") +
           (v[i].optional ? "?" : "") + "`";
    return r.empty() ? std::string("-") : r;
  };
  for (const auto &it : inst_type_infos()) {
    const InstKeys &k = inst_keys(it.type);
    if (k.ins.empty() && k.outs.empty())
      continue;
    s += "| " + std::string(it.name) + " | " + list(k.ins) + " | " + list(k.outs) + " |\n";
  }
  return s;
}

} // namespace neuronsim::isa
