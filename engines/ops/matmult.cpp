// Matmult: the PE array as algebra (reference neuronx-cc/bir/sim-matmul-mx.md 1-2, 5, 7; NKI nc_matmul):
//   ins[0] stationary [K, M] (K partitions, M free elements), ins[1] moving [K, N]
//   out (PSUM) [M, N] = stationary^T * moving, operands widened to fp32 and multiplied in fp32 (Eigen).
// Operand dtypes: float types or uint8 only (birsim's gate "Invalid ifmap/weights data type for matmult").
// float32r: both operands must be float32r (birsim asserts it); its operand rounding (sub_2A4750) is not given by
// the reference, so float32r values enter the product unchanged (INFERRED). fp32 operands are one fp32 product;
// no 4-pass split is modelled (the reference has none).
// Zero points (reference 2 "per-operand uint8 zero-point subtraction"): when given, weights_quant_offset is
// subtracted from every stationary (weights) element and ifmap_quant_offset from every moving (ifmap) element,
// in fp32, before the product.
// perf_mode (reference 2, QUIRK): DoubleRow and DoublePixel double the contraction: every partition carries two
// K-rows, the operand [P, 2X] becomes [2P, X] with logical row 2p + r = half r of partition p (the contiguous
// reinterpretation of the buffer); DoubleRow first de-interleaves the stationary operand (element (p, 2x + r) is
// logical (2p + r, x), deinterleaveMatrices factor 2). DoubleColumn has no numeric effect in birsim (only the
// DoubleRow / DoublePixel codes are tested) and runs as None.
// PSUM accumulation (reference 5 and sim-dispatch-state.md 4.3/4.4): start_tensor_calc = true is a group head --
// the PSUM region is reset and the product written (a copy); start_tensor_calc = false is a group body -- each
// destination element that was written since its reset gets += product (fp32), and an element never written
// (birsim's per-byte written shadow still clear) takes a copy. The shadow is read here from the memory itself:
// an element whose bytes are all 0xFF is birsim's never-written poison (sim-dispatch-state.md: memory starts as
// 0xFF) -- INFERRED stand-in for the shadow, exact unless a body accumulates onto a computed all-ones pattern.
// stop_tensor_calc closes the group and has no numeric effect.
// is_transpose (PE transpose, NKI nc_transpose: an identity matmul): with both operands it is the same product
// (the compiler supplies the identity as the moving operand); with only ins[0] the output is ins[0]^T, copied.
//
// MatmultSparse (reference 7, structured sparsity: the stationary holds only the active rows, an int16 index
// tensor says which dense K-row each belongs to): ins[0] stationary [Ka, M] (active rows), ins[1] moving [K, N]
// (dense), ins[2] indices [Ka, 1] (one dense row per active row) or [Ka, M] (per column);
//   out[m, n] = sum over a ascending of st[a, m] * mv[idx(a, m), n]   (fp32 +=; a negative index is skipped).
// The 128-active-rows and 32 sub-tile geometry of birsim's loop is the hardware tiling of this sum; it is not
// enforced (INFERRED model of the reference's description). PSUM writeback as above.
#include <cstdint>
#include <cstring>

#include "engines/ops/common.hpp"
#include "neuronsim/engines/dtype.hpp"

namespace neuronsim::engines::ops {

namespace {

void check_pe_dtype(const Memory &m, const Access &a, const char *field, const char *what) {
  if (!isa::dtype_is_float(a.dtype) && a.dtype != isa::Dtype::uint8)
    unsupported(m, field, std::string("Invalid ") + what + " data type for matmult: " + isa::enum_name(a.dtype));
}

// [P, factor*X] -> [factor*P, X].
Mat unpack_rows(const Memory &m, const Tile &t, int64_t factor, bool deinterleave, const char *field) {
  const int64_t P = t.rows(), F = t.cols();
  if (F % factor != 0)
    unsupported(m, "perf_mode", std::string(field) + ": DoubleRow/DoublePixel need an even number of elements per "
                                "partition, got " + std::to_string(F));
  const int64_t X = F / factor;
  Mat r(P * factor, X);
  for (int64_t p = 0; p < P; ++p)
    for (int64_t k = 0; k < factor; ++k)
      for (int64_t x = 0; x < X; ++x) r(p * factor + k, x) = deinterleave ? t(p, x * factor + k) : t(p, k * X + x);
  return r;
}

// A group body without tiles (stream, common.hpp): one pass over `out` in walk order, each block read, summed
// with the product and written back in place -- the same values as the read, read, write of psum_writeback
// (each element is read before it is written, and no other element is touched). False, having done nothing,
// when stream refuses (uninitialised-read tracking on). Profiled (bench/bench_sim.cpp (b)): the tile path's two
// reads, three buffers and byte loop were a fifth of a 128x128x512 matmul.
bool stream_accumulate(Memory &m, const Access &out, const float *r) {
  constexpr int64_t kBlock = 2048;
  thread_local std::vector<float> buf(kBlock);
  const isa::Dtype t = out.dtype;
  const int64_t esz = isa::dtype_size(t);
  const bool fp32 = t == isa::Dtype::float32 || t == isa::Dtype::float32r;
  int64_t pos = 0;
  return stream<0>(m, {&out}, kBlock, [&](const std::array<uint8_t *, 1> &p, int64_t n) {
    const float *x = r + pos;
    pos += n;
    if (fp32 && reinterpret_cast<uintptr_t>(p[0]) % alignof(float) == 0) {
      // Branch-free, so that the compiler vectorises it: the sum is computed for every element and dropped where
      // the element was never written (all-ones poison: a copy). The product is not in PSUM (no aliasing).
      float *__restrict o = reinterpret_cast<float *>(p[0]);
      const float *__restrict xr = x;
      for (int64_t i = 0; i < n; ++i) {
        uint32_t u;
        std::memcpy(&u, o + i, 4);
        const float sum = o[i] + xr[i];
        o[i] = u == 0xFFFFFFFFu ? xr[i] : sum;
      }
      return;
    }
    float *prev = buf.data();
    load_f32(t, p[0], prev, n);
    for (int64_t i = 0; i < n; ++i) {
      bool unwritten = true;
      for (int64_t b = 0; b < esz && unwritten; ++b) unwritten = p[0][i * esz + b] == 0xFF;
      prev[i] = unwritten ? x[i] : prev[i] + x[i];
    }
    store_f32(t, prev, p[0], n);
  });
}

} // namespace

// The PSUM write of every matmul (group head copies, group body accumulates; see the header).
void psum_writeback(Memory &m, const isa::Inst &I, const Access &out, const Mat &result) {
  if (out.partitions() != result.rows() || out.free_elements() != result.cols())
    unsupported(m, "outs[0]",
                "output is [" + std::to_string(out.partitions()) + ", " + std::to_string(out.free_elements()) +
                    "], the product is [" + std::to_string(result.rows()) + ", " + std::to_string(result.cols()) +
                    "]");
  if (I.f.start_tensor_calc) {
    m.write_f32(out, result.data());
    return;
  }
  if (stream_accumulate(m, out, result.data())) return;
  const int64_t n = result.size(), esz = isa::dtype_size(out.dtype);
  std::vector<uint8_t> raw(static_cast<size_t>(n * esz));
  m.read_raw(out, raw.data());
  std::vector<float> prev(static_cast<size_t>(n));
  m.read_f32(out, prev.data());
  std::vector<float> r(result.data(), result.data() + n);
  for (int64_t i = 0; i < n; ++i) {
    bool unwritten = true;
    for (int64_t b = 0; b < esz && unwritten; ++b) unwritten = raw[static_cast<size_t>(i * esz + b)] == 0xFF;
    if (!unwritten) r[static_cast<size_t>(i)] = prev[static_cast<size_t>(i)] + r[static_cast<size_t>(i)];
  }
  m.write_f32(out, r.data());
}

void exec_matmult(const DynInst &d, Memory &m, EngineState &) {
  const isa::Inst &I = *d.inst;
  const Access &st = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  check_pe_dtype(m, st, "ins[0]", "weights");
  Mat result;
  Tile s = read_tile(m, st);
  if (I.has(isa::Field::weights_quant_offset) || I.f.weights_quant_offset != 0)
    s -= float(static_cast<uint8_t>(I.f.weights_quant_offset));
  if (I.f.is_transpose && !has_in_ap(d, 1)) {
    result = s.matrix().transpose();
    return psum_writeback(m, I, out, result);
  }
  const Access &mv = in_ap(d, m, 1);
  check_pe_dtype(m, mv, "ins[1]", "ifmap");
  if ((st.dtype == isa::Dtype::float32r) != (mv.dtype == isa::Dtype::float32r))
    unsupported(m, "ins[1]", "float32r operands must both be float32r");
  Tile v = read_tile(m, mv);
  if (I.has(isa::Field::ifmap_quant_offset) || I.f.ifmap_quant_offset != 0)
    v -= float(static_cast<uint8_t>(I.f.ifmap_quant_offset));
  const auto perf = I.f.perf_mode;
  Mat sm, vm;
  if (perf == isa::MatmultPerfMode::DoubleRow || perf == isa::MatmultPerfMode::DoublePixel) {
    sm = unpack_rows(m, s, 2, perf == isa::MatmultPerfMode::DoubleRow, "ins[0]");
    vm = unpack_rows(m, v, 2, false, "ins[1]");
  } else {
    sm = s.matrix();
    vm = v.matrix();
  }
  if (vm.rows() != sm.rows())
    unsupported(m, "ins[1]",
                "contraction mismatch: stationary has " + std::to_string(sm.rows()) + " rows, moving " +
                    std::to_string(vm.rows()));
  result.noalias() = sm.transpose() * vm;
  psum_writeback(m, I, out, result);
}

void exec_matmult_sparse(const DynInst &d, Memory &m, EngineState &) {
  const isa::Inst &I = *d.inst;
  const Access &sa = in_ap(d, m, 0);
  const Access &va = in_ap(d, m, 1);
  const Access &ia = in_ap(d, m, 2);
  check_pe_dtype(m, sa, "ins[0]", "weights");
  check_pe_dtype(m, va, "ins[1]", "ifmap");
  const Tile s = read_tile(m, sa), v = read_tile(m, va);
  const TileI idx = read_tile_i32(m, ia);
  const int64_t Ka = s.rows(), M = s.cols(), K = v.rows(), N = v.cols();
  if (idx.rows() != Ka || (idx.cols() != 1 && idx.cols() != M))
    unsupported(m, "ins[2]", "the index tensor is [active rows, 1] or [active rows, M]");
  Mat r = Mat::Zero(M, N);
  for (int64_t a = 0; a < Ka; ++a)
    for (int64_t j = 0; j < M; ++j) {
      const int64_t k = idx.cols() == 1 ? idx(a, 0) : idx(a, j);
      if (k < 0) continue;
      if (k >= K) unsupported(m, "ins[2]", "index " + std::to_string(k) + " beyond the moving operand's " + std::to_string(K) + " rows");
      const float w = s(a, j);
      for (int64_t n = 0; n < N; ++n) r(j, n) = w * v(k, n) + r(j, n);
    }
  psum_writeback(m, I, out_ap(d, m, 0), r);
}

} // namespace neuronsim::engines::ops
