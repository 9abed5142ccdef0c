// What a run tells the user (run_summary.hpp).
#include "neuronsim/sim/run_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/sim/analysis.hpp"
#include "neuronsim/sim/stats.hpp"

namespace neuronsim::sim {

std::string unwritten_line(const UnwrittenOutput &u, int ranks) {
  return "output '" + (ranks > 1 ? "rank" + std::to_string(u.rank) + "/" : std::string()) + u.tensor +
         "': " + std::to_string(u.unwritten) + " of " + std::to_string(u.elements) +
         " elements were written by no instruction (they hold the 0xFF fill, NaN as a float): the kernel "
         "misses "
         "part of its output, or runs on fewer cores than it is written for";
}

std::string mismatch_line(const Mismatch &m, double rtol, double atol) {
  std::ostringstream os;
  os << std::setprecision(6);
  if (m.index < 0)
    os << "MISMATCH " << m.tensor << ": " << m.message;
  else
    os << "MISMATCH " << m.tensor << "[" << m.index << "]: got " << m.got << ", expected " << m.want
       << " (rtol " << rtol << ", atol " << atol << ")";
  return os.str();
}

std::string summary_text(Run &run, const nlohmann::json &doc, bool why) {
  std::ostringstream out;
  if (run.device) {
    for (int c = 0; c < run.device->cores(); ++c) {
      const nlohmann::json &a = doc["cores"][static_cast<size_t>(c)]["analysis"];
      out << "core " << c << " (shard " << c % run.device->lnc() << ", rank " << c / run.device->lnc()
          << "):\n";
      print_summary(out, run.device_result.cores[static_cast<size_t>(c)], run.device->core(c).schedule(), &a);
      if (why)
        print_why(out, a);
    }
    print_device_summary(out, *run.device, run.device_result);
  } else {
    print_summary(out, run.result, run.simulator->schedule(), &doc["analysis"]);
    if (why)
      print_why(out, doc["analysis"]);
  }
  return out.str();
}

nlohmann::json run_stats(Run &run, const isa::Program &p, const std::vector<std::string> &command_line,
                         bool with_profile) {
  return run.device ? device_stats_json(*run.device, run.device_result, command_line, with_profile)
                    : stats_json(run.result, run.simulator->schedule(), p, command_line, with_profile);
}

std::string ProgressLine::line(int64_t done, int64_t total, double sim_ns) {
  return line_at(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(), done, total,
                 sim_ns);
}

std::string ProgressLine::line_at(double wall, int64_t done, int64_t total, double sim_ns) {
  const double frac = total > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : 0.0;
  if (!based_)
    based_ = true, base_wall_ = wall, base_frac_ = frac;
  if (wall < 1.0 || (shown_ && wall - last_ < 0.2))
    return "";
  last_ = wall;
  shown_ = true;
  char text[200];
  const int n = std::snprintf(text, sizeof text, "%lld/%lld instructions (%.0f%%), simulated %s, wall %.1f s",
                              static_cast<long long>(done), static_cast<long long>(total), 100.0 * frac,
                              human_time(sim_ns).c_str(), wall);
  const double rate = wall - base_wall_ > 0 ? (frac - base_frac_) / (wall - base_wall_) : 0.0;
  if (frac >= 0.1 && wall - base_wall_ >= 1.0 && rate > 0 && n > 0 && static_cast<size_t>(n) < sizeof text)
    std::snprintf(text + n, sizeof text - static_cast<size_t>(n), ", ETA %.1f s", (1.0 - frac) / rate);
  return text;
}

void write_json_file(const std::string &path, const nlohmann::json &j) {
  isa::write_file_atomic(path, j.dump(1) + "\n");
}

} // namespace neuronsim::sim
