"""matmul_blocked_mnk: result[M, N] = lhsT[K, M]^T @ rhs[K, N] (bf16 in, bf16 out) with the loop nest of the NKI
matmul tutorial's fully optimized version (written here): M, N and K blocked; per N block, fp32 SBUF accumulators for
the whole M extent are zeroed; per K block the rhs rows and, per M block, the lhsT rows are loaded once, each output
tile's PSUM group of TBK matmuls is added into its accumulator; finally each row of tiles is packed to bf16 and
stored with one DMA. workloads/matmul_blocked_mnk is the generator's BIR of the same algorithm.
Run: neuronsim nki workloads/nki/matmul_blocked_mnk.py::matmul_blocked_mnk --shape lhsT=128x128:bfloat16 \
--shape rhs=128x256:bfloat16"""
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul_blocked_mnk(lhsT, rhs, TM=32, TK=32, TN=64, TBM=2, TBN=2, TBK=2):
    K, M = lhsT.shape
    _, N = rhs.shape
    BM, BN, BK = TM * TBM, TN * TBN, TK * TBK
    NBM, NBN, NBK = M // BM, N // BN, K // BK
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    # result_tmps[m][bm][bn]: the TN-wide slice ((m * TBM + bm) * TBN + bn) of one fp32 accumulator tile
    acc = nl.ndarray((TM, NBM * TBM * TBN * TN), dtype=nl.float32, buffer=nl.sbuf)
    packed = nl.ndarray((TM, BN), dtype=lhsT.dtype, buffer=nl.sbuf)
    for n in nl.affine_range(NBN):
        for m in nl.affine_range(NBM):
            for bm in nl.affine_range(TBM):
                for bn in nl.affine_range(TBN):
                    acc[:, nl.ds(((m * TBM + bm) * TBN + bn) * TN, TN)] = 0.0
        for k in nl.sequential_range(NBK):
            rhs_rows = nl.ndarray((TK, TBK * BN), dtype=rhs.dtype, buffer=nl.sbuf)
            for bk in nl.affine_range(TBK):
                rhs_rows[:, nl.ds(bk * BN, BN)] = nl.load(rhs[nl.ds((k * TBK + bk) * TK, TK), nl.ds(n * BN, BN)])
            for m in nl.affine_range(NBM):
                lhsT_rows = nl.ndarray((TK, TBK * BM), dtype=lhsT.dtype, buffer=nl.sbuf)
                for bk in nl.affine_range(TBK):
                    lhsT_rows[:, nl.ds(bk * BM, BM)] = nl.load(lhsT[nl.ds((k * TBK + bk) * TK, TK), nl.ds(m * BM, BM)])
                for bn in nl.affine_range(TBN):
                    for bm in nl.affine_range(TBM):
                        result_tile = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(TBK):
                            result_tile += nisa.nc_matmul(lhsT_rows[:, nl.ds(bk * BM + bm * TM, TM)],
                                                          rhs_rows[:, nl.ds(bk * BN + bn * TN, TN)])
                        tile = acc[:, nl.ds(((m * TBM + bm) * TBN + bn) * TN, TN)]
                        tile[...] = nl.add(tile, result_tile)
        for m in nl.affine_range(NBM):
            for bm in nl.affine_range(TBM):
                for bn in nl.affine_range(TBN):
                    packed[:, nl.ds(bn * TN, TN)] = nl.copy(acc[:, nl.ds(((m * TBM + bm) * TBN + bn) * TN, TN)],
                                                            dtype=lhsT.dtype)
                nl.store(result[nl.ds((m * TBM + bm) * TM, TM), nl.ds(n * BN, BN)], value=packed)
    return result


def reference(lhsT, rhs, **kw):
    return lhsT.astype(np.float64).T @ rhs.astype(np.float64)
