// What the `neuronsim` command and the Python module share above the simulator: naming a kernel (a BIR JSON
// file, a workload folder, a bundle-stream folder), completing a run's settings from the kernel's folder,
// running it, checking its outputs, encoding and validating, and the texts both give the user. The CLI
// (sim/cli/) and python/ call these; neither has logic of its own beyond parsing its arguments and
// presenting the results.
//
// Each piece has its own header; this one includes them all:
//   kernel.hpp            a kernel as a user names it, load_kernel
//   run_settings.hpp      a run's settings: names, checks, complete_settings, its ranks, the value parsers
//   ranks.hpp             per-rank data of a multi-core run
//   run_kernel.hpp        run_kernel, check_outputs
//   run_summary.hpp       the summary, stats document, progress line and lines a run prints
//   sensitivity.hpp       --sensitivity
//   encode_kernel.hpp     encode_kernel(_cores)
//   bundle_dirs.hpp       reading bundle folders back
//   validate_kernel.hpp   validate_kernel, report_text
//   front_end_errors.hpp  one_line, rethrow_as_error
#pragma once

#include "neuronsim/sim/bundle_dirs.hpp"
#include "neuronsim/sim/encode_kernel.hpp"
#include "neuronsim/sim/front_end_errors.hpp"
#include "neuronsim/sim/kernel.hpp"
#include "neuronsim/sim/ranks.hpp"
#include "neuronsim/sim/run_kernel.hpp"
#include "neuronsim/sim/run_settings.hpp"
#include "neuronsim/sim/run_summary.hpp"
#include "neuronsim/sim/sensitivity.hpp"
#include "neuronsim/sim/validate_kernel.hpp"
