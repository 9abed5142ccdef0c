"""A kernel written against the newer namespace (import nki; nki.language; nki.isa) in its style (NKI 0.7: the
destination passed first, dst=): c = a + b with nisa.tensor_tensor and d = 2 * a with nisa.tensor_scalar, over
128-row tiles moved with nisa.dma_copy."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def add_and_scale(a, b):
    rows, cols = a.shape
    c = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    d = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // 128):
        x = nl.ndarray((128, cols), dtype=a.dtype, buffer=nl.sbuf)
        y = nl.ndarray((128, cols), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=y, src=b[i * 128:(i + 1) * 128, :])
        total = nl.ndarray((128, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=total, data1=x, data2=y, op=nl.add)
        doubled = nl.ndarray((128, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(doubled, x, nl.multiply, 2.0)
        nisa.dma_copy(dst=c[i * 128:(i + 1) * 128, :], src=total)
        nisa.dma_copy(dst=d[i * 128:(i + 1) * 128, :], src=doubled)
    return c, d
