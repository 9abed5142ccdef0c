// RMSNorm, fp32: y = x * rsqrt(mean(x^2) + eps) * gamma, per row. Mirrors the NKI RMSNorm tutorial
// (nki_rmsnorm_kernel: square, sum along the free axis, rsqrt of the mean, multiply, multiply by the broadcast
// gamma row), with the eps of production RMSNorm folded into the ScalarE rsqrt's bias.
#include <cmath>

#include "workload.hpp"

namespace neuronsim::workloads {

using builder::Aff;
using builder::Builder;
using isa::InstructionType;

Workload make_rmsnorm(Size s, bool with_data) {
  const int64_t P = 128;
  const int64_t R = s == Size::Small ? 256 : 4096;
  const int64_t D = s == Size::Small ? 64 : 4096;
  const double eps = 1e-6;
  Builder b("rmsnorm");
  auto x = b.input("x", {R, D}), g = b.input("gamma", {1, D}), y = b.output("y", {R, D});
  auto gt = b.sbuf("gamma_bcast", {P, D}), epst = b.sbuf("eps", {P, 1});
  const int64_t T = R / P, B = sbuf_buffers(T, 4 * D * 4 + 2 * 4, D * 4 + 4);
  auto xt = rotating_sbuf(b, "x_tile", P, D, isa::Dtype::float32, B);
  auto sq = rotating_sbuf(b, "sq_tile", P, D, isa::Dtype::float32, B);
  auto yt = rotating_sbuf(b, "y_tile", P, D, isa::Dtype::float32, B);
  auto ot = rotating_sbuf(b, "out_tile", P, D, isa::Dtype::float32, B);
  auto ss = rotating_sbuf(b, "sq_sum", P, 1, isa::Dtype::float32, B);
  auto rr = rotating_sbuf(b, "rms_recip", P, 1, isa::Dtype::float32, B);
  // gamma broadcast to every partition by the DMA: a partition step of 0 on the DRAM side (NKI's
  // g_tile.broadcast_to((P, D)) of the tutorial).
  load(b, g.at(0, {{0, P}, {1, D}}), gt.all());
  // eps as a [P, 1] bias tensor: ScalarE's bias is an access pattern on NeuronCore-v2 (reference neuron-arch.md
  // 3.3 activation).
  b.add(InstructionType::Memset, {}, {b.ap(epst.all())}).memset_mode(isa::MemsetMode::Const).constant(eps);
  pipelined_loop(
      b, "i", T, B, [&](Aff i, int64_t k) { load(b, x.tile(i * P, P, 0, D), xt.slot(k)); },
      [&](Aff i, int64_t k) {
        b.add(InstructionType::Activation, {b.ap(xt.slot(k))}, {b.ap(sq.slot(k))})
            .act_func(isa::ActivationFunctionType::Square);
        b.add(InstructionType::TensorReduce, {b.ap(sq.slot(k))}, {b.ap(ss.slot(k))})
            .op(isa::AluOp::add)
            .axis(isa::AxisListType::X);
        // rsqrt(sum * (1/D) + eps) on ScalarE.
        b.add(InstructionType::Activation, {b.ap(ss.slot(k)), b.imm(1.0 / double(D)), b.ap(epst.all())},
              {b.ap(rr.slot(k))})
            .act_func(isa::ActivationFunctionType::Rsqrt);
        b.add(InstructionType::TensorScalarPtr, {b.ap(xt.slot(k)), b.ap(rr.slot(k))}, {b.ap(yt.slot(k))})
            .op0(isa::AluOp::mult);
        b.add(InstructionType::TensorTensor, {b.ap(yt.slot(k)), b.ap(gt.all())}, {b.ap(ot.slot(k))})
            .op(isa::AluOp::mult);
        store(b, ot.slot(k), y.tile(i * P, P, 0, D));
      });
  Workload w;
  w.name = "rmsnorm";
  w.program = b.finish();
  w.summary = "y = x * rsqrt(mean(x^2, row) + eps) * gamma, fp32, eps = 1e-6. gamma [1, D] is loaded once, "
              "broadcast to 128 partitions by a DMA with partition step 0. Per 128-row tile: Load; Activation "
              "Square (ScalarE); TensorReduce add (VectorE); Activation Rsqrt with scale 1/D and the [P, 1] eps "
              "bias; TensorScalarPtr multiply by the per-row factor; TensorTensor multiply by gamma; Save." +
              lowering_note(B);
  w.sizes = "small (committed): x, y [" + std::to_string(R) + ", " + std::to_string(D) +
            "] fp32, gamma [1, " + std::to_string(D) + "]; full: x [4096, 4096].";
  w.rtol = double(D + 8) * std::ldexp(1.0, -24);
  w.rtol = std::ceil(w.rtol * 1e8) / 1e8;
  w.atol = 0.0;
  w.tolerance = "Relative bound, u = 2^-24: squares (u) summed over D positive terms ((D - 1)u), scaled and eps "
                "added (2u), rsqrt rounded once (u) and halving the argument's relative error, then two products "
                "(2u): below (D/2 + 6)u; (D + 8)u is used.";
  if (!with_data) return w;
  Rng rng(0x4a5e0001);
  auto vx = rng.uniform_vec(size_t(R * D), -2, 2);
  auto vg = rng.uniform_vec(size_t(D), 0.5, 1.5);
  std::vector<double> vy(vx.size());
  for (int64_t r = 0; r < R; ++r) {
    double ssum = 0;
    for (int64_t j = 0; j < D; ++j) ssum += double(vx[size_t(r * D + j)]) * double(vx[size_t(r * D + j)]);
    const double f = 1.0 / std::sqrt(ssum / double(D) + eps);
    for (int64_t j = 0; j < D; ++j) vy[size_t(r * D + j)] = double(vx[size_t(r * D + j)]) * f * double(vg[size_t(j)]);
  }
  w.inputs["x"] = npy_f32(vx, {R, D});
  w.inputs["gamma"] = npy_f32(vg, {1, D});
  w.expected["y"] = npy_f32(vy, {R, D});
  return w;
}

}  // namespace neuronsim::workloads
