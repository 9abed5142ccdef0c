// Collectives (reference neuronx-cc/bir/sim-bn-rng-collective-dma.md 4). birsim is an N-rank registry model. A run
// of several cores (sim/device.hpp) executes them across the cores with the N-rank functions at the end of this
// file; in a single-core run only the single-rank case executes:
//   CollectiveCompute  every kind with a replica group of at most one member: the fold/route over one rank is a
//                      copy of each input to the output at the same index (doReduction: res = ins[0]; AllGather,
//                      AllToAll, Permute, SendRecv route the one buffer to itself). AllReduce-family ops must be
//                      add / max / min (doReduction's "Unsupported OP type").
//   CollectiveSend / CollectiveRecv  peer_id 0 (this rank): Send has no local effect; Recv copies ins[0] to
//                      outs[0] when it has both (loopback), else has nothing to receive.
//   CoreBarrier        one core: nothing to wait for.
// In a single-core run anything naming more than one rank is refused with a SemanticError that says to run it
// on several cores (--cores N).
#include "engines/ops/common.hpp"
#include "neuronsim/engines/collective.hpp"

namespace neuronsim::engines::ops {

namespace {

[[noreturn]] void multi_rank(const Memory &m, const char *field, const std::string &what) {
  unsupported(m, field,
              what + ": this run has one NeuronCore (rank 0); a multi-rank collective needs the other ranks' "
                     "cores: run it with --cores N (README \"Multi-core runs\")");
}

} // namespace

void exec_collective_compute(const DynInst &d, Memory &m, EngineState &) {
  const auto &f = d.inst->f;
  for (const auto &g : f.replica_groups)
    if (g.size() > 1) multi_rank(m, "replica_groups", "a replica group has " + std::to_string(g.size()) + " ranks");
  const std::string &kind = f.collective_kind;
  const bool reducing = kind == "AllReduce" || kind == "ReduceScatter" || kind == "SendRecvCCE" ||
                        kind == "PermuteReduceImplicit";
  if (reducing && d.inst->has(isa::Field::op) && f.op != isa::AluOp::add && f.op != isa::AluOp::max &&
      f.op != isa::AluOp::min)
    unsupported(m, "op", std::string("Unsupported OP type '") + isa::alu_name(f.op) + "' (add, max, min only)");
  const size_t n = std::min(d.ins.size(), d.outs.size());
  if (n == 0) unsupported(m, "ins[0]", "a collective needs an input and an output access");
  for (size_t i = 0; i < n; ++i) {
    const std::string fld = "outs[" + std::to_string(i) + "]";
    move_elements(m, in_ap(d, m, i), out_ap(d, m, i), nullptr, fld.c_str());
  }
}

void exec_collective_send_recv(const DynInst &d, Memory &m, EngineState &) {
  if (d.inst->f.peer_id != 0)
    multi_rank(m, "peer_id", "point-to-point with peer " + std::to_string(d.inst->f.peer_id));
  if (d.inst->type == isa::InstructionType::CollectiveRecv && has_in_ap(d, 0) && !d.outs.empty())
    move_elements(m, in_ap(d, m, 0), out_ap(d, m, 0), nullptr);
}

void exec_core_barrier(const DynInst &d, Memory &m, EngineState &) {
  if (d.inst->f.cores.size() > 1)
    multi_rank(m, "cores", "a barrier across " + std::to_string(d.inst->f.cores.size()) + " cores");
}

} // namespace neuronsim::engines::ops

// ------------------------------------------------------------------------------------------------ N ranks
// A device of several cores (sim/device.hpp) executes each collective here once every rank of its group has
// reached it (the rendezvous), reading every rank's real input buffer as birsim's NeuronCoresManager does
// (reference neuronx-cc/bir/sim-bn-rng-collective-dma.md 4.1, regime (A): bit-exact, fp32 accumulator).
namespace neuronsim::engines {

using ops::elems;
using ops::unsupported;

float collective_reduce(isa::AluOp op, float acc, float x) {
  switch (op) {
  case isa::AluOp::add:
    return acc + x;
  case isa::AluOp::max:
    return x > acc ? x : acc;  // maxss with acc in the source operand: an unordered compare keeps acc
  case isa::AluOp::min:
    return x < acc ? x : acc;
  default:
    return acc;  // refused before (add, max, min only)
  }
}

namespace {

std::vector<float> read_all(Memory &m, const Access &a) {
  std::vector<float> v(static_cast<size_t>(elems(a)));
  m.read_f32(a, v.data());
  return v;
}

void set_context(const CollectiveRank &r) { r.m->set_context_instruction(r.d->inst->index, r.d->inst->name); }

} // namespace

void execute_collective_compute(const std::vector<CollectiveRank> &group) {
  if (group.empty()) return;
  for (const auto &r : group) set_context(r);
  const CollectiveRank &first = group.front();
  const isa::Inst &inst = *first.d->inst;
  const std::string &kind = inst.f.collective_kind;
  const int64_t n = static_cast<int64_t>(group.size());
  const bool reducing = kind == "AllReduce" || kind == "ReduceScatter";
  const isa::AluOp op = inst.has(isa::Field::op) ? inst.f.op : isa::AluOp::add;
  if (reducing && op != isa::AluOp::add && op != isa::AluOp::max && op != isa::AluOp::min)
    unsupported(*first.m, "op", std::string("Unsupported OP type '") + isa::alu_name(op) + "' (add, max, min only)");
  if (!reducing && kind != "AllGather" && kind != "AllToAll" && kind != "Permute")
    unsupported(*first.m, "kind",
                "collective kind '" + kind + "' across " + std::to_string(n) +
                    " ranks is not modelled (AllReduce, ReduceScatter, AllGather, AllToAll, Permute are)");
  size_t pairs = std::min(first.d->ins.size(), first.d->outs.size());
  for (const auto &r : group) pairs = std::min({pairs, r.d->ins.size(), r.d->outs.size()});
  if (pairs == 0) unsupported(*first.m, "ins[0]", "a collective needs an input and an output access");
  for (size_t i = 0; i < pairs; ++i) {
    const std::string in_f = "ins[" + std::to_string(i) + "]", out_f = "outs[" + std::to_string(i) + "]";
    std::vector<std::vector<float>> ins;
    for (const auto &r : group) ins.push_back(read_all(*r.m, ops::in_ap(*r.d, *r.m, i)));
    const size_t k = ins[0].size();
    for (size_t r = 1; r < ins.size(); ++r)
      if (ins[r].size() != k)
        unsupported(*group[r].m, in_f,
                    "rank " + std::to_string(group[r].rank) + "'s input has " + std::to_string(ins[r].size()) +
                        " elements, rank " + std::to_string(first.rank) + "'s " + std::to_string(k));
    auto chunk_of = [&](const CollectiveRank &r, size_t total) {
      if (total % static_cast<size_t>(n) != 0)
        unsupported(*r.m, in_f, std::to_string(total) + " elements do not split into " + std::to_string(n) + " ranks");
      return total / static_cast<size_t>(n);
    };
    if (reducing) {
      std::vector<float> res = ins[0];  // doReduction: res = ins[0], then fold the others in rank order
      for (size_t r = 1; r < ins.size(); ++r)
        for (size_t e = 0; e < k; ++e) res[e] = collective_reduce(op, res[e], ins[r][e]);
      if (kind == "AllReduce") {
        for (const auto &r : group)
          ops::write_flat(*r.m, ops::out_ap(*r.d, *r.m, i), res.data(), static_cast<int64_t>(k), out_f.c_str());
      } else {
        const size_t c = chunk_of(first, k);
        for (size_t r = 0; r < group.size(); ++r)
          ops::write_flat(*group[r].m, ops::out_ap(*group[r].d, *group[r].m, i), res.data() + r * c,
                          static_cast<int64_t>(c), out_f.c_str());
      }
    } else if (kind == "AllGather") {
      std::vector<float> all;
      all.reserve(k * ins.size());
      for (const auto &v : ins) all.insert(all.end(), v.begin(), v.end());
      for (const auto &r : group)
        ops::write_flat(*r.m, ops::out_ap(*r.d, *r.m, i), all.data(), static_cast<int64_t>(all.size()), out_f.c_str());
    } else if (kind == "AllToAll") {
      const size_t c = chunk_of(first, k);
      for (size_t r = 0; r < group.size(); ++r) {
        std::vector<float> out(k);
        for (size_t p = 0; p < group.size(); ++p)
          std::copy(ins[p].begin() + static_cast<std::ptrdiff_t>(r * c),
                    ins[p].begin() + static_cast<std::ptrdiff_t>((r + 1) * c), out.begin() + static_cast<std::ptrdiff_t>(p * c));
        ops::write_flat(*group[r].m, ops::out_ap(*group[r].d, *group[r].m, i), out.data(), static_cast<int64_t>(k),
                        out_f.c_str());
      }
    } else {  // Permute: the target rank's output <- the source rank's input (src_target_pairs, by rank id)
      if (inst.f.src_target_pairs.empty())
        unsupported(*first.m, "src_target_pairs", "a Permute needs [source, target] rank pairs");
      for (const auto &pr : inst.f.src_target_pairs) {
        if (pr.size() != 2) unsupported(*first.m, "src_target_pairs", "each pair is [source rank, target rank]");
        int src = -1, tgt = -1;
        for (size_t r = 0; r < group.size(); ++r) {
          if (group[r].rank == pr[0]) src = static_cast<int>(r);
          if (group[r].rank == pr[1]) tgt = static_cast<int>(r);
        }
        if (src < 0 || tgt < 0)
          unsupported(*first.m, "src_target_pairs",
                      "pair [" + std::to_string(pr[0]) + ", " + std::to_string(pr[1]) + "] names a rank outside the group");
        const CollectiveRank &t = group[static_cast<size_t>(tgt)];
        ops::write_flat(*t.m, ops::out_ap(*t.d, *t.m, i), ins[static_cast<size_t>(src)].data(), static_cast<int64_t>(k),
                        out_f.c_str());
      }
    }
  }
}

void execute_send_recv(const CollectiveRank &send, const CollectiveRank &recv) {
  set_context(send);
  set_context(recv);
  if (send.d->ins.empty() || send.d->ins[0].tensor < 0) unsupported(*send.m, "ins[0]", "a CollectiveSend needs an input access");
  if (recv.d->outs.empty()) unsupported(*recv.m, "outs[0]", "a CollectiveRecv needs an output access");
  const std::vector<float> v = read_all(*send.m, send.d->ins[0]);
  ops::write_flat(*recv.m, recv.d->outs[0], v.data(), static_cast<int64_t>(v.size()), "outs[0]");
}

LinkPattern link_pattern(const std::string &kind) {
  if (kind == "AllReduce") return LinkPattern::AllReduce;
  if (kind == "AllGather") return LinkPattern::AllGather;
  if (kind == "ReduceScatter") return LinkPattern::ReduceScatter;
  if (kind == "AllToAll" || kind == "AllToAllV") return LinkPattern::AllToAll;
  return LinkPattern::PointToPoint;
}

} // namespace neuronsim::engines
