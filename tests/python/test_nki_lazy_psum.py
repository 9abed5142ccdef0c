"""The lazily zeroed PSUM block tensors of compiler-dumped kernels (nl.zeros(..., buffer=nl.psum,
lazy_initialization=True), docs/nki-lowering.md 2): a trip's blocks are zeroed by a Memset only when the trip's
first access does not overwrite them -- a write, or a matmul that starts its accumulation group, overwrites them
(NKI nc_matmul "Accumulation mode") even when the block is narrower than the 2 KiB PSUM bank it takes; a Memset that
is needed covers the block's elements, not the rest of the bank. Each kernel against numpy."""
import numpy as np

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl
from test_nki_isa import bir_ops

RNG = np.random.default_rng(40)


def memsets(kernel, *args):
    return [i for op, i in bir_ops(nki.to_bir(kernel, *args)) if op == "Memset"]


def transposed_blocks(x):
    """x [n * 128, 128]: each row block transposed on the PE (an identity matmul) into a PSUM block of 128 fp32
    (512 bytes of a 2 KiB bank), a block per trip, as NKIBench's lora / gqa dumps do."""
    n = x.shape[0] // 128
    out = nl.ndarray((128, n * 128), nl.float32, buffer=nl.shared_hbm)
    ident = nl.shared_constant(np.identity(128, dtype=np.float32))
    eye = nl.ndarray((nl.par_dim(128), 128), nl.float32, buffer=nl.sbuf)
    xs = nl.ndarray((n, nl.par_dim(128), 128), nl.float32, buffer=nl.sbuf)
    t = nl.zeros((n, nl.par_dim(128), 128), nl.float32, buffer=nl.psum, lazy_initialization=True)
    res = nl.ndarray((n, nl.par_dim(128), 128), nl.float32, buffer=nl.sbuf)
    ip, i_f = nl.arange(128)[:, None], nl.arange(128)[None, :]
    eye[ip, i_f] = nl.load(ident[ip, i_f])
    for i in nl.affine_range(n):
        xs[i, ip, i_f] = nl.load(x[i * 128 + ip, i_f])
        t[i, ip, i_f] = nisa.nc_matmul(xs[i, ip, i_f], eye[ip, i_f], is_moving_onezero=True, is_transpose=True)
        res[i, ip, i_f] = nl.copy(t[i, ip, i_f])
        nl.store(out[ip, i * 128 + i_f], value=res[i, ip, i_f])
    return out


def test_a_transposed_block_narrower_than_its_bank_is_not_zeroed_first():
    x = RNG.uniform(-1, 1, (3 * 128, 128)).astype(np.float32)
    r = nki.benchmark(transposed_blocks, x, sanitize=True)
    assert r.findings == []
    np.testing.assert_array_equal(r.outputs["out"], np.concatenate([b.T for b in np.split(x, 3)], axis=1))
    assert memsets(transposed_blocks, nki.tensor(x.shape)) == []


def summed_blocks(a, b):
    """a [kt, 128, 128], b [kt, 128, nn * 128]: out[:, n-th 128 columns] = sum over t of a[t].T @ b[t][:, n-th], in a
    PSUM block of 128 fp32 per trip of the n loop, zeroed lazily and summed with `+=`."""
    kt = a.shape[0]
    nn = b.shape[2] // 128
    out = nl.ndarray((128, nn * 128), nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((nn, nl.par_dim(128), 128), nl.float32, buffer=nl.psum, lazy_initialization=True)
    res = nl.ndarray((nn, nl.par_dim(128), 128), nl.float32, buffer=nl.sbuf)
    ip, i_f = nl.arange(128)[:, None], nl.arange(128)[None, :]
    for n in nl.affine_range(nn):
        for t in nl.affine_range(kt):
            acc[n, ip, i_f] += nisa.nc_matmul(nl.load(a[t, ip, i_f]), nl.load(b[t, ip, n * 128 + i_f]))
        res[n, ip, i_f] = nl.copy(acc[n, ip, i_f])
        nl.store(out[ip, n * 128 + i_f], value=res[n, ip, i_f])
    return out


def test_a_block_whose_first_matmul_starts_the_group_is_not_zeroed_first():
    a = RNG.uniform(-1, 1, (3, 128, 128)).astype(np.float32)
    b = RNG.uniform(-1, 1, (3, 128, 2 * 128)).astype(np.float32)
    r = nki.benchmark(summed_blocks, a, b, sanitize=True)
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["out"], np.einsum("tpm,tpn->mn", a, b), rtol=1e-4, atol=1e-3)
    assert memsets(summed_blocks, nki.tensor(a.shape), nki.tensor(b.shape)) == []


def half_written_blocks(a, b):
    """As summed_blocks with one K tile, but the matmul writes the left 64 columns of each 128-column block only:
    the right half keeps the zeros of nl.zeros, so the Memset stays -- over the block's 128 columns."""
    nn = b.shape[1] // 64
    out = nl.ndarray((128, nn * 128), nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((nn, nl.par_dim(128), 128), nl.float32, buffer=nl.psum, lazy_initialization=True)
    res = nl.ndarray((nn, nl.par_dim(128), 128), nl.float32, buffer=nl.sbuf)
    ip, i_m, i_h, i_f = nl.arange(128)[:, None], nl.arange(128)[None, :], nl.arange(64)[None, :], \
        nl.arange(128)[None, :]
    for n in nl.affine_range(nn):
        acc[n, ip, i_h] = nisa.nc_matmul(nl.load(a[ip, i_m]), nl.load(b[ip, n * 64 + i_h]))
        res[n, ip, i_f] = nl.copy(acc[n, ip, i_f])
        nl.store(out[ip, n * 128 + i_f], value=res[n, ip, i_f])
    return out


def test_a_half_written_block_is_zeroed_over_its_own_columns():
    a = RNG.uniform(-1, 1, (128, 128)).astype(np.float32)
    b = RNG.uniform(-1, 1, (128, 2 * 64)).astype(np.float32)
    r = nki.benchmark(half_written_blocks, a, b)
    want = np.zeros((128, 256), np.float32)
    for n in range(2):
        want[:, n * 128:n * 128 + 64] = a.T @ b[:, n * 64:(n + 1) * 64]
    np.testing.assert_allclose(r.outputs["out"], want, rtol=1e-4, atol=1e-3)
    ms = memsets(half_written_blocks, nki.tensor(a.shape), nki.tensor(b.shape))
    assert ms and all(m["outs"][0]["ap"][-1] == [1, 128] for m in ms)  # the block's 128 fp32, not the bank's 512
