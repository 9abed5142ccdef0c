// Scheduling: the walk over the program's nodes -- loops and run-time regions, branches between blocks, calls,
// DMA blocks fired by their triggers -- and the run-time values it reads (registers, loop expressions).
#include "sim/schedule_builder.hpp"

namespace neuronsim::sim::schedule_detail {

// `n` loop trips (at most max_insts_ over the whole run).
void Builder::count_trips(const isa::Node &n, int64_t trips) {
  if (trips <= max_insts_ - trips_) {
    trips_ += trips;
    return;
  }
  const char *what = n.kind == isa::Node::Kind::DoWhile ? "DoWhile" : n.kind == isa::Node::Kind::Loop ? "Loop"
                                                                                                       : "DynamicForLoop";
  throw SemanticError({prog_.file, -1, what, ""}, "the loops run more than " + std::to_string(max_insts_) +
                                                     " trips in all (--max-instructions): does a loop never end?");
}

// Walks nodes in order. At the top level, branches jump between the function's blocks as birsim's CFG driver
// does: after a block, control follows the successor a terminator named, else falls through.
void Builder::prefetch_ahead(const std::vector<isa::Node> &nodes, size_t i) const {
  const auto inst_at = [&](size_t k) -> const isa::Inst * {
    return k < nodes.size() && nodes[k].kind == isa::Node::Kind::Inst && nodes[k].inst >= 0
               ? &prog_.insts[static_cast<size_t>(nodes[k].inst)]
               : nullptr;
  };
  if (const isa::Inst *far = inst_at(i + 2)) __builtin_prefetch(far);
  if (const isa::Inst *near = inst_at(i + 1))
    for (const auto *args : {&near->ins, &near->outs})
      for (const isa::Arg &a : *args) {
        __builtin_prefetch(&a);
        __builtin_prefetch(reinterpret_cast<const char *>(&a) + 64);
      }
}

Builder::Flow Builder::walk(const std::vector<isa::Node> &nodes, bool top) {
  size_t i = 0;
  // Without run-time control flow the walk is deterministic: a backward branch taken a second time in the same
  // walk repeats forever (nothing it passes can change the path), so it is refused at once instead of filling
  // the schedule to its limit.
  std::vector<int> back_jumps;
  while (i < nodes.size()) {
    const isa::Node &n = nodes[i];
    if (n.kind == isa::Node::Kind::Call) {
      if (call(n) == Flow::Stop) return Flow::Stop;
      ++i;
      continue;
    }
    if (n.kind == isa::Node::Kind::DMABlock) {
      // A block a DMATrigger names runs when the trigger fires; one that no trigger names runs in place, as
      // birsim's DMABlock kernel visits its descriptors.
      if (!triggered_.count(n.name)) run_dma_block(n, -1);
      ++i;
      continue;
    }
    if (n.kind != isa::Node::Kind::Inst) {
      if (Flow f = region(n); f == Flow::Stop || f == Flow::Return) return f;
      ++i;
      continue;
    }
    const isa::Inst &inst = prog_.insts[static_cast<size_t>(n.inst)];
    prefetch_ahead(nodes, i);
    add(inst);
    size_t next = i + 1;
    switch (inst.type) {
    case InstructionType::Return:
      return Flow::Return;
    case InstructionType::Exit:
      return Flow::Stop;
    case InstructionType::Break:
      return top ? Flow::Return : Flow::Break;
    case InstructionType::DMATrigger:
      fire(inst);
      break;
    case InstructionType::SwitchQueueInstance:
    case InstructionType::ResetQueueInstance:
      rewind(inst);
      break;
    case InstructionType::UnconditionalBranch:
      next = jump(inst, inst.f.target, "target", next);
      if (!exec_ && next <= i) refuse_repeat(back_jumps, inst, inst.f.target, "target");
      break;
    case InstructionType::CompareAndBranch: {
      const bool taken = compare(inst);
      next = taken ? jump(inst, inst.f.on_true, "on_true", next) : jump(inst, inst.f.on_false, "on_false", next);
      if (!exec_ && next <= i)  // a branch on immediates (the core's shard id): as fixed as an unconditional one
        refuse_repeat(back_jumps, inst, taken ? inst.f.on_true : inst.f.on_false, taken ? "on_true" : "on_false");
      break;
    }
    default:
      break;
    }
    i = next;
  }
  return Flow::Next;
}

// A backward branch taken a second time in a walk without run-time control flow repeats forever: refused.
void Builder::refuse_repeat(std::vector<int> &back_jumps, const isa::Inst &inst, const std::string &block,
                            const char *field) {
  if (std::find(back_jumps.begin(), back_jumps.end(), inst.index) != back_jumps.end())
    throw SemanticError({prog_.file, inst.index, inst.name, field},
                        "branches back to block '" + block + "' forever: nothing between the block and the branch "
                        "can leave the loop (the program has no run-time branch)");
  back_jumps.push_back(inst.index);
}

// Loop, DynamicForLoop and DoWhile (reference neuronx-cc/bir/sim-control-sync-customop.md section 1): a Loop
// has constant bounds; a DynamicForLoop evaluates lb/stride from the affine environment and its upper bound
// from a register when it starts; a DoWhile runs its body, then repeats while its register is non-zero. A Break
// in the body leaves the region. The body's blocks are branch targets for the branches in it (birsim's CFG driver
// runs a loop's blocks in control-flow mode, section 2.5).
Builder::Flow Builder::region(const isa::Node &n) {
  const auto *saved = blocks_;
  blocks_ = &n.blocks;
  const Flow f = region_trips(n);
  blocks_ = saved;
  return f;
}

Builder::Flow Builder::region_trips(const isa::Node &n) {
  if (n.kind == isa::Node::Kind::DoWhile) {
    for (;;) {
      count_trips(n);
      if (Flow f = walk(n.body, false); f != Flow::Next) return f == Flow::Break ? Flow::Next : f;
      if (runtime(n.cond, "cond") == 0) return Flow::Next;
    }
  }
  int64_t lb = n.lb, ub = n.ub, stride = n.stride;
  const char *where = "LoopAxis.stride";
  if (n.kind == isa::Node::Kind::DynamicForLoop) {
    lb = runtime(n.lb_expr, "DynamicForLoopAxis.lb");
    ub = runtime(n.ub_expr, "DynamicForLoopAxis.ub");
    stride = runtime(n.stride_expr, "DynamicForLoopAxis.stride");
    where = "DynamicForLoopAxis.stride";
  }
  if (stride <= 0)
    throw SemanticError({prog_.file, -1, n.kind == isa::Node::Kind::Loop ? "Loop" : "DynamicForLoop", where},
                        "loop stride " + std::to_string(stride) + ": it must be positive");
  // The trip count in 128 bits and the variable computed from it: lb + t * stride never steps past ub, so it
  // cannot overflow even when ub is near 2^63.
  const __int128 trips = ub > lb ? ((__int128)ub - lb + stride - 1) / stride : 0;
  // An empty body cannot leave the loop early: its trips are counted at once (a loop of 2^62 empty trips is
  // refused without spinning through the first max_insts_ of them).
  if (n.body.empty() && trips > 0) {
    count_trips(n, static_cast<int64_t>(std::min<__int128>(trips, max_insts_ + 1)));
    lv_[static_cast<size_t>(n.var)] = static_cast<int64_t>(lb + (trips - 1) * stride);
    return Flow::Next;
  }
  for (__int128 t = 0; t < trips; ++t) {
    count_trips(n);
    lv_[static_cast<size_t>(n.var)] = static_cast<int64_t>(lb + t * stride);
    if (Flow f = walk(n.body, false); f != Flow::Next) return f == Flow::Break ? Flow::Next : f;
  }
  return Flow::Next;
}

// Call / NKIKernel (reference neuronx-cc/bir/sim-control-sync-customop.md 2.4, 6.2): the call instruction, then
// the callee's blocks (expanded when the program was read) under the callee's own CFG: its branches name its
// blocks, and its Return (or a Break at its top level) ends the call. Exit ends the run.
Builder::Flow Builder::call(const isa::Node &n) {
  add(prog_.insts[static_cast<size_t>(n.inst)]);
  const auto *saved = blocks_;
  blocks_ = &n.blocks;
  const Flow f = walk(n.body, true);
  blocks_ = saved;
  return f == Flow::Stop ? Flow::Stop : Flow::Next;
}

// The DMABlock nodes by name, and which of them a DMATrigger names.
void Builder::index_dma_blocks(const std::vector<isa::Node> &nodes) {
  for (const auto &n : nodes) {
    if (n.kind == isa::Node::Kind::DMABlock) dma_blocks_.emplace(n.name, &n);
    if (n.kind == isa::Node::Kind::Inst) {
      const isa::Inst &in = prog_.insts[static_cast<size_t>(n.inst)];
      if (in.type == InstructionType::DMATrigger)
        for (const auto &b : in.f.dma_blocks) triggered_.insert(b);
    }
    index_dma_blocks(n.body);
  }
}

// A DMABlock's descriptors, in order, on one DMA queue: the firing trigger's, else the block's own.
void Builder::run_dma_block(const isa::Node &n, int queue) {
  const isa::Inst &blk = prog_.insts[static_cast<size_t>(n.inst)];
  const int saved = forced_queue_;
  forced_queue_ = queue;
  add(blk);
  forced_queue_ = last_queue_;
  walk(n.body, false);
  forced_queue_ = saved;
}

// DMATrigger (reference sim-bn-rng-collective-dma.md, sim-control-sync-customop.md 5.2): a cursor over its
// block list; each execution fires block fireCount % n and advances the cursor. A program decoded from bundle
// streams has no DMABlock regions: the stream already holds the fired descriptors after the trigger, so there
// the trigger fires nothing.
void Builder::fire(const isa::Inst &trigger) {
  if (dma_blocks_.empty() || trigger.f.dma_blocks.empty()) return;
  int64_t &count = fire_count_[trigger.index];
  const std::string &name = trigger.f.dma_blocks[static_cast<size_t>(count % static_cast<int64_t>(trigger.f.dma_blocks.size()))];
  ++count;
  auto it = dma_blocks_.find(name);
  if (it == dma_blocks_.end())
    throw SemanticError({prog_.file, trigger.index, trigger.name, "dma_blocks"}, "no DMABlock named '" + name + "'");
  run_dma_block(*it->second, last_queue_);
}

// SwitchQueueInstance / ResetQueueInstance (reference sim-control-sync-customop.md 5.2): rewind the cursor of
// every trigger that owns the named block (`instance_name`), or, with no block named, of every trigger on the
// instruction's `queue` (every trigger when that is empty too). SwitchQueueInstance with no_rearm leaves the
// cursors; its semaphore group is cleared by the core when it completes (sim/core.cpp).
void Builder::rewind(const isa::Inst &inst) {
  if (inst.type == InstructionType::SwitchQueueInstance && inst.f.no_rearm) return;
  for (const auto &t : prog_.insts) {
    if (t.type != InstructionType::DMATrigger) continue;
    bool owns = false;
    if (!inst.f.instance_name.empty())
      owns = std::find(t.f.dma_blocks.begin(), t.f.dma_blocks.end(), inst.f.instance_name) != t.f.dma_blocks.end();
    else
      owns = inst.f.queue.empty() || t.f.queue == inst.f.queue;
    if (owns) fire_count_.erase(t.index);
  }
}

// An expression that may read registers (the instructions before it have executed: see exec_).
int64_t Builder::runtime(const isa::Expr &e, const char *field) {
  using K = isa::Expr::Kind;
  switch (e.kind) {
  case K::Register: {
    if (!exec_)
      throw SemanticError({prog_.file, -1, "", field}, "a run-time bound needs the data: schedule with "
                                                       "build_schedule_executing");
    for (const auto &st : states_)
      for (const auto &r : st.regs)
        if (r.first == e.regref) return r.second;
    throw SimulationError({prog_.file, -1, "", field}, "register '" + e.regref + "' is read before it is written");
  }
  case K::Affine: {
    int64_t v = e.c;
    for (size_t k = 0; k < e.kids.size(); ++k) v = checked_add(v, checked_mul(e.coeffs[k], runtime(e.kids[k], field), field), field);
    return v;
  }
  case K::Sum: {
    int64_t v = e.c;
    for (const auto &k : e.kids) v = checked_add(v, runtime(k, field), field);
    return v;
  }
  case K::Mult: return checked_mul(e.k, runtime(e.kids.at(0), field), field);
  case K::FloorDiv:
  case K::Mod: {
    isa::Expr c = e;
    c.kids[0] = isa::Expr::constant(runtime(e.kids.at(0), field));
    return eval_in(c, field);
  }
  default: return eval_in(e, field);
  }
}

int64_t Builder::checked_add(int64_t a, int64_t b, const char *field) const {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw SemanticError({prog_.file, -1, "", field}, "run-time bound overflows 64 bits");
  return r;
}

int64_t Builder::checked_mul(int64_t a, int64_t b, const char *field) const {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw SemanticError({prog_.file, -1, "", field}, "run-time bound overflows 64 bits");
  return r;
}

int64_t Builder::eval_in(const isa::Expr &e, const char *field) const {
  try {
    return e.eval(lv_.data(), mem_.shard());
  } catch (const Error &x) {
    throw SemanticError({prog_.file, -1, "", field}, x.message());
  }
}

// Where block `name` starts in the node list being walked: the function's top-level blocks, a callee's, or the
// enclosing region's (a branch names a block of its own CFG). An empty name falls through.
size_t Builder::jump(const isa::Inst &inst, const std::string &name, const char *field, size_t fallthrough) {
  ErrorContext ctx{prog_.file, inst.index, inst.name, field};
  if (name.empty()) return fallthrough;
  if (blocks_) {
    for (const auto &b : *blocks_)
      if (b.first == name) return b.second;
    throw SemanticError(ctx, "no basic block named '" + name + "' in the enclosing region or callee (a branch "
                             "stays within its own blocks)");
  }
  for (const auto &b : prog_.blocks)
    if (b.name == name) return b.first;
  throw SemanticError(ctx, "no basic block named '" + name + "'");
}

// The scalar a branch compares: a register (read from the executing engines' registers) or an immediate.
int64_t Builder::scalar(const isa::Inst &inst, size_t k) {
  ErrorContext ctx{prog_.file, inst.index, inst.name, "ins[" + std::to_string(k) + "]"};
  if (k >= inst.ins.size()) throw SemanticError(ctx, "CompareAndBranch needs two operands");
  const isa::Arg &a = inst.ins[k];
  if (a.kind == isa::ArgKind::Immediate) return static_cast<int64_t>(a.immediate(lv_.data(), mem_.shard()));
  if (a.kind == isa::ArgKind::Register) {
    for (const auto &st : states_)
      for (const auto &r : st.regs)
        if (r.first == a.reg) return r.second;
    throw SimulationError(ctx, "register '" + a.reg + "' is compared before any instruction wrote it");
  }
  throw SemanticError(ctx, "CompareAndBranch compares registers or immediates, got " + a.json_kind);
}

// reference neuronx-cc/bir/sim-control-sync-customop.md 2.1/2.2: taken = comp_op(lhs, rhs); the IMM/REG suffix
// says where the right-hand side comes from.
bool Builder::compare(const isa::Inst &inst) {
  if (!exec_ && !compares_immediates(inst))
    throw SemanticError({prog_.file, inst.index, inst.name, "comp_op"}, "CompareAndBranch needs the data: "
                                                                        "schedule with build_schedule_executing");
  const int64_t lhs = scalar(inst, 0), rhs = scalar(inst, 1);
  using Op = isa::BranchCompareOp;
  switch (inst.f.comp_op) {
  case Op::IS_LTIMM: case Op::IS_LTREG: return lhs < rhs;
  case Op::IS_LEIMM: case Op::IS_LEREG: return lhs <= rhs;
  case Op::IS_EQIMM: case Op::IS_EQREG: return lhs == rhs;
  case Op::IS_NEIMM: case Op::IS_NEREG: return lhs != rhs;
  case Op::IS_GEIMM: case Op::IS_GEREG: return lhs >= rhs;
  case Op::IS_GTIMM: case Op::IS_GTREG: return lhs > rhs;
  default: break;
  }
  throw SemanticError({prog_.file, inst.index, inst.name, "comp_op"},
                      std::string("unsupported comparison ") + isa::enum_name(inst.f.comp_op));
}

} // namespace neuronsim::sim::schedule_detail
