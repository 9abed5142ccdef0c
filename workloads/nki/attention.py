"""Causal single-head self-attention, fused on one NeuronCore (the algorithm of the NKI fused self-attention tutorial,
written here, with a causal mask): scores = q k^T on TensorE, scaled copy to SBUF, affine_select causal mask, softmax
(-max, exp to bf16, row sum, reciprocal), probabilities transposed on TensorE, times v accumulated in PSUM, 1/sum at
the end. qT, kT [d, S], v [S, d] bf16; out [S, d] bf16. The query-tile loop is nl.static_range (unrolled): the mask's
base, the tile's first query index, is a static field. workloads/attention is the generator's BIR of the same
algorithm (README: why their times differ).
Run: neuronsim nki workloads/nki/attention.py::attention --shape qT=64x256:bfloat16 --shape kT=64x256:bfloat16 \
--shape v=256x64:bfloat16"""
import math

import numpy as np
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def attention(qT, kT, v):
    d, S = qT.shape
    T = 128
    W = min(S, 512)  # moving free size per matmul: one PSUM bank of fp32
    out = nl.ndarray((S, d), dtype=qT.dtype, buffer=nl.shared_hbm)
    q_sb = nl.load(qT)
    k_sb = nl.load(kT)
    v_sb = nl.ndarray((T, (S // T) * d), dtype=v.dtype, buffer=nl.sbuf)
    for j in nl.affine_range(S // T):
        v_sb[:, nl.ds(j * d, d)] = nl.load(v[nl.ds(j * T, T), :])
    i_p, i_f = nl.mgrid[0:T, 0:S]
    for i in nl.static_range(S // T):
        scores_psum = nl.ndarray((T, S), dtype=nl.float32, buffer=nl.psum)
        for c in nl.affine_range(S // W):
            scores_psum[:, nl.ds(c * W, W)] = nisa.nc_matmul(q_sb[:, nl.ds(i * T, T)], k_sb[:, nl.ds(c * W, W)])
        scores = nisa.activation(op=nl.copy, data=scores_psum, scale=1.0 / math.sqrt(d))
        scores[...] = nisa.affine_select(i * T + i_p - i_f >= 0, scores, -1e30)
        neg_max = nisa.tensor_reduce(nl.max, scores, axis=1, negate=True, keepdims=True)
        probs = nisa.activation(op=nl.exp, data=scores, bias=neg_max, dtype=nl.bfloat16)
        row_sum = nl.sum(probs, axis=1, keepdims=True, dtype=nl.float32)
        inv_sum = nl.reciprocal(row_sum)
        probsT = nl.ndarray((T, S), dtype=nl.bfloat16, buffer=nl.sbuf)
        for j in nl.affine_range(S // T):
            pT_psum = nisa.nc_transpose(probs[:, nl.ds(j * T, T)])
            probsT[:, nl.ds(j * T, T)] = nl.copy(pT_psum)
        out_psum = nl.zeros((T, d), nl.float32, buffer=nl.psum)
        for j in nl.affine_range(S // T):
            out_psum += nisa.nc_matmul(probsT[:, nl.ds(j * T, T)], v_sb[:, nl.ds(j * d, d)])
        out_sb = nisa.tensor_scalar(out_psum, np.multiply, inv_sum, dtype=out.dtype)
        nl.store(out[nl.ds(i * T, T), :], value=out_sb)
    return out


def reference(qT, kT, v):
    q, k, v = qT.astype(np.float64).T, kT.astype(np.float64).T, v.astype(np.float64)
    s = q @ k.T / math.sqrt(q.shape[1])
    s = np.where(np.tril(np.ones_like(s)) > 0, s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v
