"""How the NKI front end lowers what published kernels write (docs/nki-lowering.md): masks in every documented form,
applied before indices are checked and without unrolling; `//` and `%` of loop variables; nl.loop_reduce;
nl.broadcast_to of a 1-D result; vector-engine transposes beyond 32 x 32; DMA transposes; in-place arguments;
loops whose trip count their buffer count does not divide. Kernels written here in the published kernels' idioms, each
checked against numpy."""
import contextlib
import warnings

import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

from conftest import cli, cli_error

RNG = np.random.default_rng(38)


def bir_ops(doc):
    """Every instruction of a BIR module, loops walked: [(opcode, instruction dict)]."""
    out = []

    def walk(insts):
        for i in insts:
            out.append((i["opcode"], i))
            for b in i.get("blocks", []):
                walk(b["instructions"])
    for b in doc["functions"][0]["blocks"]:
        walk(b["instructions"])
    return out


def loops(doc):
    return sum(op == "Loop" for op, _ in bir_ops(doc))


def elements(inst, side="ins"):
    """Elements an instruction's first operand of `side` moves (the product of its pattern's counts)."""
    return int(np.prod([n for _, n in inst[side][0]["ap"]]))


@contextlib.contextmanager
def quiet():
    """No warning of the front end (an unrolled loop says so); outputs a kernel leaves unwritten are the test's."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "neuronsim.nki")
        warnings.filterwarnings("ignore", "neuronsim: .*written by no instruction")
        yield


# ---------------------------------------------------------------------------------------------------- masks
def tail_exp(x):
    """The standard tail mask: N rows in tiles of 128, the last one partial."""
    N, F = x.shape
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:F]
    for i in nl.affine_range((N + 127) // 128):
        t = nl.load(x[i * 128 + i_p, i_f], mask=(i * 128 + i_p < N))
        u = nl.exp(t, mask=(i * 128 + i_p < N))
        nl.store(out[i * 128 + i_p, i_f], u, mask=(N > i * 128 + i_p))  # the other orientation
    return out


def test_tail_mask_keeps_the_loop_and_reads_and_writes_only_the_rows_there_are():
    x = RNG.uniform(-1, 1, (2000, 32)).astype(np.float32)  # 15 tiles of 128 and one of 80
    with quiet():
        got = nki.simulate(tail_exp, x)
        doc = nki.to_bir(tail_exp, x)
    np.testing.assert_allclose(got, np.exp(x.astype(np.float64)), rtol=2.0 ** -23)
    assert loops(doc) >= 1  # trips 0-14 one loop; trip 15 traced on its own, its mask static
    loads = [i for op, i in bir_ops(doc) if op == "Load"]
    assert sorted({elements(i) for i in loads}) == [80 * 32, 128 * 32]  # the tail load reads 80 rows, no more


def test_tail_mask_in_the_compilers_normalised_form():
    """-128 * i0 - i_p + (N - 1) >= 0, loading into a block tile (NKIBench's dumps: adamw, transpose_matmul)."""
    def kernel(x):
        N, F = x.shape
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        buf = nl.ndarray(((N + 127) // 128, nl.par_dim(128), F), dtype=x.dtype, buffer=nl.sbuf)
        for i0 in nl.affine_range((N + 127) // 128):
            m = -128 * i0 + -1 * nl.arange(128)[:, None] + (N - 1) >= 0
            buf[i0, nl.arange(128)[:, None], nl.arange(F)[None, :]] = nl.load(
                x[128 * i0 + nl.arange(128)[:, None], nl.arange(F)[None, :]], dtype=np.float32, mask=m)
            y = nisa.tensor_scalar(data=buf[i0, nl.arange(128)[:, None], nl.arange(F)[None, :]], op0=nl.multiply,
                                   operand0=3.0, mask=m)
            nl.store(out[128 * i0 + nl.arange(128)[:, None], nl.arange(F)[None, :]], value=y, mask=m)
        return out
    x = RNG.uniform(-1, 1, (300, 64)).astype(np.float32)
    with quiet():
        np.testing.assert_array_equal(nki.simulate(kernel, x), 3 * x)  # times 3 rounds once, as numpy's


def test_the_nki_docs_mask_example():
    """NKI docs "NKI API Masking": a [128, 512] tile squared over [0:64, 0:256] and stored into a [64, 256] tensor
    through indices that reach past it -- the mask is applied before the indices are checked."""
    def kernel(in_tensor):
        out_tensor = nl.ndarray([64, 256], dtype=in_tensor.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(512)[None, :]
        in_tile = nl.load(in_tensor[i_p, i_f])
        out_tile = nl.square(in_tile, mask=((i_p < 64) & (i_f < 256)))
        nl.store(out_tensor[i_p, i_f], out_tile[i_p, i_f], mask=((i_p < 64) & (i_f < 256)))
        return out_tensor
    a = RNG.uniform(0, 100, (128, 512)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel, a), np.square(a[:64, :256]))


def test_an_index_out_of_range_without_a_mask_is_still_an_error():
    def kernel(x):
        out = nl.ndarray((128, 16), x.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:128, 0:16]
        nl.store(out, nl.load(x[64 + i_p, i_f]))  # rows 64..191 of 128
        return out
    with pytest.raises(nki.KernelError, match=r"index out of range on tensor x: dim 0 has size 128, the index "
                                              r"reaches \[64, 191\]"):
        nki.to_bir(kernel, nki.tensor((128, 16)))


def test_two_axis_mask_lower_triangle_neither_reads_nor_writes_the_rest():
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.zeros((128, 128), x.dtype))
        i_p, i_f = nl.mgrid[0:128, 0:128]
        t = nl.load(x[i_p, i_f], mask=(i_p >= i_f))
        nl.store(out[i_p, i_f], nl.exp(t, mask=(i_f <= i_p)), mask=(i_p >= i_f))
        return out
    x = RNG.uniform(-1, 1, (128, 128)).astype(np.float32)
    np.testing.assert_allclose(nki.simulate(kernel, x), np.tril(np.exp(x.astype(np.float64))), rtol=2.0 ** -23)
    # row p is one piece of p + 1 elements: the loads read the triangle, 128 * 129 / 2 elements, and nothing else
    loads = [i for op, i in bir_ops(nki.to_bir(kernel, x)) if op == "Load"]
    assert len(loads) == 128 and sum(elements(i) for i in loads) == 128 * 129 // 2


def test_a_mask_on_loop_variables_only_skips_the_trips_where_it_fails():
    """`mask=(j + 1 < n)`: the carried value of a sequential scan is not updated on the last trip (the cumsum idiom
    of public kernels)."""
    def kernel(x):
        n = x.shape[1] // 32
        out = nl.ndarray((128, 1), x.dtype, buffer=nl.shared_hbm)
        acc = nl.zeros((128, 1), nl.float32)
        for j in nl.sequential_range(n):
            s = nl.sum(nl.load(x[:, j * 32:(j + 1) * 32]), axis=1, keepdims=True)
            acc[...] = nl.add(acc, s, mask=(j + 1 < n))
        nl.store(out, acc)
        return out
    x = RNG.integers(-4, 4, (128, 32 * 5)).astype(np.float32)  # small integers: every sum exact
    np.testing.assert_array_equal(nki.simulate(kernel, x), x[:, :128].sum(1, keepdims=True))


def test_a_constant_mask():
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x, mask=True)
        nl.store(out, t)
        nl.store(out, nl.exp(t), mask=False)  # never runs
        return out
    x = RNG.uniform(-1, 1, (128, 8)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel, x), x)


# ---------------------------------------------------------------------------------------------------- // and %
def test_floordiv_and_mod_of_a_loop_variable_split_the_loop():
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(8):  # tile i: row block i // 2, column block i % 2
            r, c = i // 2, i % 2
            t = nl.load(x[r * 128:(r + 1) * 128, c * 64:(c + 1) * 64])
            nl.store(out[r * 128:(r + 1) * 128, c * 64:(c + 1) * 64], nl.multiply(t, 2.0))
        return out
    x = RNG.uniform(-1, 1, (512, 128)).astype(np.float32)
    with quiet():  # no unrolling: the loop becomes u (4 trips) x w (2 trips), i = 2u + w
        np.testing.assert_array_equal(nki.simulate(kernel, x), 2 * x)
        doc = nki.to_bir(kernel, x)
    assert loops(doc) >= 1 and [op for op, _ in bir_ops(doc)].count("Load") < 8


def test_floordiv_over_trips_the_divisor_does_not_divide():
    def kernel(x):
        out = nl.ndarray((3 * 128, 96), x.dtype, buffer=nl.shared_hbm)
        for r in nl.affine_range(3):
            nl.store(out[r * 128:(r + 1) * 128, :], nl.zeros((128, 96), x.dtype))
        for i in nl.affine_range(7):  # 2 x 3 trips split, the seventh on its own
            t = nl.load(x[(i // 3) * 128:(i // 3 + 1) * 128, (i % 3) * 32:(i % 3 + 1) * 32])
            nl.store(out[(i // 3) * 128:(i // 3 + 1) * 128, (i % 3) * 32:(i % 3 + 1) * 32], t)
        return out
    x = RNG.uniform(-1, 1, (384, 96)).astype(np.float32)
    got = nki.simulate(kernel, x)
    np.testing.assert_array_equal(got[:256], x[:256])
    np.testing.assert_array_equal(got[256:, :32], x[256:, :32])  # trip 6: row block 2, column block 0
    np.testing.assert_array_equal(got[256:, 32:], 0)  # no trip 7 or 8


# ---------------------------------------------------------------------------------------------------- loop_reduce
def test_loop_reduce_into_a_tile_nothing_initialised():
    """NKIBench's rmsnorm idiom: partial sums reduced across the inner loop into a block tile never written before
    (an identity Memset runs once before the loop)."""
    def kernel(x):
        A, F = x.shape[0] // 128, x.shape[1] // 2
        out = nl.ndarray((x.shape[0], 1), nl.float32, buffer=nl.shared_hbm)
        v8 = nl.ndarray((A, nl.par_dim(128), 1), dtype=np.float32, buffer=nl.sbuf)
        for i0 in nl.affine_range(A):
            t = nl.load(x[i0 * 128 + nl.arange(128)[:, None], nl.arange(x.shape[1])[None, :]])
            for i2 in nl.affine_range(2):
                part = nisa.tensor_reduce(nl.add, data=t[nl.arange(128)[:, None], F * i2 + nl.arange(F)[None, :]],
                                          axis=[1])
                v8[i0, nl.arange(128)[:, None], 0] = nl.loop_reduce(part, op=np.add, loop_indices=[i2],
                                                                     dtype=np.float32)
            nl.store(out[i0 * 128 + nl.arange(128)[:, None], 0], v8[i0, nl.arange(128)[:, None], 0])
        return out
    x = RNG.integers(-8, 8, (256, 64)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel, x), x.sum(1, keepdims=True))


def test_loop_reduce_max_of_negative_values():
    """The identity of max is the lowest float, not zero: rows of negative values keep their own maximum."""
    def kernel(x):
        out = nl.ndarray((128, 1), nl.float32, buffer=nl.shared_hbm)
        m = nl.ndarray((128, 1), dtype=np.float32, buffer=nl.sbuf)
        for k in nl.affine_range(4):
            m[...] = nl.loop_reduce(nl.max(nl.load(x[:, k * 32:(k + 1) * 32]), axis=1, keepdims=True),
                                    op=np.maximum, loop_indices=[k])
        nl.store(out, m)
        return out
    x = RNG.uniform(-3, -1, (128, 128)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel, x), x.max(1, keepdims=True))


def test_loop_reduce_into_a_zeroed_accumulator_from_psum():
    """The contributed matmul's idiom: a PSUM partial product per trip added into an SBUF accumulator that nl.zeros
    set (dst = dst + x on every trip, NKI's definition)."""
    def kernel(a, b):
        out = nl.ndarray((128, 256), nl.float32, buffer=nl.shared_hbm)
        z = nl.zeros((128, 256), nl.float32, buffer=nl.sbuf)
        for k in nl.affine_range(2):
            p = nl.zeros((128, 256), nl.float32, buffer=nl.psum)
            for kk in nl.affine_range(2):
                p += nisa.nc_matmul(nl.load(a[(k * 2 + kk) * 128:(k * 2 + kk + 1) * 128, :]),
                                    nl.load(b[(k * 2 + kk) * 128:(k * 2 + kk + 1) * 128, :]))
            z[...] = nl.loop_reduce(p, op=np.add, loop_indices=[k], dtype=nl.float32)
        nl.store(out, z)
        return out
    a = RNG.integers(-3, 3, (512, 128)).astype(np.float32)
    b = RNG.integers(-3, 3, (512, 256)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel, a, b), a.T @ b)  # small integers: exact in fp32


# ---------------------------------------------------------------------------------------------------- broadcast, transposes
def test_broadcast_to_of_a_1d_reduce_result():
    """The attention tutorial's `(1.0 / sum_res).broadcast_to((128, d))`, sum_res a 1-D [128] reduction."""
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        s = nisa.tensor_reduce(np.add, data=t, axis=(1,))
        nl.store(out, nl.multiply(t, (1.0 / s).broadcast_to((128, x.shape[1]))))
        return out
    x = RNG.uniform(0.5, 2, (128, 64)).astype(np.float32)
    np.testing.assert_allclose(nki.simulate(kernel, x), x / x.sum(1, keepdims=True), rtol=1e-6)


@pytest.mark.parametrize("shape", [(128, 64), (64, 128), (100, 40), (128, 128)])
def test_vector_engine_transpose_beyond_32_by_32_in_blocks(shape):
    def kernel(x):
        out = nl.ndarray((x.shape[1], x.shape[0]), x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.nc_transpose(nl.load(x), engine=nisa.vector_engine))
        return out
    x = RNG.uniform(-1, 1, shape).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel, x), x.T)
    blocks = -(-shape[0] // 32) * -(-shape[1] // 32)
    assert [op for op, _ in bir_ops(nki.to_bir(kernel, x))].count("StreamTranspose") == blocks


@pytest.mark.parametrize("shape, dtype", [((64, 128), np.float32), ((128, 128), np.float16), ((16, 100), np.int32),
                                          ((1, 128), np.float32)])
def test_load_transpose2d(shape, dtype):
    def kernel(x):
        out = nl.ndarray((x.shape[1], x.shape[0]), x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load_transpose2d(x))
        return out
    x = RNG.uniform(-9, 9, shape).astype(dtype)
    np.testing.assert_array_equal(nki.simulate(kernel, x), x.T)
    dma = [i for op, i in bir_ops(nki.to_bir(kernel, x)) if op == "DMACopy"]
    assert [(i.get("mode"), i.get("transpose_op")) for i in dma] == [("Transpose", "WZXY")]


def _plain_copy(x):
    """The untransposed baseline of the two transposing-DMA timing tests: one load, one store."""
    out = nl.ndarray((128, 128), x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(x))
    return out


@pytest.mark.parametrize("arch, extra_ns", [("trn1", 6927.056), ("trn2", 19.784)])
def test_load_transpose2d_costs_what_each_generation_moves(arch, extra_ns):
    """A [128, 128] fp32 load_transpose2d + store against the same kernel with nl.load (docs/timing-model.md 2.5):
    the values are x.T on both; the extra time is the transposing load's. trn1 (no transpose hardware): one
    descriptor per row, 128 elements at 7 ns (calibration.md D5) = 896 ns, 8 rows an engine: 7 + 7168 = 7175 ns
    against the copy's 7 + 8 x 512 / 17 = 247.94 ns -> 6927.06 ns. trn2 [ARCH3]: 90% of 23 B/ns, 8 rows of
    512 B at 24.734 ns against 22.261 ns -> 8 x 2.473 = 19.784 ns."""
    def transposed(x):
        out = nl.ndarray((128, 128), x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load_transpose2d(x))
        return out

    x = RNG.uniform(-9, 9, (128, 128)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(transposed, x, arch=arch), x.T)
    t = nki.benchmark(transposed, x, arch=arch).total_ns - nki.benchmark(_plain_copy, x, arch=arch).total_ns
    assert t == pytest.approx(extra_ns, abs=0.002)


@pytest.mark.parametrize("arch, extra_ns", [("trn1", 6927.056), ("trn2", 7015.168)])
def test_a_store_that_transposes_by_its_indices_costs_an_element_gather(arch, extra_ns):
    """nl.store(out[j, i], tile[i, j]): single elements on the HBM side, whole rows on the SBUF side -- the movement
    a v2 transposing DMA makes, timed as one (docs/timing-model.md 2.5): 8 rows an engine of 128 elements at 7 ns
    = 7168 ns against the plain store's 8 x 512 B at the write rate (trn1 17 B/ns: 240.94 ns; trn2 26.8 B/ns:
    152.832 ns). Values: x.T."""
    def transposed(x):
        out = nl.ndarray((128, 128), x.dtype, buffer=nl.shared_hbm)
        i, j = nl.arange(128)[:, None], nl.arange(128)[None, :]
        nl.store(out[j, i], nl.load(x))
        return out

    x = RNG.uniform(-9, 9, (128, 128)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(transposed, x, arch=arch), x.T)
    t = nki.benchmark(transposed, x, arch=arch).total_ns - nki.benchmark(_plain_copy, x, arch=arch).total_ns
    assert t == pytest.approx(extra_ns, abs=0.002)


@pytest.mark.parametrize("shape, perm", [((32, 64), (1, 0)), ((4, 8, 16), (2, 1, 0)), ((2, 3, 4, 5), (3, 1, 2, 0))])
@pytest.mark.parametrize("form", ["returning", "dst", "from SBUF"])
def test_dma_transpose(shape, perm, form):
    """nisa.dma_transpose's permutations by rank (NKI docs): 2-D (1, 0), 3-D (2, 1, 0), 4-D (3, 1, 2, 0)."""
    def kernel(x):
        tshape = tuple(x.shape[a] for a in perm)
        out = nl.ndarray(tshape, x.dtype, buffer=nl.shared_hbm)
        if form == "dst":
            t = nl.ndarray(tshape, x.dtype, buffer=nl.sbuf)
            nisa.dma_transpose(t, x)
        else:
            t = nisa.dma_transpose(nl.load(x) if form == "from SBUF" else x)
        nl.store(out, t)
        return out
    x = RNG.uniform(-1, 1, shape).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel, x), x.transpose(perm))


# ---------------------------------------------------------------------------------------------------- in place
def inc(x):
    nl.store(x, nl.add(nl.load(x), 1.0))


def test_in_place_argument_from_python_updates_the_callers_array():
    x = RNG.uniform(-1, 1, (128, 4)).astype(np.float32)
    before = x.copy()
    assert nki.simulate(inc, x) is None
    np.testing.assert_array_equal(x, before + np.float32(1))
    v = (np.arange(256).reshape(128, 2) % 64) / 4  # quarters below 17: exact in bf16, and so are they plus 1
    y = nki.array(v, nl.bfloat16)
    nki.simulate(inc, y)
    np.testing.assert_array_equal(y.values(), v + 1)


def test_in_place_argument_from_the_cli(tmp):
    kernel = tmp / "inc.py"
    kernel.write_text("import neuronxcc.nki.language as nl\n\n\ndef inc(x):\n    nl.store(x, nl.load(x) + 1.0)\n")
    x = RNG.uniform(-1, 1, (128, 4)).astype(np.float32)
    np.save(tmp / "x.npy", x)
    cli("nki", f"{kernel}::inc", "--input", f"x={tmp / 'x.npy'}", "--outdir", tmp / "out", "--quiet")
    np.testing.assert_array_equal(np.load(tmp / "out" / "x.npy"), x + np.float32(1))
    np.testing.assert_array_equal(np.load(tmp / "x.npy"), x)  # the input file is untouched
    code, msg = cli_error("nki", f"{kernel}::inc", "--input", f"x={tmp / 'x.npy'}", "--outdir", tmp)
    assert code == 3 and "an output would overwrite the input file" in msg and "x.npy" in msg


# ---------------------------------------------------------------------------------------------------- tail trips
def exp_tiles(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        nl.store(out[i * 128:(i + 1) * 128, :], nl.exp(nl.load(a[i * 128:(i + 1) * 128, :])))
    return out


def test_fifteen_trips_cost_fifteen_sixteenths_of_sixteen():
    """A loop whose trip count its 4 buffers do not divide rotates them all the same (the remainder peeled): the
    loads keep running 3 trips ahead, so 15 trips take 15/16 of 16 trips' simulated time (0.9375; measured
    0.938: 117.0 us against 124.8 us for 128 x 2048 fp32 tiles on trn1)."""
    t15, t16 = (nki.benchmark(exp_tiles, nki.tensor((128 * n, 2048)), timing_only=True).total_ns for n in (15, 16))
    assert 0.93 < t15 / t16 < 0.95, (t15, t16)


def test_tracing_pauses_the_garbage_collector_and_leaves_it_as_it_was():
    """trace_kernel pauses Python's cyclic garbage collector while it traces (docs/dev/performance.md, rows (k)) and
    leaves it as it found it: on again after a trace and after a kernel that raises, still off when the caller had
    switched it off."""
    import gc

    from neuronsim.nki.api import trace_kernel

    seen = []

    def copy(x):
        seen.append(gc.isenabled())
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(x))
        return out

    def broken(x):
        seen.append(gc.isenabled())
        raise ValueError("the kernel's own error")

    assert gc.isenabled()
    trace_kernel(copy, (nki.tensor((128, 64)),), {})
    assert seen == [False] and gc.isenabled()
    with pytest.raises(ValueError, match="the kernel's own error"):
        trace_kernel(broken, (nki.tensor((128, 64)),), {})
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    try:
        trace_kernel(copy, (nki.tensor((128, 64)),), {})
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_index_expression_arithmetic_leaves_its_operands_as_they_were():
    """Idx shares the terms of an expression offset by a number (symbolic.py): the operands keep their values, and a
    sum whose loop terms cancel drops them."""
    from neuronsim.nki.symbolic import Idx

    i = Idx(2, {0: 3}, {-1: 1}, {-1: 8})
    j = i + 5
    assert (j.c, j.loop, j.axes, j.sizes) == (7, {0: 3}, {-1: 1}, {-1: 8})
    z = i * 0
    assert (z.c, z.loop, z.axes, z.sizes) == (0, {}, {}, {-1: 8})
    k = i * 2 + Idx(1, {0: -6})
    assert (k.c, k.loop, k.axes, k.sizes) == (5, {}, {-1: 2}, {-1: 8})
    assert (i.c, i.loop, i.axes, i.sizes) == (2, {0: 3}, {-1: 1}, {-1: 8})
