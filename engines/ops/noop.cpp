// NoOp and pure synchronization / control instructions: no effect on memory. Their semaphore waits and updates
// are applied by the engine around execute(); LoadActFuncSet is a validity gate only (reference
// neuronx-cc/bir/sim-activation-pwp.md 1 QUIRK: it does not model LUT-set residency).
#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

void exec_noop(const DynInst &d, Memory &m, EngineState &) {
  // LoadActFuncSet's one check: birsim's visitInstLoadActFuncSet (@0x1b2070) asserts ActFuncSetId > -1 (reference
  // neuronx-cc/bir/sim-activation-pwp.md 1 QUIRK and its function map: "no-op validity gate"). A negative set id
  // was accepted silently before.
  if (d.inst && d.inst->type == isa::InstructionType::LoadActFuncSet && d.inst->f.act_func_set_id < 0)
    unsupported(m, "act_func_set_id",
                "an activation function set id must be >= 0 (birsim asserts ActFuncSetId > -1), got " +
                    std::to_string(d.inst->f.act_func_set_id));
}

} // namespace neuronsim::engines::ops
