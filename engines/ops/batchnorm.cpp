// Batch norm statistics and backward (reference neuronx-cc/bir/sim-bn-rng-collective-dma.md 1): all fp32, per
// partition row. These are serial recurrences (Welford, Chan), written as the reference gives them, so the
// rounding sequence is birsim's.
//
// Operand conventions (ins / outs indices):
//   BNStats           ins[0] x [P, N]                                   -> outs[0] [P, 6]
//                     (n_A, mean_A, M2_A, n_B, mean_B, M2_B): lane A = even free indices, lane B = odd; M2 raw.
//                     apply_transpose: the 32x32 StreamTranspose tile swap first (partition <-> element).
//   BNStatsAggregate  ins[0] [P, 6K] (triples)                          -> outs[0] [P, 2] (mean, population var)
//   BNGradients       ins[0] x, ins[1] dy, ins[2] mean [P,1], ins[3] varfactor [P,1]
//                                                                       -> outs[0] [P, 3] (Σdy, Σt·vf, Σt),
//                     t = (x - mean) * dy * vf
//   BNBackprop        ins[0] x, ins[1] dy, ins[2] gradients [P, 3] = (scale, A, Bc), ins[3] mean [P, 1]
//   BNBackprop2       ins[0] x, ins[1] dy, ins[2] [P, 1] = (scale), ins[3] [P, 2] = (A, Bc), ins[4] mean
//                     both -> outs[0] dx = (dy * total_elements - ((x - mean) * Bc + A)) * scale
#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

namespace {

// The StreamTranspose index map (reference sim-elementwise-datamove.md 5.3): element (p, e) of a [P, N] tile goes
// to flat index (p&31 | e&~31) + out_cols * (p&~31 | e&31), with out_cols = P for the transposed [N, P] tile.
Tile transpose32(const Tile &x) {
  const int64_t P = x.rows(), N = x.cols();
  Tile t(N, P);
  float *o = t.data();
  for (int64_t p = 0; p < P; ++p)
    for (int64_t e = 0; e < N; ++e) o[((p & 31) | (e & ~int64_t(31))) + P * ((p & ~int64_t(31)) | (e & 31))] = x(p, e);
  return t;
}

// dx for both backprop forms; coefficient columns (scale, A, Bc) per partition.
void backprop(const DynInst &d, Memory &m, const std::vector<float> &scale, const std::vector<float> &A,
              const std::vector<float> &Bc, size_t mean_in) {
  const Access &xa = in_ap(d, m, 0);
  const Access &dya = in_ap(d, m, 1);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, xa, dya, "ins[1]");
  require_same_count(m, xa, out, "outs[0]");
  const int64_t parts = xa.partitions(), n = xa.free_elements();
  const std::vector<float> mean = per_partition(d, m, mean_in, parts);
  // total_elements = N, a float field (reference 1.4: *(float*)(Inst+0xF0)).
  const float N = float(d.inst->f.total_elements);
  Tile x = read_tile(m, xa);
  const Tile dy = read_tile(m, dya);
  for (int64_t p = 0; p < parts; ++p) {
    const size_t q = static_cast<size_t>(p);
    for (int64_t i = 0; i < n; ++i) x(p, i) = (dy(p, i) * N - ((x(p, i) - mean[q]) * Bc[q] + A[q])) * scale[q];
  }
  m.write_f32(out, x.data());
}

} // namespace

void exec_bn_stats(const DynInst &d, Memory &m, EngineState &) {
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  Tile x = read_tile(m, in);
  if (d.inst->f.apply_transpose) x = transpose32(x);
  if (out.partitions() != x.rows()) unsupported(m, "outs[0]", "one output row per (transposed) input partition");
  require_cols(m, out, 6, "outs[0]");
  const int64_t P = x.rows(), N = x.cols();
  Tile o(P, 6);
  for (int64_t p = 0; p < P; ++p) {
    float s[6] = {float((N + 1) >> 1), 0.0f, 0.0f, float(N >> 1), 0.0f, 0.0f};
    float n = 0.0f;  // one running count shared by both lanes, bumped once per pair (reference QUIRK)
    for (int64_t i = 0; i < N; ++i) {
      const int64_t L = i & 1;
      if (L == 0) n += 1.0f;
      const float v = x(p, i);
      const float r = 1.0f / n;
      const float old_mean = s[3 * L + 1];
      const float new_mean = (1.0f - r) * old_mean + r * v;
      s[3 * L + 1] = new_mean;
      s[3 * L + 2] += (v - new_mean) * (v - old_mean);
    }
    for (int k = 0; k < 6; ++k) o(p, k) = s[k];
  }
  m.write_f32(out, o.data());
}

void exec_bn_stats_aggregate(const DynInst &d, Memory &m, EngineState &) {
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  if (in.free_elements() % 6 != 0)
    unsupported(m, "ins[0]", "BNStatsAggregate input must hold a multiple of 6 elements per partition");
  require_cols(m, out, 2, "outs[0]");
  const Tile x = read_tile(m, in);
  const int64_t P = x.rows(), T = x.cols() / 3;
  Tile o(P, 2);
  for (int64_t p = 0; p < P; ++p) {
    float n_acc = 0.0f, mean_acc = 0.0f, var_acc = 0.0f;  // var_acc is normalized (Σdev² / n)
    for (int64_t t = 0; t < T; ++t) {
      const float nt = x(p, 3 * t), mt = x(p, 3 * t + 1), m2 = x(p, 3 * t + 2);
      const float N = nt + n_acc;
      const float r = 1.0f / N;
      const float delta = mean_acc - mt;
      mean_acc = (mean_acc * n_acc + nt * mt) * r;
      var_acc = (var_acc * n_acc + m2) * r + nt * n_acc * delta * delta * r * r;  // Chan merge
      n_acc += nt;
    }
    o(p, 0) = mean_acc;
    o(p, 1) = var_acc;
  }
  m.write_f32(out, o.data());
}

void exec_bn_gradients(const DynInst &d, Memory &m, EngineState &) {
  const Access &xa = in_ap(d, m, 0);
  const Access &dya = in_ap(d, m, 1);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, xa, dya, "ins[1]");
  require_cols(m, out, 3, "outs[0]");
  const int64_t parts = xa.partitions(), n = xa.free_elements();
  const std::vector<float> mean = per_partition(d, m, 2, parts), vf = per_partition(d, m, 3, parts);
  const Tile x = read_tile(m, xa), dy = read_tile(m, dya);
  Tile o(parts, 3);
  for (int64_t p = 0; p < parts; ++p) {
    const size_t q = static_cast<size_t>(p);
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      const float t = (x(p, i) - mean[q]) * dy(p, i) * vf[q];
      s2 += t;
      s1 += t * vf[q];
      s0 += dy(p, i);
    }
    o(p, 0) = s0;
    o(p, 1) = s1;
    o(p, 2) = s2;
  }
  m.write_f32(out, o.data());
}

void exec_bn_backprop(const DynInst &d, Memory &m, EngineState &) {
  const Access &g = in_ap(d, m, 2);
  require_cols(m, g, 3, "ins[2]");
  const Tile gt = read_tile(m, g);
  const int64_t parts = in_ap(d, m, 0).partitions();
  if (gt.rows() != parts) unsupported(m, "ins[2]", "one coefficient row per partition");
  std::vector<float> s(static_cast<size_t>(parts)), A(s), Bc(s);
  for (int64_t p = 0; p < parts; ++p) {
    s[static_cast<size_t>(p)] = gt(p, 0);
    A[static_cast<size_t>(p)] = gt(p, 1);
    Bc[static_cast<size_t>(p)] = gt(p, 2);
  }
  backprop(d, m, s, A, Bc, 3);
}

void exec_bn_backprop2(const DynInst &d, Memory &m, EngineState &) {
  const int64_t parts = in_ap(d, m, 0).partitions();
  const std::vector<float> s = per_partition(d, m, 2, parts);
  const Access &bc = in_ap(d, m, 3);
  require_cols(m, bc, 2, "ins[3]");
  const Tile bt = read_tile(m, bc);
  if (bt.rows() != parts) unsupported(m, "ins[3]", "one coefficient row per partition");
  std::vector<float> A(static_cast<size_t>(parts)), Bc(A);
  for (int64_t p = 0; p < parts; ++p) {
    A[static_cast<size_t>(p)] = bt(p, 0);
    Bc[static_cast<size_t>(p)] = bt(p, 1);
  }
  backprop(d, m, s, A, Bc, 4);
}

} // namespace neuronsim::engines::ops
