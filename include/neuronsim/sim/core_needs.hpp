// How many NeuronCores a kernel needs, read from the kernel itself before any run (README "Multi-core runs"),
// and the check every command makes of a run's cores against it, so that a kernel written for several cores
// never runs (numerically or timing-only) on fewer with a single-core answer:
//   - the collectives' replica groups, a CollectiveSend/Recv's peer_id and a CoreBarrier's cores name
//     physical cores (reference neuronx-cc/bir/sim-bn-rng-collective-dma.md 4.1);
//   - a Permute's src_target_pairs and the constant recv_from_rank / send_to_rank of SendRecv name ranks
//     (logical cores);
//   - a ShardIDKind expression's `ub` is the number of shards of a logical core (reference
//     neuronx-cc/bir/wire-versioning.md): the kernel is written for LNC = ub.
#pragma once

#include <cstdint>
#include <string>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/program.hpp"

namespace neuronsim::sim {

struct CoreNeeds {
  int cores = 0; // the highest physical core the kernel names, plus one; 0: it names none
  int ranks = 0; // the highest rank it names, plus one; 0: none
  int lnc = 0;   // the ub of its ShardIDKind expressions when above 1; 0: no shard use
  int64_t highest_core = -1, highest_rank = -1;  // as named (cores and ranks above count to 2^20 at most)
  // Where each comes from (the first instruction and field that names the highest), for messages.
  ErrorContext cores_at, ranks_at, lnc_at;
  // The fewest physical cores a run needs with `lnc` cores per logical core.
  int min_cores(int lnc) const;
};
CoreNeeds core_needs(const isa::Program &p);

// How a message names the run's cores and LNC: "--cores" / "--lnc", or Python's "cores" / "lnc".
struct CoreSettingNames {
  std::string cores = "--cores", lnc = "--lnc";
};

// Checks a run of `cores` physical cores, `lnc` per logical core, against the kernel; InputError naming the
// instruction and field otherwise:
//   - every core a replica group, peer_id or CoreBarrier names exists, no core is in two groups of one
//     collective, and a collective's groups (when it has any) hold every core of the run: a core in none
//     would skip the collective and keep its output unwritten;
//   - every rank a Permute or SendRecv names exists;
//   - a ShardIDKind ub above 1 equals lnc.
void check_kernel_cores(const isa::Program &p, int cores, int lnc, const CoreSettingNames &names = {});

} // namespace neuronsim::sim
