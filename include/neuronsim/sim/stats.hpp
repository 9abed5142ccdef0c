// The human-readable summary of a run (what `neuronsim run` prints). The stats document and the trace are declared
// in neuronsim/sim/io.hpp (stats_json, trace_json, critical_path_shares) and built by sim/stats.cpp and
// sim/trace.cpp.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

// The simulated time, one line per engine and DMA queue that ran something (instructions or transfers, busy ns,
// utilization, cycles or descriptors), the DMA engines' total, the critical-path shares and the bottleneck.
void print_summary(std::ostream &out, const RunResult &r, const Schedule &s);

// The --top N table: the N static instructions that hold the critical path longest (from a stats_json document's
// "profile"), with their engine, busy and wait time and source line.
void print_top(std::ostream &out, const nlohmann::json &stats, int n);

} // namespace neuronsim::sim
