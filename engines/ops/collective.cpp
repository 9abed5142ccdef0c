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
//   PermuteImplicit, PermuteReduceImplicit, PermuteReduce, AllToAllV, SendRecv, SendRecvCCE run the N-rank model
//                      below over a group of this core alone (their operands are not one input per output).
// In a single-core run anything naming more than one rank is refused with a SemanticError that says to run it
// on several cores (--cores N).
#include <algorithm>
#include <functional>

#include "engines/ops/common.hpp"
#include "neuronsim/engines/collective.hpp"

namespace neuronsim::engines::ops {

namespace {

[[noreturn]] void multi_rank(const Memory &m, const char *field, const std::string &what) {
  unsupported(m, field,
              what + ": this run has one NeuronCore (rank 0); a multi-rank collective needs the other ranks' "
                     "cores: run it with --cores N (docs/multicore.md)");
}

} // namespace

void exec_collective_compute(const DynInst &d, Memory &m, EngineState &) {
  const auto &f = d.inst->f;
  for (const auto &g : f.replica_groups)
    if (g.size() > 1) multi_rank(m, "replica_groups", "a replica group has " + std::to_string(g.size()) + " ranks");
  const std::string &kind = f.collective_kind;
  // The kinds whose operands are not one input per output (PermuteReduceImplicit's two inputs, AllToAllV's
  // metadata, SendRecv's peer expressions) run the N-rank model over a group of this core alone.
  if (kind == "PermuteImplicit" || kind == "PermuteReduceImplicit" || kind == "PermuteReduce" ||
      kind == "AllToAllV" || kind == "SendRecv" || kind == "SendRecvCCE")
    return execute_collective_compute({CollectiveRank{&d, &m, m.rank()}});
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

std::string core_of(const CollectiveRank &r) { return "core " + std::to_string(r.rank); }

void require_reduce_op(const CollectiveRank &r, isa::AluOp op) {
  if (op != isa::AluOp::add && op != isa::AluOp::max && op != isa::AluOp::min)
    unsupported(*r.m, "op", std::string("Unsupported OP type '") + isa::alu_name(op) + "' (add, max, min only)");
}

isa::AluOp reduce_op(const CollectiveRank &r) {
  const isa::AluOp op = r.d->inst->has(isa::Field::op) ? r.d->inst->f.op : isa::AluOp::add;
  require_reduce_op(r, op);
  return op;
}

// doReduction (4.2): res = ins[0], then each further input folded in list order.
std::vector<float> do_reduction(isa::AluOp op, const std::vector<const std::vector<float> *> &ins) {
  std::vector<float> res = *ins[0];
  for (size_t k = 1; k < ins.size(); ++k)
    for (size_t e = 0; e < res.size(); ++e) res[e] = collective_reduce(op, res[e], (*ins[k])[e]);
  return res;
}

// Every rank's input `i`, all of one element count (the count of the first rank's).
std::vector<std::vector<float>> gather_inputs(const std::vector<CollectiveRank> &group, size_t i) {
  const std::string f = "ins[" + std::to_string(i) + "]";
  std::vector<std::vector<float>> ins;
  for (const auto &r : group) {
    if (!ops::has_in_ap(*r.d, i)) unsupported(*r.m, f, core_of(r) + " has no input access " + f);
    ins.push_back(read_all(*r.m, ops::in_ap(*r.d, *r.m, i)));
    if (ins.back().size() != ins[0].size())
      unsupported(*r.m, f,
                  core_of(r) + "'s input has " + std::to_string(ins.back().size()) + " elements, " +
                      core_of(group[0]) + "'s " + std::to_string(ins[0].size()));
  }
  return ins;
}

void write_out(const CollectiveRank &r, const std::vector<float> &v) {
  if (r.d->outs.empty()) unsupported(*r.m, "outs[0]", core_of(r) + ": a collective needs an output access");
  const Access &o = ops::out_ap(*r.d, *r.m, 0);
  if (elems(o) != static_cast<int64_t>(v.size()))
    unsupported(*r.m, "outs[0]",
                core_of(r) + "'s output has " + std::to_string(elems(o)) + " elements, the data it receives " +
                    std::to_string(v.size()));
  r.m->write_f32(o, v.data());
}

// PermuteImplicit (kind 9) shares birsim's Permute arm (4, `case 7: case 9`), its source "named by replica_groups"
// (4.3). The rule is NKI's collective_permute_implicit (public NKI docs, nki.collectives.collective_permute_implicit):
// in each replica-group rank list, a ring in list order, each rank sends to its successor and receives from its
// predecessor: the output of position p <- the input of position (p - 1) mod n.
// PermuteReduce (kind 8) falls into birsim's default arm, an identity copy asserting equal element counts (4,
// QUIRK): each rank's output <- its own input, no reduction (`identity`).
void permute_implicit(const std::vector<CollectiveRank> &group, bool identity) {
  const auto ins = gather_inputs(group, 0);
  const size_t n = group.size();
  for (size_t p = 0; p < n; ++p) write_out(group[p], ins[identity ? p : (p + n - 1) % n]);
}

// PermuteReduceImplicit (kind 10, birsim's doCollectivePermuteReduceImplicit, one of the four doReduction users,
// 4.2). NKI's collective_permute_implicit_reduce (public NKI docs): each rank reduces its two inputs, op(ins[0],
// ins[1]) by doReduction's fold (add / max / min, the accumulator ins[0] kept on a NaN), sends the result to its
// ring successor and receives its predecessor's into its output.
void permute_reduce_implicit(const std::vector<CollectiveRank> &group) {
  const auto a = gather_inputs(group, 0), b = gather_inputs(group, 1);
  if (b[0].size() != a[0].size())
    unsupported(*group[0].m, "ins[1]",
                core_of(group[0]) + "'s second input has " + std::to_string(b[0].size()) +
                    " elements, its first " + std::to_string(a[0].size()));
  const size_t n = group.size();
  std::vector<std::vector<float>> res;
  for (size_t p = 0; p < n; ++p) res.push_back(do_reduction(reduce_op(group[p]), {&a[p], &b[p]}));
  for (size_t p = 0; p < n; ++p) write_out(group[p], res[(p + n - 1) % n]);
}

// A rank expression (recv_from_rank / send_to_rank) on its core: constants, ShardIDKind and affine forms of them
// (the reader refuses loop variables); a register has no value at the rendezvous and is refused.
int64_t eval_rank(const CollectiveRank &r, const isa::Expr &e, const std::string &field) {
  std::function<void(const isa::Expr &)> check = [&](const isa::Expr &x) {
    if (x.kind == isa::Expr::Kind::Register)
      unsupported(*r.m, field, core_of(r) + ": a register ('" + x.regref + "') in a rank expression is not supported");
    for (const auto &k : x.kids) check(k);
  };
  check(e);
  return e.eval(nullptr, r.m->shard());
}

size_t position_of(const std::vector<CollectiveRank> &group, const CollectiveRank &r, int64_t rank,
                   const std::string &field) {
  for (size_t p = 0; p < group.size(); ++p)
    if (group[p].rank == rank) return p;
  std::string members;
  for (const auto &g : group) members += (members.empty() ? "" : ", ") + std::to_string(g.rank);
  unsupported(*r.m, field,
              core_of(r) + " names rank " + std::to_string(rank) + ", outside its replica group {" + members +
                  "}: no rank of the group would send to it (deadlock)");
}

// SendRecv (kind 0, birsim doCollectiveSendRecv, 4.3): a point-to-point routed copy, this rank's output <- the
// input of the peer its `recv_from_rank` QuasiAffineExpr names (exactly one). SendRecvCCE (kind 1): the inputs of
// every rank `recv_from_rank` lists, folded by doReduction in list order (4.2, 4.3). Ranks are the group's
// members (replica_groups). A `send_to_rank` must name a rank whose recv_from_rank names this one.
void send_recv(const std::vector<CollectiveRank> &group, bool cce) {
  const auto ins = gather_inputs(group, 0);
  std::vector<std::vector<size_t>> from(group.size());
  for (size_t p = 0; p < group.size(); ++p) {
    const CollectiveRank &r = group[p];
    const auto &rf = r.d->inst->recv_from_rank;
    if (rf.empty() || (!cce && rf.size() != 1))
      unsupported(*r.m, "recv_from_rank",
                  core_of(r) + ": " + (cce ? "SendRecvCCE needs one or more" : "SendRecv needs exactly one") +
                      " rank in recv_from_rank, it has " + std::to_string(rf.size()));
    for (size_t i = 0; i < rf.size(); ++i) {
      const std::string f = "recv_from_rank[" + std::to_string(i) + "]";
      from[p].push_back(position_of(group, r, eval_rank(r, rf[i], f), f));
    }
  }
  for (size_t p = 0; p < group.size(); ++p) {
    const CollectiveRank &r = group[p];
    if (r.d->inst->send_to_rank.empty()) continue;
    const size_t t = position_of(group, r, eval_rank(r, r.d->inst->send_to_rank[0], "send_to_rank"), "send_to_rank");
    if (std::find(from[t].begin(), from[t].end(), p) == from[t].end())
      unsupported(*r.m, "send_to_rank",
                  core_of(r) + " sends to rank " + std::to_string(group[t].rank) +
                      ", whose recv_from_rank does not name it (a send with no matching receive)");
  }
  for (size_t p = 0; p < group.size(); ++p) {
    std::vector<const std::vector<float> *> src;
    for (size_t q : from[p]) src.push_back(&ins[q]);
    write_out(group[p], cce ? do_reduction(reduce_op(group[p]), src) : *src[0]);
  }
}

// AllToAllV (kind 6, birsim doCollectiveAllToAllV: "the variable-chunk version" of AllToAll, 4.3). The rule is
// NKI's all_to_all_v (public NKI docs, nki.collectives.all_to_all_v): flat element buffers; a uint32 metadata
// tensor of shape (2-4, n), n the group size, column j for the rank at position j of the group: row 0 send counts,
// row 1 send displacements, row 2 (optional) recv counts, row 3 (optional) recv displacements, all in elements.
// The BIR carries it as the instruction's second input, ins[1] (NKI's metadata_tensor argument after srcs; the
// BIR key set of reference bir-json.md has no count field). Rank r receives from rank j the elements
// in_j[sdispl_j[r], + scount_j[r]) at out_r[rdispl_r[j], + rcount_r[j]). Without row 2 the recv counts are each
// sender's count to this rank; without row 3 the recv displacements are the running sum of the recv counts in
// rank order. Output elements no sender writes keep their contents.
void all_to_all_v(const std::vector<CollectiveRank> &group) {
  const auto ins = gather_inputs(group, 0);
  const size_t n = group.size();
  std::vector<std::vector<int64_t>> meta(n);
  std::vector<int64_t> rows(n);
  for (size_t p = 0; p < n; ++p) {
    const CollectiveRank &r = group[p];
    if (!ops::has_in_ap(*r.d, 1))
      unsupported(*r.m, "ins[1]", core_of(r) + ": AllToAllV needs its metadata tensor (uint32, 2-4 rows x " +
                                      std::to_string(n) + " ranks) as its second input");
    const Access &a = ops::in_ap(*r.d, *r.m, 1);
    const int64_t e = elems(a);
    rows[p] = e / static_cast<int64_t>(n);
    if (e % static_cast<int64_t>(n) != 0 || rows[p] < 2 || rows[p] > 4)
      unsupported(*r.m, "ins[1]",
                  core_of(r) + "'s metadata has " + std::to_string(e) + " elements, not 2, 3 or 4 rows of " +
                      std::to_string(n) + " (the group size)");
    std::vector<int32_t> v(static_cast<size_t>(e));
    r.m->read_i32(a, v.data());
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] < 0)
        unsupported(*r.m, "ins[1]", core_of(r) + "'s metadata row " + std::to_string(i / n) + " column " +
                                        std::to_string(i % n) + " is " + std::to_string(v[i]) + " (> 2^31 - 1)");
    meta[p].assign(v.begin(), v.end());
  }
  auto at = [&](size_t p, size_t row, size_t col) { return meta[p][row * n + col]; };
  const std::string rows_name[4] = {"send counts", "send displacements", "recv counts", "recv displacements"};
  for (size_t j = 0; j < n; ++j)  // sender j's chunks inside its buffer
    for (size_t r = 0; r < n; ++r)
      if (at(j, 1, r) + at(j, 0, r) > static_cast<int64_t>(ins[j].size()))
        unsupported(*group[j].m, "ins[1]",
                    core_of(group[j]) + "'s metadata column " + std::to_string(r) + ": send displacement " +
                        std::to_string(at(j, 1, r)) + " + count " + std::to_string(at(j, 0, r)) +
                        " is beyond its input's " + std::to_string(ins[j].size()) + " elements");
  for (size_t r = 0; r < n; ++r) {
    const CollectiveRank &rr = group[r];
    if (rr.d->outs.empty()) unsupported(*rr.m, "outs[0]", core_of(rr) + ": a collective needs an output access");
    const Access &o = ops::out_ap(*rr.d, *rr.m, 0);
    const int64_t out_n = elems(o);
    std::vector<int64_t> rcount(n), rdispl(n);
    int64_t run = 0, covered = 0;
    for (size_t j = 0; j < n; ++j) {
      rcount[j] = at(j, 0, r);
      if (rows[r] >= 3 && at(r, 2, j) != rcount[j])
        unsupported(*rr.m, "ins[1]",
                    core_of(rr) + "'s metadata recv count from rank " + std::to_string(group[j].rank) + " is " +
                        std::to_string(at(r, 2, j)) + ", that rank sends it " + std::to_string(rcount[j]));
      rdispl[j] = rows[r] >= 4 ? at(r, 3, j) : run;
      run += rcount[j];
      covered += rcount[j];
      if (rdispl[j] + rcount[j] > out_n)
        unsupported(*rr.m, "ins[1]",
                    core_of(rr) + "'s " + (rows[r] >= 4 ? rows_name[3] : std::string("recv displacement (running sum)")) +
                        " from rank " + std::to_string(group[j].rank) + ": " + std::to_string(rdispl[j]) + " + " +
                        std::to_string(rcount[j]) + " is beyond its output's " + std::to_string(out_n) + " elements");
    }
    // Read the output only when the chunks may leave some of it unwritten (no spurious uninitialised reads).
    std::vector<float> out(static_cast<size_t>(out_n));
    if (covered < out_n || rows[r] >= 4) rr.m->read_f32(o, out.data());
    for (size_t j = 0; j < n; ++j)
      std::copy_n(ins[j].begin() + at(j, 1, r), rcount[j], out.begin() + rdispl[j]);
    rr.m->write_f32(o, out.data());
  }
}

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
  if (reducing) require_reduce_op(first, op);
  if (kind == "PermuteImplicit" || kind == "PermuteReduce") return permute_implicit(group, kind == "PermuteReduce");
  if (kind == "PermuteReduceImplicit") return permute_reduce_implicit(group);
  if (kind == "AllToAllV") return all_to_all_v(group);
  if (kind == "SendRecv" || kind == "SendRecvCCE") return send_recv(group, kind == "SendRecvCCE");
  if (!reducing && kind != "AllGather" && kind != "AllToAll" && kind != "Permute")
    unsupported(*first.m, "kind",
                "collective kind '" + kind + "' across " + std::to_string(n) +
                    " ranks is not modelled (AllReduce, ReduceScatter, AllGather, AllToAll, AllToAllV, Permute, "
                    "PermuteImplicit, PermuteReduce, PermuteReduceImplicit, SendRecv, SendRecvCCE are)");
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
      std::vector<const std::vector<float> *> in_ptrs;  // folded in rank order
      for (const auto &v : ins) in_ptrs.push_back(&v);
      const std::vector<float> res = do_reduction(op, in_ptrs);
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

// The traffic of each kind on the link model (engines/cost/link.cpp):
//  - AllToAllV exchanges a chunk between every pair of ranks, as AllToAll does: N-1 steps of buffer/N. The counts
//    are data (read only in a numeric run), so the model times the whole input buffer, their upper bound.
//  - Permute, PermuteImplicit, PermuteReduceImplicit, SendRecv: each rank sends one buffer to one peer (its ring
//    successor, its pair's target, its receiver), all at once on distinct links: one step of the buffer.
//    PermuteReduceImplicit's reduction is local, before the send of a result the size of one input.
//  - SendRecvCCE: one step, the receiver taking one buffer from each rank recv_from_rank lists (sim/device.cpp
//    multiplies the bytes by their number).
//  - PermuteReduce: birsim's identity copy moves nothing, but the instruction is a permute on hardware; timed as
//    one, one step of the buffer.
LinkPattern link_pattern(const std::string &kind) {
  if (kind == "AllReduce") return LinkPattern::AllReduce;
  if (kind == "AllGather") return LinkPattern::AllGather;
  if (kind == "ReduceScatter") return LinkPattern::ReduceScatter;
  if (kind == "AllToAll" || kind == "AllToAllV") return LinkPattern::AllToAll;
  return LinkPattern::PointToPoint;
}

} // namespace neuronsim::engines
