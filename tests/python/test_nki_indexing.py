"""The shape an integer index leaves, as the NKI language guide defines it ("The partition dimension is special"): on
chip the partition dim stays at size 1 and a tile stays at least 2-D (the last free dim indexed kept at size 1); an
HBM tensor drops every integer-indexed dim. Checked on the traced shapes and, in the running-statistics idiom of a
flash-attention kernel (a column of a [P, tiles] buffer handed to a helper that indexes it again), on values."""
import numpy as np

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
