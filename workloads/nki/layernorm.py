"""LayerNorm, fp32: y = (x - mean) * rsqrt(var + eps) * gamma + beta per row, with bn_stats over free-axis chunks and
bn_aggr (the algorithm of the NKI LayerNorm tutorial's bn_stats version, written here). workloads/layernorm is the
generator's BIR of the same algorithm.
Run: neuronsim nki workloads/nki/layernorm.py::layernorm --shape x=256x64 --shape gamma=1x64 --shape beta=1x64"""
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def layernorm(x, gamma, beta, eps=1e-5, chunk=32):
    R, D = x.shape
    n_chunks = D // chunk
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    gamma_bcast = nl.load(gamma.broadcast_to((128, D)))
    beta_bcast = nl.load(beta.broadcast_to((128, D)))
    eps_tile = nl.full((128, 1), eps, nl.float32)
    for i in nl.affine_range(R // 128):
        x_tile = nl.load(x[i * 128:(i + 1) * 128, :])
        stats = nl.ndarray((128, 6 * n_chunks), dtype=nl.float32, buffer=nl.sbuf)
        for c in nl.affine_range(n_chunks):
            stats[:, nl.ds(c * 6, 6)] = nisa.bn_stats(x_tile[:, nl.ds(c * chunk, chunk)])
        mean_var = nisa.bn_aggr(stats)
        rstd = nisa.activation(op=nl.rsqrt, data=mean_var[:, 1:2], bias=eps_tile)
        norm = nisa.tensor_scalar(x_tile, np.subtract, mean_var[:, 0:1], op1=np.multiply, operand1=rstd)
        scaled = nl.multiply(norm, gamma_bcast)
        nl.store(y[i * 128:(i + 1) * 128, :], value=nl.add(scaled, beta_bcast))
    return y


def reference(x, gamma, beta, eps=1e-5, chunk=32):
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    var = x64.var(axis=1, keepdims=True)
    return (x64 - mean) / np.sqrt(var + eps) * gamma + beta
