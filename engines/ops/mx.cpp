// OCP MX microscaling: MatmultMx (dequantize + matmul) and QuantizeMx (reference
// neuronx-cc/bir/sim-matmul-mx.md 3, 4, 6; numerics/mx-microscaling.md). Bit-exact where the reference gives the
// algorithm: the E8M0 dequant ldexpf(x, E - 127), the shared-exponent pick, the 2^(127 - E) pre-scale and the
// FP4 RNE-with-saturate encoder.
//
// Data: the x4 containers hold 4 logical elements each -- float4_e2m1fn_x4 (2 bytes, 4 nibbles) and
// float8_e4m3fn_x4 / float8_e5m2_x4 (4 bytes). Element r of a container is nibble r (low nibble first) / byte r.
// INFERRED: the reference pins a stride-dependent intra-x4 lane permutation for FP4 (its gap G3 leaves the
// concrete stride open); plain little-endian order is used.
// Scales: one E8M0 byte per block of 8 partitions x 1 container (= 8 x 4 elements, 32 values). The scale
// operand is either the block grid itself ([P/8, C] in walk order, C = containers per partition) or a
// P-partition tile where grid row i lives in partition (i & 3) + 32 * (i >> 2) (copy2DScaleVectorToArray's
// block-major interleave, reference 6.4).
//
// MatmultMx  ins[0] stationary data [P, Cs], ins[1] moving data [P, Cm], ins[2] stationary scales, ins[3] moving
//            scales; each element is dequantized ldexpf(v, E - 127), then each partition's 4 lanes become 4
//            contraction rows (deinterleave factor 4: element (p, 4j + r) is logical row 4p + r, column j), and
//            out [Cs, Cm] = st^T * mv in fp32, written to PSUM like Matmult (group head / body).
// QuantizeMx ins[0] bf16/fp16/fp32 [P, 4C] -> outs[0] data [P, C] x4 (or [P, 4C] of plain float8_e4m3fn /
//            float8e5), outs[1] scales (either layout above). Per block: E = max(1, max(0, maxexp - EMAX)) with
//            maxexp the largest biased fp32 exponent byte (bits >> 23, sign dropped) and EMAX = 2 (fp4), 8
//            (e4m3fn), 15 (e5m2); data = v * 2^(127 - E) narrowed with RNE and saturation (FP4: NaN -> signed
//            zero, |x| >= 8 -> 6; FP8 through f32_to_fp8 with saturation, the FP8ConvConfig saturate bit).
//            With `nki_scale_rule` (neuronsim's key, set by the NKI front end): E = max(0, maxexp - (EMAX - 1)),
//            the rule of the public nki.isa.quantize_mx page ("Scale calculation": X = 2^(floor(log2 amax) -
//            (Emax - 1)), "two times larger" than OCP's, an all-zero group 2^-127). birsim's MxAlternativeEmaxEn
//            mode takes the same EMAX - 1 (reference sim-matmul-mx.md 6) but keeps its floor of 1.
#include <cmath>
#include <cstring>

#include "neuronsim/engines/dtype.hpp"
#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

namespace {

using D = isa::Dtype;

constexpr float kFp4Grid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

bool is_x4(D t) { return t == D::float4_e2m1fn_x4 || t == D::float8_e4m3fn_x4 || t == D::float8_e5m2_x4; }

float fp4_decode(uint32_t nib) { return (nib & 8u) ? -kFp4Grid[nib & 7u] : kFp4Grid[nib & 7u]; }

// e2m1 encoder (reference 6.3, sub_2A3530): RNE to the grid, saturate to 6.0, NaN -> signed zero.
uint32_t fp4_encode(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  const uint32_t sign = (bits >> 31) << 3;
  if (std::isnan(v)) return sign;
  const float a = std::fabs(v);
  if (a >= 8.0f) return sign | 7u;
  const float q = a < 2.0f ? 0.5f : (a < 4.0f ? 1.0f : 2.0f);  // the grid spacing of a's binade
  float r = std::nearbyint(a / q) * q;                       // ties to even under the default rounding mode
  if (r > 6.0f) r = 6.0f;
  uint32_t code = 0;
  while (code < 7 && kFp4Grid[code] != r) ++code;
  return sign | code;
}

// Values of a data operand, [P, 4C], element (p, 4j + r) = lane r of container j.
Tile decode_x4(const Memory &m, const Access &a, const char *field) {
  if (!is_x4(a.dtype))
    unsupported(m, field, std::string("MX data must be an x4 dtype, got ") + isa::enum_name(a.dtype));
  const int64_t P = a.partitions(), C = a.free_elements(), esz = isa::dtype_size(a.dtype);
  std::vector<uint8_t> raw(static_cast<size_t>(P * C * esz));
  m.read_raw(a, raw.data());
  Tile t(P, 4 * C);
  for (int64_t i = 0; i < P * C; ++i) {
    const uint8_t *b = raw.data() + i * esz;
    float *o = t.data() + 4 * i;
    if (a.dtype == D::float4_e2m1fn_x4) {
      const uint32_t w = uint32_t(b[0]) | (uint32_t(b[1]) << 8);
      for (int r = 0; r < 4; ++r) o[r] = fp4_decode((w >> (4 * r)) & 0xFu);
    } else {
      for (int r = 0; r < 4; ++r)
        o[r] = a.dtype == D::float8_e4m3fn_x4 ? fp8_e4m3fn_to_f32(b[r]) : fp8_e5m2_to_f32(b[r]);
    }
  }
  return t;
}

// Grid row i of a P-partition scale tile (block-major interleave).
int64_t scale_partition(int64_t i) { return (i & 3) + 32 * (i >> 2); }

// The E8M0 grid [P/8, C] of a scale operand.
std::vector<uint8_t> read_scales(const Memory &m, const Access &a, int64_t rows, int64_t C, const char *field) {
  if (isa::dtype_size(a.dtype) != 1) unsupported(m, field, "MX scales are one byte (uint8 / float8_e8m0fnu)");
  std::vector<uint8_t> raw(static_cast<size_t>(elems(a)));
  m.read_raw(a, raw.data());
  if (a.partitions() == rows && a.free_elements() == C) return raw;
  if (a.free_elements() == C && a.partitions() > scale_partition(rows - 1)) {
    std::vector<uint8_t> g(static_cast<size_t>(rows * C));
    for (int64_t i = 0; i < rows; ++i)
      std::memcpy(g.data() + i * C, raw.data() + scale_partition(i) * C, static_cast<size_t>(C));
    return g;
  }
  unsupported(m, field, "scale operand must be the [" + std::to_string(rows) + ", " + std::to_string(C) +
                            "] block grid or a partition tile holding it block-major");
}

void write_scales(Memory &m, const Access &a, const std::vector<uint8_t> &g, int64_t rows, int64_t C) {
  if (isa::dtype_size(a.dtype) != 1) unsupported(m, "outs[1]", "MX scales are one byte (uint8 / float8_e8m0fnu)");
  if (a.partitions() == rows && a.free_elements() == C) return m.write_raw(a, g.data());
  if (a.free_elements() != C || a.partitions() <= scale_partition(rows - 1))
    unsupported(m, "outs[1]", "scale output must be the [" + std::to_string(rows) + ", " + std::to_string(C) +
                                  "] block grid or a partition tile holding it block-major");
  std::vector<uint8_t> raw(static_cast<size_t>(elems(a)));
  m.read_raw(a, raw.data());  // partitions outside the interleave keep their bytes
  for (int64_t i = 0; i < rows; ++i)
    std::memcpy(raw.data() + scale_partition(i) * C, g.data() + i * C, static_cast<size_t>(C));
  m.write_raw(a, raw.data());
}

// Dequantize (ldexpf per 8 x 4 block) and deinterleave by 4: [P, 4C] -> [4P, C].
Mat dequant_rows(const Memory &m, const Tile &v, const std::vector<uint8_t> &s, const char *field) {
  const int64_t P = v.rows(), C = v.cols() / 4;
  if (P % 8 != 0) unsupported(m, field, "MX operands span whole 8-partition blocks");
  Mat r(4 * P, C);
  for (int64_t p = 0; p < P; ++p)
    for (int64_t j = 0; j < C; ++j) {
      const int e = int(s[static_cast<size_t>((p / 8) * C + j)]) - 127;
      for (int64_t k = 0; k < 4; ++k) r(4 * p + k, j) = std::ldexp(v(p, 4 * j + k), e);
    }
  return r;
}

} // namespace

void exec_matmult_mx(const DynInst &d, Memory &m, EngineState &) {
  const Access &sa = in_ap(d, m, 0);
  const Access &va = in_ap(d, m, 1);
  const Tile s = decode_x4(m, sa, "ins[0]"), v = decode_x4(m, va, "ins[1]");
  if (s.rows() != v.rows()) unsupported(m, "ins[1]", "stationary and moving data differ in partitions");
  const int64_t P = s.rows();
  if (P % 8 != 0) unsupported(m, "ins[0]", "MX operands span whole 8-partition blocks");
  const Mat sm = dequant_rows(m, s, read_scales(m, in_ap(d, m, 2), P / 8, s.cols() / 4, "ins[2]"), "ins[0]");
  const Mat vm = dequant_rows(m, v, read_scales(m, in_ap(d, m, 3), P / 8, v.cols() / 4, "ins[3]"), "ins[1]");
  Mat r;
  r.noalias() = sm.transpose() * vm;
  psum_writeback(m, *d.inst, out_ap(d, m, 0), r);
}

void exec_quantize_mx(const DynInst &d, Memory &m, EngineState &) {
  const Access &in = in_ap(d, m, 0);
  const Access &od = out_ap(d, m, 0);
  const Access &os = out_ap(d, m, 1);
  const D dt = od.dtype;
  int emax = 0;
  D fp8 = D::float8_e4m3fn;
  switch (dt) {  // reference 6: EMAX table byte_5F7898
  case D::float4_e2m1fn_x4: emax = 2; break;
  case D::float8_e4m3fn_x4: case D::float8_e4m3fn: emax = 8; fp8 = D::float8_e4m3fn; break;
  case D::float8_e5m2_x4: case D::float8e5: emax = 15; fp8 = D::float8e5; break;
  default: unsupported(m, "outs[0]", std::string("QuantizeMx cannot produce ") + isa::enum_name(dt));
  }
  const Tile x = read_tile(m, in);
  const int64_t P = x.rows(), N = x.cols();
  if (P % 8 != 0 || N % 4 != 0) unsupported(m, "ins[0]", "QuantizeMx needs whole 8 x 4 blocks");
  const int64_t C = N / 4, rows = P / 8;
  const bool nki = d.inst->f.nki_scale_rule;
  if (od.partitions() != P || od.free_elements() != (is_x4(dt) ? C : N))
    unsupported(m, "outs[0]", "data output must hold the input's elements (x4: one container per 4)");
  std::vector<uint8_t> scale(static_cast<size_t>(rows * C));
  for (int64_t g = 0; g < rows; ++g)
    for (int64_t j = 0; j < C; ++j) {
      int mx = 0;
      for (int64_t p = 8 * g; p < 8 * g + 8; ++p)
        for (int64_t c = 4 * j; c < 4 * j + 4; ++c) {
          uint32_t bits;
          const float v = x(p, c);
          std::memcpy(&bits, &v, 4);
          mx = std::max(mx, int((bits >> 23) & 0xFFu));
        }
      int e = mx - (nki ? emax - 1 : emax);
      if (e < 0) e = 0;
      if (e == 0 && !nki) e = 1;
      scale[static_cast<size_t>(g * C + j)] = static_cast<uint8_t>(e);
    }
  const int64_t esz = isa::dtype_size(dt);
  std::vector<uint8_t> raw(static_cast<size_t>(elems(od) * esz), 0);
  for (int64_t p = 0; p < P; ++p)
    for (int64_t c = 0; c < N; ++c) {
      const uint32_t mul_bits = uint32_t(254 - scale[static_cast<size_t>((p / 8) * C + c / 4)]) << 23;
      float mul;
      std::memcpy(&mul, &mul_bits, 4);
      const float q = x(p, c) * mul;
      const int64_t flat = p * N + c;
      if (dt == D::float4_e2m1fn_x4) {
        raw[static_cast<size_t>((flat / 4) * 2 + (flat % 4) / 2)] |=
            static_cast<uint8_t>(fp4_encode(q) << (4 * (flat % 2)));
      } else {
        raw[static_cast<size_t>(flat)] = f32_to_fp8(fp8, q, Fp8Overflow::Saturate);
      }
    }
  m.write_raw(od, raw.data());
  write_scales(m, os, scale, rows, C);
}

} // namespace neuronsim::engines::ops
