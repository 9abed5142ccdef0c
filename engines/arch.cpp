// The loader of sim/arch/*.json, generated from arch_params.def together with the ArchParams struct.
#include "neuronsim/engines/arch.hpp"

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "neuronsim/error.hpp"

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
#define NS_ARCH(ctype, member, key, doc) key,
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

const char *type_name(const double &) { return "a number"; }
const char *type_name(const int64_t &) { return "an integer"; }
const char *type_name(const int &) { return "an integer"; }
const char *type_name(const bool &) { return "true or false"; }
const char *type_name(const isa::CoreGen &) { return "2, 3 or 4"; }

} // namespace

ArchParams parse_arch(const std::string &file, const std::string &json_text) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception &e) {
    throw InputError({file, -1, "", ""}, std::string("not JSON: ") + e.what());
  }
  if (!j.is_object()) throw InputError({file, -1, "", ""}, "an architecture file is a JSON object");
  auto error = [&](const std::string &key, const std::string &msg) { return InputError({file, -1, "", key}, msg); };
  ArchParams a;
  for (const char *key : {"name", "description"})
    if (!j.contains(key) || !j.at(key).is_string()) throw error(key, "missing (a string)");
  a.name = j.at("name").get<std::string>();
  std::set<std::string> known = {"name", "description"};
  auto entry = [&](const char *key, auto &member) {
    known.insert(key);
    if (!j.contains(key)) throw error(key, "missing: every parameter of arch_params.def must be given");
    const json &e = j.at(key);
    if (!e.is_object() || !e.contains("value") || !e.contains("source") || e.size() != 2)
      throw error(key, "expected {\"value\": ..., \"source\": \"...\"}");
    if (!e.at("source").is_string() || e.at("source").get<std::string>().empty())
      throw error(key, "the source must be a non-empty string");
    if (!read(e.at("value"), member)) throw error(key, std::string("the value must be ") + type_name(member));
  };
#define NS_ARCH(ctype, member, key, doc) entry(key, a.member);
#include "neuronsim/engines/arch_params.def"
#undef NS_ARCH
  for (const auto &kv : j.items())
    if (!known.count(kv.key())) throw error(kv.key(), "unknown parameter (not in arch_params.def)");
  return a;
}

ArchParams builtin_arch(const std::string &name) {
  const auto &texts = arch_json_texts();
  auto it = texts.find(name);
  if (it == texts.end()) {
    std::string known;
    for (const auto &kv : texts) known += (known.empty() ? "" : ", ") + kv.first;
    throw InputError({}, "unknown architecture '" + name + "' (known: " + known + ")");
  }
  return parse_arch("sim/arch/" + name + ".json", it->second);
}

} // namespace neuronsim::engines
