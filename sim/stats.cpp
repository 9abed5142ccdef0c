// Statistics of a run (docs/timing-model.md 6): per engine its instructions, occupancy and utilization; per DMA
// queue its transfers, bytes, descriptors and the DMA-engine time of its descriptors; per DMA engine its busy time.
// The DMA queues' busy times add up to the DMA engines' (every descriptor is counted once, on its engine and on its
// queue), so "DMA utilization" is the engines' busy time over engines x total time.
#include <algorithm>
#include <array>
#include <iomanip>
#include <map>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "neuronsim/sim/analysis.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/stats.hpp"
#include "neuronsim/sim/version.hpp"

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

// Sums over a set of dynamic instructions (one static instruction, an opcode, an engine, a source line).
struct Sums {
  int64_t executions = 0;
  double busy_ns = 0.0;
  std::array<double, kNumWaitReasons> wait_ns{};
  double critical_path_ns = 0.0;

  void add(const TraceEvent &e) {
    ++executions;
    busy_ns += e.busy_ns;
    for (int i = 0; i < kNumWaitReasons; ++i) wait_ns[static_cast<size_t>(i)] += e.wait_ns[static_cast<size_t>(i)];
  }
  void merge(const Sums &o) {
    executions += o.executions;
    busy_ns += o.busy_ns;
    for (size_t i = 0; i < wait_ns.size(); ++i) wait_ns[i] += o.wait_ns[i];
    critical_path_ns += o.critical_path_ns;
  }
  // Its keys set in the object o. Key by key, not by an initializer list and update(): those build each value
  // twice and copy it once more, and a 10,000-instruction kernel's profile has 10,000 rows (perf: most of the
  // stats document's time).
  void into(nlohmann::json &o) const {
    nlohmann::json &w = o["wait_ns"] = nlohmann::json::object();
    double total = 0.0;
    for (int i = 0; i < kNumWaitReasons; ++i) {
      w[wait_reason_name(static_cast<WaitReason>(i))] = wait_ns[static_cast<size_t>(i)];
      total += wait_ns[static_cast<size_t>(i)];
    }
    o["executions"] = executions;
    o["busy_ns"] = busy_ns;
    o["wait_total_ns"] = total;
    o["critical_path_ns"] = critical_path_ns;
  }
  nlohmann::json json() const {
    nlohmann::json o = nlohmann::json::object();
    into(o);
    return o;
  }
};

// A static instruction's row: the engine-queue part (its execution, or a DMA instruction's trigger) and the DMA
// transfer are two rows of the same instruction.
int64_t row_key(const TraceEvent &e) { return profile_row(e.inst, e.queue); }

// The time each critical-path instruction holds the path: from its issue to the next one's (as the shares), given
// as f(row, queue, ns). A whole run's; a streamed run's sums come folded in RunResult::profile and
// critical_path_engines (sim/core_run.cpp, which makes the same additions in the same order).
template <class F> void critical_path_spans(const RunResult &r, const Schedule &s, F &&f) {
  std::vector<const TraceEvent *> by_seq(s.insts.size(), nullptr);
  for (const auto &e : r.events) by_seq[static_cast<size_t>(e.seq)] = &e;
  for (size_t i = 0; i < r.critical_path.size(); ++i) {
    const TraceEvent *e = by_seq[static_cast<size_t>(r.critical_path[i])];
    if (!e) continue;
    const TraceEvent *next = i + 1 < r.critical_path.size() ? by_seq[static_cast<size_t>(r.critical_path[i + 1])] : nullptr;
    const double until = next ? next->issue_ns : r.total_ns;
    f(row_key(*e), e->queue, std::max(0.0, until - e->issue_ns));
  }
}

nlohmann::json profile_json(const RunResult &r, const Schedule &s, const isa::Program &p) {
  // Summed per row first (a dense table indexed by row_key: no lookup by name per dynamic instruction, which made
  // --stats cost a quarter of a full-size timing-only run), then per opcode, engine and source line from the rows.
  const size_t n_rows = 2 * p.insts.size();
  std::vector<Sums> per_row(n_rows);
  std::vector<std::pair<int, bool>> queue_of(n_rows, {-1, false});  // queue, DMA trigger
  if (r.streamed) {
    for (size_t k = 0; k < n_rows && k < r.profile.size(); ++k) {
      const ProfileSums &x = r.profile[k];
      per_row[k].executions = x.executions, per_row[k].busy_ns = x.busy_ns, per_row[k].wait_ns = x.wait_ns;
      per_row[k].critical_path_ns = x.critical_path_ns;
      queue_of[k] = {x.queue, x.trigger};
    }
  } else {
    for (const auto &e : r.events) {
      const size_t k = static_cast<size_t>(row_key(e));
      per_row[k].add(e);
      if (queue_of[k].first < 0) queue_of[k] = {e.queue, s.insts[static_cast<size_t>(e.seq)].trigger};
    }
  }
  if (!r.streamed)
    critical_path_spans(r, s, [&](int64_t row, int, double ns) { per_row[static_cast<size_t>(row)].critical_path_ns += ns; });
  std::map<int64_t, Sums> rows;
  std::map<int64_t, std::pair<int, bool>> row_queue;
  std::map<std::string, Sums> opcodes, engines;
  std::map<std::pair<std::string, int>, Sums> lines;
  for (size_t k = 0; k < n_rows; ++k) {
    if (queue_of[k].first < 0) continue;
    const Sums &x = per_row[k];
    const isa::Inst &inst = p.insts[k / 2];
    rows.emplace(static_cast<int64_t>(k), x);
    row_queue.emplace(static_cast<int64_t>(k), queue_of[k]);
    opcodes[isa::inst_type_name(inst.type)].merge(x);
    engines[queue_of[k].first < kNumEngines ? queue_name(queue_of[k].first) : "DMA"].merge(x);
    if (inst.source_line >= 0) lines[std::make_pair(inst.source_file, inst.source_line)].merge(x);
  }
  nlohmann::json insts = nlohmann::json::array();
  for (const auto &[key, sums] : rows) {
    const isa::Inst &inst = p.insts[static_cast<size_t>(key / 2)];
    const auto [q, trigger] = row_queue[key];
    nlohmann::json &row = insts.emplace_back(nlohmann::json::object());
    row["index"] = inst.index;
    row["name"] = inst.name;
    row["opcode"] = isa::inst_type_name(inst.type);
    row["engine"] = q < kNumEngines ? queue_name(q) : "DMA";
    row["queue"] = r.queues[static_cast<size_t>(q)].name;
    row["dma_trigger"] = trigger;
    if (!inst.source_file.empty()) row["file"] = inst.source_file;
    if (inst.source_line >= 0) row["line"] = inst.source_line;
    sums.into(row);
  }
  auto table = [](const std::map<std::string, Sums> &m) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto &[k, v] : m) o[k] = v.json();
    return o;
  };
  nlohmann::json by_line = nlohmann::json::array();
  for (const auto &[key, sums] : lines) {
    nlohmann::json &row = by_line.emplace_back(nlohmann::json::object());
    row["file"] = key.first;
    row["line"] = key.second;
    sums.into(row);
  }
  // The critical path summarised: static instructions and source lines, longest first (a stable sort of the rows
  // on the path by their critical_path_ns, read once per row rather than once per comparison).
  auto longest = [](const nlohmann::json &all) {
    std::vector<std::pair<double, size_t>> on_path;
    for (size_t i = 0; i < all.size(); ++i) {
      const double ns = all[i]["critical_path_ns"].get<double>();
      if (ns > 0) on_path.emplace_back(ns, i);
    }
    std::stable_sort(on_path.begin(), on_path.end(), [](const auto &x, const auto &y) { return x.first > y.first; });
    nlohmann::json a = nlohmann::json::array();
    for (const auto &[ns, i] : on_path) a.push_back(all[i]);
    return a;
  };
  nlohmann::json cp = nlohmann::json::object();
  cp["instructions"] = longest(insts);
  cp["source_lines"] = longest(by_line);
  // Moved in, not copied (an initializer list copies: the rows of a 10,000-instruction kernel, twice).
  nlohmann::json out = nlohmann::json::object();
  out["instructions"] = std::move(insts);
  out["opcodes"] = table(opcodes);
  out["engines"] = table(engines);
  out["source_lines"] = std::move(by_line);
  out["critical_path"] = std::move(cp);
  return out;
}

} // namespace

// The time from each critical-path instruction's issue to the next one's: a DMA transfer's share starts when it
// entered its queue, so the fixed latency and the engines' arbitration count as DMA.
std::vector<std::pair<std::string, double>> critical_path_shares(const RunResult &r, const Schedule &s) {
  std::vector<std::pair<std::string, double>> shares;
  auto add = [&](const std::string &name, double ns) {
    for (auto &kv : shares)
      if (kv.first == name) return void(kv.second += ns);
    shares.emplace_back(name, ns);
  };
  if (r.streamed) shares = r.critical_path_engines;
  else critical_path_spans(r, s, [&](int64_t, int queue, double ns) { add(queue < kNumEngines ? queue_name(queue) : "DMA", ns); });
  std::stable_sort(shares.begin(), shares.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
  return shares;
}

// The time the critical path's DMA links spend in their fixed latency: of each link's span (its issue to the
// next link's), the first dma_latency_ns (the verdict's "fixed latency N% of DMA critical time"). A streamed
// run's comes folded (sim/core_run.cpp, the same additions).
static double critical_path_dma_fixed(const RunResult &r, const Schedule &s) {
  if (r.streamed)
    return r.critical_path_dma_fixed_ns;
  double fixed = 0.0;
  critical_path_spans(r, s, [&](int64_t, int queue, double ns) {
    if (queue >= kNumEngines)
      fixed += std::min(ns, r.dma_latency_ns);
  });
  return fixed;
}

// The stats document; without `links` its "critical_path" list is left out (summary_analysis_json).
static nlohmann::json stats_document(const RunResult &r, const Schedule &s, const isa::Program &p,
                                     const std::vector<std::string> &command_line, bool with_profile, bool links) {
  nlohmann::json j;
  j["tool"] = {{"name", "neuronsim"}, {"version", version()}};
  j["command_line"] = command_line;
  j["arch"] = r.arch;
  j["kernel"] = p.file;
  // With --include-preamble the total is a profiler's: the kernel's own time plus the fixed start and end of an
  // execution (calibration.md F1); utilizations stay over the kernel's own time.
  j["total_ns"] = r.total_ns + r.preamble_ns;
  j["preamble_ns"] = r.preamble_ns;
  j["dynamic_instructions"] = r.dynamic_instructions;
  nlohmann::json engines = nlohmann::json::object();
  for (int q = 0; q < kNumEngines; ++q) {
    const auto &qs = r.queues[q];
    engines[queue_name(q)] = {{"instructions", qs.instructions},
                              {"busy_ns", qs.busy_ns},
                              {"utilization", r.total_ns > 0 ? qs.busy_ns / r.total_ns : 0.0},
                              {"cycles", qs.cycles},
                              {"elements", qs.elements},
                              {"flops", qs.flops}};
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
                      {"utilization", engine_time > 0 ? qs.busy_ns / engine_time : 0.0},
                      {"fixed_latency_ns", qs.fixed_ns},
                      {"per_row_ns", qs.per_row_ns},
                      {"transfer_ns", qs.transfer_ns},
                      {"allowed_ns", qs.allowed_ns},
                      {"first_issue_ns", qs.first_issue_ns},
                      {"last_end_ns", qs.last_end_ns}});
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
              {"utilization", dma_utilization(r)},
              {"spill_save_bytes", r.spill_save_bytes},
              {"spill_reload_bytes", r.spill_reload_bytes}};
  // The chain of instructions that set the total time: each one started when its predecessor in the chain
  // completed (or released its queue). Long chains are cut to their last 10000 links.
  // (A streamed run keeps the events of the links it lists: RunResult::events.)
  std::vector<const TraceEvent *> by_seq(r.streamed || !links ? 0 : s.insts.size(), nullptr);
  std::unordered_map<int64_t, const TraceEvent *> listed;
  if (links)
    for (const auto &e : r.events) (r.streamed ? listed[e.seq] : by_seq[static_cast<size_t>(e.seq)]) = &e;
  nlohmann::json cp = nlohmann::json::array();
  const size_t first = r.critical_path.size() > kCriticalPathListed ? r.critical_path.size() - kCriticalPathListed : 0;
  for (size_t i = links ? first : r.critical_path.size(); i < r.critical_path.size(); ++i) {
    const int64_t seq = r.critical_path[i];
    const auto it = listed.find(seq);
    const TraceEvent *e = r.streamed ? (it == listed.end() ? nullptr : it->second) : by_seq[static_cast<size_t>(seq)];
    if (!e) continue;
    const bool trigger = r.streamed ? r.profile[static_cast<size_t>(row_key(*e))].trigger
                                    : s.insts[static_cast<size_t>(e->seq)].trigger;
    const auto &inst = p.insts[e->inst];
    nlohmann::json &link = cp.emplace_back(nlohmann::json::object());  // key by key, as the profile's rows
    link["seq"] = e->seq;
    link["name"] = inst.name;
    link["opcode"] = isa::inst_type_name(inst.type);
    link["queue"] = r.queues[e->queue].name;
    link["dma_trigger"] = trigger;
    link["issue_ns"] = e->issue_ns;
    link["start_ns"] = e->start_ns;
    link["end_ns"] = e->end_ns;
    link["finish_ns"] = e->finish_ns;
  }
  if (links) j["critical_path"] = std::move(cp);
  nlohmann::json shares = nlohmann::json::object();
  const auto sh = critical_path_shares(r, s);
  for (const auto &[name, ns] : sh) shares[name] = ns;
  j["critical_path_ns"] = shares;
  j["critical_path_dma_fixed_ns"] = critical_path_dma_fixed(r, s);
  j["bottleneck"] = sh.empty() ? "" : sh.front().first;
  j["critical_path_length"] = r.streamed ? static_cast<size_t>(r.critical_path_length) : r.critical_path.size();
  if (with_profile)
    j["profile"] = profile_json(r, s, p);
  j["analysis"] = analysis_json(j, engines::load_arch(r.arch));
  return j;
}

nlohmann::json stats_json(const RunResult &r, const Schedule &s, const isa::Program &p,
                          const std::vector<std::string> &command_line, bool with_profile) {
  return stats_document(r, s, p, command_line, with_profile, true);
}

nlohmann::json summary_analysis_json(const RunResult &r, const Schedule &s, const isa::Program &p) {
  return stats_document(r, s, p, {}, false, false)["analysis"];
}

void print_top(std::ostream &out, const nlohmann::json &stats, int n) {
  const auto &rows = stats.at("profile").at("critical_path").at("instructions");
  const double total = stats.at("total_ns").get<double>() - stats.value("preamble_ns", 0.0);  // the kernel's time
  std::ostringstream o;
  o << "top " << std::min<size_t>(static_cast<size_t>(std::max(0, n)), rows.size())
    << " instructions on the critical path:\n";
  // Columns as wide as their widest cell (a full-size run's counts and times fit), times in the unit that
  // fits.
  std::vector<std::array<std::string, 7>> cells = {{"path", "path%", "execs", "busy", "wait", "engine", ""}};
  for (size_t i = 0; i < rows.size() && static_cast<int>(i) < n; ++i) {
    const auto &row = rows[i];
    const double cp = row["critical_path_ns"].get<double>();
    std::string src = row.value("file", std::string());
    if (row.contains("line")) src += (src.empty() ? "line " : ":") + std::to_string(row["line"].get<int>());
    std::ostringstream share;
    share << std::fixed << std::setprecision(1) << (total > 0 ? 100.0 * cp / total : 0.0) << "%";
    cells.push_back({human_time(cp), share.str(), std::to_string(row["executions"].get<int64_t>()),
                     human_time(row["busy_ns"].get<double>()), human_time(row["wait_total_ns"].get<double>()),
                     row["engine"].get<std::string>(),
                     row["name"].get<std::string>() + " (" + row["opcode"].get<std::string>() +
                         (row["dma_trigger"].get<bool>() ? ", trigger" : "") + ")" +
                         (src.empty() ? "" : "  " + src)});
  }
  cells[0][6] = "instruction (opcode)  source";
  std::array<size_t, 7> width{};
  for (const auto &row : cells)
    for (size_t c = 0; c < 6; ++c)
      width[c] = std::max(width[c], row[c].size());
  for (const auto &row : cells) {
    for (size_t c = 0; c < 5; ++c)
      o << "  " << std::setw(static_cast<int>(width[c])) << row[c];
    o << "  " << std::left << std::setw(static_cast<int>(width[5])) << row[5] << std::right << "  " << row[6]
      << "\n";
  }
  out << o.str();
}

void print_summary(std::ostream &out, const RunResult &r, const Schedule &s, const nlohmann::json *analysis) {
  std::ostringstream o;
  auto pct = [&](double busy, double span) {
    std::ostringstream t;
    t << std::fixed << std::setprecision(0) << (span > 0 ? 100.0 * busy / span : 0.0) << "%";
    return t.str();
  };
  // With --include-preamble the total is a profiler's (calibration.md F1); utilizations stay over the kernel's.
  o << "simulated time: " << human_time(r.total_ns + r.preamble_ns) << " (" << std::fixed << std::setprecision(1)
    << r.total_ns + r.preamble_ns << " ns";
  if (r.preamble_ns > 0) o << ": kernel " << r.total_ns << " ns + pre-amble " << r.preamble_ns << " ns";
  o << ")\n";
  // The table's columns are as wide as their widest cell, so that a full-size run's counts never run into
  // each other.
  std::vector<std::array<std::string, 5>> rows = {{"queue", "insts", "busy", "util", "cycles"}};
  for (int q = 0; q < kNumEngines; ++q) {
    const auto &qs = r.queues[q];
    if (qs.instructions > 0)
      rows.push_back({qs.name, std::to_string(qs.instructions), human_time(qs.busy_ns),
                      pct(qs.busy_ns, r.total_ns), std::to_string(qs.cycles)});
  }
  // DMA queues: transfers, and the DMA-engine time of their descriptors as a share of all engines' time.
  const double engine_time = r.total_ns * static_cast<double>(r.dma_engines.size());
  int64_t transfers = 0;
  for (int q = kNumEngines; q < kNumEngines + s.dma_queues; ++q) {
    const auto &qs = r.queues[q];
    if (qs.instructions == 0) continue;
    transfers += qs.instructions;
    rows.push_back({qs.name, std::to_string(qs.instructions), human_time(qs.busy_ns),
                    pct(qs.busy_ns, engine_time), std::to_string(qs.descriptors) + " desc"});
  }
  if (transfers > 0) {
    int64_t desc = 0;
    for (const auto &e : r.dma_engines) desc += e.descriptors;
    rows.push_back({"DMA engines (" + std::to_string(r.dma_engines.size()) + ")", std::to_string(transfers),
                    human_time(dma_busy(r)), pct(dma_utilization(r), 1.0), std::to_string(desc) + " desc"});
  }
  std::array<size_t, 5> width{};
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  for (const auto &row : rows) {
    o << "  " << std::left << std::setw(static_cast<int>(width[0])) << row[0] << std::right;
    for (size_t c = 1; c < row.size(); ++c)
      o << "  " << std::setw(static_cast<int>(width[c])) << row[c];
    o << "\n";
  }
  if (r.spill_save_bytes > 0 || r.spill_reload_bytes > 0)
    o << "spills: " << r.spill_save_bytes << " bytes saved to DRAM, " << r.spill_reload_bytes
      << " bytes reloaded (spill_save_bytes / spill_reload_bytes, the DMAs on qSyncSpillReload*)\n";
  // The bottleneck is the engine that holds the critical path longest (DMA queues counted together).
  const auto shares = critical_path_shares(r, s);
  if (!shares.empty() && r.total_ns > 0) {
    o << "critical path:";
    for (const auto &[name, ns] : shares)
      o << " " << name << " " << std::setprecision(1) << 100.0 * ns / r.total_ns << "%";
    o << "\nbottleneck: " << shares.front().first << "\n";
  }
  if (analysis)
    o << verdict_line(*analysis) << "\n";
  out << o.str();
}

} // namespace neuronsim::sim
