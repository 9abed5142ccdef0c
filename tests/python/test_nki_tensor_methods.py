"""Tensor methods and view calls beyond the access-pattern primitives, on the simulator against numpy:
NkiTensor.rearrange (einops-style: split, reorder, merge), nl.expand_dims and the legacy nki.tensor's
expand_dims / astype / assert_shape, and the copies at a run-time offset nisa.tensor_copy_dynamic_src / _dst in
both their legacy (returning, keyword) and current (dst-first) forms, and the legacy nl.atomic_rmw. Public NKI docs:
the NkiTensor page, the nki.language.expand_dims page, the legacy nki.tensor and nki.language.atomic_rmw pages, the
SDK 2.20-2.31 nki.isa.tensor_copy_dynamic_* pages."""
import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(3777)


def split_and_reorder(x, y):
    """x [128, 24] in SBUF: its 24 columns split (h=4, w=6) and read as [128, w, h]; y [6, 4, 8] in HBM: its first
    two dims merged and moved last, read as [8, 24] (column j = (a, b) row-major)."""
    o1 = nl.ndarray((128, 6, 4), nl.float32, buffer=nl.shared_hbm)
    o2 = nl.ndarray((8, 24), nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(o1, nl.copy(t.rearrange(("b", ("h", "w")), ("b", "w", "h"), {"h": 4})))
    nl.store(o2, nl.load(y.rearrange(("a", "b", "c"), ("c", ("a", "b")))))
    return o1, o2


def test_rearrange_splits_reorders_and_merges():
    """NkiTensor.rearrange on an SBUF tile and on an HBM tensor."""
    x = RNG.uniform(-1, 1, (128, 24)).astype(np.float32)
    y = RNG.uniform(-1, 1, (6, 4, 8)).astype(np.float32)
    o1, o2 = nki.simulate(split_and_reorder, x, y)
    np.testing.assert_array_equal(o1, x.reshape(128, 4, 6).transpose(0, 2, 1))
    np.testing.assert_array_equal(o2, y.transpose(2, 0, 1).reshape(8, 24))


def rearrange_with(pattern_src, pattern_dst, sizes):
    def kernel(x):
        t = nl.load(x)
        return t.rearrange(pattern_src, pattern_dst, sizes)
    return kernel


@pytest.mark.parametrize("src, dst, sizes, message", [
    (("b", ("h", "w")), ("b", "h"), {"h": 4}, "each name appears once"),
    (("b", ("h", "w")), ("b", "w", "h"), {}, "sizes of ('h', 'w') are not known"),
    (("b", ("h", "w")), ("b", "w", "h"), {"h": 5}, "does not split a dim of 24"),
    (("b", "c"), ("c", "b"), {}, "dim 0 stays first"),
    (("b",), ("b",), {}, "names 1 dims"),
])
def test_rearrange_refuses_what_does_not_fit_naming_the_patterns(src, dst, sizes, message):
    with pytest.raises(nki.KernelError) as e:
        nki.simulate(rearrange_with(src, dst, sizes), np.zeros((128, 24), np.float32))
    assert message in str(e.value) and "rearrange" in str(e.value)


def expand_and_cast(x):
    """x [16, 8] float32: nl.expand_dims to [16, 8, 1] then broadcast to [16, 8, 3]; the legacy tensor methods:
    expand_dims(1) to [16, 1, 8], assert_shape, astype(bfloat16) (a rounding copy) read back as float32."""
    o1 = nl.ndarray((16, 8, 3), nl.float32, buffer=nl.shared_hbm)
    o2 = nl.ndarray((16, 1, 8), nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    e = nl.expand_dims(t, 2)
    nl.store(o1, nl.copy(e.broadcast(2, 3)))
    f = t.expand_dims(1).assert_shape((16, 1, 8))
    h = f.astype(nl.bfloat16)
    assert h.dtype == nl.bfloat16
    nl.store(o2, nl.copy(h, dtype=nl.float32))
    return o1, o2


def test_expand_dims_assert_shape_and_astype():
    """nl.expand_dims; the legacy tensor.expand_dims, tensor.assert_shape and tensor.astype."""
    x = RNG.uniform(-4, 4, (16, 8)).astype(np.float32)
    o1, o2 = nki.simulate(expand_and_cast, x)
    np.testing.assert_array_equal(o1, np.repeat(x[:, :, None], 3, axis=2))
    bf16 = (x.view(np.uint32) + 0x7FFF + ((x.view(np.uint32) >> 16) & 1)) & 0xFFFF0000  # round to nearest even
    np.testing.assert_array_equal(o2, bf16.view(np.float32)[:, None, :])


def test_expand_dims_refuses_the_partition_dim_and_assert_shape_a_wrong_shape():
    def before_partitions(x):
        return nl.expand_dims(nl.load(x), 0)

    def wrong_shape(x):
        return nl.load(x).assert_shape((16, 9))
    for kernel, message in ((before_partitions, "partition dim"), (wrong_shape, "has shape [16, 8], not [16, 9]")):
        with pytest.raises(nki.KernelError) as e:
            nki.simulate(kernel, np.zeros((16, 8), np.float32))
        assert message in str(e.value)


def dynamic_copies(legacy):
    """A kernel of a [8, 16]: columns off..off+3 (off a [1, 1] SBUF tile read at run time) copied out
    (tensor_copy_dynamic_src), then written back at columns off..off+3 of a zeroed [8, 16] tile
    (tensor_copy_dynamic_dst)."""
    def kernel(a, off):
        return copies(a, off, legacy)
    return kernel


def copies(a, off, legacy):
    o1 = nl.ndarray((8, 4), nl.float32, buffer=nl.shared_hbm)
    o2 = nl.ndarray((8, 16), nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    k = nl.load(off)
    src = t.ap([[16, 8], [1, 4]], scalar_offset=k, indirect_dim=1)
    w = nl.ndarray((8, 16), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=w, value=0.0)
    if legacy:
        u = nisa.tensor_copy_dynamic_src(src)
        nisa.tensor_copy_dynamic_dst(dst=w.ap([[16, 8], [1, 4]], scalar_offset=k, indirect_dim=1), src=u)
    else:
        u = nl.ndarray((8, 4), nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy_dynamic_src(u, src, nisa.engine.vector)
        nisa.tensor_copy_dynamic_dst(w.ap([[16, 8], [1, 4]], scalar_offset=k, indirect_dim=1), u)
    nl.store(o1, u)
    nl.store(o2, w)
    return o1, o2


@pytest.mark.parametrize("legacy", [True, False], ids=["legacy", "dst-first"])
def test_tensor_copy_dynamic_src_and_dst_follow_the_run_time_offset(legacy):
    """nisa.tensor_copy_dynamic_src and nisa.tensor_copy_dynamic_dst, legacy and current forms."""
    a = RNG.uniform(-1, 1, (8, 16)).astype(np.float32)
    for s in (0, 5, 12):
        o1, o2 = nki.simulate(dynamic_copies(legacy), a, np.array([[s]], np.int32))
        np.testing.assert_array_equal(o1, a[:, s:s + 4])
        want = np.zeros_like(a)
        want[:, s:s + 4] = a[:, s:s + 4]
        np.testing.assert_array_equal(o2, want)


def test_tensor_copy_dynamic_src_refuses_a_static_source():
    def static(a):
        return nisa.tensor_copy_dynamic_src(nl.load(a))
    with pytest.raises(nki.KernelError) as e:
        nki.simulate(static, np.zeros((8, 16), np.float32))
    assert "run-time offset" in str(e.value)


def scatter_add(table, idx, val):
    """table [64, 32] copied to the output, then rows idx[p] (idx [16, 1], repeats allowed) += val[p] by one
    nl.atomic_rmw through a gather view (.ap(vector_offset=)); rows 40..47 += 0.5 through a static slice."""
    out = nl.ndarray(table.shape, nl.float32, buffer=nl.shared_hbm)
    nl.store(out, nl.load(table))
    i = nl.load(idx)
    nl.atomic_rmw(out.ap([[32, 16], [1, 32]], vector_offset=i, indirect_dim=0), value=nl.load(val), op=np.add)
    nl.atomic_rmw(out[40:48, :], value=0.5, op=np.add)
    return out


def test_atomic_rmw_adds_every_update_of_a_repeated_row():
    """nl.atomic_rmw: two partitions that name one row both land (numpy's unbuffered np.add.at), as the atomic
    operation of the page does; a static dst is a load / add / store."""
    table = RNG.uniform(-1, 1, (64, 32)).astype(np.float32)
    idx = np.array([3, 7, 3, 0, 63, 7, 7, 1, 2, 9, 10, 11, 12, 13, 14, 15], np.int32)[:, None]
    val = RNG.uniform(-1, 1, (16, 32)).astype(np.float32)
    want = table.astype(np.float64)
    np.add.at(want, idx[:, 0], val)
    want[40:48] += 0.5
    # the repeated rows' updates are summed in fp32 on PE before the add: a few fp32 roundings
    np.testing.assert_allclose(nki.simulate(scatter_add, table, idx, val), want, rtol=0, atol=4 * 2.0 ** -23 * 4)


def test_atomic_rmw_refuses_an_op_the_page_does_not_document():
    def multiply(table):
        nl.atomic_rmw(table[0:8, :], value=2.0, op=np.multiply)
        return table
    with pytest.raises(nki.Unsupported) as e:
        nki.simulate(multiply, np.zeros((8, 4), np.float32))
    assert "np.add only" in str(e.value)
