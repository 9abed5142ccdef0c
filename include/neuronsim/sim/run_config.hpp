// A workload folder's run.json: how the folder's kernel must be run when the command line (or Python) does
// not say -- its cores and logical-core size, its architecture and its comparison tolerance -- so that
// `neuronsim run workloads/multicore/tp_mlp_4ranks` needs no flags that only a README gives. Read by `run`,
// `compare`, `sweep` and the Python module (sim::load_kernel); what the caller gives takes precedence, and
// the kernel's own needs (sim/core_needs.hpp) are checked against the result either way.
//
//   {"cores": 4, "lnc": 1, "arch": "trn2", "tolerance": {"rtol": 1e-5, "atol": 1e-6}}
//
// Every key is optional; an unknown key, a value of the wrong type or out of range is an InputError naming
// the file and the key (the nearest known key for a misspelt one). `arch` is a built-in name or an
// architecture file, a relative path being relative to the folder. The tolerance lives in run.json or in
// tolerance.json, not both.
#pragma once

#include <optional>
#include <string>

namespace neuronsim::sim {

inline constexpr const char *kRunConfigFile = "run.json";

struct RunConfig {
  std::string file; // the run.json read; empty when the folder has none
  std::optional<int> cores, lnc;
  std::optional<std::string> arch; // a built-in name or an architecture file's path (resolved)
  std::optional<double> rtol, atol;
};

// Reads and checks `path` (a run.json).
RunConfig read_run_config(const std::string &path);

} // namespace neuronsim::sim
