"""NKI's names as ordinary Python values, as kernels and their helper modules use them: dtypes (str, hashable, equal
to numpy's, usable as numpy dtypes), the nki.isa enums with the reference's members and values per generation,
nki.isa.constants / nki.language.constants, tile_size, nc_version and get_nc_version per architecture, NKIObject,
MemoryRegion, fp32 / finfo, mgrid's .p / .x, mask=True, `if tensor:`, nki.simulate(kernel)(...), nt.tensor
placeholders, nki.jit's options, the compiler directives, and refused names (values that raise only when called)."""
import dataclasses
import importlib
import json
import pathlib
import sys
import warnings

import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.compiler as ncc
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl
import neuronsim.nki.typing as nt

REFERENCE = pathlib.Path(__file__).resolve().parent / "data" / "nki_api_reference.json"
RNG = np.random.default_rng(38)
X = RNG.uniform(-4, 4, (128, 32)).astype(np.float32)

# Tables built at import, the NKI Library's way (fp8 ranges keyed by dtype).
FP8_MAX = {nl.float8_e4m3: 240.0, nl.float8_e4m3fn: 448.0, nl.float8_e5m2: 57344.0}


def copy_kernel(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(x))
    return out


def test_dtypes_are_names_hashable_and_numpy_compatible():
    assert str(nl.bfloat16) == "bfloat16" and str(nl.float32) == "float32" and nl.int32 == "int32"
    assert FP8_MAX[nl.float8_e4m3fn] == 448.0 and nl.float8_e5m2 in FP8_MAX
    # the legacy API's dtypes are numpy's: they compare equal and numpy takes them
    assert nl.float32 == np.float32 and np.float32 == nl.float32 and nl.int8 == np.dtype(np.int8)
    assert nl.float16 != np.float32 and nl.float32 != nl.bfloat16
    assert np.dtype(nl.float32) == np.float32 and np.zeros((2, 3), dtype=nl.float16).dtype == np.float16
    assert X.astype(nl.int32).dtype == np.int32 and np.dtype(nl.bool_) == np.bool_
    assert nl.float32.itemsize == 4 and nl.bfloat16.itemsize == 2 and nl.float8_e4m3.itemsize == 1
    # numpy has no bfloat16 of its own: without ml_dtypes, neuronsim's (tests/python/test_nki_bf16_dtype.py)
    assert np.dtype(nl.bfloat16).name == "bfloat16" and np.dtype(nl.bfloat16).itemsize == 2

    def kernel(x):
        t = nl.load(x)
        assert str(t.dtype) == "float32" and t.dtype == nl.float32 and t.itemsize == 4 and t.size == 128 * 32
        out = nl.ndarray(x.shape, getattr(nl, str(t.dtype)), buffer=nl.shared_hbm)
        c = nl.copy(t, dtype=nl.bfloat16)
        assert c.dtype == nl.bfloat16 and str(c.dtype) == "bfloat16"
        nl.store(out, t)
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), X)


def test_nki_dtype_is_the_type_of_the_dtypes_for_annotations():
    def helper(dtype: nki.dtype = nl.bfloat16):
        return dtype
    assert isinstance(helper(), nki.dtype) and isinstance(nl.float32, nl.DType)


def _served(module, generation):
    nki.install()
    name = module if generation == "current" else "neuronxcc." + module
    return importlib.import_module(name)


ENUM_ROWS = [r for r in json.loads(REFERENCE.read_text())["names"] if r["kind"] == "enum"]


@pytest.mark.parametrize("row", ENUM_ROWS, ids=[f"{r['generation']}-{r['name']}" for r in ENUM_ROWS])
def test_enums_have_the_reference_members_and_values_per_generation(row):
    assert row["name"] in ("engine", "reduce_cmd", "dge_mode", "oob_mode", "matmul_perf_mode", "nc_version",
                           "dma_engine", "MemoryRegion")
    enum = getattr(_served(row["module"], row["generation"]), row["name"])
    for member, value in row["members"].items():
        assert getattr(enum, member).value == value, (row["generation"], row["name"], member)
    hash(getattr(enum, next(iter(row["members"]))))


def test_dge_mode_follows_each_generation_and_constants_submodules_import():
    nki.install()
    from nki.isa.constants import dge_mode, matmul_perf_mode, oob_mode  # the NKI Library's imports
    import neuronxcc.nki.isa as legacy_isa
    from neuronxcc.nki.language.constants import sizeinbytes
    assert (dge_mode.none.value, legacy_isa.dge_mode.none.value) == (3, 0)
    assert legacy_isa.tensor_copy is nisa.tensor_copy and oob_mode.skip.value == 1
    assert matmul_perf_mode.double_row == "double_row"
    assert sizeinbytes(nl.bfloat16) == 2 and sizeinbytes(nl.float32) == 4
    assert sys.modules["nki.isa.constants"].engine is nisa.engine
    assert nisa.vector_engine is nisa.engine.vector and nisa.tensor_engine == 1
    assert nisa.unknown_engine is nisa.engine.unknown and nisa.unknown_engine.bir is None  # the simulator's choice
    # the BIR each lowers to (isa/tables/enums.def): Engine, EngineAccumulationType
    assert [e.bir for e in (nisa.engine.tensor, nisa.engine.vector, nisa.engine.scalar, nisa.engine.gpsimd)] == \
        ["PE", "DVE", "Activation", "Pool"]
    assert nisa.reduce_cmd.reset_reduce.bir == "ZeroAccumulate" and nisa.reduce_cmd.load_reduce.bir == "LoadAccumulate"
    assert nisa.dma_engine.gpsimd_dma > nisa.dma_engine.dma


def test_tile_size_has_the_documented_values():
    ts = nl.tile_size
    assert (ts.pmax, ts.psum_fmax, ts.psum_bank_fmax, ts.psum_bank_fmax_bytes, ts.psum_num_banks) == \
        (128, 512, 512, 2048, 8)
    assert (ts.gemm_stationary_fmax, ts.gemm_moving_fmax, ts.bn_stats_fmax) == (128, 512, 512)
    assert ts.psum_fmax == ts.gemm_moving_fmax  # as the NKI Library asserts
    # SBUF: trn1's usable bytes per partition (the lowering's budget) and the whole 24 MiB (reference neuron-arch.md
    # 1.4), no number in the NKI docs
    assert ts.sbuf_fmax_bytes == ts.total_available_sbuf_size == 180224 and ts.sbuf_fmax == 180224 // 4
    assert ts.sbuf_size_bytes == 24 * 2 ** 20 and isinstance(ts, nl._TileSize)
    with pytest.raises(nki.Unsupported, match="gives no value"):
        ts.sbuf_min_align


@pytest.mark.parametrize("arch, gen", [("trn1", 2), ("trn2", 3), ("trn3", 4)])
def test_get_nc_version_is_the_traced_architecture_and_nc_version_is_ordered(arch, gen):
    seen = []

    def kernel(x):
        v = nisa.get_nc_version()
        seen.append(v)
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        nl.store(out, nl.multiply(t, 2.0) if v >= nisa.nc_version.gen3 else t)
        return out
    got = nki.simulate(kernel, X, arch=arch)
    assert seen == [nisa.nc_version(gen)]
    np.testing.assert_array_equal(got, X * 2 if gen >= 3 else X)
    nki.to_bir(kernel, X, arch=arch)
    assert seen[-1] == gen


def test_platform_target_option_picks_the_architecture():
    seen = []

    @nki.jit(platform_target="trn2")
    def kernel(x):
        seen.append(nisa.get_nc_version())
        return copy_kernel(x)
    np.testing.assert_array_equal(kernel(X), X)
    assert seen == [nisa.nc_version.gen3]


@dataclasses.dataclass
class TileConfig(nl.NKIObject):
    rows: int
    cols: int = 32


class Scaling(nl.NKIObject):
    """A configuration object the library's way: annotated fields, keyword construction, no @dataclass."""
    factor: float
    shift: float = 0.0

    def __post_init__(self):
        assert self.factor != 0


@dataclasses.dataclass
class Section(nl.NKIObject):
    """Fields as plain class attributes under @dataclass: keywords all the same, as NKI takes them."""
    index = None
    offset = 0


def test_nkiobject_subclasses_are_built_like_dataclasses():
    assert (Section(index=2, offset=5).index, Section(index=1).offset, Section().index) == (2, 0, None)
    s = Scaling(factor=3.0)
    assert (s.factor, s.shift) == (3.0, 0.0) and Scaling(2.0, 1.0).shift == 1.0
    with pytest.raises(AssertionError):
        Scaling(factor=0)
    cfg = TileConfig(128)

    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x[0:cfg.rows, 0:cfg.cols])
        nl.store(out, nisa.tensor_scalar(t, nl.multiply, s.factor, op1=nl.add, operand1=s.shift))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), X * np.float32(3))
    assert nisa.NKIObject is nl.NKIObject and isinstance(cfg, nki.collectives.NKIObject)


def test_memory_regions_legacy_constants_and_finfo():
    assert nl.sbuf == nl.MemoryRegion.sbuf == "sbuf" and nl.hbm is nl.MemoryRegion.private_hbm
    assert nl.is_hbm(nl.shared_hbm) and nl.is_on_chip(nl.psum) and not nl.is_sbuf(nl.psum)
    assert nl.fp32.min == nisa.fp32.min == float(np.finfo(np.float32).min) and nl.bfp16.min == -np.inf
    assert nl.finfo(nl.float32).max == np.finfo(np.float32).max
    # bf16 / fp8 limits as the simulator's codecs give them: bf16 max (2 - 2^-7) * 2^127, tiny 2^-126, eps 2^-7;
    # fp8 maxima as the NKI Library's table has them
    bf = nl.finfo(nl.bfloat16)
    assert (bf.max, bf.tiny, bf.eps) == ((2 - 2 ** -7) * 2.0 ** 127, 2.0 ** -126, 2.0 ** -7)
    assert {d: nl.finfo(d).max for d in FP8_MAX} == FP8_MAX and nl.finfo(nl.float8_e4m3).tiny == 2.0 ** -6
    assert nl.static_cast(3.7, nl.int32) == 3 and nl.static_cast(np.array([1.5]), nl.float16).dtype == np.float16

    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        assert t.buffer == nl.sbuf and nl.is_sbuf(t) and nl.is_hbm(x)
        nisa.dma_copy(t, x)
        i = nl.mgrid[0:128, 0:32]
        nl.store(out[i.p, i.x], nisa.affine_select(i.p - i.x >= 0, t, nl.fp32.min))
        return out
    want = np.where(np.arange(128)[:, None] >= np.arange(32)[None, :], X, np.finfo(np.float32).min)
    np.testing.assert_array_equal(nki.simulate(kernel, X), want)


def test_mask_true_and_a_given_tensor_is_true():
    def kernel(x, bias=None):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x, mask=True)
        if bias:  # NKI: a tensor given is true
            t = nl.add(t, nl.load(bias), mask=True)
        nl.store(out, t)
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), X)
    np.testing.assert_array_equal(nki.simulate(kernel, X, X), X + X)

    def never(x):  # mask=False: the call runs nowhere, as a mask that holds for no element (its store is dropped)
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        nl.store(out, t)
        nl.store(out, nl.exp(t), mask=False)
        return out
    np.testing.assert_array_equal(nki.simulate(never, X), X)


def test_simulate_callable_form_and_typing_placeholders():
    run = nki.simulate(copy_kernel)  # the current API: simulate(kernel)(args)
    np.testing.assert_array_equal(run(X), X)
    np.testing.assert_array_equal(nki.simulate_kernel(copy_kernel, X), X)
    ph = nt.tensor[[128, 32], nl.bfloat16]
    doc = nki.to_bir(copy_kernel, ph)
    tensors = {t["name"]: t for t in doc["tensors"]} if "tensors" in doc else None
    assert ph.shape == (128, 32) and ph.dtype == nl.bfloat16
    r = nki.benchmark(copy_kernel, ph, timing_only=True)
    assert r.total_ns > 0 and (tensors is None or tensors["x"]["dtype"] == "bfloat16")


def test_jit_options_and_compiler_directives_leave_the_result_alone():
    @nki.jit(mode="simulation", debug_kernel=True, show_compiler_tb=True, experimental_flags="")
    @ncc.skip_middle_end_transformations
    @ncc.enable_stack_allocator
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        with nl.no_reorder(), ncc.allocation_scope():
            t = nl.ndarray(x.shape, x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(1,)))
            nisa.dma_copy(t, x)
            nl.store(out, nl.exp(t))
        return out
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = kernel(X)
    np.testing.assert_allclose(got, np.exp(X.astype(np.float64)).astype(np.float32), rtol=2 ** -23)
    assert not any("explicit allocation" in str(m.message) for m in w)  # placed as written (test_nki_alloc.py)
    assert nki.baremetal(copy_kernel)(X).shape == X.shape


def test_refused_names_are_values_that_raise_only_when_called():
    table = {nl.atomic_rmw: "atomic_rmw", nisa.topk: "topk", nki.collectives.all_gather: "all_gather"}
    assert table[nisa.topk] == "topk" and nisa.topk is nisa.topk
    nki.install()
    from nki.isa import get_nc_sub_version  # importable
    with pytest.raises(nki.Unsupported, match=r"nisa\.get_nc_sub_version is not lowered.*no documented values"):
        get_nc_sub_version()

    def kernel(x):
        nl.random_seed(nl.load(x))
        return x
    with pytest.raises(nki.Unsupported, match=r"test_nki_names.py:\d+: nl\.random_seed is not lowered.*seed"):
        nki.to_bir(kernel, X)
    assert not hasattr(nl, "no_such_function")  # a name NKI does not have: an AttributeError (and Unsupported)
    with pytest.raises(nki.Unsupported, match="nl.no_such_function is not a name of the NKI API reference"):
        nl.no_such_function


def test_every_dtype_has_its_bir_type_and_size():
    # the BIR dtypes (isa/tables/enums.def) and element sizes; the MX containers hold 4 elements (engines/ops/mx.cpp)
    want = {nl.float32: ("float32", 4), nl.tfloat32: ("float32r", 4), nl.bfloat16: ("bfloat16", 2),
            nl.float16: ("float16", 2), nl.uint32: ("uint32", 4), nl.uint16: ("uint16", 2), nl.uint8: ("uint8", 1),
            nl.int16: ("int16", 2), nl.float8_e8m0fnu: ("float8_e8m0fnu", 1), nl.float8_e5m2_x4: ("float8_e5m2_x4", 4),
            nl.float8_e4m3fn_x4: ("float8_e4m3fn_x4", 4), nl.float4_e2m1fn_x4: ("float4_e2m1fn_x4", 2)}
    assert {d: (d.bir, d.itemsize) for d in want} == want

    def kernel(x):
        out = nl.ndarray(x.shape, nl.uint16, buffer=nl.shared_hbm)
        nl.store(out, nl.copy(nl.load(x), dtype=nl.uint16))
        return out
    xi = np.arange(128 * 4, dtype=np.float32).reshape(128, 4)
    np.testing.assert_array_equal(nki.simulate(kernel, xi), xi.astype(np.uint16))


def test_legacy_tensor_members_nkitensor_and_validation_errors():
    def kernel(x):
        assert isinstance(x, nl.NkiTensor) and isinstance(x, nki.tensor.__class__) is False
        assert (x.shape, x.ndim, x.dtype, x.itemsize, x.name, x.size) == ((128, 32), 2, nl.float32, 4, "x", 4096)
        out = nl.ndarray((64, 64), x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((64, 64), x.dtype, buffer=nl.sbuf)
        t.__setitem__(slice(None), nl.load(x.reshape((64, 64)).__getitem__((slice(0, 64), slice(0, 64)))))
        nl.store(out, t)
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), X.reshape(64, 64))

    def bad(x):
        return nl.load(x[0:200, :])
    with pytest.raises(nisa.NkiValidationError, match="index out of range"):
        nki.to_bir(bad, X)
    assert nt.mutable_tensor[[4, 4], nl.int8].dtype == nl.int8


def test_more_creation_logic_and_grid_calls():
    ints = RNG.integers(0, 4, (128, 8)).astype(np.int32)

    def kernel(x, i):
        a, c, d = (nl.ndarray((128, 8), nl.float32, buffer=nl.shared_hbm) for _ in range(3))
        b = nl.ndarray((128, 8), nl.int32, buffer=nl.shared_hbm)
        e, f = (nl.ndarray((128, 1), nl.float32, buffer=nl.private_hbm) for _ in range(2))
        g = nl.ndarray((128, 8), nl.float32, buffer=nl.shared_hbm)
        ti = nl.load(i)
        nl.store(a, nl.logical_not(ti, dtype=nl.float32))                # i == 0
        nl.store(b, nl.invert(ti))                                       # ~i
        ident = nl.shared_identity_matrix(8, dtype=nl.float32)            # [8, 8] identity in SBUF
        z = nl.empty_like(ident)
        z[...] = nl.multiply(ident, float(nl.program_ndim() + 3))        # 3 on the diagonal (no launch grid)
        blocks = nl.ndarray((2, nl.par_dim(128), 8), nl.float32, buffer=nl.sbuf)
        blocks[1] = nl.load(x[:, 0:8])
        nl.store(c, blocks[1])
        nl.store(d[0:8, :], z)
        nl.store(d[8:128, :], 0.0)
        nl.store(e, nl.all(ti, axis=1, keepdims=True, dtype=nl.float32))  # every element non-zero
        nl.store(f, nl.any(nl.bitwise_not(ti), axis=1, keepdims=True, dtype=nl.float32))  # ~i: never 0 for i >= 0
        nl.store(g, nl.ones((128, 8), nl.float32) + nl.full_like(nl.load(x[:, 0:8]), 2.0))
        return a, b, c, d, e, f, g
    a, b, c, d, e, f, g = nki.simulate(kernel, X, ints)
    np.testing.assert_array_equal(a, (ints == 0).astype(np.float32))
    np.testing.assert_array_equal(b, ~ints)
    np.testing.assert_array_equal(c, X[:, 0:8])
    np.testing.assert_array_equal(d, np.vstack([3 * np.eye(8), np.zeros((120, 8))]).astype(np.float32))
    np.testing.assert_array_equal(e[:, 0], np.all(ints != 0, axis=1).astype(np.float32))
    np.testing.assert_array_equal(f, np.ones((128, 1), np.float32))
    np.testing.assert_array_equal(g, np.full((128, 8), 3.0, np.float32))
    assert nl.is_psum(nl.psum) and not nl.is_psum(nl.sbuf)


def test_compiler_allocations_of_both_memories_are_placed_by_neuronsim():
    @ncc.force_auto_alloc
    def kernel(x, y):
        out = nl.ndarray((32, 32), nl.float32, buffer=nl.shared_hbm)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = nl.ndarray((128, 32), nl.float32, buffer=ncc.sbuf.alloc(lambda idx, pdim, fdim: (0, 0)))
            b = nl.ndarray((128, 32), nl.float32, buffer=ncc.sbuf.auto_alloc())
            p = nl.ndarray((32, 32), nl.float32, buffer=ncc.psum.mod_alloc(base_bank=0))
            q = nl.ndarray((32, 32), nl.float32, buffer=ncc.psum.auto_alloc())
            r = nl.ndarray((32, 32), nl.float32, buffer=ncc.psum.alloc(lambda idx, pdim, fdim: (0, 0)))
        nisa.dma_copy(a, x)
        nisa.dma_copy(b, y)
        p[...] = nisa.nc_matmul(a, b)
        q[...] = nisa.nc_matmul(b, a)
        r[...] = nl.add(p, nl.copy(q))
        nl.store(out, r)
        return out
    kernel = ncc.multi_buffer(2)(kernel)
    y = RNG.uniform(-1, 1, (128, 32)).astype(np.float32)
    want = X.T.astype(np.float64) @ y + y.T.astype(np.float64) @ X
    np.testing.assert_allclose(nki.simulate(kernel, X, y), want, rtol=1e-5, atol=1e-4)


def test_all_reduce_across_the_cores_of_a_logical_core():
    def kernel(x):
        y = nl.ndarray((128, 8), x.dtype, buffer=nl.shared_hbm)
        s = nl.program_id(0)  # the shard id along the nl.nc(2) axis
        t = nl.load(x[nl.ds(s * 128, 128), :])
        r = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
        nki.collectives.all_reduce(srcs=[t], dsts=[r], replica_group=nki.collectives.ReplicaGroup([[0, 1]]),
                                   op=nl.add)
        nl.store(y, r)
        return y
    x = RNG.uniform(-1, 1, (256, 8)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(nki.jit(kernel)[nl.nc(2)], x), x[:128] + x[128:])


def test_mgrid_free_indices_and_a_loop_condition_anded_with_a_python_bool():
    def kernel(x):
        out = nl.ndarray((128, 4, 8), x.dtype, buffer=nl.shared_hbm)
        g = nl.mgrid[0:128, 0:4, 0:8]
        nl.store(out[g.p, g.x, g.y], nl.load(x[g.p, g.x * 8 + g.y]))
        return out
    np.testing.assert_array_equal(nki.simulate(kernel, X), X.reshape(128, 4, 8))

    def halves(x):
        out = nl.ndarray((128, 32), x.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(4):
            t = nl.load(x[:, nl.ds(i * 8, 8)])
            if (i < 2) & True:  # a loop condition with a Python bool: traced again with the loop unrolled
                t = nl.negative(t)
            nl.store(out[:, nl.ds(i * 8, 8)], t)
        return out
    with pytest.warns(UserWarning, match="unrolled"):
        got = nki.simulate(halves, X)
    np.testing.assert_array_equal(got, np.hstack([-X[:, :16], X[:, 16:]]))


def grid_all_reduce(op, dtype=None):
    """Program s of an nl.nc(2) axis (core s) loads rows [128 s, 128 s + 128) of x [256, 8] and returns the legacy
    nl.all_reduce of it over axis 0 (both cores store the same result)."""
    def kernel(x):
        y = nl.ndarray((128, 8), np.float32, buffer=nl.shared_hbm)
        t = nl.load(x[nl.ds(nl.program_id(0) * 128, 128), :])
        nl.store(y, nl.copy(nl.all_reduce(t, op, program_axes=0, dtype=dtype), dtype=np.float32))
        return y
    return kernel


@pytest.mark.parametrize("op, ref", [(np.add, np.add), (np.maximum, np.maximum), (np.minimum, np.minimum)])
def test_legacy_all_reduce_over_an_nc_axis_reduces_across_its_cores(op, ref):
    x = RNG.uniform(-1, 1, (256, 8)).astype(np.float32)
    got = nki.simulate(nki.jit(grid_all_reduce(op))[nl.nc(2)], x)
    np.testing.assert_array_equal(got, ref(x[:128], x[128:]))


def test_legacy_all_reduce_over_a_plain_grid_axis_says_why_it_is_refused():
    """kernel[2]: the two programs run one after the other on one core; an axis of one program reduces nothing."""
    x = RNG.uniform(-1, 1, (256, 8)).astype(np.float32)
    with pytest.raises(nki.Unsupported) as e:
        nki.simulate(nki.jit(grid_all_reduce(np.add), generation="legacy")[2], x)
    assert "one after the other on one core" in str(e.value) and "nl.nc(n)" in str(e.value)
    np.testing.assert_array_equal(nki.simulate(nki.jit(grid_all_reduce(np.add), generation="legacy")[1], x),
                                  x[:128])
