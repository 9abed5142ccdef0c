// Chrome / Perfetto trace-event JSON: one named track per engine and DMA queue, one complete event per dynamic
// instruction, flow arrows for cross-queue dependencies. Events on one track never partially overlap (each queue
// is in order), which Perfetto requires.
#include "neuronsim/sim/io.hpp"

namespace neuronsim::sim {

nlohmann::json trace_json(const RunResult &r, const Schedule &s, const isa::Program &p) {
  nlohmann::json ev = nlohmann::json::array();
  const int pid = 1;
  ev.push_back({{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", "NeuronCore (" + r.arch + ")"}}}});
  const int nq = kNumEngines + s.dma_queues;
  for (int q = 0; q < nq; ++q) {
    ev.push_back({{"ph", "M"}, {"pid", pid}, {"tid", q}, {"name", "thread_name"}, {"args", {{"name", queue_name(q)}}}});
    ev.push_back({{"ph", "M"}, {"pid", pid}, {"tid", q}, {"name", "thread_sort_index"}, {"args", {{"sort_index", q}}}});
  }
  std::vector<const TraceEvent *> by_seq(s.insts.size(), nullptr);
  for (const auto &e : r.events)
    if (e.seq >= 0 && e.seq < static_cast<int64_t>(by_seq.size())) by_seq[e.seq] = &e;
  for (const auto &e : r.events) {
    const auto &inst = p.insts[e.inst];
    const auto &si = s.insts[static_cast<size_t>(e.seq)];
    nlohmann::json args = {{"seq", e.seq},
                           {"index", inst.index},
                           {"opcode", isa::inst_type_name(inst.type)},
                           {"completes_ns", e.finish_ns}};
    auto operands = [&](const std::pmr::vector<engines::Access> &acc, const std::vector<isa::Arg> &argv) {
      nlohmann::json list = nlohmann::json::array();
      for (size_t k = 0; k < acc.size(); ++k) {
        if (acc[k].tensor >= 0) {
          std::string ap;
          for (const auto &dim : acc[k].ap) ap += "[" + std::to_string(dim.step) + "," + std::to_string(dim.num) + "]";
          list.push_back(p.tensors[acc[k].tensor].name + "@" + std::to_string(acc[k].start) + " " + ap + " " +
                         isa::enum_name(acc[k].dtype));
        } else if (k < argv.size() && argv[k].kind == isa::ArgKind::Immediate) {
          list.push_back(k < si.d.imm.size() ? si.d.imm[k] : argv[k].imm);
        }
      }
      return list;
    };
    args["ins"] = operands(si.d.ins, inst.ins);
    args["outs"] = operands(si.d.outs, inst.outs);
    nlohmann::json waits = nlohmann::json::array();
    for (const auto &w : si.waits) waits.push_back(std::string(queue_name(w.queue)) + ">=" + std::to_string(w.count));
    if (!waits.empty()) args["semaphore_waits"] = waits;
    // Trace-event timestamps are in microseconds.
    ev.push_back({{"ph", "X"}, {"pid", pid}, {"tid", e.queue},
                  {"name", inst.name.empty() ? isa::inst_type_name(inst.type) : inst.name + " " + isa::inst_type_name(inst.type)},
                  {"ts", e.start_ns / 1000.0}, {"dur", (e.end_ns - e.start_ns) / 1000.0}, {"args", args}});
    for (int64_t dep : si.dep_seq) {
      const TraceEvent *pe = by_seq[dep];
      if (!pe) continue;
      const int64_t id = dep * 1000003 + e.seq;
      ev.push_back({{"ph", "s"}, {"pid", pid}, {"tid", pe->queue}, {"name", "dep"}, {"cat", "dep"}, {"id", id},
                    // inside the producer's slice, so the arrow binds to it (a flow start binds to its enclosing slice)
                    {"ts", std::max(pe->start_ns, pe->end_ns - 0.001) / 1000.0}});
      ev.push_back({{"ph", "f"}, {"bp", "e"}, {"pid", pid}, {"tid", e.queue}, {"name", "dep"}, {"cat", "dep"},
                    {"id", id}, {"ts", e.start_ns / 1000.0}});
    }
  }
  return nlohmann::json{{"traceEvents", ev}, {"displayTimeUnit", "ns"}};
}

} // namespace neuronsim::sim
