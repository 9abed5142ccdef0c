// Engine assignment and dependency inference: program order in, per-queue streams with semaphore waits out.
// The builder's class is in schedule_builder.hpp; its walk is in schedule_control.cpp, its queue choice in
// schedule_queues.cpp; here: the build, one instruction's schedule entry and its dependencies.
#include <functional>

#include "sim/schedule_builder.hpp"
#include "sim/sanitizer.hpp"

namespace neuronsim::sim {

using engines::Access;
using engines::Footprint;
using isa::Engine;
using isa::InstructionType;

const char *queue_name(int q) {
  static const char *names[kMaxQueues] = {"PE",   "ACT",  "POOL", "DVE",   "SP",    "DMA0",  "DMA1",
                                          "DMA2", "DMA3", "DMA4", "DMA5",  "DMA6",  "DMA7",  "DMA8",
                                          "DMA9", "DMA10", "DMA11", "DMA12", "DMA13", "DMA14", "DMA15"};
  return (q >= 0 && q < kMaxQueues) ? names[q] : "?";
}

const char *wait_reason_name(WaitReason r) {
  static const char *names[kNumWaitReasons] = {"dependency", "semaphore", "shared_port",
                                               "psum_bank",  "dma_ring",  "dma_engine"};
  const int i = static_cast<int>(r);
  return i >= 0 && i < kNumWaitReasons ? names[i] : "?";
}

Engine queue_engine(int q) {
  static const Engine e[kNumEngines] = {Engine::PE, Engine::Activation, Engine::Pool, Engine::DVE, Engine::SP};
  return q < kNumEngines ? e[q] : Engine::DMA;
}

namespace schedule_detail {

// Without run-time control flow the dynamic count is known before the walk: checked against --max-instructions.
int64_t Builder::checked_count() const {
  const int64_t count = prog_.dynamic_count();
  if (count > max_insts_)
    throw SemanticError({prog_.file, -1, "", "LoopAxis"},
                        "the loops unroll to " + std::to_string(count) + " dynamic instructions, more than the " +
                            std::to_string(max_insts_) + " one run may execute (--max-instructions)");
  return count;
}

Schedule Builder::build() {
  for (const auto &i : prog_.insts) s_.explicit_sync |= !i.waits.empty() || !i.updates.empty();
  // Without run-time control flow the schedule's size is known too: checked, then the schedule is sized once.
  if (!exec_) {
    const int64_t count = checked_count();
    // A DMA of a program without its own semaphores is two entries (trigger and transfer, docs/timing-model.md).
    const int64_t entries = count + (triggers_ ? dma_count(prog_.body) : 0);
    const __int128 bytes = static_cast<__int128>(entries) * static_cast<__int128>(sizeof(ScheduledInst)) +
                           operand_bytes(prog_.body);
    if (bytes > kMaxScheduleBytes)
      throw SemanticError({prog_.file, -1, "", "LoopAxis"},
                          "the schedule of " + std::to_string(count) + " dynamic instructions would need about " +
                              std::to_string(static_cast<int64_t>(bytes >> 20)) + " MiB, more than the " +
                              std::to_string(kMaxScheduleBytes >> 20) + " MiB one run may use");
    s_.insts.reserve(static_cast<size_t>(entries));
  }
  index_dma_blocks(prog_.body);
  walk(prog_.body, true);
  return std::move(s_);
}

void Builder::stream() {
  for (const auto &i : prog_.insts) s_.explicit_sync |= !i.waits.empty() || !i.updates.empty();
  if (!exec_) checked_count();
  index_dma_blocks(prog_.body);
  walk(prog_.body, true);
}

void Builder::emit(ScheduledInst &&si) {
  ++entries_;
  ++queue_len_[static_cast<size_t>(si.queue)];
  last_queue_ = si.queue;
  if (sink_) return sink_->take(std::move(si));
  s_.queues[static_cast<size_t>(si.queue)].push_back(si.d.seq);
  s_.insts.push_back(std::move(si));
}

// How many dynamic DMA instructions the nodes run (each gets a trigger entry too), counted as
// isa::Program::dynamic_count counts instructions.
int64_t Builder::dma_count(const std::vector<isa::Node> &nodes) const {
  int64_t n = 0;
  for (const auto &node : nodes) {
    if (node.kind == isa::Node::Kind::Inst) {
      const isa::Inst &in = prog_.insts[static_cast<size_t>(node.inst)];
      n += is_dma(in.type) || in.engine == Engine::DMA;
    } else if (node.kind == isa::Node::Kind::Loop) {
      // Bounds are checked by dynamic_count before this runs; 128 bits keep extreme ones from overflowing.
      __int128 trips = 0;
      const __int128 lb = node.lb, ub = node.ub, stride = node.stride;
      if (stride > 0 && ub > lb) trips = (ub - lb + stride - 1) / stride;
      if (stride < 0 && ub < lb) trips = (lb - ub - stride - 1) / -stride;
      const __int128 body = dma_count(node.body);
      n = static_cast<int64_t>(std::min<__int128>(max_insts_ + 1, n + trips * body));
    } else {
      n += dma_count(node.body);
    }
    if (n > max_insts_) return max_insts_;
  }
  return n;
}

// The schedule memory of one dynamic instance's operands (resolved accesses, immediates) plus its share of
// the queue index (schedule memory estimate, kMaxScheduleBytes).
int64_t Builder::inst_operand_bytes(const isa::Inst &inst) {
  return static_cast<int64_t>((inst.ins.size() + inst.outs.size()) * sizeof(Access) +
                              inst.ins.size() * sizeof(double) + 2 * sizeof(int64_t));
}

// The same summed over the dynamic instances of `nodes` (loops multiply, saturating; run-time regions count
// once, as Program::dynamic_count does).
__int128 Builder::operand_bytes(const std::vector<isa::Node> &nodes) const {
  constexpr __int128 kCap = static_cast<__int128>(1) << 100;
  __int128 n = 0;
  for (const auto &node : nodes) {
    if (node.kind == isa::Node::Kind::Inst || node.kind == isa::Node::Kind::Call ||
        node.kind == isa::Node::Kind::DMABlock)
      if (node.inst >= 0) n += inst_operand_bytes(prog_.insts[static_cast<size_t>(node.inst)]);
    __int128 body = operand_bytes(node.body);
    if (node.kind == isa::Node::Kind::Loop) {
      __int128 trips = 0;
      if (node.stride > 0 && node.ub > node.lb)
        trips = ((__int128)node.ub - node.lb + node.stride - 1) / node.stride;
      body = trips > 0 && body > kCap / trips ? kCap : body * trips;
    }
    n = std::min(kCap, n + body);
  }
  return n;
}

Builder::OperandMemo *Builder::memos_of(const isa::Inst &inst) {
  if (!memo_on_) return nullptr;
  if (memo_base_.empty()) {  // made on first use: a builder that only counts (queue_totals) never needs it
    memo_base_.reserve(prog_.insts.size() + 1);
    size_t n = 0;
    for (const auto &in : prog_.insts) {
      memo_base_.push_back(n);
      n += in.ins.size() + in.outs.size();
    }
    memo_base_.push_back(n);
    memo_.resize(n);
  }
  const isa::Inst *first = prog_.insts.data();
  if (&inst < first || &inst >= first + prog_.insts.size()) return nullptr;
  return memo_.data() + memo_base_[static_cast<size_t>(&inst - first)];
}

bool Builder::dma_type_of(const isa::Inst &inst) {
  const isa::Inst *first = prog_.insts.data();
  if (&inst < first || &inst >= first + prog_.insts.size()) return is_dma(inst.type);
  if (dma_type_.empty()) {
    dma_type_.reserve(prog_.insts.size());
    for (const auto &in : prog_.insts) dma_type_.push_back(is_dma(in.type));
  }
  return dma_type_[static_cast<size_t>(&inst - first)] != 0;
}

void Builder::operand(const isa::Inst &inst, const char *kind, size_t i, const isa::Arg &arg, OperandMemo *memo,
                      std::pmr::vector<Access> &out, std::vector<Footprint> &fps,
                      std::vector<Tracker::Hint *> &hints) {
  if (arg.kind != isa::ArgKind::AccessPattern) {
    out.emplace_back();
    return;
  }
  std::string regs;  // a start read from registers: "r = 5, ..." (their values, for a bounds error)
  const int64_t start = exec_ && arg.start.reads_register()
                            ? run_time_start(inst, kind, i, arg.start, regs)
                            : evaluate(inst, kind, i, [&] { return arg.start.eval(lv_.data(), mem_.shard()); });
  if (memo && memo->ready && memo->start == start) {
    out.push_back(memo->acc);
    if (memo->acc.tensor >= 0) fps.push_back(memo->fp), hints.push_back(&memo->hint);
    ++memo_hits_;
    return;
  }
  Access a;
  a.tensor = arg.tensor;
  a.dtype = arg.dtype;
  a.start = start;
  a.ap = evaluate(inst, kind, i, [&] { return engines::Dims(arg.ap); });
  Footprint fp;
  if (a.tensor >= 0 && !regs.empty()) {
    // Out of bounds at a start the registers gave: a fault of this run, not of the program's form.
    try {
      fp = check(a, inst, kind, i);
    } catch (const Error &e) {
      throw SimulationError(e.context(), e.message() + " (the start, element " + std::to_string(start) +
                                             ", reads registers at run time: " + regs + ")");
    }
  } else if (a.tensor >= 0) {
    fp = check(a, inst, kind, i);
  }
  if (memo) *memo = OperandMemo{true, start, a, fp, {}};
  if (a.tensor >= 0) fps.push_back(fp), hints.push_back(memo ? &memo->hint : nullptr);
  out.push_back(std::move(a));
}

// A start that reads registers (BIR IntRuntimeValueKind leaves; NKI's .ap(scalar_offset=...)): each register as the
// engine that executes the instruction holds it -- every instruction before it in program order has executed
// (exec_). Each engine sequencer has registers of its own (public NKI docs, nki.isa.register_alloc); a DMA reads
// those of the engine that issues it.
int64_t Builder::run_time_start(const isa::Inst &inst, const char *kind, size_t i, const isa::Expr &start,
                                std::string &shown) {
  const bool dma = dma_type_of(inst) || inst.engine == Engine::DMA;
  const Engine e = dma ? dma_issuer_or_sp(inst)
                       : inst.engine == Engine::Unassigned ? engines::default_engine(inst.type) : inst.engine;
  const auto &regs = states_[static_cast<size_t>(engine_queue(e))].regs;
  std::function<isa::Expr(const isa::Expr &)> subst = [&](const isa::Expr &x) {
    if (x.kind == isa::Expr::Kind::Register) {
      for (const auto &r : regs)
        if (r.first == x.regref) {
          shown += (shown.empty() ? "" : ", ") + x.regref + " = " + std::to_string(r.second);
          return isa::Expr::constant(r.second);
        }
      throw SimulationError({prog_.file, inst.index, inst.name, std::string(kind) + "[" + std::to_string(i) + "]"},
                            "register '" + x.regref + "' is read by an access on " + isa::enum_name(e) +
                                " before any instruction on " + isa::enum_name(e) + " wrote it (each engine has "
                                "registers of its own)");
    }
    isa::Expr y = x;
    for (auto &k : y.kids) k = subst(k);
    return y;
  };
  const isa::Expr resolved = subst(start);
  return evaluate(inst, kind, i, [&] { return resolved.eval(lv_.data(), mem_.shard()); });
}

bool Builder::sems_checked(const isa::Inst &inst) {
  const isa::Inst *first = prog_.insts.data();
  if (&inst < first || &inst >= first + prog_.insts.size()) return false;
  if (sems_checked_.empty()) sems_checked_.resize(prog_.insts.size(), 0);
  return sems_checked_[static_cast<size_t>(&inst - first)] != 0;
}

void Builder::check_sems(const isa::Inst &inst) {
  for (const auto &w : inst.waits)
    if (w.sem < 0 || w.sem >= kNumSemaphores)
      throw SemanticError({prog_.file, inst.index, inst.name, "waits"},
                          "semaphore " + std::to_string(w.sem) + " out of range [0, 256)");
  for (const auto &u : inst.updates)
    if (u.sem < 0 || u.sem >= kNumSemaphores)
      throw SemanticError({prog_.file, inst.index, inst.name, "updates"},
                          "semaphore " + std::to_string(u.sem) + " out of range [0, 256)");
  for (size_t k = 0; k < inst.f.sema_group.size(); ++k)
    if (inst.f.sema_group[k] < 0 || inst.f.sema_group[k] >= kNumSemaphores)
      throw SemanticError({prog_.file, inst.index, inst.name, "sema_group[" + std::to_string(k) + "]"},
                          "semaphore " + std::to_string(inst.f.sema_group[k]) + " out of range [0, 256)");
  const isa::Inst *first = prog_.insts.data();
  if (&inst >= first && &inst < first + prog_.insts.size()) sems_checked_[static_cast<size_t>(&inst - first)] = 1;
}

void Builder::add(const isa::Inst &inst) {
  reserve_for(inst);
  const int64_t idx = entries_;
  std::pmr::memory_resource *const res = sink_ ? nullptr : s_.arena.get();
  ScheduledInst si = sink_ ? sink_->blank() : ScheduledInst(res);
  si.d.inst = &inst;
  si.d.seq = idx;
  if (sanitizer_) si.nki_ctx = sanitizer_->context(inst, lv_.data(), mem_.shard());
  if (!sems_checked(inst)) check_sems(inst);
  // Each access is validated once; its footprint (which validates the same way) is kept for the tracker.
  si.d.imm.reserve(inst.ins.size());
  si.d.ins.reserve(inst.ins.size());
  si.d.outs.reserve(inst.outs.size());
  in_fp_.clear();
  out_fp_.clear();
  in_hint_.clear();
  out_hint_.clear();
  OperandMemo *const memos = memos_of(inst);
  const size_t n_ins = inst.ins.size(), n_outs = inst.outs.size();
  for (size_t i = 0; i < n_ins; ++i) {
    si.d.imm.push_back(evaluate(inst, "ins", i, [&] { return inst.ins[i].immediate(lv_.data(), mem_.shard()); }));
    operand(inst, "ins", i, inst.ins[i], memos ? memos + i : nullptr, si.d.ins, in_fp_, in_hint_);
  }
  for (size_t i = 0; i < n_outs; ++i)
    operand(inst, "outs", i, inst.outs[i], memos ? memos + n_ins + i : nullptr, si.d.outs, out_fp_, out_hint_);
  if (inst.type == InstructionType::Matmult || inst.type == InstructionType::MatmultSparse ||
      inst.type == InstructionType::MatmultMx)
    check_pe_limits(si.d, inst);
  if (inst.type == InstructionType::IndirectCopy)
    check_index_count(si.d, inst);
  const bool dma_type = dma_type_of(inst);
  // A DMA instruction of a program without its own semaphores is a trigger on its issuing engine, then the
  // transfer on its DMA queue (docs/timing-model.md 2.4). DMABlock descriptors are fired by their DMATrigger.
  const bool dma = dma_type || inst.engine == Engine::DMA;
  int trig_queue = -1;
  if (dma && triggers_) {
    const Engine issuer = dma_issuer(inst);  // refuses HWDGE where it does not exist
    if (!s_.explicit_sync && forced_queue_ < 0) trig_queue = engine_queue(issuer);
  }
  const int64_t x_idx = idx + (trig_queue >= 0 ? 1 : 0);  // the transfer's (or the instruction's) entry
  si.d.seq = x_idx;
  si.queue = pick_queue(inst, dma_type);
  si.pos = queue_len_[static_cast<size_t>(si.queue)];
  const int wait_queue = trig_queue >= 0 ? trig_queue : si.queue;  // who carries the dependencies
  uint8_t &touches = s_.touches[static_cast<size_t>(si.queue)];
  for (const auto &fp : in_fp_)
    touches |= fp.space == Footprint::Space::Sbuf ? Schedule::kTouchesSbuf
               : fp.space == Footprint::Space::Psum ? Schedule::kTouchesPsum : 0;
  for (const auto &fp : out_fp_)
    touches |= fp.space == Footprint::Space::Sbuf ? Schedule::kTouchesSbuf
               : fp.space == Footprint::Space::Psum ? Schedule::kTouchesPsum | Schedule::kWritesPsum : 0;

  // Reads give true (RAW) dependencies; writes give WAR/WAW ones. On its own in-order queue an instruction
  // only waits for the completion of a producer it reads from: WAW/WAR there are already ordered by the queue
  // (so PE matmuls accumulating into one PSUM tile stream back to back, as the array does). A DMA transfer is
  // ordered after its trigger's engine and within its DMA queue (in order on every DMA engine).
  std::vector<Ref> &raw = raw_, &other = other_;
  raw.clear();
  other.clear();
  const Ref self{x_idx, si.queue, si.pos};
  if (!s_.explicit_sync) {
    for (size_t k = 0; k < in_fp_.size(); ++k) tracker_.access(in_fp_[k], false, self, raw, in_hint_[k]);
    for (size_t k = 0; k < out_fp_.size(); ++k) tracker_.access(out_fp_[k], true, self, other, out_hint_[k]);
  }

  // One semaphore wait per producer queue: the latest producer position on it. Only the queues in `waited` have
  // a value (clearing and scanning all kMaxQueues per entry was a tenth of the walk).
  static_assert(kMaxQueues <= 32, "waited is a 32-bit set of queues");
  std::array<int64_t, kMaxQueues> need;
  uint32_t waited = 0;
  auto wait_for = [&need, &waited](int q, int64_t count) {
    if (count <= 0) return;
    const uint32_t bit = uint32_t{1} << q;
    need[static_cast<size_t>(q)] = waited & bit ? std::max(need[static_cast<size_t>(q)], count) : count;
    waited |= bit;
  };
  if (!s_.explicit_sync) {
    // AllEngineBarrier / Drain (reference neuronx-cc/arch/execution-sync-model.md: the all-engine barrier fans
    // in every engine; Drain waits for outstanding work): the barrier waits for everything issued before it, and
    // the first instruction of every queue after it waits for the barrier.
    if (inst.type == InstructionType::AllEngineBarrier || inst.type == InstructionType::Drain) {
      for (int q = 0; q < kMaxQueues; ++q) wait_for(q, queue_len_[static_cast<size_t>(q)]);
    } else if (barrier_.seq >= 0 && !after_barrier_[wait_queue]) {
      raw.push_back(barrier_);
    }
    after_barrier_[wait_queue] = true;
    after_barrier_[si.queue] = true;
  }
  std::vector<int64_t> &dep_seq = dep_seq_;  // sorted and deduplicated here, then copied at its final size
  dep_seq.clear();
  for (const auto *deps : {&raw, &other})
    for (const Ref &p : *deps) {
      if (deps == &other && (p.queue == si.queue || p.queue == wait_queue)) continue;
      wait_for(static_cast<int>(p.queue), p.pos + 1);
      if (p.queue != wait_queue && flow_arrows_) dep_seq.push_back(p.seq);
    }
  std::sort(dep_seq.begin(), dep_seq.end());
  dep_seq.erase(std::unique(dep_seq.begin(), dep_seq.end()), dep_seq.end());
  const size_t n_waits = static_cast<size_t>(__builtin_popcount(waited));
  auto push_waits = [&need, waited](std::pmr::vector<QueueWait> &waits) {  // ascending queue
    for (uint32_t m = waited; m != 0; m &= m - 1) {
      const int q = __builtin_ctz(m);
      QueueWait &w = waits.emplace_back();  // in place: a temporary copied in stalled on its store (perf)
      w.queue = q;
      w.count = need[static_cast<size_t>(q)];
    }
  };
  if (trig_queue >= 0) {
    ScheduledInst t = sink_ ? sink_->blank() : ScheduledInst(res);
    t.d.inst = &inst;
    t.d.seq = idx;
    t.trigger = true;
    t.queue = trig_queue;
    t.pos = queue_len_[static_cast<size_t>(trig_queue)];
    t.dep_seq.assign(dep_seq.begin(), dep_seq.end());
    t.waits.reserve(n_waits);
    push_waits(t.waits);
    si.waits.push_back(QueueWait{trig_queue, t.pos + 1});
    if (flow_arrows_) si.dep_seq.push_back(idx);
    ++s_.triggers;
    emit(std::move(t));
    reserve_entry(inst);  // the transfer's entry, pushed below
  } else {
    si.dep_seq.assign(dep_seq.begin(), dep_seq.end());
    si.waits.reserve(n_waits);
    push_waits(si.waits);
  }

  if (exec_) {
    // Program order is a valid execution order: every dependency points backwards.
    exec_->set_context(ErrorContext{prog_.file, inst.index, inst.name, ""});
    engines::execute(si.d, *exec_, states_[static_cast<size_t>(si.queue)]);
  }
  if (!s_.explicit_sync && (inst.type == InstructionType::AllEngineBarrier || inst.type == InstructionType::Drain)) {
    barrier_ = self;
    after_barrier_.fill(false);
  }
  emit(std::move(si));
}

} // namespace schedule_detail

using schedule_detail::Builder;


Schedule build_schedule(const isa::Program &program, const engines::Memory &mem, const engines::ArchParams &arch,
                        bool dma_triggers, int64_t max_instructions, Sanitizer *sanitizer) {
  Builder b(program, mem, arch, dma_triggers, max_instructions);
  b.with_sanitizer(sanitizer);
  return b.build();
}

Schedule build_schedule_executing(const isa::Program &program, engines::Memory &mem, const engines::ArchParams &arch,
                                  bool dma_triggers, int64_t max_instructions, Sanitizer *sanitizer) {
  Builder b(program, mem, arch, dma_triggers, max_instructions, &mem);
  b.with_sanitizer(sanitizer);
  return b.build();
}

std::string default_dma_queue_name(Engine issuer, isa::DGEType dge, DmaQueueKind kind) {
  const char *engine = "Sync";
  switch (issuer) {
  case Engine::PE: engine = "Tensor"; break;
  case Engine::Activation: engine = "Scalar"; break;
  case Engine::Pool: engine = "GpSimd"; break;
  case Engine::DVE: engine = "Vector"; break;
  case Engine::SP:
  case Engine::Unassigned:
  case Engine::DMA:
  case Engine::ALL: engine = "Sync"; break;
  }
  switch (dge) {
  case isa::DGEType::HWDGE: return std::string("q") + engine + "DynamicHW";
  case isa::DGEType::SWDGE: return std::string("q") + engine + "Dynamic";
  case isa::DGEType::None: break;
  }
  switch (kind) {
  case DmaQueueKind::Input: return std::string("q") + engine + "IO0";
  case DmaQueueKind::Output: return std::string("q") + engine + "IO1";
  case DmaQueueKind::Data: break;
  }
  return std::string("q") + engine + "Data0";
}

namespace {
bool has_runtime_region(const std::vector<isa::Node> &nodes) {
  for (const auto &n : nodes)
    if (n.kind == isa::Node::Kind::DynamicForLoop || n.kind == isa::Node::Kind::DoWhile ||
        (n.kind != isa::Node::Kind::Inst && has_runtime_region(n.body)))
      return true;
  return false;
}
} // namespace

bool compares_immediates(const isa::Inst &inst) {
  return inst.ins.size() == 2 && inst.ins[0].kind == isa::ArgKind::Immediate &&
         inst.ins[1].kind == isa::ArgKind::Immediate;
}

bool has_data_dependent_control(const isa::Program &program) {
  for (const auto &i : program.insts) {
    if (i.type == InstructionType::CompareAndBranch && !compares_immediates(i)) return true;
    // An access whose start reads a register: where it goes is known only when it runs.
    for (const auto *args : {&i.ins, &i.outs})
      for (const auto &a : *args)
        if (a.kind == isa::ArgKind::AccessPattern && a.start.reads_register()) return true;
  }
  return has_runtime_region(program.body);
}

} // namespace neuronsim::sim
