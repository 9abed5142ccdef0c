"""transpose: y[C, R] = x[R, C]^T, fp32, on the PE array (nisa.nc_transpose), T x T tiles: per block of T rows one
load, per column tile a PE transpose into PSUM, a copy to SBUF and a store to the transposed spot. workloads/transpose
is the generator's BIR of the same algorithm (README: why their times differ).
Run: neuronsim nki workloads/nki/transpose.py::transpose --shape x=128x128"""
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def transpose(x, tile=64):
    R, C = x.shape
    y = nl.ndarray((C, R), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(R // tile):
        rows = nl.load(x[i * tile:(i + 1) * tile, :])
        for j in nl.affine_range(C // tile):
            t_psum = nisa.nc_transpose(rows[:, j * tile:(j + 1) * tile])
            t_sb = nl.copy(t_psum)
            nl.store(y[j * tile:(j + 1) * tile, i * tile:(i + 1) * tile], value=t_sb)
    return y


def reference(x, tile=64):
    return x.T.copy()
