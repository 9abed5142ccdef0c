// LayerNorm, fp32: y = (x - mean) * rsqrt(var + eps) * gamma + beta per row, after the NKI LayerNorm tutorial's
// bn_stats / bn_aggr version: VectorE bn_stats on free-axis chunks of at most BN_STATS_FMAX = 512 elements
// (reference neuron-arch.md 3.3: bn_stats takes N <= 512), bn_aggr over the chunk statistics -> (mean, var),
// ScalarE rsqrt(var + eps), one VectorE tensor_scalar ((x - mean) * rstd), then gamma and beta.
#include <cmath>

#include "workload.hpp"

namespace neuronsim::workloads {

using builder::Aff;
using builder::Builder;
using isa::InstructionType;

Workload make_layernorm(Size s, bool with_data) {
  const int64_t P = 128;
  const int64_t R = s == Size::Small ? 256 : 4096;
  const int64_t D = s == Size::Small ? 64 : 4096;
  // Small: 32-wide chunks so that bn_aggr combines several chunk statistics (full: the 512 maximum).
  const int64_t F = s == Size::Small ? 32 : 512;
  const int64_t NC = D / F;
  const double eps = 1e-5;
  Builder b("layernorm");
  auto x = b.input("x", {R, D}), g = b.input("gamma", {1, D}), be = b.input("beta", {1, D});
  auto y = b.output("y", {R, D});
  auto gt = b.sbuf("gamma_bcast", {P, D}), bt = b.sbuf("beta_bcast", {P, D}), epst = b.sbuf("eps", {P, 1});
  const int64_t T = R / P, B = sbuf_buffers(T, 4 * D * 4 + (6 * NC + 3) * 4, 2 * D * 4 + 4);
  auto xt = rotating_sbuf(b, "x_tile", P, D, isa::Dtype::float32, B);
  auto nt = rotating_sbuf(b, "norm_tile", P, D, isa::Dtype::float32, B);
  auto st = rotating_sbuf(b, "scaled_tile", P, D, isa::Dtype::float32, B);
  auto ot = rotating_sbuf(b, "out_tile", P, D, isa::Dtype::float32, B);
  auto stats = rotating_sbuf(b, "bn_stats", P, 6 * NC, isa::Dtype::float32, B);
  auto mv = rotating_sbuf(b, "mean_var", P, 2, isa::Dtype::float32, B);
  auto rstd = rotating_sbuf(b, "rstd", P, 1, isa::Dtype::float32, B);
  load(b, g.at(0, {{0, P}, {1, D}}), gt.all());
  load(b, be.at(0, {{0, P}, {1, D}}), bt.all());
  b.add(InstructionType::Memset, {}, {b.ap(epst.all())}).memset_mode(isa::MemsetMode::Const).constant(eps);
  int chunk_loops = 0;  // loop names must be unique: one per copy of the body
  pipelined_loop(
      b, "i", T, B, [&](Aff i, int64_t k) { load(b, x.tile(i * P, P, 0, D), xt.slot(k)); },
      [&](Aff i, int64_t k) {
        b.loop("c" + std::to_string(chunk_loops++), 0, NC, 1, [&](Aff c) {
          b.add(InstructionType::BNStats, {b.ap(xt.slot(k, c * F, F))}, {b.ap(stats.slot(k, c * 6, 6))});
        });
        b.add(InstructionType::BNStatsAggregate, {b.ap(stats.slot(k))}, {b.ap(mv.slot(k))});
        b.add(InstructionType::Activation, {b.ap(mv.slot(k, 1, 1)), b.imm(1.0), b.ap(epst.all())},
              {b.ap(rstd.slot(k))})
            .act_func(isa::ActivationFunctionType::Rsqrt);
        b.add(InstructionType::TensorScalarPtr, {b.ap(xt.slot(k)), b.ap(mv.slot(k, 0, 1)), b.ap(rstd.slot(k))},
              {b.ap(nt.slot(k))})
            .op0(isa::AluOp::subtract)
            .op1(isa::AluOp::mult);
        b.add(InstructionType::TensorTensor, {b.ap(nt.slot(k)), b.ap(gt.all())}, {b.ap(st.slot(k))})
            .op(isa::AluOp::mult);
        b.add(InstructionType::TensorTensor, {b.ap(st.slot(k)), b.ap(bt.all())}, {b.ap(ot.slot(k))})
            .op(isa::AluOp::add);
        store(b, ot.slot(k), y.tile(i * P, P, 0, D));
      });
  Workload w;
  w.name = "layernorm";
  w.program = b.finish();
  w.summary = "y = (x - mean) * rsqrt(var + eps) * gamma + beta per row, fp32, eps = 1e-5 (population variance). "
              "gamma and beta are broadcast to 128 partitions by DMAs with partition step 0. Per 128-row tile: "
              "Load; BNStats per free-axis chunk (VectorE); BNStatsAggregate -> (mean, var); Activation Rsqrt with "
              "the [P, 1] eps bias (ScalarE); TensorScalarPtr (x - mean) * rstd with both scalars [P, 1]; "
              "TensorTensor multiply by gamma and add beta; Save." + lowering_note(B);
  w.sizes = "small (committed): x, y [" + std::to_string(R) + ", " + std::to_string(D) + "] fp32, bn_stats chunks "
            "of " + std::to_string(F) + "; full: x [4096, 4096], chunks of 512.";
  const double u = std::ldexp(1.0, -24);
  w.rtol = std::ceil(double(D + 8) * u * 1e8) / 1e8;
  w.atol = std::ceil(4.0 * double(D) * u * 2.0 * 1e7) / 1e7;
  w.tolerance = "u = 2^-24. The fp32 Welford/Chan statistics over D elements carry a mean error of at most about "
                "D u max|x| (max|x| = 2 here) and a relative variance error of about D u; rsqrt halves the latter. "
                "atol = 4 D u max|x| bounds the absolute error from the mean (times rstd <= ~1 and gamma <= 1.5, "
                "with margin) and rtol = (D + 8) u the relative error from rstd plus the four roundings of the "
                "elementwise steps.";
  if (!with_data) return w;
  Rng rng(0x1a7e0001);
  auto vx = rng.uniform_vec(size_t(R * D), -2, 2);
  auto vg = rng.uniform_vec(size_t(D), 0.5, 1.5), vb = rng.uniform_vec(size_t(D), -0.5, 0.5);
  std::vector<double> vy(vx.size());
  for (int64_t r = 0; r < R; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < D; ++j) mean += vx[size_t(r * D + j)];
    mean /= double(D);
    for (int64_t j = 0; j < D; ++j) var += (vx[size_t(r * D + j)] - mean) * (vx[size_t(r * D + j)] - mean);
    var /= double(D);
    const double rs = 1.0 / std::sqrt(var + eps);
    for (int64_t j = 0; j < D; ++j)
      vy[size_t(r * D + j)] = (vx[size_t(r * D + j)] - mean) * rs * double(vg[size_t(j)]) + double(vb[size_t(j)]);
  }
  w.inputs["x"] = npy_f32(vx, {R, D});
  w.inputs["gamma"] = npy_f32(vg, {1, D});
  w.inputs["beta"] = npy_f32(vb, {1, D});
  w.expected["y"] = npy_f32(vy, {R, D});
  return w;
}

}  // namespace neuronsim::workloads
