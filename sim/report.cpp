// `neuronsim report` pages (neuronsim/sim/report.hpp; docs/profiling.md): the data as one JSON object inline,
// drawn by the page's own script (sim/report_page.hpp). Nothing is fetched: the page works from a file,
// offline.
#include "neuronsim/sim/report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "neuronsim/error.hpp"
#include "neuronsim/sim/version.hpp"
#include "report_input.hpp"
#include "report_page.hpp"

namespace neuronsim::sim {

namespace {

using nlohmann::json;

// The page's data inside <script type="application/json">, as JSON whose every '<', '>' and '&' is written as
// its \u escape: those characters only occur inside JSON strings, so the text means the same to JSON.parse,
// and no string in it (a kernel named "</script>" or "<!--") can end the script element or open a comment in
// it. The page is the template cut at its one @DATA@ mark with the data in between: nothing is substituted into
// markup (the title is set by the page's script from data.title).
std::string embed(const json &data) {
  const std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (const char c : text)
    out += c == '<' ? std::string("\\u003c") : c == '>' ? std::string("\\u003e")
         : c == '&' ? std::string("\\u0026") : std::string(1, c);
  return out;
}

std::string page(json data, const std::string &title) {
  data["title"] = title;
  const std::string html = kReportPage;
  const auto at = html.find("@DATA@");
  if (at == std::string::npos || html.find("@DATA@", at + 1) != std::string::npos)
    throw std::logic_error("sim/report_page.hpp holds the @DATA@ mark exactly once");
  return html.substr(0, at) + embed(data) + html.substr(at + 6);
}

// The trace's complete events ("X") as compact rows: track names (engines first, then DMA ring slots and
// engines, in the trace's sort order), and [track, start ns, duration ns, name] per slice, the earliest
// kReportSlices. The trace is one check_report_trace accepted: every key read here is there with its type.
json timeline_of(const json &trace) {
  const json &events = trace.at("traceEvents");
  // Tracks by (process, thread): a multi-core trace has one process per core, each with the same thread ids.
  using Track = std::pair<int64_t, int64_t>;
  auto key = [](const json &e) { return Track{e.value("pid", int64_t(1)), e.at("tid").get<int64_t>()}; };
  std::map<Track, std::string> names;
  std::set<int64_t> pids;
  std::vector<const json *> slices;
  for (const auto &e : events) {
    if (!e.contains("tid"))
      continue;
    const std::string ph = e.value("ph", std::string());
    if (ph == "M" && e.value("name", std::string()) == "thread_name")
      names[key(e)] = e.at("args").at("name").get<std::string>();
    else if (ph == "X")
      slices.push_back(&e), pids.insert(e.value("pid", int64_t(1)));
  }
  std::stable_sort(slices.begin(), slices.end(), [](const json *a, const json *b) {
    return a->at("ts").get<double>() < b->at("ts").get<double>();
  });
  // Every engine's track is drawn (an idle engine is an answer too); a DMA engine's only when it worked.
  std::set<Track> used;
  for (const json *e : slices)
    used.insert(key(*e));
  std::map<Track, int> track_of;
  json tracks = json::array();
  auto name_of = [&](const Track &k, const std::string &name) {
    return pids.size() > 1 ? "core " + std::to_string(k.first - 1) + " " + name : name;
  };
  for (const auto &[k, name] : names) {
    if (name.rfind("DMA engine", 0) == 0 && !used.count(k))
      continue;
    if (pids.size() > 1 && !pids.count(k.first))
      continue;
    track_of[k] = static_cast<int>(tracks.size());
    tracks.push_back(name_of(k, name));
  }
  std::map<std::string, int> label_of;
  json labels = json::array(), rows = json::array();
  for (size_t i = 0; i < slices.size() && i < kReportSlices; ++i) {
    const json &e = *slices[i];
    const Track k = key(e);
    if (!track_of.count(k)) {
      track_of[k] = static_cast<int>(tracks.size());
      tracks.push_back(name_of(k, "track " + std::to_string(k.second)));
    }
    const std::string name = e.value("name", std::string());
    auto it = label_of.find(name);
    if (it == label_of.end()) {
      it = label_of.emplace(name, static_cast<int>(labels.size())).first;
      labels.push_back(name);
    }
    // Trace timestamps are microseconds; the page works in ns.
    rows.push_back({track_of[k], e.at("ts").get<double>() * 1000.0, e.value("dur", 0.0) * 1000.0, it->second});
  }
  return {{"tracks", tracks}, {"labels", labels}, {"slices", rows}, {"total_slices", slices.size()}};
}

// RFC 4180 fields: commas and newlines inside double quotes, "" for a quote.
std::vector<std::vector<std::string>> csv_rows(const std::string &text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        field += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        field += c;
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      rows.back().push_back(field), field.clear(), any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')
        ++i;
      if (any || !field.empty())
        rows.back().push_back(field);
      field.clear(), any = false;
      rows.emplace_back();
    } else {
      field += c, any = true;
    }
  }
  if (any || !field.empty())
    rows.back().push_back(field);
  while (!rows.empty() && rows.back().empty())
    rows.pop_back();
  return rows;
}

// A results.csv time cell: the whole cell one finite number >= 0 (std::stod alone reads "12abc" as 12).
double csv_time(const std::string &cell, const std::string &file, size_t row) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(cell, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != cell.size() || cell.empty() || std::isspace(static_cast<unsigned char>(cell[0])) || !std::isfinite(v) ||
      v < 0)
    throw InputError({file, -1, "", "total_ns"},
                     "row " + std::to_string(row) + ": '" + cell + "' is not a time in ns (a finite number >= 0)");
  return v;
}

} // namespace

std::string run_report_html(const json &stats, const json *trace, const std::string &stats_file,
                            const std::string &trace_file) {
  check_report_stats(stats, stats_file.empty() ? "the stats document" : stats_file);
  if (trace)
    check_report_trace(*trace, trace_file.empty() ? "the trace document" : trace_file);
  json data = {{"kind", "run"},
               {"tool", version()},
               {"kernel", stats.value("kernel", std::string())},
               {"arch", stats.value("arch", std::string())},
               {"total_ns", stats.value("total_ns", 0.0)},
               {"bottleneck", stats.value("bottleneck", std::string())},
               {"critical_path_ns", stats.value("critical_path_ns", json::object())},
               {"analysis", stats.value("analysis", json::object())}};
  json top = json::array();
  if (stats.contains("profile")) {
    const json &rows = stats.at("profile").at("critical_path").at("instructions");
    for (size_t i = 0; i < rows.size() && i < 25; ++i) {
      const json &r = rows[i];
      json row = {{"name", r.value("name", std::string())},
                  {"opcode", r.value("opcode", std::string())},
                  {"engine", r.value("engine", std::string())},
                  {"trigger", r.value("dma_trigger", false)},
                  {"executions", r.value("executions", int64_t(0))},
                  {"busy_ns", r.value("busy_ns", 0.0)},
                  {"wait_ns", r.value("wait_total_ns", 0.0)},
                  {"critical_path_ns", r.value("critical_path_ns", 0.0)},
                  {"file", r.value("file", std::string())},
                  {"line", r.value("line", int64_t(-1))}};
      top.push_back(row);
    }
  }
  data["top"] = top;
  if (trace)
    data["timeline"] = timeline_of(*trace);
  return page(data, "neuronsim report: " + data["kernel"].get<std::string>() + " on " +
                        data["arch"].get<std::string>());
}

std::string sweep_report_html(const std::string &csv_text, const std::string &file,
                              const std::string &baseline) {
  const auto rows = csv_rows(csv_text);
  if (rows.empty())
    throw InputError({file, -1, "", ""}, "an empty file: a sweep's results.csv has a header row");
  const auto &head = rows[0];
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < head.size(); ++i)
    col[head[i]] = i;
  for (const char *need : {"kernel", "arch", "status", "total_ns"})
    if (!col.count(need))
      throw InputError({file, -1, "", need}, "missing column (a results.csv of `neuronsim sweep -o`)");
  json runs = json::array();
  std::vector<std::string> archs;
  for (size_t r = 1; r < rows.size(); ++r) {
    const auto &row = rows[r];
    if (row.size() != head.size())
      throw InputError({file, -1, "", ""}, "row " + std::to_string(r + 1) + " has " +
                                               std::to_string(row.size()) + " fields, the header " +
                                               std::to_string(head.size()));
    auto field = [&](const char *name) { return col.count(name) ? row[col[name]] : std::string(); };
    json run = {{"kernel", field("kernel")},
                {"arch", field("arch")},
                {"status", field("status")},
                {"bottleneck", field("bottleneck")},
                {"error", field("error")}};
    run["total_ns"] = field("total_ns").empty() ? json() : json(csv_time(field("total_ns"), file, r + 1));
    if (std::find(archs.begin(), archs.end(), field("arch")) == archs.end())
      archs.push_back(field("arch"));
    runs.push_back(run);
  }
  if (!baseline.empty() && std::find(archs.begin(), archs.end(), baseline) == archs.end()) {
    std::string known;
    for (const auto &a : archs)
      known += (known.empty() ? "" : ", ") + a;
    throw UsageError("--baseline " + baseline + " is not an arch of " + file + " (" + known + ")");
  }
  json data = {{"kind", "sweep"},
               {"tool", version()},
               {"file", file},
               {"archs", archs},
               {"runs", runs},
               {"baseline", baseline.empty() ? (archs.empty() ? std::string() : archs[0]) : baseline}};
  return page(data, "neuronsim sweep report: " + file);
}

} // namespace neuronsim::sim
