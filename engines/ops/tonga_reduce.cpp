// TongaReduceMacroSymbolic (109): fields `op` (AluOpType), `is_first_reduce` (bool), `reduce_axes` (loop-axis
// names) -- reference neuronx-cc/bir/json-schema-catalog.md (InstTongaReduceMacroSymbolic) and bir-json.md 2.3.
// The reference calls it a symbolic reduce carrier and gives no algorithm (birsim does not execute it), so this is
// neuronsim's own reading (SPECULATIVE), chosen to be the smallest one consistent with its fields:
//
//   It accumulates ins[0] into outs[0] across the iterations of the loops named in reduce_axes, elementwise:
//     is_first_reduce = true:   outs[0] = ins[0]              (converted to the output dtype)
//     is_first_reduce = false:  outs[0] = outs[0] op ins[0]   (the ALU's operand order, acc op x: engines/alu.cpp)
//   A reduce over a loop is written as two instructions: the first iteration with is_first_reduce = true (a peeled
//   iteration), the others with is_first_reduce = false.
//
// `op` must be a reduction: commutative in alu_ops.def and with a fold identity (alu_has_identity:
// add, mult, max, min, abs_max, abs_min, the bitwise and logical and/or/xor), on the first iteration too (it
// names the reduce the carrier belongs to). Bit-vector ops work on the int32
// bit pattern, the rest in fp32. Every name in reduce_axes must be a loop axis of the program.
#include <algorithm>

#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

void exec_tonga_reduce(const DynInst &d, Memory &m, EngineState &) {
  const isa::Inst &I = *d.inst;
  const isa::AluOp op = I.f.op;
  if (isa::alu_info(op).order != isa::OperandOrder::Commutative || !alu_has_identity(op))
    unsupported(m, "op",
                std::string("'") + isa::alu_name(op) +
                    "' is not a reduction op (reductions: add, mult, max, min, abs_max, abs_min, bitwise_and/or/xor, "
                    "logical_and/or/xor)");
  const auto &vars = m.program().loop_vars;
  for (const auto &axis : I.f.reduce_axes)
    if (std::find(vars.begin(), vars.end(), axis) == vars.end())
      unsupported(m, "reduce_axes", "'" + axis + "' is not a loop axis of this program");
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, in, out, "outs[0]");
  const int64_t n = elems(in);
  if (is_bitvec(op)) {
    TileI x = read_tile_i32(m, in);
    if (!I.f.is_first_reduce) {
      TileI acc = read_tile_i32(m, out);
      alu_vv_i32(op, acc.data(), x.data(), x.data(), n);
    }
    write_flat_i32(m, out, x.data(), n);
    return;
  }
  Tile x = read_tile(m, in);
  if (!I.f.is_first_reduce) {
    Tile acc = read_tile(m, out);
    alu_vv(op, acc.data(), x.data(), x.data(), n);
  }
  write_flat(m, out, x.data(), n);
}

} // namespace neuronsim::engines::ops
