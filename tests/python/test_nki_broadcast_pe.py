"""A partition broadcast (`row.broadcast_to((P, F))` of a [1, F] tile) runs on PE as NKI lowers it: a matmul of a
row of ones into PSUM (bcast_pe.py; public NKI docs, Trainium/Inferentia2 Architecture Guide, TensorE "Alternative
Use Case"), whose DVE reader then streams at N cycles, one operand in PSUM (reference neuron-arch.md, ISA226
tensor_tensor). Where the result cannot stay in PSUM it keeps its DMA. Values against numpy, sanitized; the
instruction counts and DVE cycles by hand."""
import numpy as np

from neuronsim import nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl


def _run(kernel, *arrays):
    r = nki.benchmark(kernel, *arrays, sanitize=True)
    assert r.findings == []
    e = r.stats["engines"]
    return r, e["PE"]["instructions"], e["DVE"]


def _small_ints(shape, seed, lo=-4, hi=5):
    """Small integers: every product is exact in fp32 and bf16, so the values compare exactly."""
    return np.random.default_rng(seed).integers(lo, hi, size=shape).astype(np.float32)


@nki.jit
def scale_rows(x, row):
    """The fused Mamba tutorial's step 3 idiom: one [1, F] row times every partition of a tile."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    r = nl.load(row)
    nl.store(out, nisa.tensor_tensor(t, r.broadcast_to(t.shape), op=nl.multiply))
    return out


def test_broadcast_is_one_matmul_and_its_reader_streams_at_n_cycles():
    x, row = _small_ints((128, 512), 1), _small_ints((1, 512), 2)
    r, pe, dve = _run(scale_rows, x, row)
    np.testing.assert_array_equal(r.outputs["out"], x * row)
    assert pe == 1
    # DVE: the tensor_tensor at N = 512 cycles (one operand in PSUM; 2N = 1024 with both in SBUF) and the memset of
    # the [1, 128] ones row at N = 128 (> MIN_II 64).
    assert dve["instructions"] == 2 and dve["cycles"] == 512 + 128
    # no DMA besides the two loads and the store
    assert r.stats["dma"]["transfers"] == 3


def test_bf16_broadcast_keeps_its_values():
    x, row = _small_ints((128, 256), 3), _small_ints((1, 256), 4)
    xa, ra = nki.array(x, nl.bfloat16), nki.array(row, nl.bfloat16)
    r, pe, _ = _run(scale_rows, xa, ra)
    bits = np.asarray(r.outputs["out"]).astype(np.uint32)  # a bf16 output's bit patterns (no ml_dtypes here)
    np.testing.assert_array_equal((bits << 16).view(np.float32), x * row)
    assert pe == 1


def test_a_row_wider_than_a_bank_is_one_matmul_per_512_columns():
    x, row = _small_ints((64, 1280), 5), _small_ints((1, 1280), 6)
    r, pe, dve = _run(scale_rows, x, row)
    np.testing.assert_array_equal(r.outputs["out"], x * row)
    assert pe == 3  # 512 + 512 + 256 columns, each into its PSUM bank
    assert dve["cycles"] == 1280 + 128


def test_a_row_longer_than_four_banks_reaches_its_reader_piece_by_piece():
    """2,560 fp32 columns are 5 PSUM banks, more than one broadcast may take (4): the reader is cut at 2,048
    columns, each piece's matmuls just before it. Before, the broadcast was a DMACopy and its reader ran at 2N."""
    x, row = _small_ints((128, 2560), 14), _small_ints((1, 2560), 15)
    r, pe, dve = _run(scale_rows, x, row)
    np.testing.assert_array_equal(r.outputs["out"], x * row)
    assert pe == 5  # 512 columns a matmul: 4 for the first piece, 1 for the second
    # DVE: the tensor_tensor in two pieces at N (2,048 + 512 cycles, one operand in PSUM; 2N = 5,120 from SBUF),
    # and the ones row at N = 128
    assert dve["instructions"] == 3 and dve["cycles"] == 2048 + 512 + 128
    assert r.stats["dma"]["transfers"] == 3  # the two loads and the store: no broadcast DMA


def test_a_long_row_with_a_scan_reader_keeps_its_dma():
    """A scan carries a value from column to column: it is not cut, so a row too long for 4 banks keeps its DMA."""
    @nki.jit
    def scan_rows(x, row):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        r = nl.load(row)
        nl.store(out, nisa.tensor_tensor_scan(t, r.broadcast_to(t.shape), initial=0, op0=np.multiply, op1=np.add))
        return out

    x, row = _small_ints((128, 2560), 16, 0, 2), _small_ints((1, 2560), 17, 0, 2)
    r, pe, _ = _run(scan_rows, x, row)
    want = np.zeros_like(x)
    acc = np.zeros((128,), np.float32)
    for j in range(x.shape[1]):
        acc = x[:, j] * acc + row[0, j]
        want[:, j] = acc
    np.testing.assert_array_equal(r.outputs["out"], want)
    assert pe == 0


def test_one_broadcast_per_reader_in_a_state_loop():
    """Per trip of a loop, as the tutorial's state loop: the broadcast and its reader in one body."""
    @nki.jit
    def weighted_sum(x, rows):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        acc = nl.zeros(x.shape, dtype=nl.float32)
        for s in nl.affine_range(rows.shape[0]):
            r = nl.load(rows[s:s + 1, :])
            acc += nisa.tensor_tensor(t, r.broadcast_to(t.shape), op=nl.multiply)
        nl.store(out, acc)
        return out

    x, rows = _small_ints((128, 256), 7), _small_ints((4, 256), 8)
    r, pe, _ = _run(weighted_sum, x, rows)
    np.testing.assert_array_equal(r.outputs["out"], x * rows.sum(axis=0, keepdims=True))
    assert pe == 4


@nki.jit
def gpsimd_reader(x, row):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    r = nl.load(row)
    nl.store(out, nisa.tensor_tensor(t, r.broadcast_to(t.shape), op=nl.add, engine=nisa.gpsimd_engine))
    return out


@nki.jit
def two_broadcasts(a, b):
    """Both operands of one tensor_tensor broadcast: at most one may be read from PSUM."""
    out = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.shared_hbm)
    ra, rb = nl.load(a), nl.load(b)
    nl.store(out, nisa.tensor_tensor(ra.broadcast_to((128, a.shape[1])), rb.broadcast_to((128, b.shape[1])),
                                     op=nl.subtract))
    return out


@nki.jit
def broadcast_before_loop(x, row):
    """A broadcast made once and read in a loop: it would hold a PSUM bank across the loop; its DMA stays."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    r = nl.load(row).broadcast_to((128, x.shape[1]))
    for i in nl.affine_range(x.shape[0] // 128):
        t = nl.load(x[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], nisa.tensor_tensor(t, r, op=nl.multiply))
    return out


def test_broadcasts_that_cannot_stay_in_psum_keep_their_dma():
    x, row = _small_ints((128, 64), 9), _small_ints((1, 64), 10)
    r, pe, _ = _run(gpsimd_reader, x, row)  # GpSimd cannot read PSUM
    np.testing.assert_array_equal(r.outputs["out"], x + row)
    assert pe == 0
    a, b = _small_ints((1, 64), 11), _small_ints((1, 64), 12)
    r, pe, dve = _run(two_broadcasts, a, b)
    np.testing.assert_array_equal(r.outputs["out"], np.broadcast_to(a - b, (128, 64)))
    assert pe == 1  # the first on PE, the second by DMA: the reader takes one PSUM operand
    assert dve["cycles"] == 64 + 128  # N = 64 with one operand in PSUM, and the ones row
    x2 = _small_ints((256, 64), 13)
    r, pe, _ = _run(broadcast_before_loop, x2, row)
    np.testing.assert_array_equal(r.outputs["out"], x2 * row)
    assert pe == 0
