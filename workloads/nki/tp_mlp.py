"""tp_mlp: a tensor-parallel MLP y = relu(x W1) W2 over the two physical cores of a logical core (the Megatron-LM
split, written here): launched as tp_mlp[nl.nc(2)], core s (nl.program_id(0), its shard id) loads its column half of
W1 and row half of W2, computes relu(W1_s^T x^T) and its partial y_s = h_s W2_s, and an all-reduce (add) sums the two
partials; both cores store y. workloads/multicore/tp_mlp is the generator's BIR of the same algorithm.
Run: neuronsim nki workloads/nki/tp_mlp.py::tp_mlp --grid nc2 --shape xT=128x64 --shape w1=128x256 --shape w2=256x128"""
import numpy as np
import nki
import nki.collectives as ncc
import nki.isa as nisa
import nki.language as nl


@nki.jit
def tp_mlp(xT, w1, w2):
    D, B = xT.shape
    H, O = w2.shape
    half = H // 2
    y = nl.ndarray((B, O), dtype=xT.dtype, buffer=nl.shared_hbm)
    s = nl.program_id(0)
    xT_sb = nl.load(xT)
    w1_shard = nl.load(w1[:, nl.ds(s * half, half)])
    w2_shard = nl.load(w2[nl.ds(s * half, half), :])
    hT_psum = nisa.nc_matmul(w1_shard, xT_sb)
    hT_sb = nisa.activation(op=nl.relu, data=hT_psum)
    y_psum = nisa.nc_matmul(hT_sb, w2_shard)
    y_partial = nisa.tensor_copy(y_psum, engine=nisa.gpsimd_engine)
    y_sum = nl.ndarray((B, O), dtype=nl.float32, buffer=nl.sbuf)
    ncc.all_reduce(srcs=[y_partial], dsts=[y_sum], replica_group=ncc.ReplicaGroup([[0, 1]]), op=nl.add)
    nl.store(y, value=y_sum)
    return y


def reference(xT, w1, w2):
    h = np.maximum(xT.astype(np.float64).T @ w1, 0)
    return h @ w2
