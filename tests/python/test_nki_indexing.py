"""The shape an integer index leaves, as the NKI language guide defines it ("The partition dimension is special"): on
chip the partition dim stays at size 1 and a tile stays at least 2-D (the last free dim indexed kept at size 1); an
HBM tensor drops every integer-indexed dim. Checked on the traced shapes and, in the running-statistics idiom of a
flash-attention kernel (a column of a [P, tiles] buffer handed to a helper that indexes it again), on values."""
import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.language as nl

RNG = np.random.default_rng(3738)


def test_integer_index_shapes_on_chip_and_in_hbm():
    shapes = {}

    def kernel(x):
        t = nl.ndarray((64, 4, 8), nl.float32, buffer=nl.sbuf)
        shapes["free"] = t[:, 1].shape
        shapes["two_free"] = t[:, 1, 3].shape
        shapes["partition"] = t[0, :, :].shape
        shapes["all"] = t[0, 1, 3].shape
        col = nl.ndarray((128, 5), nl.float32, buffer=nl.sbuf)
        shapes["column"] = col[:, 2].shape
        shapes["column_of_column"] = col[:, 2][:, 0].shape
        shapes["hbm"] = x[0].shape
        shapes["hbm_all"] = x[0, 1].shape
        out = nl.ndarray((1, 1), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nl.load(x[0:1, 0:1]))
        return out
    nki.simulate(kernel, np.zeros((3, 6), np.float32))
    assert shapes == {"free": (64, 8), "two_free": (64, 1), "partition": (1, 4, 8), "all": (1, 1),
                      "column": (128, 1), "column_of_column": (128, 1), "hbm": (6,), "hbm_all": ()}


def _fold_in(stat, x):
    """A helper in the flash-attention style: it gets one column of the caller's statistics buffer, reads and
    writes it as stat[:, 0] (a [P, 1] tile), keeping the running maximum of x's rows."""
    previous = nl.copy(stat[:, 0])
    stat[:, 0] = nl.maximum(previous, nl.max(x, axis=1, keepdims=True))


def test_a_column_of_a_buffer_indexed_again_by_a_helper():
    P, F, tiles = 128, 32, 3
    x = RNG.standard_normal((tiles, P, F)).astype(np.float32)

    def kernel(x):
        out = nl.ndarray((P, tiles), nl.float32, buffer=nl.shared_hbm)
        stats = nl.full((P, tiles), fill_value=-1.0e30, dtype=nl.float32)
        for i in nl.affine_range(tiles):
            _fold_in(stats[:, i], nl.load(x[i]))
            _fold_in(stats[:, i], nl.multiply(nl.load(x[i]), 2.0))
        nl.store(out, stats)
        return out
    got = nki.simulate(kernel, x)
    want = np.maximum(x.max(axis=2), 2.0 * x.max(axis=2)).T
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_rows_gathered_and_scattered_by_an_index_tile():
    """The legacy indirect DMA (nl.load / nl.store "Indirect DMA" examples): an HBM tensor indexed by an SBUF tile of
    per-partition row numbers, at dim 1 of a 3-D tensor under a batch loop, the last tile masked to the rows that
    exist (its masked partitions hold indices past the table, which must not be read)."""
    B, N, C, M = 2, 90, 48, 150  # gather M rows per batch: row (7 m) % N... of the N rows, then scatter them back
    x = RNG.standard_normal((B, N, C)).astype(np.float32)
    perm = RNG.permutation(M).astype(np.int32)
    src_rows = (np.arange(M) * 7 % N).astype(np.int32)

    def kernel(x, src_rows, perm):
        out = nl.ndarray((B, M, C), nl.float32, buffer=nl.shared_hbm)
        for b in nl.affine_range(B):
            for t in nl.affine_range((M + 127) // 128):
                i_p = nl.arange(128)[:, None]
                i_f = nl.arange(C)[None, :]
                valid = t * 128 + i_p < M
                rows = nl.load(src_rows[t * 128 + i_p], mask=valid)
                dest = nl.load(perm[t * 128 + i_p], mask=valid)
                tile = nl.load(x[b, rows, i_f], mask=valid)
                nl.store(out[b, dest[i_p, 0], i_f], value=tile, mask=valid)
        return out
    got = nki.simulate(kernel, x, src_rows, perm)
    want = np.zeros((B, M, C), np.float32)
    want[:, perm, :] = x[:, src_rows, :]
    np.testing.assert_array_equal(got, want)


def test_an_index_tile_with_slices_and_the_refusals():
    N, C = 64, 32
    x = RNG.standard_normal((N, C)).astype(np.float32)

    def kernel(x):
        out = nl.ndarray((32, C), nl.float32, buffer=nl.shared_hbm)
        rows = nl.ndarray((32, 1), nl.int32, buffer=nl.sbuf)
        rows[...] = nl.multiply(nl.load(x[0:32, 0:1]), 0.0, dtype=nl.int32)  # zeros, then 2 p + 1
        rows[...] = nl.add(rows, nki.isa.iota(2 * nl.arange(32)[:, None] + 1, dtype=nl.int32))
        nl.store(out, nl.load(x[rows, :]))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, x), x[1::2][:32])

    def on_chip(x):
        t = nl.load(x[0:32, :])
        idx = nki.isa.iota(nl.arange(32)[:, None], dtype=nl.int32)
        return t[idx, :]

    def float_index(x):
        idx = nl.load(x[0:32, 0:1])
        return x[idx, :]
    for k, msg in ((on_chip, "reads an HBM tensor"), (float_index, "must be an SBUF tile of integers")):
        with pytest.raises(nki.KernelError, match=msg):
            nki.simulate(k, x)
