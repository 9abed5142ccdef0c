// Causal single-head self-attention, fused on one NeuronCore, after the NKI fused self-attention tutorial
// (fused_self_attn_for_SD_small_head_size): scores = q k^T on TensorE, softmax along the key axis (VectorE
// reduce-max with negate, ScalarE exp with that bias, VectorE reduce-add + reciprocal), the probabilities
// transposed on TensorE (identity matmul) and multiplied by v, the 1/sum applied at the end. A causal mask
// (GpSimd affine_select, key index <= query index) is added to the tutorial's structure.
//
// Layout: qT, kT [d, S] (head dim on partitions: the contraction of q k^T), v [S, d] (keys on partitions: the
// contraction of p v). The q-tile loop is unrolled in the generator because affine_select's `base` (the tile's
// first query index) is a static field; the loops inside stay BIR loops.
#include <cmath>

#include "workload.hpp"

namespace neuronsim::workloads {

using builder::Aff;
using builder::Builder;
using isa::Dtype;
using isa::InstructionType;

void emit_identity(Builder &b, const builder::TensorHandle &ones, const builder::TensorHandle &ident, int64_t T);

Workload make_attention(Size s, bool with_data) {
  const int64_t T = 128;                           // query / key tile
  const int64_t S = s == Size::Small ? 256 : 2048;  // sequence length
  const int64_t d = s == Size::Small ? 64 : 128;    // head dim
  const int64_t W = std::min<int64_t>(S, 512);      // moving free size per matmul (one PSUM bank of fp32)
  const double scale = 1.0 / std::sqrt(double(d));
  const double kMaskFill = -1e30;
  Builder b("attention");
  auto qT = b.input("qT", {d, S}, Dtype::bfloat16), kT = b.input("kT", {d, S}, Dtype::bfloat16);
  auto v = b.input("v", {S, d}, Dtype::bfloat16);
  auto out = b.output("out", {S, d}, Dtype::bfloat16);  // the tutorial's output has the dtype of q
  auto q_sb = b.sbuf("q_sb", {d, S}, Dtype::bfloat16), k_sb = b.sbuf("k_sb", {d, S}, Dtype::bfloat16);
  auto v_sb = b.sbuf("v_sb", {T, (S / T) * d}, Dtype::bfloat16);  // key tile j at free offset j * d
  auto ones = b.sbuf("ones", {T, T}, Dtype::bfloat16), ident = b.sbuf("identity", {T, T}, Dtype::bfloat16);
  // Lowered as the compiler lowers it (workload.hpp): the tiles of one query tile rotate over B buffers (the
  // query-tile loop is unrolled, so tile i uses buffer i mod B); PSUM tiles rotate over the 8 banks: the score
  // tile [T, S] fp32 takes S / 512 banks, the transpose and output tiles one each.
  const int64_t NQ = S / T, score_banks = (S * 4 + 2047) / 2048;
  const int64_t BP = score_banks * 2 + 2 * 2 <= 8 ? 2 : 1;  // score tiles rotate when two fit beside the others
  const int64_t B = sbuf_buffers(NQ, S * 4 + 2 * S * 2 + d * 2 + 3 * 4, 2 * S * 2 + (S / T) * d * 2 + 2 * T * 2);
  auto sc_ps = rotating_psum(b, "scores_psum", T, std::max<int64_t>(S, 512), Dtype::float32, BP);
  auto pT_ps = rotating_psum(b, "probsT_psum", T, 512, Dtype::float32, 2);  // one bank each
  auto o_ps = rotating_psum(b, "out_psum", T, 512, Dtype::float32, 2);
  auto s_sb = rotating_sbuf(b, "scores", T, S, Dtype::float32, B);
  auto nmax = rotating_sbuf(b, "neg_max", T, 1, Dtype::float32, B);
  auto sum = rotating_sbuf(b, "row_sum", T, 1, Dtype::float32, B);
  auto rsum = rotating_sbuf(b, "inv_sum", T, 1, Dtype::float32, B);
  auto p_sb = rotating_sbuf(b, "probs", T, S, Dtype::bfloat16, B);
  auto pT_sb = rotating_sbuf(b, "probsT", T, S, Dtype::bfloat16, B);  // key tile j (keys on partitions) at j * T
  auto o_sb = rotating_sbuf(b, "out_sb", T, d, Dtype::bfloat16, B);

  emit_identity(b, ones, ident, T);
  load(b, qT.all(), q_sb.all());
  load(b, kT.all(), k_sb.all());
  b.loop("jv", 0, S / T, 1, [&](Aff j) { load(b, v.tile(j * T, T, 0, d), v_sb.tile(0, T, j * d, d)); });
  for (int64_t i = 0; i < NQ; ++i) {
    const std::string sfx = "_" + std::to_string(i);
    const int64_t k = i % B, kp = i % BP, k2 = i % 2;
    // scores[T, S] = q_tile^T k: stationary qT[:, tile i] [d, T], moving kT[:, chunk] [d, W].
    b.loop("c" + sfx, 0, S / W, 1, [&](Aff c) {
      b.add(InstructionType::Matmult, {b.ap(q_sb.tile(0, d, i * T, T)), b.ap(k_sb.tile(0, d, c * W, W))},
            {b.ap(sc_ps.slot(kp, c * W, W))})
          .start_tensor_calc(true);
    });
    // PSUM -> SBUF with the 1/sqrt(d) scale (ScalarE).
    b.add(InstructionType::Activation, {b.ap(sc_ps.slot(kp, 0, S)), b.imm(scale)}, {b.ap(s_sb.slot(k))})
        .act_func(isa::ActivationFunctionType::Identity);
    // causal mask: keep key x where (i*T + p) - x >= 0, else fill (GpSimd).
    b.add(InstructionType::TensorScalarAffineSelect, {b.ap(s_sb.slot(k))}, {b.ap(s_sb.slot(k))})
        .pattern({isa::ApDim{-1, S}})
        .channel_multiplier(1)
        .base(i * T)
        .compare_op(isa::AluOp::is_ge)
        .fill_value(kMaskFill);
    b.add(InstructionType::TensorReduce, {b.ap(s_sb.slot(k))}, {b.ap(nmax.slot(k))})
        .op(isa::AluOp::max)
        .axis(isa::AxisListType::X)
        .negate(true);
    b.add(InstructionType::Activation, {b.ap(s_sb.slot(k)), b.imm(1.0), b.ap(nmax.slot(k))}, {b.ap(p_sb.slot(k))})
        .act_func(isa::ActivationFunctionType::Exp);
    b.add(InstructionType::TensorReduce, {b.ap(p_sb.slot(k))}, {b.ap(sum.slot(k))})
        .op(isa::AluOp::add)
        .axis(isa::AxisListType::X);
    b.add(InstructionType::Reciprocal, {b.ap(sum.slot(k))}, {b.ap(rsum.slot(k))});
    // p^T per key tile on TensorE (is_transpose, moving = identity), then to SBUF as bf16; the transpose tile
    // alternates between two PSUM banks.
    b.loop("jt" + sfx, 0, S / T / 2, 1, [&](Aff j2) {
      for (int64_t h = 0; h < 2; ++h) {
        const Aff j = j2 * 2 + Aff(h);
        b.add(InstructionType::Matmult, {b.ap(p_sb.slot(k, j * T, T)), b.ap(ident.all())}, {b.ap(pT_ps.slot(h, 0, T))})
            .is_transpose(true)
            .start_tensor_calc(true);
        b.add(InstructionType::TensorCopy, {b.ap(pT_ps.slot(h, 0, T))}, {b.ap(pT_sb.slot(k, j * T, T))});
      }
    });
    // out[T, d] = sum_j p[:, tile j] v[tile j]: stationary pT tile [T keys, T queries], moving v tile [T, d].
    auto pv = [&](Aff j, bool start) {
      b.add(InstructionType::Matmult, {b.ap(pT_sb.slot(k, j * T, T)), b.ap(v_sb.tile(0, T, j * d, d))},
            {b.ap(o_ps.slot(k2, 0, d))})
          .start_tensor_calc(start);
    };
    pv(Aff(0), true);
    if (S / T > 1) b.loop("jo" + sfx, 1, S / T, 1, [&](Aff j) { pv(j, false); });
    b.add(InstructionType::TensorScalarPtr, {b.ap(o_ps.slot(k2, 0, d)), b.ap(rsum.slot(k))}, {b.ap(o_sb.slot(k))})
        .op0(isa::AluOp::mult);
    store(b, o_sb.slot(k), out.tile(i * T, T, 0, d));
  }

  Workload w;
  w.name = "attention";
  w.program = b.finish();
  w.summary =
      "out = softmax(mask(q k^T / sqrt(d))) v for one head, causal, with bf16 q, k, v and fp32 out. Once: "
      "identity [128, 128] bf16 on GpSimd (Memset + affine_select), Loads of qT, kT and the v tiles. Per 128-query "
      "tile (unrolled): Matmults into a [128, S] PSUM score tile (moving width <= 512); Activation Identity with "
      "scale 1/sqrt(d) PSUM -> SBUF (ScalarE); TensorScalarAffineSelect causal mask (GpSimd, fill -1e30); "
      "TensorReduce max with negate (VectorE); Activation Exp with the [P, 1] bias, written as bf16 "
      "probabilities (ScalarE); TensorReduce add and Reciprocal (VectorE); per key tile a TensorE transpose "
      "(Matmult is_transpose with the identity) and a TensorCopy PSUM -> SBUF; one PSUM group of Matmults "
      "probs^T x v; TensorScalarPtr multiply by 1/sum (VectorE, reading PSUM); Save. Key tiles above the "
      "diagonal are computed and masked, not skipped (as the tutorial computes every tile). The output is bf16, "
      "the dtype of q in the tutorial. Lowered as the compiler lowers it (workloads/gen/workload.hpp): the "
      "query tile's SBUF tiles rotate over " + std::to_string(B) + " buffers, the PSUM score tile over " +
      std::to_string(BP) + " and the transpose and output tiles over 2 banks each; the loads from SP on "
      "qSyncIO0, the output's store from GpSimd on qGpSimdIO1.";
  w.sizes = "small (committed): S = " + std::to_string(S) + ", d = " + std::to_string(d) +
            " (qT, kT [d, S], v [S, d] bf16; out [S, d] bf16); full: S = 2048, d = 128.";
  w.rtol = 0.0;
  w.atol = std::ldexp(1.0, -7) + 1e-5;
  w.tolerance = "The kernel stores the probabilities p in bf16 (as the tutorial does), the reference keeps them in "
                "double. Numerator and denominator both use the same rounded p, so out is a convex combination of "
                "v rows with weights perturbed by at most about 2 * 2^-9 relative: |error| <= 2^-8 * max|v| = 2^-8 "
                "(v in [-1, 1)); the bf16 output adds at most half an ulp, 2^-8 * |out| <= 2^-8 (|out| <= 1); 1e-5 "
                "covers the fp32 score/sum accumulation (S * 2^-24 relative). Inputs are bf16 on both sides.";
  if (!with_data) return w;
  Rng rng(0xa77e0001);
  auto rq = rng.uniform_vec(size_t(d * S), -1, 1), rk = rng.uniform_vec(size_t(d * S), -1, 1),
       rv = rng.uniform_vec(size_t(S * d), -1, 1);
  for (auto *vec : {&rq, &rk, &rv})
    for (auto &e : *vec) e = round_bf16(e);
  std::vector<double> ro(size_t(S * d), 0.0);
  std::vector<double> sc(static_cast<size_t>(S));
  for (int64_t qi = 0; qi < S; ++qi) {
    double mx = -1e300;
    for (int64_t kj = 0; kj <= qi; ++kj) {
      double dot = 0;
      for (int64_t e = 0; e < d; ++e) dot += double(rq[size_t(e * S + qi)]) * double(rk[size_t(e * S + kj)]);
      sc[size_t(kj)] = dot * scale;
      mx = std::max(mx, sc[size_t(kj)]);
    }
    double den = 0;
    for (int64_t kj = 0; kj <= qi; ++kj) den += std::exp(sc[size_t(kj)] - mx);
    for (int64_t kj = 0; kj <= qi; ++kj) {
      const double p = std::exp(sc[size_t(kj)] - mx) / den;
      for (int64_t e = 0; e < d; ++e) ro[size_t(qi * d + e)] += p * double(rv[size_t(kj * d + e)]);
    }
  }
  w.inputs["qT"] = npy_bf16(rq, {d, S});
  w.inputs["kT"] = npy_bf16(rk, {d, S});
  w.inputs["v"] = npy_bf16(rv, {S, d});
  w.expected["out"] = npy_f32(ro, {S, d});
  return w;
}

}  // namespace neuronsim::workloads
