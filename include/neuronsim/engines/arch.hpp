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
#define NS_ARCH(ctype, member, key, doc) ctype member{};
#include "neuronsim/engines/arch_params.def"
#undef NS_ARCH
};

// The parameters of "trn1", "trn2" or "trn3" from sim/arch/<name>.json; throws InputError for another name.
ArchParams builtin_arch(const std::string &name);
std::vector<std::string> arch_names();

// Reads one architecture file's text. Every key of arch_params.def must be present as {"value": v, "source":
// "<non-empty>"}, besides "name" and "description"; an unknown key, a missing one, a missing source or a value of
// the wrong type is an InputError naming `file` and the key.
ArchParams parse_arch(const std::string &file, const std::string &json_text);

// The JSON keys of arch_params.def, in order (for tests and `neuronsim isa`-style listings).
std::vector<std::string> arch_param_keys();

} // namespace neuronsim::engines
