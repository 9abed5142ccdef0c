// Chrome / Perfetto trace-event JSON (docs/timing-model.md 6), written as the run goes (TraceWriter). Tracks:
//  - one per engine (PE, ACT, POOL, DVE, SP): a complete event per instruction over its occupancy, DMA triggers
//    included ("(trigger)"); the completion latency after it as an async slice on "<engine> completion";
//  - one per slot of each DMA queue's ring ("qSyncIO0 ring 2"): a transfer from entering the ring to its completion
//    (transfer k uses slot k mod ring depth, so a slot's transfers never overlap);
//  - one per DMA engine (with RunOptions::record_dma_engine_slices): its busy stretches, one transfer's descriptors
//    or rounds of round robin between queues; their durations add up to the engine's busy time in the stats.
// Flow arrows join each instruction to the producers it waited for. Complete events on one track never partially
// overlap, which Perfetto requires; the last completion is the run's total time.
//
// Each event is formatted when the core records it and the text goes to the file in 1 MiB pieces: the run holds
// per dynamic instruction only where its flow arrows start (FlowEnd), not the document. The ring and DMA-engine
// tracks (their names need the run's totals) and the engines' slices come after the events; a trace viewer reads
// the events in any order. The JSON is compact; numbers are printed shortest round-trip (std::to_chars), so the
// values read back are the ones the run computed.
#include <algorithm>
#include <charconv>
#include <cmath>

#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/sim/io.hpp"

namespace neuronsim::sim {

namespace {
constexpr int kRingTid = 100, kEngineTid = 10000;
constexpr size_t kFlushBytes = size_t(1) << 20;
} // namespace

TraceWriter::TraceWriter(const isa::Program &p, const std::string &arch, int dma_ring_depth, double dma_latency_ns,
                         int core)
    : prog_(p), depth_(std::max(1, dma_ring_depth)), dma_latency_ns_(dma_latency_ns),
      pid_(std::to_string(core < 0 ? 1 : core + 1)) {
  buf_.reserve(kFlushBytes + 4096);
  buf_ += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  buf_ += "{\"ph\":\"M\",\"pid\":" + pid_ + ",\"name\":\"process_name\",\"args\":{\"name\":";
  str(core < 0 ? "NeuronCore (" + arch + ")" : "NeuronCore " + std::to_string(core) + " (" + arch + ")");
  buf_ += "}}";
  for (int q = 0; q < kNumEngines; ++q) track(q, queue_name(q));
}

std::unique_ptr<TraceWriter> TraceWriter::to_file(const std::string &path, const isa::Program &p,
                                                  const engines::ArchParams &arch, int core) {
  auto w = std::unique_ptr<TraceWriter>(new TraceWriter(p, arch.name, arch.dma_ring_depth, arch.dma_latency_ns, core));
  w->file_ = std::make_unique<isa::AtomicFile>(path);
  return w;
}

TraceWriter::~TraceWriter() = default;  // an uncommitted file's temporary is removed (isa::AtomicFile)

void TraceWriter::str(std::string_view s) {
  buf_ += '"';
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      buf_ += '\\';
      buf_ += c;
    } else if (u < 0x20) {
      static const char hex[] = "0123456789abcdef";
      buf_ += "\\u00";
      buf_ += hex[u >> 4];
      buf_ += hex[u & 15];
    } else {
      buf_ += c;
    }
  }
  buf_ += '"';
}

void TraceWriter::num(double v) {
  // As nlohmann::json dumps a double: null for NaN and infinities, a fraction or exponent always present.
  if (!std::isfinite(v)) {
    buf_ += "null";
    return;
  }
  char b[32];
  const auto r = std::to_chars(b, b + sizeof b, v);
  const std::string_view t(b, static_cast<size_t>(r.ptr - b));
  buf_ += t;
  if (t.find_first_of(".e") == std::string_view::npos) buf_ += ".0";
}

void TraceWriter::num(int64_t v) {
  char b[24];
  const auto r = std::to_chars(b, b + sizeof b, v);
  buf_.append(b, static_cast<size_t>(r.ptr - b));
}

void TraceWriter::key(const char *k) {
  buf_ += ",\"";
  buf_ += k;
  buf_ += "\":";
}

void TraceWriter::track(int tid, const std::string &name) {
  buf_ += ",{\"ph\":\"M\",\"pid\":" + pid_ + ",\"tid\":";
  num(static_cast<int64_t>(tid));
  buf_ += ",\"name\":\"thread_name\",\"args\":{\"name\":";
  str(name);
  buf_ += "}},{\"ph\":\"M\",\"pid\":" + pid_ + ",\"tid\":";
  num(static_cast<int64_t>(tid));
  buf_ += ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":";
  num(static_cast<int64_t>(tid));
  buf_ += "}}";
}

void TraceWriter::label(const isa::Inst &inst) {
  const char *op = isa::inst_type_name(inst.type);
  label_.clear();
  if (!inst.name.empty()) label_ += inst.name + " ";
  label_ += op;
}

void TraceWriter::operands(const ScheduledInst &si, const std::pmr::vector<engines::Access> &acc,
                           const std::vector<isa::Arg> &argv) {
  buf_ += '[';
  bool first = true;
  for (size_t k = 0; k < acc.size(); ++k) {
    if (acc[k].tensor >= 0) {
      std::string ap = prog_.tensors[static_cast<size_t>(acc[k].tensor)].name + "@" + std::to_string(acc[k].start) + " ";
      for (const auto &dim : acc[k].ap) ap += "[" + std::to_string(dim.step) + "," + std::to_string(dim.num) + "]";
      ap += " ";
      ap += isa::enum_name(acc[k].dtype);
      if (!first) buf_ += ',';
      str(ap);
      first = false;
    } else if (k < argv.size() && argv[k].kind == isa::ArgKind::Immediate) {
      if (!first) buf_ += ',';
      num(k < si.d.imm.size() ? si.d.imm[k] : argv[k].imm);
      first = false;
    }
  }
  buf_ += ']';
}

void TraceWriter::event(const TraceEvent &e, const ScheduledInst &si, const RunResult &r) noexcept {
  if (error_) return;
  try {
    write_event(e, si, r);
    if (!pending_.empty()) write_ready_slices();
    if (buf_.size() >= kFlushBytes) flush();
  } catch (...) {
    error_ = std::current_exception();  // the core's threads cannot unwind: finish() reports it
  }
}

void TraceWriter::write_event(const TraceEvent &e, const ScheduledInst &si, const RunResult &r) {
  const isa::Inst &inst = prog_.insts[static_cast<size_t>(e.inst)];
  const bool engine = e.queue < kNumEngines;
  const int tid = engine ? e.queue : kRingTid + (e.queue - kNumEngines) * depth_ + static_cast<int>(si.pos % depth_);
  // Where a flow arrow from this instruction starts: inside its slice, so the arrow binds to it (a flow start binds
  // to its enclosing slice).
  const double pend = engine ? e.end_ns : e.finish_ns, pbegin = engine ? e.start_ns : e.issue_ns;
  if (e.seq >= 0) {
    if (static_cast<size_t>(e.seq) >= flow_.size()) flow_.resize(static_cast<size_t>(e.seq) + 1);
    flow_[static_cast<size_t>(e.seq)] = FlowEnd{tid, e.inst, std::max(pbegin, pend - 0.001) / 1000.0};
  }
  label(inst);
  // Trace-event timestamps are in microseconds.
  buf_ += ",{\"ph\":\"X\",\"pid\":" + pid_ + ",\"tid\":";
  num(static_cast<int64_t>(tid));
  key("name");
  if (engine && si.trigger) label_ += " (trigger)";
  str(label_);
  key("ts");
  num((engine ? e.start_ns : e.issue_ns) / 1000.0);
  key("dur");
  num((engine ? e.end_ns - e.start_ns : e.finish_ns - e.issue_ns) / 1000.0);
  buf_ += ",\"args\":{\"seq\":";
  num(e.seq);
  key("index");
  num(static_cast<int64_t>(inst.index));
  key("opcode");
  str(isa::inst_type_name(inst.type));
  key("completes_ns");
  num(e.finish_ns);
  if (!si.trigger) {
    key("ins");
    operands(si, si.d.ins, inst.ins);
    key("outs");
    operands(si, si.d.outs, inst.outs);
  }
  if (!inst.source_file.empty()) {
    key("file");
    str(inst.source_file);
  }
  if (inst.source_line >= 0) {
    key("line");
    num(static_cast<int64_t>(inst.source_line));
  }
  for (int w = 0; w < kNumWaitReasons; ++w)
    if (e.wait_ns[static_cast<size_t>(w)] > 0) {
      buf_ += ",\"wait_";
      buf_ += wait_reason_name(static_cast<WaitReason>(w));
      buf_ += "_ns\":";
      num(e.wait_ns[static_cast<size_t>(w)]);
    }
  if (!si.waits.empty()) {
    key("semaphore_waits");
    buf_ += '[';
    for (size_t k = 0; k < si.waits.size(); ++k) {
      if (k) buf_ += ',';
      str(std::string(queue_name(si.waits[k].queue)) + ">=" + std::to_string(si.waits[k].count));
    }
    buf_ += ']';
  }
  if (!engine) {
    key("queue");
    str(r.queues[static_cast<size_t>(e.queue)].name);
    key("descriptors_available_ns");
    num(e.issue_ns + dma_latency_ns_);
    key("first_descriptor_ns");
    num(e.start_ns);
    key("last_descriptor_ns");
    num(e.end_ns);
  }
  buf_ += "}}";
  if (engine && e.finish_ns > e.end_ns) {
    const std::string name = std::string(queue_name(e.queue)) + " completion";
    for (const char *ph : {"b", "e"}) {
      buf_ += ",{\"ph\":\"";
      buf_ += ph;
      buf_ += "\",\"pid\":" + pid_ + ",\"cat\":\"completion\"";
      key("name");
      str(name);
      key("id");
      num(e.seq);
      key("ts");
      num((*ph == 'b' ? e.end_ns : e.finish_ns) / 1000.0);
      buf_ += '}';
    }
  }
  const double begin = engine ? e.start_ns : e.issue_ns;
  for (int64_t dep : si.dep_seq) {
    // Every producer an instruction waited for was recorded before it (its queue's completion was known).
    if (dep < 0 || static_cast<size_t>(dep) >= flow_.size() || flow_[static_cast<size_t>(dep)].tid < 0) continue;
    const FlowEnd &pe = flow_[static_cast<size_t>(dep)];
    const int64_t id = dep * 1000003 + e.seq;
    buf_ += ",{\"ph\":\"s\",\"pid\":" + pid_ + ",\"tid\":";
    num(static_cast<int64_t>(pe.tid));
    buf_ += ",\"name\":\"dep\",\"cat\":\"dep\",\"id\":";
    num(id);
    key("ts");
    num(pe.ts_us);
    buf_ += "},{\"ph\":\"f\",\"bp\":\"e\",\"pid\":" + pid_ + ",\"tid\":";
    num(static_cast<int64_t>(tid));
    buf_ += ",\"name\":\"dep\",\"cat\":\"dep\",\"id\":";
    num(id);
    key("ts");
    num(begin / 1000.0);
    buf_ += '}';
  }
}

void TraceWriter::slices(std::vector<engines::DmaSlice> &s) noexcept {
  if (error_) return;
  try {
    any_slices_ = any_slices_ || !s.empty();
    for (auto &sl : s) pending_.push_back(std::move(sl));
    write_ready_slices();
    if (buf_.size() >= kFlushBytes) flush();
  } catch (...) {
    error_ = std::current_exception();
  }
}

void TraceWriter::write_ready_slices() {
  auto recorded = [&](int64_t seq) {
    return seq >= 0 && static_cast<size_t>(seq) < flow_.size() && flow_[static_cast<size_t>(seq)].tid >= 0;
  };
  while (!pending_.empty()) {
    const engines::DmaSlice &sl = pending_.front();
    if (sl.xfer >= 0 ? !recorded(sl.xfer) : !std::all_of(sl.ids.begin(), sl.ids.end(), recorded)) return;
    write_slice(sl);
    pending_.pop_front();
  }
}

void TraceWriter::write_slice(const engines::DmaSlice &sl) {
  auto inst_of = [&](int64_t seq) -> const isa::Inst & {
    return prog_.insts[static_cast<size_t>(flow_.at(static_cast<size_t>(seq)).inst)];
  };
  std::string name = "round robin";
  if (sl.xfer >= 0) {
    label(inst_of(sl.xfer));
    name = label_;
  } else {
    for (int64_t id : sl.ids) name += " " + inst_of(id).name;
  }
  buf_ += ",{\"ph\":\"X\",\"pid\":" + pid_ + ",\"tid\":";
  num(static_cast<int64_t>(kEngineTid + sl.engine));
  key("name");
  str(name);
  key("ts");
  num(static_cast<double>(sl.start_ps) / 1e6);
  key("dur");
  num(static_cast<double>(sl.end_ps - sl.start_ps) / 1e6);
  buf_ += ",\"args\":{\"transfers\":[";
  if (sl.xfer >= 0) {
    num(sl.xfer);
  } else {
    for (size_t k = 0; k < sl.ids.size(); ++k) {
      if (k) buf_ += ',';
      num(sl.ids[k]);
    }
  }
  buf_ += "]}}";
}

void TraceWriter::flush() {
  if (file_) {
    file_->write(buf_);
    buf_.clear();
  }
}

std::string TraceWriter::finish(const RunResult &r) {
  if (error_) std::rethrow_exception(error_);
  // The ring slots each DMA queue used, and the DMA engines (when their slices were recorded).
  for (int q = kNumEngines; q < kMaxQueues; ++q) {
    const int64_t used = std::min<int64_t>(r.queues[static_cast<size_t>(q)].instructions, depth_);
    for (int64_t slot = 0; slot < used; ++slot)
      track(kRingTid + (q - kNumEngines) * depth_ + static_cast<int>(slot),
            r.queues[static_cast<size_t>(q)].name + " ring " + std::to_string(slot));
  }
  if (any_slices_ || !r.dma_slices.empty())
    for (size_t e = 0; e < r.dma_engines.size(); ++e) track(kEngineTid + static_cast<int>(e), "DMA engine " + std::to_string(e));
  for (auto &sl : r.dma_slices) pending_.push_back(sl);
  for (const auto &sl : pending_) {  // every transfer is recorded by now
    write_slice(sl);
    if (file_ && buf_.size() >= kFlushBytes) flush();
  }
  pending_.clear();
  buf_ += more_;  // the other cores' events (add_core)
  more_.clear();
  buf_ += "]}\n";
  if (!file_) return std::move(buf_);
  flush();
  file_->commit();
  return {};
}

nlohmann::json trace_json(const RunResult &r, const Schedule &s, const isa::Program &p) {
  TraceWriter w(p, r.arch, r.dma_ring_depth, r.dma_latency_ns);
  for (const auto &e : r.events) w.event(e, s.insts[static_cast<size_t>(e.seq)], r);
  return nlohmann::json::parse(w.finish(r));
}

void TraceWriter::add_core(const RunResult &r, const Schedule &s, const isa::Program &p, int core) {
  TraceWriter w(p, r.arch, r.dma_ring_depth, r.dma_latency_ns, core);
  for (const auto &e : r.events) w.event(e, s.insts[static_cast<size_t>(e.seq)], r);
  std::string doc = w.finish(r);
  const std::string head = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", tail = "]}\n";
  more_ += ',';
  more_.append(doc, head.size(), doc.size() - head.size() - tail.size());
}

} // namespace neuronsim::sim
