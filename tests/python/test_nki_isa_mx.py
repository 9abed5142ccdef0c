"""nki.isa's OCP MX calls -- quantize_mx and nc_matmul_mx -- and the MX dtypes, on the simulator against a numpy
reference written from the public nki.isa.quantize_mx / nc_matmul_mx pages: blocks of 8 partitions x 4 elements,
the block scale X = 2^(floor(log2 max|v|) - (Emax - 1)) (Emax 8 for e4m3fn, 15 for e5m2; an all-zero block 2^-127),
each value v / X rounded to nearest even and saturated, and the matmul's contraction over the partitions and the 4
values of each x4 container."""
import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(3737)
# (exponent bits, mantissa bits, bias, largest finite, Emax) of the OCP element types
E4M3FN, E5M2 = (4, 3, 7, 448.0, 8), (5, 2, 15, 57344.0, 15)


def fp8_table(fmt):
    """code -> value of the positive finite codes of an fp8 format."""
    e_bits, m_bits, bias, top, _ = fmt
    out = {}
    for c in range(128):
        e, m = c >> m_bits, c & ((1 << m_bits) - 1)
        v = m * 2.0 ** (1 - bias - m_bits) if e == 0 else (1 + m / 2 ** m_bits) * 2.0 ** (e - bias)
        if v <= top:
            out[c] = v
    return out


def fp8_encode(q, fmt):
    """The fp8 code of q: round to nearest even on the format's grid, saturating at its largest finite value."""
    e_bits, m_bits, bias, top, _ = fmt
    codes = {v: c for c, v in fp8_table(fmt).items()}
    a = abs(float(q))
    if a == 0:
        return 0x80 if np.signbit(q) else 0
    e = max(int(np.floor(np.log2(a))), 1 - bias)
    step = 2.0 ** (e - m_bits)
    v = float(np.round(a / step)) * step  # numpy rounds half to even
    v = min(v, top)
    return codes[v] | (0x80 if q < 0 else 0)


def fp8_decode(c, fmt):
    v = fp8_table(fmt)[c & 0x7F]
    return -v if c & 0x80 else v


def quantize_ref(x, fmt):
    """(codes [P, F] uint8, scale bytes [P/8, F/4]) of x [P, F] by the nki.isa.quantize_mx page's rule."""
    P, F = x.shape
    emax = fmt[4]
    scale = np.zeros((P // 8, F // 4), np.uint8)
    codes = np.zeros((P, F), np.uint8)
    for g in range(P // 8):
        for j in range(F // 4):
            blk = x[8 * g:8 * g + 8, 4 * j:4 * j + 4].astype(np.float64)
            amax = np.abs(blk).max()
            e = 0 if amax == 0 else max(0, int(np.floor(np.log2(amax))) - (emax - 1) + 127)
            scale[g, j] = e
            for p in range(8):
                for c in range(4):
                    codes[8 * g + p, 4 * j + c] = fp8_encode(blk[p, c] / 2.0 ** (e - 127), fmt)
    return codes, scale


def containers(codes):
    """[P, 4C] fp8 codes -> [P, C] uint32 x4 containers (element r in byte r)."""
    return codes.reshape(codes.shape[0], -1, 4).copy().view(np.uint32).reshape(codes.shape[0], -1)


def dequant(codes, scale, fmt):
    """[P, 4C] codes and [P/8, C] scale bytes -> fp64 values [P, C, 4]."""
    P, F = codes.shape
    v = np.vectorize(lambda c: fp8_decode(int(c), fmt))(codes).reshape(P, F // 4, 4)
    return v * 2.0 ** (np.repeat(scale.astype(np.float64), 8, axis=0)[:, :, None] - 127)


def spread(grid, parts):
    """The [parts, C] scale tile whose partition (i % 4) + 32 * (i // 4) holds grid row i."""
    out = np.zeros((parts, grid.shape[1]), np.uint8)
    for i in range(grid.shape[0]):
        out[(i % 4) + 32 * (i // 4)] = grid[i]
    return out


def gather(tile, parts):
    return np.stack([tile[(i % 4) + 32 * (i // 4)] for i in range(parts // 8)])


def bf16(x):
    """x rounded to bfloat16 (round to nearest even), as float32."""
    b = np.asarray(x, np.float32).view(np.uint32)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32)


def quantize_kernel(mx_dtype):
    def kernel(x):
        P, F = x.shape
        xs = nl.load(x)
        d = nl.ndarray((P, F // 4), mx_dtype, buffer=nl.sbuf)
        s = nl.ndarray((P // 8, F // 4) if P <= 32 else (P, F // 4), nl.uint8, buffer=nl.sbuf)
        nisa.quantize_mx(dst=d, src=xs, dst_scale=s)
        out_d = nl.ndarray(d.shape, d.dtype, buffer=nl.shared_hbm)
        out_s = nl.ndarray(s.shape, s.dtype, buffer=nl.shared_hbm)
        nl.store(out_d, d)
        nl.store(out_s, s)
        return out_d, out_s
    return kernel


def test_quantize_mx_e4m3fn_by_the_documented_scale_rule():
    x = bf16(RNG.uniform(-3, 3, (32, 16)))
    x[8:16, 4:8] = 0.0  # an all-zero block: scale byte 0 (2^-127), data 0
    # A block max 1.96875 * 2^2 = 7.875: X = 2^(2 - 7), 7.875 / X = 252, which rounds to 256 (e4m3fn's step is 16
    # from 128 to 256): the block's largest value never saturates at 448 under the page's scale ("two times
    # larger" than OCP's 2^(2 - 8), under which 504 would round to 512 and saturate).
    x[0, 0] = bf16(1.96875 * 4)
    x[16, 12] = bf16(-1.99 * 8)  # -15.875 / 2^(3 - 7) = -254 -> -256
    d, s = nki.simulate(quantize_kernel(nl.float8_e4m3fn_x4), nki.array(x, nl.bfloat16))
    codes, scale = quantize_ref(x, E4M3FN)
    assert scale[1, 1] == 0 and scale[0, 0] == 2 - 7 + 127
    np.testing.assert_array_equal(s, scale)
    np.testing.assert_array_equal(d, containers(codes))
    assert fp8_decode(int(codes[0, 0]), E4M3FN) == 256.0 and fp8_decode(int(codes[16, 12]), E4M3FN) == -256.0


def test_quantize_mx_e5m2_spreads_scales_over_the_quadrants():
    x = bf16(RNG.normal(0, 100, (64, 8)))
    d, s = nki.simulate(quantize_kernel(nl.float8_e5m2_x4), nki.array(x, nl.bfloat16))
    codes, scale = quantize_ref(x, E5M2)
    assert s.shape == (64, 2)
    np.testing.assert_array_equal(gather(s, 64), scale)  # grid rows 0-3 in partitions 0-3, rows 4-7 in 32-35
    np.testing.assert_array_equal(d, containers(codes))


def test_nc_matmul_mx_of_two_quantized_tiles():
    K, M, N = 64, 16, 24
    a = bf16(RNG.uniform(-1, 1, (K, 4 * M)))
    b = bf16(RNG.uniform(-1, 1, (K, 4 * N)))

    def kernel(a, b):
        qa = nl.ndarray((K, M), nl.float8_e4m3fn_x4, buffer=nl.sbuf)
        sa = nl.ndarray((K, M), nl.uint8, buffer=nl.sbuf)
        qb = nl.ndarray((K, N), nl.float8_e5m2_x4, buffer=nl.sbuf)
        sb = nl.ndarray((K, N), nl.float8_e8m0fnu, buffer=nl.sbuf)
        nisa.quantize_mx(qa, nl.load(a), sa)
        nisa.quantize_mx(dst=qb, src=nl.load(b), dst_scale=sb)
        acc = nl.ndarray((M, N), nl.float32, buffer=nl.psum)
        nisa.nc_matmul_mx(dst=acc, stationary=qa, moving=qb, stationary_scale=sa, moving_scale=sb)
        out = nl.ndarray((M, N), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, acc)
        return out
    got = nki.simulate(kernel, nki.array(a, nl.bfloat16), nki.array(b, nl.bfloat16))
    ca, sa = quantize_ref(a, E4M3FN)
    cb, sb = quantize_ref(b, E5M2)
    va, vb = dequant(ca, sa, E4M3FN), dequant(cb, sb, E5M2)  # [K, M, 4], [K, N, 4]
    exact = np.einsum("kmr,knr->mn", va, vb)
    bound = 4 * K * 2.0 ** -24 * np.einsum("kmr,knr->mn", np.abs(va), np.abs(vb))  # fp32 sums of 4K products
    assert np.all(np.abs(got - exact) <= bound)


def test_nc_matmul_mx_of_host_fp4_data_accumulates_and_tiles_rows():
    K, M, N = 32, 8, 16
    nib_a = RNG.integers(0, 16, (K, M, 4))
    nib_b = RNG.integers(0, 16, (K, N, 4))
    pack = lambda n: (n[..., 0] | n[..., 1] << 4 | n[..., 2] << 8 | n[..., 3] << 12).astype(np.uint16)
    grid = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
    value = lambda n: np.where(n & 8, -1.0, 1.0) * grid[n & 7]
    sa = RNG.integers(126, 129, (K // 8, M)).astype(np.uint8)  # products k / 4 * 2^(-2..2), k <= 144:
    sb = RNG.integers(126, 129, (K // 8, N)).astype(np.uint8)  # multiples of 2^-4 below 2^15, exact in fp32

    def kernel(a, b, sa, sb):
        acc = nl.ndarray((M, N), nl.float32, buffer=nl.psum)
        qa, qb, ta, tb = nl.load(a), nl.load(b), nl.load(sa), nl.load(sb)
        nisa.nc_matmul_mx(acc, qa, qb, ta, tb, tile_position=(0, 0), tile_size=(32, 128))
        nisa.nc_matmul_mx(acc, qa, qb, ta, tb, accumulate=True)  # the same product again: twice it
        out = nl.ndarray((M, N), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, acc)
        return out
    got = nki.simulate(kernel, nki.array(pack(nib_a), nl.float4_e2m1fn_x4),
                       nki.array(pack(nib_b), nl.float4_e2m1fn_x4), nki.array(sa, nl.float8_e8m0fnu), sb)
    va = value(nib_a) * 2.0 ** (np.repeat(sa.astype(np.float64), 8, axis=0)[:, :, None] - 127)
    vb = value(nib_b) * 2.0 ** (np.repeat(sb.astype(np.float64), 8, axis=0)[:, :, None] - 127)
    # every product is a power of two times a small integer: the fp32 sums are exact
    np.testing.assert_array_equal(got, 2 * np.einsum("kmr,knr->mn", va, vb))


def scattered_scales(scale):
    """A contiguous [K/8, C] scale tensor in HBM spread over the partition quadrants of a [K, C] SBUF tile, 4 rows
    into each 32 (the nc_matmul_mx layout), by access-pattern DMAs, as the mxfp-matmul tutorial loads its scales."""
    rows, cols = scale.shape
    tile = nl.ndarray((8 * rows, cols), dtype=scale.dtype, buffer=nl.sbuf)
    nisa.memset(dst=tile, value=0)
    for q in range(rows // 4):
        nisa.dma_copy(src=scale.ap(pattern=[[cols, 4], [1, cols]], offset=4 * q * cols),
                      dst=tile.ap(pattern=[[cols, 4], [1, cols]], offset=32 * q * cols))
    return tile


def mx_of_host_containers(st, st_scale, mv, mv_scale):
    """Host-quantized fp8 in uint32 containers [K, C] (the tutorial's offline MX matmul): viewed as
    float8_e5m2_x4 by .ap(dtype=), loaded, and multiplied with the scattered scales."""
    K, M = st.shape
    N = mv.shape[1]
    st_x4 = st.ap(dtype=nl.float8_e5m2_x4, pattern=[[M, K], [1, M]], offset=0)
    mv_x4 = mv.ap(dtype=nl.float8_e5m2_x4, pattern=[[N, K], [1, N]], offset=0)
    assert st_x4.shape == (K, M) and mv_x4.shape == (K, N)
    st_sb = nl.ndarray(st_x4.shape, dtype=nl.float8_e5m2_x4, buffer=nl.sbuf)
    mv_sb = nl.ndarray(mv_x4.shape, dtype=nl.float8_e5m2_x4, buffer=nl.sbuf)
    nisa.dma_copy(src=st_x4, dst=st_sb)
    nisa.dma_copy(src=mv_x4, dst=mv_sb)
    acc = nl.ndarray((M, N), nl.float32, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=acc, stationary=st_sb, moving=mv_sb, stationary_scale=scattered_scales(st_scale),
                      moving_scale=scattered_scales(mv_scale))
    out = nl.ndarray((M, N), nl.float32, buffer=nl.shared_hbm)
    nl.store(out, acc)
    return out


def test_nc_matmul_mx_of_host_containers_and_scattered_scales():
    K, M, N = 64, 8, 16  # two quadrants of scales: rows 0-3 at partitions 0-3, rows 4-7 at 32-35
    # e5m2 codes of exponent 14..16 (0.5 to 3.5) and scales 2^-1..2^1: every product a multiple of 2^-8 below 2^6,
    # the fp32 sums of 4K of them exact
    codes = lambda n: (RNG.integers(14, 17, n) << 2 | RNG.integers(0, 4, n) | RNG.integers(0, 2, n) << 7)
    ca = codes((K, 4 * M)).astype(np.uint8)
    cb = codes((K, 4 * N)).astype(np.uint8)
    sa = RNG.integers(126, 129, (K // 8, M)).astype(np.uint8)
    sb = RNG.integers(126, 129, (K // 8, N)).astype(np.uint8)
    got = nki.simulate(mx_of_host_containers, containers(ca), sa, containers(cb), sb)
    va, vb = dequant(ca, sa, E5M2), dequant(cb, sb, E5M2)
    np.testing.assert_array_equal(got, np.einsum("kmr,knr->mn", va, vb))


def test_mx_calls_refuse_what_the_pages_do_not_allow():
    def fp32_source(x):
        d = nl.ndarray((32, 4), nl.float8_e4m3fn_x4, buffer=nl.sbuf)
        s = nl.ndarray((4, 4), nl.uint8, buffer=nl.sbuf)
        nisa.quantize_mx(dst=d, src=nl.load(x), dst_scale=s)
        return None
    with pytest.raises(nki.KernelError, match="float16 or bfloat16"):
        nki.to_bir(fp32_source, np.zeros((32, 16), np.float32))

    def wrong_scale(x):
        d = nl.ndarray((64, 4), nl.float8_e4m3fn_x4, buffer=nl.sbuf)
        s = nl.ndarray((4, 4), nl.uint8, buffer=nl.sbuf)
        nisa.quantize_mx(dst=d, src=nl.load(x), dst_scale=s)
        return None
    with pytest.raises(nki.KernelError, match=r"dst_scale s is \[4, 4\].*\[8, 4\] or \[64, 4\]"):
        nki.to_bir(wrong_scale, nki.tensor((64, 16), nl.bfloat16))
    with pytest.raises(nki.KernelError, match="raw bits"):
        nki.array(np.zeros((2, 2), np.float32), nl.float8_e4m3fn_x4)
