// `neuronsim report`: one self-contained HTML page of a run (its --stats document, and its --trace) or of a
// sweep (its RESULTS.csv).
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/report.hpp"

#include "cli.hpp"

namespace neuronsim::cli {

namespace {

const char *kReportHelp = R"(usage: neuronsim report STATS.json [TRACE.json] -o REPORT.html
       neuronsim report RESULTS.csv -o SWEEP.html [--baseline ARCH]
       neuronsim report FILE.py::FUNCTION [neuronsim nki options] -o REPORT.html

One self-contained HTML page to look at (docs/profiling.md): no network fetch, nothing to install, opens from a
file.
  STATS.json   a `neuronsim run --stats` document: the verdict, per engine and DMA queue the busy / waiting by
               reason / idle bars and rates, the critical path, the instructions holding it longest with their
               source lines; TRACE.json (`run --trace`) adds the engine timeline (wheel zooms, drag pans)
  RESULTS.csv  a `neuronsim sweep -o` file: a kernel x arch table of total times with speed-ups against
               --baseline ARCH (default: the file's first arch; the page can switch it), and a bar chart
  FILE.py::FUNCTION   an NKI kernel: traced and run as `neuronsim nki FILE.py::FUNCTION ... --report FILE.html`
               runs it (every nki option: --shape, --input, --kwarg, --grid, --arch, --timing-only, ...), the page
               naming the kernel file and function
  -o FILE      the page to write (never one of the inputs)
`neuronsim run KERNEL --report FILE.html` writes a run's page directly, timeline included.
)";

// `report FILE.py::FUNCTION ... -o PAGE`: the arguments of `nki FILE.py::FUNCTION ... --report PAGE`, or none when
// no argument names an NKI kernel (an option's NAME=VALUE, as --kwarg takes, names none).
std::optional<std::vector<std::string>> as_nki_report(const std::vector<std::string> &a) {
  bool nki = false;
  std::vector<std::string> out;
  for (size_t i = 0; i < a.size(); ++i) {
    if ((a[i] == "-o" || a[i] == "--output") && i + 1 < a.size()) {
      out.insert(out.end(), {"--report", a[++i]});
      continue;
    }
    if (a[i].rfind("-", 0) != 0 && a[i].find('=') == std::string::npos && TracedNki::names_nki(a[i]))
      nki = true;
    out.push_back(a[i]);
  }
  if (!nki)
    return std::nullopt;
  return out;
}

} // namespace

int cmd_report(const std::vector<std::string> &a) {
  if (const auto nki = as_nki_report(a))
    return cmd_nki(*nki);
  std::vector<std::string> files;
  std::string out, baseline;
  const std::vector<Option> options = {
      {"-o", "FILE.html", "the page to write", [&](const std::string &v) { out = need_path("-o", v); }},
      {"--output", "FILE.html", "the same as -o", [&](const std::string &v) { out = need_path("--output", v); }},
      {"--baseline", "ARCH", "a sweep's arch the speed-ups are against",
       [&](const std::string &v) {
         if (v.empty())
           throw UsageError("--baseline needs an arch, got an empty one");
         baseline = v;
       }},
  };
  if (!parse_options(a, options, [&](const std::string &f) {
        if (f.empty())
          throw UsageError("report: an empty path given as an input file");
        files.push_back(f);
      })) {
    std::cout << kReportHelp;
    return 0;
  }
  if (files.empty() || files.size() > 2)
    throw UsageError("report takes STATS.json [TRACE.json] or RESULTS.csv (neuronsim report --help)");
  if (out.empty())
    throw UsageError("report needs -o FILE.html");
  const bool sweep = files[0].size() >= 4 && files[0].compare(files[0].size() - 4, 4, ".csv") == 0;
  if (sweep && files.size() > 1)
    throw UsageError("report of a sweep's RESULTS.csv takes no second file");
  if (!sweep && !baseline.empty())
    throw UsageError("--baseline is for a sweep's RESULTS.csv");
  // The page is never written over an input (the check `run` makes for its outputs).
  sim::prepare_output_paths({}, {out}, files);
  std::string html;
  if (sweep) {
    html = sim::sweep_report_html(isa::read_regular_file(files[0], isa::kMaxInputFileBytes, "sweep results"),
                                  files[0], baseline);
  } else {
    const nlohmann::json stats = isa::read_json_file(files[0], "stats file");
    if (!stats.is_object() || !stats.contains("total_ns") || !stats.contains("analysis"))
      throw InputError(
          {files[0], -1, "", "analysis"},
          "not a --stats document of this version (run it again with --stats to get its analysis)");
    std::optional<nlohmann::json> trace;
    if (files.size() == 2) {
      trace = isa::read_json_file(files[1], "trace file");
      if (!trace->is_object() || !trace->contains("traceEvents"))
        throw InputError({files[1], -1, "", "traceEvents"}, "not a --trace document");
    }
    html = sim::run_report_html(stats, trace ? &*trace : nullptr, files[0], files.size() == 2 ? files[1] : "");
  }
  isa::write_file_atomic(out, html);
  std::cout << "report: " << out << "\n";
  return 0;
}

} // namespace neuronsim::cli
