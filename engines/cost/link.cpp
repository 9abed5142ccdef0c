// The collectives' link model (docs/multicore.md): a ring over the ranks of a group. Each step moves one
// chunk between neighbours and costs the link's fixed latency plus its bytes over the link's bandwidth; the
// parameters are the arch JSON's link_* keys, each with its source (most are documented assumptions: there is
// no public figure for the core-to-core path inside a device). Ring step counts: AllReduce 2(N-1) steps of
// size/N (reduce-scatter then all-gather), AllGather and ReduceScatter N-1 steps of size/N.
#include "neuronsim/engines/collective.hpp"

namespace neuronsim::engines {

LinkSteps collective_link_steps(LinkPattern pattern, int64_t ranks, int64_t bytes) {
  if (ranks <= 1) return {};
  const double n = static_cast<double>(ranks);
  const double chunk = static_cast<double>(bytes) / n;
  switch (pattern) {
  case LinkPattern::AllReduce:
    return {2.0 * (n - 1.0), chunk};
  case LinkPattern::AllGather:
  case LinkPattern::ReduceScatter:
  case LinkPattern::AllToAll:
    return {n - 1.0, chunk};
  case LinkPattern::PointToPoint:
    return {1.0, static_cast<double>(bytes)};
  case LinkPattern::Barrier:
    return {n - 1.0, 0.0};
  }
  return {};
}

double collective_link_ns(const ArchParams &arch, LinkPattern pattern, int64_t ranks, int64_t bytes,
                          bool inter_device) {
  if (ranks <= 1) return 0.0;
  const double bw = inter_device ? arch.link_inter_bytes_per_ns : arch.link_intra_bytes_per_ns;
  const double lat = inter_device ? arch.link_inter_latency_ns : arch.link_intra_latency_ns;
  const double n = static_cast<double>(ranks);
  const double chunk = static_cast<double>(bytes) / n;
  switch (pattern) {
  case LinkPattern::AllReduce:
    return 2.0 * (n - 1.0) * (lat + chunk / bw);
  case LinkPattern::AllGather:
  case LinkPattern::ReduceScatter:
  case LinkPattern::AllToAll:
    return (n - 1.0) * (lat + chunk / bw);
  case LinkPattern::PointToPoint:
    return lat + static_cast<double>(bytes) / bw;
  case LinkPattern::Barrier:
    return (n - 1.0) * lat;
  }
  return 0.0;
}

} // namespace neuronsim::engines
