// The schedule builder of sim/schedule.cpp, shared by the files that define its members: schedule.cpp (the
// build, one instruction's entry and its dependencies), schedule_control.cpp (the walk: regions, branches, calls,
// DMA blocks and triggers) and schedule_queues.cpp (queues, issuing engines, limits). Private to sim/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim::schedule_detail {

using engines::Access;
using engines::Footprint;
using isa::Engine;
using isa::InstructionType;

// Instructions that move data through the DMA rings rather than an engine's datapath: the "dma" and
// "memory/dma" families and the indirect DMA family of the InstructionType table (instruction_types.def;
// reference neuronx-cc/bir/instruction-type.md: the SRDMA mask {19, 22, 32, 68-72} plus the indirect loads/saves).
inline bool is_dma(InstructionType t) {
  const std::string_view f = isa::inst_type_family(t);
  return f == "dma" || f == "memory/dma" || f == "indirect";
}

inline int engine_queue(Engine e) {
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
// A dynamic instruction as the tracker records it: its number and where it sits (queue, position), so that a
// dependency found needs no look-up in the full list of scheduled instructions (a streamed schedule has none).
struct Ref {
  int64_t seq = -1;
  int64_t queue = 0;
  int64_t pos = 0;
};

class Tracker {
public:
  using Key = std::array<int64_t, 4>;

  // Keep only each queue's latest record per group: the waits need only the latest producer position per queue
  // (Builder::add), but the trace's flow arrows (ScheduledInst::dep_seq) name every producer, so this is for runs
  // without them. Without it a tile that is only read collects a record per reader for the whole run.
  explicit Tracker(bool latest_per_queue = false) : latest_(latest_per_queue) {}
  // Records held (tests: bounded when latest_per_queue).
  int64_t records() const {
    int64_t n = 0;
    auto count = [&n](const Space &sp) {
      for (const auto &l : sp.list)
        for (const auto &g : l) n += static_cast<int64_t>(g.reads.size() + g.writes.size());
    };
    count(sbuf_), count(psum_);
    for (const auto &kv : dram_) count(kv.second);
    return n;
  }

  // Where an access's group was found, kept by the caller between accesses of one static operand (Builder's
  // operand memo): while no group was added, moved or removed since (gen_), the same footprint's group is where it
  // was, and the hash look-up (a third of access()) is skipped. The look-up's result is the same either way.
  struct Hint {
    const void *space = nullptr;  // null: none
    uint64_t gen = 0;
    Key key{};
    int l = 0;
    size_t i = 0;
  };

  void access(const Footprint &fp, bool write, const Ref &inst, std::vector<Ref> &deps, Hint *hint = nullptr) {
    Space &sp = space(fp);
    scan(sp, kWritten, fp, write, inst, deps);
    if (write) scan(sp, kReadOnly, fp, write, inst, deps);
    const Key k = key(fp);
    Loc loc;
    if (hint && hint->space == &sp && hint->gen == gen_ && same(hint->key, k) && (!write || hint->l == kWritten)) {
      loc = Loc{hint->l, hint->i};
    } else {
      auto it = sp.where.find(k);
      if (it == sp.where.end()) {
        const int l = write ? kWritten : kReadOnly;
        sp.list[l].push_back(Group{fp, {}, {}});
        index_add(sp, l, sp.list[l].size() - 1);
        it = sp.where.emplace(k, Loc{l, sp.list[l].size() - 1}).first;
        ++gen_;
      } else if (write && it->second.l == kReadOnly) {
        Group g = std::move(sp.list[kReadOnly][it->second.i]);
        unlink(sp, kReadOnly, it->second.i);
        sp.list[kWritten].push_back(std::move(g));
        index_add(sp, kWritten, sp.list[kWritten].size() - 1);
        it->second = Loc{kWritten, sp.list[kWritten].size() - 1};
      }
      loc = it->second;
      if (hint) *hint = Hint{&sp, gen_, k, loc.l, loc.i};
    }
    Group &g = sp.list[loc.l][loc.i];
    std::vector<Ref> &v = write ? g.writes : g.reads;
    if (latest_)
      for (size_t k = 0; k < v.size(); ++k)
        if (v[k].queue == inst.queue) {
          v.erase(v.begin() + static_cast<std::ptrdiff_t>(k));
          break;
        }
    v.push_back(inst);
  }

private:
  static constexpr int kReadOnly = 0, kWritten = 1;
  struct Group {
    Footprint fp;
    std::vector<Ref> reads, writes;  // ascending seq
  };
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
  // Which groups an access may overlap, without testing every group (a kernel that writes or reads a new
  // column of a tile in every trip of a long loop -- a depthwise conv1d writing one output column per trip --
  // collects a group per column, and testing each access against all of them made the walk quadratic: 86% of
  // such a run in perf). Per list, the groups at most kNarrow bytes wide are ordered by their first byte, in
  // classes by width (at most 16, 64, 256, 1024, 4096 bytes), and an access visits, in each class, those that
  // start less than the class's width before its end only; wider ones are tested one by one (a kernel has few
  // distinct wide boxes). Short lists are scanned as before.
  static constexpr int64_t kNarrow = 4096;
  static constexpr int kClasses = 5;  // widths up to 16 << 2 * c bytes
  static constexpr size_t kIndexFrom = 32;  // groups in a list from which scan() uses the index
  static int width_class(int64_t width) {
    int c = 0;
    while (c + 1 < kClasses && width > (int64_t{16} << (2 * c))) ++c;
    return c;
  }
  struct Index {
    std::array<std::multimap<int64_t, size_t>, kClasses> narrow;  // per width class: b0 -> position in the list
    std::vector<size_t> wide;                                       // positions in the list
  };
  struct Space {
    std::array<std::vector<Group>, 2> list;
    std::array<Index, 2> index;
    std::unordered_map<Key, Loc, KeyHash> where;
  };

  static Key key(const Footprint &fp) { return {fp.p0, fp.p1, fp.b0, fp.b1}; }
  // Field by field: std::array's == was a call to memcmp, 6% of a streamed loop kernel's run in perf.
  static bool same(const Key &a, const Key &b) {
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
  }
  static bool covers(const Footprint &a, const Footprint &b) {
    return a.p0 <= b.p0 && b.p1 <= a.p1 && a.b0 <= b.b0 && b.b1 <= a.b1;
  }

  // Takes group i out of list l (the last group moves into its slot); its map entry is left to the caller.
  void unlink(Space &sp, int l, size_t i) {
    ++gen_;
    auto &groups = sp.list[l];
    index_move(sp, l, i, SIZE_MAX);
    if (i + 1 != groups.size()) {
      index_move(sp, l, groups.size() - 1, i);
      groups[i] = std::move(groups.back());
      sp.where[key(groups[i].fp)].i = i;
    }
    groups.pop_back();
  }

  static bool narrow(const Footprint &fp) { return fp.b1 - fp.b0 <= kNarrow; }
  void index_add(Space &sp, int l, size_t i) {
    const Footprint &fp = sp.list[l][i].fp;
    Index &x = sp.index[static_cast<size_t>(l)];
    if (narrow(fp))
      x.narrow[static_cast<size_t>(width_class(fp.b1 - fp.b0))].emplace(fp.b0, i);
    else
      x.wide.push_back(i);
  }
  // The index entry of group `from` of list l now names position `to` (SIZE_MAX: removed).
  void index_move(Space &sp, int l, size_t from, size_t to) {
    const Footprint &fp = sp.list[l][from].fp;
    Index &x = sp.index[static_cast<size_t>(l)];
    if (narrow(fp)) {
      auto &m = x.narrow[static_cast<size_t>(width_class(fp.b1 - fp.b0))];
      auto [at, end] = m.equal_range(fp.b0);
      for (; at != end; ++at)
        if (at->second == from) break;
      if (to == SIZE_MAX)
        m.erase(at);
      else
        at->second = to;
    } else {
      auto at = std::find(x.wide.begin(), x.wide.end(), from);
      if (to == SIZE_MAX) {
        *at = x.wide.back();
        x.wide.pop_back();
      } else {
        *at = to;
      }
    }
  }

  void scan(Space &sp, int l, const Footprint &fp, bool write, const Ref &self, std::vector<Ref> &deps) {
    auto &groups = sp.list[l];
    if (groups.size() < kIndexFrom) {
      for (size_t g = 0; g < groups.size();)
        if (!visit(sp, l, g, fp, write, self, deps)) ++g;  // else the group moved into slot g is next
      return;
    }
    // The groups the index names as possible overlaps, visited from the last position down: a group unlinked is
    // replaced by the list's last one, which is then either visited already or no candidate.
    std::vector<size_t> &cand = cand_;
    cand.clear();
    const Index &x = sp.index[static_cast<size_t>(l)];
    cand.insert(cand.end(), x.wide.begin(), x.wide.end());
    for (int c = 0; c < kClasses; ++c) {
      const auto &m = x.narrow[static_cast<size_t>(c)];
      if (m.empty())
        continue;
      for (auto at = m.upper_bound(fp.b0 - (int64_t{16} << (2 * c))), end = m.lower_bound(fp.b1); at != end; ++at)
        cand.push_back(at->second);
    }
    std::sort(cand.begin(), cand.end(), std::greater<size_t>());
    for (size_t g : cand) visit(sp, l, g, fp, write, self, deps);
  }

  // One group against an access: its dependencies, and a covering write drops its records. True when the group
  // was emptied and unlinked (the list's last group now sits at g).
  bool visit(Space &sp, int l, size_t g, const Footprint &fp, bool write, const Ref &self, std::vector<Ref> &deps) {
    const int64_t inst = self.seq;
    Group &gr = sp.list[l][g];
    if (!gr.fp.overlaps(fp)) return false;
    for (const Ref &r : gr.writes)
      if (r.seq != inst) deps.push_back(r);
    if (!write) return false;
    for (const Ref &r : gr.reads)
      if (r.seq != inst) deps.push_back(r);
    if (!covers(fp, gr.fp)) return false;
    // Records are appended in instruction order: this instruction's own ones are at the back and stay.
    auto drop = [inst](std::vector<Ref> &v) {
      size_t k = v.size();
      while (k > 0 && v[k - 1].seq == inst) --k;
      v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k));
    };
    drop(gr.reads);
    drop(gr.writes);
    // An emptied group goes, unless this access is about to refill it (the same tile written again: keeping it
    // saves freeing and reallocating its lists).
    if (gr.reads.empty() && gr.writes.empty() && !same(key(gr.fp), key(fp))) {
      sp.where.erase(key(gr.fp));
      unlink(sp, l, g);
      return true;
    }
    return false;
  }

  Space &space(const Footprint &fp) {
    if (fp.space == Footprint::Space::Sbuf) return sbuf_;
    if (fp.space == Footprint::Space::Psum) return psum_;
    return dram_[fp.dram_tensor];
  }
  Space sbuf_, psum_;
  std::unordered_map<int, Space> dram_;
  bool latest_;
  uint64_t gen_ = 0;  // bumped whenever a group is added, moved or removed (Hint)
  std::vector<size_t> cand_;  // scan()'s candidates, kept for their capacity
};

// Where a streamed schedule's entries go (sim/schedule_stream.cpp): each is handed over as it is made, in program
// order, and the walk may be paused inside take() until the consumer asks for more.
class EntrySink {
public:
  virtual ~EntrySink() = default;
  virtual std::pmr::memory_resource *resource() = 0;
  // An empty entry (as ScheduledInst(resource()) is), whose vectors may keep the capacity of a released one.
  virtual ScheduledInst blank() = 0;
  virtual void take(ScheduledInst &&si) = 0;
};

class Builder {
public:
  Builder(const isa::Program &p, const engines::Memory &m, const engines::ArchParams &a, bool dma_triggers,
          int64_t max_instructions, engines::Memory *exec = nullptr, EntrySink *sink = nullptr)
      : prog_(p), mem_(m), arch_(a), lv_(p.loop_vars.size(), 0), triggers_(dma_triggers),
        max_insts_(std::max<int64_t>(1, max_instructions)), exec_(exec), sink_(sink) {
    s_.dma_queues = std::clamp(a.dma_queues, 1, kMaxDmaQueues);
  }

  Schedule build();
  int64_t checked_count() const;  // the static program's dynamic count, checked against the limit
  // The same walk, every entry handed to the sink instead of kept (no schedule-size limit: nothing accumulates).
  void stream();
  // How many entries each queue gets, found from the program without walking it, for a program whose path is
  // fixed by its structure: nodes are instructions and constant loops, and no instruction branches, ends the run,
  // calls, or fires DMA blocks. False otherwise (or when the counts would pass max_instructions: the walk reports
  // that). summary() then holds what a walk's would at its end (DMA queue names, touches, triggers); this
  // builder's queue naming is used up: call it on a builder that does not walk.
  bool queue_totals(std::array<int64_t, kMaxQueues> &out);
  // After queue_totals (true, `totals` its counts): per queue, a wait its last entry is sure to have, found
  // without walking: a transfer's wait for its trigger; else the latest writer, in the program's order, of a byte
  // the entry reads (the tracker reports that writer: only a later write covering it could drop its record, and
  // that one would be later still). Found for a last entry outside loops whose reads do not depend on loop
  // variables, when the writer lies in the last trips of the loops before it; else none. A consumer asking for
  // that entry early may wait for this first: its answer cannot come sooner (sim/schedule_stream.hpp).
  std::array<std::optional<QueueWait>, kMaxQueues> last_entry_waits(const std::array<int64_t, kMaxQueues> &totals);
  // Without the trace's flow arrows: ScheduledInst::dep_seq stays empty and the tracker keeps only the latest
  // record per queue (the waits are the same). Before the walk.
  void without_flow_arrows() {
    flow_arrows_ = false;
    tracker_ = Tracker(true);
  }
  int64_t tracker_records() const { return tracker_.records(); }
  // Sanitized runs: each entry gets its NKI context (ScheduledInst::nki_ctx) from the sanitizer. Before the walk.
  void with_sanitizer(Sanitizer *s) { sanitizer_ = s; }
  // Resolves every operand with the general walk (Memory::footprint), none from the operand memo: tests compare
  // the two. Before the walk.
  void without_operand_memo() { memo_on_ = false; }
  // Access operands whose footprint came from the memo (tests: the fast path ran).
  int64_t memo_hits() const { return memo_hits_; }
  // What the schedule records besides its entries (explicit_sync, DMA queue names, touches, triggers): as far as
  // the walk has gone. insts and queues stay empty when streaming.
  const Schedule &summary() const { return s_; }

private:
  // How many dynamic DMA instructions the nodes run (each gets a trigger entry too), counted as
  // isa::Program::dynamic_count counts instructions.
  int64_t dma_count(const std::vector<isa::Node> &nodes) const;

  // How a walk over a node list ended (reference neuronx-cc/bir/sim-control-sync-customop.md: a terminator names
  // the successor block; Break exits the enclosing region; Return/Exit end the run).
  enum class Flow { Next, Break, Return, Stop };

  // The schedule memory of one dynamic instance's operands (resolved accesses, immediates) plus its share of
  // the queue index (schedule memory estimate, kMaxScheduleBytes).
  static int64_t inst_operand_bytes(const isa::Inst &inst);
  // The same summed over the dynamic instances of `nodes` (loops multiply, saturating; run-time regions count
  // once, as Program::dynamic_count does).
  __int128 operand_bytes(const std::vector<isa::Node> &nodes) const;

  // `n` loop trips (at most max_insts_ over the whole run).
  void count_trips(const isa::Node &n, int64_t trips = 1);

  // Walks nodes in order. At the top level, branches jump between the function's blocks as birsim's CFG driver
  // does: after a block, control follows the successor a terminator named, else falls through.
  Flow walk(const std::vector<isa::Node> &nodes, bool top);
  // Asks the cache for what add() reads of the instructions after node i (the first line of the one two ahead;
  // the operands of the next, whose first line came one step before): a long kernel's static instructions do not
  // fit in the cache, and add() waited on each operand's first read (perf). Changes nothing else.
  void prefetch_ahead(const std::vector<isa::Node> &nodes, size_t i) const;

  // Loop, DynamicForLoop and DoWhile (reference neuronx-cc/bir/sim-control-sync-customop.md section 1): a Loop
  // has constant bounds; a DynamicForLoop evaluates lb/stride from the affine environment and its upper bound
  // from a register when it starts; a DoWhile runs its body, then repeats while its register is non-zero. A Break
  // in the body leaves the region. The body's blocks are branch targets for the branches in it (birsim's CFG driver
  // runs a loop's blocks in control-flow mode, section 2.5).
  Flow region(const isa::Node &n);

  Flow region_trips(const isa::Node &n);

  // Call / NKIKernel (reference neuronx-cc/bir/sim-control-sync-customop.md 2.4, 6.2): the call instruction, then
  // the callee's blocks (expanded when the program was read) under the callee's own CFG: its branches name its
  // blocks, and its Return (or a Break at its top level) ends the call. Exit ends the run.
  Flow call(const isa::Node &n);

  // The DMABlock nodes by name, and which of them a DMATrigger names.
  void index_dma_blocks(const std::vector<isa::Node> &nodes);

  // A DMABlock's descriptors, in order, on one DMA queue: the firing trigger's, else the block's own.
  void run_dma_block(const isa::Node &n, int queue);

  // DMATrigger (reference sim-bn-rng-collective-dma.md, sim-control-sync-customop.md 5.2): a cursor over its
  // block list; each execution fires block fireCount % n and advances the cursor. A program decoded from bundle
  // streams has no DMABlock regions: the stream already holds the fired descriptors after the trigger, so there
  // the trigger fires nothing.
  void fire(const isa::Inst &trigger);

  // SwitchQueueInstance / ResetQueueInstance (reference sim-control-sync-customop.md 5.2): rewind the cursor of
  // every trigger that owns the named block (`instance_name`), or, with no block named, of every trigger on the
  // instruction's `queue` (every trigger when that is empty too). SwitchQueueInstance with no_rearm leaves the
  // cursors; its semaphore group is cleared by the core when it completes (sim/core.cpp).
  void rewind(const isa::Inst &inst);

  // An expression that may read registers (the instructions before it have executed: see exec_).
  int64_t runtime(const isa::Expr &e, const char *field);
  int64_t checked_add(int64_t a, int64_t b, const char *field) const;
  int64_t checked_mul(int64_t a, int64_t b, const char *field) const;
  int64_t eval_in(const isa::Expr &e, const char *field) const;

  // Where block `name` starts in the node list being walked: the function's top-level blocks, a callee's, or the
  // enclosing region's (a branch names a block of its own CFG). An empty name falls through.
  size_t jump(const isa::Inst &inst, const std::string &name, const char *field, size_t fallthrough);

  // The scalar a branch compares: a register (read from the executing engines' registers) or an immediate.
  int64_t scalar(const isa::Inst &inst, size_t k);

  // reference neuronx-cc/bir/sim-control-sync-customop.md 2.1/2.2: taken = comp_op(lhs, rhs); the IMM/REG suffix
  // says where the right-hand side comes from.
  bool compare(const isa::Inst &inst);
  // A backward branch taken twice in a walk without run-time control flow: SemanticError (it repeats forever).
  void refuse_repeat(std::vector<int> &back_jumps, const isa::Inst &inst, const std::string &block,
                     const char *field);

  // The engine whose sequencer triggers a DMA instruction (reference neuron-arch.md 1.5 [DMA, DGE]): any engine
  // may trigger a transfer with prebuilt descriptors (the instruction's engine; SP, the Sync engine "most commonly
  // used to trigger DMA transfers" [ARCH2], when it names none); GpSimd builds SWDGE descriptors, so it issues
  // them; HWDGE is triggered from ACT or SP and exists from NeuronCore-v3 on.
  Engine dma_issuer(const isa::Inst &inst) const;

  // A DMA queue id for a BIR queue name: ids are handed out in order of first use, and wrap when a program names
  // more queues than an engine has.
  int dma_queue_id(const std::string &name);

  int pick_queue(const isa::Inst &inst, bool dma_type);

  // queue_totals over `nodes`, each run `trips` times; false when they are not that simple.
  // last_entry_waits' backward scan of nodes (the last trip of each loop) for queue q's last entry, then its writer.
  struct LastLook;
  void look_back(const std::vector<isa::Node> &nodes, LastLook &l);
  // The footprint of operand a at the loop variables' current values (look_back's reads and writes).
  Footprint footprint_now(const isa::Arg &a) const;
  bool add_totals(const std::vector<isa::Node> &nodes, __int128 trips, std::array<__int128, kMaxQueues> &n);

  // The limits of one run, checked before this instruction's memory is taken (max_insts_, kMaxScheduleBytes): a
  // runaway branch loop stops here with the schedule at most the budget in size.
  void reserve_for(const isa::Inst &inst);
  // Room for one more schedule entry (an instruction, or the trigger a DMA adds before its transfer) within the
  // budget.
  void reserve_entry(const isa::Inst &inst);

  // Tile limits of the PE array (reference neuron-arch.md 2.1 [ARCH2, ISA]): stationary partitions (K) <= 128
  // and stationary free <= 128; moving free <= 512 (one PSUM bank of fp32) on NeuronCore-v2/v3, up to 4096
  // (fp32 out) / 8192 (bf16 out) on v4; DoubleRow / DoublePixel carry two K-rows per partition, doubling the
  // free sizes (neuron-arch.md 2.1: stationary [128, 2, M], moving [128, 2, N]). A matmul writes one 2 KiB PSUM
  // bank per partition on v2/v3 (neuron-arch.md 1.4: "moving free <= 512 (one PSUM bank)"); v4 may span all 8.
  void check_pe_limits(const engines::DynInst &d, const isa::Inst &inst) const;
  void check_index_count(const engines::DynInst &d, const isa::Inst &inst) const;

  // The compiler keys a DMA queue by its issuing engine and its type: input for a transfer from a kernel input,
  // output for one into a kernel output, data otherwise (reference neuronx-cc/walrus/dma-queues.md: alloc_queues,
  // kind2QueType).
  DmaQueueKind queue_kind(const isa::Inst &inst) const;

  // The issuing engine for naming a queue: without triggers (lowering) HWDGE is not refused here.
  Engine dma_issuer_or_sp(const isa::Inst &inst) const;
  bool is_store(const isa::Inst &inst) const;

  void add(const isa::Inst &inst);
  // The semaphore numbers an instruction names (waits, updates, sema_group) are in range: checked at its first
  // dynamic instance only (they are static; reading them per instance touched three more cache lines of its ~2 KB
  // isa::Inst each time, a quarter of add() in perf). sems_checked: already checked (false outside prog_.insts).
  bool sems_checked(const isa::Inst &inst);
  void check_sems(const isa::Inst &inst);
  // is_dma(inst.type), looked up once per static instruction (its family name compared per entry showed in
  // profiles).
  bool dma_type_of(const isa::Inst &inst);

  // The operand memo: per static operand (each instruction's ins, then outs), the access and footprint of the
  // last start it was resolved at. An access's footprint is a function of its tensor, dtype, start and pattern
  // (Memory::footprint: the tensors' placement is fixed when the memory is made), and only the start changes
  // between dynamic instances (it is the expression evaluated per iteration): when the start is the one before,
  // the access is the one before, already validated, and its footprint is reused instead of walked again. A
  // loop-invariant operand is thus walked once per loop; one whose start moves is walked as before.
  struct OperandMemo {
    bool ready = false;
    int64_t start = 0;
    Access acc;
    Footprint fp;
    Tracker::Hint hint;  // where the tracker found fp's group last time
  };
  // The memos of inst's operands (ins first, then outs: inst.ins.size() + inst.outs.size() of them), or null (memo
  // off, or an instruction not in prog_.insts).
  OperandMemo *memos_of(const isa::Inst &inst);
  // Resolves operand i (of `kind`: ins/outs) of inst into `out`; its footprint, when it names a tensor, is
  // appended to `fps` (validated as check() does).
  void operand(const isa::Inst &inst, const char *kind, size_t i, const isa::Arg &arg, OperandMemo *memo,
               std::pmr::vector<Access> &out, std::vector<Footprint> &fps, std::vector<Tracker::Hint *> &hints);
  // The start of an access that reads registers, from the registers of the engine that executes inst (its issuing
  // engine for a DMA); `shown` gets "name = value" of each register read.
  int64_t run_time_start(const isa::Inst &inst, const char *kind, size_t i, const isa::Expr &start,
                         std::string &shown);
  // One finished entry: kept in s_ or handed to the sink.
  void emit(ScheduledInst &&si);

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
  std::vector<Tracker::Hint *> in_hint_, out_hint_;  // parallel to them: the memo's tracker hint, or null
  std::vector<Ref> raw_, other_;                // its dependencies (reused buffers)
  std::vector<int64_t> dep_seq_;
  std::unordered_map<std::string, int> named_;  // BIR DMA queue name -> queue id
  int next_dma_ = 0;
  bool triggers_ = false;  // DMA instructions get a trigger entry on their issuing engine
  bool flow_arrows_ = true;  // fill ScheduledInst::dep_seq
  int64_t max_insts_;      // dynamic instructions and loop trips one run may take (RunOptions::max_instructions)
  engines::Memory *exec_;                                  // executes while scheduling (control flow), or null
  EntrySink *sink_;                                        // streaming: entries go there, not into s_
  int64_t entries_ = 0;                                    // entries made so far (s_.insts.size() when kept)
  std::array<int64_t, kMaxQueues> queue_len_{};            // per queue, entries made so far
  int last_queue_ = 0;                                     // the queue of the latest entry
  Ref barrier_;                                            // the latest AllEngineBarrier/Drain (seq -1: none)
  std::array<bool, kMaxQueues> after_barrier_{};           // queue already ordered after it
  std::array<engines::EngineState, kMaxQueues> states_;
  // The blocks of the CFG being walked (a callee's or a region's), or null: the function's top-level blocks.
  const std::vector<std::pair<std::string, size_t>> *blocks_ = nullptr;
  std::unordered_map<std::string, const isa::Node *> dma_blocks_;       // DMABlock regions by name
  std::unordered_set<std::string> triggered_;                           // blocks some DMATrigger fires
  std::unordered_map<int, int64_t> fire_count_;                         // per DMATrigger: blocks fired so far
  int64_t trips_ = 0;                                                   // loop trips so far (max_insts_)
  int64_t arena_bytes_ = 0;                                             // operand memory so far (kMaxScheduleBytes)
  int forced_queue_ = -1;                                               // queue of the DMABlock being run
  bool memo_on_ = true;                                                 // the operand memo is used
  std::vector<size_t> memo_base_;                                       // per instruction: its first memo
  std::vector<OperandMemo> memo_;                                       // per static operand
  int64_t memo_hits_ = 0;
  std::vector<uint8_t> dma_type_;                                       // per instruction: is_dma(type)
  std::vector<uint8_t> sems_checked_;                                   // per instruction: check_sems passed
  Sanitizer *sanitizer_ = nullptr;                                      // sanitized runs (with_sanitizer)
};

} // namespace neuronsim::sim::schedule_detail
