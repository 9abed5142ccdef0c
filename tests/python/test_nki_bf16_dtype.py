"""numpy's bfloat16 dtype without ml_dtypes (python/bf16_dtype.cpp, registered by neuronsim.nki.dtypes): what public
NKI kernels do with nl.bfloat16 as a numpy dtype, checked against references that share no code with the simulator:
the bf16 bit layout (the top half of float32) and round to nearest even written on the bit pattern, hand-worked values,
and numpy's float32 arithmetic."""
import pickle

import numpy as np

import neuronsim
import neuronsim.nki as nki
import neuronsim.nki.language as nl
from neuronsim.nki.language import bfloat16  # the import of a public kernel file (neuronxcc.nki.language)

BF16 = np.dtype(nl.bfloat16)
RNG = np.random.default_rng(37)


def bits(a):
    return np.asarray(a).view(np.uint16)


def rne(x32):
    """float32 values rounded to bf16 (round to nearest even on the bit pattern), as float32: the reference."""
    u = np.asarray(x32, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)


def test_the_dtype_is_ml_dtypes_bfloat16_shape():
    assert BF16.name == "bfloat16" and BF16.itemsize == 2 and BF16.kind == "V"  # ml_dtypes' kind
    assert np.dtype("bfloat16") == BF16 and np.dtype(bfloat16) == BF16 and np.dtype(BF16.type) == BF16
    assert nl.bfloat16 == BF16 and BF16 != np.float16 and BF16 != np.dtype("V2")
    assert np.can_cast(BF16, np.float32) and np.can_cast(BF16, np.float64) and not np.can_cast(np.float32, BF16)
    assert np.can_cast(np.int8, BF16) and np.can_cast(np.float16, BF16) and not np.can_cast(np.int32, BF16)


def test_float32_rounds_to_nearest_even():
    x = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, 65504.0, -0.0, np.inf, -np.inf],
                 np.float32)
    b = x.astype(BF16)
    # 1 + 2^-8: halfway between 1.0 and 1 + 2^-7, ties to the even 1.0; 1 + 3*2^-8: halfway, to the even 1 + 2^-6;
    # 1 + 2^-8 + 2^-20: above the tie, up to 1 + 2^-7; 65504 lies 224 above 65280, past the half step 128: 65536.
    assert bits(b).tolist() == [0x3F80, 0x3F80, 0x3F82, 0x3F81, 0x4780, 0x8000, 0x7F80, 0xFF80]
    assert b.astype(np.float32).tolist() == [1.0, 1.0, 1 + 2 ** -6, 1 + 2 ** -7, 65536.0, 0.0, np.inf, -np.inf]
    assert np.signbit(b.astype(np.float32)[5])
    nan = np.array([np.nan, -np.nan], np.float32).astype(BF16)
    assert np.isnan(nan.astype(np.float32)).all() and (bits(nan) & 0x7FC0 == 0x7FC0).all()  # quiet NaNs
    u = RNG.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    u = u[np.isfinite(u)]
    assert (u.astype(BF16).astype(np.float32).view(np.uint32) == rne(u).view(np.uint32)).all()


def test_casts_from_and_to_other_types():
    # int8 values are exact; 257 and 259 lie halfway between bf16 neighbours 2 apart: to the even 256 and 260
    assert np.array([-128, 0, 127], np.int8).astype(BF16).astype(np.float32).tolist() == [-128.0, 0.0, 127.0]
    assert np.array([257, 259, -3], np.int32).astype(BF16).astype(np.float32).tolist() == [256.0, 260.0, -3.0]
    assert bits(np.array([0.1], np.float64).astype(BF16)).tolist() == [0x3DCD]  # float32 0x3DCCCCCD, rounded up
    assert bits(np.array([True, False]).astype(BF16)).tolist() == [0x3F80, 0]
    b = np.array([1.5, -2.0, 0.0, 300.0], np.float32).astype(BF16)
    assert b.astype(np.int32).tolist() == [1, -2, 0, 300] and b.astype(np.uint8)[:1].tolist() == [1]
    assert b.astype(np.bool_).tolist() == [True, True, False, True]
    assert b.astype(np.float64).tolist() == [1.5, -2.0, 0.0, 300.0] and b.astype(np.float16).dtype == np.float16
    assert b.astype(np.float16).tolist() == [1.5, -2.0, 0.0, 300.0]


def test_arithmetic_is_float32_then_one_rounding():
    x = np.array([1.0, 1.0, 3.0, -2.5], np.float32).astype(BF16)
    y = np.array([2 ** -8, 3 * 2 ** -8, 1 + 2 ** -7, 0.75], np.float32).astype(BF16)
    s = x + y
    assert s.dtype == BF16 and s.astype(np.float32).tolist() == [1.0, 1 + 2 ** -6, 4.0, -1.75]
    # 3 * (1 + 2^-7) = 3 + 1.5 steps of 2^-6: a tie, to the even 3 + 2 * 2^-6
    assert (x * y).astype(np.float32).tolist()[2] == 3 + 2 * 2 ** -6
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    for got, want in ((x + y, xf + yf), (x - y, xf - yf), (x * y, xf * yf), (x / y, xf / yf),
                      (np.maximum(x, y), np.maximum(xf, yf)), (np.minimum(x, y), np.minimum(xf, yf)),
                      (-x, -xf), (np.abs(x), np.abs(xf))):
        assert got.dtype == BF16
        assert got.astype(np.float32).tolist() == rne(want).tolist()
    for got, want in ((x < y, xf < yf), (x <= y, xf <= yf), (x == y, xf == yf), (x != y, xf != yf),
                      (x > y, xf > yf), (x >= y, xf >= yf)):
        assert got.dtype == np.bool_ and got.tolist() == want.tolist()
    # numbers in the expression keep it bfloat16 (Python ints and floats are taken as bf16 first)
    r = (x - 0.5) * 2
    assert r.dtype == BF16 and r.astype(np.float32).tolist() == rne((xf - np.float32(0.5)) * 2).tolist()
    t = x * 1e-8  # the number rounded to bf16 from its own value, not through float16 (where it would be 0)
    assert t.dtype == BF16 and t.astype(np.float32).tolist() == rne(xf * rne(np.array([1e-8], np.float32))).tolist()
    assert (x + np.ones(4, np.float16)).dtype == BF16  # the price of the above (docs/nki-lowering.md 2)
    assert (0.5 - x).dtype == BF16 and (x + 1).dtype == BF16 and (x + np.ones(4)).dtype == np.float64
    assert (x + np.ones(4, np.float32)).dtype == np.float32  # as ml_dtypes: float32 arrays win


def test_creation_scalars_and_printing():
    assert bits(np.zeros((2, 3), BF16)).tolist() == [[0] * 3] * 2 and np.empty(4, dtype=nl.bfloat16).dtype == BF16
    assert bits(np.ones(3, dtype=nl.bfloat16)).tolist() == [0x3F80] * 3
    b = np.array([1.5, -0.25, 65504.0], np.float32).astype(BF16)
    assert b.tolist() == [1.5, -0.25, 65536.0] and all(type(v) is float for v in b.tolist())
    s = b[0]
    assert type(s) is BF16.type and float(s) == 1.5 and int(b[1]) == 0 and repr(s) == "1.5" and str(b[1]) == "-0.25"
    assert float(BF16.type(1 + 2 ** -8)) == 1.0 and bool(BF16.type(0.0)) is False and s == BF16.type(1.5)
    assert float(s + s) == 3.0 and type(s * s) is BF16.type and f"{s:.3f}" == "1.500"
    assert repr(b) == "array([1.5, -0.25, 65536], dtype=bfloat16)"
    back = pickle.loads(pickle.dumps(b))  # through the name neuronsim.bfloat16 (Dask workers, multiprocessing)
    assert back.dtype == BF16 and (bits(back) == bits(b)).all() and neuronsim.bfloat16 is BF16.type
    assert np.sort(np.array([2.0, np.nan, -1.0], np.float32).astype(BF16)).astype(np.float32)[:2].tolist() == \
        [-1.0, 2.0]


def copy_kernel(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(x))
    return out


def test_kernel_round_trip_keeps_the_bits():
    a = RNG.standard_normal((128, 32)).astype(np.float32).astype(BF16)
    a[0, :4] = np.array([-0.0, np.inf, -np.inf, 65504.0], np.float32).astype(BF16)
    out = nki.simulate(copy_kernel, a)
    assert out.dtype == BF16 and out.shape == a.shape
    assert (bits(out) == bits(a)).all()


def test_bf16_matmul_and_tensor_tensor_against_numpy():
    a = RNG.uniform(-1, 1, (128, 64)).astype(BF16)
    b = RNG.uniform(-1, 1, (128, 32)).astype(BF16)

    def mm(x, y):
        out = nl.ndarray((64, 32), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nl.matmul(nl.load(x), nl.load(y), transpose_x=True))
        return out
    av, bv = a.astype(np.float64), b.astype(np.float64)
    exact = av.T @ bv  # bf16 x bf16 products are exact in float32; 128 float32 additions
    got = nki.simulate(mm, a, b)
    assert got.dtype == np.float32
    assert np.all(np.abs(got - exact) <= 128 * 2.0 ** -24 * (np.abs(av.T) @ np.abs(bv)))

    c = RNG.uniform(-1, 1, (128, 64)).astype(BF16)

    def add(x, y):
        out = nl.ndarray(x.shape, nl.bfloat16, buffer=nl.shared_hbm)
        nl.store(out, nl.add(nl.load(x), nl.load(y)))
        return out
    got = nki.simulate(add, a, c)
    # the engine adds in float32 and rounds once to bf16 on the write, as the dtype's own add
    assert got.dtype == BF16 and (bits(got) == bits(a + c)).all()


def test_public_kernel_idioms():
    # a buffer sized from the dtype's itemsize
    assert np.dtype(nl.bfloat16).itemsize * 128 * 512 == 131072
    # inputs made with astype of the imported bfloat16
    q = np.random.rand(128, 16).astype(bfloat16)
    assert q.dtype == BF16 and (q.astype(np.float32) >= 0).all() and (q.astype(np.float32) <= 1).all()
    # values in [-1, 1] drawn for a kernel taking a dtype argument
    dtype = nl.bfloat16
    x = (np.random.random_sample((128, 16)).astype(dtype) - 0.5) * 2
    assert x.dtype == BF16 and (np.abs(x.astype(np.float32)) <= 1).all()
    assert (bits(nki.simulate(copy_kernel, x)) == bits(x)).all()


def test_typed_arrays_and_in_place_outputs():
    v = (np.arange(256).reshape(128, 2) % 64) / 4  # quarters below 17: exact in bf16, and so are they plus 1
    y = nki.array(v, nl.bfloat16)
    assert nki.simulate(copy_kernel, y).astype(np.float32).tolist() == v.tolist()

    def inc(x):
        nl.store(x, nl.load(x) + 1.0)
    nki.simulate(inc, y)
    assert y.values().tolist() == (v + 1).tolist()
    z = v.astype(BF16)
    assert nki.simulate(inc, z) is None and z.dtype == BF16 and z.astype(np.float32).tolist() == (v + 1).tolist()


def test_static_cast_and_finfo_take_the_dtype():
    assert nl.static_cast(np.array([1 + 2 ** -8], np.float32), nl.bfloat16).dtype == BF16
    f = nl.finfo(nl.bfloat16)
    assert f.eps == 2 ** -7 and f.max == float(np.array([0x7F7F], np.uint16).view(BF16).astype(np.float32)[0])
