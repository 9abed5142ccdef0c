// NoOp and pure synchronization / control instructions: no effect on memory. Their semaphore waits and updates
// are applied by the engine around execute(); LoadActFuncSet is a validity gate only (reference
// neuronx-cc/bir/sim-activation-pwp.md 1 QUIRK: it does not model LUT-set residency).
#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

void exec_noop(const DynInst &, Memory &, EngineState &) {}

} // namespace neuronsim::engines::ops
