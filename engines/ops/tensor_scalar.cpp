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
// "Both ops bitvec or both arithmetic").
//
// The TensorScalarPtr forms (reference isa/tensorscalar-encoding.md: the encoder's three-way dispatch):
//   is_tensor_scalar_addr   the scalars are read from an addressable per-partition tensor ([P, 1] access);
//                           numerically the same two-stage loop (the difference is the wire datapath, 0x74).
//   is_scalar_tensor_tensor ins[2] is a full tensor t1: out = op1(op0(x, s0), t1) elementwise (NKI
//                           scalar_tensor_tensor); reverse1 gives t1 op1 tmp.
//   is_tensor_tensor_scan   NKI tensor_tensor_scan: ins[0] data0, ins[1] data1 (full tensors), ins[2] `initial`
//                           (immediate or [P, 1]); per partition along the free dim
//                           r[i] = op1(op0(data0[i], r[i-1]), data1[i]), r[-1] = initial. reverse0 gives
//                           op0(r[i-1], data0[i]), reverse1 op1(data1[i], .). Without ins[2] the seed comes from
//                           the accumulator command (ZeroAccumulate/Idle: reset(op0); Accumulate: the registers)
//                           -- INFERRED. With acc != Idle the last r is left in the registers.
//   acc != Idle (fused reduce, encoder opcode 0x9A TensorScalarCacheReduce): the elementwise result is
//                           op0(x, s0) only, and op1 is the reduce op folded into the DVE registers per the
//                           accumulator machine (accumulator.cpp); ins[2], when present, is the LoadAccumulate
//                           seed (imm1, as in TensorScalarCache). INFERRED from the shared 0x9A opcode and the
//                           TensorScalarCache recurrence reg = op1(op0(x, imm0), reg). With
//                           is_scalar_tensor_tensor the reduce op is add (no reduce-op field; INFERRED).
//   outs[1]                 when present, receives the registers after the fold (the fused DveReadAccumulator,
//                           reference isa/tensorscalar-encoding.md), negated when negate_second_output is set
//                           (NKI tensor_scalar_reduce reduce_res_negate: only the written-out result is negated).
// apply_transpose is not implemented (SemanticError naming the field).
#include <cmath>

#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

namespace {

using A = isa::EngineAccumulationType;

void finish_reduce(const DynInst &d, Memory &m, EngineState &st) {
  if (d.outs.size() > 1)
    drain_accumulator(m, st, out_ap(d, m, 1), d.inst->f.negate_second_output, "outs[1]");
}

void tensor_tensor_scan(const DynInst &d, Memory &m, EngineState &st) {
  const auto &f = d.inst->f;
  const Access &a = in_ap(d, m, 0);
  const Access &b = in_ap(d, m, 1);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, a, b, "ins[1]");
  require_same_count(m, a, out, "outs[0]");
  const int64_t parts = a.partitions(), free = a.free_elements();
  std::vector<float> seed;
  if (has_in(d, 2)) {
    seed = per_partition(d, m, 2, parts);
  } else {
    const A cmd = f.acc == A::Idle ? A::ZeroAccumulate : f.acc;
    seed = accumulator_seed(m, st, cmd, f.op0, parts, nullptr, "acc");
  }
  Tile x = read_tile(m, a);
  const Tile y = read_tile(m, b);
  for (int64_t p = 0; p < parts; ++p) {
    float r = seed[static_cast<size_t>(p)];
    float *row = x.row(p).data();
    const float *row1 = y.row(p).data();
    for (int64_t i = 0; i < free; ++i) {  // a serial recurrence: one ALU application per step
      const float t = f.reverse0 ? alu_apply(f.op0, r, row[i]) : alu_apply(f.op0, row[i], r);
      r = f.reverse1 ? alu_apply(f.op1, row1[i], t) : alu_apply(f.op1, t, row1[i]);
      row[i] = r;
    }
    if (f.acc != A::Idle) {
      if (static_cast<int64_t>(st.acc.size()) < parts) st.acc.resize(static_cast<size_t>(parts), 0.0f);
      st.acc[static_cast<size_t>(p)] = r;
    }
  }
  m.write_f32(out, x.data());
  finish_reduce(d, m, st);
}

void scalar_tensor_tensor(const DynInst &d, Memory &m, EngineState &st) {
  const auto &f = d.inst->f;
  const Access &in = in_ap(d, m, 0);
  const Access &t1 = in_ap(d, m, 2);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, in, t1, "ins[2]");
  require_same_count(m, in, out, "outs[0]");
  if (is_bitvec(f.op0) || is_bitvec(f.op1))
    unsupported(m, "op0", "scalar_tensor_tensor takes arithmetic ops only (NKI scalar_tensor_tensor)");
  const int64_t parts = in.partitions(), free = in.free_elements();
  const std::vector<float> s0 = per_partition(d, m, 1, parts);
  Tile x = read_tile(m, in);
  const Tile y = read_tile(m, t1);
  for (int64_t p = 0; p < parts; ++p) {
    float *row = x.row(p).data();
    const float s = s0[static_cast<size_t>(p)];
    f.reverse0 ? alu_sv(f.op0, s, row, row, free) : alu_vs(f.op0, row, s, row, free);
    f.reverse1 ? alu_vv(f.op1, y.row(p).data(), row, row, free) : alu_vv(f.op1, row, y.row(p).data(), row, free);
  }
  engine_accumulate(m, st, f.acc, isa::AluOp::add, x, nullptr, "acc");
  m.write_f32(out, x.data());
  finish_reduce(d, m, st);
}

// The fused-reduce form: out = op0(x, s0) (reverse0 swaps), registers folded with op1.
void tensor_scalar_reduce(const DynInst &d, Memory &m, EngineState &st) {
  const auto &f = d.inst->f;
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, in, out, "outs[0]");
  if (is_bitvec(f.op0) || is_bitvec(f.op1))
    unsupported(m, "acc", "a fused reduce takes arithmetic ops only (NKI tensor_scalar_reduce)");
  const int64_t parts = in.partitions(), free = in.free_elements();
  std::vector<float> s0;
  if (d.inst->ins.size() > 1) s0 = per_partition(d, m, 1, parts);
  else s0.assign(static_cast<size_t>(parts), float(f.const0));
  std::vector<float> load;
  if (has_in(d, 2)) load = per_partition(d, m, 2, parts);
  Tile x = read_tile(m, in);
  for (int64_t p = 0; p < parts; ++p) {
    float *row = x.row(p).data();
    const float s = s0[static_cast<size_t>(p)];
    f.reverse0 ? alu_sv(f.op0, s, row, row, free) : alu_vs(f.op0, row, s, row, free);
  }
  engine_accumulate(m, st, f.acc, f.op1, x, has_in(d, 2) ? &load : nullptr, "acc");
  m.write_f32(out, x.data());
  finish_reduce(d, m, st);
}

} // namespace

void exec_tensor_scalar(const DynInst &d, Memory &m, EngineState &st) {
  const isa::Inst &I = *d.inst;
  const auto &f = I.f;
  if (f.apply_transpose) unsupported(m, "apply_transpose", "not implemented for TensorScalar");
  if (f.is_tensor_tensor_scan) return tensor_tensor_scan(d, m, st);
  if (f.is_scalar_tensor_tensor) return scalar_tensor_tensor(d, m, st);
  if (f.acc != A::Idle) return tensor_scalar_reduce(d, m, st);
  // is_tensor_scalar_addr: per_partition() reads the addressed [P, 1] scalars; the loop below is the same.

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
