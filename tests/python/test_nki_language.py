"""nki.language functions, one or more cases each, run on the simulator against numpy. The engines compute in fp32
(reference neuron-arch.md 3.1); activations are the simulator's closed forms rounded to fp32
(engines/ops/activation.cpp): tolerances say which roundings separate them from numpy's float64-rounded values."""
import math
import warnings

import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.language as nl

RNG = np.random.default_rng(29)
X = RNG.uniform(-3, 3, (128, 16)).astype(np.float32)
Y = RNG.uniform(0.5, 3, (128, 16)).astype(np.float32)  # positive: log, sqrt, power, divide
COL = RNG.uniform(0.5, 2, (128, 1)).astype(np.float32)
I32 = RNG.integers(-50, 50, (128, 16)).astype(np.int32)
J32 = RNG.integers(0, 8, (128, 16)).astype(np.int32)


def unary(fn):
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, fn(nl.load(x)))
        return out
    return kernel


def binary(fn):
    def kernel(x, y):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, fn(nl.load(x), nl.load(y)))
        return out
    return kernel


ULP = 2.0 ** -23

# (nl function, numpy reference, input, rtol, atol): element-wise activations are one fp32 rounding of the exact value
# (relative error <= 2^-24; the argument's own rounding after x * 1.0 + 0 is exact), so rtol 2^-23 leaves margin.
UNARY = [
    ("exp", np.exp, X, ULP, 0), ("log", np.log, Y, ULP, 1e-7), ("tanh", np.tanh, X, ULP, 1e-7),
    ("sigmoid", lambda v: 1 / (1 + np.exp(-v)), X, ULP, 1e-7), ("relu", lambda v: np.maximum(v, 0), X, 0, 0),
    ("sqrt", np.sqrt, Y, ULP, 0), ("rsqrt", lambda v: 1 / np.sqrt(v), Y, ULP, 0),
    ("erf", np.vectorize(math.erf), X, ULP, 1e-7), ("sin", np.sin, X, ULP, 1e-7),
    # cos(x) = sin(x + pi/2): the fp32 rounding of x + pi/2 (|x + pi/2| < 4.6, u = 2^-24 * 8) moves the value by
    # at most 4.8e-7 in absolute terms
    ("cos", np.cos, X, ULP, 5e-7),
    ("arctan", np.arctan, X, ULP, 1e-7), ("sign", np.sign, X, 0, 0), ("square", np.square, X, ULP, 0),
    ("abs", np.abs, X, 0, 0), ("reciprocal", np.reciprocal, Y, ULP, 0), ("negative", np.negative, X, 0, 0),
    ("floor", np.floor, X, 0, 0), ("ceil", np.ceil, X, 0, 0),
    ("silu", lambda v: v / (1 + np.exp(-v)), X, 2 * ULP, 1e-7),
    ("gelu", lambda v: 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2))), X, 2 * ULP, 1e-7),
    ("softplus", lambda v: np.log1p(np.exp(v)), X, 2 * ULP, 1e-7),
]


@pytest.mark.parametrize("name,ref,x,rtol,atol", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, ref, x, rtol, atol):
    got = nki.simulate(unary(getattr(nl, name)), x)
    np.testing.assert_allclose(got, ref(x.astype(np.float64)).astype(np.float32), rtol=rtol, atol=atol)


# Binary: fp32 in, one fp32 rounding out: numpy's fp32 arithmetic is the same correctly rounded operation.
BINARY = [
    ("add", np.add, X, Y), ("subtract", np.subtract, X, Y), ("multiply", np.multiply, X, Y),
    ("divide", np.divide, X, Y), ("maximum", np.maximum, X, Y), ("minimum", np.minimum, X, Y),
    ("equal", lambda a, b: (a == b).astype(np.float32), X, np.where(RNG.random((128, 16)) < 0.5, X, Y)),
    ("not_equal", lambda a, b: (a != b).astype(np.float32), X, np.where(RNG.random((128, 16)) < 0.5, X, Y)),
    ("greater", lambda a, b: (a > b).astype(np.float32), X, Y),
    ("greater_equal", lambda a, b: (a >= b).astype(np.float32), X, Y),
    ("less", lambda a, b: (a < b).astype(np.float32), X, Y),
    ("less_equal", lambda a, b: (a <= b).astype(np.float32), X, Y),
    ("logical_and", lambda a, b: ((a != 0) & (b != 0)).astype(np.float32), (X > 0).astype(np.float32),
     (Y > 1).astype(np.float32)),
    ("logical_or", lambda a, b: ((a != 0) | (b != 0)).astype(np.float32), (X > 0).astype(np.float32),
     (Y > 1).astype(np.float32)),
    ("logical_xor", lambda a, b: ((a != 0) ^ (b != 0)).astype(np.float32), (X > 0).astype(np.float32),
     (Y > 1).astype(np.float32)),
    ("bitwise_and", np.bitwise_and, I32, J32), ("bitwise_or", np.bitwise_or, I32, J32),
    ("bitwise_xor", np.bitwise_xor, I32, J32), ("left_shift", np.left_shift, J32, J32),
    ("right_shift", np.right_shift, I32 & 0x7FFF, J32),
]


@pytest.mark.parametrize("name,ref,x,y", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, ref, x, y):
    np.testing.assert_array_equal(nki.simulate(binary(getattr(nl, name)), x, y), ref(x, y))


def test_power():
    # pow in fp32: the simulator's powf against numpy's float64 power, one fp32 rounding apart
    got = nki.simulate(binary(nl.power), Y, X)
    np.testing.assert_allclose(got, (Y.astype(np.float64) ** X).astype(np.float32), rtol=4 * ULP)


def test_scalar_operands_and_operand_order():
    def kernel(x):
        a = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        b = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        nl.store(a, nl.subtract(t, 1.5))   # x - 1.5
        nl.store(b, nl.subtract(1.5, t))   # 1.5 - x: the scalar on the left (reverse0)
        return a, b
    a, b = nki.simulate(kernel, X)
    np.testing.assert_array_equal(a, X - np.float32(1.5))
    np.testing.assert_array_equal(b, np.float32(1.5) - X)


def test_column_broadcast_is_a_per_partition_scalar():
    def kernel(x, c):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.divide(nl.load(x), nl.load(c)))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X, COL), X / COL)


def test_operators_on_tiles():
    def kernel(x, y):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        a, b = nl.load(x), nl.load(y)
        nl.store(out, (a + b) * 2.0 - a / b)
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X, Y), (X + Y) * np.float32(2) - X / Y)


REDUCE = [("sum", np.sum), ("max", np.max), ("min", np.min), ("prod", np.prod), ("mean", np.mean)]


@pytest.mark.parametrize("name,ref", REDUCE, ids=[r[0] for r in REDUCE])
def test_reductions_keepdims(name, ref):
    def kernel(x):
        out = nl.ndarray((128, 1), x.dtype, buffer=nl.shared_hbm)
        nl.store(out, getattr(nl, name)(nl.load(x), axis=1, keepdims=True))
        return out
    x = Y if name == "prod" else X  # |prod| of 16 values in [0.5, 3) stays finite
    # Sequential fp32 folds of 16 terms: within 16 roundings of the float64 result (Higham eq. 4.4).
    want = ref(x.astype(np.float64), axis=1, keepdims=True)
    bound = 16 * 2.0 ** -24 * ref(np.abs(x.astype(np.float64)), axis=1, keepdims=True)
    assert np.all(np.abs(nki.simulate(kernel, x) - want) <= np.abs(bound) + 1e-30)


def test_reduction_over_two_free_axes_without_keepdims():
    x3 = RNG.uniform(-1, 1, (128, 4, 8)).astype(np.float32)

    def kernel(x):
        out = nl.ndarray((128,), x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.max(nl.load(x), axis=(1, 2)))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, x3), x3.max(axis=(1, 2)))


def test_reduction_over_partitions_is_unsupported():
    with pytest.raises(nki.Unsupported, match="partition axis"):
        nki.simulate(unary(lambda t: nl.sum(t, axis=0)), X)


def test_creation_zeros_ones_full_and_likes():
    def kernel(x):
        outs = [nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm) for _ in range(4)]
        t = nl.load(x)
        nl.store(outs[0], nl.zeros((128, 16), nl.float32) + t)
        nl.store(outs[1], nl.ones_like(t))
        nl.store(outs[2], nl.full((128, 16), 2.5, nl.float32))
        nl.store(outs[3], nl.zeros_like(t))
        return tuple(outs)
    a, b, c, d = nki.simulate(kernel, X)
    np.testing.assert_array_equal(a, X)
    np.testing.assert_array_equal(b, np.ones_like(X))
    np.testing.assert_array_equal(c, np.full_like(X, 2.5))
    np.testing.assert_array_equal(d, np.zeros_like(X))


def test_copy_with_dtype_rounds_to_bf16():
    def kernel(x):
        out = nl.ndarray(x.shape, nl.bfloat16, buffer=nl.shared_hbm)
        nl.store(out, nl.copy(nl.load(x), dtype=nl.bfloat16))
        return out
    got = nki.simulate(kernel, X)
    # bf16 round-to-nearest-even of each fp32 value (the top 16 bits, rounded)
    bits = X.view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
    np.testing.assert_array_equal(np.asarray(got, dtype=np.float32), rounded)


def test_matmul_transpose_x_and_plain():
    a = RNG.uniform(-1, 1, (64, 128)).astype(np.float32)
    b = RNG.uniform(-1, 1, (64, 256)).astype(np.float32)

    def kernel_t(x, y):
        out = nl.ndarray((128, 256), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nl.matmul(nl.load(x), nl.load(y), transpose_x=True))  # x.T @ y
        return out

    def kernel(x, y):
        out = nl.ndarray((128, 256), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nl.matmul(nl.load(x), nl.load(y)))  # x @ y, x transposed on PE first
        return out
    bound = 64 * 2.0 ** -24 * (np.abs(a.T.astype(np.float64)) @ np.abs(b))  # fp32 accumulation of 64 products
    assert np.all(np.abs(nki.simulate(kernel_t, a, b) - a.T.astype(np.float64) @ b) <= bound)
    assert np.all(np.abs(nki.simulate(kernel, np.ascontiguousarray(a.T), b) - a.T.astype(np.float64) @ b) <= bound)


def test_transpose_on_pe():
    def kernel(x):
        out = nl.ndarray((16, 128), x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.transpose(nl.load(x)))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), X.T)


def test_load_transpose2d():
    def kernel(x):
        out = nl.ndarray((16, 128), x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load_transpose2d(x))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), X.T)


def test_broadcast_to_free_and_partitions():
    row = RNG.uniform(-1, 1, (1, 16)).astype(np.float32)

    def kernel(c, r):
        a = nl.ndarray((128, 16), nl.float32, buffer=nl.shared_hbm)
        b = nl.ndarray((128, 16), nl.float32, buffer=nl.shared_hbm)
        nl.store(a, nl.broadcast_to(nl.load(c), (128, 16)))
        nl.store(b, nl.broadcast_to(nl.load(r), (128, 16)))
        return a, b
    a, b = nki.simulate(kernel, COL, row)
    np.testing.assert_array_equal(a, np.broadcast_to(COL, (128, 16)))
    np.testing.assert_array_equal(b, np.broadcast_to(row, (128, 16)))


def test_where():
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        nl.store(out, nl.where(nl.greater(t, 0.0), t, 0.25))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), np.where(X > 0, X, np.float32(0.25)))


def test_arange_mgrid_ds_indexing_and_mask():
    big = RNG.uniform(-1, 1, (256, 64)).astype(np.float32)

    def kernel(x):
        out = nl.ndarray((128, 32), x.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(32)[None, :]
        a = nl.load(x[128 + i_p, 2 * i_f])            # rows 128.., every other column
        j_p, j_f = nl.mgrid[0:128, 0:32]
        b = nl.load(x[nl.ds(0, 128), nl.ds(32, 32)])  # rows 0..127, columns 32..63
        nl.store(out[j_p, j_f], nl.add(a, b))
        c = nl.ndarray((128, 32), nl.float32, buffer=nl.sbuf)
        c[...] = 0.0
        nl.store(out[j_p, j_f], nl.add(a, b), mask=(j_p < 100))  # rows 100.. untouched by the second store
        return out
    want = big[128:, 0:64:2] + big[0:128, 32:64]
    np.testing.assert_array_equal(nki.simulate(kernel, big), want)


def test_mask_clips_the_partitions_written():
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:128, 0:16]
        nl.store(out[i_p, i_f], nl.zeros((128, 16), nl.float32))
        t = nl.load(x[i_p, i_f], mask=(i_p < 100))
        nl.store(out[i_p, i_f], nl.exp(t, mask=(i_p < 100)), mask=(i_p < 100))
        return out
    got = nki.simulate(kernel, X)
    np.testing.assert_allclose(got[:100], np.exp(X[:100].astype(np.float64)), rtol=ULP)
    np.testing.assert_array_equal(got[100:], 0)


def test_static_and_python_ranges_unroll_sequential_range_loops():
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)

    def kernel(x):
        out = nl.ndarray((128, 16), x.dtype, buffer=nl.shared_hbm)
        acc = nl.zeros((128, 16), nl.float32)
        for j in nl.sequential_range(2):          # a loop-carried accumulation: one BIR loop
            acc[...] = nl.add(acc, nl.load(x[:, nl.ds(j * 16, 16)]))
        for j in nl.static_range(2, 3):           # unrolled
            acc[...] = nl.add(acc, nl.load(x[:, nl.ds(j * 16, 16)]))
        for j in range(3, 4):                     # unrolled
            acc[...] = nl.add(acc, nl.load(x[:, nl.ds(j * 16, 16)]))
        nl.store(out, acc)
        return out
    want = ((x[:, 0:16] + x[:, 16:32]) + x[:, 32:48]) + x[:, 48:64]
    np.testing.assert_array_equal(nki.simulate(kernel, x), want)


def test_device_print_prints_the_tile():
    def kernel(x):
        out = nl.ndarray((128, 1), x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        nl.device_print("x row sums", nl.sum(t, axis=1, keepdims=True))
        nl.store(out, nl.sum(t, axis=1, keepdims=True))
        return out
    ones = np.ones((128, 4), np.float32)
    r = nki.benchmark(kernel, ones)
    assert len(r.device_prints) == 1 and r.device_prints[0].startswith("x row sums [[4], [4],")


def test_launch_grid_program_id_runs_each_instance():
    x = RNG.uniform(-1, 1, (512, 8)).astype(np.float32)
    from neuronsim.nki import legacy

    @legacy.jit  # neuronxcc.nki.jit: kernel[4] is 4 instances (nki.jit's kernel[n] is the LNC degree)
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        i = nl.program_id(0)
        n = nl.num_programs(0)
        rows = x.shape[0] // n
        t = nl.load(x[nl.ds(i * rows, rows), :])
        nl.store(out[nl.ds(i * rows, rows), :], nl.multiply(t, float(i + 1)))
        return out
    got = kernel[4](x)
    want = x * np.repeat(np.arange(1, 5, dtype=np.float32), 128)[:, None]
    np.testing.assert_array_equal(got, want)


def test_int_dtypes_and_promotion():
    def kernel(a, b):
        out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nl.add(nl.load(a), nl.load(b)))  # int32 + float32 -> float32 (NKI promotion)
        return out
    got = nki.simulate(kernel, I32, X)
    np.testing.assert_array_equal(got, I32.astype(np.float32) + X)


def test_shared_constant_data_reaches_the_run():
    def kernel(x):
        out = nl.ndarray((128, 16), nl.float32, buffer=nl.shared_hbm)
        ramp = nl.shared_constant(np.arange(128 * 16, dtype=np.int32).reshape(128, 16), dtype=nl.float32)
        nl.store(out, nl.add(nl.load(x), nl.load(ramp)))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), X + np.arange(128 * 16, dtype=np.float32).reshape(128, 16))


def test_shared_constant_read_from_a_npy_file():
    """nl.shared_constant given the path of a .npy file (the NKI page: "a numpy array or a file path to a .npy
    file"), as a library's configuration caches the path of a table it wrote: copied into part of a tile."""
    import os
    import tempfile
    table = np.tile(np.arange(12, dtype=np.float32), (128, 1))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "positions.npy")
        np.save(path, table)

        def kernel(x):
            out = nl.ndarray((128, 16), nl.float32, buffer=nl.shared_hbm)
            t = nl.ndarray((128, 16), nl.float32, buffer=nl.sbuf)
            nki.isa.memset(dst=t, value=-1.0)
            nki.isa.dma_copy(dst=t[:, :12], src=nl.shared_constant(path))
            nl.store(out, nl.add(t, nl.load(x)))
            return out
        got = nki.simulate(kernel, X)
        want = X + np.concatenate([table, np.full((128, 4), -1.0, np.float32)], axis=1)
        np.testing.assert_array_equal(got, want)

        def missing(x):
            return nl.shared_constant(os.path.join(d, "absent.npy"))
        with pytest.raises(nki.KernelError, match="cannot read the .npy file .*absent.npy"):
            nki.simulate(missing, X)


def test_low_precision_dtypes_round_as_the_simulator_does():
    """bf16, fp16, fp8 (e4m3, e5m2), int8 / int16 / uint8 tiles: a copy converts with the simulator's rounding
    (neuronsim.from_float32: round to nearest even, saturation for integers), the same conversion nki.array applies to
    an argument."""
    v = RNG.uniform(-3, 3, (128, 8)).astype(np.float32)
    for dt, name in ((nl.bfloat16, "bfloat16"), (nl.float16, "float16"), (nl.float8_e4m3, "float8e4"),
                     (nl.float8_e5m2, "float8e5"), (nl.int8, "int8"), (nl.int16, "int16"), (nl.uint8, "uint8")):
        def kernel(x):
            out = nl.ndarray(x.shape, dt, buffer=nl.shared_hbm)
            nl.store(out, nl.copy(nl.load(x), dtype=dt))
            return out
        got = np.asarray(nki.simulate(kernel, v), dtype=np.float32)
        np.testing.assert_array_equal(got, nki.array(v, dt).values(), err_msg=name)


def test_bf16_arguments_matmul():
    a = nki.array(RNG.uniform(-1, 1, (128, 64)), nl.bfloat16)
    b = nki.array(RNG.uniform(-1, 1, (128, 32)), nl.bfloat16)

    def kernel(x, y):
        out = nl.ndarray((64, 32), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nl.matmul(nl.load(x), nl.load(y), transpose_x=True))
        return out
    av, bv = a.values().astype(np.float64), b.values().astype(np.float64)
    exact = av.T @ bv  # bf16 x bf16 products are exact in fp32; 128 fp32 additions
    got = nki.simulate(kernel, a, b)
    assert np.all(np.abs(got - exact) <= 128 * 2.0 ** -24 * (np.abs(av.T) @ np.abs(bv)))


def test_reshape_of_an_hbm_tensor():
    def kernel(x):
        out = nl.ndarray((128, 64), x.dtype, buffer=nl.shared_hbm)
        flat = x.reshape((128, 64))  # [256, 32] row-major as [128, 64]
        nl.store(out, nl.load(flat))
        return out
    x = RNG.uniform(-1, 1, (256, 32)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel, x), x.reshape(128, 64))


def test_a_loop_mask_that_always_holds_clips_nothing_one_that_does_not_peels_the_trips_it_clips():
    x = RNG.uniform(-1, 1, (512, 16)).astype(np.float32)

    def kernel(x, rows):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        for p in nl.affine_range(4):
            i_p, i_f = nl.mgrid[0:128, 0:16]
            i_p = p * 128 + i_p
            t = nl.load(x[i_p, i_f], mask=(i_p < rows))
            nl.store(out[i_p, i_f], nl.exp(t), mask=(i_p < rows))
        return out
    np.testing.assert_allclose(nki.simulate(kernel, x, 512), np.exp(x.astype(np.float64)), rtol=ULP)
    # rows 456..511 masked on the last trip only: trips 0-2 stay one loop, trip 3 is traced on its own with its
    # mask static (no warning: nothing is unrolled)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "neuronsim.nki")
        warnings.filterwarnings("ignore", "neuronsim: .*written by no instruction")
        got = nki.simulate(kernel, x, 456)
        doc = nki.to_bir(kernel, x, 456)
    np.testing.assert_allclose(got[:456], np.exp(x[:456].astype(np.float64)), rtol=ULP)
    assert sum(i["opcode"] == "Loop" for b in doc["functions"][0]["blocks"] for i in b["instructions"]) == 1


def test_fori_loop_is_one_bir_loop():
    x = RNG.uniform(-1, 1, (128 * 8, 16)).astype(np.float32)

    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)

        def body(i):
            nl.store(out[nl.ds(i * 128, 128), :], nl.add(nl.load(x[nl.ds(i * 128, 128), :]), 1.0))
        nl.fori_loop(0, 8, body)
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, x), x + np.float32(1))
    doc = nki.to_bir(kernel, x)
    assert any(i["opcode"] == "Loop" for b in doc["functions"][0]["blocks"] for i in b["instructions"])
