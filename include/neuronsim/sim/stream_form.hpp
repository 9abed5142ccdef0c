// A BIR program in the stream form, the form a bundle stream carries (DESIGN.md 1 job 3, issue 6): loops
// unrolled, every address constant, tensors placed, engines chosen and the synchronization the scheduler
// inferred written out as explicit semaphores. The result runs on the same core and gives the same outputs;
// `isa::write_bundle_dir` can encode it (the stream format writes each instruction once and has no loops,
// docs/bundle-layout.md).
#pragma once

#include <string>
#include <vector>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/isa/program.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

struct StreamFormOptions {
  // The shared sync band of a compute/DMA bundle holds one wait and one update (docs/bundle-layout.md). When
  // true, the waits of an instruction that the schedule does not already imply and that do not fit its own
  // band go to EventSemaphore instructions ("sync carriers", two waits each) placed just before it on the same
  // queue; each carrier costs its engine one instruction slot, so the simulated time can then grow slightly.
  // When false, every wait stays on its instruction: exact timing, but not always encodable.
  bool fit_bundles = true;
  // The core the stream is lowered for (sim/device.hpp): its shard id (ShardIDKind expressions in addresses
  // and loop bounds resolve to it) and rank. A multi-core encode lowers once per core (docs/multicore.md).
  int64_t shard = 0, rank = 0;
};

struct StreamFormStats {
  int64_t instructions = 0;    // lowered instructions, carriers included
  int64_t carriers = 0;        // EventSemaphore sync carriers added
  int64_t waits_dropped = 0;   // waits implied by earlier waits (transitively) and left out
};

// Program order in, program order out: one static Inst per dynamic instruction, named by dynamic_names(),
// engine = its queue's engine (Engine::DMA for a DMA queue: the transfer increments the semaphore of its DMA
// queue, which is how the scheduler finds the queue again), start = the resolved access start, immediates
// resolved for the iteration, SBUF/PSUM tensors `allocated` where Memory placed them. Queue q's instructions
// increment semaphore q; a wait for "queue q has completed n instructions" becomes SemWait{q, GeImm, n}.
// Programs that already carry their own semaphores keep them. Throws what build_schedule throws.
// Data-dependent control flow (CompareAndBranch, DynamicForLoop, DoWhile) is lowered along the path the program
// takes on `inputs` (null or missing ones: generated as `run` generates them; docs/bundle-layout.md "Branches in a
// stream"): the program is executed on them while it is scheduled, and each dynamic
// branch is kept with the edge it took as the fall-through ("") and the other edge naming block "off_trace": an
// Exit after the trace, so that a run of the stream on inputs that leave the path stops there instead of
// silently following it.
isa::Program to_stream_form(const isa::Program &program, const engines::ArchParams &arch,
                            const StreamFormOptions &options = {}, StreamFormStats *stats = nullptr,
                            const InputSpec *inputs = nullptr);

// The name of each dynamic instruction of `schedule` (indexed like schedule.insts): the static name, plus
// "#<k>" for the k-th execution (from 0) of an instruction inside a loop or executed more than once (a branch
// back edge). The bundle side of `validate` matches instructions by these names.
std::vector<std::string> dynamic_names(const isa::Program &program, const Schedule &schedule);

// The architecture a bundle generation runs on (V2 = trn1, V3 = trn2, V4 = trn3; isa/tables.hpp CoreGen).
std::string arch_for_gen(isa::CoreGen gen);

} // namespace neuronsim::sim
