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

namespace {

// y = relu(x W1) W2 in double for x^T [D, B], W1 [D, H], W2 [H, O] (row-major), and the largest error bound of the
// fp32 computation over these inputs (the callers' comments give it): the first layer's E1_j, then `roundings` fp32
// roundings on any path of the second layer and the partials' sum.
std::pair<std::vector<double>, double> mlp_reference(const std::vector<float> &vx, const std::vector<float> &v1,
                                                     const std::vector<float> &v2, int64_t B, int64_t D, int64_t H,
                                                     int64_t O, int64_t roundings) {
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
      worst = std::max(worst, prop + 1.01 * double(roundings) * u * mag + u * std::fabs(acc));
    }
  }
  return {vy, worst};
}

}  // namespace

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
  const auto [vy, worst] = mlp_reference(vx, v1, v2, B, D, H, O, Hs + 1);
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

// tp_mlp_<N>ranks: the same MLP on N ranks, one physical core each (--cores N --lnc 1): rank r's DRAM holds its own
// W1 column block w1 = W1[:, r Hs : (r+1) Hs] and W2 row block w2 = W2[r Hs : (r+1) Hs, :] (inputs/rank<r>/) and
// the replicated x^T (inputs/); each rank computes y_r = relu(x w1) w2 and an AllReduce (add) over all N cores sums
// the partials, so every rank saves the full y = relu(x W1) W2 (expected/y.npy, replicated).
Workload make_tp_mlp_ranks(int N, bool with_data) {
  const int64_t B = 32, D = 128, Hs = 32, H = Hs * N, O = 64;
  const std::string name = "tp_mlp_" + std::to_string(N) + "ranks";
  Builder b(name);
  auto xT = b.input("xT", {D, B}), w1 = b.input("w1", {D, Hs}), w2 = b.input("w2", {Hs, O});
  auto y = b.output("y", {B, O});
  auto xt = b.sbuf("xT_sb", {D, B}), w1s = b.sbuf("w1_shard", {D, Hs}), w2s = b.sbuf("w2_shard", {Hs, O});
  auto hps = b.psum("hT_psum", {Hs, B}), hs = b.sbuf("hT_sb", {Hs, B});
  auto yps = b.psum("y_psum", {B, O}), ys = b.sbuf("y_partial", {B, O}), yr = b.sbuf("y_sum", {B, O});
  load(b, xT.all(), xt.all());
  load(b, w1.all(), w1s.all());
  load(b, w2.all(), w2s.all());
  b.add(InstructionType::Matmult, {b.ap(w1s.all()), b.ap(xt.all())}, {b.ap(hps.all())}).start_tensor_calc(true);
  b.add(InstructionType::Activation, {b.ap(hps.all()), b.imm(1.0)}, {b.ap(hs.all())})
      .act_func(isa::ActivationFunctionType::Relu);
  b.add(InstructionType::Matmult, {b.ap(hs.all()), b.ap(w2s.all())}, {b.ap(yps.all())}).start_tensor_calc(true);
  b.add(InstructionType::TensorCopy, {b.ap(yps.all())}, {b.ap(ys.all())}).engine(isa::Engine::Pool);
  std::vector<int64_t> all;
  for (int r = 0; r < N; ++r) all.push_back(r);
  b.add(InstructionType::CollectiveCompute, {b.ap(ys.all())}, {b.ap(yr.all())})
      .collective_kind("AllReduce").op(isa::AluOp::add).replica_groups({all}).engine(isa::Engine::Pool);
  store(b, yr.all(), y.all());

  Workload w;
  w.name = name;
  w.program = b.finish();
  w.cores = N;
  w.lnc = 1;
  w.summary = "A tensor-parallel MLP y = relu(x W1) W2 on " + std::to_string(N) +
              " ranks, one physical core each (`--cores " + std::to_string(N) +
              " --lnc 1`; each rank has its own DRAM): W1 split by columns, W2 by rows (the Megatron-LM split, "
              "Shoeybi et al. 2019, section 3); rank r's inputs are its blocks w1 = W1[:, 32 r : 32 r + 32] and "
              "w2 = W2[32 r : 32 r + 32, :] (inputs/rank<r>/) and the replicated xT (inputs/). Each rank computes "
              "h_r^T = relu(w1^T x^T) (Matmult fp32 into PSUM, Activation Relu) and its partial y_r = h_r w2 "
              "(Matmult, TensorCopy); an AllReduce (add) over all ranks sums the partials and every rank saves the "
              "full y (expected/y.npy, the same for every rank).";
  w.sizes = "one size: xT [128, 32], per rank w1 [128, 32] and w2 [32, 64] (full W1 [128, " + std::to_string(H) +
            "], W2 [" + std::to_string(H) + ", 64]), y [32, 64], fp32.";
  w.rtol = 0.0;
  if (!with_data) {
    w.atol = 0.0;
    return w;
  }
  Rng rng(0x7e2a0d00u + static_cast<uint64_t>(N));
  const auto vx = rng.uniform_vec(size_t(D * B), -1, 1), v1 = rng.uniform_vec(size_t(D * H), -1, 1),
             v2 = rng.uniform_vec(size_t(H * O), -1, 1);
  // Reference in double on the full W1, W2, with the bound of tp_mlp (Higham eq. 3.5, u = 2^-24): the first layer
  // E1_j = 1.01 D u sum_k |x_k w1_kj|; the second an fp32 dot product of Hs terms per rank then N - 1 fp32 adds
  // of the partials in rank order (the AllReduce), at most Hs + N - 1 roundings on any path:
  //   |y^_i - y_i| <= sum_j E1_j |w2_ji| + 1.01 (Hs + N) u sum_j |h_j w2_ji| + u |y_i|.
  const auto [vy, worst] = mlp_reference(vx, v1, v2, B, D, H, O, Hs + N);
  w.atol = std::ceil(worst * 1e7) / 1e7;
  w.tolerance = "fp32 products and sums in PSUM (Matmult fp32), relu exact, N - 1 fp32 adds in the AllReduce (rank "
                "order): the bound sum_j E1_j |w2_ji| + 1.01 (Hs + N) u sum_j |h_j w2_ji| + u |y_i| with E1_j = 1.01 "
                "D u sum_k |x_k w1_kj| (Higham eq. 3.5, u = 2^-24), its largest value over these inputs: atol " +
                std::to_string(w.atol) + ", rtol 0. The reference is the exact (double) computation on the full W1, W2.";
  w.inputs["xT"] = npy_f32(vx, {D, B});
  w.rank_inputs.resize(static_cast<size_t>(N));
  for (int r = 0; r < N; ++r) {
    std::vector<float> b1(size_t(D * Hs)), b2(size_t(Hs * O));
    for (int64_t k = 0; k < D; ++k)
      for (int64_t j = 0; j < Hs; ++j) b1[size_t(k * Hs + j)] = v1[size_t(k * H + r * Hs + j)];
    for (int64_t j = 0; j < Hs; ++j)
      for (int64_t i = 0; i < O; ++i) b2[size_t(j * O + i)] = v2[size_t((r * Hs + j) * O + i)];
    w.rank_inputs[size_t(r)]["w1"] = npy_f32(b1, {D, Hs});
    w.rank_inputs[size_t(r)]["w2"] = npy_f32(b2, {Hs, O});
  }
  w.expected["y"] = npy_f32(vy, {B, O});
  return w;
}

}  // namespace neuronsim::workloads
