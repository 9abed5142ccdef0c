// Why a run took its time (neuronsim/sim/analysis.hpp; docs/profiling.md): the stats document's numbers
// regrouped per engine and DMA queue, and the verdict.
#include "neuronsim/sim/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "neuronsim/engines/cost.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

namespace {

using nlohmann::json;

const char *const kEngineNames[] = {"PE", "ACT", "POOL", "DVE", "SP"};
const isa::Engine kEngineIds[] = {isa::Engine::PE, isa::Engine::Activation, isa::Engine::Pool,
                                  isa::Engine::DVE, isa::Engine::SP};

double num(const json &j, const char *key) {
  return j.is_object() && j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : 0.0;
}

std::string pct(double frac) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", 100.0 * frac);
  return b;
}

std::string gbps(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v >= 100 ? "%.0f GB/s" : v >= 10 ? "%.1f GB/s" : "%.2f GB/s", v);
  return b;
}

// The wait sums of the profile's rows per engine (engine queues: DMA triggers on their issuing engine) and
// per DMA queue (by its name), {reason: ns} each.
void wait_sums(const json &stats, std::map<std::string, json> &engines, std::map<std::string, json> &queues) {
  if (!stats.contains("profile") || !stats["profile"].contains("instructions"))
    return;
  for (const auto &row : stats["profile"]["instructions"]) {
    const std::string engine = row.value("engine", std::string());
    json &to = engine == "DMA" ? queues[row.value("queue", std::string())] : engines[engine];
    if (!to.is_object())
      to = json::object();
    for (const auto &[reason, ns] : row["wait_ns"].items())
      to[reason] = to.value(reason, 0.0) + ns.get<double>();
  }
}

double total_of(const json &waits) {
  double t = 0;
  for (const auto &[k, v] : waits.items())
    t += v.get<double>(), (void)k;
  return t;
}

// The verdict's note on an engine kept busy by many tiny instructions: fewer than MIN_II (~64 cycles [ISA226]) worth
// of elements each at 128 partitions, so each costs its fixed minimum ([PERF] Opt #5a). The compiler may merge
// such per-iteration instructions (calibration.md E6: 65,536 [128, 3] tensor_tensor into 512 of [128, 384] after a
// tile-size hint); a BIR runs as written, so the note says the count is the one the compiler could reduce.
std::string tiny_note(const json &stats, const std::string &b, const engines::ArchParams &arch) {
  if (b != "ACT" && b != "POOL" && b != "DVE") return "";
  const json &e = stats["engines"].value(b, json::object());
  const double n = num(e, "instructions"), elements = num(e, "elements");
  if (n < 1024 || elements <= 0) return "";
  const double per = elements / n;
  if (per >= static_cast<double>(arch.min_ii_cycles * arch.partitions)) return "";
  char t[256];
  std::snprintf(t, sizeof t,
                "; %.0f tiny instructions, %.0f elements each on average, under MIN_II x %lld partitions: the "
                "compiler may merge such per-iteration instructions, this BIR runs them as written",
                n, per, static_cast<long long>(arch.partitions));
  return t;
}

json verdict(const json &stats, const json &a, const engines::ArchParams &arch) {
  const double total = num(stats, "total_ns");
  const std::string b = stats.value("bottleneck", std::string());
  if (total <= 0 || b.empty())
    return {{"kind", "none"}, {"bottleneck", b}, {"text", "no verdict: nothing ran"}};
  const double share = num(stats["critical_path_ns"], b.c_str()) / total;
  if (b == "DMA") {
    const json &d = a["dma"];
    const double crit = num(d, "critical_ns"), fixed = num(d, "critical_fixed_latency_ns");
    const double f = crit > 0 ? fixed / crit : 0.0;
    const double allowed = num(d, "allowed_gbps"), achieved = num(d, "achieved_gbps");
    const double bw = allowed > 0 ? achieved / allowed : 0.0;
    const std::string rate = gbps(achieved) + ", " + pct(bw) + " of the " + gbps(allowed) + " allowed";
    if (f >= kLatencyBoundShare)
      return {{"kind", "dma-latency"},
              {"bottleneck", b},
              {"text", "DMA latency-bound (fixed latency " + pct(f) + " of DMA critical time)"}};
    if (bw >= kBandwidthBoundShare)
      return {{"kind", "dma-bandwidth"}, {"bottleneck", b}, {"text", "DMA bandwidth-bound (" + rate + ")"}};
    return {{"kind", "dma-transfer"},
            {"bottleneck", b},
            {"text", "DMA transfer-bound (fixed latency " + pct(f) + " of DMA critical time; " + rate +
                         ": per-row cost and engine arbitration)"}};
  }
  const json &e = a["engines"].value(b, json::object());
  const double busy = num(e, "busy_ns") / total;
  if (busy >= kEngineBoundBusy) {
    std::string text = b + "-bound (busy " + pct(busy) + " of the run";
    const json &w = e.value("work", json::object());
    if (num(w, "peak_per_ns") > 0 && num(w, "amount") > 0)
      text += "; " + pct(num(w, "of_peak")) + " of peak " + w.value("unit", std::string()) + "/s";
    return {{"kind", "engine"}, {"bottleneck", b}, {"text", text + tiny_note(stats, b, arch) + ")"}};
  }
  return {{"kind", "dependency"},
          {"bottleneck", b},
          {"text", "dependency-bound (" + b + " holds " + pct(share) + " of the critical path but is busy " +
                       pct(busy) + " of the run: dependent instructions wait on each other" +
                       tiny_note(stats, b, arch) + ")"}};
}

} // namespace

json analysis_json(const json &stats, const engines::ArchParams &arch) {
  const double total = num(stats, "total_ns");
  std::map<std::string, json> engine_waits, queue_waits;
  wait_sums(stats, engine_waits, queue_waits);
  const bool profiled = stats.contains("profile");
  json a;
  json engines = json::object();
  for (size_t i = 0; i < 5; ++i) {
    const char *name = kEngineNames[i];
    const json &e = stats["engines"].value(name, json::object());
    json out = {{"instructions", e.value("instructions", int64_t{0})}, {"busy_ns", num(e, "busy_ns")}};
    double waited = 0;
    if (profiled) {
      json w = engine_waits.count(name) ? engine_waits[name] : json::object();
      for (int r = 0; r < kNumWaitReasons; ++r)
        if (!w.contains(wait_reason_name(static_cast<WaitReason>(r))))
          w[wait_reason_name(static_cast<WaitReason>(r))] = 0.0;
      waited = total_of(w);
      out["wait_ns"] = w;
    }
    out["idle_ns"] = std::max(0.0, total - num(e, "busy_ns") - waited);
    const bool pe = i == 0;
    const double amount = pe ? num(e, "flops") : num(e, "elements");
    const double peak =
        pe ? engines::peak_flops_per_ns(arch) : engines::peak_elements_per_ns(kEngineIds[i], arch);
    const double per_ns = total > 0 ? amount / total : 0.0;
    out["work"] = {{"unit", pe ? "FLOP" : "elements"},
                   {"amount", amount},
                   {"per_ns", per_ns},
                   {"peak_per_ns", peak},
                   {"of_peak", peak > 0 ? per_ns / peak : 0.0}};
    engines[name] = out;
  }
  a["engines"] = engines;

  json queues = json::array();
  double bytes = 0, first = -1, last = 0;
  for (const auto &q : stats["dma"].value("queues", json::array())) {
    const std::string name = q.value("name", std::string());
    const double b = num(q, "bytes"), span = num(q, "last_end_ns") - num(q, "first_issue_ns");
    json out = {{"name", name},
                {"transfers", q.value("transfers", int64_t{0})},
                {"bytes", q.value("bytes", int64_t{0})},
                {"active_ns", std::max(0.0, span)},
                {"idle_ns", std::max(0.0, total - std::max(0.0, span))},
                {"achieved_gbps", span > 0 ? b / span : 0.0},
                {"allowed_gbps", num(q, "allowed_ns") > 0 ? b / num(q, "allowed_ns") : 0.0},
                {"fixed_latency_ns", num(q, "fixed_latency_ns")},
                {"per_row_ns", num(q, "per_row_ns")},
                {"transfer_ns", num(q, "transfer_ns")}};
    if (profiled)
      out["wait_ns"] = queue_waits.count(name) ? queue_waits[name] : json::object();
    queues.push_back(out);
    bytes += b;
    if (q.value("transfers", int64_t{0}) > 0) {
      first = first < 0 ? num(q, "first_issue_ns") : std::min(first, num(q, "first_issue_ns"));
      last = std::max(last, num(q, "last_end_ns"));
    }
  }
  a["dma_queues"] = queues;
  // The rate the arch allows all DMA together: every engine at its streaming rate, within the core's HBM
  // share.
  const double active = first >= 0 ? last - first : 0.0;
  const double allowed = std::min(arch.dma_engines * arch.dma_engine_bytes_per_ns, arch.hbm_bytes_per_ns);
  a["dma"] = {{"bytes", bytes},
              {"active_ns", active},
              {"achieved_gbps", active > 0 ? bytes / active : 0.0},
              {"allowed_gbps", allowed},
              {"critical_ns", num(stats["critical_path_ns"], "DMA")},
              {"critical_fixed_latency_ns", num(stats, "critical_path_dma_fixed_ns")}};
  a["verdict"] = verdict(stats, a, arch);
  return a;
}

std::string verdict_line(const json &analysis) {
  return "verdict: " + analysis["verdict"].value("text", std::string());
}

std::string human_time(double ns) {
  char b[48];
  const double a = std::fabs(ns);
  if (a < 1e3)
    std::snprintf(b, sizeof b, "%.1f ns", ns);
  else if (a < 1e6)
    std::snprintf(b, sizeof b, "%.2f us", ns / 1e3);
  else if (a < 1e9)
    std::snprintf(b, sizeof b, "%.3f ms", ns / 1e6);
  else
    std::snprintf(b, sizeof b, "%.3f s", ns / 1e9);
  return b;
}

void print_why(std::ostream &out, const json &a) {
  std::ostringstream o;
  char line[256];
  const bool waits = a["engines"]["PE"].contains("wait_ns");
  o << "why: per engine, % of the run busy, waiting (by reason) and idle; work rate against peak\n";
  std::snprintf(line, sizeof line, "  %-6s %6s %6s %6s %6s %6s %6s %6s  %s\n", "engine", "busy", "dep", "sem",
                "port", "psum", "idle", "rate", "(rate: of peak FLOP/s for PE, elements/s otherwise)");
  o << line;
  for (const auto &[name, e] : a["engines"].items()) {
    if (e.value("instructions", int64_t{0}) == 0)
      continue;
    const double busy = num(e, "busy_ns"), idle = num(e, "idle_ns");
    const double total = busy + idle + (waits ? total_of(e["wait_ns"]) : 0.0);
    auto share = [&](double ns) { return total > 0 ? pct(ns / total) : std::string("-"); };
    auto wait = [&](const char *r) { return waits ? share(num(e["wait_ns"], r)) : std::string("-"); };
    std::snprintf(line, sizeof line, "  %-6s %6s %6s %6s %6s %6s %6s %6s\n", name.c_str(),
                  share(busy).c_str(), wait("dependency").c_str(), wait("semaphore").c_str(),
                  wait("shared_port").c_str(), wait("psum_bank").c_str(), share(idle).c_str(),
                  pct(num(e["work"], "of_peak")).c_str());
    o << line;
  }
  if (!a["dma_queues"].empty()) {
    o << "  DMA queues: bytes, achieved rate while active against the rate the arch allows its transfers, "
         "and the\n"
         "  transfers' time in fixed latency, per-row cost and transfer (DMA-engine time, summed over "
         "transfers)\n";
    std::snprintf(line, sizeof line, "  %-18s %6s %10s %11s %11s %11s %11s %11s\n", "queue", "xfers", "bytes",
                  "achieved", "allowed", "fixed", "per-row", "transfer");
    o << line;
    for (const auto &q : a["dma_queues"]) {
      std::string name = q.value("name", std::string());
      if (name.size() > 18)
        name = name.substr(0, 17) + "~";
      std::snprintf(line, sizeof line, "  %-18s %6lld %10lld %11s %11s %11s %11s %11s\n", name.c_str(),
                    static_cast<long long>(q.value("transfers", int64_t{0})),
                    static_cast<long long>(q.value("bytes", int64_t{0})), gbps(num(q, "achieved_gbps")).c_str(),
                    gbps(num(q, "allowed_gbps")).c_str(), human_time(num(q, "fixed_latency_ns")).c_str(),
                    human_time(num(q, "per_row_ns")).c_str(), human_time(num(q, "transfer_ns")).c_str());
      o << line;
    }
    const json &d = a["dma"];
    o << "  DMA on the critical path: " << human_time(num(d, "critical_ns")) << ", of it fixed latency "
      << human_time(num(d, "critical_fixed_latency_ns")) << "\n";
  }
  out << o.str();  // the verdict is the summary's last line, just above

}

} // namespace neuronsim::sim
