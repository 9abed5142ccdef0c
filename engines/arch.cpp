// The loader of sim/arch/*.json, generated from arch_params.def together with the ArchParams struct.
#include "neuronsim/engines/arch.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/names.hpp"

namespace neuronsim::engines {

// Generated from sim/arch/*.json by CMake (each number there carries its source).
const std::map<std::string, std::string> &arch_json_texts();

std::vector<std::string> arch_names() {
  std::vector<std::string> names;
  for (const auto &kv : arch_json_texts()) names.push_back(kv.first);
  return names;
}

std::vector<std::string> arch_param_keys() {
  return {
#define NS_ARCH(ctype, member, key, range, doc) key,
#include "neuronsim/engines/arch_params.def"
#undef NS_ARCH
  };
}

namespace {

using nlohmann::json;

// One reader per member type; each refuses a value of another JSON type.
bool read(const json &v, double &out) {
  if (!v.is_number()) return false;
  out = v.get<double>();
  return true;
}
bool read(const json &v, int64_t &out) {
  if (!v.is_number_integer()) return false;
  out = v.get<int64_t>();
  return true;
}
bool read(const json &v, int &out) {
  if (!v.is_number_integer()) return false;
  out = v.get<int>();
  return true;
}
bool read(const json &v, bool &out) {
  if (!v.is_boolean()) return false;
  out = v.get<bool>();
  return true;
}
bool read(const json &v, isa::CoreGen &out) {
  if (!v.is_number_integer()) return false;
  const int g = v.get<int>();
  for (isa::CoreGen c : isa::kCoreGens)
    if (static_cast<int>(c) == g) return out = c, true;
  return false;
}

// The range column of arch_params.def (its header says what each means and why).
struct Range {
  double lo, hi;
  bool lo_open = false;
  bool all = false;
};
Range any() { return {0, 0, false, true}; }
Range between(double lo, double hi) { return {lo, hi}; }
Range clock() { return {0.01, 100}; }
Range cycles() { return {0, 1e6}; }
Range nanoseconds() { return {0, 1e6}; }
Range bandwidth() { return {0.001, 1e6}; }
Range fraction() { return {0, 1, true}; }

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
std::string range_text(const Range &r) {
  return (r.lo_open ? "(" : "[") + number_text(r.lo) + ", " + number_text(r.hi) + "]";
}
template <typename T> double as_double(const T &v) { return static_cast<double>(v); }
double as_double(const isa::CoreGen &) { return 0.0; }
template <typename T> double value_of(const T &v) {
  return static_cast<double>(v);
}
double value_of(const isa::CoreGen &g) {
  return static_cast<int>(g);
}

const char *type_name(const double &) { return "a number"; }
const char *type_name(const int64_t &) { return "an integer"; }
const char *type_name(const int &) { return "an integer"; }
const char *type_name(const bool &) { return "true or false"; }
const char *type_name(const isa::CoreGen &) { return "2, 3 or 4"; }

// One parameter's entry {"value": v, "source": "..."}: its type and range checked (InputError naming `file`,
// the key and the value).
template <typename T>
void read_entry(const std::string &file, const char *key, const json &e, T &member, const Range &range) {
  auto error = [&](const std::string &msg) { return InputError({file, -1, "", key}, msg); };
  if (!e.is_object() || !e.contains("value") || !e.contains("source") || e.size() != 2)
    throw error("expected {\"value\": ..., \"source\": \"...\"}");
  if (!e.at("source").is_string() || e.at("source").get<std::string>().empty())
    throw error("the source must be a non-empty string");
  if (!read(e.at("value"), member))
    throw error(std::string("the value must be ") + type_name(member) + ", got " + e.at("value").dump());
  if (range.all)
    return;
  const double v = as_double(member);
  if (!std::isfinite(v) || (range.lo_open ? v <= range.lo : v < range.lo) || v > range.hi)
    throw error("the value must be in " + range_text(range) + ", got " + e.at("value").dump() +
                " (arch_params.def)");
}

} // namespace

ArchParams parse_arch(const std::string &file, const std::string &json_text) {
  // Malformed JSON is an InputError naming the file and where the parser stopped (isa/file_input.hpp).
  const json j = isa::parse_json_text(json_text, file);
  if (!j.is_object()) throw InputError({file, -1, "", ""}, "an architecture file is a JSON object");
  auto error = [&](const std::string &key, const std::string &msg) { return InputError({file, -1, "", key}, msg); };
  ArchParams a;
  for (const char *key : {"name", "description"})
    if (!j.contains(key) || !j.at(key).is_string()) throw error(key, "missing (a string)");
  a.name = j.at("name").get<std::string>();
  // Unknown keys first: a misspelt key is also a missing one, and its own name is the better message.
  std::set<std::string> known = {"name", "description"};
  for (const auto &k : arch_param_keys()) known.insert(k);
  for (const auto &kv : j.items())
    if (!known.count(kv.key()))
      throw error(kv.key(),
                  "unknown parameter (not in arch_params.def)" +
                      isa::did_you_mean(kv.key(), std::vector<std::string>(known.begin(), known.end())));
  auto entry = [&](const char *key, auto &member, const Range &range) {
    if (!j.contains(key)) throw error(key, "missing: every parameter of arch_params.def must be given");
    read_entry(file, key, j.at(key), member, range);
  };
#define NS_ARCH(ctype, member, key, range, doc) entry(key, a.member, range);
#include "neuronsim/engines/arch_params.def"
#undef NS_ARCH
  // A PSUM bank is a whole number of bytes (sim/core_resources.cpp maps an address to its bank by division).
  if (a.psum_bytes_per_partition % a.psum_banks != 0)
    throw error("psum_banks", std::to_string(a.psum_banks) + " banks do not divide psum_bytes_per_partition " +
                                  std::to_string(a.psum_bytes_per_partition));
  return a;
}

std::vector<ArchParamInfo> arch_param_info() {
  return {
#define NS_ARCH(ctype, member, key, range, doc) {key, doc, range.all ? std::string() : range_text(range)},
#include "neuronsim/engines/arch_params.def"
#undef NS_ARCH
  };
}

double arch_param_value(const ArchParams &a, const std::string &key) {
#define NS_ARCH(ctype, member, k, range, doc)                                                                \
  if (key == k)                                                                                              \
    return value_of(a.member);
#include "neuronsim/engines/arch_params.def"
#undef NS_ARCH
  throw InputError({a.name, -1, "", key},
                   "unknown architecture parameter (`neuronsim arch --keys` lists them)");
}

ArchSpec split_arch_spec(const std::string &spec) {
  ArchSpec s;
  const auto open = spec.find("+{");
  if (open == std::string::npos) {
    s.base = spec;
    return s;
  }
  s.base = spec.substr(0, open);
  if (spec.back() != '}')
    throw InputError({spec, -1, "", ""}, "an architecture with parameters set is BASE+{KEY=VALUE,...}");
  const std::string body = spec.substr(open + 2, spec.size() - open - 3);
  size_t at = 0;
  while (at <= body.size()) {
    const size_t comma = std::min(body.find(',', at), body.size());
    const std::string item = body.substr(at, comma - at);
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw InputError({spec, -1, "", ""}, "'" + item + "' is not KEY=VALUE (BASE+{KEY=VALUE,...})");
    s.sets.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    at = comma + 1;
  }
  return s;
}

std::string arch_spec_text(const ArchSpec &s) {
  if (s.sets.empty())
    return s.base;
  std::string t = s.base + "+{";
  for (size_t i = 0; i < s.sets.size(); ++i)
    t += (i ? "," : "") + s.sets[i].first + "=" + s.sets[i].second;
  return t + "}";
}

std::string arch_setting_value(const std::string &where, const std::string &key, const std::string &value) {
  json v;
  try {
    v = json::parse(value);
  } catch (const json::exception &) {
    throw InputError({where, -1, "", key}, "the value must be a number or true/false, got '" + value + "'");
  }
  const json entry = {{"value", v}, {"source", "--set"}};
  bool found = false;
  auto check = [&](const char *k, auto member, const Range &range) {
    if (key != k)
      return;
    found = true;
    read_entry(where, k, entry, member, range);
  };
#define NS_ARCH(ctype, member, key, range, doc) check(key, ctype{}, range);
#include "neuronsim/engines/arch_params.def"
#undef NS_ARCH
  if (!found) {
    std::vector<std::string> keys;
    for (const auto &p : arch_param_info())
      keys.push_back(p.key);
    throw InputError({where, -1, "", key}, "unknown architecture parameter" + isa::did_you_mean(key, keys) +
                                               " (`neuronsim arch --keys` lists them)");
  }
  return v.dump();
}

bool names_arch_file(const std::string &s) {
  return s.find('/') != std::string::npos ||
         (s.size() >= 5 && s.compare(s.size() - 5, 5, ".json") == 0);
}

const std::string &builtin_arch_json(const std::string &name) {
  const auto &texts = arch_json_texts();
  auto it = texts.find(name);
  if (it == texts.end()) builtin_arch(name);  // throws, listing the known names
  return it->second;
}

ArchParams load_arch(const std::string &spec) {
  const ArchSpec s = split_arch_spec(spec);
  const std::string &base = s.base;
  std::string file = "sim/arch/" + base + ".json", text;
  if (!names_arch_file(base)) {
    if (s.sets.empty())
      return builtin_arch(base);
    text = builtin_arch_json(base);
  } else {
    // An architecture file is a few KiB; 1 MiB bounds what a mistyped path can make us read.
    text = isa::read_regular_file(base, uint64_t(1) << 20, "architecture file");
    file = base;
  }
  if (s.sets.empty()) {
    ArchParams a = parse_arch(file, text);
    a.name = base; // a file is named by its path: its "name" is often the built-in it was copied from
    return a;
  }
  // Each setting checked alone first (its key known, its value of the key's type and range), then written
  // over the base's entry and the whole read by the same loader (the cross-checks, such as PSUM banks,
  // included).
  json j = isa::parse_json_text(text, file);
  std::set<std::string> seen;
  for (const auto &[key, value] : s.sets) {
    if (!seen.insert(key).second)
      throw InputError({spec, -1, "", key}, "set twice");
    j[key] = {{"value", json::parse(arch_setting_value(spec, key, value))}, {"source", "--set " + key}};
  }
  ArchParams a = parse_arch(spec, j.dump());
  a.name = spec;
  return a;
}

ArchParams builtin_arch(const std::string &name) {
  const auto &texts = arch_json_texts();
  auto it = texts.find(name);
  if (it == texts.end()) {
    std::string known;
    for (const auto &kv : texts) known += (known.empty() ? "" : ", ") + kv.first;
    std::vector<std::string> names;
    for (const auto &kv : texts)
      names.push_back(kv.first);
    throw InputError({}, "unknown architecture '" + name + "' (built in: " + known +
                             "; a file of your own is named by a path ending in .json)" +
                             isa::did_you_mean(name, names));
  }
  return parse_arch("sim/arch/" + name + ".json", it->second);
}

} // namespace neuronsim::engines
