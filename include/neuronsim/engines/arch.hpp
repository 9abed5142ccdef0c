// Per-architecture parameters (DESIGN.md section 3: engines/ defines the struct, sim/arch/*.json fills it; the
// JSON files are compiled in). The members are generated from arch_params.def, the one list of parameters; their
// values and sources live only in sim/arch/<arch>.json (a default-constructed ArchParams is all zeros: tests take
// builtin_arch("trn1")).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "neuronsim/isa/tables.hpp"

namespace neuronsim::engines {

struct ArchParams {
  std::string name;
#define NS_ARCH(ctype, member, key, range, doc) ctype member{};
#include "neuronsim/engines/arch_params.def"
#undef NS_ARCH
};

// The parameters of "trn1", "trn2" or "trn3" from sim/arch/<name>.json; throws InputError for another name.
ArchParams builtin_arch(const std::string &name);
std::vector<std::string> arch_names();

// Reads one architecture file's text. Every key of arch_params.def must be present as {"value": v, "source":
// "<non-empty>"}, besides "name" and "description"; an unknown key, a missing one, a missing source, a value of
// the wrong type or outside the row's range (arch_params.def) is an InputError naming `file`, the key and the value.
ArchParams parse_arch(const std::string &file, const std::string &json_text);

// `--arch` values: a name with a '/' or ending in ".json" names an architecture file (the schema of
// sim/arch/*.json, read by parse_arch); anything else is a built-in name.
bool names_arch_file(const std::string &name_or_file);
// An architecture as every command names it (--arch, --set, arch= in Python): a built-in name or a file
// (names_arch_file), optionally with parameters set over it as "BASE+{KEY=VALUE,KEY=VALUE}" (`--set
// KEY=VALUE`, docs/architectures.md). Its ArchParams::name is the text itself ("trn2+{dma_latency_ns=425}",
// "my.json"), so that the stats, the run header, compare and sweep name what ran, never the base alone.
struct ArchSpec {
  std::string base;                                      // "trn2" or a file
  std::vector<std::pair<std::string, std::string>> sets; // (key, value as JSON text), in the order given
};
// Splits "BASE+{K=V,...}" (InputError naming the text when the braces hold something other than K=V items).
ArchSpec split_arch_spec(const std::string &spec);
// The text of a spec: "BASE", or "BASE+{K=V,K=V}".
std::string arch_spec_text(const ArchSpec &s);
// One setting checked alone: KEY a parameter of arch_params.def and VALUE (JSON: a number, true, false) of
// its type and in its range. Returns the value as canonical JSON text ("54.4"); InputError naming `where` and
// the key otherwise.
std::string arch_setting_value(const std::string &where, const std::string &key, const std::string &value);
// builtin_arch(name), or parse_arch of the file (InputError naming the file when it cannot be read), with the
// spec's settings written over it and read by the same loader (a key set twice is refused). The name is the
// spec.
ArchParams load_arch(const std::string &spec);

// Each parameter's key, what it is (its unit) and its range as text ("[0, 1e+06]"; empty: any value of the
// type), in the order of arch_params.def (`neuronsim arch --keys`).
struct ArchParamInfo {
  std::string key, doc, range;
};
std::vector<ArchParamInfo> arch_param_info();
// The compiled-in text of sim/arch/<name>.json (`neuronsim arch --show`); InputError for an unknown name.
const std::string &builtin_arch_json(const std::string &name);

// The value of parameter `key` as a number (true/false as 1/0; the generation as 2, 3, 4); InputError for a
// key arch_params.def does not have.
double arch_param_value(const ArchParams &a, const std::string &key);

// The JSON keys of arch_params.def, in order (for tests and `neuronsim isa`-style listings).
std::vector<std::string> arch_param_keys();

} // namespace neuronsim::engines
