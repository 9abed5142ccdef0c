// The loader of sim/arch/*.json, generated from arch_params.def together with the ArchParams struct.
#include "neuronsim/engines/arch.hpp"

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

const char *type_name(const double &) { return "a number"; }
const char *type_name(const int64_t &) { return "an integer"; }
const char *type_name(const int &) { return "an integer"; }
const char *type_name(const bool &) { return "true or false"; }
const char *type_name(const isa::CoreGen &) { return "2, 3 or 4"; }

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
    const json &e = j.at(key);
    if (!e.is_object() || !e.contains("value") || !e.contains("source") || e.size() != 2)
      throw error(key, "expected {\"value\": ..., \"source\": \"...\"}");
    if (!e.at("source").is_string() || e.at("source").get<std::string>().empty())
      throw error(key, "the source must be a non-empty string");
    if (!read(e.at("value"), member))
      throw error(key, std::string("the value must be ") + type_name(member) + ", got " + e.at("value").dump());
    if (range.all) return;
    const double v = as_double(member);
    if (!std::isfinite(v) || (range.lo_open ? v <= range.lo : v < range.lo) || v > range.hi)
      throw error(key, "the value must be in " + range_text(range) + ", got " + e.at("value").dump() +
                           " (arch_params.def)");
  };
#define NS_ARCH(ctype, member, key, range, doc) entry(key, a.member, range);
#include "neuronsim/engines/arch_params.def"
#undef NS_ARCH
  // A PSUM bank is a whole number of bytes (sim/core.cpp maps an address to its bank by division).
  if (a.psum_bytes_per_partition % a.psum_banks != 0)
    throw error("psum_banks", std::to_string(a.psum_banks) + " banks do not divide psum_bytes_per_partition " +
                                  std::to_string(a.psum_bytes_per_partition));
  return a;
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

ArchParams load_arch(const std::string &name_or_file) {
  if (!names_arch_file(name_or_file)) return builtin_arch(name_or_file);
  // An architecture file is a few KiB; 1 MiB bounds what a mistyped path can make us read.
  const std::string text = isa::read_regular_file(name_or_file, uint64_t(1) << 20, "architecture file");
  return parse_arch(name_or_file, text);
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
