// `neuronsim arch`: the built-in architectures (sim/arch/*.json, compiled in). --list gives one line per name
// (generation and engine clocks); --show prints one's JSON, which `--arch FILE.json` reads back unchanged -- the
// starting point of a hypothetical part (README "Architectures").
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "neuronsim/engines/arch.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/file_input.hpp"

namespace neuronsim::cli {

namespace {

const char *kArchHelp = R"(usage: neuronsim arch --list | --keys | --show NAME|FILE.json

  --list                 the built-in architectures, one a line: name, NeuronCore generation, engine clocks
  --keys                 every parameter --set KEY=VALUE takes: key, range, what it is (arch_params.def)
  --show NAME            the built-in architecture's JSON, every parameter with its source (sim/arch/NAME.json)
  --show FILE.json       an architecture file, checked as --arch checks it, printed as read

A what-if in one flag: `neuronsim run KERNEL --arch trn2 --set dma_fixed_ns=650` (repeatable; the run is named
"trn2+{dma_fixed_ns=650}" in its header, stats, compare and sweep; arch="trn2+{dma_fixed_ns=650}" in Python).
An architecture of your own: `neuronsim arch --show trn2 > my.json`, edit the values (and their sources), then
`neuronsim run KERNEL --arch my.json` (also compare, validate, encode, sweep, and arch= in Python). A name with a
'/' or ending in .json is a file; every key of arch_params.def must be given, with a value in its range.
)";

std::string list_line(const std::string &name) {
  const engines::ArchParams a = engines::builtin_arch(name);
  std::ostringstream s;
  s << name << "  NeuronCore-v" << static_cast<int>(a.gen) << "  PE " << a.pe_ghz << " GHz, ACT " << a.act_ghz
    << " GHz, POOL " << a.pool_ghz << " GHz, DVE " << a.dve_ghz << " GHz, SP " << a.sp_ghz << " GHz";
  return s.str();
}

} // namespace

int cmd_arch(const std::vector<std::string> &a) {
  bool list = false, keys = false;
  std::string show;
  const std::vector<Option> options = {
      {"--list", "", "the built-in architectures, one a line", [&](const std::string &) { list = true; }},
      {"--keys", "", "every parameter --set KEY=VALUE takes", [&](const std::string &) { keys = true; }},
      {"--show", "NAME|FILE.json", "one architecture's JSON",
       [&](const std::string &v) { show = need_path("--show", v); }},
  };
  if (!parse_options(a, options, [](const std::string &o) {
        throw UsageError("unknown argument '" + o + "' (arch takes --list, --keys or --show NAME|FILE.json)");
      })) {
    std::cout << kArchHelp;
    return 0;
  }
  if (list + keys + !show.empty() != 1)
    throw UsageError("arch takes --list, --keys or --show NAME|FILE.json (neuronsim arch --help)");
  if (list) {
    for (const auto &name : engines::arch_names()) std::cout << list_line(name) << "\n";
    return 0;
  }
  if (keys) {
    for (const auto &p : engines::arch_param_info())
      std::cout << p.key << "  " << (p.range.empty() ? "(any)" : p.range) << "  " << p.doc << "\n";
    return 0;
  }
  if (!engines::names_arch_file(show)) {
    std::cout << engines::builtin_arch_json(show);
    return 0;
  }
  engines::load_arch(show); // refuses a file --arch would refuse, naming the key
  std::cout << isa::read_regular_file(show, uint64_t(1) << 20, "architecture file");
  return 0;
}

} // namespace neuronsim::cli
