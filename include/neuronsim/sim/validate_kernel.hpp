// `neuronsim validate` on a kernel as a user names it: its bundle streams (one core's or a multi-core
// folder's) against its BIR, and the report's text.
#pragma once

#include <string>

#include "neuronsim/sim/kernel.hpp"
#include "neuronsim/sim/validate.hpp"

namespace neuronsim::sim {

// Runs the BIR kernel and the streams of `bundle_dir` and compares them (validate_bundles); the inputs
// default to the workload's inputs/ as for a run.
ValidateReport validate_kernel(const Kernel &k, const std::string &bundle_dir, ValidateOptions options);
// The report as `neuronsim validate` prints it: the lint findings, "note: ..." lines, "divergence: ...", then
// the summary line; every line ends with a newline.
std::string report_text(const ValidateReport &r);

} // namespace neuronsim::sim
