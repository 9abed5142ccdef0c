"""cumsum along the free axis, fp32, with tensor_tensor_scan (r[i] = r[i-1] * 1 + x[i]) over chunks, each chunk seeded
with the last column of the previous one (the algorithm of the NKI cumsum examples, written here). workloads/cumsum is
the generator's BIR of the same algorithm.
Run: neuronsim nki workloads/nki/cumsum.py::cumsum --shape x=256x128"""
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def cumsum(x, chunk=32):
    R, L = x.shape
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ones = nl.ones((128, chunk), nl.float32)
    for i in nl.affine_range(R // 128):
        x_tile = nl.load(x[i * 128:(i + 1) * 128, :])
        y_tile = nl.ndarray((128, L), dtype=nl.float32, buffer=nl.sbuf)
        y_tile[:, 0:chunk] = nisa.tensor_tensor_scan(ones, x_tile[:, 0:chunk], 0.0, np.multiply, np.add)
        for c in nl.sequential_range(1, L // chunk):
            y_tile[:, nl.ds(c * chunk, chunk)] = nisa.tensor_tensor_scan(
                ones, x_tile[:, nl.ds(c * chunk, chunk)], y_tile[:, nl.ds(c * chunk - 1, 1)], np.multiply, np.add)
        nl.store(y[i * 128:(i + 1) * 128, :], value=y_tile)
    return y


def reference(x, chunk=32):
    return np.cumsum(x.astype(np.float64), axis=1)
