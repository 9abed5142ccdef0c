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
//  - The result is fp32 everywhere (the tutorial's result and the fully-optimized SBUF accumulators are
//    lhsT.dtype = bf16): the workload then checks fp32 accumulation, not bf16 output rounding.
#include <cmath>

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
    result = b.output("result", {s.M, s.N}, Dtype::float32);
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
         "] fp32; tiles TK x TM = " + std::to_string(s.TK) + " x " + std::to_string(s.TM) + ", moving TN = " +
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
  w.rtol = 0.0;
  w.atol = double(sh.K) * std::ldexp(1.0, -24) * worst_bound;
  w.atol = std::ceil(w.atol * 1e7) / 1e7;  // a readable number, never below the bound
  w.tolerance = "bf16 x bf16 products are exact in fp32; the only error is fp32 accumulation over K = " +
                std::to_string(sh.K) +
                " terms, bounded by K * 2^-24 * max_ij sum_k |lhsT[k,i] rhs[k,j]| (Higham eq. 4.4, any summation "
                "order, including the PSUM-group + SBUF split of the blocked variant) = the atol above, computed "
                "from these inputs. rtol = 0.";
  w.inputs["lhsT"] = npy_bf16(A, {sh.K, sh.M});
  w.inputs["rhs"] = npy_bf16(B, {sh.K, sh.N});
  w.expected["result"] = npy_f32(C, {sh.M, sh.N});
  return w;
}

}  // namespace

// nki_matmul_tiled_: for m, n: for k: load both tiles, matmul into PSUM; copy PSUM -> SBUF; store.
Workload make_matmul_tiled(Size s, bool with_data) {
  Ctx c("matmul_tiled", shape_for(s, false));
  const Shape sh = c.sh;
  Builder &b = c.b;
  auto lt = b.sbuf("lhsT_tile", {sh.TK, sh.TM}, Dtype::bfloat16);
  auto rt = b.sbuf("rhs_tile", {sh.TK, sh.TN}, Dtype::bfloat16);
  auto ps = b.psum("res_psum", {sh.TM, sh.TN});
  auto rs = b.sbuf("res_sb", {sh.TM, sh.TN});
  b.loop("m", 0, sh.M / sh.TM, 1, [&](Aff m) {
    b.loop("n", 0, sh.N / sh.TN, 1, [&](Aff n) {
      c.group(
          "k", sh.K / sh.TK, [&](Aff) { return lt.all(); }, [&](Aff) { return rt.all(); }, ps.all(),
          [&](Aff k) {
            b.add(InstructionType::Load, {b.ap(c.lhsT.tile(k * sh.TK, sh.TK, m * sh.TM, sh.TM))}, {b.ap(lt.all())});
            b.add(InstructionType::Load, {b.ap(c.rhs.tile(k * sh.TK, sh.TK, n * sh.TN, sh.TN))}, {b.ap(rt.all())});
          });
      b.add(InstructionType::TensorCopy, {b.ap(ps.all())}, {b.ap(rs.all())});
      b.add(InstructionType::Save, {b.ap(rs.all())}, {b.ap(c.result.tile(m * sh.TM, sh.TM, n * sh.TN, sh.TN))});
    });
  });
  return finish(c, "matmul_tiled", with_data,
                "The tutorial's `nki_matmul_tiled_`: for each (m, n) output tile, for each k: Load a [TK, TM] "
                "lhsT tile and a [TK, TN] rhs tile (DMA), Matmult into one PSUM tile (fp32 accumulation); then "
                "TensorCopy PSUM -> SBUF (VectorE) and Save. One SBUF buffer per operand, so each load waits "
                "for the previous matmul (the inefficiency the next variants remove).",
                "");
}

// nki_matmul_hoist_load_: lhsT tiles of a whole K column loaded once per m, rhs tiles once per (m, n).
Workload make_matmul_hoisted(Size s, bool with_data) {
  Ctx c("matmul_hoisted", shape_for(s, false));
  const Shape sh = c.sh;
  Builder &b = c.b;
  const int64_t KT = sh.K / sh.TK;
  auto lts = b.sbuf("lhsT_tiles", {sh.TK, KT * sh.TM}, Dtype::bfloat16);
  auto rts = b.sbuf("rhs_tiles", {sh.TK, KT * sh.TN}, Dtype::bfloat16);
  auto ps = b.psum("res_psum", {sh.TM, sh.TN});
  auto rs = b.sbuf("res_sb", {sh.TM, sh.TN});
  b.loop("m", 0, sh.M / sh.TM, 1, [&](Aff m) {
    b.loop("k_l", 0, KT, 1, [&](Aff k) {
      b.add(InstructionType::Load, {b.ap(c.lhsT.tile(k * sh.TK, sh.TK, m * sh.TM, sh.TM))},
            {b.ap(lts.tile(0, sh.TK, k * sh.TM, sh.TM))});
    });
    b.loop("n", 0, sh.N / sh.TN, 1, [&](Aff n) {
      b.loop("k_r", 0, KT, 1, [&](Aff k) {
        b.add(InstructionType::Load, {b.ap(c.rhs.tile(k * sh.TK, sh.TK, n * sh.TN, sh.TN))},
              {b.ap(rts.tile(0, sh.TK, k * sh.TN, sh.TN))});
      });
      c.group(
          "k", KT, [&](Aff k) { return lts.tile(0, sh.TK, k * sh.TM, sh.TM); },
          [&](Aff k) { return rts.tile(0, sh.TK, k * sh.TN, sh.TN); }, ps.all());
      b.add(InstructionType::TensorCopy, {b.ap(ps.all())}, {b.ap(rs.all())});
      b.add(InstructionType::Save, {b.ap(rs.all())}, {b.ap(c.result.tile(m * sh.TM, sh.TM, n * sh.TN, sh.TN))});
    });
  });
  return finish(c, "matmul_hoisted", with_data,
                "The tutorial's `nki_matmul_hoist_load_`: per m, Load all K/TK lhsT tiles once into one SBUF "
                "tensor; per (m, n), Load all K/TK rhs tiles, then the K/TK Matmults of the PSUM group, "
                "TensorCopy PSUM -> SBUF and Save. Loads are hoisted out of the matmul loop, so DMA overlaps PE "
                "across iterations.",
                "");
}

// nki_matmul_block_free_dimension_: TILES_IN_BLOCK_M x TILES_IN_BLOCK_N output tiles share loaded operands.
Workload make_matmul_blocked_free(Size s, bool with_data) {
  Ctx c("matmul_blocked_free", shape_for(s, false));
  const Shape sh = c.sh;
  Builder &b = c.b;
  const int64_t KT = sh.K / sh.TK, BM = sh.TM * sh.TBM, BN = sh.TN * sh.TBN;
  auto lts = b.sbuf("lhsT_tiles", {sh.TK, sh.TBM * KT * sh.TM}, Dtype::bfloat16);
  auto rts = b.sbuf("rhs_tiles", {sh.TK, sh.TBN * KT * sh.TN}, Dtype::bfloat16);
  auto ps = b.psum("result_tile", {sh.TM, 2 * sh.TN});  // two slots, see below
  auto rs = b.sbuf("result_tmp", {sh.TM, 2 * sh.TN});
  b.loop("m", 0, sh.M / BM, 1, [&](Aff m) {
    b.loop("bm_l", 0, sh.TBM, 1, [&](Aff bm) {
      b.loop("k_l", 0, KT, 1, [&](Aff k) {
        b.add(InstructionType::Load, {b.ap(c.lhsT.tile(k * sh.TK, sh.TK, (m * sh.TBM + bm) * sh.TM, sh.TM))},
              {b.ap(lts.tile(0, sh.TK, (bm * KT + k) * sh.TM, sh.TM))});
      });
    });
    b.loop("n", 0, sh.N / BN, 1, [&](Aff n) {
      b.loop("bn_r", 0, sh.TBN, 1, [&](Aff bn) {
        b.loop("k_r", 0, KT, 1, [&](Aff k) {
          b.add(InstructionType::Load, {b.ap(c.rhs.tile(k * sh.TK, sh.TK, (n * sh.TBN + bn) * sh.TN, sh.TN))},
                {b.ap(rts.tile(0, sh.TK, (bn * KT + k) * sh.TN, sh.TN))});
        });
      });
      // Output tiles alternate between two PSUM / SBUF result slots (bm = 2 * bm2 + slot), as the compiler
      // rotates PSUM banks (reference neuron-arch.md 1.4: 8 banks, 8 accumulation groups outstanding), so the
      // next group's Matmults need not wait for the previous tile's copy-out.
      b.loop("bm2", 0, sh.TBM / 2, 1, [&](Aff bm2) {
        for (int64_t slot = 0; slot < 2; ++slot) {
          const Aff bm = bm2 * 2 + Aff(slot);
          const std::string sfx = slot ? "_odd" : "_even";
          b.loop("bn" + sfx, 0, sh.TBN, 1, [&](Aff bn) {
            c.group(
                "k" + sfx, KT, [&](Aff k) { return lts.tile(0, sh.TK, (bm * KT + k) * sh.TM, sh.TM); },
                [&](Aff k) { return rts.tile(0, sh.TK, (bn * KT + k) * sh.TN, sh.TN); },
                ps.tile(0, sh.TM, slot * sh.TN, sh.TN));
            b.add(InstructionType::TensorCopy, {b.ap(ps.tile(0, sh.TM, slot * sh.TN, sh.TN))},
                  {b.ap(rs.tile(0, sh.TM, slot * sh.TN, sh.TN))});
            b.add(InstructionType::Save, {b.ap(rs.tile(0, sh.TM, slot * sh.TN, sh.TN))},
                  {b.ap(c.result.tile((m * sh.TBM + bm) * sh.TM, sh.TM, (n * sh.TBN + bn) * sh.TN, sh.TN))});
          });
        }
      });
    });
  });
  return finish(c, "matmul_blocked_free", with_data,
                "The tutorial's `nki_matmul_block_free_dimension_`: blocks of TILES_IN_BLOCK_M = 2 lhsT column "
                "tiles and TILES_IN_BLOCK_N = 2 rhs column tiles are loaded once and reused by the 2 x 2 output "
                "tiles of the block (one PSUM group each: K/TK Matmults, TensorCopy, Save). Output tiles alternate "
                "between two PSUM/SBUF result slots, as the compiler rotates PSUM banks.",
                "; TILES_IN_BLOCK_M = TILES_IN_BLOCK_N = 2");
}

// nki_matmul_fully_optimized_: M, N and K blocked; PSUM partial sums per K block added into SBUF accumulators.
Workload make_matmul_blocked_mnk(Size s, bool with_data) {
  Ctx c("matmul_blocked_mnk", shape_for(s, true));
  const Shape sh = c.sh;
  Builder &b = c.b;
  const int64_t BM = sh.TM * sh.TBM, BN = sh.TN * sh.TBN, BK = sh.TK * sh.TBK;
  const int64_t NBM = sh.M / BM, NBN = sh.N / BN, NBK = sh.K / BK;
  // result_tmps[m][bm][bn] is the TN-wide slice ((m * TBM + bm) * TBN + bn) of one fp32 SBUF tensor.
  auto acc = b.sbuf("result_tmps", {sh.TM, NBM * sh.TBM * sh.TBN * sh.TN});
  auto rts = b.sbuf("rhs_tiles", {sh.TK, sh.TBK * BN}, Dtype::bfloat16);
  auto lts = b.sbuf("lhsT_tiles", {sh.TK, sh.TBK * BM}, Dtype::bfloat16);
  auto ps = b.psum("result_tile", {sh.TM, 2 * sh.TN});  // two slots, see below
  auto packed = b.sbuf("result_packed", {sh.TM, BN});
  auto acc_tile = [&](Aff m, Aff bm, Aff bn) { return acc.tile(0, sh.TM, ((m * sh.TBM + bm) * sh.TBN + bn) * sh.TN, sh.TN); };
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
    b.loop("k", 0, NBK, 1, [&](Aff k) {
      b.loop("bk_r", 0, sh.TBK, 1, [&](Aff bk) {
        b.add(InstructionType::Load, {b.ap(c.rhs.tile((k * sh.TBK + bk) * sh.TK, sh.TK, n * BN, BN))},
              {b.ap(rts.tile(0, sh.TK, bk * BN, BN))});
      });
      b.loop("m", 0, NBM, 1, [&](Aff m) {
        b.loop("bk_l", 0, sh.TBK, 1, [&](Aff bk) {
          b.add(InstructionType::Load, {b.ap(c.lhsT.tile((k * sh.TBK + bk) * sh.TK, sh.TK, m * BM, BM))},
                {b.ap(lts.tile(0, sh.TK, bk * BM, BM))});
        });
        b.loop("bn", 0, sh.TBN, 1, [&](Aff bn) {
          // PSUM groups alternate between two slots (bm = 2 * bm2 + slot), as the compiler rotates PSUM banks
          // (reference neuron-arch.md 1.4), so PE does not wait for VectorE's add of the previous tile.
          b.loop("bm2", 0, sh.TBM / 2, 1, [&](Aff bm2) {
            for (int64_t slot = 0; slot < 2; ++slot) {
              const Aff bm = bm2 * 2 + Aff(slot);
              const auto pslot = ps.tile(0, sh.TM, slot * sh.TN, sh.TN);
              c.group(
                  slot ? "bk_odd" : "bk_even", sh.TBK,
                  [&](Aff bk) { return lts.tile(0, sh.TK, bk * BM + bm * sh.TM, sh.TM); },
                  [&](Aff bk) { return rts.tile(0, sh.TK, bk * BN + bn * sh.TN, sh.TN); }, pslot);
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
        b.add(InstructionType::Save, {b.ap(packed.all())},
              {b.ap(c.result.tile((m * sh.TBM + bm) * sh.TM, sh.TM, n * BN, BN))});
      });
    });
  });
  return finish(c, "matmul_blocked_mnk", with_data,
                "The tutorial's `nki_matmul_fully_optimized_`: for each N block, zero fp32 SBUF accumulators "
                "(Memset) for the whole M extent; for each K block, Load TILES_IN_BLOCK_K rhs rows [TK, BLOCK_N] "
                "(one wide DMA each), then per M block Load TILES_IN_BLOCK_K lhsT rows [TK, BLOCK_M], run one PSUM "
                "group of TILES_IN_BLOCK_K Matmults per (bn, bm) tile and add it into the SBUF accumulator "
                "(TensorTensor add, VectorE); finally pack each row of tiles (TensorCopy) and Save it with one "
                "DMA. The accumulators are fp32 (the tutorial keeps them in lhsT.dtype). PSUM groups alternate "
                "between two slots, as the compiler rotates PSUM banks, so TensorE does not wait for each add.",
                "; TILES_IN_BLOCK_M = TILES_IN_BLOCK_N = TILES_IN_BLOCK_K = 2 (full: 16, 2, 8 as in the tutorial)");
}

}  // namespace neuronsim::workloads
