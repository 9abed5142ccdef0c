// Chrome / Perfetto trace-event JSON (docs/timing-model.md 6). Tracks:
//  - one per engine (PE, ACT, POOL, DVE, SP): a complete event per instruction over its occupancy, DMA triggers
//    included ("(trigger)"); the completion latency after it as an async slice on "<engine> completion";
//  - one per slot of each DMA queue's ring ("qSyncIO0 ring 2"): a transfer from entering the ring to its completion
//    (transfer k uses slot k mod ring depth, so a slot's transfers never overlap);
//  - one per DMA engine (with RunOptions::record_dma_engine_slices): its busy stretches, one transfer's descriptors
//    or rounds of round robin between queues; their durations add up to the engine's busy time in the stats.
// Flow arrows join each instruction to the producers it waited for. Complete events on one track never partially
// overlap, which Perfetto requires; the last completion is the run's total time.
#include "neuronsim/sim/io.hpp"

namespace neuronsim::sim {

namespace {
constexpr int kRingTid = 100, kEngineTid = 10000;
}

nlohmann::json trace_json(const RunResult &r, const Schedule &s, const isa::Program &p) {
  nlohmann::json ev = nlohmann::json::array();
  const int pid = 1;
  const int depth = std::max(1, r.dma_ring_depth);
  ev.push_back({{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", "NeuronCore (" + r.arch + ")"}}}});
  auto track = [&](int tid, const std::string &name) {
    ev.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_name"}, {"args", {{"name", name}}}});
    ev.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_sort_index"}, {"args", {{"sort_index", tid}}}});
  };
  for (int q = 0; q < kNumEngines; ++q) track(q, queue_name(q));
  auto tid_of = [&](const TraceEvent &e) {
    if (e.queue < kNumEngines) return e.queue;
    const auto &si = s.insts[static_cast<size_t>(e.seq)];
    return kRingTid + (e.queue - kNumEngines) * depth + static_cast<int>(si.pos % depth);
  };
  for (int q = kNumEngines; q < kNumEngines + s.dma_queues; ++q) {
    const size_t used = std::min<size_t>(s.queues[q].size(), static_cast<size_t>(depth));
    for (size_t slot = 0; slot < used; ++slot)
      track(kRingTid + (q - kNumEngines) * depth + static_cast<int>(slot),
            r.queues[q].name + " ring " + std::to_string(slot));
  }
  if (!r.dma_slices.empty())
    for (size_t e = 0; e < r.dma_engines.size(); ++e) track(kEngineTid + static_cast<int>(e), "DMA engine " + std::to_string(e));

  std::vector<const TraceEvent *> by_seq(s.insts.size(), nullptr);
  for (const auto &e : r.events)
    if (e.seq >= 0 && e.seq < static_cast<int64_t>(by_seq.size())) by_seq[e.seq] = &e;
  auto label = [&](const isa::Inst &inst) {
    return inst.name.empty() ? std::string(isa::inst_type_name(inst.type))
                             : inst.name + " " + isa::inst_type_name(inst.type);
  };
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
    if (!si.trigger) {
      args["ins"] = operands(si.d.ins, inst.ins);
      args["outs"] = operands(si.d.outs, inst.outs);
    }
    if (!inst.source_file.empty()) args["file"] = inst.source_file;
    if (inst.source_line >= 0) args["line"] = inst.source_line;
    for (int w = 0; w < kNumWaitReasons; ++w)
      if (e.wait_ns[static_cast<size_t>(w)] > 0)
        args[std::string("wait_") + wait_reason_name(static_cast<WaitReason>(w)) + "_ns"] = e.wait_ns[static_cast<size_t>(w)];
    nlohmann::json waits = nlohmann::json::array();
    for (const auto &w : si.waits) waits.push_back(std::string(queue_name(w.queue)) + ">=" + std::to_string(w.count));
    if (!waits.empty()) args["semaphore_waits"] = waits;
    const int tid = tid_of(e);
    // Trace-event timestamps are in microseconds.
    if (e.queue < kNumEngines) {
      ev.push_back({{"ph", "X"}, {"pid", pid}, {"tid", tid}, {"name", label(inst) + (si.trigger ? " (trigger)" : "")},
                    {"ts", e.start_ns / 1000.0}, {"dur", (e.end_ns - e.start_ns) / 1000.0}, {"args", args}});
      if (e.finish_ns > e.end_ns) {
        const std::string name = std::string(queue_name(e.queue)) + " completion";
        ev.push_back({{"ph", "b"}, {"pid", pid}, {"cat", "completion"}, {"name", name}, {"id", e.seq},
                      {"ts", e.end_ns / 1000.0}});
        ev.push_back({{"ph", "e"}, {"pid", pid}, {"cat", "completion"}, {"name", name}, {"id", e.seq},
                      {"ts", e.finish_ns / 1000.0}});
      }
    } else {
      args["queue"] = r.queues[e.queue].name;
      args["descriptors_available_ns"] = e.issue_ns + r.dma_fixed_ns;
      args["first_descriptor_ns"] = e.start_ns;
      args["last_descriptor_ns"] = e.end_ns;
      ev.push_back({{"ph", "X"}, {"pid", pid}, {"tid", tid}, {"name", label(inst)}, {"ts", e.issue_ns / 1000.0},
                    {"dur", (e.finish_ns - e.issue_ns) / 1000.0}, {"args", args}});
    }
    const double begin = e.queue < kNumEngines ? e.start_ns : e.issue_ns;
    for (int64_t dep : si.dep_seq) {
      const TraceEvent *pe = by_seq[dep];
      if (!pe) continue;
      const int64_t id = dep * 1000003 + e.seq;
      const double pend = pe->queue < kNumEngines ? pe->end_ns : pe->finish_ns;
      const double pbegin = pe->queue < kNumEngines ? pe->start_ns : pe->issue_ns;
      ev.push_back({{"ph", "s"}, {"pid", pid}, {"tid", tid_of(*pe)}, {"name", "dep"}, {"cat", "dep"}, {"id", id},
                    // inside the producer's slice, so the arrow binds to it (a flow start binds to its enclosing slice)
                    {"ts", std::max(pbegin, pend - 0.001) / 1000.0}});
      ev.push_back({{"ph", "f"}, {"bp", "e"}, {"pid", pid}, {"tid", tid}, {"name", "dep"}, {"cat", "dep"},
                    {"id", id}, {"ts", begin / 1000.0}});
    }
  }
  for (const auto &sl : r.dma_slices) {
    std::string name = "round robin";
    nlohmann::json ids = nlohmann::json::array();
    if (sl.xfer >= 0) {
      name = label(*s.insts[static_cast<size_t>(sl.xfer)].d.inst);
      ids.push_back(sl.xfer);
    } else {
      for (int64_t id : sl.ids) {
        ids.push_back(id);
        name += " " + s.insts[static_cast<size_t>(id)].d.inst->name;
      }
    }
    ev.push_back({{"ph", "X"}, {"pid", pid}, {"tid", kEngineTid + sl.engine}, {"name", name},
                  {"ts", static_cast<double>(sl.start_ps) / 1e6}, {"dur", static_cast<double>(sl.end_ps - sl.start_ps) / 1e6},
                  {"args", {{"transfers", ids}}}});
  }
  return nlohmann::json{{"traceEvents", ev}, {"displayTimeUnit", "ns"}};
}

} // namespace neuronsim::sim
