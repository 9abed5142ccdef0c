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
  // Lowered as the compiler lowers it (workload.hpp): the [T, T] PSUM tile rotates over the banks (one bank each:
  // 512 fp32 columns), its SBUF copy over as many buffers, and the row block over B buffers with its loads B - 1
  // blocks ahead.
  const int64_t TI = R / T, TJ = C / T, BJ = psum_buffers(TJ, 1);
  const int64_t B = sbuf_buffers(TI, C * 4, 2 * T * 4 + BJ * T * 4);
  auto xs = rotating_sbuf(b, "x_rows", T, C, isa::Dtype::float32, B);
  auto ps = rotating_psum(b, "t_psum", T, 512, isa::Dtype::float32, BJ);
  auto ys = rotating_sbuf(b, "t_sb", T, T, isa::Dtype::float32, BJ);
  emit_identity(b, ones, ident, T);
  int loops = 0;  // loop names must be unique: one per copy of the body
  pipelined_loop(
      b, "i", TI, B, [&](Aff i, int64_t k) { load(b, x.tile(i * T, T, 0, C), xs.slot(k)); },
      [&](Aff i, int64_t k) {
        b.loop("j" + std::to_string(loops++), 0, TJ / BJ, 1, [&](Aff j0) {
          for (int64_t kk = 0; kk < BJ; ++kk) {
            const Aff j = j0 * BJ + Aff(kk);
            b.add(InstructionType::Matmult, {b.ap(xs.slot(k, j * T, T)), b.ap(ident.all())},
                  {b.ap(ps.slot(kk, 0, T))})
                .is_transpose(true)
                .start_tensor_calc(true);
            b.add(InstructionType::TensorCopy, {b.ap(ps.slot(kk, 0, T))}, {b.ap(ys.slot(kk))});
            store(b, ys.slot(kk), y.tile(j * T, T, i * T, T));
          }
        });
      });
  Workload w;
  w.name = "transpose";
  w.program = b.finish();
  w.summary = "y = x^T for fp32 x [R, C], through TensorE: a [T, T] identity is built once on GpSimd (Memset "
              "1.0 + TensorScalarAffineSelect keeping p - x == 0); per row block a Load of [T, C]; per [T, T] "
              "tile a Matmult with is_transpose (stationary = tile, moving = identity) into PSUM, TensorCopy "
              "PSUM -> SBUF (VectorE) and a Save to the transposed position; the PSUM tile and its SBUF copy rotate "
              "over " + std::to_string(BJ) + " banks / buffers." + lowering_note(B);
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
