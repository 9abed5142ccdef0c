"""RMSNorm, fp32: y = x * rsqrt(mean(x^2) + eps) * gamma per row (the algorithm of the NKI RMSNorm tutorial, written
here, with eps in the rsqrt's bias): gamma loaded once, broadcast to 128 partitions by the DMA (partition step 0).
workloads/rmsnorm is the generator's BIR of the same algorithm.
Run: neuronsim nki workloads/nki/rmsnorm.py::rmsnorm --shape x=256x64 --shape gamma=1x64"""
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def rmsnorm(x, gamma, eps=1e-6):
    R, D = x.shape
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    gamma_bcast = nl.load(gamma.broadcast_to((128, D)))
    eps_tile = nl.full((128, 1), eps, nl.float32)
    for i in nl.affine_range(R // 128):
        x_tile = nl.load(x[i * 128:(i + 1) * 128, :])
        sq_tile = nl.square(x_tile)
        sq_sum = nl.sum(sq_tile, axis=1, keepdims=True)
        rms_recip = nisa.activation(op=nl.rsqrt, data=sq_sum, scale=1.0 / D, bias=eps_tile)
        y_tile = nl.multiply(x_tile, rms_recip)
        nl.store(y[i * 128:(i + 1) * 128, :], value=nl.multiply(y_tile, gamma_bcast))
    return y


def reference(x, gamma, eps=1e-6):
    x64 = x.astype(np.float64)
    return x64 / np.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + eps) * gamma
