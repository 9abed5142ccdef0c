// transpose: y[C, R] = x[R, C]^T, fp32, on the PE array (NKI nc_transpose on TensorE: an identity matmul,
// reference neuron-arch.md 3.3). The identity is built on GpSimd (Memset 1.0, then affine_select keeping the
// diagonal p - x == 0). Per row block: one Load of [T, C]; per column tile: Matmult is_transpose
// (stationary = the [T, T] tile, moving = identity) into PSUM, TensorCopy to SBUF, Save to the transposed spot.
#include "workload.hpp"

namespace neuronsim::workloads {

using builder::Aff;
using builder::Builder;
using isa::InstructionType;

// Memset ones + affine_select(p - x == 0) -> a [T, T] identity in `ident` (dtype of the handle).
void emit_identity(Builder &b, const builder::TensorHandle &ones, const builder::TensorHandle &ident, int64_t T) {
  b.add(InstructionType::Memset, {}, {b.ap(ones.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0);
  b.add(InstructionType::TensorScalarAffineSelect, {b.ap(ones.all())}, {b.ap(ident.all())})
      .pattern({isa::ApDim{-1, T}})
      .channel_multiplier(1)
      .base(0)
      .compare_op(isa::AluOp::is_equal)
      .fill_value(0.0);
}

Workload make_transpose(Size s, bool with_data) {
  const int64_t T = s == Size::Small ? 64 : 128;  // tile edge (PE transpose up to [128, 128])
  const int64_t R = s == Size::Small ? 128 : 4096;
  const int64_t C = s == Size::Small ? 128 : 4096;
  Builder b("transpose");
  auto x = b.input("x", {R, C}), y = b.output("y", {C, R});
  auto ones = b.sbuf("ones", {T, T}), ident = b.sbuf("identity", {T, T});
  auto xs = b.sbuf("x_rows", {T, C}), ps = b.psum("t_psum", {T, T}), ys = b.sbuf("t_sb", {T, T});
  emit_identity(b, ones, ident, T);
  b.loop("i", 0, R / T, 1, [&](Aff i) {
    b.add(InstructionType::Load, {b.ap(x.tile(i * T, T, 0, C))}, {b.ap(xs.all())});
    b.loop("j", 0, C / T, 1, [&](Aff j) {
      b.add(InstructionType::Matmult, {b.ap(xs.tile(0, T, j * T, T)), b.ap(ident.all())}, {b.ap(ps.all())})
          .is_transpose(true)
          .start_tensor_calc(true);
      b.add(InstructionType::TensorCopy, {b.ap(ps.all())}, {b.ap(ys.all())});
      b.add(InstructionType::Save, {b.ap(ys.all())}, {b.ap(y.tile(j * T, T, i * T, T))});
    });
  });
  Workload w;
  w.name = "transpose";
  w.program = b.finish();
  w.summary = "y = x^T for fp32 x [R, C], through TensorE: a [T, T] identity is built once on GpSimd (Memset "
              "1.0 + TensorScalarAffineSelect keeping p - x == 0); per row block a Load of [T, C]; per [T, T] "
              "tile a Matmult with is_transpose (stationary = tile, moving = identity) into PSUM, TensorCopy "
              "PSUM -> SBUF (VectorE) and a Save to the transposed position.";
  w.sizes = "small (committed): x [" + std::to_string(R) + ", " + std::to_string(C) + "] fp32, T = " +
            std::to_string(T) + "; full: x [4096, 4096], T = 128.";
  w.rtol = 0.0;
  w.atol = 0.0;
  w.tolerance = "Exact: each output is x * 1 plus products with 0, which fp32 arithmetic reproduces bit for bit "
                "for finite inputs.";
  if (!with_data) return w;
  Rng rng(0x7a05e001);
  auto vx = rng.uniform_vec(size_t(R * C), -8, 8);
  std::vector<float> vy(vx.size());
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) vy[size_t(c * R + r)] = vx[size_t(r * C + c)];
  w.inputs["x"] = npy_f32(vx, {R, C});
  w.expected["y"] = npy_f32(vy, {C, R});
  return w;
}

}  // namespace neuronsim::workloads
