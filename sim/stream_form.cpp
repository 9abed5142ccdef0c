// BIR -> stream form: unrolled, constant addresses, placed tensors, explicit semaphores (see stream_form.hpp).
#include "neuronsim/sim/stream_form.hpp"

#include <algorithm>
#include <array>
#include <functional>

#include "neuronsim/engines/memory.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/bundle.hpp"

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
  // bundle carries (except the queue-control ops' own name slot), and the two sides of `validate` should
  // compare equal.
  if (!isa::bundle_carries(in.type, isa::Field::queue)) {
    in.f.queue.clear();
    in.given.reset(static_cast<size_t>(isa::Field::queue));
  }
  in.dependencies.clear();
  // A DMABlock has no opcode (instruction_wire.def: a region carrier); in the stream its descriptors follow the
  // trigger that fired it. Its place on the queue (and the semaphore count of that queue) is kept by a pure sync
  // carrier, as for any extra wait.
  using IT = isa::InstructionType;
  // Break has no opcode either (opcode-master.md: debug/control, no setupHeader); in a trace the region it left is
  // already unrolled, so its place is kept by a sync carrier too.
  if (in.type == IT::DMABlock || in.type == IT::Break) {
    in.type = IT::EventSemaphore;
    in.f = isa::InstFields{};
    in.given.reset();
  }
  // DMA descriptors have no opcode either: they live in DMA rings, not in an engine's instruction stream. birsim
  // runs each through DMACopy's mode bodies (reference neuronx-cc/bir/sim-bn-rng-collective-dma.md 5;
  // engines/ops/dma_copy.cpp), so the stream carries each as the DMACopy of the same mode, on the same queue.
  const auto mode = [&](isa::CopyMode m) {
    in.f.copy_mode = m;
    in.given.set(static_cast<size_t>(isa::Field::copy_mode));
  };
  switch (in.type) {
  case IT::DMADescriptor: mode(in.f.copy_mode); break;
  case IT::DMADescriptorCopy: mode(isa::CopyMode::Copy); break;
  case IT::DMADescriptorTranspose: mode(isa::CopyMode::Transpose); break;
  case IT::DMADescriptorReplicate: mode(isa::CopyMode::Replicate); break;
  case IT::DMADescriptorCCE:
    mode(isa::CopyMode::CCE);
    in.f.cce_op = in.f.op;
    in.given.set(static_cast<size_t>(isa::Field::cce_op));
    in.f.op = isa::AluOp::bypass;
    in.given.reset(static_cast<size_t>(isa::Field::op));
    break;
  default: break;
  }
  if (in.type >= IT::DMADescriptor && in.type <= IT::DMADescriptorReplicate) {
    in.type = IT::DMACopy;
    in.given.reset(static_cast<size_t>(isa::Field::num_tiling_dimensions));
  }
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
  std::vector<int64_t> seen(program.insts.size(), 0), runs(program.insts.size(), 0);
  for (const auto &si : schedule.insts)
    if (!si.trigger && si.d.inst->index >= 0 && si.d.inst->index < static_cast<int>(runs.size()))
      ++runs[static_cast<size_t>(si.d.inst->index)];
  std::vector<std::string> names;
  names.reserve(schedule.insts.size());
  for (const auto &si : schedule.insts) {
    const isa::Inst &in = *si.d.inst;
    const size_t k = static_cast<size_t>(in.index >= 0 ? in.index : 0);
    std::string n = in.name.empty() ? "I" + std::to_string(in.index) : in.name;
    if (si.trigger) {  // a DMA trigger (simulator schedules) is named after the transfer that follows it
      if (k < in_loop.size() && (in_loop[k] || runs[k] > 1)) n += "#" + std::to_string(seen[k]);
      names.push_back(n + " (trigger)");
      continue;
    }
    if (k < in_loop.size() && (in_loop[k] || runs[k] > 1)) n += "#" + std::to_string(seen[k]++);
    names.push_back(std::move(n));
  }
  return names;
}

isa::Program to_stream_form(const isa::Program &program, const engines::ArchParams &arch,
                            const StreamFormOptions &options, StreamFormStats *stats, const InputSpec *inputs) {
  engines::Memory mem(program, arch);
  mem.set_core(options.shard, options.rank);
  const bool traced = has_data_dependent_control(program);
  Schedule s;
  if (traced) {
    load_inputs(program, mem, inputs ? *inputs : InputSpec{});
    s = build_schedule_executing(program, mem, arch);
  } else {
    s = build_schedule(program, mem, arch);
  }
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
  StreamFormStats st;
  auto emit = [&](isa::Inst in) {
    in.index = static_cast<int>(out.insts.size());
    isa::Node node;
    node.inst = in.index;
    out.body.push_back(node);
    out.insts.push_back(std::move(in));
  };

  // Branches along the trace: the edge taken becomes the fall-through (the next instruction of the stream is where
  // it went), the other edge the off-trace Exit appended at the end.
  std::vector<int> first_of_node(program.body.size() + 1, -1);
  std::vector<int> node_of_inst(program.insts.size(), -1);
  {
    std::function<int(const isa::Node &)> first = [&](const isa::Node &n) -> int {
      if (n.inst >= 0) return n.inst;
      for (const auto &c : n.body)
        if (int k = first(c); k >= 0) return k;
      return -1;
    };
    for (size_t k = program.body.size(); k-- > 0;) {
      first_of_node[k] = first(program.body[k]);
      if (first_of_node[k] < 0) first_of_node[k] = first_of_node[k + 1];
      if (program.body[k].kind == isa::Node::Kind::Inst && program.body[k].inst >= 0)
        node_of_inst[static_cast<size_t>(program.body[k].inst)] = static_cast<int>(k);
    }
  }
  bool off_trace = false;
  auto on_trace = [&](isa::Inst &in, size_t i) {
    using IT = isa::InstructionType;
    if (in.type != IT::CompareAndBranch && in.type != IT::UnconditionalBranch) return;
    const isa::Inst &st = *s.insts[i].d.inst;
    const int next = i + 1 < s.insts.size() ? s.insts[i + 1].d.inst->index : -1;
    auto lands = [&](const std::string &name, const char *field) {
      int node = -1;
      if (name.empty()) {
        const int at = st.index >= 0 ? node_of_inst[static_cast<size_t>(st.index)] : -1;
        if (at >= 0) node = at + 1;
      } else {
        for (const auto &b : program.blocks)
          if (b.name == name) node = static_cast<int>(b.first);
      }
      if (node < 0)
        throw SemanticError({program.file, st.index, st.name, field},
                            std::string(isa::inst_type_name(st.type)) + " outside the top-level blocks cannot be "
                            "lowered to a bundle stream (a stream is one trace of the top-level blocks)");
      return first_of_node[static_cast<size_t>(std::min<size_t>(static_cast<size_t>(node), program.body.size()))] == next;
    };
    if (in.type == IT::UnconditionalBranch) {
      in.f.target.clear();
      return;
    }
    const bool t = lands(st.f.on_true, "on_true"), f = lands(st.f.on_false, "on_false");
    in.f.on_true = t ? "" : "off_trace";
    in.f.on_false = f ? "" : "off_trace";
    off_trace = off_trace || !t || !f;
  };
  auto finish = [&] {
    if (!off_trace) return;
    isa::Inst ex;
    ex.type = isa::InstructionType::Exit;
    ex.engine = isa::Engine::SP;
    ex.name = "off_trace";
    out.blocks.push_back({"off_trace", out.insts.size()});
    emit(std::move(ex));
  };

  if (s.explicit_sync) {
    // A scheduled program orders its queues with its own semaphores: keep them as they are.
    for (size_t i = 0; i < s.insts.size(); ++i) {
      isa::Inst in = concrete(s.insts[i], names[i]);
      on_trace(in, i);
      emit(std::move(in));
    }
    finish();
    st.instructions = static_cast<int64_t>(out.insts.size());
    if (stats) *stats = st;
    return out;
  }

  // Vector clocks over the schedule: know[i][q] = how many queue-q instructions are known complete when
  // instruction i starts, through its waits and, transitively, its producers' waits. Queue order alone gives an
  // instruction its predecessors' knowledge but not their completion (the core completes an instruction its
  // latency after it leaves the queue; completions stay in queue order, sim/core_issue.cpp). A wait that this
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
    on_trace(in, i);
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
  finish();
  st.instructions = static_cast<int64_t>(out.insts.size());
  if (stats) *stats = st;
  return out;
}

} // namespace neuronsim::sim
