// The ACT / DVE accumulator registers: one fp32 register per partition (EngineState::acc; each engine has its
// own EngineState, so ACT's "reduce_regs" and DVE's accumulators are separate, reference neuron-arch.md 3.2),
// driven across instructions by the EngineAccumulationType command, and drained by ReadActivationAccumulator /
// ActivationReadAccumulator (ACT) and DveReadAccumulator (DVE).
//
// The command machine (spec 000: the `acc` and `reduce_cmd` JSON keys both deserialize to
// EngineAccumulationType; ReduceCmdType is dormant):
//
//   BIR EngineAccumulationType | NKI nki.isa.reduce_cmd   | effect on reg[p] before/with this instruction
//   ---------------------------+--------------------------+--------------------------------------------------
//   Idle (0)                   | idle (0)                 | untouched
//   Zero (1)                   | reset (1)                | reg = reset(op); nothing folded
//   Accumulate (2)             | reduce (2)               | reg = fold(op, reg, row)
//   ZeroAccumulate (3)         | reset_reduce (3)         | reg = fold(op, reset(op), row)
//   AddAccumulate (4)          | (none)                   | INFERRED: as Accumulate ("add into the existing
//                              |                          |   accumulator region", arch/activation-engine.md)
//   LoadAccumulate (5)         | load_reduce (4)          | reg = fold(op, load[p], row); the load value is an
//                              |                          |   fp32 immediate or [P, 1] operand (which one is
//                              |                          |   documented per instruction)
// NKI's ordinals stop at 4 (KLR maps load_reduce to LoadAccumulate, reference neuron-arch.md 3.2); BIR inserts
// AddAccumulate at 4 (reference bir/structural-enums.md via spec 000).
// reset(op): 0 for add/subtract, 1 for mult, -inf for max, +inf for min (NKI tensor_scalar_cumulative /
// neuron-arch.md 3.2 "Resets are op-dependent"); other ops take their ALU identity, else 0 (INFERRED).
// fold(op, reg, row) = ((reg op x0) op x1) ... in element order through alu_fold (spec 000: acc op x).
#include <algorithm>
#include <cmath>
#include <limits>

#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

float acc_reset_value(isa::AluOp op) {
  switch (op) {
  case isa::AluOp::add: case isa::AluOp::subtract: return 0.0f;
  case isa::AluOp::mult: return 1.0f;
  case isa::AluOp::max: return -std::numeric_limits<float>::infinity();
  case isa::AluOp::min: return std::numeric_limits<float>::infinity();
  default: return alu_has_identity(op) ? alu_identity(op) : 0.0f;
  }
}

std::vector<float> accumulator_seed(const Memory &m, EngineState &st, isa::EngineAccumulationType cmd,
                                    isa::AluOp op, int64_t parts, const std::vector<float> *load,
                                    const char *field) {
  using A = isa::EngineAccumulationType;
  if (static_cast<int64_t>(st.acc.size()) < parts) st.acc.resize(static_cast<size_t>(parts), 0.0f);
  switch (cmd) {
  case A::Zero: case A::ZeroAccumulate:
    return std::vector<float>(static_cast<size_t>(parts), acc_reset_value(op));
  case A::LoadAccumulate:
    // reference sim-matmul-mx.md 7: "an instruction that does a LoadAccumulate must provide an immediate value
    // to load", of the same number of partitions as src/dst.
    if (!load || static_cast<int64_t>(load->size()) < parts)
      unsupported(m, field, "an instruction that does a LoadAccumulate must provide a value to load");
    return std::vector<float>(load->begin(), load->begin() + parts);
  default:
    return std::vector<float>(st.acc.begin(), st.acc.begin() + parts);
  }
}

void engine_accumulate(const Memory &m, EngineState &st, isa::EngineAccumulationType cmd, isa::AluOp op,
                       const Tile &rows, const std::vector<float> *load, const char *field) {
  using A = isa::EngineAccumulationType;
  if (cmd == A::Idle) return;
  const int64_t parts = rows.rows();
  std::vector<float> seed = accumulator_seed(m, st, cmd, op, parts, load, field);
  const bool fold = cmd != A::Zero;
  for (int64_t p = 0; p < parts; ++p) {
    float v = seed[static_cast<size_t>(p)];
    if (fold) v = alu_fold(op, v, rows.row(p).data(), rows.cols());
    st.acc[static_cast<size_t>(p)] = v;
  }
}

void drain_accumulator(Memory &m, const EngineState &st, const Access &out, bool negate, const char *field) {
  const int64_t parts = out.partitions();
  if (out.free_elements() != 1)
    unsupported(m, field, "an accumulator read-out has one element per partition, the output has " +
                              std::to_string(out.free_elements()));
  if (parts > static_cast<int64_t>(st.acc.size()))
    unsupported(m, field, "more partitions than accumulator registers");
  std::vector<float> v(st.acc.begin(), st.acc.begin() + parts);
  if (negate)
    for (auto &x : v) x = -x;
  m.write_f32(out, v.data());
}

// ReadActivationAccumulator / ActivationReadAccumulator / DveReadAccumulator: outs[0] ([P, 1]) = the registers,
// a plain overwrite (reference sim-matmul-mx.md 7: memcpy of the live buffer, then Memory.write with accMode 0).
// DveReadAccumulator's `negated` key has no row in inst_fields.def; `negate` is honoured instead
// (INFERRED stand-in, reference json-schema-catalog.md: InstDveReadAccumulator `negated` +0xF0).
void exec_read_accumulator(const DynInst &d, Memory &m, EngineState &st) {
  drain_accumulator(m, st, out_ap(d, m, 0), d.inst->f.negate, "outs[0]");
}

} // namespace neuronsim::engines::ops
