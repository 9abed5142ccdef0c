// Engine assignment and dependency inference: program order in, per-queue streams with semaphore waits out.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "neuronsim/sim/simulator.hpp"

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

namespace {

// Instructions that move data through the DMA rings rather than an engine's datapath: the "dma" and
// "memory/dma" families and the indirect DMA family of the InstructionType table (instruction_types.def;
// reference neuronx-cc/bir/instruction-type.md: the SRDMA mask {19, 22, 32, 68-72} plus the indirect loads/saves).
bool is_dma(InstructionType t) {
  const std::string_view f = isa::inst_type_family(t);
  return f == "dma" || f == "memory/dma" || f == "indirect";
}

int engine_queue(Engine e) {
  switch (e) {
  case Engine::PE: return 0;
  case Engine::Activation: return 1;
  case Engine::Pool: return 2;
  case Engine::DVE: return 3;
  default: return 4;
  }
}

// Live footprints per memory space; a write that covers a record makes it redundant (any later access that
// overlaps the old record overlaps the covering write, which already depends on it).
// Records are grouped by their exact footprint box, found through a hash map, and the groups that hold a write
// are kept apart from the read-only ones: a read only tests boxes with writers, a write tests every box once.
// (One flat list made scheduling quadratic: an input tile that is only ever read collects a record per reader,
// and every access scanned them all.) The dependencies found are the same set as a scan of every record.
class Tracker {
public:
  void access(const Footprint &fp, bool write, int64_t inst, std::vector<int64_t> &deps) {
    Space &sp = space(fp);
    scan(sp, kWritten, fp, write, inst, deps);
    if (write) scan(sp, kReadOnly, fp, write, inst, deps);
    const Key k = key(fp);
    auto it = sp.where.find(k);
    if (it == sp.where.end()) {
      const int l = write ? kWritten : kReadOnly;
      sp.list[l].push_back(Group{fp, {}, {}});
      it = sp.where.emplace(k, Loc{l, sp.list[l].size() - 1}).first;
    } else if (write && it->second.l == kReadOnly) {
      Group g = std::move(sp.list[kReadOnly][it->second.i]);
      unlink(sp, kReadOnly, it->second.i);
      sp.list[kWritten].push_back(std::move(g));
      it->second = Loc{kWritten, sp.list[kWritten].size() - 1};
    }
    Group &g = sp.list[it->second.l][it->second.i];
    (write ? g.writes : g.reads).push_back(inst);
  }

private:
  static constexpr int kReadOnly = 0, kWritten = 1;
  struct Group {
    Footprint fp;
    std::vector<int64_t> reads, writes;  // indices into Schedule::insts, ascending
  };
  using Key = std::array<int64_t, 4>;
  struct KeyHash {
    size_t operator()(const Key &k) const {
      uint64_t h = 1469598103934665603ull;
      for (int64_t v : k) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  struct Loc {
    int l;     // kReadOnly or kWritten
    size_t i;  // position in Space::list[l]
  };
  struct Space {
    std::array<std::vector<Group>, 2> list;
    std::unordered_map<Key, Loc, KeyHash> where;
  };

  static Key key(const Footprint &fp) { return {fp.p0, fp.p1, fp.b0, fp.b1}; }
  static bool covers(const Footprint &a, const Footprint &b) {
    return a.p0 <= b.p0 && b.p1 <= a.p1 && a.b0 <= b.b0 && b.b1 <= a.b1;
  }

  // Takes group i out of list l (the last group moves into its slot); its map entry is left to the caller.
  static void unlink(Space &sp, int l, size_t i) {
    auto &groups = sp.list[l];
    if (i + 1 != groups.size()) {
      groups[i] = std::move(groups.back());
      sp.where[key(groups[i].fp)].i = i;
    }
    groups.pop_back();
  }

  static void scan(Space &sp, int l, const Footprint &fp, bool write, int64_t inst, std::vector<int64_t> &deps) {
    auto &groups = sp.list[l];
    for (size_t g = 0; g < groups.size();) {
      Group &gr = groups[g];
      if (gr.fp.overlaps(fp)) {
        for (int64_t r : gr.writes)
          if (r != inst) deps.push_back(r);
        if (write) {
          for (int64_t r : gr.reads)
            if (r != inst) deps.push_back(r);
          if (covers(fp, gr.fp)) {
            // Records are appended in instruction order: this instruction's own ones are at the back and stay.
            auto drop = [inst](std::vector<int64_t> &v) {
              size_t k = v.size();
              while (k > 0 && v[k - 1] == inst) --k;
              v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k));
            };
            drop(gr.reads);
            drop(gr.writes);
            // An emptied group goes, unless this access is about to refill it (the same tile written again:
            // keeping it saves freeing and reallocating its lists).
            if (gr.reads.empty() && gr.writes.empty() && key(gr.fp) != key(fp)) {
              sp.where.erase(key(gr.fp));
              unlink(sp, l, g);
              continue;  // the group moved into slot g has not been looked at yet
            }
          }
        }
      }
      ++g;
    }
  }

  Space &space(const Footprint &fp) {
    if (fp.space == Footprint::Space::Sbuf) return sbuf_;
    if (fp.space == Footprint::Space::Psum) return psum_;
    return dram_[fp.dram_tensor];
  }
  Space sbuf_, psum_;
  std::unordered_map<int, Space> dram_;
};

class Builder {
public:
  Builder(const isa::Program &p, const engines::Memory &m, const engines::ArchParams &a, bool dma_triggers,
          engines::Memory *exec = nullptr)
      : prog_(p), mem_(m), arch_(a), lv_(p.loop_vars.size(), 0), triggers_(dma_triggers), exec_(exec) {
    s_.dma_queues = std::clamp(a.dma_queues, 1, kMaxDmaQueues);
  }

  Schedule build() {
    for (const auto &i : prog_.insts) s_.explicit_sync |= !i.waits.empty() || !i.updates.empty();
    // Without run-time control flow the dynamic count and the schedule's size are known: both are checked, then
    // the schedule is sized once.
    if (!exec_) {
      const int64_t count = prog_.dynamic_count();
      if (count > kMaxDynamicInstructions)
        throw SemanticError({prog_.file, -1, "", "LoopAxis"},
                            "the loops unroll to " + std::to_string(count) + " dynamic instructions, more than the " +
                                std::to_string(kMaxDynamicInstructions) + " one run can hold");
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

private:
  // How many dynamic DMA instructions the nodes run (each gets a trigger entry too), counted as
  // isa::Program::dynamic_count counts instructions.
  int64_t dma_count(const std::vector<isa::Node> &nodes) const {
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
        n = static_cast<int64_t>(std::min<__int128>(kMaxDynamicInstructions + 1, n + trips * body));
      } else {
        n += dma_count(node.body);
      }
      if (n > kMaxDynamicInstructions) return kMaxDynamicInstructions;
    }
    return n;
  }

  // How a walk over a node list ended (reference neuronx-cc/bir/sim-control-sync-customop.md: a terminator names
  // the successor block; Break exits the enclosing region; Return/Exit end the run).
  enum class Flow { Next, Break, Return, Stop };

  // The schedule memory of one dynamic instance's operands (resolved accesses, immediates) plus its share of
  // the queue index (schedule memory estimate, kMaxScheduleBytes).
  static int64_t inst_operand_bytes(const isa::Inst &inst) {
    return static_cast<int64_t>((inst.ins.size() + inst.outs.size()) * sizeof(Access) +
                                inst.ins.size() * sizeof(double) + 2 * sizeof(int64_t));
  }
  // The same summed over the dynamic instances of `nodes` (loops multiply, saturating; run-time regions count
  // once, as Program::dynamic_count does).
  __int128 operand_bytes(const std::vector<isa::Node> &nodes) const {
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

  // One loop trip (kMaxLoopTrips over the whole run).
  void count_trip(const isa::Node &n) {
    if (++trips_ <= kMaxLoopTrips) return;
    const char *what = n.kind == isa::Node::Kind::DoWhile ? "DoWhile" : n.kind == isa::Node::Kind::Loop ? "Loop"
                                                                                                         : "DynamicForLoop";
    throw SemanticError({prog_.file, -1, what, ""}, "the loops run more than " + std::to_string(kMaxLoopTrips) +
                                                       " trips in all: does a loop never end?");
  }

  // Walks nodes in order. At the top level, branches jump between the function's blocks as birsim's CFG driver
  // does: after a block, control follows the successor a terminator named, else falls through.
  Flow walk(const std::vector<isa::Node> &nodes, bool top) {
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
        if (!exec_ && next <= i) {
          if (std::find(back_jumps.begin(), back_jumps.end(), inst.index) != back_jumps.end())
            throw SemanticError({prog_.file, inst.index, inst.name, "target"},
                                "branches back to block '" + inst.f.target + "' forever: nothing between the block "
                                "and the branch can leave the loop (the program has no run-time branch)");
          back_jumps.push_back(inst.index);
        }
        break;
      case InstructionType::CompareAndBranch:
        next = compare(inst) ? jump(inst, inst.f.on_true, "on_true", next)
                             : jump(inst, inst.f.on_false, "on_false", next);
        break;
      default:
        break;
      }
      i = next;
    }
    return Flow::Next;
  }

  // Loop, DynamicForLoop and DoWhile (reference neuronx-cc/bir/sim-control-sync-customop.md section 1): a Loop
  // has constant bounds; a DynamicForLoop evaluates lb/stride from the affine environment and its upper bound
  // from a register when it starts; a DoWhile runs its body, then repeats while its register is non-zero. A Break
  // in the body leaves the region. The body's blocks are branch targets for the branches in it (birsim's CFG driver
  // runs a loop's blocks in control-flow mode, section 2.5).
  Flow region(const isa::Node &n) {
    const auto *saved = blocks_;
    blocks_ = &n.blocks;
    const Flow f = region_trips(n);
    blocks_ = saved;
    return f;
  }

  Flow region_trips(const isa::Node &n) {
    if (n.kind == isa::Node::Kind::DoWhile) {
      for (;;) {
        count_trip(n);
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
    for (__int128 t = 0; t < trips; ++t) {
      count_trip(n);
      lv_[static_cast<size_t>(n.var)] = static_cast<int64_t>(lb + t * stride);
      if (Flow f = walk(n.body, false); f != Flow::Next) return f == Flow::Break ? Flow::Next : f;
    }
    return Flow::Next;
  }

  // Call / NKIKernel (reference neuronx-cc/bir/sim-control-sync-customop.md 2.4, 6.2): the call instruction, then
  // the callee's blocks (expanded when the program was read) under the callee's own CFG: its branches name its
  // blocks, and its Return (or a Break at its top level) ends the call. Exit ends the run.
  Flow call(const isa::Node &n) {
    add(prog_.insts[static_cast<size_t>(n.inst)]);
    const auto *saved = blocks_;
    blocks_ = &n.blocks;
    const Flow f = walk(n.body, true);
    blocks_ = saved;
    return f == Flow::Stop ? Flow::Stop : Flow::Next;
  }

  // The DMABlock nodes by name, and which of them a DMATrigger names.
  void index_dma_blocks(const std::vector<isa::Node> &nodes) {
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
  void run_dma_block(const isa::Node &n, int queue) {
    const isa::Inst &blk = prog_.insts[static_cast<size_t>(n.inst)];
    const int saved = forced_queue_;
    forced_queue_ = queue;
    add(blk);
    forced_queue_ = s_.insts.back().queue;
    walk(n.body, false);
    forced_queue_ = saved;
  }

  // DMATrigger (reference sim-bn-rng-collective-dma.md, sim-control-sync-customop.md 5.2): a cursor over its
  // block list; each execution fires block fireCount % n and advances the cursor. A program decoded from bundle
  // streams has no DMABlock regions: the stream already holds the fired descriptors after the trigger, so there
  // the trigger fires nothing.
  void fire(const isa::Inst &trigger) {
    if (dma_blocks_.empty() || trigger.f.dma_blocks.empty()) return;
    int64_t &count = fire_count_[trigger.index];
    const std::string &name = trigger.f.dma_blocks[static_cast<size_t>(count % static_cast<int64_t>(trigger.f.dma_blocks.size()))];
    ++count;
    auto it = dma_blocks_.find(name);
    if (it == dma_blocks_.end())
      throw SemanticError({prog_.file, trigger.index, trigger.name, "dma_blocks"}, "no DMABlock named '" + name + "'");
    run_dma_block(*it->second, s_.insts.back().queue);
  }

  // SwitchQueueInstance / ResetQueueInstance (reference sim-control-sync-customop.md 5.2): rewind the cursor of
  // every trigger that owns the named block (`instance_name`), or, with no block named, of every trigger on the
  // instruction's `queue` (every trigger when that is empty too). SwitchQueueInstance with no_rearm leaves the
  // cursors; its semaphore group is cleared by the core when it completes (sim/core.cpp).
  void rewind(const isa::Inst &inst) {
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
  int64_t runtime(const isa::Expr &e, const char *field) {
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
  int64_t checked_add(int64_t a, int64_t b, const char *field) const {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
      throw SemanticError({prog_.file, -1, "", field}, "run-time bound overflows 64 bits");
    return r;
  }
  int64_t checked_mul(int64_t a, int64_t b, const char *field) const {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
      throw SemanticError({prog_.file, -1, "", field}, "run-time bound overflows 64 bits");
    return r;
  }
  int64_t eval_in(const isa::Expr &e, const char *field) const {
    try {
      return e.eval(lv_.data());
    } catch (const Error &x) {
      throw SemanticError({prog_.file, -1, "", field}, x.message());
    }
  }

  // Where block `name` starts in the node list being walked: the function's top-level blocks, a callee's, or the
  // enclosing region's (a branch names a block of its own CFG). An empty name falls through.
  size_t jump(const isa::Inst &inst, const std::string &name, const char *field, size_t fallthrough) {
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
  int64_t scalar(const isa::Inst &inst, size_t k) {
    ErrorContext ctx{prog_.file, inst.index, inst.name, "ins[" + std::to_string(k) + "]"};
    if (k >= inst.ins.size()) throw SemanticError(ctx, "CompareAndBranch needs two operands");
    const isa::Arg &a = inst.ins[k];
    if (a.kind == isa::ArgKind::Immediate) return static_cast<int64_t>(a.immediate(lv_.data()));
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
  bool compare(const isa::Inst &inst) {
    if (!exec_)
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

  Access resolve(const isa::Arg &arg) const {
    Access a;
    if (arg.kind != isa::ArgKind::AccessPattern) return a;
    a.tensor = arg.tensor;
    a.dtype = arg.dtype;
    a.start = arg.start.eval(lv_.data());
    a.ap = arg.ap;
    return a;
  }

  // The engine whose sequencer triggers a DMA instruction (reference neuron-arch.md 1.5 [DMA, DGE]): any engine
  // may trigger a transfer with prebuilt descriptors (the instruction's engine; SP, the Sync engine "most commonly
  // used to trigger DMA transfers" [ARCH2], when it names none); GpSimd builds SWDGE descriptors, so it issues
  // them; HWDGE is triggered from ACT or SP and exists from NeuronCore-v3 on.
  Engine dma_issuer(const isa::Inst &inst) const {
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
    case Engine::ALL: return Engine::SP;
    }
    return Engine::SP;
  }

  // A DMA queue id for a BIR queue name: ids are handed out in order of first use, and wrap when a program names
  // more queues than an engine has.
  int dma_queue_id(const std::string &name) {
    auto it = named_.find(name);
    if (it == named_.end()) {
      const int id = next_dma_++ % s_.dma_queues;
      it = named_.emplace(name, id).first;
      std::string &n = s_.dma_queue_names[static_cast<size_t>(id)];
      n += (n.empty() ? "" : "+") + name;
    }
    return it->second;
  }

  int pick_queue(const isa::Inst &inst, bool dma_type) {
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

  // The limits of one run, checked before this instruction's memory is taken (kMaxDynamicInstructions,
  // kMaxScheduleBytes): a runaway branch loop stops here with the schedule at most the budget in size.
  void reserve_for(const isa::Inst &inst) {
    if (static_cast<int64_t>(s_.insts.size()) >= kMaxDynamicInstructions)
      throw SemanticError({prog_.file, inst.index, inst.name, ""}, "more than " + std::to_string(kMaxDynamicInstructions) +
                                   " dynamic instructions: do the program's branches loop forever?");
    arena_bytes_ += inst_operand_bytes(inst);
    reserve_entry(inst);
  }
  // Room for one more schedule entry (an instruction, or the trigger a DMA adds before its transfer) within the
  // budget.
  void reserve_entry(const isa::Inst &inst) {
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
  void check_pe_limits(const engines::DynInst &d, const isa::Inst &inst) const {
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

  // The compiler keys a DMA queue by its issuing engine and its type: input for a transfer from a kernel input,
  // output for one into a kernel output, data otherwise (reference neuronx-cc/walrus/dma-queues.md: alloc_queues,
  // kind2QueType).
  DmaQueueKind queue_kind(const isa::Inst &inst) const {
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
  Engine dma_issuer_or_sp(const isa::Inst &inst) const {
    if (inst.f.dge_type == isa::DGEType::HWDGE && !arch_.hwdge)
      return inst.engine == Engine::Activation ? Engine::Activation : Engine::SP;
    return dma_issuer(inst);
  }

  void add(const isa::Inst &inst) {
    reserve_for(inst);
    const int64_t idx = static_cast<int64_t>(s_.insts.size());
    ScheduledInst si(s_.arena.get());
    si.d.inst = &inst;
    si.d.seq = idx;
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
    // Each access is validated once; its footprint (which validates the same way) is kept for the tracker.
    si.d.imm.reserve(inst.ins.size());
    si.d.ins.reserve(inst.ins.size());
    si.d.outs.reserve(inst.outs.size());
    in_fp_.clear();
    out_fp_.clear();
    for (size_t i = 0; i < inst.ins.size(); ++i) {
      si.d.imm.push_back(evaluate(inst, "ins", i, [&] { return inst.ins[i].immediate(lv_.data()); }));
      si.d.ins.push_back(evaluate(inst, "ins", i, [&] { return resolve(inst.ins[i]); }));
      if (si.d.ins.back().tensor >= 0) in_fp_.push_back(check(si.d.ins.back(), inst, "ins", i));
    }
    for (size_t i = 0; i < inst.outs.size(); ++i) {
      si.d.outs.push_back(evaluate(inst, "outs", i, [&] { return resolve(inst.outs[i]); }));
      if (si.d.outs.back().tensor >= 0) out_fp_.push_back(check(si.d.outs.back(), inst, "outs", i));
    }
    if (inst.type == InstructionType::Matmult || inst.type == InstructionType::MatmultSparse ||
        inst.type == InstructionType::MatmultMx)
      check_pe_limits(si.d, inst);
    const bool dma_type = is_dma(inst.type);
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
    si.pos = static_cast<int64_t>(s_.queues[si.queue].size());
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
    std::vector<int64_t> &raw = raw_, &other = other_;
    raw.clear();
    other.clear();
    if (!s_.explicit_sync) {
      for (const auto &fp : in_fp_) tracker_.access(fp, false, x_idx, raw);
      for (const auto &fp : out_fp_) tracker_.access(fp, true, x_idx, other);
    }

    // One semaphore wait per producer queue: the latest producer position on it.
    std::array<int64_t, kMaxQueues> need;
    need.fill(0);
    if (!s_.explicit_sync) {
      // AllEngineBarrier / Drain (reference neuronx-cc/arch/execution-sync-model.md: the all-engine barrier fans
      // in every engine; Drain waits for outstanding work): the barrier waits for everything issued before it, and
      // the first instruction of every queue after it waits for the barrier.
      if (inst.type == InstructionType::AllEngineBarrier || inst.type == InstructionType::Drain) {
        for (int q = 0; q < kMaxQueues; ++q) need[q] = static_cast<int64_t>(s_.queues[q].size());
      } else if (barrier_ >= 0 && !after_barrier_[wait_queue]) {
        raw.push_back(barrier_);
      }
      after_barrier_[wait_queue] = true;
      after_barrier_[si.queue] = true;
    }
    std::vector<int64_t> &dep_seq = dep_seq_;  // sorted and deduplicated here, then copied at its final size
    dep_seq.clear();
    for (const auto *deps : {&raw, &other})
      for (int64_t dep : *deps) {
        const auto &p = s_.insts[static_cast<size_t>(dep)];
        if (deps == &other && (p.queue == si.queue || p.queue == wait_queue)) continue;
        need[p.queue] = std::max(need[p.queue], p.pos + 1);
        if (p.queue != wait_queue) dep_seq.push_back(dep);
      }
    std::sort(dep_seq.begin(), dep_seq.end());
    dep_seq.erase(std::unique(dep_seq.begin(), dep_seq.end()), dep_seq.end());
    const size_t n_waits = static_cast<size_t>(std::count_if(need.begin(), need.end(), [](int64_t c) { return c > 0; }));
    if (trig_queue >= 0) {
      ScheduledInst t(s_.arena.get());
      t.d.inst = &inst;
      t.d.seq = idx;
      t.trigger = true;
      t.queue = trig_queue;
      t.pos = static_cast<int64_t>(s_.queues[trig_queue].size());
      t.dep_seq.assign(dep_seq.begin(), dep_seq.end());
      t.waits.reserve(n_waits);
      for (int q = 0; q < kMaxQueues; ++q)
        if (need[q] > 0) t.waits.push_back(QueueWait{q, need[q]});
      si.waits.push_back(QueueWait{trig_queue, t.pos + 1});
      si.dep_seq.push_back(idx);
      s_.queues[trig_queue].push_back(idx);
      s_.insts.push_back(std::move(t));
      reserve_entry(inst);  // the transfer's entry, pushed below
      ++s_.triggers;
    } else {
      si.dep_seq.assign(dep_seq.begin(), dep_seq.end());
      si.waits.reserve(n_waits);
      for (int q = 0; q < kMaxQueues; ++q)
        if (need[q] > 0) si.waits.push_back(QueueWait{q, need[q]});
    }

    if (exec_) {
      // Program order is a valid execution order: every dependency points backwards.
      exec_->set_context(ErrorContext{prog_.file, inst.index, inst.name, ""});
      engines::execute(si.d, *exec_, states_[static_cast<size_t>(si.queue)]);
    }
    if (!s_.explicit_sync && (inst.type == InstructionType::AllEngineBarrier || inst.type == InstructionType::Drain)) {
      barrier_ = x_idx;
      after_barrier_.fill(false);
    }
    s_.queues[si.queue].push_back(x_idx);
    s_.insts.push_back(std::move(si));
  }

  // An operand's start / immediate for this iteration; an expression that overflows (isa::Expr::eval) is reported
  // with the instruction and the argument.
  template <typename Fn>
  auto evaluate(const isa::Inst &inst, const char *kind, size_t i, Fn &&fn) const -> decltype(fn()) {
    try {
      return fn();
    } catch (const Error &e) {
      if (e.context().inst_index >= 0) throw;
      throw SemanticError({prog_.file, inst.index, inst.name, std::string(kind) + "[" + std::to_string(i) + "]"},
                          e.message());
    }
  }

  // Validates an access (Memory::footprint checks it as Memory::check does) and returns its footprint. The
  // error context is only built for an error: strings per dynamic instruction were a large part of scheduling.
  Footprint check(const Access &a, const isa::Inst &inst, const char *kind, size_t i) const {
    try {
      return mem_.footprint(a);
    } catch (const Error &e) {
      throw SemanticError({prog_.file, inst.index, inst.name, std::string(kind) + "[" + std::to_string(i) + "]"},
                          e.message());
    }
  }

  const isa::Program &prog_;
  const engines::Memory &mem_;
  const engines::ArchParams &arch_;
  std::vector<int64_t> lv_;
  Schedule s_;
  Tracker tracker_;
  std::vector<Footprint> in_fp_, out_fp_;  // the current instruction's footprints (reused buffers)
  std::vector<int64_t> raw_, other_, dep_seq_;  // its dependencies (reused buffers)
  std::unordered_map<std::string, int> named_;  // BIR DMA queue name -> queue id
  int next_dma_ = 0;
  bool triggers_ = false;  // DMA instructions get a trigger entry on their issuing engine
  engines::Memory *exec_;                                  // executes while scheduling (control flow), or null
  int64_t barrier_ = -1;                                   // the latest AllEngineBarrier/Drain
  std::array<bool, kMaxQueues> after_barrier_{};           // queue already ordered after it
  std::array<engines::EngineState, kMaxQueues> states_;
  // The blocks of the CFG being walked (a callee's or a region's), or null: the function's top-level blocks.
  const std::vector<std::pair<std::string, size_t>> *blocks_ = nullptr;
  std::unordered_map<std::string, const isa::Node *> dma_blocks_;       // DMABlock regions by name
  std::unordered_set<std::string> triggered_;                           // blocks some DMATrigger fires
  std::unordered_map<int, int64_t> fire_count_;                         // per DMATrigger: blocks fired so far
  int64_t trips_ = 0;                                                   // loop trips so far (kMaxLoopTrips)
  int64_t arena_bytes_ = 0;                                             // operand memory so far (kMaxScheduleBytes)
  int forced_queue_ = -1;                                               // queue of the DMABlock being run
};

} // namespace

Schedule build_schedule(const isa::Program &program, const engines::Memory &mem, const engines::ArchParams &arch,
                        bool dma_triggers) {
  return Builder(program, mem, arch, dma_triggers).build();
}

Schedule build_schedule_executing(const isa::Program &program, engines::Memory &mem, const engines::ArchParams &arch,
                                  bool dma_triggers) {
  return Builder(program, mem, arch, dma_triggers, &mem).build();
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

bool has_data_dependent_control(const isa::Program &program) {
  for (const auto &i : program.insts)
    if (i.type == InstructionType::CompareAndBranch) return true;
  return has_runtime_region(program.body);
}

} // namespace neuronsim::sim
