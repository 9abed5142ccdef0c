// Reading a kernel as a user names it (kernel.hpp).
#include "neuronsim/sim/kernel.hpp"

#include <algorithm>
#include <filesystem>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/sim/bundle_dirs.hpp"

namespace neuronsim::sim {

namespace fs = std::filesystem;

Kernel load_kernel(const std::string &path, KernelForms forms) {
  Kernel k;
  k.path = path;
  const fs::path p = path;
  // A folder written by `neuronsim encode` (manifest.json + <engine>.bin) runs its streams.
  // (Any manifest.json counts: one that is not a regular file is refused by the reader, naming it.)
  std::error_code mec;
  // A multi-core bundle folder (encode --cores N): one stream folder per core.
  if (forms == KernelForms::Any && fs::is_directory(p, mec) && fs::exists(p / kCoresManifest, mec)) {
    isa::CoreGen gen = isa::CoreGen::V2;
    k.core_programs = read_core_bundles(path, &k.core_lnc, &gen);
    k.program = k.core_programs[0];
    k.streams = gen;
    k.label = path + " (bundle streams of " + std::to_string(k.core_programs.size()) + " cores, " +
              isa::core_gen_name(gen) + ")";
    std::error_code ec;
    for (const auto &e : fs::recursive_directory_iterator(p, ec))
      k.files.push_back(e.path().string());
    return k;
  }
  if (forms == KernelForms::Any && fs::is_directory(p, mec) && fs::exists(p / "manifest.json", mec)) {
    isa::CoreGen gen = isa::CoreGen::V2;
    k.program = isa::read_bundle_dir(path, &gen);
    k.streams = gen;
    k.label = path + " (bundle streams, " + isa::core_gen_name(gen) + ")";
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(p, ec))
      k.files.push_back(e.path().string());
    return k;
  }
  if (!fs::exists(p))
    throw InputError({path, -1, "", ""}, "no such file or directory");
  std::string bir = path;
  if (fs::is_directory(p)) {
    // Every *.bir.json entry counts, whatever it is: a FIFO beside the kernel makes two (refused), never a
    // folder read as the other one alone (the sweeps' folder rule is the same, python/neuronsim/sweeps.py).
    std::vector<fs::path> birs;
    for (const auto &e : fs::directory_iterator(p)) {
      const std::string n = e.path().filename().string();
      if (n.size() > 9 && n.substr(n.size() - 9) == ".bir.json")
        birs.push_back(e.path());
    }
    std::sort(birs.begin(), birs.end());
    if (birs.size() != 1) {
      std::string names;
      for (const auto &b : birs)
        names += (names.empty() ? ": " : ", ") + b.filename().string();
      throw InputError({path, -1, "", ""},
                       "a workload directory must hold exactly one *.bir.json file (found " +
                           std::to_string(birs.size()) + names + ")");
    }
    bir = birs[0].string();
    if (fs::is_directory(p / "inputs"))
      k.inputs_dir = (p / "inputs").string();
    if (fs::is_directory(p / "expected"))
      k.expected_dir = (p / "expected").string();
    if (fs::is_regular_file(p / "tolerance.json"))
      k.tolerance_file = (p / "tolerance.json").string();
    std::error_code rec;
    if (fs::exists(p / kRunConfigFile, rec)) { // one that is not a regular file is refused by the reader
      k.run_config = read_run_config((p / kRunConfigFile).string());
      if (k.run_config.rtol && !k.tolerance_file.empty())
        throw InputError({k.run_config.file, -1, "", "tolerance"},
                         "the folder gives its tolerance twice (run.json and tolerance.json): keep one");
    }
  }
  k.program = isa::read_bir_file(bir);
  k.label = bir;
  k.files.push_back(bir);
  return k;
}

} // namespace neuronsim::sim
