// tp_mlp: a tensor-parallel MLP, y = relu(x W1) W2, on the two physical cores of a logical core (LNC=2, trn2 /
// trn3): W1 split by columns (column-parallel), W2 by rows (row-parallel), the partial outputs summed by an
// AllReduce (the Megatron-LM MLP split: Shoeybi et al. 2019, "Megatron-LM", section 3). Core s (its ShardIDKind)
//   loads x^T, W1[:, s H/2 : (s+1) H/2] and W2[s H/2 : (s+1) H/2, :]   (DMA, SP)
//   h_s^T = relu(W1_s^T x^T)       Matmult (fp32) into PSUM, Activation Relu to SBUF (ScalarE)
//   y_s = h_s W2_s                 Matmult (fp32) into PSUM, TensorCopy to SBUF
//   y = AllReduce_add(y_0, y_1)    CollectiveCompute; both cores save y (the same values)
#include <cmath>

#include "workload.hpp"

namespace neuronsim::workloads {

using builder::Aff;
using builder::Builder;
using isa::Dtype;
using isa::InstructionType;

Workload make_tp_mlp(Size s, bool with_data) {
  const int64_t B = 64, D = 128, H = 256, O = 128, Hs = H / 2;  // one size: a [128, 128] tile per matmul operand
  (void)s;
  Builder b("tp_mlp");
  auto xT = b.input("xT", {D, B}), w1 = b.input("w1", {D, H}), w2 = b.input("w2", {H, O});
  auto y = b.output("y", {B, O});
  auto xt = b.sbuf("xT_sb", {D, B}), w1s = b.sbuf("w1_shard", {D, Hs}), w2s = b.sbuf("w2_shard", {Hs, O});
  auto hps = b.psum("hT_psum", {Hs, B}), hs = b.sbuf("hT_sb", {Hs, B});
  auto yps = b.psum("y_psum", {B, O}), ys = b.sbuf("y_partial", {B, O}), yr = b.sbuf("y_sum", {B, O});
  const Aff shard = Aff::shard(2);
  load(b, xT.all(), xt.all());
  load(b, w1.tile(0, D, shard * Hs, Hs), w1s.all());
  load(b, w2.tile(shard * Hs, Hs, 0, O), w2s.all());
  b.add(InstructionType::Matmult, {b.ap(w1s.all()), b.ap(xt.all())}, {b.ap(hps.all())}).start_tensor_calc(true);
  b.add(InstructionType::Activation, {b.ap(hps.all()), b.imm(1.0)}, {b.ap(hs.all())})
      .act_func(isa::ActivationFunctionType::Relu);
  b.add(InstructionType::Matmult, {b.ap(hs.all()), b.ap(w2s.all())}, {b.ap(yps.all())}).start_tensor_calc(true);
  b.add(InstructionType::TensorCopy, {b.ap(yps.all())}, {b.ap(ys.all())}).engine(isa::Engine::Pool);
  b.add(InstructionType::CollectiveCompute, {b.ap(ys.all())}, {b.ap(yr.all())})
      .collective_kind("AllReduce").op(isa::AluOp::add).replica_groups({{0, 1}}).engine(isa::Engine::Pool);
  store(b, yr.all(), y.all());

  Workload w;
  w.name = "tp_mlp";
  w.program = b.finish();
  w.cores = 2;
  w.lnc = 2;
  w.summary = "A tensor-parallel MLP y = relu(x W1) W2 over the two physical cores of a logical core (LNC=2; run it "
              "with `neuronsim run workloads/multicore/tp_mlp --arch trn2 --lnc 2`): W1 split by columns, W2 by rows "
              "(the Megatron-LM split), core s loads its halves (the loads' start holds the ShardIDKind term), "
              "computes h_s^T = relu(W1_s^T x^T) (Matmult fp32 into PSUM, Activation Relu) and its partial y_s = h_s "
              "W2_s (Matmult, TensorCopy), and an AllReduce (add) sums the two partials; both cores save y.";
  w.sizes = "one size: xT [128, 64], w1 [128, 256], w2 [256, 128], y [64, 128], fp32 (committed; --size full is the "
            "same).";
  w.rtol = 0.0;
  if (!with_data) {
    w.atol = 0.0;
    return w;
  }
  Rng rng(0x7e2a0d01);
  const auto vx = rng.uniform_vec(size_t(D * B), -1, 1), v1 = rng.uniform_vec(size_t(D * H), -1, 1),
             v2 = rng.uniform_vec(size_t(H * O), -1, 1);
  // Reference in double, with the error bound of each step (u = 2^-24; Higham, Accuracy and Stability of Numerical
  // Algorithms, 2nd ed., eq. 3.5: an fp32 dot product of n terms is within gamma_n sum |a_k b_k|, gamma_n ~ n u):
  //   h_j = relu(sum_k x_k w1_kj), |h^_j - h_j| <= E1_j = 1.01 D u sum_k |x_k w1_kj|   (relu is 1-Lipschitz)
  //   y_i = sum_j h_j w2_ji over each core's H/2 rows, then one fp32 add of the two partials:
  //   |y^_i - y_i| <= sum_j E1_j |w2_ji| + 1.01 (H/2 + 1) u sum_j |h_j w2_ji| (1 + small) + u |y_i|.
  const double u = std::ldexp(1.0, -24);
  std::vector<double> vy(size_t(B * O));
  double worst = 0.0;
  for (int64_t t = 0; t < B; ++t) {
    std::vector<double> h(static_cast<size_t>(H)), e1(static_cast<size_t>(H));
    for (int64_t j = 0; j < H; ++j) {
      double acc = 0, mag = 0;
      for (int64_t k = 0; k < D; ++k) {
        const double p = double(vx[size_t(k * B + t)]) * double(v1[size_t(k * H + j)]);
        acc += p;
        mag += std::fabs(p);
      }
      h[size_t(j)] = acc > 0 ? acc : 0.0;
      e1[size_t(j)] = 1.01 * double(D) * u * mag;
    }
    for (int64_t i = 0; i < O; ++i) {
      double acc = 0, mag = 0, prop = 0;
      for (int64_t j = 0; j < H; ++j) {
        const double wji = double(v2[size_t(j * O + i)]);
        acc += h[size_t(j)] * wji;
        mag += std::fabs((h[size_t(j)] + e1[size_t(j)]) * wji);
        prop += e1[size_t(j)] * std::fabs(wji);
      }
      vy[size_t(t * O + i)] = acc;
      worst = std::max(worst, prop + 1.01 * double(Hs + 1) * u * mag + u * std::fabs(acc));
    }
  }
  w.atol = std::ceil(worst * 1e7) / 1e7;  // a readable number, never below the bound
  w.tolerance = "fp32 products and sums in PSUM (Matmult fp32), relu exact, one fp32 add in the AllReduce: the bound "
                "sum_j E1_j |w2_ji| + 1.01 (H/2 + 1) u sum_j |h_j w2_ji| + u |y_i| with E1_j = 1.01 D u sum_k |x_k "
                "w1_kj| (Higham eq. 3.5, u = 2^-24), its largest value over these inputs: atol " +
                std::to_string(w.atol) + ", rtol 0. The reference is the exact (double) computation.";
  w.inputs["xT"] = npy_f32(vx, {D, B});
  w.inputs["w1"] = npy_f32(v1, {D, H});
  w.inputs["w2"] = npy_f32(v2, {H, O});
  w.expected["y"] = npy_f32(vy, {B, O});
  return w;
}

}  // namespace neuronsim::workloads
