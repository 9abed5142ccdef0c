// TensorScalarCache: the per-partition recurrence behind tensor_scalar_reduce / tensor_scalar_cumulative
// (reference neuronx-cc/bir/sim-elementwise-datamove.md 4 doTensorScalarCache, and the NKI
// tensor_scalar_cumulative pseudocode, which pins where the scalar and the register enter):
//   reg = seed(acc)
//   for i along the free elements of partition p:
//     t   = reverse0 ? op0(imm0, x[i]) : op0(x[i], imm0)
//     reg = reverse1 ? op1(reg, t)     : op1(t, reg)
//     Cumulative / TensorScan: out[i] = reg
//   Reduce: out[p] = reg (one element per partition)
// The cache is the DVE accumulator register: seed(acc) is the accumulator machine (accumulator.cpp) with reduce
// op op1 -- ZeroAccumulate resets (0 add/subtract, 1 mult, -inf max, +inf min), LoadAccumulate loads imm1,
// Accumulate continues from the registers; the final reg is left in the registers. With acc = Idle the seed is
// reset(op1) and the registers are not touched (INFERRED).
// Operands: ins[0] data; ins[1] imm0 (immediate or [P, 1]); ins[2] imm1, only with LoadAccumulate (reference
// isa/tensorscalar-encoding.md: "can only have imm1 if accumulation mode is LoadAccumulate"). outs[0] the
// result; outs[1] (optional) the registers (the trailing DveReadAccumulator).
// reverse0 is taken as the operand swap of stage 0, as NKI's pseudocode and birsim's swap0 have it; the
// encoder page's "reverse0 selects scan direction" reading is not modelled (INFERRED). Cumulative and TensorScan
// share one opcode (0xE6) and the same recurrence here.
#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

void exec_tensor_scalar_cache(const DynInst &d, Memory &m, EngineState &st) {
  using A = isa::EngineAccumulationType;
  const auto &f = d.inst->f;
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  const int64_t parts = in.partitions(), free = in.free_elements();
  if (is_bitvec(f.op0) || is_bitvec(f.op1))
    unsupported(m, "op0", "TensorScalarCache takes arithmetic ops only (NKI tensor_scalar_cumulative)");
  if (has_in(d, 2) && f.acc != A::LoadAccumulate)
    unsupported(m, "ins[2]", "TensorScalarCache can only have imm1 if accumulation mode is LoadAccumulate");
  const bool reduce = f.tsc_mode == isa::TSCMode::Reduce;
  if (reduce ? (out.partitions() != parts || out.free_elements() != 1) : elems(out) != elems(in))
    unsupported(m, "outs[0]", reduce ? "a Reduce writes one element per partition"
                                     : "a Cumulative/TensorScan output has the input's element count");
  const std::vector<float> s0 = per_partition(d, m, 1, parts);
  std::vector<float> load;
  if (has_in(d, 2)) load = per_partition(d, m, 2, parts);
  const std::vector<float> seed = accumulator_seed(m, st, f.acc == A::Idle ? A::Zero : f.acc, f.op1, parts,
                                                   has_in(d, 2) ? &load : nullptr, "acc");
  Tile x = read_tile(m, in);
  std::vector<float> fin(static_cast<size_t>(parts));
  for (int64_t p = 0; p < parts; ++p) {
    float *row = x.row(p).data();
    const float s = s0[static_cast<size_t>(p)];
    // Stage 0 has no dependence between elements: one vector kernel call.
    f.reverse0 ? alu_sv(f.op0, s, row, row, free) : alu_vs(f.op0, row, s, row, free);
    float reg = seed[static_cast<size_t>(p)];
    for (int64_t i = 0; i < free; ++i) {  // the recurrence is serial
      reg = f.reverse1 ? alu_apply(f.op1, reg, row[i]) : alu_apply(f.op1, row[i], reg);
      row[i] = reg;
    }
    fin[static_cast<size_t>(p)] = reg;
  }
  if (f.acc != A::Idle)
    for (int64_t p = 0; p < parts; ++p) st.acc[static_cast<size_t>(p)] = fin[static_cast<size_t>(p)];
  if (reduce) m.write_f32(out, fin.data());
  else m.write_f32(out, x.data());
  if (d.outs.size() > 1) drain_accumulator(m, st, out_ap(d, m, 1), f.negate_second_output, "outs[1]");
}

} // namespace neuronsim::engines::ops
