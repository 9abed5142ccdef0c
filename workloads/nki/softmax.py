"""softmax along the free axis, fp32, one 128-row tile at a time (the algorithm of the NKI fused-attention tutorial's
softmax, written here): -max per row (VectorE reduce with negate), exp(x - max) on ScalarE with that [P, 1] bias, the
row sum, its reciprocal, and a per-row multiply. workloads/softmax is the generator's BIR of the same algorithm.
Run: neuronsim nki workloads/nki/softmax.py::softmax --shape x=256x128"""
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def softmax(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(x.shape[0] // 128):
        x_tile = nl.load(x[i * 128:(i + 1) * 128, :])
        neg_max = nisa.tensor_reduce(nl.max, x_tile, axis=1, negate=True, keepdims=True)
        exp_tile = nisa.activation(op=nl.exp, data=x_tile, bias=neg_max)
        row_sum = nl.sum(exp_tile, axis=1, keepdims=True)
        inv_sum = nl.reciprocal(row_sum)
        nl.store(y[i * 128:(i + 1) * 128, :], value=nl.multiply(exp_tile, inv_sum))
    return y


def reference(x):
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
