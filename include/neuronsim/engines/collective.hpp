// Collectives between cores (reference neuronx-cc/bir/sim-bn-rng-collective-dma.md 4): the numerics of one
// collective over every rank of its group, and the link model that times it (docs/multicore.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/engines/memory.hpp"
#include "neuronsim/engines/ops.hpp"

namespace neuronsim::engines {

// One rank's side of a collective: its instruction (resolved on that core) and that core's memory.
struct CollectiveRank {
  const DynInst *d = nullptr;
  Memory *m = nullptr;
  int64_t rank = 0;
};

// doReduction's element step (4.2): add, or the inline SSE maxss/minss with the running accumulator as the
// register source, so a NaN in a later rank's input is dropped and a NaN in the accumulator stays.
float collective_reduce(isa::AluOp op, float acc, float x);

// Executes one CollectiveCompute over the ranks of its group (in group order, each rank's inputs as they are when
// the last rank reaches it): AllReduce, ReduceScatter (rank r keeps chunk r of the reduction), AllGather (rank
// order, flat concatenation), AllToAll (rank r's chunk p <- rank p's chunk r), Permute (src_target_pairs), and after
// the public NKI docs PermuteImplicit, PermuteReduceImplicit, AllToAllV, SendRecv, SendRecvCCE, and PermuteReduce
// (birsim's identity copy); engines/ops/collective.cpp gives each rule and its source.
// SemanticError naming the field for a kind or shape it cannot route.
void execute_collective_compute(const std::vector<CollectiveRank> &group);
// A CollectiveSend / CollectiveRecv pair: the receiver's outs[0] <- the sender's ins[0].
void execute_send_recv(const CollectiveRank &send, const CollectiveRank &recv);

// The link model: the time (ns) of one collective from the moment the last rank reaches it. A ring over `ranks`
// ranks moving `bytes` (the per-rank buffer: the AllReduce input, the AllGather output, the ReduceScatter input):
// AllReduce 2(N-1) steps, AllGather / ReduceScatter / AllToAll N-1 steps, each of bytes/N; a point-to-point
// transfer (Send/Recv, Permute) one step of `bytes`; a barrier N-1 steps of no bytes. A step costs the link's
// latency plus its bytes over the link's bandwidth; `inter_device` when the ring crosses devices (its slowest link).
enum class LinkPattern { AllReduce, AllGather, ReduceScatter, AllToAll, PointToPoint, Barrier };
double collective_link_ns(const ArchParams &arch, LinkPattern pattern, int64_t ranks, int64_t bytes,
                          bool inter_device);
LinkPattern link_pattern(const std::string &collective_kind);
// The ring's steps and the bytes one member sends per step (the terms of collective_link_ns: its time is
// steps x (latency + step_bytes / bandwidth)).
struct LinkSteps {
  double steps = 0;
  double step_bytes = 0;
};
LinkSteps collective_link_steps(LinkPattern pattern, int64_t ranks, int64_t bytes);

} // namespace neuronsim::engines
