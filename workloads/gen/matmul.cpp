// The four matmul variants of the NKI matrix-multiplication tutorial (awsdocs-neuron "NKI matmul tutorial":
// nki_matmul_tiled_, nki_matmul_hoist_load_, nki_matmul_block_free_dimension_, nki_matmul_fully_optimized_),
// written with the same loop nests, tile shapes and instruction sequence:
//   result[M, N] = lhsT[K, M]^T @ rhs[K, N], bf16 inputs, fp32 PSUM accumulation, fp32 result.
// Matmult ins[0] = stationary [TK, TM], ins[1] = moving [TK, TN] -> PSUM [TM, TN] (NKI nc_matmul).
//
// BIR differences from the Python, each forced by BIR being static:
//  - PSUM accumulation groups: nc_matmul's "first write overwrites" is the static field start_tensor_calc, so the
//    first K step of every group is peeled out of its loop (start_tensor_calc = true) and the loop runs the rest
//    (start_tensor_calc = false). stop_tensor_calc is not set (no numeric effect; reference
//    neuronx-cc/bir/sim-matmul-mx.md 5).
//  - A Python list of tiles becomes one SBUF tensor indexed by a loop-affine free offset.
//  - The result is bf16 (the tutorial's result has lhsT.dtype): the PSUM -> SBUF copy rounds the fp32 sums. The
//    fully-optimized variant keeps its SBUF accumulators in fp32 (the tutorial: lhsT.dtype), so that the check is
//    fp32 accumulation plus one bf16 rounding.
//  - Lowered as the compiler lowers NKI (workload.hpp): loop-local tiles rotate over as many buffers as fit, the
//    loads run ahead of the matmuls that consume them, PSUM tiles rotate over banks, the loads from SP on
//    qSyncIO0, the result's stores from GpSimd on qGpSimdIO1 (lowering.hpp).
#include <cmath>
#include <functional>

#include "workload.hpp"

namespace neuronsim::workloads {

using builder::Aff;
using builder::Builder;
using isa::Dtype;
using isa::InstructionType;

namespace {

struct Shape {
  int64_t M, K, N;      // problem
  int64_t TM, TK, TN;   // tile: stationary free, partitions (contraction), moving free
  int64_t TBM, TBN, TBK;  // tiles per block (blocked variants)
};

// Small: every loop runs at least twice while files stay ~220 KB; tiles shrink to 32/32/64 for that (the
// instruction structure does not depend on the tile size). Full: the hardware tile maxima of
// nl.tile_size (pmax 128, gemm_stationary_fmax 128, gemm_moving_fmax 512) and the tutorial's benchmark size
// 4096 x 8192 @ 8192 x 8192; block factors are the tutorial's (free: 2 x 2; fully optimized: M 16, N 2, K 8).
Shape shape_for(Size s, bool mnk) {
  if (s == Size::Small) return Shape{128, 128, 256, 32, 32, 64, 2, 2, 2};
  if (mnk) return Shape{4096, 8192, 8192, 128, 128, 512, 16, 2, 8};
  return Shape{4096, 8192, 8192, 128, 128, 512, 2, 2, 1};
}

struct Ctx {
  Builder b;
  Shape sh;
  builder::TensorHandle lhsT, rhs, result;
  explicit Ctx(const std::string &name, const Shape &s) : b(name), sh(s) {
    lhsT = b.input("lhsT", {s.K, s.M}, Dtype::bfloat16);
    rhs = b.input("rhs", {s.K, s.N}, Dtype::bfloat16);
    result = b.output("result", {s.M, s.N}, Dtype::bfloat16);
  }
  // One PSUM accumulation group over `steps` K tiles: step 0 peeled with start_tensor_calc, the rest in a loop.
  // stat(k) / mov(k) give the operands of step k.
  void group(const std::string &var, int64_t steps, const std::function<builder::Ap(Aff)> &stat,
             const std::function<builder::Ap(Aff)> &mov, const builder::Ap &psum,
             const std::function<void(Aff)> &before = nullptr) {
    auto step = [&](Aff k, bool start) {
      if (before) before(k);
      b.add(InstructionType::Matmult, {b.ap(stat(k)), b.ap(mov(k))}, {b.ap(psum)}).start_tensor_calc(start);
    };
    step(Aff(0), true);
    if (steps > 1) b.loop(var, 1, steps, 1, [&](Aff k) { step(k, false); });
  }
};

std::string dims(const Shape &s) {
  return "lhsT [" + std::to_string(s.K) + ", " + std::to_string(s.M) + "] bf16, rhs [" + std::to_string(s.K) +
         ", " + std::to_string(s.N) + "] bf16 -> result [" + std::to_string(s.M) + ", " + std::to_string(s.N) +
         "] bf16; tiles TK x TM = " + std::to_string(s.TK) + " x " + std::to_string(s.TM) + ", moving TN = " +
         std::to_string(s.TN);
}

Workload finish(Ctx &c, const std::string &name, bool with_data, const std::string &summary,
                const std::string &blocks) {
  Workload w;
  w.name = name;
  w.program = c.b.finish();
  w.summary = summary;
  const Shape small = shape_for(Size::Small, name == "matmul_blocked_mnk");
  const Shape full = shape_for(Size::Full, name == "matmul_blocked_mnk");
  w.sizes = "small (committed): " + dims(small) + blocks + ".\n\nfull: " + dims(full) + ".";
  const Shape &sh = c.sh;
  if (!with_data) {
    w.rtol = 0;
    w.atol = 0;
    return w;
  }
  uint64_t seed = 1469598103934665603ull;  // FNV-1a of the name: a distinct, portable stream per variant
  for (char ch : name) seed = (seed ^ uint8_t(ch)) * 1099511628211ull;
  Rng rng(seed);
  // Inputs uniform in [-1, 1), rounded to bf16 (the kernel's input dtype); the reference starts from the same
  // bf16 values.
  std::vector<float> A = rng.uniform_vec(size_t(sh.K * sh.M), -1, 1), B = rng.uniform_vec(size_t(sh.K * sh.N), -1, 1);
  for (auto &x : A) x = round_bf16(x);
  for (auto &x : B) x = round_bf16(x);
  std::vector<double> C(size_t(sh.M * sh.N), 0.0);
  double worst_bound = 0.0;
  std::vector<double> absum(size_t(sh.N));
  for (int64_t m = 0; m < sh.M; ++m) {
    std::fill(absum.begin(), absum.end(), 0.0);
    double *crow = &C[size_t(m * sh.N)];
    for (int64_t k = 0; k < sh.K; ++k) {
      const double a = A[size_t(k * sh.M + m)];
      const float *brow = &B[size_t(k * sh.N)];
      for (int64_t n = 0; n < sh.N; ++n) {
        crow[n] += a * double(brow[n]);
        absum[size_t(n)] += std::fabs(a * double(brow[n]));
      }
    }
    for (double v : absum) worst_bound = std::max(worst_bound, v);
  }
  // Error bound of fp32 summation of K exact products (a bf16 x bf16 product has <= 16 significant bits, so it
  // is exact in fp32), in any order and split across PSUM groups + SBUF adds: |err| <= (K - 1) u sum|a b|,
  // u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 4.4), plus u |c| for the
  // final rounding: K u max sum|a b|.
  // fp32 accumulation error E (below), then one rounding to bf16 (8 significant bits: |bf16(x) - x| <= 2^-8 |x|):
  // |bf16(S32) - S| <= 2^-8 |S32| + E <= 2^-8 |S| + E (1 + 2^-8).
  const double E = double(sh.K) * std::ldexp(1.0, -24) * worst_bound;
  w.rtol = std::ldexp(1.0, -8);
  w.atol = std::ceil(E * (1 + std::ldexp(1.0, -8)) * 1e7) / 1e7;  // a readable number, never below the bound
  w.tolerance = "bf16 x bf16 products are exact in fp32; the fp32 accumulation over K = " + std::to_string(sh.K) +
                " terms is off by at most E = K * 2^-24 * max_ij sum_k |lhsT[k,i] rhs[k,j]| (Higham eq. 4.4, any "
                "summation order, including the PSUM-group + SBUF split of the blocked variant), computed from "
                "these inputs; the bf16 result adds one rounding, at most 2^-8 of the value: rtol = 2^-8, atol = "
                "E (1 + 2^-8). The reference is the exact (double) product.";
  w.inputs["lhsT"] = npy_bf16(A, {sh.K, sh.M});
  w.inputs["rhs"] = npy_bf16(B, {sh.K, sh.N});
  w.expected["result"] = npy_f32(C, {sh.M, sh.N});
  return w;
}

}  // namespace

namespace {

// matmul_tiled's buffers and loop nest, for the M tiles m_of(m_local), m_local in [0, MT): the whole matrix on one
// core, or one shard's half on a logical core of two. Returns the rotation depths (B, BP) the descriptions name.
std::pair<int64_t, int64_t> tiled_nest(Ctx &c, int64_t MT, const std::function<Aff(Aff)> &m_of) {
  const Shape sh = c.sh;
  Builder &b = c.b;
  const int64_t KT = sh.K / sh.TK, NT = sh.N / sh.TN;
  const int64_t BP = psum_buffers(NT, 1);
  const int64_t B = sbuf_buffers(KT, (sh.TM + sh.TN) * 2, BP * sh.TN * 2);
  auto lt = rotating_sbuf(b, "lhsT_tile", sh.TK, sh.TM, Dtype::bfloat16, B);
  auto rt = rotating_sbuf(b, "rhs_tile", sh.TK, sh.TN, Dtype::bfloat16, B);
  auto ps = rotating_psum(b, "res_psum", sh.TM, 512, Dtype::float32, BP);  // one bank per slot
  auto rs = rotating_sbuf(b, "res_sb", sh.TM, sh.TN, Dtype::bfloat16, BP);
  int loops = 0;  // loop names must be unique: one per copy of the body
  b.loop("m", 0, MT, 1, [&](Aff ml) {
    const Aff m = m_of(ml);
    b.loop("n", 0, NT / BP, 1, [&](Aff n0) {
      for (int64_t kk = 0; kk < BP; ++kk) {
        const Aff n = n0 * BP + Aff(kk);
        pipelined_loop_first(
            b, "k" + std::to_string(loops++), KT, B,
            [&](Aff k, int64_t slot) {
              load(b, c.lhsT.tile(k * sh.TK, sh.TK, m * sh.TM, sh.TM), lt.slot(slot));
              load(b, c.rhs.tile(k * sh.TK, sh.TK, n * sh.TN, sh.TN), rt.slot(slot));
            },
            [&](Aff, int64_t slot, bool first) {
              b.add(InstructionType::Matmult, {b.ap(lt.slot(slot)), b.ap(rt.slot(slot))}, {b.ap(ps.slot(kk, 0, sh.TN))})
                  .start_tensor_calc(first);
            });
        b.add(InstructionType::TensorCopy, {b.ap(ps.slot(kk, 0, sh.TN))}, {b.ap(rs.slot(kk))});
        store(b, rs.slot(kk), c.result.tile(m * sh.TM, sh.TM, n * sh.TN, sh.TN));
      }
    });
  });
  return {B, BP};
}

}  // namespace

// nki_matmul_tiled_: for m, n: for k: load both tiles, matmul into PSUM; copy PSUM -> SBUF; store. The k tiles
// rotate over B buffers with their loads B - 1 steps ahead; the PSUM tile (and its SBUF copy) rotates over BP
// banks across n.
Workload make_matmul_tiled(Size s, bool with_data) {
  Ctx c("matmul_tiled", shape_for(s, false));
  const auto [B, BP] = tiled_nest(c, c.sh.M / c.sh.TM, [](Aff m) { return m; });
  return finish(c, "matmul_tiled", with_data,
                "The tutorial's `nki_matmul_tiled_`: for each (m, n) output tile, for each k: Load a [TK, TM] "
                "lhsT tile and a [TK, TN] rhs tile (DMA), Matmult into one PSUM tile (fp32 accumulation); then "
                "TensorCopy PSUM -> SBUF (VectorE, rounding to bf16) and Save. The operand tiles are reloaded for "
                "every output tile (the inefficiency the next variants remove). Lowered as the compiler lowers it "
                "(workloads/gen/workload.hpp): the k tiles rotate over " + std::to_string(B) + " buffers with their "
                "loads " + std::to_string(B - 1) + " steps ahead, the PSUM tile and its SBUF copy over " +
                std::to_string(BP) + " banks / buffers across n.",
                "");
}

// matmul_tiled on a logical core of two physical cores (LNC=2, trn2 / trn3): the same program on both, each
// computing the M tiles of its shard (m = shard * MT/2 + m_local, ShardIDKind) into its half of the shared result.
Workload make_matmul_lnc2(Size s, bool with_data) {
  Ctx c("matmul_lnc2", shape_for(s, false));
  const int64_t MH = c.sh.M / c.sh.TM / 2;
  const auto [B, BP] = tiled_nest(c, MH, [MH](Aff ml) { return ml + Aff::shard(2) * MH; });
  Workload w = finish(c, "matmul_lnc2", with_data,
                "matmul_tiled on a logical NeuronCore of two physical cores (LNC=2; run it with `neuronsim run "
                "workloads/multicore/matmul_lnc2 --arch trn2 --lnc 2`): both cores run this program; each takes the M tiles "
                "of its shard, m = shard * " + std::to_string(MH) + " + m_local (the lhsT and result access "
                "patterns' start holds the ShardIDKind term), and writes its half of the result in the shared DRAM. "
                "Lowered as matmul_tiled: the k tiles rotate over " + std::to_string(B) + " buffers, the PSUM tile "
                "and its SBUF copy over " + std::to_string(BP) + " banks / buffers across n.",
                "");
  w.cores = 2;
  w.lnc = 2;
  return w;
}

// nki_matmul_hoist_load_: lhsT tiles of a whole K column loaded once per m, rhs tiles once per (m, n). The K column
// of rhs tiles rotates over BN buffers across n (loaded BN - 1 output tiles ahead), the lhsT column over BM across m;
// the PSUM tile and its SBUF copy rotate with n.
Workload make_matmul_hoisted(Size s, bool with_data) {
  Ctx c("matmul_hoisted", shape_for(s, false));
  const Shape sh = c.sh;
  Builder &b = c.b;
  const int64_t KT = sh.K / sh.TK, MT = sh.M / sh.TM, NT = sh.N / sh.TN;
  const int64_t lcol = KT * sh.TM * 2, rcol = KT * sh.TN * 2;  // bytes per partition of a K column
  const int64_t BN = std::min<int64_t>(psum_buffers(NT, 1), sbuf_buffers(NT, rcol + sh.TN * 2, lcol));
  const int64_t BM = sbuf_buffers(MT, lcol, BN * (rcol + sh.TN * 2));
  auto lts = rotating_sbuf(b, "lhsT_tiles", sh.TK, KT * sh.TM, Dtype::bfloat16, BM);
  auto rts = rotating_sbuf(b, "rhs_tiles", sh.TK, KT * sh.TN, Dtype::bfloat16, BN);
  auto ps = rotating_psum(b, "res_psum", sh.TM, 512, Dtype::float32, BN);
  auto rs = rotating_sbuf(b, "res_sb", sh.TM, sh.TN, Dtype::bfloat16, BN);
  int loops = 0;
  auto name = [&](const char *v) { return std::string(v) + std::to_string(loops++); };
  pipelined_loop(
      b, "m", MT, BM,
      [&](Aff m, int64_t ms) {
        b.loop(name("k_l"), 0, KT, 1, [&](Aff k) {
          load(b, c.lhsT.tile(k * sh.TK, sh.TK, m * sh.TM, sh.TM), lts.slot(ms, k * sh.TM, sh.TM));
        });
      },
      [&](Aff m, int64_t ms) {
        pipelined_loop(
            b, name("n"), NT, BN,
            [&](Aff n, int64_t ns) {
              b.loop(name("k_r"), 0, KT, 1, [&](Aff k) {
                load(b, c.rhs.tile(k * sh.TK, sh.TK, n * sh.TN, sh.TN), rts.slot(ns, k * sh.TN, sh.TN));
              });
            },
            [&](Aff n, int64_t ns) {
              c.group(
                  name("k"), KT, [&](Aff k) { return lts.slot(ms, k * sh.TM, sh.TM); },
                  [&](Aff k) { return rts.slot(ns, k * sh.TN, sh.TN); }, ps.slot(ns, 0, sh.TN));
              b.add(InstructionType::TensorCopy, {b.ap(ps.slot(ns, 0, sh.TN))}, {b.ap(rs.slot(ns))});
              store(b, rs.slot(ns), c.result.tile(m * sh.TM, sh.TM, n * sh.TN, sh.TN));
            });
      });
  return finish(c, "matmul_hoisted", with_data,
                "The tutorial's `nki_matmul_hoist_load_`: per m, Load all K/TK lhsT tiles once into one SBUF "
                "tensor; per (m, n), Load all K/TK rhs tiles, then the K/TK Matmults of the PSUM group, "
                "TensorCopy PSUM -> SBUF (bf16) and Save. Lowered as the compiler lowers it "
                "(workloads/gen/workload.hpp): the rhs K column rotates over " + std::to_string(BN) +
                " buffers (loaded " + std::to_string(BN - 1) + " output tiles ahead), the lhsT column over " +
                std::to_string(BM) + " across m, the PSUM tile and its SBUF copy over " + std::to_string(BN) +
                " banks / buffers.",
                "");
}

// nki_matmul_block_free_dimension_: TILES_IN_BLOCK_M x TILES_IN_BLOCK_N output tiles share loaded operands. The
// rhs block rotates over BNB buffers across n (loaded ahead), the lhsT block over BMB across m, when they fit.
Workload make_matmul_blocked_free(Size s, bool with_data) {
  Ctx c("matmul_blocked_free", shape_for(s, false));
  const Shape sh = c.sh;
  Builder &b = c.b;
  const int64_t KT = sh.K / sh.TK, BM = sh.TM * sh.TBM, BN = sh.TN * sh.TBN;
  const int64_t lblock = sh.TBM * KT * sh.TM * 2, rblock = sh.TBN * KT * sh.TN * 2, out = 2 * sh.TN * 2;
  const int64_t BNB = sbuf_buffers(sh.N / BN, rblock, lblock + out);
  const int64_t BMB = sbuf_buffers(sh.M / BM, lblock, BNB * rblock + out);
  auto lts = rotating_sbuf(b, "lhsT_tiles", sh.TK, sh.TBM * KT * sh.TM, Dtype::bfloat16, BMB);
  auto rts = rotating_sbuf(b, "rhs_tiles", sh.TK, sh.TBN * KT * sh.TN, Dtype::bfloat16, BNB);
  auto ps = rotating_psum(b, "result_tile", sh.TM, 512, Dtype::float32, 2);  // two banks, see below
  auto rs = rotating_sbuf(b, "result_tmp", sh.TM, sh.TN, Dtype::bfloat16, 2);
  int loops = 0;
  auto name = [&](const char *v) { return std::string(v) + std::to_string(loops++); };
  pipelined_loop(
      b, "m", sh.M / BM, BMB,
      [&](Aff m, int64_t ms) {
        b.loop(name("bm_l"), 0, sh.TBM, 1, [&](Aff bm) {
          b.loop(name("k_l"), 0, KT, 1, [&](Aff k) {
            load(b, c.lhsT.tile(k * sh.TK, sh.TK, (m * sh.TBM + bm) * sh.TM, sh.TM),
                 lts.slot(ms, (bm * KT + k) * sh.TM, sh.TM));
          });
        });
      },
      [&](Aff m, int64_t ms) {
        pipelined_loop(
            b, name("n"), sh.N / BN, BNB,
            [&](Aff n, int64_t ns) {
              b.loop(name("bn_r"), 0, sh.TBN, 1, [&](Aff bn) {
                b.loop(name("k_r"), 0, KT, 1, [&](Aff k) {
                  load(b, c.rhs.tile(k * sh.TK, sh.TK, (n * sh.TBN + bn) * sh.TN, sh.TN),
                       rts.slot(ns, (bn * KT + k) * sh.TN, sh.TN));
                });
              });
            },
            [&](Aff n, int64_t ns) {
              // Output tiles alternate between two PSUM banks / SBUF result buffers (bm = 2 * bm2 + slot), as the
              // compiler rotates PSUM banks (reference neuron-arch.md 1.4: 8 banks, 8 accumulation groups
              // outstanding), so the next group's Matmults need not wait for the previous tile's copy-out.
              b.loop(name("bm2"), 0, sh.TBM / 2, 1, [&](Aff bm2) {
                for (int64_t slot = 0; slot < 2; ++slot) {
                  const Aff bm = bm2 * 2 + Aff(slot);
                  b.loop(name("bn"), 0, sh.TBN, 1, [&](Aff bn) {
                    c.group(
                        name("k"), KT, [&](Aff k) { return lts.slot(ms, (bm * KT + k) * sh.TM, sh.TM); },
                        [&](Aff k) { return rts.slot(ns, (bn * KT + k) * sh.TN, sh.TN); }, ps.slot(slot, 0, sh.TN));
                    b.add(InstructionType::TensorCopy, {b.ap(ps.slot(slot, 0, sh.TN))}, {b.ap(rs.slot(slot))});
                    store(b, rs.slot(slot),
                          c.result.tile((m * sh.TBM + bm) * sh.TM, sh.TM, (n * sh.TBN + bn) * sh.TN, sh.TN));
                  });
                }
              });
            });
      });
  return finish(c, "matmul_blocked_free", with_data,
                "The tutorial's `nki_matmul_block_free_dimension_`: blocks of TILES_IN_BLOCK_M = 2 lhsT column "
                "tiles and TILES_IN_BLOCK_N = 2 rhs column tiles are loaded once and reused by the 2 x 2 output "
                "tiles of the block (one PSUM group each: K/TK Matmults, TensorCopy to bf16, Save). Lowered as the "
                "compiler lowers it (workloads/gen/workload.hpp): output tiles alternate between two PSUM banks and "
                "SBUF buffers; the rhs block rotates over " + std::to_string(BNB) + " buffers across n and the lhsT "
                "block over " + std::to_string(BMB) + " across m (as many as fit in SBUF; loaded ahead).",
                "; TILES_IN_BLOCK_M = TILES_IN_BLOCK_N = 2");
}

// nki_matmul_fully_optimized_: M, N and K blocked; PSUM partial sums per K block added into SBUF accumulators. The
// rhs rows of a K block rotate over BK buffers across k and the lhsT rows over BL across m, when they fit beside
// the accumulators.
Workload make_matmul_blocked_mnk(Size s, bool with_data) {
  Ctx c("matmul_blocked_mnk", shape_for(s, true));
  const Shape sh = c.sh;
  Builder &b = c.b;
  const int64_t BM = sh.TM * sh.TBM, BN = sh.TN * sh.TBN, BK = sh.TK * sh.TBK;
  const int64_t NBM = sh.M / BM, NBN = sh.N / BN, NBK = sh.K / BK;
  const int64_t acc_bytes = NBM * sh.TBM * sh.TBN * sh.TN * 4, rrows = sh.TBK * BN * 2, lrows = sh.TBK * BM * 2;
  const int64_t BKB = sbuf_buffers(NBK, rrows, acc_bytes + lrows + BN * 2);
  const int64_t BLB = sbuf_buffers(NBM, lrows, acc_bytes + BKB * rrows + BN * 2);
  // result_tmps[m][bm][bn] is the TN-wide slice ((m * TBM + bm) * TBN + bn) of one fp32 SBUF tensor.
  auto acc = b.sbuf("result_tmps", {sh.TM, NBM * sh.TBM * sh.TBN * sh.TN});
  auto rts = rotating_sbuf(b, "rhs_tiles", sh.TK, sh.TBK * BN, Dtype::bfloat16, BKB);
  auto lts = rotating_sbuf(b, "lhsT_tiles", sh.TK, sh.TBK * BM, Dtype::bfloat16, BLB);
  auto ps = rotating_psum(b, "result_tile", sh.TM, 512, Dtype::float32, 2);  // two banks, see below
  auto packed = b.sbuf("result_packed", {sh.TM, BN}, Dtype::bfloat16);
  auto acc_tile = [&](Aff m, Aff bm, Aff bn) { return acc.tile(0, sh.TM, ((m * sh.TBM + bm) * sh.TBN + bn) * sh.TN, sh.TN); };
  int loops = 0;
  auto name = [&](const char *v) { return std::string(v) + std::to_string(loops++); };
  b.loop("n", 0, NBN, 1, [&](Aff n) {
    b.loop("m_z", 0, NBM, 1, [&](Aff m) {
      b.loop("bm_z", 0, sh.TBM, 1, [&](Aff bm) {
        b.loop("bn_z", 0, sh.TBN, 1, [&](Aff bn) {
          b.add(InstructionType::Memset, {}, {b.ap(acc_tile(m, bm, bn))})
              .memset_mode(isa::MemsetMode::Const)
              .constant(0.0);
        });
      });
    });
    pipelined_loop(
        b, name("k"), NBK, BKB,
        [&](Aff k, int64_t ks) {
          b.loop(name("bk_r"), 0, sh.TBK, 1, [&](Aff bk) {
            load(b, c.rhs.tile((k * sh.TBK + bk) * sh.TK, sh.TK, n * BN, BN), rts.slot(ks, bk * BN, BN));
          });
        },
        [&](Aff k, int64_t ks) {
          pipelined_loop(
              b, name("m"), NBM, BLB,
              [&](Aff m, int64_t ls) {
                b.loop(name("bk_l"), 0, sh.TBK, 1, [&](Aff bk) {
                  load(b, c.lhsT.tile((k * sh.TBK + bk) * sh.TK, sh.TK, m * BM, BM), lts.slot(ls, bk * BM, BM));
                });
              },
              [&](Aff m, int64_t ls) {
                b.loop(name("bn"), 0, sh.TBN, 1, [&](Aff bn) {
                  // PSUM groups alternate between two banks (bm = 2 * bm2 + slot), as the compiler rotates PSUM
                  // banks (reference neuron-arch.md 1.4), so PE does not wait for VectorE's add of the previous tile.
                  b.loop(name("bm2"), 0, sh.TBM / 2, 1, [&](Aff bm2) {
                    for (int64_t slot = 0; slot < 2; ++slot) {
                      const Aff bm = bm2 * 2 + Aff(slot);
                      const auto pslot = ps.slot(slot, 0, sh.TN);
                      c.group(
                          name("bk"), sh.TBK, [&](Aff bk) { return lts.slot(ls, bk * BM + bm * sh.TM, sh.TM); },
                          [&](Aff bk) { return rts.slot(ks, bk * BN + bn * sh.TN, sh.TN); }, pslot);
                      b.add(InstructionType::TensorTensor, {b.ap(acc_tile(m, bm, bn)), b.ap(pslot)},
                            {b.ap(acc_tile(m, bm, bn))})
                          .op(isa::AluOp::add);
                    }
                  });
                });
              });
        });
    b.loop("m_s", 0, NBM, 1, [&](Aff m) {
      b.loop("bm_s", 0, sh.TBM, 1, [&](Aff bm) {
        b.loop("bn_s", 0, sh.TBN, 1, [&](Aff bn) {
          b.add(InstructionType::TensorCopy, {b.ap(acc_tile(m, bm, bn))},
                {b.ap(packed.tile(0, sh.TM, bn * sh.TN, sh.TN))});
        });
        store(b, packed.all(), c.result.tile((m * sh.TBM + bm) * sh.TM, sh.TM, n * BN, BN));
      });
    });
  });
  return finish(c, "matmul_blocked_mnk", with_data,
                "The tutorial's `nki_matmul_fully_optimized_`: for each N block, zero fp32 SBUF accumulators "
                "(Memset) for the whole M extent; for each K block, Load TILES_IN_BLOCK_K rhs rows [TK, BLOCK_N] "
                "(one wide DMA each), then per M block Load TILES_IN_BLOCK_K lhsT rows [TK, BLOCK_M], run one PSUM "
                "group of TILES_IN_BLOCK_K Matmults per (bn, bm) tile and add it into the SBUF accumulator "
                "(TensorTensor add, VectorE); finally pack each row of tiles (TensorCopy, to bf16) and Save it with "
                "one DMA. The accumulators are fp32 (the tutorial keeps them in lhsT.dtype). Lowered as the "
                "compiler lowers it (workloads/gen/workload.hpp): PSUM groups alternate between two banks, so "
                "TensorE does not wait for each add; the rhs rows rotate over " + std::to_string(BKB) +
                " buffers across k and the lhsT rows over " + std::to_string(BLB) + " across m (as many as fit "
                "beside the accumulators; loaded ahead).",
                "; TILES_IN_BLOCK_M = TILES_IN_BLOCK_N = TILES_IN_BLOCK_K = 2 (full: 16, 2, 8 as in the tutorial)");
}

}  // namespace neuronsim::workloads
