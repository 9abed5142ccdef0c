"""nki.isa's selection and search calls -- max8, nc_find_index8, nc_match_replace8, range_select, select_reduce,
tensor_copy_predicated, sequence_bounds, nonzero_with_count (and the refused topk) -- on the simulator against numpy
references written from their public nki.isa pages, in both of NKI's forms (dst first, and the older keyword form
returning a new tile)."""
import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(3838)
FP32_MIN = np.finfo(np.float32).min


def out_like(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype, buffer=nl.shared_hbm)


def test_max8_both_forms():
    x = RNG.permutation(128 * 40).reshape(128, 40).astype(np.float32)  # distinct values

    def kernel(x):
        a, b = out_like((128, 8)), out_like((128, 8))
        t = nl.load(x)
        nl.store(a, nisa.max8(src=t))  # the older form: a new tile
        d = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
        nisa.max8(d, t)  # the current form: dst first
        nl.store(b, d)
        return a, b
    a, b = nki.simulate(kernel, x)
    want = -np.sort(-x, axis=1)[:, :8]
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(b, want)


# The public nc_match_replace8 page's example: data [1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8], vals [3, 8 x 7].
DATA = np.array([[1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8, 0, 0, 0, 0, 0]], np.float32)
VALS = np.array([[3, 8, 8, 8, 8, 8, 8, 8]], np.float32)


def test_find_index8_and_match_replace8_pair_duplicates_as_the_pages_say():
    def kernel(data, vals):
        idx_a, idx_b = out_like((1, 8), nl.uint32), out_like((1, 8), nl.uint32)
        rep = out_like((1, 16))
        d, v = nl.load(data), nl.load(vals)
        nl.store(idx_a, nisa.nc_find_index8(data=d, vals=v))
        i = nl.ndarray((1, 8), nl.uint32, buffer=nl.sbuf)
        r = nl.ndarray((1, 16), nl.float32, buffer=nl.sbuf)
        nisa.nc_match_replace8(dst=r, data=d, vals=v, imm=-1.0, dst_idx=i)
        nl.store(idx_b, i)
        nl.store(rep, r)
        return idx_a, idx_b, rep
    a, b, r = nki.simulate(kernel, DATA, VALS)
    np.testing.assert_array_equal(a, [[2, 4, 5, 6, 7, 8, 9, 10]])  # find_index8: duplicates ascending
    np.testing.assert_array_equal(b, [[2, 10, 9, 8, 7, 6, 5, 4]])  # match_replace8: vals walked 7 down to 0
    want = DATA.copy()
    want[0, [2, 4, 5, 6, 7, 8, 9, 10]] = -1
    np.testing.assert_array_equal(r, want)

    def missing(data, vals):
        out = out_like((1, 8), nl.uint32)
        nl.store(out, nisa.nc_find_index8(data=nl.load(data), vals=nl.load(vals)))
        return out
    vals = VALS.copy()
    vals[0, 0] = 5.0  # not in data: all ones
    assert nki.simulate(missing, DATA, vals)[0, 0] == 0xFFFFFFFF


def range_select_ref(x, b0, b1, op0, op1, start):
    idx = start + np.arange(x.shape[1], dtype=np.float32)[None, :]
    keep = op0(idx, b0) & op1(idx, b1)
    out = np.where(keep, x, FP32_MIN)
    return out, out.max(axis=1, keepdims=True)


def test_range_select_and_a_chained_reduce():
    x = RNG.uniform(-5, 5, (64, 48)).astype(np.float32)
    b0 = RNG.integers(0, 40, (64, 1)).astype(np.float32)
    b1 = b0 + RNG.integers(1, 30, (64, 1)).astype(np.float32)

    def kernel(x, b0, b1):
        o1, o2, r1, r2 = out_like(x.shape), out_like(x.shape), out_like((64, 1)), out_like((64, 1))
        t, lo, hi = nl.load(x), nl.load(b0), nl.load(b1)
        d = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        r = nl.ndarray((64, 1), nl.float32, buffer=nl.sbuf)
        nisa.range_select(dst=d, on_true_tile=t, comp_op0=nl.greater_equal, comp_op1=nl.less, bound0=lo, bound1=hi,
                          reduce_res=r)  # the current form: reduce_cmd defaults to reset_reduce
        nl.store(o1, d)
        nl.store(r1, r)
        # The older form returns its tile; reduce_cmd=reduce continues the registers over columns 48..95.
        r_2 = nl.ndarray((64, 1), nl.float32, buffer=nl.sbuf)
        nl.store(o2, nisa.range_select(on_true_tile=t, comp_op0=nl.greater_equal, comp_op1=nl.less, bound0=lo,
                                       bound1=hi, reduce_cmd=nisa.reduce_cmd.reduce, reduce_res=r_2, range_start=48,
                                       on_false_value=float(FP32_MIN)))
        nl.store(r2, r_2)
        return o1, o2, r1, r2
    o1, o2, r1, r2 = nki.simulate(kernel, x, b0, b1)
    w1, m1 = range_select_ref(x, b0, b1, np.greater_equal, np.less, 0)
    w2, m2 = range_select_ref(x, b0, b1, np.greater_equal, np.less, 48)
    np.testing.assert_array_equal(o1, w1)
    np.testing.assert_array_equal(r1, m1)
    np.testing.assert_array_equal(o2, w2)
    np.testing.assert_array_equal(r2, np.maximum(m1, m2))


def test_select_reduce_with_a_column_on_false_and_reverse_pred():
    on_true = RNG.uniform(0, 100, (128, 64)).astype(np.float32)
    on_false = RNG.uniform(0, 100, (128, 1)).astype(np.float32)
    pred = RNG.integers(0, 2, (128, 64)).astype(np.uint8)

    def kernel(pred, on_true, on_false):
        o1, o2, r = out_like(on_true.shape), out_like(on_true.shape), out_like((128, 1))
        p, t, f = nl.load(pred), nl.load(on_true), nl.load(on_false)
        d = nl.ndarray(on_true.shape, nl.float32, buffer=nl.sbuf)
        rr = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
        nisa.select_reduce(dst=d, predicate=p, on_true=t, on_false=f, reduce_res=rr,
                           reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_op=nl.maximum)
        nl.store(o1, d)
        nl.store(r, rr)
        e = nl.ndarray(on_true.shape, nl.float32, buffer=nl.sbuf)
        nisa.select_reduce(dst=e, predicate=p, on_true=t, on_false=-1.5, reverse_pred=True)
        nl.store(o2, e)
        return o1, o2, r
    o1, o2, r = nki.simulate(kernel, pred, on_true, on_false)
    want = np.where(pred != 0, on_true, on_false)
    np.testing.assert_array_equal(o1, want)
    np.testing.assert_array_equal(r, want.max(axis=1, keepdims=True))
    np.testing.assert_array_equal(o2, np.where(pred == 0, on_true, -1.5))


def test_tensor_copy_predicated_of_a_tile_and_of_a_number():
    src = RNG.uniform(-1, 1, (32, 16)).astype(np.float32)
    dst0 = RNG.uniform(-1, 1, (32, 16)).astype(np.float32)
    pred = RNG.integers(0, 3, (32, 16)).astype(np.uint16)  # 2 counts as true

    def kernel(src, dst0, pred):
        o1, o2 = out_like(src.shape), out_like(src.shape)
        p = nl.load(pred)
        d = nl.load(dst0)
        nisa.tensor_copy_predicated(dst=d, src=nl.load(src), predicate=p)
        nl.store(o1, d)
        e = nl.load(dst0)
        nisa.tensor_copy_predicated(e, 7.0, p, reverse_pred=True)
        nl.store(o2, e)
        return o1, o2
    o1, o2 = nki.simulate(kernel, src, dst0, pred)
    np.testing.assert_array_equal(o1, np.where(pred != 0, src, dst0))
    np.testing.assert_array_equal(o2, np.where(pred == 0, 7.0, dst0))


def test_sequence_bounds_the_pages_example():
    ids = np.array([[0, 1, 1, 2, 2, 2, 0, 3, 3]], np.float32)

    def kernel(ids):
        out = out_like((1, 2, 9))
        nl.store(out, nisa.sequence_bounds(segment_ids=nl.load(ids)))
        return out
    got = nki.simulate(kernel, ids)
    np.testing.assert_array_equal(got, [[[9, 1, 1, 3, 3, 3, 9, 7, 7], [-1, 3, 3, 6, 6, 6, -1, 9, 9]]])


def test_nonzero_with_count_reads_and_writes_every_16th_partition():
    x = np.zeros((32, 8), np.int32)
    x[0] = [0, 1, 1, 0, 0, 1, 0, 0]  # the page's example
    x[16] = [5, 0, 0, 0, 0, 0, 0, 2]
    x[1] = [1] * 8  # partition 1 is not read

    def kernel(x):
        out = out_like((32, 9), nl.int32)
        d = nl.full((32, 9), 7, nl.int32)
        nisa.nonzero_with_count(dst=d, src=nl.load(x), index_offset=16, padding_val=-1)
        nl.store(out, d)
        return out
    got = nki.simulate(kernel, x)
    want = np.full((32, 9), 7)
    want[0] = [17, 18, 21, -1, -1, -1, -1, -1, 3]
    want[16] = [16, 23, -1, -1, -1, -1, -1, -1, 2]
    np.testing.assert_array_equal(got, want)


def test_topk_is_refused_with_its_reason_and_bad_operands_name_the_call():
    def kernel(x):
        v = nl.ndarray((16, 8), nl.bfloat16, buffer=nl.sbuf)
        i = nl.ndarray((16, 8), nl.uint32, buffer=nl.sbuf)
        nisa.topk(v, i, nl.load(x), 42)
        return None
    with pytest.raises(nki.Unsupported, match="nisa.topk is not lowered by neuronsim.s NKI front end: .*snake"):
        nki.to_bir(kernel, nki.tensor((16, 3), nl.bfloat16))

    def short(x):
        out = out_like((16, 8))
        nl.store(out, nisa.max8(src=nl.load(x)))
        return out
    with pytest.raises(nki.KernelError, match=r"nisa.max8: src .* 4 elements per partition \(8 to 16384\)"):
        nki.to_bir(short, np.zeros((16, 4), np.float32))
