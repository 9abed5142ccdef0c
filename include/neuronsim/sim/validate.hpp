// Differential validation of an encoder (DESIGN.md 1 job 3, issue 6): execute bundle streams and the BIR they
// came from on the same model with the same inputs, compare what every instruction wrote and every output, and
// lint the streams for known encoder traps.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "neuronsim/isa/program.hpp"
#include "neuronsim/sim/core_needs.hpp"
#include "neuronsim/sim/io.hpp"

namespace neuronsim::sim {

struct ValidateOptions {
  std::string arch;          // empty: the architecture of the streams' generation (stream_form.hpp arch_for_gen)
  std::vector<std::pair<std::string, std::string>>
      arch_sets;             // set over it (`--set`, run_settings.hpp parse_arch_set)
  InputSpec inputs;          // the same inputs feed both runs; missing ones are generated from the tensor name
  double rtol = 0.0, atol = 0.0;  // both sides run the same semantics, so agreement is exact by default
  // A multi-core bundle folder (cores.json, encode --cores): 0 = the folder's; given, they must match it.
  int cores = 0, lnc = 0;
  CoreSettingNames names; // how a refusal of the kernel's cores names them (--cores, or Python's cores=)
};

struct ValidateReport {
  bool agree = false;
  int lint_errors = 0;
  std::vector<std::string> lint;   // one finding per line: where (engine, stream index, file offset, name), what
  std::vector<std::string> notes;  // counts, simulated times, things that could not be compared
  std::string divergence;          // the first instruction (BIR program order) whose written data differ, or
                                   // the first output that differs; empty when none
  std::string summary;             // one line: "validate: OK ..." or "validate: DIFFER: <first problem>"
};

// `bir` is the kernel as read from BIR JSON; `bundle_dir` holds manifest.json and the engine streams. Throws
// InputError only when the manifest itself is unreadable; a stream that does not decode is a lint error.
ValidateReport validate_bundles(const isa::Program &bir, const std::string &bundle_dir, const ValidateOptions &opt);

// The same for a multi-core bundle folder (`bundle_dir`/core<i>, encode --cores): the BIR runs on `cores`
// cores
// (`lnc` per logical core) and core i's streams on core i, in one device each; every core's lint, its
// instructions (the first divergence is named with its core) and every rank's outputs are compared. `inputs`
// of rank r: per tensor inputs.dir/rank<r>/ when present, else inputs.dir (docs/multicore.md).
ValidateReport validate_device_bundles(const isa::Program &bir, const std::string &bundle_dir, int cores, int lnc,
                                       const ValidateOptions &opt);

} // namespace neuronsim::sim
