// Why a run took the time it took, not only where (docs/profiling.md): per engine and DMA queue its time
// split into busy, waiting by reason and idle; per DMA queue the bytes it moved, the rate it achieved against
// the rate the arch allows, and its time in fixed latency, per-row cost and transfer; per engine its work
// rate against its peak; and one verdict per run ("DMA latency-bound (fixed latency 61% of DMA critical
// time)"). Computed from a stats document (sim/stats.cpp writes it as the document's "analysis"), so the CLI
// summary, `neuronsim report` and the Python module read the same numbers.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "neuronsim/engines/arch.hpp"

namespace neuronsim::sim {

// The verdict's thresholds (docs/profiling.md "Verdicts").
inline constexpr double kLatencyBoundShare = 0.5;   // fixed latency's share of the DMA critical time
inline constexpr double kBandwidthBoundShare = 0.6; // achieved / allowed DMA rate while DMA is active
inline constexpr double kEngineBoundBusy = 0.5;     // the bottleneck engine's busy share of the run

// The "analysis" object of a stats document `stats` (its total_ns, engines, dma, critical_path_ns and, when
// present, the profile's per-instruction wait sums) for a run on `arch`:
//   engines.<E>: busy_ns, wait_ns {reason: ns} (with a profile), idle_ns, work {unit, amount, per_ns,
//                peak_per_ns, of_peak}
//   dma_queues[]: name, transfers, bytes, active_ns (its first transfer entering the ring to its last one's
//   end;
//                its transfers overlap there, so their sums below can exceed it), idle_ns (the run outside
//                that), achieved_gbps, allowed_gbps, fixed_latency_ns, per_row_ns, transfer_ns, wait_ns
//                {reason: ns, summed over its transfers} (with a profile)
//   dma: bytes, active_ns, achieved_gbps, allowed_gbps, critical_ns, critical_fixed_latency_ns
//   verdict: {kind, bottleneck, text}; kind is one of dma-latency, dma-bandwidth, dma-transfer, engine,
//            dependency, none
nlohmann::json analysis_json(const nlohmann::json &stats, const engines::ArchParams &arch);

// "verdict: DMA latency-bound (fixed latency 61% of DMA critical time)" (from an analysis object).
std::string verdict_line(const nlohmann::json &analysis);

// The `--why` table: one row per engine and DMA queue that ran something (busy, waits by reason, idle, rate
// against peak or allowed, the DMA split), then the verdict.
void print_why(std::ostream &out, const nlohmann::json &analysis);

// A time in the unit that fits: "812.0 ns", "12.35 us", "4.210 ms", "1.502 s" (the exact ns stay in --json
// and the stats).
std::string human_time(double ns);

} // namespace neuronsim::sim
