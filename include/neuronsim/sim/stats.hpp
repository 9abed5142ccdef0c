// The human-readable summary of a run (what `neuronsim run` prints). The stats document and the trace are declared
// in neuronsim/sim/io.hpp (stats_json, trace_json, critical_path_shares) and built by sim/stats.cpp and
// sim/trace.cpp.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

// The simulated time (in the unit that fits, and exactly in ns), one line per engine and DMA queue that ran
// something (instructions or transfers, busy time, utilization, cycles or descriptors; columns as wide as
// their widest cell), the DMA engines' total, the critical-path shares, the bottleneck and, given the stats
// document's analysis (neuronsim/sim/analysis.hpp), the verdict.
void print_summary(std::ostream &out, const RunResult &r, const Schedule &s,
                   const nlohmann::json *analysis = nullptr);

// The --top N table: the N static instructions that hold the critical path longest (from a stats_json document's
// "profile"), with their engine, busy and wait time and source line.
void print_top(std::ostream &out, const nlohmann::json &stats, int n);

} // namespace neuronsim::sim
