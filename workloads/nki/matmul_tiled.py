"""matmul_tiled: result[M, N] = lhsT[K, M]^T @ rhs[K, N], bf16 in, fp32 PSUM accumulation, bf16 out, with the loop
nest of the NKI matmul tutorial's tiled version (written here): for each (m, n) output tile, for each k, load a
[TK, TM] lhsT tile and a [TK, TN] rhs tile and accumulate their matmul in one PSUM tile; copy to SBUF; store.
workloads/matmul_tiled is the generator's BIR of the same algorithm.
Run: neuronsim nki workloads/nki/matmul_tiled.py::matmul_tiled --shape lhsT=128x128:bfloat16 \
--shape rhs=128x256:bfloat16"""
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul_tiled(lhsT, rhs, TM=32, TK=32, TN=64):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        for n in nl.affine_range(N // TN):
            res_psum = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                lhsT_tile = nl.load(lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
                rhs_tile = nl.load(rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
                res_psum += nisa.nc_matmul(lhsT_tile, rhs_tile)
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nl.store(result[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], value=res_sb)
    return result


def reference(lhsT, rhs, TM=32, TK=32, TN=64):
    return lhsT.astype(np.float64).T @ rhs.astype(np.float64)
