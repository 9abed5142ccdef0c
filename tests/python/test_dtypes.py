"""to_float32 / from_float32, bit for bit, against references that share no code with the simulator: the bf16 bit
layout (the top half of fp32) and its round-to-nearest-even formula, numpy's float16, and e5m2 = the top byte of
float16; hand-worked fp8 e4m3fn codes (OCP 8-bit floating point spec: bias 7, max 448 = 0x7E, NaN 0x7F)."""
import numpy as np
import pytest

import neuronsim


def test_bf16_decode_every_pattern():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    got = neuronsim.to_float32(bits, "bfloat16")
    want = (bits.astype(np.uint32) << 16).view(np.float32)
    nan = np.isnan(want)
    assert got.dtype == np.float32 and got.shape == bits.shape
    assert (np.isnan(got) == nan).all()
    assert (got[~nan].view(np.uint32) == want[~nan].view(np.uint32)).all()


def test_bf16_encode_rounds_to_nearest_even():
    # 1 + 2^-8 lies halfway between bf16 1.0 (0x3F80) and 1 + 2^-7 (0x3F81): ties go to the even 0x3F80;
    # 1 + 3 * 2^-8 lies halfway between 0x3F81 and 0x3F82: to the even 0x3F82. Just above a tie rounds up.
    x = np.array([1.0, -2.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, np.nextafter(np.float32(1 + 2 ** -8), np.float32(2))],
                 np.float32)
    assert neuronsim.from_float32(x, "bfloat16").tolist() == [0x3F80, 0xC000, 0x3F80, 0x3F82, 0x3F81]
    rng = np.random.default_rng(15)
    u = rng.integers(0, 1 << 32, 100000, dtype=np.uint64).astype(np.uint32)
    u = u[~np.isnan(u.view(np.float32))]
    want = ((u.astype(np.uint64) + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)  # RNE on the bit pattern
    assert (neuronsim.from_float32(u.view(np.float32), "bfloat16") == want).all()


def test_bf16_round_trip():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    bits = bits[~np.isnan(neuronsim.to_float32(bits, "bfloat16"))]
    assert (neuronsim.from_float32(neuronsim.to_float32(bits, "bfloat16"), "bfloat16") == bits).all()


def test_float16_matches_numpy():
    rng = np.random.default_rng(16)
    x = np.concatenate([rng.normal(0, 100, 50000), rng.normal(0, 1e-5, 50000), [65504, 65520, 1e6, -1e6, 0.0]])
    x = x.astype(np.float32)
    got = neuronsim.from_float32(x, "float16")
    assert got.dtype == np.float16
    with np.errstate(over="ignore"):  # 1e6 overflows to inf in both
        want = x.astype(np.float16)
    assert (got.view(np.uint16) == want.view(np.uint16)).all()
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    back = neuronsim.to_float32(bits, "float16")
    ok = ~np.isnan(bits)
    assert (back[ok] == bits[ok].astype(np.float32)).all() and np.isnan(back[~ok]).all()


def test_e5m2_is_the_top_byte_of_float16():
    codes = np.arange(256, dtype=np.uint16).astype(np.uint8)
    want = (codes.astype(np.uint16) << 8).view(np.float16).astype(np.float32)
    got = neuronsim.to_float32(codes, "float8e5")
    ok = ~np.isnan(want)
    assert (got[ok] == want[ok]).all() and np.isnan(got[~ok]).all()
    assert (neuronsim.from_float32(want[ok], "float8e5") == codes[ok]).all()


def test_e4m3fn_hand_worked():
    # sign | 4 exponent bits (bias 7) | 3 mantissa bits
    cases = {1.0: 0x38,     # 0 0111 000
             -2.0: 0xC0,    # 1 1000 000
             0.5: 0x30,     # 0 0110 000
             1.125: 0x39,   # 0 0111 001: 1 + 1/8
             448.0: 0x7E,   # 0 1111 110: 1.75 * 2^8, the largest
             2.0 ** -9: 0x01,  # the smallest subnormal: 1/8 * 2^-6
             1000.0: 0x7E}  # beyond the largest: saturates (e4m3fn has no Inf)
    x = np.array(list(cases), np.float32)
    assert neuronsim.from_float32(x, "float8_e4m3fn").tolist() == list(cases.values())
    codes = np.array(list(cases.values())[:-1], np.uint8)
    assert neuronsim.to_float32(codes, "float8_e4m3fn").tolist() == list(cases)[:-1]
    assert np.isnan(neuronsim.to_float32(np.array([0x7F, 0xFF], np.uint8), "float8_e4m3fn")).all()


def test_integers_saturate_and_round_half_even():
    x = np.array([2.5, 3.5, -2.5, 300.0, -300.0, np.nan], np.float32)
    assert neuronsim.from_float32(x, "int8").tolist() == [2, 4, -2, 127, -128, 0]
    assert neuronsim.from_float32(x, "uint8").tolist() == [2, 4, 0, 255, 0, 0]
    assert neuronsim.to_float32(np.array([-7, 100000], np.int32), "int32").tolist() == [-7.0, 100000.0]


def test_shapes_are_kept_and_other_floats_are_cast():
    x = np.linspace(-1, 1, 24).reshape(2, 3, 4)  # float64: cast to float32 first
    y = neuronsim.from_float32(x, "bfloat16")
    assert y.shape == (2, 3, 4) and y.dtype == np.uint16
    assert neuronsim.to_float32(np.float32(1.5).reshape(()), "float32").shape == ()


def test_container_and_dtype_name_are_checked():
    with pytest.raises(neuronsim.InvalidInput, match=r"^to_float32: bfloat16 values are held as uint16, got an array "
                                                     r"of float32$"):
        neuronsim.to_float32(np.zeros(3, np.float32), "bfloat16")
    with pytest.raises(neuronsim.InvalidInput, match="unknown"):
        neuronsim.from_float32(np.zeros(3), "bfloat17")
    with pytest.raises(neuronsim.InvalidInput, match="packed container"):
        neuronsim.from_float32(np.zeros(3), "float8_e4m3fn_x4")
