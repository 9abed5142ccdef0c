// Statistics of a run (docs/timing-model.md 6): per engine its instructions, occupancy and utilization; per DMA
// queue its transfers, bytes, descriptors and the DMA-engine time of its descriptors; per DMA engine its busy time.
// The DMA queues' busy times add up to the DMA engines' (every descriptor is counted once, on its engine and on its
// queue), so "DMA utilization" is the engines' busy time over engines x total time.
#include <iomanip>

#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/stats.hpp"

namespace neuronsim::sim {

namespace {

double dma_busy(const RunResult &r) {
  double b = 0;
  for (const auto &e : r.dma_engines) b += e.busy_ns;
  return b;
}

double dma_utilization(const RunResult &r) {
  return r.total_ns > 0 && !r.dma_engines.empty() ? dma_busy(r) / (r.total_ns * static_cast<double>(r.dma_engines.size()))
                                                  : 0.0;
}

} // namespace

// The time from each critical-path instruction's issue to the next one's: a DMA transfer's share starts when it
// entered its queue, so the fixed latency and the engines' arbitration count as DMA.
std::vector<std::pair<std::string, double>> critical_path_shares(const RunResult &r, const Schedule &s) {
  std::vector<const TraceEvent *> by_seq(s.insts.size(), nullptr);
  for (const auto &e : r.events) by_seq[static_cast<size_t>(e.seq)] = &e;
  std::vector<std::pair<std::string, double>> shares;
  auto add = [&](const std::string &name, double ns) {
    for (auto &kv : shares)
      if (kv.first == name) return void(kv.second += ns);
    shares.emplace_back(name, ns);
  };
  for (size_t i = 0; i < r.critical_path.size(); ++i) {
    const TraceEvent *e = by_seq[static_cast<size_t>(r.critical_path[i])];
    if (!e) continue;
    const TraceEvent *next = i + 1 < r.critical_path.size() ? by_seq[static_cast<size_t>(r.critical_path[i + 1])] : nullptr;
    const double until = next ? next->issue_ns : r.total_ns;
    add(e->queue < kNumEngines ? queue_name(e->queue) : "DMA", std::max(0.0, until - e->issue_ns));
  }
  std::stable_sort(shares.begin(), shares.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
  return shares;
}

nlohmann::json stats_json(const RunResult &r, const Schedule &s, const isa::Program &p) {
  nlohmann::json j;
  j["arch"] = r.arch;
  j["kernel"] = p.file;
  j["total_ns"] = r.total_ns;
  j["dynamic_instructions"] = r.dynamic_instructions;
  nlohmann::json engines = nlohmann::json::object();
  for (int q = 0; q < kNumEngines; ++q) {
    const auto &qs = r.queues[q];
    engines[queue_name(q)] = {{"instructions", qs.instructions},
                              {"busy_ns", qs.busy_ns},
                              {"utilization", r.total_ns > 0 ? qs.busy_ns / r.total_ns : 0.0},
                              {"cycles", qs.cycles}};
  }
  j["engines"] = engines;
  nlohmann::json queues = nlohmann::json::array();
  int64_t bytes = 0, descriptors = 0, transfers = 0;
  const double engine_time = r.total_ns * static_cast<double>(r.dma_engines.size());
  for (int q = kNumEngines; q < kNumEngines + s.dma_queues; ++q) {
    const auto &qs = r.queues[q];
    if (qs.instructions == 0) continue;
    queues.push_back({{"id", q - kNumEngines},
                      {"name", qs.name},
                      {"transfers", qs.instructions},
                      {"bytes", qs.bytes},
                      {"descriptors", qs.descriptors},
                      {"busy_ns", qs.busy_ns},
                      {"utilization", engine_time > 0 ? qs.busy_ns / engine_time : 0.0}});
    bytes += qs.bytes;
    descriptors += qs.descriptors;
    transfers += qs.instructions;
  }
  nlohmann::json dma_engines = nlohmann::json::array();
  for (size_t e = 0; e < r.dma_engines.size(); ++e) {
    const auto &d = r.dma_engines[e];
    dma_engines.push_back({{"engine", e},
                           {"busy_ns", d.busy_ns},
                           {"utilization", r.total_ns > 0 ? d.busy_ns / r.total_ns : 0.0},
                           {"descriptors", d.descriptors},
                           {"transfers", d.transfers}});
  }
  j["dma"] = {{"queues", queues},
              {"engines", dma_engines},
              {"transfers", transfers},
              {"bytes", bytes},
              {"descriptors", descriptors},
              {"busy_ns", dma_busy(r)},
              {"utilization", dma_utilization(r)}};
  // The chain of instructions that set the total time: each one started when its predecessor in the chain
  // completed (or released its queue). Long chains are cut to their last 10000 links.
  std::vector<const TraceEvent *> by_seq(s.insts.size(), nullptr);
  for (const auto &e : r.events) by_seq[static_cast<size_t>(e.seq)] = &e;
  nlohmann::json cp = nlohmann::json::array();
  const size_t first = r.critical_path.size() > 10000 ? r.critical_path.size() - 10000 : 0;
  for (size_t i = first; i < r.critical_path.size(); ++i) {
    const TraceEvent *e = by_seq[static_cast<size_t>(r.critical_path[i])];
    if (!e) continue;
    const auto &si = s.insts[static_cast<size_t>(e->seq)];
    const auto &inst = p.insts[e->inst];
    cp.push_back({{"seq", e->seq}, {"name", inst.name}, {"opcode", isa::inst_type_name(inst.type)},
                  {"queue", r.queues[e->queue].name}, {"dma_trigger", si.trigger}, {"issue_ns", e->issue_ns},
                  {"start_ns", e->start_ns}, {"end_ns", e->end_ns}, {"finish_ns", e->finish_ns}});
  }
  j["critical_path"] = cp;
  nlohmann::json shares = nlohmann::json::object();
  const auto sh = critical_path_shares(r, s);
  for (const auto &[name, ns] : sh) shares[name] = ns;
  j["critical_path_ns"] = shares;
  j["bottleneck"] = sh.empty() ? "" : sh.front().first;
  j["critical_path_length"] = r.critical_path.size();
  return j;
}

void print_summary(std::ostream &out, const RunResult &r, const Schedule &s) {
  const auto flags = out.flags();
  const auto prec = out.precision();
  auto pct = [&](double busy, double span) { return span > 0 ? 100.0 * busy / span : 0.0; };
  out << "simulated time: " << std::fixed << std::setprecision(1) << r.total_ns << " ns\n";
  out << "  queue                insts      busy ns   util     cycles\n";
  auto line = [&](const std::string &name, int64_t n, double busy, double util, const std::string &last) {
    out << "  " << std::left << std::setw(18) << name << std::right << std::setw(7) << n << std::setw(13)
        << std::setprecision(1) << busy << std::setw(6) << std::setprecision(0) << util << "%" << std::setw(11) << last
        << "\n";
  };
  for (int q = 0; q < kNumEngines; ++q) {
    const auto &qs = r.queues[q];
    if (qs.instructions > 0) line(qs.name, qs.instructions, qs.busy_ns, pct(qs.busy_ns, r.total_ns), std::to_string(qs.cycles));
  }
  // DMA queues: transfers, and the DMA-engine time of their descriptors as a share of all engines' time.
  const double engine_time = r.total_ns * static_cast<double>(r.dma_engines.size());
  int64_t transfers = 0;
  for (int q = kNumEngines; q < kNumEngines + s.dma_queues; ++q) {
    const auto &qs = r.queues[q];
    if (qs.instructions == 0) continue;
    transfers += qs.instructions;
    line(qs.name, qs.instructions, qs.busy_ns, pct(qs.busy_ns, engine_time), std::to_string(qs.descriptors) + " desc");
  }
  if (transfers > 0) {
    int64_t desc = 0;
    for (const auto &e : r.dma_engines) desc += e.descriptors;
    line("DMA engines (" + std::to_string(r.dma_engines.size()) + ")", transfers, dma_busy(r),
         100.0 * dma_utilization(r), std::to_string(desc) + " desc");
  }
  // The bottleneck is the engine that holds the critical path longest (DMA queues counted together).
  const auto shares = critical_path_shares(r, s);
  if (!shares.empty() && r.total_ns > 0) {
    out << "critical path:";
    for (const auto &[name, ns] : shares) out << " " << name << " " << std::setprecision(1) << pct(ns, r.total_ns) << "%";
    out << "\nbottleneck: " << shares.front().first << "\n";
  }
  out.flags(flags);
  out.precision(prec);
}

} // namespace neuronsim::sim
