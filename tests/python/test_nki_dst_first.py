"""The current NKI reference's call form of every nki.isa function the front end lowers: the destination first, then
every parameter POSITIONALLY in the reference page's order (nisa.tensor_scalar(dst, data, op0, operand0, reverse0,
op1, operand1)), each kernel against numpy; the legacy returning forms keep working beside them (test_nki_isa.py)."""
import numpy as np

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(39)
X = RNG.uniform(-2, 2, (128, 16)).astype(np.float32)
Y = RNG.uniform(0.5, 2, (128, 16)).astype(np.float32)
COL = RNG.uniform(0.5, 2, (128, 1)).astype(np.float32)


def sb(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype, buffer=nl.sbuf)


def out_like(x, shape=None):
    return nl.ndarray(shape or x.shape, x.dtype, buffer=nl.shared_hbm)


def test_dma_copy_tensor_copy_memset_and_reciprocal():
    def kernel(x):
        a, b, c = out_like(x), out_like(x), out_like(x)
        t, u, m, r = sb(x.shape), sb(x.shape), sb(x.shape), sb(x.shape)
        nisa.dma_copy(t, x)                                 # dst, src
        nisa.tensor_copy(u, t, nisa.engine.scalar)          # dst, src, engine
        nisa.memset(m, 1.5, nisa.engine.vector)             # dst, value, engine
        nisa.reciprocal(r, u)                               # dst, data
        nisa.dma_copy(a, u)
        nisa.dma_copy(b, m)
        nisa.dma_copy(c, r)
        return a, b, c
    a, b, c = nki.simulate(kernel, Y)
    np.testing.assert_array_equal(a, Y)
    np.testing.assert_array_equal(b, np.full_like(Y, 1.5))
    np.testing.assert_allclose(c, 1 / Y, rtol=2 ** -23)


def test_tensor_tensor_tensor_scalar_and_scalar_tensor_tensor():
    def kernel(x, y, col):
        a, b, c = out_like(x), out_like(x), out_like(x)
        tx, ty, tc = sb(x.shape), sb(y.shape), sb(col.shape)
        nisa.dma_copy(tx, x)
        nisa.dma_copy(ty, y)
        nisa.dma_copy(tc, col)
        s, t, u = sb(x.shape), sb(x.shape), sb(x.shape)
        nisa.tensor_tensor(s, tx, ty, nl.subtract, nisa.engine.gpsimd)      # dst, data1, data2, op, engine
        nisa.tensor_scalar(t, tx, nl.subtract, tc, True, nl.add, 1.0)      # (col - x) + 1, reverse0 positional
        nisa.scalar_tensor_tensor(u, tx, nl.subtract, 0.5, nl.multiply, ty, True, False)  # (0.5 - x) * y
        nisa.dma_copy(a, s)
        nisa.dma_copy(b, t)
        nisa.dma_copy(c, u)
        return a, b, c
    a, b, c = nki.simulate(kernel, X, Y, COL)
    np.testing.assert_array_equal(a, X - Y)
    np.testing.assert_array_equal(b, (COL - X) + np.float32(1))
    np.testing.assert_array_equal(c, (np.float32(0.5) - X) * Y)


def test_dst_positional_with_the_operands_by_keyword():
    # the library's accumulate-in-place idiom: dst positional, then data1= / data2= / op= by keyword
    def kernel(x, y):
        a = out_like(x)
        tx, ty, s = sb(x.shape), sb(y.shape), sb(x.shape)
        nisa.dma_copy(tx, x)
        nisa.dma_copy(ty, y)
        nisa.tensor_copy(s, tx)
        nisa.tensor_tensor(s, data1=s, data2=ty, op=nl.add)               # s = x + y
        nisa.tensor_scalar(s, data=s, op0=nl.multiply, operand0=2.0)        # s = 2 (x + y)
        nisa.dma_copy(a, s)
        return a
    np.testing.assert_array_equal(nki.simulate(kernel, X, Y), (X + Y) * np.float32(2))


def test_activation_activation_reduce_and_tensor_scalar_reduce():
    def kernel(x, col):
        a, b = out_like(x), out_like(x)
        s1, s2 = out_like(col), out_like(col)
        tx, tc = sb(x.shape), sb(col.shape)
        nisa.dma_copy(tx, x)
        nisa.dma_copy(tc, col)
        e, q, z = sb(x.shape), sb(x.shape), sb(x.shape)
        r1, r2 = sb(col.shape), sb(col.shape)
        nisa.activation(e, nl.exp, tx, tc, 0.5)                          # dst, op, data, bias, scale
        nisa.activation_reduce(q, nl.square, tx, nl.add, r1)             # dst, op, data, reduce_op, reduce_res
        nisa.tensor_scalar_reduce(z, tx, nl.multiply, 2.0, nl.maximum, r2)  # dst, data, op0, operand0, reduce...
        nisa.dma_copy(a, e)
        nisa.dma_copy(b, q)
        nisa.dma_copy(s1, r1)
        nisa.dma_copy(s2, r2)
        return a, b, s1, s2
    a, b, s1, s2 = nki.simulate(kernel, X, COL)
    np.testing.assert_allclose(a, np.exp(X.astype(np.float64) * 0.5 + COL), rtol=3e-7)
    np.testing.assert_allclose(b, X * X, rtol=2 ** -23)
    np.testing.assert_allclose(s1, (X.astype(np.float64) ** 2).sum(axis=1, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(s2, (2 * X).max(axis=1, keepdims=True))


def test_tensor_reduce_tensor_tensor_scan_and_nc_transpose():
    def kernel(x, y):
        a, b = out_like(x, (x.shape[0], 1)), out_like(x)
        c = nl.ndarray((16, 128), x.dtype, buffer=nl.shared_hbm)
        tx, ty = sb(x.shape), sb(y.shape)
        nisa.dma_copy(tx, x)
        nisa.dma_copy(ty, y)
        r, s = sb((x.shape[0], 1)), sb(x.shape)
        nisa.tensor_reduce(r, nl.add, tx, 1, True, True)                   # dst, op, data, axis, negate, keepdims
        nisa.tensor_tensor_scan(s, ty, tx, 0.0, nl.multiply, nl.add)      # r[i] = y[i] * r[i-1] + x[i]
        t = nl.ndarray((16, 128), nl.float32, buffer=nl.psum)
        nisa.nc_transpose(t, tx, nisa.engine.tensor)                       # dst, data, engine
        nisa.dma_copy(a, r)
        nisa.dma_copy(b, s)
        nl.store(c, t)
        return a, b, c
    a, b, c = nki.simulate(kernel, X, Y)
    np.testing.assert_allclose(a, -X.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    want = np.zeros_like(X)
    acc = np.zeros(128, np.float32)
    for i in range(16):  # fp32 step by step, as the engine scans
        acc = (Y[:, i] * acc + X[:, i]).astype(np.float32)
        want[:, i] = acc
    np.testing.assert_allclose(b, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(c, X.T)


def test_nc_matmul_bn_stats_and_bn_aggr():
    def kernel(x, y):
        m = nl.ndarray((16, 16), x.dtype, buffer=nl.shared_hbm)
        mv = nl.ndarray((x.shape[0], 2), x.dtype, buffer=nl.shared_hbm)
        tx, ty = sb(x.shape), sb(y.shape)
        nisa.dma_copy(tx, x)
        nisa.dma_copy(ty, y)
        p = nl.ndarray((16, 16), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(p, tx, ty)                                          # dst, stationary, moving: x^T y
        st, ag = sb((x.shape[0], 6)), sb((x.shape[0], 2))
        nisa.bn_stats(st, tx)                                              # dst, data
        nisa.bn_aggr(ag, st)                                               # dst, data
        nl.store(m, p)
        nisa.dma_copy(mv, ag)
        return m, mv
    m, mv = nki.simulate(kernel, X, Y)
    np.testing.assert_allclose(m, X.T.astype(np.float64) @ Y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mv[:, 0], X.mean(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mv[:, 1], X.var(axis=1), rtol=1e-5, atol=1e-6)


def test_iota_and_affine_select_with_patterns():
    def kernel(x):
        a = nl.ndarray((128, 16), nl.int32, buffer=nl.shared_hbm)
        b = out_like(x)
        i = sb((128, 16), nl.int32)
        nisa.iota(i, [[2, 16]], 3, 8)            # dst, pattern, offset, channel_multiplier: 3 + 8 p + 2 f
        tx, s = sb(x.shape), sb(x.shape)
        nisa.dma_copy(tx, x)
        # keep x where p - f >= 0 (pattern step -1 on the free dim, channel_multiplier 1), else -9
        nisa.affine_select(s, [[-1, 16]], 1, tx, -9.0, nl.greater_equal, 0)
        nisa.dma_copy(a, i)
        nisa.dma_copy(b, s)
        return a, b
    a, b = nki.simulate(kernel, X)
    p, f = np.arange(128)[:, None], np.arange(16)[None, :]
    np.testing.assert_array_equal(a, 3 + 8 * p + 2 * f)
    np.testing.assert_array_equal(b, np.where(p - f >= 0, X, np.float32(-9)))
