// TensorTensor: out = in0 op in1, elementwise in walk order (reference neuronx-cc/bir/sim-elementwise-datamove.md
// 2.3 doTensorTensor: a flat loop over numElems). in0 is the accumulator / LHS of the ALU op (spec 000
// "Commutativity": acc op x). Bit-vector ops, and ops whose operands and output are all integers, run in the
// int32 lane (the ts_int_ops map); everything else in fp32 (ts_ops).
#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

void exec_tensor_tensor(const DynInst &d, Memory &m, EngineState &) {
  const Access &a = in_ap(d, m, 0);
  const Access &b = in_ap(d, m, 1);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, a, b, "ins[1]");
  require_same_count(m, a, out, "outs[0]");
  if (d.inst->f.acc != isa::EngineAccumulationType::Idle)
    unsupported(m, "acc", std::string("TensorTensor accumulation '") + isa::enum_name(d.inst->f.acc) +
                              "' is not implemented");
  const isa::AluOp op = d.inst->f.op;
  const int64_t n = elems(a);
  if (is_bitvec(op) || (is_int_dtype(a.dtype) && is_int_dtype(b.dtype) && is_int_dtype(out.dtype))) {
    TileI x = read_tile_i32(m, a), y = read_tile_i32(m, b);
    alu_vv_i32(op, x.data(), y.data(), x.data(), n);
    m.write_i32(out, x.data());
    return;
  }
  Tile x = read_tile(m, a), y = read_tile(m, b);
  alu_vv(op, x.data(), y.data(), x.data(), n);
  m.write_f32(out, x.data());
}

} // namespace neuronsim::engines::ops
