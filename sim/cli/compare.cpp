// `neuronsim compare A B`: two --stats documents (or two kernels, run timing-only here) side by side -- total
// time, per-engine busy time and utilization, bottleneck, and the instructions and source lines whose
// critical-path time changed most (README "Compare"). Exit 0, or 1 with --fail-if-slower PCT when B is slower.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/sim/analysis.hpp"
#include "neuronsim/sim/session.hpp"
#include "neuronsim/sim/stats.hpp"

namespace fs = std::filesystem;

namespace neuronsim::cli {

namespace {

// A --stats document, or a kernel run here (timing only) for its document.
nlohmann::json stats_of(const std::string &path, const std::string &arch,
                        const std::vector<std::pair<std::string, std::string>> &sets) {
  if (!fs::is_directory(path)) {
    nlohmann::json j = isa::read_json_file(path, "stats or kernel file");
    if (j.is_object() && j.contains("total_ns") && j.contains("engines")) {
      if (!j["total_ns"].is_number())
        throw InputError(ErrorContext{path, -1, "", "total_ns"}, "a --stats document needs a number here");
      return j;
    }
  }
  const sim::Kernel k = sim::load_kernel(path);
  sim::RunSettings set;
  set.options.arch = arch;
  set.arch_sets = sets;
  set.options.timing_only = true;
  sim::complete_settings(k, set);
  sim::Run run = sim::run_kernel(k, set);
  return sim::stats_json(run.result, run.simulator->schedule(), k.program);
}

} // namespace

const char *kCompareHelp = R"(usage: neuronsim compare A B [options]
       neuronsim compare KERNEL --arch-b NAME|FILE.json | --set-b KEY=VALUE [options]

  A, B                   --stats documents, or kernels (run timing-only here, on --arch or their own arch)
  KERNEL                 one kernel run twice: on A's machine (--arch, --set) and on B's (--arch-b, --set-b)
  --arch NAME|FILE.json  the architecture kernels run on (default: their own)
  --set KEY=VALUE        an architecture parameter set over it (repeatable; `neuronsim arch --keys`)
  --arch-b NAME|FILE.json  B's architecture (default: A's)
  --set-b KEY=VALUE      a parameter set over B's architecture (repeatable)
  --fail-if-slower PCT   exit 1 when B's total time exceeds A's by more than PCT percent
  --top N                the N instructions and source lines whose cost changed most (10)
)";

int cmd_compare(const std::vector<std::string> &a) {
  std::vector<std::string> files;
  std::optional<double> fail_pct;
  int top = 10;
  std::string arch, arch_b;
  std::vector<std::pair<std::string, std::string>> sets, sets_b;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string &o = a[i];
    if (o == "--fail-if-slower") fail_pct = parse_tolerance(o, need_value(a, i));
    else if (o == "--top") top = parse_count(o, need_value(a, i));
    else if (o == "--arch") arch = sim::parse_arch(need_value(a, i), "--arch");
    else if (o == "--arch-b")
      arch_b = sim::parse_arch(need_value(a, i), "--arch-b");
    else if (o == "--set")
      sets.push_back(sim::parse_arch_set(need_value(a, i), "--set"));
    else if (o == "--set-b")
      sets_b.push_back(sim::parse_arch_set(need_value(a, i), "--set-b"));
    else if (o == "--help" || o == "-h") {
      std::cout << kCompareHelp;
      return 0;
    } else if (!o.empty() && o[0] == '-') throw UsageError("unknown option '" + o + "'");
    else files.push_back(o);
  }
  const bool two_machines = !arch_b.empty() || !sets_b.empty();
  if (files.size() == 1 && two_machines)
    files.push_back(files[0]); // one kernel under two machines
  if (files.size() != 2)
    throw UsageError("compare takes two files (A B), or one kernel with --arch-b / --set-b, got " +
                     std::to_string(files.size()));
  // B's machine: A's unless --arch-b names another; --set-b goes over it (after A's own --set when B shares
  // A's base, so that `--set-b` alone changes one parameter of the machine A ran on).
  if (arch_b.empty())
    arch_b = arch;
  std::vector<std::pair<std::string, std::string>> b_sets = arch_b == arch ? sets : decltype(sets){};
  for (const auto &kv : sets_b) {
    const auto same = [&](const auto &x) { return x.first == kv.first; };
    b_sets.erase(std::remove_if(b_sets.begin(), b_sets.end(), same), b_sets.end());
    b_sets.push_back(kv);
  }
  const nlohmann::json A = stats_of(files[0], arch, sets), B = stats_of(files[1], arch_b, b_sets);
  const double ta = A["total_ns"].get<double>(), tb = B["total_ns"].get<double>();
  const double change = ta > 0 ? 100.0 * (tb - ta) / ta : 0.0;
  std::cout << std::fixed << std::setprecision(1);
  std::cout << "A: " << files[0] << " (" << A.value("arch", "?") << ")\nB: " << files[1] << " ("
            << B.value("arch", "?") << ")\n";
  std::cout << "total     " << std::setw(12) << sim::human_time(ta) << " -> " << std::setw(12)
            << sim::human_time(tb) << "  " << std::showpos << change << std::noshowpos << "%   (" << ta
            << " -> " << tb << " ns)\n";
  std::cout << "  engine        busy A       busy B  util A  util B\n";
  auto engine_row = [&](const std::string &name, const nlohmann::json &ea, const nlohmann::json &eb) {
    auto num = [](const nlohmann::json &e, const char *k) { return e.is_object() ? e.value(k, 0.0) : 0.0; };
    if (num(ea, "busy_ns") == 0 && num(eb, "busy_ns") == 0) return;
    std::cout << "  " << std::left << std::setw(8) << name << std::right << std::setw(12)
              << sim::human_time(num(ea, "busy_ns")) << std::setw(13) << sim::human_time(num(eb, "busy_ns"))
              << std::setw(7) << 100 * num(ea, "utilization") << "%" << std::setw(7)
              << 100 * num(eb, "utilization") << "%\n";
  };
  const nlohmann::json none = nlohmann::json::object();
  for (const char *e : {"PE", "ACT", "POOL", "DVE", "SP"})
    engine_row(e, A["engines"].value(e, none), B["engines"].value(e, none));
  engine_row("DMA", A.value("dma", none), B.value("dma", none));
  std::cout << "bottleneck: " << A.value("bottleneck", "") << " -> " << B.value("bottleneck", "") << "\n";
  for (const auto &[label, doc] : {std::pair<const char *, const nlohmann::json *>{"A", &A}, {"B", &B}})
    if (doc->contains("analysis"))
      std::cout << "verdict " << label << ": " << sim::verdict_line((*doc)["analysis"]).substr(9) << "\n";
  // Static instructions (by name, engine and trigger) and source lines: the critical-path time each holds, A vs B.
  auto changes = [&](const char *list, auto key, auto label, const char *title) {
    std::map<std::string, std::pair<double, double>> m;
    std::map<std::string, std::string> labels;
    auto collect = [&](const nlohmann::json &doc, bool second) {
      if (!doc.contains("profile")) return;
      for (const auto &row : doc["profile"][list]) {
        const std::string k = key(row);
        (second ? m[k].second : m[k].first) += row.value("critical_path_ns", 0.0);
        labels.emplace(k, label(row));
      }
    };
    collect(A, false), collect(B, true);
    std::vector<std::pair<std::string, std::pair<double, double>>> v(m.begin(), m.end());
    v.erase(std::remove_if(v.begin(), v.end(), [](const auto &x) { return x.second.first == x.second.second; }),
            v.end());
    std::stable_sort(v.begin(), v.end(), [](const auto &x, const auto &y) {
      return std::abs(x.second.second - x.second.first) > std::abs(y.second.second - y.second.first);
    });
    if (v.empty()) return;
    std::cout << title << " (critical-path ns, A -> B):\n";
    for (size_t i = 0; i < v.size() && static_cast<int>(i) < top; ++i)
      std::cout << "  " << std::showpos << std::setw(11) << v[i].second.second - v[i].second.first << std::noshowpos
                << std::setw(12) << v[i].second.first << " -> " << std::setw(11) << v[i].second.second << "  "
                << labels[v[i].first] << "\n";
  };
  auto src = [](const nlohmann::json &row) {
    std::string f = row.value("file", std::string());
    return row.contains("line") ? (f.empty() ? "line " : f + ":") + std::to_string(row["line"].get<int>()) : f;
  };
  changes(
      "instructions",
      [](const nlohmann::json &r) {
        return r.value("name", std::string()) + "|" + r.value("engine", std::string()) + "|" +
               (r.value("dma_trigger", false) ? "t" : "");
      },
      [&](const nlohmann::json &r) {
        const std::string s = src(r);
        return r.value("name", std::string()) + " (" + r.value("opcode", std::string()) +
               (r.value("dma_trigger", false) ? ", trigger" : "") + ") " + r.value("engine", std::string()) +
               (s.empty() ? "" : "  " + s);
      },
      "instructions whose cost changed most");
  changes("source_lines", src, src, "source lines whose cost changed most");
  if (fail_pct && change > *fail_pct) {
    std::cout << "B is slower than A by " << change << "% (more than " << *fail_pct << "%)\n";
    return 1;
  }
  return 0;
}
} // namespace neuronsim::cli
