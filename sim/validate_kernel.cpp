// A kernel's bundle streams validated against its BIR (validate_kernel.hpp).
#include "neuronsim/sim/validate_kernel.hpp"

#include <algorithm>
#include <filesystem>

#include "neuronsim/error.hpp"
#include "neuronsim/sim/bundle_dirs.hpp"
#include "neuronsim/sim/core_needs.hpp"
#include "neuronsim/sim/ranks.hpp"

namespace neuronsim::sim {

namespace fs = std::filesystem;

ValidateReport validate_kernel(const Kernel &k, const std::string &bundle_dir, ValidateOptions options) {
  if (options.inputs.dir.empty())
    options.inputs.dir = k.inputs_dir;
  std::error_code ec;
  const int want_cores = std::max(options.cores, options.lnc), want_lnc = std::max(options.lnc, 1);
  if (fs::exists(fs::path(bundle_dir) / kCoresManifest, ec)) {
    // A multi-core folder: its cores.json says how many cores; --cores / --lnc, when given, must agree.
    int lnc = 1;
    isa::CoreGen gen = isa::CoreGen::V2;
    const int cores = static_cast<int>(read_core_bundles(bundle_dir, &lnc, &gen).size());
    if (want_cores > 0 && (want_cores != cores || want_lnc != lnc))
      throw InputError({bundle_dir, -1, "", "cores"},
                       "holds the bundle streams of " + std::to_string(cores) + " cores with LNC=" +
                           std::to_string(lnc) + " (cores.json); validate asks for " + std::to_string(want_cores) +
                           " cores with LNC=" + std::to_string(want_lnc));
    (void)has_rank_dirs(options.inputs.dir, cores / lnc);  // InputError naming a missing or extra rank folder
    check_kernel_cores(k.program, cores, lnc, options.names);
    return validate_device_bundles(k.program, bundle_dir, cores, lnc, options);
  }
  check_kernel_cores(k.program, 1, 1, options.names);
  if (want_cores > 1)
    throw InputError({bundle_dir, -1, "", "cores"},
                     "holds one core's bundle streams (manifest.json); validating " + std::to_string(want_cores) +
                         " cores needs the streams of each: neuronsim encode KERNEL --cores N [--lnc L]");
  return validate_bundles(k.program, bundle_dir, options);
}

std::string report_text(const ValidateReport &r) {
  std::string s;
  for (const auto &l : r.lint)
    s += l + "\n";
  for (const auto &l : r.notes)
    s += "note: " + l + "\n";
  if (!r.divergence.empty())
    s += "divergence: " + r.divergence + "\n";
  return s + r.summary + "\n";
}

} // namespace neuronsim::sim
