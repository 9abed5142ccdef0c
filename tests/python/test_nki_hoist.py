"""nl.matmul(x, y) without transpose_x transposes x on PE: once before the loops x does not change in (hoist.py), as
the compiler hoists a loop-invariant computation. Values against numpy; the PE instruction counts by hand."""
import numpy as np

from neuronsim import nki
import neuronsim.nki.language as nl


def _pe(kernel, *arrays):
    """The run (sanitized: the hoisted tile is read, never written, in the loops) and its PE instruction count."""
    r = nki.benchmark(kernel, *arrays, sanitize=True)
    assert r.findings == []
    return r, r.stats["engines"]["PE"]["instructions"]


@nki.jit
def rms_matmul(x, w, g):
    """RMSNorm of 128-row tiles of x, times w: the x slice of each k is reused by the 4 trips of the n loop around
    the k loop (the idiom of the public RMSNorm + matmul kernels)."""
    M, K = x.shape
    N = w.shape[1]
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    g_row = nl.load(g)
    for i in nl.affine_range(M // 128):
        rows = nl.load(x[i * 128:(i + 1) * 128, :])
        mean_sq = nl.sum(nl.square(rows), axis=[1]) / K
        scale = nl.rsqrt(mean_sq + 1e-6)
        normed = nl.multiply(nl.multiply(rows, scale), g_row.broadcast_to((128, K)))
        for n in nl.affine_range(N // 512):
            acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                w_tile = nl.load(w[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                acc += nl.matmul(normed[:, k * 128:(k + 1) * 128], w_tile)
            nl.store(out[i * 128:(i + 1) * 128, n * 512:(n + 1) * 512], value=nl.copy(acc, dtype=out.dtype))
    return out


def test_rmsnorm_matmul_transposes_each_slice_once_per_row_tile():
    rng = np.random.default_rng(7)
    M, K, N = 256, 256, 2048
    x = rng.standard_normal((M, K)).astype(np.float32)
    w = rng.standard_normal((K, N)).astype(np.float32)
    g = rng.standard_normal((1, K)).astype(np.float32)
    r, pe = _pe(rms_matmul, x, w, g)
    normed = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * g
    np.testing.assert_allclose(r.outputs["out"], normed @ w, rtol=2e-4, atol=2e-3)
    # 2 row tiles x 4 n x 2 k = 16 matmuls; the transposes: 2 row tiles x 2 slices, not one per matmul (16); the
    # broadcast of g_row: one ones-row matmul per row tile (bcast_pe.py)
    assert pe == 16 + 4 + 2


@nki.jit
def invariant_in_own_loop(x, w):
    """x [128, 128] loaded once, multiplied by 4 column blocks of w: its transpose does not change in the loop."""
    out = nl.ndarray((128, w.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    xt = nl.load(x)
    for n in nl.affine_range(w.shape[1] // 512):
        w_tile = nl.load(w[:, n * 512:(n + 1) * 512])
        nl.store(out[:, n * 512:(n + 1) * 512], value=nl.copy(nl.matmul(xt, w_tile), dtype=out.dtype))
    return out


@nki.jit
def invariant_in_two_loops(x, w):
    """The same x for every trip of two nested loops (row blocks of w times column blocks): one transpose in all."""
    out = nl.ndarray((128, w.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    xt = nl.load(x)
    for m in nl.affine_range(2):
        for n in nl.affine_range(w.shape[1] // 1024):
            c = (2 * n + m) * 512
            w_tile = nl.load(w[:, c:c + 512])
            nl.store(out[:, c:c + 512], value=nl.copy(nl.matmul(xt, w_tile), dtype=out.dtype))
    return out


@nki.jit
def written_in_loop(x, w):
    """x changes on every trip (x += 1 before its matmul): its transpose stays in the loop."""
    out = nl.ndarray((128, w.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    xt = nl.load(x)
    for n in nl.sequential_range(w.shape[1] // 512):
        xt[...] = nl.add(xt, 1.0)
        w_tile = nl.load(w[:, n * 512:(n + 1) * 512])
        nl.store(out[:, n * 512:(n + 1) * 512], value=nl.copy(nl.matmul(xt, w_tile), dtype=out.dtype))
    return out


def test_invariant_transpose_once_before_its_loop():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((128, 128)).astype(np.float32)
    w = rng.standard_normal((128, 2048)).astype(np.float32)
    r, pe = _pe(invariant_in_own_loop, x, w)
    np.testing.assert_allclose(r.outputs["out"], x @ w, rtol=1e-4, atol=1e-3)
    assert pe == 4 + 1  # 4 matmuls, 1 transpose


def test_invariant_transpose_leaves_every_loop_it_does_not_change_in():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((128, 128)).astype(np.float32)
    w = rng.standard_normal((128, 2048)).astype(np.float32)
    r, pe = _pe(invariant_in_two_loops, x, w)
    np.testing.assert_allclose(r.outputs["out"], x @ w, rtol=1e-4, atol=1e-3)
    assert pe == 4 + 1  # 2 x 2 matmuls, 1 transpose before both loops


def test_transpose_of_a_tile_the_loop_writes_stays_in_the_loop():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((128, 128)).astype(np.float32)
    w = rng.standard_normal((128, 2048)).astype(np.float32)
    r, pe = _pe(written_in_loop, x, w)
    want = np.concatenate([(x + n + 1) @ w[:, n * 512:(n + 1) * 512] for n in range(4)], axis=1)
    np.testing.assert_allclose(r.outputs["out"], want, rtol=1e-4, atol=2e-3)
    assert pe == 4 + 4  # a transpose per trip
