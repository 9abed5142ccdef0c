"""numpy's fp8 dtypes without ml_dtypes (python/fp8_dtypes.cpp, registered by neuronsim.nki.dtypes): what NKI kernels
and their tests do with nl.float8_e4m3 / nl.float8_e5m2 / nl.float8_e4m3fn as numpy dtypes, checked against
references that share no code with the simulator: each format's bit layout (sign, exponent with its bias, mantissa)
decoded and rounded to nearest even by the formulas below, hand-worked bit patterns, and numpy's float32 arithmetic.
With ml_dtypes installed these are its types, whose e4m3fn overflow gives NaN where neuronsim saturates (the e4m3fn
overflow cases are skipped then)."""
import math
import pickle

import numpy as np
import pytest

import neuronsim
import neuronsim.nki as nki
import neuronsim.nki.dtypes as nki_dtypes
import neuronsim.nki.language as nl

RNG = np.random.default_rng(41)
OWN = nki_dtypes._ml is None  # neuronsim's dtypes, not ml_dtypes'

# name: (exponent bits, mantissa bits, bias, finite only: no Inf, NaN only at S.1111.111)
FORMATS = {"float8_e4m3": (4, 3, 7, False), "float8_e5m2": (5, 2, 15, False), "float8_e4m3fn": (4, 3, 7, True)}


def dt(name):
    return np.dtype(getattr(nl, name))


def bits(a):
    return np.asarray(a).view(np.uint8)


def decode(code, name):
    """The value of an fp8 code, from the format's fields."""
    E, M, B, fn = FORMATS[name]
    s = -1.0 if code & 0x80 else 1.0
    e, m = (code >> M) & ((1 << E) - 1), code & ((1 << M) - 1)
    if e == (1 << E) - 1 and (not fn or m == (1 << M) - 1):
        return math.nan if fn or m else s * math.inf
    if e == 0:
        return s * m * 2.0 ** (1 - B - M)  # subnormal
    return s * (1 + m / 2 ** M) * 2.0 ** (e - B)


def max_code(name):
    E, M, _, fn = FORMATS[name]
    return 0x7E if fn else (((1 << E) - 2) << M) | ((1 << M) - 1)


def grid(name):
    """The values of the positive codes 0 .. max finite, then the value the next code would have as a normal number
    (Inf's place in the IEEE-like formats, 480 for e4m3fn): the grid a float32 is rounded on."""
    E, M, B, _ = FORMATS[name]
    top = max_code(name) + 1
    nxt = (1 + (top & ((1 << M) - 1)) / 2 ** M) * 2.0 ** ((top >> M) - B)
    return np.array([decode(c, name) for c in range(top)] + [nxt])


def encode(x32, name):
    """float32 -> fp8 bits: round to nearest, ties to the even code, on the format's grid. Past the largest finite
    value: Inf for the IEEE-like formats; neuronsim's e4m3fn saturates to 448 (0x7e; libBIR CastToNewDType's rule).
    Inf gives Inf (e4m3fn: NaN 0x7f), NaN the canonical quiet NaN (exponent all ones, top mantissa bit)."""
    E, M, _, fn = FORMATS[name]
    with np.errstate(invalid="ignore"):  # signalling NaNs among random bit patterns
        x = np.asarray(x32, np.float32).astype(np.float64)
    a, sign = np.abs(x), np.where(np.signbit(x), 0x80, 0)
    vals = grid(name)
    top = len(vals) - 1
    lo = np.clip(np.searchsorted(vals, np.nan_to_num(a, posinf=vals[-1] * 2), side="right") - 1, 0, top - 1)
    hi = lo + 1
    with np.errstate(invalid="ignore"):
        d_lo, d_hi = a - vals[lo], vals[hi] - a
        code = np.where((d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0)), hi, lo)
        code = np.where(a > vals[-1], top, code)
    code = np.where(code == top, 0x7E if fn else top, code)  # overflow: saturate (e4m3fn) or the Inf code
    nan = 0x7F if fn else ((1 << E) - 1) << M | 1 << (M - 1)
    code = np.where(np.isinf(a) & fn, nan, code)
    code = np.where(np.isnan(a), nan, code)
    return (code | sign).astype(np.uint8)


def test_the_dtypes_are_ml_dtypes_shaped():
    for name, char in (("float8_e4m3", "7"), ("float8_e5m2", "5"), ("float8_e4m3fn", "4")):
        d = dt(name)
        assert d.name == name and d.itemsize == 1 and np.dtype(name) == d
        assert d.kind == ("f" if not OWN and name == "float8_e5m2" else "V")  # ml_dtypes' e5m2 is kind 'f'
        assert np.dtype(d.type) == d and getattr(nl, name) == d and d != np.uint8 and d != np.int8
        assert np.can_cast(d, np.float32) and not np.can_cast(np.float32, d) and np.can_cast(np.int8, d)
        if OWN:
            assert d.char == char and getattr(neuronsim, name) is d.type
    assert dt("float8_e4m3") != dt("float8_e4m3fn") != dt("float8_e5m2") != dt("float8_e4m3")
    assert np.dtype(nl.float8_e4m3).itemsize * 128 * 512 == 65536  # a buffer sized from the itemsize


def test_hand_worked_bit_patterns():
    e4m3, e5m2, fn = dt("float8_e4m3"), dt("float8_e5m2"), dt("float8_e4m3fn")
    # e4m3, bias 7, S.EEEE.MMM: 1.0 = 2^0: E = 0+7 = 0111, M = 000 -> 0x38; 0.5: E = 0110 -> 0x30;
    # -2.5 = -1.25 * 2^1: S 1, E = 1000, M = 010 -> 0xc2; 240 = 1.875 * 2^7: E = 1110, M = 111 -> 0x77 (max finite);
    # 2^-6 (smallest normal): E = 0001 -> 0x08; 2^-9 = 1 * 2^(1-7-3) (smallest subnormal): 0x01; -0.0: 0x80
    x = np.array([1.0, 0.5, -2.5, 240.0, 2 ** -6, 2 ** -9, -0.0], np.float32)
    assert bits(x.astype(e4m3)).tolist() == [0x38, 0x30, 0xC2, 0x77, 0x08, 0x01, 0x80]
    # ties to even: 1 + 2^-4 lies halfway between 1.0 (0x38) and 1.125 (0x39): to 0x38; 1 + 3 * 2^-4 between 1.125
    # (0x39) and 1.25 (0x3a): to 0x3a; 2^-10 between 0 and 2^-9 (0x01): to 0; 3 * 2^-10 between 0x01 and 0x02: to 0x02
    # overflow: 247 rounds to 240 (0x77); 248 is the tie between 240 (M 111, odd) and 256, whose code 0x78 is Inf
    t = np.array([1 + 2 ** -4, 1 + 3 * 2 ** -4, 2 ** -10, 3 * 2 ** -10, 247.0, 248.0, 1e6, np.inf, -np.inf],
                 np.float32)
    assert bits(t.astype(e4m3)).tolist() == [0x38, 0x3A, 0x00, 0x02, 0x77, 0x78, 0x78, 0x78, 0xF8]
    assert bits(np.array([np.nan], np.float32).astype(e4m3)).tolist() == [0x7C]  # E 1111, top M bit: quiet NaN
    assert np.isnan(np.array([0x79, 0x7F, 0xFF], np.uint8).view(e4m3).astype(np.float32)).all()
    # e5m2, bias 15, S.EEEEE.MM: 1.0: E = 01111 -> 0x3c; 57344 = 1.75 * 2^15: E = 11110, M = 11 -> 0x7b (max);
    # 2^-14 (smallest normal) -> 0x04; 2^-16 = 1 * 2^(1-15-2) -> 0x01; 1 + 2^-3 ties to 1.0 (0x3c), 1 + 3 * 2^-3
    # to 1.5 (0x3e); 61440, the tie between 57344 (M 11) and 65536 (0x7c, Inf): Inf; NaN: 0x7e
    y = np.array([1.0, 57344.0, 2 ** -14, 2 ** -16, 1 + 2 ** -3, 1 + 3 * 2 ** -3, 61440.0, -np.inf, np.nan],
                 np.float32)
    assert bits(y.astype(e5m2)).tolist() == [0x3C, 0x7B, 0x04, 0x01, 0x3C, 0x3E, 0x7C, 0xFC, 0x7E]
    # e4m3fn, bias 7, no Inf: 448 = 1.75 * 2^8: E = 1111, M = 110 -> 0x7e (max); 256: E = 1111, M = 000 -> 0x78, a
    # number here (Inf in e4m3); 464, the tie between 448 (M 110, even) and 480 (0x7f, the NaN code): 448;
    # +-Inf and NaN: NaN, S.1111.111
    z = np.array([1.0, 448.0, 256.0, 464.0, np.inf, -np.inf, np.nan], np.float32)
    assert bits(z.astype(fn)).tolist() == [0x38, 0x7E, 0x78, 0x7E, 0x7F, 0xFF, 0x7F]
    assert np.array([0x78, 0x79, 0xF8], np.uint8).view(fn).astype(np.float32).tolist() == [256.0, 288.0, -256.0]
    assert np.signbit(np.array([0x80], np.uint8).view(fn).astype(np.float32)[0])


@pytest.mark.skipif(not OWN, reason="ml_dtypes' float8_e4m3fn gives NaN on overflow")
def test_e4m3fn_overflow_saturates_as_the_engines_store():
    fn = dt("float8_e4m3fn")
    # 470 would round to 480, past 448: neuronsim saturates (libBIR CastToNewDType); so do 1e6 and a float64 past
    # float32's range (not the NaN an Inf gives)
    x = np.array([470.0, 1e6, -1e6, 1e300, -1e300])
    assert bits(x.astype(fn)).tolist() == [0x7E, 0x7E, 0xFE, 0x7E, 0xFE]
    assert bits(np.array([1e300]).astype(dt("float8_e4m3"))).tolist() == [0x78]  # e4m3: Inf


def test_every_code_decodes_by_the_format():
    codes = np.arange(256, dtype=np.uint8)
    for name in FORMATS:
        got = codes.view(dt(name)).astype(np.float32).astype(np.float64)
        want = np.array([decode(int(c), name) for c in codes])
        assert np.array_equal(got, want, equal_nan=True), name
        assert np.array_equal(np.signbit(got), np.array([bool(c & 0x80) for c in codes])), name


def test_random_float32_values_against_the_bit_formula():
    n = 3000
    mags = (1 + RNG.random(n)) * 2.0 ** RNG.integers(-22, 20, n)
    x = np.concatenate([
        (mags * RNG.choice([-1.0, 1.0], n)).astype(np.float32),
        RNG.integers(0, 1 << 32, 1000, dtype=np.uint64).astype(np.uint32).view(np.float32),  # any bit pattern
        np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)])
    for name in FORMATS:
        vals = grid(name)
        ties = ((vals[:-1] + vals[1:]) / 2).astype(np.float32)  # every halfway point, exact in float32
        xs = np.concatenate([x, ties, -ties, np.nextafter(ties, np.float32(np.inf)),
                             np.nextafter(ties, np.float32(0))])
        if not OWN and FORMATS[name][3]:
            xs = xs[~(np.abs(xs) > 464)]  # ml_dtypes: NaN on e4m3fn overflow
        got, want = bits(xs.astype(dt(name))), encode(xs, name)
        bad = np.nonzero(got != want)[0]
        assert bad.size == 0, (name, xs[bad[:5]], got[bad[:5]], want[bad[:5]])


def test_casts_with_integers_and_other_floats():
    e4m3, fn = dt("float8_e4m3"), dt("float8_e4m3fn")
    # -3 = -1.5 * 2^1: S 1, E 1000, M 100 -> 0xc4; 7 = 1.75 * 2^2: E 1001, M 110 -> 0x4e; 300 > 248: Inf (0x78);
    # 17 = 1.0625 * 2^4: halfway between 16 (M 000) and 18 (M 001), to the even 16: E 1011 -> 0x58;
    # -128 = -2^7: E 1110 -> 0xf0
    assert bits(np.array([-3, 0, 7, 300, 17, -128], np.int32).astype(e4m3)).tolist() == \
        [0xC4, 0x00, 0x4E, 0x78, 0x58, 0xF0]
    assert bits(np.array([17, -128], np.int8).astype(e4m3)).tolist() == [0x58, 0xF0]
    # e4m3fn: 300 = 1.171875 * 256: M 1.375 rounds to 1: 288 (0x79)
    assert np.array([300], np.int64).astype(fn).astype(np.float32).tolist() == [288.0]
    f = np.array([1.5, -2.0, 0.0, 240.0], np.float32).astype(e4m3)
    assert f.astype(np.int32).tolist() == [1, -2, 0, 240] and f.astype(np.uint8)[3] == 240
    assert f.astype(np.bool_).tolist() == [True, True, False, True] and f.astype(np.float16).tolist() == \
        [1.5, -2.0, 0.0, 240.0]
    assert f.astype(np.float64).tolist() == [1.5, -2.0, 0.0, 240.0]
    # astype round trips: fp8 -> float32 -> fp8 and through bfloat16 and the other fp8 types keep every number
    codes = np.arange(256, dtype=np.uint8)
    for name in FORMATS:
        a = codes.view(dt(name))
        ok = ~np.isnan(a.astype(np.float32))
        for via in (np.float32, np.float64, nl.bfloat16):
            back = a.astype(via).astype(dt(name))
            assert (bits(back)[ok] == codes[ok]).all() and np.isnan(back[~ok].astype(np.float32)).all(), (name, via)
    # between the fp8 types: e5m2 1.25 (0x3d) is e4m3 1.25 (0x3a); e4m3 240 is the tie between e5m2's 224 (M 11)
    # and 256 (M 00): 256
    assert bits(np.array([0x3D], np.uint8).view(dt("float8_e5m2")).astype(e4m3)).tolist() == [0x3A]
    assert np.array([0x77], np.uint8).view(e4m3).astype(dt("float8_e5m2")).astype(np.float32).tolist() == [256.0]


def test_arithmetic_is_float32_then_one_rounding():
    e4m3 = dt("float8_e4m3")
    x = np.array([1.0, 3.0, -2.5, 0.5], np.float32).astype(e4m3)
    y = np.array([0.0625, 1.125, 0.75, 2 ** -9], np.float32).astype(e4m3)
    # 1 + 0.0625: the tie between 1 and 1.125, to 1; 3 * 1.125 = 3.375, the tie between 3.25 (M 101) and 3.5 (M 110):
    # 3.5; -2.5 + 0.75 = -1.75 exactly
    assert (x + y).dtype == e4m3 and (x + y).astype(np.float32).tolist()[:3] == [1.0, 4.0, -1.75]
    assert (x * y).astype(np.float32).tolist()[1] == 3.5
    for name in FORMATS:
        d = dt(name)
        a = RNG.uniform(-300, 300, 500).astype(np.float32).astype(d)
        b = RNG.uniform(-4, 4, 500).astype(np.float32).astype(d)
        af, bf = a.astype(np.float32), b.astype(np.float32)
        ok = np.isfinite(af) & np.isfinite(bf)
        a, b, af, bf = a[ok], b[ok], af[ok], bf[ok]
        for got, want in ((a + b, af + bf), (a - b, af - bf), (a * b, af * bf), (np.maximum(a, b),
                                                                                 np.maximum(af, bf))):
            assert got.dtype == d
            if not OWN and FORMATS[name][3]:
                keep = np.abs(want) <= 464
                got, want = got[keep], want[keep]
            assert (bits(got) == encode(want, name)).all(), name
        assert ((a < b) == (af < bf)).all() and ((a == b) == (af == bf)).all()
        r = (a - 0.5) * 2  # Python numbers keep the expression fp8
        assert r.dtype == d


def test_scalars_printing_and_pickling():
    e5m2 = dt("float8_e5m2")
    a = np.array([1.5, -0.25, 57344.0, 3.0], np.float32).astype(e5m2)
    assert a.tolist() == [1.5, -0.25, 57344.0, 3.0] and all(type(v) is float for v in a.tolist())
    s = a[0]
    assert type(s) is e5m2.type and float(s) == 1.5 and int(a[3]) == 3 and f"{s:.2f}" == "1.50"
    assert float(e5m2.type(1.1)) == 1.0 and float(s + s) == 3.0 and type(s * s) is e5m2.type
    assert repr(a) == "array([1.5, -0.25, 57344, 3], dtype='float8_e5m2')"  # numpy quotes a name with a '_'
    for name in FORMATS:
        b = np.arange(256, dtype=np.uint8).view(dt(name)).reshape(16, 16)
        back = pickle.loads(pickle.dumps(b))  # through the name neuronsim.float8_... (Dask workers)
        assert back.dtype == dt(name) and (bits(back) == bits(b)).all()
    assert np.sort(np.array([2.0, np.nan, -1.0], np.float32).astype(e5m2)).astype(np.float32)[:2].tolist() == \
        [-1.0, 2.0]


def copy_kernel(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(x))
    return out


def test_kernel_round_trip_keeps_the_bits():
    for name in FORMATS:
        codes = np.arange(128 * 32, dtype=np.uint32).astype(np.uint8).reshape(128, 32)
        a = codes.view(dt(name))
        out = nki.simulate(copy_kernel, a)
        assert out.dtype == dt(name) and out.shape == a.shape
        assert (bits(out) == codes).all(), name


def test_kernel_computes_in_float32_from_fp8_inputs():
    for name in FORMATS:
        d = dt(name)
        a = RNG.uniform(-8, 8, (128, 64)).astype(np.float32).astype(d)
        b = RNG.uniform(-8, 8, (128, 64)).astype(np.float32).astype(d)

        def mul(x, y):
            out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
            nl.store(out, nl.multiply(nl.load(x), nl.load(y), dtype=nl.float32))
            return out
        got = nki.simulate(mul, a, b)
        assert got.dtype == np.float32
        assert (got == a.astype(np.float32) * b.astype(np.float32)).all(), name  # fp8 products are exact in fp32

        def add(x, y):
            out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
            nl.store(out, nl.add(nl.load(x), nl.load(y)))
            return out
        got = nki.simulate(add, a, b)
        # the engine adds in float32 and rounds once to fp8 on the write, as the dtype's own add
        assert got.dtype == d and (bits(got) == bits(a + b)).all(), name


def test_float32_values_for_fp8_arguments_and_in_place_outputs():
    v = ((np.arange(256).reshape(128, 2) % 4) / 2).astype(np.float32)  # 0 .. 1.5 and plus 1: exact in every fp8
    for name in FORMATS:
        y = nki.array(v, getattr(nl, name))  # float32 values for an fp8 argument, as before
        out = nki.simulate(copy_kernel, y)
        assert out.dtype == dt(name) and (bits(out) == bits(v.astype(dt(name)))).all()

        def inc(x):
            nl.store(x, nl.load(x) + 1.0)
        nki.simulate(inc, y)
        assert y.values().tolist() == (v + 1).tolist()
        z = v.astype(dt(name))
        assert nki.simulate(inc, z) is None and z.dtype == dt(name) and z.astype(np.float32).tolist() == \
            (v + 1).tolist()


def test_static_cast_and_finfo_take_the_dtypes():
    assert nl.static_cast(np.array([1 + 2 ** -4], np.float32), nl.float8_e4m3).dtype == dt("float8_e4m3")
    assert {n: nl.finfo(getattr(nl, n)).max for n in FORMATS} == \
        {"float8_e4m3": 240.0, "float8_e5m2": 57344.0, "float8_e4m3fn": 448.0}
    assert nl.finfo(dt("float8_e5m2")).max == 57344.0
