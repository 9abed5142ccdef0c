"""nki.isa functions, one or more cases each, on the simulator against numpy; PSUM accumulation with +=; and the errors a
kernel gets in its own terms (file:line and tensor)."""
import math

import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(2929)
X = RNG.uniform(-2, 2, (128, 32)).astype(np.float32)
ULP = 2.0 ** -23


def bir_ops(doc):
    """Every instruction of a BIR module, loops walked: [(opcode, instruction dict)]."""
    out = []

    def walk(insts):
        for i in insts:
            if i["opcode"] == "Loop":
                for b in i.get("blocks", []):
                    walk(b["instructions"])
            else:
                out.append((i["opcode"], i))
    for f in doc["functions"]:
        for b in f["blocks"]:
            walk(b["instructions"])
    return out


def tiled_matmul(lhsT, rhs):
    """result[M, N] = lhsT[K, M].T @ rhs[K, N]: K tiles accumulate in one PSUM tile (+= nisa.nc_matmul)."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        a = nl.load(lhsT[nl.ds(k * 128, 128), :])
        b = nl.load(rhs[nl.ds(k * 128, 128), :])
        acc += nisa.nc_matmul(a, b)
    nl.store(result, nl.copy(acc))
    return result


def test_nc_matmul_accumulates_in_psum_and_the_group_starts_on_the_first_trip():
    a = RNG.uniform(-1, 1, (512, 64)).astype(np.float32)
    b = RNG.uniform(-1, 1, (512, 256)).astype(np.float32)
    got = nki.simulate(tiled_matmul, a, b)
    exact = a.T.astype(np.float64) @ b
    bound = 512 * 2.0 ** -24 * (np.abs(a.T.astype(np.float64)) @ np.abs(b))  # Higham eq. 4.4, fp32 accumulation
    assert np.all(np.abs(got - exact) <= bound)
    ops = bir_ops(nki.to_bir(tiled_matmul, a, b))
    # nl.zeros in PSUM becomes no instruction: the first matmul of the group overwrites (start_tensor_calc), the
    # rest accumulate (NKI nc_matmul: accumulating onto a non-matmul initialisation is undefined on v2/v3).
    assert not [i for op, i in ops if op == "Memset"]
    starts = [i.get("start_tensor_calc", True) for op, i in ops if op == "Matmult"]
    assert starts.count(True) == 1 and starts[0] is True and len(starts) > 1


def test_accumulating_a_matmul_into_sbuf_is_a_kernel_error():
    def kernel(a, b):
        out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((128, 64), nl.float32, buffer=nl.sbuf)
        acc += nisa.nc_matmul(nl.load(a), nl.load(b))  # line 67
        nl.store(out, acc)
        return out
    with pytest.raises(nki.KernelError, match=r"test_nki_isa.py:67: .*accumulates in PSUM.*acc.*SBUF"):
        nki.to_bir(kernel, nki.tensor((128, 128)), nki.tensor((128, 64)))


def test_matmul_operand_in_psum_is_copied_to_sbuf_first():
    """The PE array reads SBUF: a PSUM operand (here a matmul's result) is copied out by a TensorCopy first."""
    a = RNG.uniform(-1, 1, (128, 128)).astype(np.float32)
    b = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)

    def kernel(a, b):
        out = nl.ndarray((64, 64), nl.float32, buffer=nl.shared_hbm)
        p = nisa.nc_matmul(nl.load(a), nl.load(b))  # a^T b, [128, 64] in PSUM
        nl.store(out, nisa.nc_matmul(p, nl.load(b)))  # p^T b
        return out
    want = (a.T.astype(np.float64) @ b).T @ b
    np.testing.assert_allclose(nki.simulate(kernel, a, b), want, rtol=1e-4, atol=1e-4)
    # one copy for the operand, one for the store of the PSUM result (DMAs move SBUF)
    assert [op for op, _ in bir_ops(nki.to_bir(kernel, a, b))].count("TensorCopy") == 2


def test_index_out_of_range_is_a_kernel_error():
    def kernel(a):
        out = nl.ndarray((128, 32), nl.float32, buffer=nl.shared_hbm)
        for i in nl.affine_range(3):
            nl.store(out, nl.load(a[nl.ds(i * 128, 128), :]))  # line 94: rows up to 383 of 256
        return out
    with pytest.raises(nki.KernelError, match=r"test_nki_isa.py:94: index out of range on tensor a: dim 0 has size "
                                              r"256, the index reaches \[0, 383\]"):
        nki.to_bir(kernel, nki.tensor((256, 32)))


def test_sbuf_overflow_names_the_tensors_and_the_budget():
    def kernel(a):
        out = nl.ndarray((128, 32768), nl.float32, buffer=nl.shared_hbm)
        big = nl.load(a)  # 128 KiB per partition
        also = nl.exp(big)  # another 128 KiB: 256 KiB > 176 KiB
        nl.store(out, also)
        return out
    with pytest.raises(nki.KernelError, match=r"SBUF overflow: .* 262144 bytes per partition, the budget is "
                                              r"180224 .*big .*also"):
        nki.to_bir(kernel, nki.tensor((128, 32768)))


def test_psum_overflow_names_the_tiles():
    def kernel(a, b):
        out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
        tiles = [nisa.nc_matmul(nl.load(a), nl.load(b)) for _ in range(9)]  # 9 banks of 2 KiB
        acc = nl.copy(tiles[0])
        for t in tiles[1:]:
            acc = nl.add(acc, t)
        nl.store(out, acc)
        return out
    with pytest.raises(nki.KernelError, match=r"PSUM overflow: the tiles need 9 banks .* PSUM has 8"):
        nki.to_bir(kernel, nki.tensor((128, 128)), nki.tensor((128, 512)))


def test_nc_transpose():
    def kernel(x):
        out = nl.ndarray((32, 128), x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.nc_transpose(nl.load(x)))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), X.T)


@pytest.mark.parametrize("shape", [(32, 32), (20, 12), (1, 32)])
@pytest.mark.parametrize("engine", [nisa.vector_engine, nisa.engine.vector])
def test_nc_transpose_on_the_vector_engine(shape, engine):
    """Up to 32 x 32 on VectorE: one StreamTranspose, exact (a data movement), SBUF in and out."""
    x = X[:shape[0], :shape[1]].copy()

    def kernel(x):
        out = nl.ndarray((x.shape[1], x.shape[0]), x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.nc_transpose(nl.load(x), engine=engine))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, x), x.T)
    ops = [(op, i.get("engine")) for op, i in bir_ops(nki.to_bir(kernel, x)) if op not in ("DMACopy", "Load", "Save")]
    assert ops == [("StreamTranspose", "DVE")], ops


def test_nc_transpose_on_the_vector_engine_takes_at_most_128_by_128():
    """Beyond 32 x 32 the vector engine transposes block by block (test_nki_lowering.py); a result of more than 128
    partitions has no tile."""
    def kernel(x):
        out = nl.ndarray((x.shape[1], x.shape[0]), x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.nc_transpose(nl.load(x), engine=nisa.vector_engine))
        return out
    with pytest.raises(nki.KernelError, match=r"at most \[128, 128\].*\[64, 160\]"):
        nki.to_bir(kernel, nki.tensor((64, 160), np.float32))


def test_activation_scale_bias_and_reduce_res():
    bias = RNG.uniform(-1, 1, (128, 1)).astype(np.float32)

    def kernel(x, b):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        sums = nl.ndarray((128, 1), x.dtype, buffer=nl.shared_hbm)
        s = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
        y = nisa.activation(op=nl.exp, data=nl.load(x), bias=nl.load(b), scale=0.5, reduce_res=s,
                            reduce_cmd=nisa.reduce_cmd.reset_reduce)
        nl.store(out, y)
        nl.store(sums, s)
        return out, sums
    out, sums = nki.simulate(kernel, X, bias)
    # exp(x * 0.5 + b): two fp32 roundings of the argument (|arg| < 2: u * 2 each) then one of exp
    want = np.exp((X.astype(np.float64) * 0.5 + bias))
    np.testing.assert_allclose(out, want, rtol=4 * ULP)
    # the row sums of the fp32 outputs, folded in fp32 (32 terms)
    np.testing.assert_allclose(sums, out.astype(np.float64).sum(1, keepdims=True), rtol=32 * 2.0 ** -24)


def test_activation_reduce():
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        sums = nl.ndarray((128, 1), x.dtype, buffer=nl.shared_hbm)
        s = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
        nl.store(out, nisa.activation_reduce(op=nl.square, data=nl.load(x), reduce_op=nl.add, reduce_res=s))
        nl.store(sums, s)
        return out, sums
    out, sums = nki.simulate(kernel, X)
    np.testing.assert_array_equal(out, X * X)
    np.testing.assert_allclose(sums, (X.astype(np.float64) ** 2).sum(1, keepdims=True), rtol=32 * 2.0 ** -24)


@pytest.mark.parametrize("engine", [None, nisa.gpsimd_engine], ids=["default", "gpsimd"])
def test_tensor_tensor(engine):
    y = RNG.uniform(-2, 2, X.shape).astype(np.float32)

    def kernel(a, b):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_tensor(nl.load(a), nl.load(b), op=np.subtract, engine=engine))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X, y), X - y)
    ops = bir_ops(nki.to_bir(kernel, X, y))
    tt = [i for op, i in ops if op == "TensorTensor"][0]
    assert tt.get("engine", "Unassigned") == ("Unassigned" if engine is None else engine.bir)  # Pool


def test_tensor_scalar_two_ops_and_reverse():
    col = RNG.uniform(1, 2, (128, 1)).astype(np.float32)

    def kernel(x, c):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        # (c - x) * 3: operand0 on the left (reverse0), then times 3
        nl.store(out, nisa.tensor_scalar(nl.load(x), np.subtract, nl.load(c), reverse0=True, op1=np.multiply,
                                         operand1=3.0))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X, col), (col - X) * np.float32(3))


def test_tensor_reduce_negate():
    def kernel(x):
        out = nl.ndarray((128, 1), x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_reduce(np.max, nl.load(x), axis=1, negate=True, keepdims=True))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), -X.max(1, keepdims=True))


def test_tensor_copy():
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_copy(nl.load(x), engine=nisa.scalar_engine))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), X)


def test_tensor_tensor_scan_is_a_cumulative_sum():
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        ones = nl.ones(t.shape, nl.float32)
        # r[i] = (ones[i] * r[i-1]) + x[i], r[-1] = 0 (reference neuron-arch.md 3.1)
        nl.store(out, nisa.tensor_tensor_scan(ones, t, 0.0, np.multiply, np.add))
        return out
    got = nki.simulate(kernel, X)
    want = np.cumsum(X.astype(np.float64), axis=1)
    bound = 32 * 2.0 ** -24 * np.cumsum(np.abs(X.astype(np.float64)), axis=1)
    assert np.all(np.abs(got - want) <= bound)


def test_iota():
    def kernel():
        out = nl.ndarray((128, 8), nl.int32, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:128, 0:8]
        nl.store(out, nisa.iota(3 + 8 * i_p + 2 * i_f, dtype=nl.int32))  # value = 3 + 8 p + 2 f
        return out
    p, f = np.mgrid[0:128, 0:8]
    np.testing.assert_array_equal(nki.simulate(kernel), 3 + 8 * p + 2 * f)


def test_memset():
    def kernel():
        out = nl.ndarray((128, 4), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nisa.memset((128, 4), 7.5, nl.float32))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel), np.full((128, 4), 7.5, np.float32))


def test_bn_stats_bn_aggr_give_mean_and_population_variance():
    def kernel(x):
        out = nl.ndarray((128, 2), x.dtype, buffer=nl.shared_hbm)
        stats = nisa.bn_stats(nl.load(x))
        nl.store(out, nisa.bn_aggr(stats))
        return out
    got = nki.simulate(kernel, X)
    x64 = X.astype(np.float64)
    np.testing.assert_allclose(got[:, 0], x64.mean(1), atol=32 * 2.0 ** -24 * 2)
    np.testing.assert_allclose(got[:, 1], x64.var(1), rtol=64 * 2.0 ** -24, atol=1e-6)


def test_reciprocal():
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.reciprocal(nl.load(x)))
        return out
    y = np.abs(X) + 0.5
    np.testing.assert_array_equal(nki.simulate(kernel, y), np.float32(1) / y)


def test_affine_select_causal_mask():
    def kernel(x):
        out = nl.ndarray((128, 128), x.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:128, 0:128]
        nl.store(out, nisa.affine_select(i_p - i_f >= 0, nl.load(x), -1e9))  # keep the lower triangle
        return out
    sq = RNG.uniform(-1, 1, (128, 128)).astype(np.float32)
    p, f = np.mgrid[0:128, 0:128]
    np.testing.assert_array_equal(nki.simulate(kernel, sq), np.where(p >= f, sq, np.float32(-1e9)))


def test_select():
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        nl.store(out, nisa.select(nl.less(t, 0.0), nl.negative(t), t))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), np.abs(X))


def test_dma_copy_hbm_to_sbuf_to_hbm():
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        nisa.dma_copy(dst=out, src=t)
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), X)


def test_unsupported_isa_call():
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.topk(nl.load(x)))  # line 321
        return out
    with pytest.raises(nki.Unsupported, match=r"test_nki_isa.py:321: nisa.topk is not lowered"):
        nki.to_bir(kernel, X)


def test_loop_variable_as_a_python_value_unrolls_the_loops_with_a_warning():
    def kernel(x):
        out = nl.ndarray((256, 32), x.dtype, buffer=nl.shared_hbm)
        tiles = []
        for i in nl.affine_range(2):
            tiles.append(nl.load(x[nl.ds(i * 128, 128), :]))
        for i in nl.affine_range(2):
            t = tiles[i]                                   # a Python list indexed by the loop variable
            nl.store(out[nl.ds(i * 128, 128), :], nl.multiply(t, 2.0) if i == 0 else t)
        return out
    x = RNG.uniform(-1, 1, (256, 32)).astype(np.float32)
    with pytest.warns(UserWarning, match="loops are unrolled"):
        got = nki.simulate(kernel, x)
    np.testing.assert_array_equal(got, np.concatenate([2 * x[:128], x[128:]]))  # NKI 0.7: affine_range = range


def test_python_control_flow_on_an_arange_index_is_unsupported():
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        if i_p < 64:
            pass
        return out
    with pytest.raises(nki.Unsupported, match="control flow on a comparison of index expressions"):
        nki.to_bir(kernel, X)


def test_math_module_names_unaffected():
    assert math.pi > 3  # the nl names (sum, max, ...) do not leak into Python's


def test_dst_forms_of_the_newer_namespace():
    """NKI 0.7's nki.isa passes the destination: nc_matmul(dst=psum, ...) in a loop accumulates, its first trip
    starting the group (accumulate=None: the first write overwrites); tensor_copy(dst=, src=); memset(dst=, value=)."""
    a = RNG.uniform(-1, 1, (256, 128)).astype(np.float32)
    b = RNG.uniform(-1, 1, (256, 64)).astype(np.float32)

    def kernel(lhsT, rhs):
        out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
        bias = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((128, 64), nl.float32, buffer=nl.psum)
        for k in nl.affine_range(2):
            x = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
            y = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=x, src=lhsT[nl.ds(k * 128, 128), :])
            nisa.dma_copy(dst=y, src=rhs[nl.ds(k * 128, 128), :])
            nisa.nc_matmul(dst=acc, stationary=x, moving=y)
        res = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res, src=acc)
        nisa.dma_copy(dst=out, src=res)
        ones = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=ones, value=1.5)
        nisa.dma_copy(dst=bias, src=ones)
        return out, bias
    got, bias = nki.simulate(kernel, a, b)
    exact = a.T.astype(np.float64) @ b
    assert np.all(np.abs(got - exact) <= 256 * 2.0 ** -24 * (np.abs(a.T.astype(np.float64)) @ np.abs(b)))
    np.testing.assert_array_equal(bias, np.full((128, 64), 1.5, np.float32))
    starts = [i.get("start_tensor_calc", True) for op, i in bir_ops(nki.to_bir(kernel, a, b)) if op == "Matmult"]
    assert starts == [True, False]  # the group's first trip (peeled) overwrites, the second accumulates


def test_iota_examples_of_the_nki_page():
    """The NKI nki.isa.iota page's examples: 512 values 0..511 in partition 0; 128 values 0..127 down the
    partitions; and a [128, 512] tile counting row-major (p * 512 + f)."""
    def kernel():
        a = nl.ndarray((1, 512), nl.int32, buffer=nl.shared_hbm)
        b = nl.ndarray((128, 1), nl.int32, buffer=nl.shared_hbm)
        c = nl.ndarray((128, 512), nl.int32, buffer=nl.shared_hbm)
        nl.store(a, nisa.iota(nl.arange(512)[None, :], dtype=nl.int32))
        nl.store(b, nisa.iota(nl.arange(128)[:, None], dtype=nl.int32))
        nl.store(c, nisa.iota(nl.arange(128)[:, None] * 512 + nl.arange(512)[None, :], dtype=nl.int32))
        return a, b, c
    a, b, c = nki.simulate(kernel)
    np.testing.assert_array_equal(a, np.arange(512)[None, :])
    np.testing.assert_array_equal(b, np.arange(128)[:, None])
    np.testing.assert_array_equal(c, np.arange(128 * 512).reshape(128, 512))


def test_decorator_forms():
    """@nki.jit kernels called with arrays simulate; @nki.benchmark(...) ones print their simulated time;
    nki.simulate_kernel is simulate."""
    @nki.benchmark(warmup=2, iters=5)
    def doubled(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.multiply(nl.load(x), 2.0))
        return out
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        got = doubled(X)
    np.testing.assert_array_equal(got["out"], 2 * X)
    assert "doubled:" in buf.getvalue() and "us simulated (trn1)" in buf.getvalue()
    np.testing.assert_array_equal(nki.simulate_kernel(nki.jit(doubled.fn), X), 2 * X)
