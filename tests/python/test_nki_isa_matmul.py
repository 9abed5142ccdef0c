"""nki.isa.nc_matmul's documented options -- tile_position / tile_size (PE tiling), perf_mode double_row, the
is_stationary_onezero / is_moving_onezero hints, is_transpose -- on the simulator against numpy, and the fields they
set on the BIR Matmult (public NKI docs, nki.isa.nc_matmul)."""
import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl
from test_nki_isa import bir_ops

RNG = np.random.default_rng(4343)


def matmults(doc):
    """The Matmult instructions of a BIR module, loops walked."""
    return [i for op, i in bir_ops(doc) if op == "Matmult"]


def test_row_tiling_and_the_hints_keep_the_product_and_become_fields():
    a = RNG.integers(0, 2, (32, 32)).astype(np.float32)  # ones and zeros, as the hint says
    b = RNG.uniform(-1, 1, (32, 64)).astype(np.float32)

    def kernel(a, b):
        out = nl.ndarray((32, 64), nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((32, 64), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(acc, nl.load(a), nl.load(b), tile_position=(64, 0), tile_size=(32, 32),
                       is_stationary_onezero=True)
        nl.store(out, acc)
        return out
    got = nki.simulate(kernel, a, b)
    np.testing.assert_allclose(got, a.T.astype(np.float64) @ b, rtol=32 * 2.0 ** -24, atol=1e-6)
    (mm,) = matmults(nki.to_bir(kernel, a, b))
    assert mm["tile_position"] == [64, 0] and mm["tile_size"] == [32, 32] and mm["is_weight_onezero"] is True


def test_tiling_outside_the_rules_is_refused():
    def too_big(a, b):
        out = nl.ndarray((32, 64), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nisa.nc_matmul(nl.load(a), nl.load(b), tile_position=(0, 0), tile_size=(32, 128)))
        return out
    with pytest.raises(nki.KernelError, match=r"stationary tile \[64, 32\] exceeds tile_size \(32, 128\)"):
        nki.to_bir(too_big, np.zeros((64, 32), np.float32), np.zeros((64, 64), np.float32))

    def misaligned(a, b):
        out = nl.ndarray((32, 64), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nisa.nc_matmul(nl.load(a), nl.load(b), tile_position=(32, 0), tile_size=(64, 128)))
        return out
    with pytest.raises(nki.KernelError, match="tile_position row 32"):
        nki.to_bir(misaligned, np.zeros((64, 32), np.float32), np.zeros((64, 64), np.float32))


def test_double_row_contracts_both_halves_of_each_partition():
    """stationary [K, 2, M], moving [K, 2, N] (fp8): out[m, n] = sum over p, r of st[p, r, m] * mv[p, r, n] (the
    page's Layout: the contraction split between the partitions and the first free dim, which is 2)."""
    st = RNG.integers(-4, 5, (128, 2, 8)).astype(np.float32)  # small integers: exact in fp8 and in the fp32 sums
    mv = RNG.integers(-4, 5, (128, 2, 16)).astype(np.float32)

    def kernel(st, mv):
        out = nl.ndarray((8, 16), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nisa.nc_matmul(nl.load(st), nl.load(mv), perf_mode="double_row"))
        return out
    got = nki.simulate(kernel, nki.array(st, nl.float8_e4m3), nki.array(mv, nl.float8_e4m3))
    np.testing.assert_array_equal(got, np.einsum("prm,prn->mn", st, mv))
    (mm,) = matmults(nki.to_bir(kernel, nki.tensor(st.shape, nl.float8_e4m3), nki.tensor(mv.shape, nl.float8_e4m3)))
    assert mm["perf_mode"] == "DoubleRow"

    def legacy(st, mv):  # the legacy string of the SDK's nc_matmul example
        out = nl.ndarray((8, 16), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nisa.nc_matmul(nl.load(st), nl.load(mv), perf_mode="double_row_gen3"))
        return out
    got = nki.simulate(legacy, nki.array(st, nl.float8_e4m3), nki.array(mv, nl.float8_e4m3))
    np.testing.assert_array_equal(got, np.einsum("prm,prn->mn", st, mv))


def test_is_transpose_with_an_identity_moving_operand():
    x = RNG.uniform(-1, 1, (64, 32)).astype(np.float32)

    def kernel(x, ident):
        out = nl.ndarray((32, 64), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nisa.nc_matmul(nl.load(x), nl.load(ident), is_transpose=True))
        return out
    got = nki.simulate(kernel, x, np.identity(64, np.float32))
    np.testing.assert_array_equal(got, x.T)
