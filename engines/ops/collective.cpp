// Collectives on one NeuronCore (reference neuronx-cc/bir/sim-bn-rng-collective-dma.md 4). birsim is an N-rank
// registry model; neuronsim models a single NeuronCore, so only the single-rank case executes:
//   CollectiveCompute  every kind with a replica group of at most one member: the fold/route over one rank is a
//                      copy of each input to the output at the same index (doReduction: res = ins[0]; AllGather,
//                      AllToAll, Permute, SendRecv route the one buffer to itself). AllReduce-family ops must be
//                      add / max / min (doReduction's "Unsupported OP type").
//   CollectiveSend / CollectiveRecv  peer_id 0 (this rank): Send has no local effect; Recv copies ins[0] to
//                      outs[0] when it has both (loopback), else has nothing to receive.
//   CoreBarrier        one core: nothing to wait for.
// Anything naming more than one rank is refused with a SemanticError that says what is missing: the per-core
// registry of peer input buffers (NeuronCoresManager) that a multi-rank collective reads.
#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

namespace {

[[noreturn]] void multi_rank(const Memory &m, const char *field, const std::string &what) {
  unsupported(m, field,
              what + ": neuronsim simulates one NeuronCore (rank 0); a multi-rank collective needs the other "
                     "ranks' buffers (birsim's NeuronCoresManager registry), which are not modelled");
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
