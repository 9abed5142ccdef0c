// `neuronsim report` (docs/profiling.md): one self-contained HTML page -- its data, styles and script inline,
// no network fetch, no library (plain JavaScript drawing on a canvas and in SVG) -- to look at instead of
// reading JSON.
//  - a run's page, from its stats document and optionally its trace: the verdict, the engine timeline
//  (zoomable:
//    wheel, drag, buttons), per engine and DMA queue the busy / waiting-by-reason / idle bars, the critical
//    path's shares, and the instructions holding it longest with their source lines;
//  - a sweep's page, from its results.csv: a kernel x arch table of total times with speed-ups against a
//  chosen
//    arch, and a bar chart of the speed-ups.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace neuronsim::sim {

// The most timeline slices a page embeds (the earliest); a longer run's page says how many it left out.
inline constexpr size_t kReportSlices = 50000;

// The run's page. `stats`: a --stats document (with its "analysis"; a profile gives the top-instructions
// table). `trace`: its Chrome trace document (TraceWriter's), or null: no timeline. Both are checked first: a
// key the page reads that is missing or of another JSON type is an InputError naming `stats_file` /
// `trace_file` (the documents' paths; empty for a document that is no file) and the key.
std::string run_report_html(const nlohmann::json &stats, const nlohmann::json *trace,
                            const std::string &stats_file = "", const std::string &trace_file = "");

// The sweep's page from the text of a results.csv (python/neuronsim/sweeps.py columns; at least kernel, arch,
// status and total_ns): InputError naming `file` when a column is missing, a row has another field count or a
// total_ns cell is not wholly a finite number >= 0.
// `baseline`: the arch speed-ups are measured against (empty: the first arch of the file).
std::string sweep_report_html(const std::string &csv_text, const std::string &file,
                              const std::string &baseline);

} // namespace neuronsim::sim
