// softmax along the free axis, fp32, one 128-row tile at a time, with the instruction sequence of the NKI
// softmax (nki.language.softmax lowered as in the NKI fused-attention tutorial): VectorE reduce-max with negate
// (-> -max per row), ScalarE exp with that per-partition bias, VectorE reduce-add, reciprocal, and a
// per-partition multiply.
#include <cmath>

#include "workload.hpp"

namespace neuronsim::workloads {

using builder::Aff;
using builder::Builder;
using isa::InstructionType;

Workload make_softmax(Size s, bool with_data) {
  const int64_t P = 128;
  const int64_t R = s == Size::Small ? 256 : 4096;
  const int64_t N = s == Size::Small ? 128 : 4096;
  Builder b("softmax");
  auto x = b.input("x", {R, N}), y = b.output("y", {R, N});
  const int64_t T = R / P, B = sbuf_buffers(T, 3 * N * 4 + 3 * 4, 0);
  auto xt = rotating_sbuf(b, "x_tile", P, N, isa::Dtype::float32, B);
  auto et = rotating_sbuf(b, "exp_tile", P, N, isa::Dtype::float32, B);
  auto yt = rotating_sbuf(b, "y_tile", P, N, isa::Dtype::float32, B);
  auto nmax = rotating_sbuf(b, "neg_max", P, 1, isa::Dtype::float32, B);
  auto sum = rotating_sbuf(b, "row_sum", P, 1, isa::Dtype::float32, B);
  auto rsum = rotating_sbuf(b, "inv_sum", P, 1, isa::Dtype::float32, B);
  pipelined_loop(
      b, "i", T, B, [&](Aff i, int64_t k) { load(b, x.tile(i * P, P, 0, N), xt.slot(k)); },
      [&](Aff i, int64_t k) {
        b.add(InstructionType::TensorReduce, {b.ap(xt.slot(k))}, {b.ap(nmax.slot(k))})
            .op(isa::AluOp::max)
            .axis(isa::AxisListType::X)
            .negate(true);
        b.add(InstructionType::Activation, {b.ap(xt.slot(k)), b.imm(1.0), b.ap(nmax.slot(k))}, {b.ap(et.slot(k))})
            .act_func(isa::ActivationFunctionType::Exp);
        b.add(InstructionType::TensorReduce, {b.ap(et.slot(k))}, {b.ap(sum.slot(k))})
            .op(isa::AluOp::add)
            .axis(isa::AxisListType::X);
        b.add(InstructionType::Reciprocal, {b.ap(sum.slot(k))}, {b.ap(rsum.slot(k))});
        b.add(InstructionType::TensorScalarPtr, {b.ap(et.slot(k)), b.ap(rsum.slot(k))}, {b.ap(yt.slot(k))})
            .op0(isa::AluOp::mult);
        store(b, yt.slot(k), y.tile(i * P, P, 0, N));
      });
  Workload w;
  w.name = "softmax";
  w.program = b.finish();
  w.summary = "y = softmax(x) along the free axis (each row), fp32. Per 128-row tile: Load; TensorReduce max "
              "with negate (VectorE) -> -max per partition; Activation Exp with that [P, 1] bias (ScalarE); "
              "TensorReduce add (VectorE); Reciprocal; TensorScalarPtr multiply by the [P, 1] reciprocal; Save." +
              lowering_note(B);
  w.sizes = "small (committed): x, y [" + std::to_string(R) + ", " + std::to_string(N) +
            "] fp32; full: [4096, 4096] fp32.";
  w.rtol = double(N + 16) * std::ldexp(1.0, -24);
  w.rtol = std::ceil(w.rtol * 1e8) / 1e8;
  w.atol = 0.0;
  w.tolerance = "Relative bound, fp32 unit roundoff u = 2^-24: x - max is rounded once (|x - max| <= 8 with inputs "
                "in [-4, 4), so the exp argument is off by <= 8u absolute = <= 8u relative in exp), exp is rounded "
                "once (u), the row sum of N positive terms in fp32 is within (N - 1)u, the reciprocal and the "
                "product add 2u: (N + 16)u covers every element (no cancellation: all terms are positive).";
  if (!with_data) return w;
  Rng rng(0x50f7a001);
  auto vx = rng.uniform_vec(size_t(R * N), -4, 4);
  std::vector<double> vy(vx.size());
  for (int64_t r = 0; r < R; ++r) {
    const float *row = &vx[size_t(r * N)];
    double mx = row[0];
    for (int64_t j = 1; j < N; ++j) mx = std::max(mx, double(row[j]));
    double sum_e = 0;
    for (int64_t j = 0; j < N; ++j) sum_e += std::exp(double(row[j]) - mx);
    for (int64_t j = 0; j < N; ++j) vy[size_t(r * N + j)] = std::exp(double(row[j]) - mx) / sum_e;
  }
  w.inputs["x"] = npy_f32(vx, {R, N});
  w.expected["y"] = npy_f32(vy, {R, N});
  return w;
}

}  // namespace neuronsim::workloads
