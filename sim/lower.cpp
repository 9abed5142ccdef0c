// BIR -> stream form: unrolled, constant addresses, placed tensors, explicit semaphores (see lower.hpp).
#include "neuronsim/sim/lower.hpp"

#include <algorithm>
#include <array>

#include "neuronsim/engines/memory.hpp"

namespace neuronsim::sim {

namespace {

using Clock = std::array<int64_t, kMaxQueues>;  // per queue: completions known to have happened

void mark_in_loop(const std::vector<isa::Node> &nodes, bool inside, std::vector<char> &in_loop) {
  for (const auto &n : nodes) {
    if (n.kind == isa::Node::Kind::Inst) {
      if (inside && n.inst >= 0 && n.inst < static_cast<int>(in_loop.size())) in_loop[static_cast<size_t>(n.inst)] = 1;
    } else {
      mark_in_loop(n.body, true, in_loop);
    }
  }
}

// One dynamic instruction as a static one: what the bundle carries is the value for this iteration.
isa::Inst concrete(const ScheduledInst &si, const std::string &name) {
  isa::Inst in = *si.d.inst;
  in.name = name;
  in.engine = queue_engine(si.queue);
  for (size_t i = 0; i < in.ins.size(); ++i) {
    isa::Arg &a = in.ins[i];
    if (a.kind == isa::ArgKind::AccessPattern) {
      a.start = isa::Expr::constant(si.d.ins[i].start);
      a.ap = si.d.ins[i].ap;
    } else if (a.kind == isa::ArgKind::Immediate) {
      // A symbolic_imm_value keeps its per-iteration values in imm_array with a selector in `start`
      // (program.hpp Arg::immediate); the scheduler already picked this iteration's value.
      a.imm = si.d.imm[i];
      a.imm_array.clear();
      a.start = isa::Expr::constant(0);
    }
  }
  for (size_t i = 0; i < in.outs.size(); ++i) {
    isa::Arg &a = in.outs[i];
    if (a.kind != isa::ArgKind::AccessPattern) continue;
    a.start = isa::Expr::constant(si.d.outs[i].start);
    a.ap = si.d.outs[i].ap;
  }
  // The DMA queue is now named by the semaphore the transfer increments; `queue` is a scheduling hint no
  // bundle carries, and the two sides of `validate` should compare equal.
  in.f.queue.clear();
  in.given.reset(static_cast<size_t>(isa::Field::queue));
  in.dependencies.clear();
  return in;
}

} // namespace

std::string arch_for_gen(isa::CoreGen gen) {
  switch (gen) {
  case isa::CoreGen::V2: return "trn1";
  case isa::CoreGen::V3: return "trn2";
  case isa::CoreGen::V4: return "trn3";
  }
  return "trn1";
}

std::vector<std::string> dynamic_names(const isa::Program &program, const Schedule &schedule) {
  std::vector<char> in_loop(program.insts.size(), 0);
  mark_in_loop(program.body, false, in_loop);
  std::vector<int64_t> seen(program.insts.size(), 0);
  std::vector<std::string> names;
  names.reserve(schedule.insts.size());
  for (const auto &si : schedule.insts) {
    const isa::Inst &in = *si.d.inst;
    const size_t k = static_cast<size_t>(in.index >= 0 ? in.index : 0);
    std::string n = in.name.empty() ? "I" + std::to_string(in.index) : in.name;
    if (k < in_loop.size() && in_loop[k]) n += "#" + std::to_string(seen[k]++);
    names.push_back(std::move(n));
  }
  return names;
}

isa::Program lower_to_stream(const isa::Program &program, const engines::ArchParams &arch,
                             const LowerOptions &options, LowerStats *stats) {
  engines::Memory mem(program, arch);
  const Schedule s = build_schedule(program, mem, arch);
  const std::vector<std::string> names = dynamic_names(program, s);

  isa::Program out;
  out.file = program.file;
  out.arch = program.arch;
  out.tensors = program.tensors;
  for (size_t t = 0; t < out.tensors.size(); ++t) {
    isa::Tensor &ts = out.tensors[t];
    if (ts.is_dram()) continue;
    // Bundles address SBUF/PSUM by (partition, byte) (reference isa/addr4.md); pin the placement the simulator
    // chose, as an absolute byte address (bank 0), so that both runs use the same bytes.
    ts.addr = mem.placed_addr(static_cast<int>(t));
    ts.base_partition = mem.placed_partition(static_cast<int>(t));
    ts.bank = 0;
    ts.allocated = true;
  }
  LowerStats st;
  auto emit = [&](isa::Inst in) {
    in.index = static_cast<int>(out.insts.size());
    isa::Node node;
    node.inst = in.index;
    out.body.push_back(node);
    out.insts.push_back(std::move(in));
  };

  if (s.explicit_sync) {
    // A scheduled program orders its queues with its own semaphores: keep them as they are.
    for (size_t i = 0; i < s.insts.size(); ++i) emit(concrete(s.insts[i], names[i]));
    st.instructions = static_cast<int64_t>(out.insts.size());
    if (stats) *stats = st;
    return out;
  }

  // Vector clocks over the schedule: know[i][q] = how many queue-q instructions are known complete when
  // instruction i starts, through its waits and, transitively, its producers' waits. Queue order alone gives an
  // instruction its predecessors' knowledge but not their completion (the core completes an instruction its
  // latency after it leaves the queue; completions stay in queue order, sim/core.cpp). A wait that this
  // knowledge already implies costs a sync slot and changes nothing: it is dropped.
  const size_t n = s.insts.size();
  std::vector<Clock> know(n);
  std::array<Clock, kMaxQueues> queue_know{};       // knowledge of each queue's last instruction so far
  std::array<int64_t, kMaxQueues> lowered_count{};  // instructions emitted per queue, carriers included
  std::vector<int64_t> lowered_pos(n, 0);           // the producer's semaphore value once it completed
  auto producer = [&](const QueueWait &w) {
    return static_cast<size_t>(s.queues[static_cast<size_t>(w.queue)][static_cast<size_t>(w.count - 1)]);
  };
  // What is known once the producer of `w` has completed: its own knowledge plus its queue up to it.
  auto done = [&](const QueueWait &w) {
    Clock c = know[producer(w)];
    c[static_cast<size_t>(w.queue)] = std::max(c[static_cast<size_t>(w.queue)], w.count);
    return c;
  };
  for (size_t i = 0; i < n; ++i) {
    const ScheduledInst &si = s.insts[i];
    const int q = si.queue;
    const Clock &base = queue_know[static_cast<size_t>(q)];
    std::vector<Clock> dones;
    for (const QueueWait &w : si.waits) dones.push_back(done(w));
    std::vector<QueueWait> keep;
    for (size_t a = 0; a < si.waits.size(); ++a) {
      const QueueWait &w = si.waits[a];
      bool implied = base[static_cast<size_t>(w.queue)] >= w.count;
      for (size_t b = 0; b < si.waits.size() && !implied; ++b)
        implied = b != a && dones[b][static_cast<size_t>(w.queue)] >= w.count;
      if (implied) ++st.waits_dropped;
      else keep.push_back(w);
    }
    Clock c = base;
    for (const Clock &d : dones)
      for (int k = 0; k < kMaxQueues; ++k) c[k] = std::max(c[k], d[k]);
    know[i] = c;
    queue_know[static_cast<size_t>(q)] = c;

    auto sem_wait = [&](const QueueWait &w) {
      isa::SemWait sw;
      sw.sem = w.queue;
      sw.mode = isa::SemWait::Mode::GeImm;
      sw.value = lowered_pos[producer(w)];
      return sw;
    };
    auto own_update = [&] {
      isa::SemUpdate u;
      u.sem = q;
      u.mode = isa::SemUpdate::Mode::Inc;
      return u;
    };
    isa::Inst in = concrete(si, names[i]);
    in.waits.clear();
    in.updates.clear();
    size_t first = 0;
    if (options.fit_bundles && keep.size() > 1) {
      // The instruction keeps one wait; carriers (EventSemaphore: two waits + one update, reference
      // isa/sp-sync-encoding.md) take the others, in front of it on the same queue. A carrier increments its
      // queue's semaphore like any instruction, so that a DMA-queue carrier is found on that queue and the
      // counts stay "instructions completed on the queue".
      first = keep.size() - 1;
      for (size_t k = 0; k < first; k += 2) {
        isa::Inst cr;
        cr.type = isa::InstructionType::EventSemaphore;
        cr.engine = in.engine;
        cr.name = in.name + ".sync" + std::to_string(k / 2);
        cr.waits.push_back(sem_wait(keep[k]));
        if (k + 1 < first) cr.waits.push_back(sem_wait(keep[k + 1]));
        cr.updates.push_back(own_update());
        ++lowered_count[static_cast<size_t>(q)];
        ++st.carriers;
        emit(std::move(cr));
      }
    }
    for (size_t k = first; k < keep.size(); ++k) in.waits.push_back(sem_wait(keep[k]));
    in.updates.push_back(own_update());
    lowered_pos[i] = ++lowered_count[static_cast<size_t>(q)];
    emit(std::move(in));
  }
  st.instructions = static_cast<int64_t>(out.insts.size());
  if (stats) *stats = st;
  return out;
}

} // namespace neuronsim::sim
