// cumsum along the free axis, fp32, with VectorE tensor_tensor_scan (NKI tensor_tensor_scan:
// r[i] = op1(op0(data0[i], r[i-1]), data1[i]); reference neuron-arch.md 3.1) as in the NKI cumsum examples:
// data0 = ones, op0 = multiply, data1 = x, op1 = add, so r[i] = r[i-1] + x[i]. The free axis is processed in
// chunks; each chunk's `initial` is the last column of the previous chunk's result (the carry), the first
// chunk starts from 0.
#include <cmath>

#include "workload.hpp"

namespace neuronsim::workloads {

using builder::Aff;
using builder::Builder;
using isa::InstructionType;

Workload make_cumsum(Size s, bool with_data) {
  const int64_t P = 128;
  const int64_t R = s == Size::Small ? 256 : 4096;
  const int64_t L = s == Size::Small ? 128 : 4096;
  const int64_t Wc = s == Size::Small ? 32 : 512;  // scan chunk width
  const int64_t NC = L / Wc;
  Builder b("cumsum");
  auto x = b.input("x", {R, L}), y = b.output("y", {R, L});
  auto ones = b.sbuf("ones", {P, Wc});
  const int64_t T = R / P, B = sbuf_buffers(T, 2 * L * 4, Wc * 4);
  auto xt = rotating_sbuf(b, "x_tile", P, L, isa::Dtype::float32, B);
  auto yt = rotating_sbuf(b, "y_tile", P, L, isa::Dtype::float32, B);
  b.add(InstructionType::Memset, {}, {b.ap(ones.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0);
  int chunk_loops = 0;  // loop names must be unique: one per copy of the body
  pipelined_loop(
      b, "i", T, B, [&](Aff i, int64_t k) { load(b, x.tile(i * P, P, 0, L), xt.slot(k)); },
      [&](Aff i, int64_t k) {
        auto scan = [&](Aff c, const isa::Arg &initial) {
          b.add(InstructionType::TensorScalarPtr, {b.ap(ones.all()), b.ap(xt.slot(k, c * Wc, Wc)), initial},
                {b.ap(yt.slot(k, c * Wc, Wc))})
              .is_tensor_tensor_scan(true)
              .op0(isa::AluOp::mult)
              .op1(isa::AluOp::add);
        };
        scan(Aff(0), b.imm(0.0));
        if (NC > 1)
          b.loop("c" + std::to_string(chunk_loops++), 1, NC, 1,
                 [&](Aff c) { scan(c, b.ap(yt.slot(k, c * Wc + Aff(-1), 1))); });
        store(b, yt.slot(k), y.tile(i * P, P, 0, L));
      });
  Workload w;
  w.name = "cumsum";
  w.program = b.finish();
  w.summary = "y[r, j] = sum_{k <= j} x[r, k], fp32. ones [P, Wc] set once (Memset). Per 128-row tile: Load; per "
              "Wc-wide chunk a TensorScalarPtr with is_tensor_tensor_scan (data0 = ones, data1 = x chunk, op0 = "
              "mult, op1 = add, initial = 0 for the first chunk, else the previous chunk's last result column as "
              "a [P, 1] access: the carry); Save." + lowering_note(B);
  w.sizes = "small (committed): x, y [" + std::to_string(R) + ", " + std::to_string(L) + "] fp32, chunks of " +
            std::to_string(Wc) + "; full: [4096, 4096], chunks of 512.";
  w.rtol = 0.0;
  w.tolerance = "Sequential fp32 summation: |error of y[r, j]| <= j u sum_{k <= j} |x[r, k]| (Higham eq. 4.4), "
                "u = 2^-24; atol is the largest such bound over these inputs (L u max_r sum_k |x[r, k]|).";
  if (!with_data) {
    w.atol = 0.0;
    return w;
  }
  Rng rng(0xc5a50001);
  auto vx = rng.uniform_vec(size_t(R * L), -1, 1);
  std::vector<double> vy(vx.size());
  double worst = 0;
  for (int64_t r = 0; r < R; ++r) {
    double acc = 0, abs_acc = 0;
    for (int64_t j = 0; j < L; ++j) {
      acc += vx[size_t(r * L + j)];
      abs_acc += std::fabs(vx[size_t(r * L + j)]);
      vy[size_t(r * L + j)] = acc;
    }
    worst = std::max(worst, abs_acc);
  }
  w.atol = std::ceil(double(L) * std::ldexp(1.0, -24) * worst * 1e7) / 1e7;
  w.inputs["x"] = npy_f32(vx, {R, L});
  w.expected["y"] = npy_f32(vy, {R, L});
  return w;
}

}  // namespace neuronsim::workloads
