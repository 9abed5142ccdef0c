// What a run tells the user: the summary `neuronsim run` prints, the stats document and writing it, the
// progress line of a long run, and the lines of a mismatch and of an output no instruction wrote.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/isa/program.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/run_kernel.hpp"

namespace neuronsim::sim {

// "output 'b': 50 of 100 elements were written by no instruction (...)"; several ranks: 'rank1/b'.
std::string unwritten_line(const UnwrittenOutput &u, int ranks);

// The run's summary as `neuronsim run` prints it after the run (print_summary with the verdict; a multi-core
// run: one table per core, labelled "core i (shard s, rank r):", then the device's totals), and with `why`
// each analysis's --why table. `doc`: the run's stats document (stats_json, device_stats_json).
std::string summary_text(Run &run, const nlohmann::json &doc, bool why = false);
// The stats document of a finished run (stats_json, or device_stats_json for several cores).
nlohmann::json run_stats(Run &run, const isa::Program &p, const std::vector<std::string> &command_line,
                         bool with_profile = true);

// The progress line of a long run (`neuronsim run` on a terminal, neuronsim.run's default on one): dynamic
// instructions issued and the total, simulated time, wall time, and an ETA once it means something -- from
// the rate since the first report, once a tenth of the run is done and a second has passed since then (the
// rate of a run's first moments, schedule building and start-up included, is far off its steady one). Silent
// for the first second; at most five lines a second. `line` returns the text to show ("" when nothing is
// due).
class ProgressLine {
public:
  std::string line(int64_t done, int64_t total, double sim_ns);
  // The same at `wall` seconds since the line was made (line() passes the steady clock's; tests pass their
  // own).
  std::string line_at(double wall, int64_t done, int64_t total, double sim_ns);
  bool shown() const { return shown_; }

private:
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  bool shown_ = false, based_ = false;
  double last_ = 0.0, base_wall_ = 0.0, base_frac_ = 0.0;
};

// The line `neuronsim run` prints for a mismatch: "MISMATCH b[3]: got 1.5, expected 2 (rtol 1e-05, atol
// 1e-06)", or "MISMATCH b: <message>" for a missing tensor or a shape error.
std::string mismatch_line(const Mismatch &m, double rtol, double atol);

// Writes a JSON document (the stats, the trace) atomically: written in full or not at all (isa/file_output.hpp).
void write_json_file(const std::string &path, const nlohmann::json &j);

} // namespace neuronsim::sim
