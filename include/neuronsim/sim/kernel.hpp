// A kernel as a user names it (a BIR JSON file, a workload folder, a bundle-stream folder, a multi-core
// bundle folder) and reading it (load_kernel): what every command and the Python module start from.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "neuronsim/isa/program.hpp"
#include "neuronsim/isa/tables.hpp"
#include "neuronsim/sim/run_config.hpp"

namespace neuronsim::sim {

// A kernel as a user names it:
//   - a .json BIR file;
//   - a workload folder: exactly one *.bir.json, and optionally inputs/ and expected/ (<tensor>.npy each) and
//     tolerance.json ({"rtol": R, "atol": A}, the tolerance the workload's dtypes justify);
//   - a bundle-stream folder written by `neuronsim encode` (manifest.json + <engine>.bin);
//   - a multi-core bundle folder written by `neuronsim encode --cores N` (cores.json + core<i>/, one stream folder
//     per core: shard ids resolve per core when lowering, docs/multicore.md).
struct Kernel {
  std::string path;  // as given
  std::string label; // how a run names it: the BIR file, or "DIR (bundle streams, v3)"
  isa::Program program;
  std::optional<isa::CoreGen> streams;                  // a bundle-stream folder: its generation
  std::string inputs_dir, expected_dir, tolerance_file; // a workload folder's, empty when it has none
  // A multi-core bundle folder: core i's program (program is core 0's), and its cores per logical core.
  std::vector<isa::Program> core_programs;
  int core_lnc = 1;
  std::vector<std::string> files; // what it was read from (the BIR file, the streams folder's entries): no
                                  // output of a run may be one of them (prepare_run_outputs)
  RunConfig run_config;           // a workload folder's run.json (sim/run_config.hpp); empty file when none
};

// BirOnly: what `encode` and `validate` take, BIR (a file or a workload folder).
enum class KernelForms { Any, BirOnly };
// Reads the kernel. InputError (naming the path) when it does not exist, a folder holds no or several
// *.bir.json, or the BIR / streams do not read. A folder with any manifest.json is a bundle-stream folder (one
// that is not a regular file is refused by the reader, naming it). What the reader ignored (unknown keys) is in
// program.warnings, for the caller to show.
Kernel load_kernel(const std::string &path, KernelForms forms = KernelForms::Any);

} // namespace neuronsim::sim
