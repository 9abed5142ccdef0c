"""A kernel with a shape mismatch on line 10 (for the error tests)."""
import nki.language as nl


def bad(a, b):
    c = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a[0:128, 0:64])
    y = nl.load(b[0:128, 0:32])
    z = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    z[...] = nl.subtract(x, y)
    nl.store(c[0:128, 0:64], value=z)
    return c
