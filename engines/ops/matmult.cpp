// Matmult: the PE array as algebra (reference neuronx-cc/bir/sim-matmul-mx.md 1-2, 5; NKI nc_matmul):
//   ins[0] stationary [K, M] (K partitions, M free elements), ins[1] moving [K, N]
//   out (PSUM) [M, N] = stationary^T * moving, operands widened to fp32 and multiplied in fp32 (Eigen).
// PSUM accumulation (reference 5: group head / body): start_tensor_calc = true starts a group -- the product is
// copied over the destination (resetAccumulation zeroes, then writes); start_tensor_calc = false adds the product
// to what the destination holds (runAP's accumulate branch, dst += src in fp32). stop_tensor_calc closes the group
// and has no numeric effect.
// is_transpose (PE transpose, NKI nc_transpose: an identity matmul): with both operands it is the same product
// (the compiler supplies the identity as the moving operand); with only ins[0] the output is ins[0]^T, copied.
// perf_mode other than None, and the integer zero-point offsets, are not implemented (SemanticError).
#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

void exec_matmult(const DynInst &d, Memory &m, EngineState &) {
  const isa::Inst &I = *d.inst;
  if (I.f.perf_mode != isa::MatmultPerfMode::None)
    unsupported(m, "perf_mode", std::string("perf_mode '") + isa::enum_name(I.f.perf_mode) + "' is not implemented");
  if (I.f.ifmap_quant_offset != 0) unsupported(m, "ifmap_quant_offset", "zero-point offsets are not implemented");
  if (I.f.weights_quant_offset != 0)
    unsupported(m, "weights_quant_offset", "zero-point offsets are not implemented");
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Access &st = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  Mat result;
  const Tile s = read_tile(m, st);
  if (I.f.is_transpose && !has_in_ap(d, 1)) {
    result = s.matrix().transpose();
  } else {
    const Access &mv = in_ap(d, m, 1);
    if (mv.partitions() != st.partitions())
      unsupported(m, "ins[1]",
                  "contraction mismatch: stationary has " + std::to_string(st.partitions()) +
                      " partitions, moving " + std::to_string(mv.partitions()));
    const Tile v = read_tile(m, mv);
    result.noalias() = s.matrix().transpose() * v.matrix();
  }
  if (out.partitions() != result.rows() || out.free_elements() != result.cols())
    unsupported(m, "outs[0]",
                "output is [" + std::to_string(out.partitions()) + ", " + std::to_string(out.free_elements()) +
                    "], the product is [" + std::to_string(result.rows()) + ", " + std::to_string(result.cols()) +
                    "]");
  if (!I.f.start_tensor_calc) {
    const Tile prev = read_tile(m, out);
    result += prev.matrix();
  }
  m.write_f32(out, result.data());
}

} // namespace neuronsim::engines::ops
