"""tensor_add: c = a + b over 128-row tiles (the algorithm of the NKI getting-started kernel, written here), in the
legacy namespace (neuronxcc.nki). Run: neuronsim nki workloads/nki/tensor_add.py::tensor_add --shape a=256x64 \
--shape b=256x64."""
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def tensor_add(a, b):
    c = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        a_tile = nl.load(a[i * 128:(i + 1) * 128, :])
        b_tile = nl.load(b[i * 128:(i + 1) * 128, :])
        c_tile = nl.add(a_tile, b_tile)
        nl.store(c[i * 128:(i + 1) * 128, :], value=c_tile)
    return c


def reference(a, b):
    return a + b
