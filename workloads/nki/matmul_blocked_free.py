"""matmul_blocked_free: result[M, N] = lhsT[K, M]^T @ rhs[K, N] (bf16 in, fp32 PSUM, bf16 out) with the loop nest of
the NKI matmul tutorial's free-dimension blocking (written here): blocks of TBM lhsT column tiles and TBN rhs column
tiles are loaded once and reused by the TBM x TBN output tiles of the block. workloads/matmul_blocked_free is the
generator's BIR of the same algorithm (README: why their times differ).
Run: neuronsim nki workloads/nki/matmul_blocked_free.py::matmul_blocked_free --shape lhsT=128x128:bfloat16 \
--shape rhs=128x256:bfloat16"""
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul_blocked_free(lhsT, rhs, TM=32, TK=32, TN=64, TBM=2, TBN=2):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TK
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // (TM * TBM)):
        lhsT_tiles = nl.ndarray((TBM, KT, nl.par_dim(TK), TM), dtype=lhsT.dtype, buffer=nl.sbuf)
        for bm in nl.affine_range(TBM):
            for k in nl.affine_range(KT):
                lhsT_tiles[bm, k] = nl.load(lhsT[k * TK:(k + 1) * TK, (m * TBM + bm) * TM:(m * TBM + bm + 1) * TM])
        for n in nl.affine_range(N // (TN * TBN)):
            rhs_tiles = nl.ndarray((TBN, KT, nl.par_dim(TK), TN), dtype=rhs.dtype, buffer=nl.sbuf)
            for bn in nl.affine_range(TBN):
                for k in nl.affine_range(KT):
                    rhs_tiles[bn, k] = nl.load(rhs[k * TK:(k + 1) * TK, (n * TBN + bn) * TN:(n * TBN + bn + 1) * TN])
            for bm in nl.affine_range(TBM):
                result_tile = nl.ndarray((TM, TN), nl.float32, buffer=nl.psum)
                result_tmp = nl.ndarray((TM, TN), dtype=result.dtype, buffer=nl.sbuf)
                for bn in nl.affine_range(TBN):
                    result_tile[...] = 0.0
                    for k in nl.affine_range(KT):
                        result_tile += nisa.nc_matmul(lhsT_tiles[bm, k], rhs_tiles[bn, k])
                    result_tmp[...] = nl.copy(result_tile, dtype=result.dtype)
                    nl.store(result[(m * TBM + bm) * TM:(m * TBM + bm + 1) * TM,
                                    (n * TBN + bn) * TN:(n * TBN + bn + 1) * TN], value=result_tmp)
    return result


def reference(lhsT, rhs, TM=32, TK=32, TN=64, TBM=2, TBN=2):
    return lhsT.astype(np.float64).T @ rhs.astype(np.float64)
