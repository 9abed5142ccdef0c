"""matmul_hoisted: result[M, N] = lhsT[K, M]^T @ rhs[K, N] (bf16 in, fp32 PSUM, bf16 out) with the loop nest of the
NKI matmul tutorial's hoisted-load version (written here): the K column of lhsT tiles loaded once per m, the K column
of rhs tiles once per (m, n), then the PSUM group. workloads/matmul_hoisted is the generator's BIR of the same
algorithm.
Run: neuronsim nki workloads/nki/matmul_hoisted.py::matmul_hoisted --shape lhsT=128x128:bfloat16 \
--shape rhs=128x256:bfloat16"""
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul_hoisted(lhsT, rhs, TM=32, TK=32, TN=64):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TK
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        lhsT_tiles = nl.ndarray((KT, nl.par_dim(TK), TM), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            lhsT_tiles[k] = nl.load(lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
        for n in nl.affine_range(N // TN):
            rhs_tiles = nl.ndarray((KT, nl.par_dim(TK), TN), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                rhs_tiles[k] = nl.load(rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
            res_psum = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                res_psum += nisa.nc_matmul(lhsT_tiles[k], rhs_tiles[k])
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nl.store(result[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], value=res_sb)
    return result


def reference(lhsT, rhs, TM=32, TK=32, TN=64):
    return lhsT.astype(np.float64).T @ rhs.astype(np.float64)
