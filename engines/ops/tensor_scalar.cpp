// TensorScalar / TensorScalarPtr: the two-stage loop out = op1(op0(x, s0), s1)
// (reference neuronx-cc/bir/sim-elementwise-datamove.md 2.2 applyVecOperation). reverse0 swaps the operands of
// stage 0 (s0 op0 x instead of x op0 s0), reverse1 those of stage 1; the first operand is the ALU's accumulator
// / LHS (spec 000). A scalar is one value per partition row, broadcast along the free dim.
//
// Operand convention (ins indices):
//   ins[0]  the data tensor
//   ins[1]  scalar0: an immediate (imm_value / symbolic_imm_value) or a [P, 1] tensor (TensorScalarPtr, as the
//           compiler writes it, reference bir-json.md 1.8); absent -> stage 0 is skipped
//   ins[2]  scalar1: likewise; absent -> stage 1 is skipped
// TensorScalar without scalar ins takes const0 / const1 (KLR's spelling) and always runs both stages.
// Bit-vector ops run in the int32 lane (ts_int_ops); both ops must then be bit-vector (NKI tensor_scalar:
// "Both ops bitvec or both arithmetic"). is_tensor_scalar_addr / is_scalar_tensor_tensor / is_tensor_tensor_scan,
// apply_transpose and a non-Idle acc are not implemented (SemanticError naming the field).
#include <cmath>

#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

void exec_tensor_scalar(const DynInst &d, Memory &m, EngineState &) {
  const isa::Inst &I = *d.inst;
  const auto &f = I.f;
  if (f.is_tensor_scalar_addr) unsupported(m, "is_tensor_scalar_addr", "not implemented");
  if (f.is_scalar_tensor_tensor) unsupported(m, "is_scalar_tensor_tensor", "not implemented");
  if (f.is_tensor_tensor_scan) unsupported(m, "is_tensor_tensor_scan", "not implemented");
  if (f.apply_transpose) unsupported(m, "apply_transpose", "not implemented for TensorScalar");
  if (f.acc != isa::EngineAccumulationType::Idle)
    unsupported(m, "acc", std::string("accumulation '") + isa::enum_name(f.acc) + "' is not implemented");

  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, in, out, "outs[0]");
  const int64_t parts = in.partitions(), free = in.free_elements();

  // The scalar sources.
  const bool from_ins = I.ins.size() > 1;
  const bool has0 = from_ins ? true : I.type == isa::InstructionType::TensorScalar;
  const bool has1 = from_ins ? I.ins.size() > 2 : I.type == isa::InstructionType::TensorScalar;
  std::vector<float> s0, s1;
  if (from_ins) {
    s0 = per_partition(d, m, 1, parts);
    if (has1) s1 = per_partition(d, m, 2, parts);
  } else if (has0) {
    s0.assign(static_cast<size_t>(parts), float(f.const0));
    s1.assign(static_cast<size_t>(parts), float(f.const1));
  }

  const bool bv0 = has0 && is_bitvec(f.op0), bv1 = has1 && is_bitvec(f.op1);
  if (bv0 || bv1) {
    if ((has0 && !bv0) || (has1 && !bv1))
      unsupported(m, bv0 ? "op1" : "op0", "mixing a bit-vector op with an arithmetic op");
    // An immediate bit pattern is taken from the exact (double) immediate, not its fp32 rounding.
    auto int_scalar = [&](size_t i, const std::vector<float> &v, int64_t p) {
      if (from_ins && is_imm(d, i)) return static_cast<int32_t>(static_cast<int64_t>(imm_value(d, i)));
      if (!from_ins) return static_cast<int32_t>(static_cast<int64_t>(i == 1 ? f.const0 : f.const1));
      return static_cast<int32_t>(std::lrint(v[static_cast<size_t>(p)]));
    };
    TileI x = read_tile_i32(m, in);
    for (int64_t p = 0; p < parts; ++p) {
      int32_t *row = x.row(p).data();
      if (has0) {
        const int32_t s = int_scalar(1, s0, p);
        f.reverse0 ? alu_sv_i32(f.op0, s, row, row, free) : alu_vs_i32(f.op0, row, s, row, free);
      }
      if (has1) {
        const int32_t s = int_scalar(2, s1, p);
        f.reverse1 ? alu_sv_i32(f.op1, s, row, row, free) : alu_vs_i32(f.op1, row, s, row, free);
      }
    }
    m.write_i32(out, x.data());
    return;
  }

  Tile x = read_tile(m, in);
  for (int64_t p = 0; p < parts; ++p) {
    float *row = x.row(p).data();
    if (has0) {
      const float s = s0[static_cast<size_t>(p)];
      f.reverse0 ? alu_sv(f.op0, s, row, row, free) : alu_vs(f.op0, row, s, row, free);
    }
    if (has1) {
      const float s = s1[static_cast<size_t>(p)];
      f.reverse1 ? alu_sv(f.op1, s, row, row, free) : alu_vs(f.op1, row, s, row, free);
    }
  }
  m.write_f32(out, x.data());
}

} // namespace neuronsim::engines::ops
