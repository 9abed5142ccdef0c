// The copy family: Load, Save, TensorCopy, GenericCopy, AbstractCopy.
// reference neuronx-cc/bir/sim-elementwise-datamove.md 5.1: all are one-line thunks to doCopy, the universal
// AP -> AP copy; strides and a dtype cast fall out of the walk (cast-on-copy when the dtypes differ).
#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

void exec_copy(const DynInst &d, Memory &m, EngineState &) {
  move_elements(m, in_ap(d, m, 0), out_ap(d, m, 0), nullptr);
}

} // namespace neuronsim::engines::ops
