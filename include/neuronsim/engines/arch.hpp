// Per-architecture parameters (DESIGN.md section 3: engines/ defines the struct, sim/arch/*.json fills it; the
// JSON files are compiled in). The members are generated from arch_params.def, the one list of parameters; their
// values and sources live only in sim/arch/<arch>.json (a default-constructed ArchParams is all zeros: tests take
// builtin_arch("trn1")).
#pragma once

#include <cstdint>
#include <string>
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
// builtin_arch(name), or parse_arch of the file (InputError naming the file when it cannot be read).
ArchParams load_arch(const std::string &name_or_file);
// The compiled-in text of sim/arch/<name>.json (`neuronsim arch --show`); InputError for an unknown name.
const std::string &builtin_arch_json(const std::string &name);

// The JSON keys of arch_params.def, in order (for tests and `neuronsim isa`-style listings).
std::vector<std::string> arch_param_keys();

} // namespace neuronsim::engines
