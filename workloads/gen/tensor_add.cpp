// tensor_add: c = a + b, fp32, tiled over 128-row blocks (the NKI getting-started kernel `nki_tensor_add`,
// generalised to many tiles: load both tiles, one VectorE tensor_tensor add, store), lowered as the compiler lowers
// it (workload.hpp): the loop-local tiles rotate over B buffers and the loads run B - 1 tiles ahead.
#include "workload.hpp"

namespace neuronsim::workloads {

using builder::Aff;
using builder::Builder;
using isa::InstructionType;

Workload make_tensor_add(Size s, bool with_data) {
  const int64_t P = 128;                      // partitions per tile (nl.tile_size.pmax)
  const int64_t R = s == Size::Small ? 256 : 8192;
  const int64_t C = s == Size::Small ? 64 : 2048;
  Builder b("tensor_add");
  auto a = b.input("a", {R, C}), bb = b.input("b", {R, C}), c = b.output("c", {R, C});
  const int64_t T = R / P, B = sbuf_buffers(T, 3 * C * 4, 0);
  auto ta = rotating_sbuf(b, "a_tile", P, C, isa::Dtype::float32, B);
  auto tb = rotating_sbuf(b, "b_tile", P, C, isa::Dtype::float32, B);
  auto tc = rotating_sbuf(b, "c_tile", P, C, isa::Dtype::float32, B);
  pipelined_loop(
      b, "i", T, B,
      [&](Aff i, int64_t k) {
        load(b, a.tile(i * P, P, 0, C), ta.slot(k));
        load(b, bb.tile(i * P, P, 0, C), tb.slot(k));
      },
      [&](Aff i, int64_t k) {
        b.add(InstructionType::TensorTensor, {b.ap(ta.slot(k)), b.ap(tb.slot(k))}, {b.ap(tc.slot(k))})
            .op(isa::AluOp::add);
        store(b, tc.slot(k), c.tile(i * P, P, 0, C));
      });

  Workload w;
  w.name = "tensor_add";
  w.program = b.finish();
  w.summary = "c = a + b on fp32 [R, C] tensors. Over the R/128 row tiles: two Loads (DMA) into SBUF, one "
              "TensorTensor add on VectorE, one Save. Mirrors the NKI getting-started `tensor_add` kernel." +
              lowering_note(B);
  w.sizes = "small: a, b, c [" + std::to_string(R) + ", " + std::to_string(C) +
            "] fp32 (committed); full: [8192, 2048] fp32.";
  w.rtol = 0.0;
  w.atol = 0.0;
  w.tolerance = "Exact: the sum of two fp32 values rounded once to fp32 is what both the hardware (fp32 ALU) and "
                "the reference (double sum rounded to fp32 -- exactly the correctly rounded fp32 sum, since a "
                "double holds the exact sum of two fp32 values) produce.";
  if (!with_data) return w;
  Rng rng(0x7e2a0001);
  auto va = rng.uniform_vec(size_t(R * C), -4, 4), vb = rng.uniform_vec(size_t(R * C), -4, 4);
  std::vector<double> vc(va.size());
  for (size_t k = 0; k < va.size(); ++k) vc[k] = double(va[k]) + double(vb[k]);
  w.inputs["a"] = npy_f32(va, {R, C});
  w.inputs["b"] = npy_f32(vb, {R, C});
  w.expected["c"] = npy_f32(vc, {R, C});
  return w;
}

}  // namespace neuronsim::workloads
