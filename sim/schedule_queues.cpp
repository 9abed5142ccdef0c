// Scheduling: which queue an instruction goes to (its engine, a DMA queue by BIR name or the compiler's default),
// the engine that issues a DMA, and the limits checked per instruction (run budget, PE tile limits).
#include "sim/schedule_builder.hpp"

namespace neuronsim::sim::schedule_detail {

// The engine whose sequencer triggers a DMA instruction (reference neuron-arch.md 1.5 [DMA, DGE]): any engine
// may trigger a transfer with prebuilt descriptors (the instruction's engine); GpSimd builds SWDGE descriptors, so
// it issues them; HWDGE is triggered from ACT or SP and exists from NeuronCore-v3 on. A DMA that names no engine
// goes where the compiler's kernels put it (docs/timing-model.md 2.4): a store (on chip -> DRAM) is triggered from
// GpSimd, every other transfer from SP, the Sync engine "most commonly used to trigger DMA transfers" [ARCH2] --
// calibration.md D1/D3 profiles show the load's trigger on SP and the store's on GpSimd. Their queues then differ
// too, and a store whose trigger waits for its data holds no load behind it on SP.
Engine Builder::dma_issuer(const isa::Inst &inst) const {
  switch (inst.f.dge_type) {
  case isa::DGEType::HWDGE:
    if (!arch_.hwdge)
      throw SemanticError({prog_.file, inst.index, inst.name, "dge_type"},
                          "HWDGE (hardware descriptor generation) needs NeuronCore-v3 or later (reference "
                          "neuron-arch.md 1.5 [DGE]); " + arch_.name + " is NeuronCore-v" +
                              std::to_string(static_cast<int>(arch_.gen)) + ": use dge_type None or SWDGE");
    if (inst.engine == Engine::Activation) return Engine::Activation;
    if (inst.engine == Engine::SP || inst.engine == Engine::Unassigned || inst.engine == Engine::DMA) return Engine::SP;
    throw SemanticError({prog_.file, inst.index, inst.name, "engine"},
                        std::string("an HWDGE DMA is triggered from Activation or SP (reference neuron-arch.md "
                                    "1.5 [DGE]), got ") + isa::enum_name(inst.engine));
  case isa::DGEType::SWDGE:
    return Engine::Pool;
  case isa::DGEType::None:
    break;
  }
  switch (inst.engine) {
  case Engine::PE:
  case Engine::Activation:
  case Engine::Pool:
  case Engine::DVE:
  case Engine::SP: return inst.engine;
  case Engine::Unassigned:
  case Engine::DMA:
  case Engine::ALL: return is_store(inst) ? Engine::Pool : Engine::SP;
  }
  return Engine::SP;
}

// A transfer from on chip (SBUF, PSUM) into DRAM.
bool Builder::is_store(const isa::Inst &inst) const {
  auto first_tensor = [&](const std::vector<isa::Arg> &v) -> const isa::Arg * {
    for (const auto &a : v)
      if (a.kind == isa::ArgKind::AccessPattern && a.tensor >= 0) return &a;
    return nullptr;
  };
  const isa::Arg *src = first_tensor(inst.ins), *dst = first_tensor(inst.outs);
  auto dram = [&](const isa::Arg *a) { return a && prog_.tensors[static_cast<size_t>(a->tensor)].is_dram(); };
  return dram(dst) && src && !dram(src);
}

// A DMA queue id for a BIR queue name: ids are handed out in order of first use, and wrap when a program names
// more queues than an engine has.
int Builder::dma_queue_id(const std::string &name) {
  auto it = named_.find(name);
  if (it == named_.end()) {
    const int id = next_dma_++ % s_.dma_queues;
    it = named_.emplace(name, id).first;
    std::string &n = s_.dma_queue_names[static_cast<size_t>(id)];
    n += (n.empty() ? "" : "+") + name;
  }
  return it->second;
}

int Builder::pick_queue(const isa::Inst &inst, bool dma_type) {
  if (forced_queue_ >= 0) return forced_queue_;  // a DMABlock's descriptors stay on its queue
  if (dma_type || inst.engine == Engine::DMA || inst.type == InstructionType::DMABlock) {
    // A scheduled stream (bundles, encoded by `neuronsim encode`) counts each DMA queue's completions on the
    // semaphore of that queue's number: run the transfer on the queue whose semaphore it increments.
    for (const auto &u : inst.updates)
      if (u.mode == isa::SemUpdate::Mode::Inc && u.sem >= kNumEngines && u.sem < kNumEngines + s_.dma_queues)
        return u.sem;
    // The BIR `queue` name, else the compiler's queue for the issuing engine and descriptor source: a transfer
    // runs on one queue id across all the DMA engines ([DMA] "DMA Queues").
    const std::string name = !inst.f.queue.empty()
                                 ? inst.f.queue
                                 : default_dma_queue_name(dma_issuer_or_sp(inst), inst.f.dge_type, queue_kind(inst));
    return kNumEngines + dma_queue_id(name);
  }
  Engine e = inst.engine == Engine::Unassigned ? engines::default_engine(inst.type) : inst.engine;
  return engine_queue(e);
}

bool Builder::queue_totals(std::array<int64_t, kMaxQueues> &out) {
  for (const auto &i : prog_.insts) s_.explicit_sync |= !i.waits.empty() || !i.updates.empty();
  std::array<__int128, kMaxQueues> n{};
  try {
    if (!add_totals(prog_.body, 1, n)) return false;
  } catch (const Error &) {
    return false;  // e.g. HWDGE where it does not exist: the walk reports it
  }
  __int128 all = 0;
  for (int q = 0; q < kMaxQueues; ++q) all += n[static_cast<size_t>(q)];
  if (all > static_cast<__int128>(2) * max_insts_) return false;
  for (int q = 0; q < kMaxQueues; ++q) out[static_cast<size_t>(q)] = static_cast<int64_t>(n[static_cast<size_t>(q)]);
  return true;
}

namespace {
// Whether an expression's value is the same wherever the walk is (no loop variable, no register).
// With `bound`: loop variables marked there are known too.
bool walk_invariant(const isa::Expr &e, const std::vector<char> *bound = nullptr) {
  if (e.kind == isa::Expr::Kind::Register) return false;
  if (e.kind == isa::Expr::Kind::LoopVar &&
      (!bound || e.var < 0 || static_cast<size_t>(e.var) >= bound->size() || !(*bound)[static_cast<size_t>(e.var)]))
    return false;
  for (const auto &k : e.kids)
    if (!walk_invariant(k, bound)) return false;
  return true;
}
} // namespace

struct Builder::LastLook {
  int q = 0;
  const std::array<int64_t, kMaxQueues> *totals = nullptr;
  bool found = false;               // the last entry of q was passed; now looking for its writer
  bool stop = false;                // given up, or the writer found
  std::vector<Footprint> reads;     // the last entry's
  std::array<int64_t, kMaxQueues> after{};  // entries seen so far (those after the current point)
  std::optional<QueueWait> wait;
  std::vector<char> bound;          // per loop variable: set to its last trip's value by a loop being scanned
};

Footprint Builder::footprint_now(const isa::Arg &a) const {
  Access acc;
  acc.tensor = a.tensor;
  acc.dtype = a.dtype;
  acc.start = a.start.eval(lv_.data(), mem_.shard());
  acc.ap = engines::Dims(a.ap);
  return mem_.footprint(acc);
}

// Backwards over nodes: a loop's last trip only (its variable at its last value), entries counted per queue so
// that the writer's position is its queue's total less the entries after it.
void Builder::look_back(const std::vector<isa::Node> &nodes, LastLook &l) {
  for (auto it = nodes.rbegin(); it != nodes.rend() && !l.stop; ++it) {
    const isa::Node &node = *it;
    if (node.kind == isa::Node::Kind::Loop) {
      const __int128 t = node.ub > node.lb ? ((__int128)node.ub - node.lb + node.stride - 1) / node.stride : 0;
      if (t == 0) continue;
      if (!l.found) {  // after the last entry: only counted, and the last entry is not in it
        std::array<__int128, kMaxQueues> n{};
        if (!add_totals(node.body, t, n) || n[static_cast<size_t>(l.q)] > 0) {
          l.stop = true;
          return;
        }
        for (int q = 0; q < kMaxQueues; ++q)
          l.after[static_cast<size_t>(q)] += static_cast<int64_t>(n[static_cast<size_t>(q)]);
        continue;
      }
      // Its last trip: the variable at its last value, known only inside the body (restored after).
      const size_t v = static_cast<size_t>(node.var);
      const int64_t was = lv_[v];
      const char was_bound = l.bound[v];
      lv_[v] = static_cast<int64_t>(node.lb + (t - 1) * node.stride);
      l.bound[v] = 1;
      look_back(node.body, l);
      lv_[v] = was;
      l.bound[v] = was_bound;
      if (!l.stop && t > 1) l.stop = true;  // the writer is not in the last trip: not looked for further
      continue;
    }
    if (node.kind != isa::Node::Kind::Inst) {
      l.stop = true;
      return;
    }
    const isa::Inst &inst = prog_.insts[static_cast<size_t>(node.inst)];
    const bool dma_type = is_dma(inst.type);
    const bool dma = dma_type || inst.engine == Engine::DMA;
    const int tq = dma && triggers_ && !s_.explicit_sync ? engine_queue(dma_issuer(inst)) : -1;
    const int xq = pick_queue(inst, dma_type);
    // The instruction's entries backwards: its own (the transfer's), then its trigger's.
    if (!l.found) {
      if (xq == l.q && tq >= 0) {  // a transfer waits for its trigger (and its trigger for the rest)
        const int64_t pos = (*l.totals)[static_cast<size_t>(tq)] - 1 - l.after[static_cast<size_t>(tq)];
        if (pos >= 0 && tq != xq) l.wait = QueueWait{tq, pos + 1};
        l.stop = true;
        return;
      }
      if (xq == l.q || tq == l.q) {
        for (const auto &a : inst.ins) {
          if (a.kind != isa::ArgKind::AccessPattern || a.tensor < 0) continue;
          if (!walk_invariant(a.start)) {
            l.stop = true;
            return;
          }
          l.reads.push_back(footprint_now(a));
        }
        l.found = true;
        if (tq == l.q) ++l.after[static_cast<size_t>(xq)];  // the transfer after its trigger
        if (l.reads.empty()) l.stop = true;
        continue;
      }
    } else {
      for (const auto &a : inst.outs) {
        if (a.kind != isa::ArgKind::AccessPattern || a.tensor < 0) continue;
        if (!walk_invariant(a.start, &l.bound)) {  // a register, or a loop's variable outside that loop
          l.stop = true;
          return;
        }
        const Footprint fp = footprint_now(a);
        for (const auto &r : l.reads)
          if (fp.overlaps(r)) {
            const int64_t pos = (*l.totals)[static_cast<size_t>(xq)] - 1 - l.after[static_cast<size_t>(xq)];
            if (pos >= 0) l.wait = QueueWait{xq, pos + 1};
            l.stop = true;
            return;
          }
      }
    }
    ++l.after[static_cast<size_t>(xq)];
    if (tq >= 0) ++l.after[static_cast<size_t>(tq)];
  }
}

std::array<std::optional<QueueWait>, kMaxQueues>
Builder::last_entry_waits(const std::array<int64_t, kMaxQueues> &totals) {
  std::array<std::optional<QueueWait>, kMaxQueues> out{};
  if (s_.explicit_sync) return out;  // no dependency tracking: no waits
  for (int q = 0; q < kMaxQueues; ++q) {
    if (totals[static_cast<size_t>(q)] == 0) continue;
    LastLook l;
    l.q = q;
    l.totals = &totals;
    l.bound.assign(lv_.size(), 0);
    try {
      look_back(prog_.body, l);
    } catch (const Error &) {
      continue;  // an access the walk refuses: the walk reports it
    }
    out[static_cast<size_t>(q)] = l.wait;
  }
  return out;
}

// The walk's queue choice (add) in the walk's order: DMA queue ids go by first use, and a program of instructions
// and constant loops first uses them in the order of its nodes, skipping loops of no trip.
bool Builder::add_totals(const std::vector<isa::Node> &nodes, __int128 trips, std::array<__int128, kMaxQueues> &n) {
  constexpr __int128 kCap = static_cast<__int128>(1) << 80;
  for (const auto &node : nodes) {
    if (node.kind == isa::Node::Kind::Loop) {
      if (node.stride <= 0) return false;
      const __int128 t = node.ub > node.lb ? ((__int128)node.ub - node.lb + node.stride - 1) / node.stride : 0;
      if (t == 0) continue;
      if (!add_totals(node.body, std::min(kCap, trips * std::min(kCap, t)), n)) return false;
      continue;
    }
    if (node.kind != isa::Node::Kind::Inst) return false;
    const isa::Inst &inst = prog_.insts[static_cast<size_t>(node.inst)];
    switch (inst.type) {
    case InstructionType::Return:
    case InstructionType::Exit:
    case InstructionType::Break:
    case InstructionType::DMATrigger:
    case InstructionType::SwitchQueueInstance:
    case InstructionType::ResetQueueInstance:
    case InstructionType::UnconditionalBranch:
    case InstructionType::CompareAndBranch:
    case InstructionType::DMABlock:
      return false;
    default:
      break;
    }
    const bool dma_type = is_dma(inst.type);
    const bool dma = dma_type || inst.engine == Engine::DMA;
    if (dma && triggers_) {
      const Engine issuer = dma_issuer(inst);
      if (!s_.explicit_sync) {
        n[static_cast<size_t>(engine_queue(issuer))] += trips;
        s_.triggers = static_cast<int64_t>(std::min<__int128>(kCap, s_.triggers + trips));
      }
    }
    const int q = pick_queue(inst, dma_type);
    n[static_cast<size_t>(q)] += trips;
    // The on-chip memories its operands touch, as add() records them from their footprints (Memory::footprint: a
    // tensor not in DRAM is PSUM or SBUF).
    uint8_t &touches = s_.touches[static_cast<size_t>(q)];
    for (int out = 0; out < 2; ++out)
      for (const auto &a : out ? inst.outs : inst.ins) {
        if (a.kind != isa::ArgKind::AccessPattern || a.tensor < 0) continue;
        const isa::Tensor &t = prog_.tensors[static_cast<size_t>(a.tensor)];
        if (t.is_dram()) continue;
        touches |= t.mem != isa::MemoryType::PSUM ? Schedule::kTouchesSbuf
                   : out ? Schedule::kTouchesPsum | Schedule::kWritesPsum : Schedule::kTouchesPsum;
      }
  }
  return true;
}

// The limits of one run, checked before this instruction's memory is taken (max_insts_, kMaxScheduleBytes): a
// runaway branch loop stops here with the schedule at most the budget in size.
void Builder::reserve_for(const isa::Inst &inst) {
  if (entries_ - s_.triggers >= max_insts_)
    throw SemanticError({prog_.file, inst.index, inst.name, ""},
                        "more than " + std::to_string(max_insts_) +
                            " dynamic instructions (--max-instructions): do the program's branches loop forever?");
  arena_bytes_ += inst_operand_bytes(inst);
  reserve_entry(inst);
}

// Room for one more schedule entry (an instruction, or the trigger a DMA adds before its transfer) within the
// budget.
void Builder::reserve_entry(const isa::Inst &inst) {
  if (sink_) return;  // a streamed schedule holds a bounded window of entries
  const auto budget_error = [&] {
    return SemanticError({prog_.file, inst.index, inst.name, ""},
                         "the schedule reached the " + std::to_string(kMaxScheduleBytes >> 20) + " MiB one run may use (" +
                             std::to_string(s_.insts.size()) + " dynamic instructions): do the program's branches "
                             "loop forever?");
  };
  const int64_t per = static_cast<int64_t>(sizeof(ScheduledInst));
  if (s_.insts.size() < s_.insts.capacity()) {
    if (arena_bytes_ + static_cast<int64_t>(s_.insts.capacity()) * per > kMaxScheduleBytes) throw budget_error();
    return;
  }
  // Grow the instruction vector ourselves, never past the budget (a doubling could overshoot it by half).
  int64_t cap = std::max<int64_t>(1024, 2 * static_cast<int64_t>(s_.insts.capacity()));
  cap = std::min(cap, (kMaxScheduleBytes - std::min(arena_bytes_, kMaxScheduleBytes)) / per);
  if (cap <= static_cast<int64_t>(s_.insts.size())) throw budget_error();
  s_.insts.reserve(static_cast<size_t>(cap));
}

// Tile limits of the PE array (reference neuron-arch.md 2.1 [ARCH2, ISA]): stationary partitions (K) <= 128
// and stationary free <= 128; moving free <= 512 (one PSUM bank of fp32) on NeuronCore-v2/v3, up to 4096
// (fp32 out) / 8192 (bf16 out) on v4; DoubleRow / DoublePixel carry two K-rows per partition, doubling the
// free sizes (neuron-arch.md 2.1: stationary [128, 2, M], moving [128, 2, N]). A matmul writes one 2 KiB PSUM
// bank per partition on v2/v3 (neuron-arch.md 1.4: "moving free <= 512 (one PSUM bank)"); v4 may span all 8.
void Builder::check_pe_limits(const engines::DynInst &d, const isa::Inst &inst) const {
  const bool gen4 = arch_.gen == isa::CoreGen::V4;
  const int64_t factor = (inst.f.perf_mode == isa::MatmultPerfMode::DoubleRow ||
                          inst.f.perf_mode == isa::MatmultPerfMode::DoublePixel) ? 2 : 1;
  const auto fail = [&](const std::string &field, const std::string &msg) {
    throw SemanticError({prog_.file, inst.index, inst.name, field}, msg);
  };
  const auto limit = [&](size_t k, const char *what, int64_t max_free) {
    if (k >= d.ins.size() || d.ins[k].tensor < 0) return;
    const Access &a = d.ins[k];
    const std::string f = "ins[" + std::to_string(k) + "]";
    if (a.partitions() > arch_.partitions)
      fail(f, std::string(what) + " has " + std::to_string(a.partitions()) + " partitions; the PE array takes at most " +
                  std::to_string(arch_.partitions));
    if (max_free > 0 && a.free_elements() > max_free)
      fail(f, std::string(what) + " has " + std::to_string(a.free_elements()) +
                  " elements per partition; the PE array takes at most " + std::to_string(max_free) +
                  (factor > 1 ? " with this perf_mode" : "") + " on " + arch_.name);
  };
  const bool sized = inst.type != InstructionType::MatmultMx;  // MX packs x4 containers: only K is checked
  limit(0, "the stationary operand", sized ? 128 * factor : 0);
  if (inst.type == InstructionType::MatmultSparse) return;  // ins[1] is dense K, ins[2] the indices
  int64_t moving = 512;
  if (gen4) moving = (!d.outs.empty() && d.outs[0].dtype == isa::Dtype::bfloat16) ? 8192 : 4096;
  limit(1, "the moving operand", sized ? moving * factor : 0);
  if (gen4 || out_fp_.empty() || d.outs.empty() || d.outs[0].tensor < 0) return;
  const isa::Tensor &t = prog_.tensors[static_cast<size_t>(d.outs[0].tensor)];
  const int64_t bank = arch_.psum_banks > 0 ? arch_.psum_bytes_per_partition / arch_.psum_banks : 0;
  const Footprint &fp = out_fp_.front();
  if (t.mem != isa::MemoryType::PSUM || bank <= 0 || fp.b1 <= fp.b0) return;
  if (fp.b0 / bank != (fp.b1 - 1) / bank)
    fail("outs[0]", "the output covers PSUM bytes [" + std::to_string(fp.b0) + ", " + std::to_string(fp.b1) +
                        ") of each partition, across banks " + std::to_string(fp.b0 / bank) + " and " +
                        std::to_string((fp.b1 - 1) / bank) + ": a matmul writes one " + std::to_string(bank) +
                        "-byte PSUM bank on " + arch_.name);
}

// IndirectCopy uses the first num_valid_indices of the indices its ins[1] holds (engines/ops/indirect.cpp): a
// count past them would read indices that are not there, so it is refused here, before the run, in a numeric
// and a timing-only run alike.
void Builder::check_index_count(const engines::DynInst &d, const isa::Inst &inst) const {
  if (!inst.has(isa::Field::num_valid_indices) || d.ins.size() < 2 || d.ins[1].tensor < 0) return;
  const int64_t held = d.ins[1].partitions() * d.ins[1].free_elements(), valid = inst.f.num_valid_indices;
  if (valid < 0 || valid > held)
    throw SemanticError({prog_.file, inst.index, inst.name, "num_valid_indices"},
                        "num_valid_indices " + std::to_string(valid) + " is not within the " + std::to_string(held) +
                            " indices ins[1] holds (0 to " + std::to_string(held) + ")");
}

// The compiler keys a DMA queue by its issuing engine and its type: input for a transfer from a kernel input,
// output for one into a kernel output, data otherwise (reference neuronx-cc/walrus/dma-queues.md: alloc_queues,
// kind2QueType).
DmaQueueKind Builder::queue_kind(const isa::Inst &inst) const {
  bool in = false;
  for (const auto &a : inst.outs)
    if (a.kind == isa::ArgKind::AccessPattern && a.tensor >= 0 && prog_.tensors[static_cast<size_t>(a.tensor)].is_output())
      return DmaQueueKind::Output;
  for (const auto &a : inst.ins)
    if (a.kind == isa::ArgKind::AccessPattern && a.tensor >= 0 && prog_.tensors[static_cast<size_t>(a.tensor)].is_input())
      in = true;
  return in ? DmaQueueKind::Input : DmaQueueKind::Data;
}

// The issuing engine for naming a queue: without triggers (lowering) HWDGE is not refused here.
Engine Builder::dma_issuer_or_sp(const isa::Inst &inst) const {
  if (inst.f.dge_type == isa::DGEType::HWDGE && !arch_.hwdge)
    return inst.engine == Engine::Activation ? Engine::Activation : Engine::SP;
  return dma_issuer(inst);
}

} // namespace neuronsim::sim::schedule_detail
