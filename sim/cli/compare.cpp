// `neuronsim compare A B`: two --stats documents (or two kernels, run timing-only here) side by side -- total
// time, per-engine busy time and utilization, bottleneck, and the instructions and source lines whose
// critical-path time changed most (docs/profiling.md). Exit 0, or 1 with --fail-if-slower PCT when B is
// slower.
//
// What it refuses (exit 3, naming the file and the key): a document whose keys have the wrong JSON type, a
// total that is zero, negative or not finite (no percentage means anything then), and two documents of
// different kernels (file names) or core counts -- unless --force; a kernel run here takes its cores as `run`
// does.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
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

using json = nlohmann::json;

// The keys compare reads, with their JSON types: a document is checked whole before anything is printed, so
// that a wrong-typed key is an error naming the file and the key, never a JSON library exception.
void check_stats_doc(const std::string &path, const json &j) {
  auto bad = [&](const std::string &key, const std::string &what, const json &v) {
    return InputError({path, -1, "", key}, what + ", got " + v.dump());
  };
  auto number = [&](const json &o, const std::string &key, const std::string &where) {
    if (o.contains(key) && !o.at(key).is_number())
      throw bad(where + key, "a --stats document needs a number here", o.at(key));
  };
  auto string = [&](const json &o, const std::string &key, const std::string &where) {
    if (o.contains(key) && !o.at(key).is_string())
      throw bad(where + key, "a --stats document needs a string here", o.at(key));
  };
  auto object = [&](const json &o, const std::string &key, const std::string &where) {
    if (o.contains(key) && !o.at(key).is_object())
      throw bad(where + key, "a --stats document needs an object here", o.at(key));
  };
  number(j, "total_ns", "");
  const double total = j.at("total_ns").get<double>();
  if (!std::isfinite(total) || total <= 0)
    throw bad("total_ns",
              "a run's total time is a finite number above 0 (a change against it has no meaning otherwise)",
              j.at("total_ns"));
  for (const char *k : {"arch", "kernel", "bottleneck"})
    string(j, k, "");
  object(j, "engines", "");
  object(j, "dma", "");
  for (const auto &[name, e] : j.at("engines").items()) {
    if (!e.is_object())
      throw bad("engines." + name, "a --stats document needs an object here", e);
    for (const char *k : {"busy_ns", "utilization"})
      number(e, k, "engines." + name + ".");
  }
  if (j.contains("dma"))
    for (const char *k : {"busy_ns", "utilization"})
      number(j.at("dma"), k, "dma.");
  object(j, "device", "");
  if (j.contains("device")) {
    for (const char *k : {"cores", "lnc"})
      if (j["device"].contains(k) && !j["device"][k].is_number_integer())
        throw bad(std::string("device.") + k, "a --stats document needs a whole number here", j["device"][k]);
    number(j["device"], "total_ns", "device.");
    if (j["device"].contains("total_ns") &&
        (!std::isfinite(j["device"]["total_ns"].get<double>()) || j["device"]["total_ns"].get<double>() <= 0))
      throw bad("device.total_ns", "a run's total time is a finite number above 0", j["device"]["total_ns"]);
  }
  object(j, "profile", "");
  if (!j.contains("profile"))
    return;
  const json &p = j.at("profile");
  for (const char *list : {"instructions", "source_lines"}) {
    if (!p.contains(list))
      continue;
    const std::string where = std::string("profile.") + list;
    if (!p.at(list).is_array())
      throw bad(where, "a --stats document needs an array here", p.at(list));
    for (size_t i = 0; i < p.at(list).size(); ++i) {
      const json &row = p.at(list)[i];
      const std::string at = where + "[" + std::to_string(i) + "].";
      if (!row.is_object())
        throw bad(where + "[" + std::to_string(i) + "]", "a --stats document needs an object here", row);
      number(row, "critical_path_ns", at);
      for (const char *k : {"name", "engine", "opcode", "file"})
        string(row, k, at);
      if (row.contains("line") && !row.at("line").is_number_integer())
        throw bad(at + "line", "a --stats document needs a whole number here", row.at("line"));
      if (row.contains("dma_trigger") && !row.at("dma_trigger").is_boolean())
        throw bad(at + "dma_trigger", "a --stats document needs true or false here", row.at("dma_trigger"));
    }
  }
}

// One side of the comparison: a --stats document read and checked, or a kernel read and its settings
// completed (its cores as `run` takes them), to be run timing-only for its document -- everything that can be
// refused is refused before either kernel runs.
struct Side {
  std::string path;
  json doc;                            // a --stats document, or the run's once run
  std::unique_ptr<sim::Kernel> kernel; // a kernel to run here
  std::unique_ptr<TracedNki> nki;      // FILE.py::FUNCTION: the kernel traced from it
  sim::RunSettings settings;
  std::string kernel_name() const {
    return fs::path(kernel ? kernel->program.file : doc.value("kernel", std::string())).filename().string();
  }
};

Side side_of(const std::string &path, const std::string &arch,
             const std::vector<std::pair<std::string, std::string>> &sets, int cores, int lnc,
             std::vector<std::string> trace_args) {
  Side s;
  s.path = path;
  if (TracedNki::names_nki(path)) {
    // An NKI kernel file, traced as `neuronsim nki` traces it (the same input options for A and B), for the arch it
    // runs on; an nl.nc(n) launch grid runs on n cores of one logical core (trn2 unless --arch), as there.
    if (!arch.empty())
      trace_args.insert(trace_args.end(), {"--arch", arch});
    s.nki = std::make_unique<TracedNki>(path, trace_args);
    s.kernel = std::make_unique<sim::Kernel>(s.nki->load());
    s.settings.options.arch = arch;
    if (s.nki->lnc() > 1 && cores == 0 && lnc == 0) {
      lnc = s.nki->lnc();
      if (arch.empty())
        s.settings.options.arch = "trn2";
    }
  } else if (!trace_args.empty()) {
    throw UsageError("--shape / --input / --kwarg / --grid are for NKI kernels (FILE.py::FUNCTION); " + path +
                     " is not one");
  }
  if (!s.kernel && !fs::is_directory(path)) {
    json j = isa::read_json_file(path, "stats or kernel file");
    if (j.is_object() && j.contains("total_ns") && j.contains("engines")) {
      if (cores > 0 || lnc > 0)
        throw UsageError("--cores / --lnc are for kernels run here; " + path +
                         " is a --stats document (its run's "
                         "cores are its own)");
      check_stats_doc(path, j);
      s.doc = std::move(j);
      return s;
    }
  }
  if (!s.kernel) {
    s.kernel = std::make_unique<sim::Kernel>(sim::load_kernel(path));
    s.settings.options.arch = arch;
  }
  for (const auto &w : s.kernel->program.warnings)
    std::cerr << "neuronsim: warning: " << sim::one_line(w) << "\n";
  s.settings.arch_sets = sets;
  s.settings.options.timing_only = true;
  s.settings.cores = cores;
  s.settings.lnc = lnc;
  try {
    sim::complete_settings(*s.kernel, s.settings);
  } catch (const Error &e) {
    if (s.nki)
      s.nki->rethrow(e);
    throw;
  }
  return s;
}

void run_side(Side &s) {
  if (!s.kernel)
    return;
  try {
    sim::Run run = sim::run_kernel(*s.kernel, s.settings);
    s.doc = sim::run_stats(run, s.kernel->program, {});
  } catch (const Error &e) {
    if (s.nki)
      s.nki->rethrow(e);
    throw;
  }
  check_stats_doc(s.path, s.doc); // a kernel that takes no time (no instructions) has no percentage either
}

// A run's total time: the device's for several cores (the top-level total_ns is core 0's there).
double total_of(const json &d) {
  return d.contains("device") && d["device"].contains("total_ns") ? d["device"]["total_ns"].get<double>()
                                                                  : d["total_ns"].get<double>();
}

// What two documents must share to be compared: the kernel (its file name; the folders may differ) and the
// cores.
std::string mismatch(const json &a, const json &b, bool variants) {
  const std::string ka = fs::path(a.value("kernel", std::string())).filename().string();
  const std::string kb = fs::path(b.value("kernel", std::string())).filename().string();
  if (ka != kb && !variants)
    return "A is kernel " + ka + ", B is " + kb;
  auto cores = [](const json &d) { return d.contains("device") ? d["device"].value("cores", 1) : 1; };
  auto lnc = [](const json &d) { return d.contains("device") ? d["device"].value("lnc", 1) : 1; };
  if (cores(a) != cores(b) || lnc(a) != lnc(b))
    return "A ran on " + std::to_string(cores(a)) + " cores (LNC=" + std::to_string(lnc(a)) + "), B on " +
           std::to_string(cores(b)) + " (LNC=" + std::to_string(lnc(b)) + ")";
  return "";
}

const char *kCompareHelp = R"(usage: neuronsim compare A B [options]
       neuronsim compare KERNEL --arch-b NAME|FILE.json | --set-b KEY=VALUE [options]

  A, B                   --stats documents, or kernels (run timing-only here, on --arch or their own arch, on
                         --cores / --lnc or the cores their run.json and replica groups say, as `run` takes them)
  KERNEL                 one kernel run twice: on A's machine (--arch, --set) and on B's (--arch-b, --set-b)
  FILE.py::FUNCTION      an NKI kernel (as A, B or KERNEL), traced as `neuronsim nki` traces it, with the same
                         --shape / --input / --kwarg / --grid for both; two NKI kernels are variants of one
                         computation, compared whatever their names
)";

} // namespace

int cmd_compare(const std::vector<std::string> &a) {
  std::vector<std::string> files;
  std::optional<double> fail_pct;
  int top = 10, cores = 0, lnc = 0;
  bool force = false;
  std::string arch, arch_b;
  std::vector<std::pair<std::string, std::string>> sets, sets_b;
  std::vector<std::string> trace_args; // NKI kernels' inputs and keywords, the same for A and B
  const auto traced = [&trace_args](const char *name) {
    return [&trace_args, name](const std::string &v) { trace_args.insert(trace_args.end(), {name, v}); };
  };
  const std::vector<Option> options = {
      {"--shape", "NAME=DIMS[:DTYPE]", "NKI kernels: a parameter by shape (as neuronsim nki)", traced("--shape")},
      {"--input", "NAME=X.npy", "NKI kernels: a parameter's array (its shape and dtype)", traced("--input")},
      {"--kwarg", "NAME=VALUE", "NKI kernels: a compile-time parameter (a Python literal)", traced("--kwarg")},
      {"--grid", "DIMS", "NKI kernels: the launch grid", traced("--grid")},
      {"--fail-if-slower", "PCT", "exit 1 when B's total time exceeds A's by more than PCT percent",
       [&](const std::string &v) { fail_pct = parse_tolerance("--fail-if-slower", v); }},
      {"--top", "N", "the N instructions and source lines whose cost changed most (10)",
       [&](const std::string &v) { top = parse_count("--top", v); }},
      {"--arch", "NAME|FILE.json", "the architecture kernels run on here (default: their own)",
       [&](const std::string &v) { arch = sim::parse_arch(v, "--arch"); }},
      {"--set", "KEY=VALUE", "an architecture parameter set over it (repeatable; `neuronsim arch --keys`)",
       [&](const std::string &v) { sets.push_back(sim::parse_arch_set(v, "--set")); }},
      {"--arch-b", "NAME|FILE.json", "B's architecture (default: A's)",
       [&](const std::string &v) { arch_b = sim::parse_arch(v, "--arch-b"); }},
      {"--set-b", "KEY=VALUE", "a parameter set over B's architecture (repeatable)",
       [&](const std::string &v) { sets_b.push_back(sim::parse_arch_set(v, "--set-b")); }},
      {"--cores", "N", "kernels run here on N cores (default: as `run`)",
       [&](const std::string &v) { cores = parse_cores("--cores", v); }},
      {"--lnc", "L", "physical cores per logical core for kernels run here",
       [&](const std::string &v) { lnc = parse_cores("--lnc", v); }},
      {"--force", "", "compare documents of different kernels or core counts anyway",
       [&](const std::string &) { force = true; }},
  };
  if (!parse_options(a, options, [&](const std::string &f) {
        if (f.empty())
          throw UsageError("compare: an empty path given as A or B");
        files.push_back(f);
      })) {
    std::cout << kCompareHelp << options_help(options);
    return 0;
  }
  const bool two_machines = !arch_b.empty() || !sets_b.empty();
  if (files.size() == 1 && two_machines)
    files.push_back(files[0]); // one kernel under two machines
  if (files.size() != 2)
    throw UsageError("compare takes two files (A B), or one kernel with --arch-b / --set-b, got " +
                     std::to_string(files.size()));
  // B's machine: A's unless --arch-b names another; --set-b goes over it (after A's own --set when B shares
  // A's base, so that `--set-b` alone changes one parameter of the machine A ran on).
  const std::string arch_given_b = arch_b;
  if (arch_b.empty())
    arch_b = arch;
  std::vector<std::pair<std::string, std::string>> b_sets = arch_b == arch ? sets : decltype(sets){};
  for (const auto &kv : sets_b) {
    const auto same = [&](const auto &x) { return x.first == kv.first; };
    b_sets.erase(std::remove_if(b_sets.begin(), b_sets.end(), same), b_sets.end());
    b_sets.push_back(kv);
  }
  Side sa, sb;
  try {
    sa = side_of(files[0], arch, sets, cores, lnc, trace_args);
    sb = side_of(files[1], arch_b, b_sets, cores, lnc, trace_args);
  } catch (const AlreadyReported &r) {
    return r.code; // the tracer printed why
  }
  const bool variants = sa.nki && sb.nki; // two NKI kernels: variants of one computation by the user's word
  // A --stats document ran on its own machine: an option that names another would be ignored, so it is refused.
  // A's --arch / --set apply to B too unless --arch-b names B's machine.
  const auto refuse_machine = [](const Side &side, const char *which,
                                 std::vector<std::pair<const char *, bool>> given) {
    if (side.kernel)
      return;
    for (const auto &[option, on] : given)
      if (on)
        throw UsageError(std::string(option) + " is for kernels run here; " + which + " (" + side.path +
                         ") is a --stats document, whose machine is the one it ran on (give the kernel instead)");
  };
  const bool a_arch_for_b = arch_given_b.empty();
  refuse_machine(sa, "A", {{"--arch", !arch.empty()}, {"--set", !sets.empty()}});
  refuse_machine(sb, "B", {{"--arch-b", !arch_given_b.empty()}, {"--set-b", !sets_b.empty()},
                           {"--arch", a_arch_for_b && !arch.empty()}, {"--set", a_arch_for_b && !sets.empty()}});
  if (sa.kernel_name() != sb.kernel_name() && !force && !variants) // known before anything runs
    throw InputError({files[1], -1, "", ""}, "not the same run to compare: A is kernel " + sa.kernel_name() +
                                                 ", B is " + sb.kernel_name() +
                                                 " (--force compares them anyway)");
  run_side(sa);
  run_side(sb);
  const json &A = sa.doc, &B = sb.doc;
  if (const std::string why = mismatch(A, B, variants); !why.empty() && !force)
    throw InputError({files[1], -1, "", ""},
                     "not the same run to compare: " + why + " (--force compares them anyway)");
  const double ta = total_of(A), tb = total_of(B);
  const double change = 100.0 * (tb - ta) / ta; // ta > 0 (check_stats_doc)
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
  const json none = json::object();
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
    auto collect = [&](const json &doc, bool second) {
      if (!doc.contains("profile") || !doc["profile"].contains(list))
        return;
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
  auto src = [](const json &row) {
    std::string f = row.value("file", std::string());
    return row.contains("line") ? (f.empty() ? "line " : f + ":") + std::to_string(row["line"].get<int64_t>())
                                : f;
  };
  changes(
      "instructions",
      [](const json &r) {
        return r.value("name", std::string()) + "|" + r.value("engine", std::string()) + "|" +
               (r.value("dma_trigger", false) ? "t" : "");
      },
      [&](const json &r) {
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
