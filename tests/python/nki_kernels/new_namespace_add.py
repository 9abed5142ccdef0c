"""A kernel written against the newer namespace (import nki; nki.language; nki.isa), as published kernels are: c = a + b
over 128-row tiles with nisa.tensor_tensor, and a scaled copy d = 2 * a with nisa.tensor_scalar."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def add_and_scale(a, b):
    c = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    d = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        rows = nl.ds(i * 128, 128)
        x = nl.load(a[rows, :])
        y = nl.load(b[rows, :])
        nl.store(c[rows, :], value=nisa.tensor_tensor(x, y, op=nl.add))
        nl.store(d[rows, :], value=nisa.tensor_scalar(x, nl.multiply, 2.0))
    return c, d
