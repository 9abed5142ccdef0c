"""NKI's access-pattern API (public NKI docs, deep dive "NKI Access Patterns"; NkiTensor.ap / view / reshape) on the
simulator against numpy: static patterns on HBM and SBUF, offsets composed with a view's start, dtype
reinterpretation, reshape of a slice, run-time offsets (a [1, 1] tile, a register) and per-partition gathers and
scatters; refusals name the kernel's line."""
import inspect

import numpy as np
import pytest

import neuronsim
import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(3737)


def line_of(fn, text):
    """The file line of the first line of fn that contains text."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, t in enumerate(lines) if text in t)


def bir_ops(doc):
    out = []

    def walk(insts):
        for i in insts:
            if "blocks" in i and i["opcode"] in ("Loop", "DynamicForLoop", "DoWhile"):
                out.append((i["opcode"], i))
                for b in i["blocks"]:
                    walk(b["instructions"])
            else:
                out.append((i["opcode"], i))
    for f in doc["functions"]:
        for b in f["blocks"]:
            walk(b["instructions"])
    return out


# ---------------------------------------------------------------------------------------------------- static
def hbm_rows(a):
    """a [8, 16]: rows 1, 3, 5, 7, columns 3..8 -- pattern [[32, 4], [1, 6]] from element 16 + 3."""
    out = nl.ndarray((4, 6), nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((4, 6), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a.ap(pattern=[[32, 4], [1, 6]], offset=19))
    nisa.dma_copy(dst=out, src=t)
    return out


def test_an_hbm_pattern_walks_the_flattened_tensor():
    """NkiTensor.ap on an HBM tensor."""
    a = RNG.uniform(-1, 1, (8, 16)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(hbm_rows, a), a[1::2, 3:9])


def sbuf_window(a):
    """a [16, 32] in SBUF: partitions 4..11, every other column from 1 (pattern [[32, 8], [2, 10]] at 4 * 32 + 1);
    then .ap on a slice t[2:10, :]: its offset adds to the slice's start (partitions 2..9, columns 5..8)."""
    out1 = nl.ndarray((8, 10), nl.float32, buffer=nl.shared_hbm)
    out2 = nl.ndarray((8, 4), nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out1, nl.copy(t.ap([[32, 8], [2, 10]], offset=4 * 32 + 1)))
    nl.store(out2, nl.copy(t[2:10, :].ap([[32, 8], [1, 4]], offset=5)))
    return out1, out2


def test_an_sbuf_pattern_steps_partitions_first_and_composes_with_the_view_start():
    a = RNG.uniform(-1, 1, (16, 32)).astype(np.float32)
    o1, o2 = nki.simulate(sbuf_window, a)
    np.testing.assert_array_equal(o1, a[4:12, 1:21:2])
    np.testing.assert_array_equal(o2, a[2:10, 5:9])


def reinterpret(a):
    """a float32 [4, 8]: its bytes as uint16 [4, 16] (view) and as int32 through .ap(dtype=) on HBM and SBUF."""
    o16 = nl.ndarray((4, 16), nl.uint16, buffer=nl.shared_hbm)
    o32 = nl.ndarray((4, 8), nl.int32, buffer=nl.shared_hbm)
    oh = nl.ndarray((4, 16), nl.uint16, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = nl.ndarray((4, 16), nl.uint16, buffer=nl.sbuf)
    nisa.tensor_copy(dst=u, src=t.view(nl.uint16))
    nl.store(o16, u)
    i = nl.ndarray((4, 8), nl.int32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=i, src=t.ap([[8, 4], [1, 8]], dtype=nl.int32))
    assert t.reinterpret_cast(nl.int32).get_pattern() == [[8, 4], [1, 8]]
    nl.store(o32, i)
    h = nl.ndarray((4, 16), nl.uint16, buffer=nl.sbuf)
    nisa.dma_copy(dst=h, src=a.ap([[16, 4], [1, 16]], dtype=nl.uint16))
    nl.store(oh, h)
    return o16, o32, oh


def test_a_dtype_view_reinterprets_the_bytes():
    """NkiTensor.view (nki.tensor.view in the legacy API), .ap(dtype=) and reinterpret_cast, view's other name."""
    a = RNG.uniform(-1, 1, (4, 8)).astype(np.float32)
    o16, o32, oh = nki.simulate(reinterpret, a)
    np.testing.assert_array_equal(o16, a.view(np.uint16))
    np.testing.assert_array_equal(o32, a.view(np.int32))
    np.testing.assert_array_equal(oh, a.view(np.uint16))


def bytes_as_floats(b):
    """b uint8 [4, 16] -> float32 [4, 4]: a contraction (the last dim divides by 4)."""
    out = nl.ndarray((4, 4), nl.float32, buffer=nl.shared_hbm)
    t = nl.load(b)
    nl.store(out, nl.copy(t.view(nl.float32)))
    return out


def test_a_dtype_view_of_a_smaller_dtype_contracts_the_last_dim():
    f = RNG.uniform(-1, 1, (4, 4)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(bytes_as_floats, f.view(np.uint8)), f)


def reshape_slice(a):
    """a [8, 32]: rows 2..5 as [2, 64] (a contiguous region reinterpreted, NkiTensor.reshape)."""
    out = nl.ndarray((2, 64), nl.float32, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a[2:6].reshape((2, 64))))
    return out


def reshape_columns(a):
    out = nl.ndarray((4, 16), nl.float32, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a[:, 0:8].reshape((4, 16))))
    return out


def test_reshape_of_a_sliced_hbm_tensor_keeps_its_elements_and_refuses_a_strided_slice():
    a = RNG.uniform(-1, 1, (8, 32)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(reshape_slice, a), a[2:6].reshape(2, 64))
    with pytest.raises(nki.KernelError, match="not contiguous"):
        nki.simulate(reshape_columns, a)


def past_the_end(a):
    t = nl.ndarray((9, 16), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a.ap([[16, 9], [1, 16]]))
    return a


def every_other_partition(a):
    t = nl.load(a)
    return nl.copy(t.ap([[32, 4], [1, 16]]))


def test_a_pattern_out_of_bounds_is_refused_naming_the_line():
    a = np.zeros((8, 16), np.float32)
    with pytest.raises(nki.KernelError, match="out of range") as e:
        nki.simulate(past_the_end, a)
    assert f":{line_of(past_the_end, 'a.ap(')}:" in str(e.value)
    with pytest.raises(nki.KernelError, match="partitions are accessed contiguously"):
        nki.simulate(every_other_partition, a)


# ---------------------------------------------------------------------------------------------------- run time
def window_at_tile_offset(a, start):
    """a [8, 16]; start [1, 1] int32: rows start..start+3 (scalar_offset, a [1, 1] SBUF tile, indirect_dim 0)."""
    out = nl.ndarray((4, 16), nl.float32, buffer=nl.shared_hbm)
    s = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=start)
    t = nl.ndarray((4, 16), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a.ap([[16, 4], [1, 16]], scalar_offset=s, indirect_dim=0))
    nisa.dma_copy(dst=out, src=t)
    return out


def test_a_tile_scalar_offset_is_read_when_the_dma_runs():
    a = RNG.uniform(-1, 1, (8, 16)).astype(np.float32)
    for s in (0, 3, 4):
        np.testing.assert_array_equal(nki.simulate(window_at_tile_offset, a, np.array([[s]], np.int32)), a[s:s + 4])
    ops = bir_ops(nki.to_bir(window_at_tile_offset, a, np.array([[1]], np.int32)))
    load = [i for op, i in ops if op == "Load" and i["ins"][0].get("memsetref", "").startswith("a")][0]
    assert "IntRuntimeValueKind" in str(load["ins"][0]["addrs"])
    assert [op for op, _ in ops].count("TensorLoad") == 1


def test_a_run_time_offset_out_of_bounds_stops_the_run_naming_the_line():
    a = np.zeros((8, 16), np.float32)
    with pytest.raises(neuronsim.SimulationError) as e:
        nki.simulate(window_at_tile_offset, a, np.array([[5]], np.int32))
    assert "out of bounds" in str(e.value)
    assert f"{line_of(window_at_tile_offset, 'a.ap(')}" in str(e.value)


def columns_at_register(a):
    """A register (set to 3) offsets the columns of an SBUF copy on VectorE (indirect_dim 1): columns 3..6."""
    out = nl.ndarray((8, 4), nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    r = nisa.register_alloc(3)
    u = nl.ndarray((8, 4), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=u, src=t.ap([[16, 8], [1, 4]], scalar_offset=r, indirect_dim=1))
    nl.store(out, u)
    return out


def test_a_register_scalar_offset_on_a_compute_instruction_reads_its_engines_copy():
    a = RNG.uniform(-1, 1, (8, 16)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(columns_at_register, a), a[:, 3:7])
    ops = bir_ops(nki.to_bir(columns_at_register, a))
    # the register lives on VectorE, where the TensorCopy that reads it runs
    assert [i["engine"] for op, i in ops if op == "RegisterMove"] == ["DVE"]


def gather_rows(data, idx, skip=False):
    """data [64, 32] in HBM, idx [16, 1] int32: row p of the result is data[idx[p]] (vector_offset, indirect_dim 0);
    rows whose index is skipped keep the memset 0."""
    out = nl.ndarray((16, 32), nl.float32, buffer=nl.shared_hbm)
    i = nl.ndarray((16, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=i, src=idx)
    t = nl.ndarray((16, 32), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=t, value=0.0)
    nisa.dma_copy(dst=t, src=data.ap([[32, 16], [1, 32]], vector_offset=i, indirect_dim=0),
                  oob_mode="skip" if skip else None)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_a_vector_offset_gathers_one_row_per_partition():
    data = RNG.uniform(-1, 1, (64, 32)).astype(np.float32)
    idx = RNG.integers(0, 64, (16, 1)).astype(np.int32)
    np.testing.assert_array_equal(nki.simulate(gather_rows, data, idx), data[idx[:, 0]])
    assert "IndirectLoad" in [op for op, _ in bir_ops(nki.to_bir(gather_rows, data, idx))]


def test_a_gather_skips_index_minus_one_and_with_oob_skip_an_index_past_the_tensor():
    data = RNG.uniform(-1, 1, (64, 32)).astype(np.float32)
    idx = np.arange(16, dtype=np.int32).reshape(16, 1)
    idx[2, 0], idx[5, 0] = -1, 64
    want = data[np.clip(idx[:, 0], 0, 63)].copy()
    want[[2, 5]] = 0.0
    np.testing.assert_array_equal(nki.simulate(gather_rows, data, idx, skip=True), want)
    with pytest.raises(neuronsim.SimulationError) as e:
        nki.simulate(gather_rows, data, idx)
    assert f"{line_of(gather_rows, 'vector_offset=i')}" in str(e.value)


def scatter_rows(vals, idx, base):
    """base [32, 8] copied to the result, then rows idx[p] of it receive vals[p] (vector_offset on the destination)."""
    out = nl.ndarray((32, 8), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=base)
    i = nl.ndarray((4, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=i, src=idx)
    v = nl.load(vals)
    nisa.dma_copy(dst=out.ap([[8, 4], [1, 8]], vector_offset=i, indirect_dim=0), src=v)
    return out


def test_a_vector_offset_on_the_destination_scatters_rows():
    vals = RNG.uniform(-1, 1, (4, 8)).astype(np.float32)
    base = RNG.uniform(-1, 1, (32, 8)).astype(np.float32)
    idx = np.array([[7], [0], [31], [12]], np.int32)
    want = base.copy()
    want[idx[:, 0]] = vals
    np.testing.assert_array_equal(nki.simulate(scatter_rows, vals, idx, base), want)


def indirect_twice(data, idx):
    i = nl.load(idx)
    v = data.ap([[32, 16], [1, 32]], vector_offset=i, indirect_dim=0)
    assert v.is_indirect() and not data.is_indirect()
    return v[0:4, :]


def test_an_indirect_view_is_not_sliced_or_indirected_again():
    """NkiTensor.is_indirect says so, and slicing it is refused."""
    with pytest.raises(nki.KernelError, match="not sliced further"):
        nki.simulate(indirect_twice, np.zeros((64, 32), np.float32), np.zeros((16, 1), np.int32))


def looped_views(a):
    """a [4 * 8, 16] in tiles of 8 rows, each loaded into a tile of the loop (rotating buffers): its bytes as uint16
    (view) and the odd columns of rows 2..5 (.ap at offset 2 * 16 + 1): the offsets of each buffer scale with the
    view's dtype."""
    o16 = nl.ndarray((32, 32), nl.uint16, buffer=nl.shared_hbm)
    odd = nl.ndarray((16, 8), nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        t = nl.load(a[i * 8:(i + 1) * 8, :])
        u = nl.ndarray((8, 32), nl.uint16, buffer=nl.sbuf)
        nisa.tensor_copy(dst=u, src=t.view(nl.uint16))
        nl.store(o16[i * 8:(i + 1) * 8, :], u)
        nl.store(odd[i * 4:(i + 1) * 4, :], nl.copy(t.ap([[16, 4], [2, 8]], offset=2 * 16 + 1)))
    return o16, odd


def test_views_of_a_rotating_tile_in_a_loop():
    a = RNG.uniform(-1, 1, (32, 16)).astype(np.float32)
    o16, odd = nki.simulate(looped_views, a)
    np.testing.assert_array_equal(o16, a.view(np.uint16))
    np.testing.assert_array_equal(odd, a.reshape(4, 8, 16)[:, 2:6, 1::2].reshape(16, 8))


def two_engines(a):
    """One register (2) read by a copy on VectorE and an activation on ScalarE: it lives on both (a RegisterMove on
    each), each reading columns 2..5."""
    o1 = nl.ndarray((8, 4), nl.float32, buffer=nl.shared_hbm)
    o2 = nl.ndarray((8, 4), nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    r = nisa.register_alloc(2)
    u = nl.ndarray((8, 4), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=u, src=t.ap([[16, 8], [1, 4]], scalar_offset=r, indirect_dim=1))
    v = nisa.activation(nl.copy, t.ap([[16, 8], [1, 4]], scalar_offset=r, indirect_dim=1))
    nl.store(o1, u)
    nl.store(o2, v)
    return o1, o2


def test_a_register_read_on_two_engines_lives_on_both():
    a = RNG.uniform(-1, 1, (8, 16)).astype(np.float32)
    o1, o2 = nki.simulate(two_engines, a)
    np.testing.assert_array_equal(o1, a[:, 2:6])
    np.testing.assert_array_equal(o2, a[:, 2:6])
    moves = [i["engine"] for op, i in bir_ops(nki.to_bir(two_engines, a)) if op == "RegisterMove"]
    assert moves == ["Activation", "DVE"]


def patterns(a):
    t = nl.load(a)
    assert t.get_pattern() == [[16, 8], [1, 16]]
    assert t.ap([[16, 4], [2, 8]], offset=1).get_pattern() == [[16, 4], [2, 8]]
    assert t.view(nl.bfloat16).get_pattern() == [[32, 8], [1, 32]]
    assert a.ap([[32, 4], [1, 8]]).get_pattern() == [[32, 4], [1, 8]]


def test_get_pattern_gives_the_pairs():
    """NkiTensor.get_pattern of tiles, .ap views, dtype views and HBM tensors."""
    nki.to_bir(patterns, nki.tensor((8, 16), np.float32))


# ---------------------------------------------------------------------------------------------------- primitives
def primitives(a, b):
    """a [4, 8, 16] and b [8, 16] in HBM: NkiTensor's view primitives (public NKI docs, NkiTensor)."""
    o_slice = nl.ndarray((8, 6), nl.float32, buffer=nl.shared_hbm)
    o_perm = nl.ndarray((16, 8), nl.float32, buffer=nl.shared_hbm)
    o_flat = nl.ndarray((8, 16), nl.float32, buffer=nl.shared_hbm)
    o_bc = nl.ndarray((8, 4, 16), nl.float32, buffer=nl.shared_hbm)
    o_rd = nl.ndarray((8, 2, 8), nl.float32, buffer=nl.shared_hbm)
    nl.store(o_slice, nl.load(b.slice(1, 2, 14, 2)))                      # b[:, 2:14:2]
    nl.store(o_perm, nl.load(a.select(0, 1).permute((1, 0))))             # a[1].T
    t = nl.load(a.select(0, 2).expand_dim(1))                             # [8, 1, 16]
    nl.store(o_flat, nl.copy(t.squeeze_dim(1)))                           # a[2]
    nl.store(o_bc, nl.copy(t.broadcast(1, 4)))                            # a[2] repeated 4 times on dim 1
    nl.store(o_rd, nl.load(a.select(0, 3).reshape_dim(1, (2, -1))))       # a[3] as [8, 2, 8]
    assert a.strides == (128, 16, 1) and a.select(0, 1).offset == 128 and b.slice(1, 2, 14, 2).strides == (16, 2)
    assert b.is_contiguous() and not b.slice(1, 0, 8).is_contiguous() and a.flatten_dims(1, 2).shape == (4, 128)
    return o_slice, o_perm, o_flat, o_bc, o_rd


def test_view_primitives_compose_patterns():
    """NkiTensor.slice, select, permute, broadcast, expand_dim, squeeze_dim, reshape_dim, flatten_dims, and the
    strides, offset and is_contiguous of views."""
    a = RNG.uniform(-1, 1, (4, 8, 16)).astype(np.float32)
    b = RNG.uniform(-1, 1, (8, 16)).astype(np.float32)
    o_slice, o_perm, o_flat, o_bc, o_rd = nki.simulate(primitives, a, b)
    np.testing.assert_array_equal(o_slice, b[:, 2:14:2])
    np.testing.assert_array_equal(o_perm, a[1].T)
    np.testing.assert_array_equal(o_flat, a[2])
    np.testing.assert_array_equal(o_bc, np.repeat(a[2][:, None, :], 4, axis=1))
    np.testing.assert_array_equal(o_rd, a[3].reshape(8, 2, 8))


def run_time_selects(a, k, rows):
    """a [4, 8, 16]: a.select(0, k) with k a [1, 1] tile (a run-time select), and a[k_reg] rows gathered by
    vector_select(0, rows) of a.select(0, 0) (rows [8, 1])."""
    o1 = nl.ndarray((8, 16), nl.float32, buffer=nl.shared_hbm)
    o2 = nl.ndarray((8, 16), nl.float32, buffer=nl.shared_hbm)
    k_sb = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=k_sb, src=k)
    r_sb = nl.ndarray((8, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=r_sb, src=rows)
    t = nl.ndarray((8, 16), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a.select(0, k_sb))
    nisa.dma_copy(dst=o1, src=t)
    u = nl.ndarray((8, 16), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=u, src=a.select(0, 0).vector_select(0, r_sb))
    nisa.dma_copy(dst=o2, src=u)
    return o1, o2


def test_run_time_select_and_vector_select():
    """NkiTensor.select by a [1, 1] tile at run time and NkiTensor.vector_select (a gather)."""
    a = RNG.uniform(-1, 1, (4, 8, 16)).astype(np.float32)
    rows = np.array([[7], [0], [3], [3], [1], [6], [2], [5]], np.int32)
    o1, o2 = nki.simulate(run_time_selects, a, np.array([[2]], np.int32), rows)
    np.testing.assert_array_equal(o1, a[2])
    np.testing.assert_array_equal(o2, a[0][rows[:, 0]])


def test_slice_of_numbers_as_of_index_expressions():
    # A slice of plain numbers takes a path of its own (no index expressions built: tracing speed, bench row (k)); it
    # gives what the index-expression path gives for the same bounds: (start, size = ceil((stop - start) / step),
    # step).
    from neuronsim.nki.symbolic import Idx
    from neuronsim.nki.tracer import _slice_size
    for k, n, want in [(slice(None), 64, (0, 64, 1)), (slice(2, 10, 3), 16, (2, 3, 3)), (slice(5, 2), 8, (5, 0, 1)),
                       (slice(None, 7), 8, (0, 7, 1)), (slice(3, None, 2), 8, (3, 3, 2))]:
        start, size, step = _slice_size(k, n, "t")
        assert (start.c, size, step) == want and start.is_const()
        as_exprs = slice(Idx(0 if k.start is None else k.start), Idx(n if k.stop is None else k.stop), k.step)
        s2, size2, step2 = _slice_size(as_exprs, n, "t")
        assert (s2.c, size2, step2) == want
    with pytest.raises(nki.Unsupported, match="step must be positive"):
        _slice_size(slice(0, 4, 0), 8, "t")
