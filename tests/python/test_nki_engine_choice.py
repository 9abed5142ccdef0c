"""The engine NKI documents for a tensor_tensor left to the compiler (python/neuronsim/nki/engine_choice.py; public NKI
docs, nki.isa.tensor_tensor): int32 / uint32 add, subtract and multiply on GpSimd unless an operand is in PSUM, power
always on GpSimd, everything else on the Vector Engine; an engine the kernel names is kept."""
import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(4040)
# Large int32 values: their sums are not representable in fp32 (above 2^24), so a float path would round them.
A = RNG.integers(-(2 ** 29), 2 ** 29, (128, 64), dtype=np.int64).astype(np.int32) | 1
B = RNG.integers(-(2 ** 29), 2 ** 29, (128, 64), dtype=np.int64).astype(np.int32)


def engines_of(kernel, *args, opcode="TensorTensor", arch=None):
    out = []

    def walk(insts):
        for i in insts:
            for b in i.get("blocks", []):
                walk(b["instructions"])
            if i["opcode"] == opcode:
                out.append(i.get("engine", "Unassigned"))
    for f in nki.to_bir(kernel, *args, arch=arch)["functions"]:
        for b in f["blocks"]:
            walk(b["instructions"])
    return out


def int_add(engine=None):
    def kernel(a, b):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        s = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(s, nl.load(a), nl.load(b), nl.add, **({} if engine is None else {"engine": engine}))
        nl.store(out, s)
        return out
    return kernel


def test_int32_add_left_to_the_compiler_runs_on_gpsimd_exactly():
    assert engines_of(int_add(), A, B) == ["Pool"]
    assert engines_of(int_add(nisa.unknown_engine), A, B) == ["Pool"]
    got = nki.simulate(int_add(), A, B)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, (A.astype(np.int64) + B).astype(np.int32))


def test_an_engine_the_kernel_names_is_kept():
    assert engines_of(int_add(nisa.vector_engine), A, B) == ["DVE"]


@pytest.mark.parametrize("op, np_op", [(nl.subtract, np.subtract), (nl.multiply, np.multiply)])
def test_int32_subtract_and_multiply_and_the_language_form_run_on_gpsimd(op, np_op):
    small_a, small_b = A >> 16, B >> 16  # products within int32

    def kernel(a, b):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        nl.store(out, op(nl.load(a), nl.load(b)))  # nl.subtract / nl.multiply: a tensor_tensor of the compiler's
        return out
    assert engines_of(kernel, small_a, small_b) == ["Pool"]
    np.testing.assert_array_equal(nki.simulate(kernel, small_a, small_b), np_op(small_a, small_b))


def test_int32_max_float_add_and_mixed_dtypes_stay_on_the_vector_engine():
    def int_max(a, b):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_tensor(nl.load(a), nl.load(b), np.maximum))
        return out
    assert engines_of(int_max, A, B) == ["Unassigned"]
    np.testing.assert_array_equal(nki.simulate(int_max, A, B), np.maximum(A, B))
    xf, yf = A.astype(np.float32), B.astype(np.float32)
    assert engines_of(int_add(), xf, yf) == ["Unassigned"]

    def to_float(a, b):  # int32 inputs, fp32 output: not all int32
        out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_tensor(nl.load(a), nl.load(b), nl.add, dtype=nl.float32))
        return out
    assert engines_of(to_float, A, B) == ["Unassigned"]


def test_int32_add_with_a_psum_operand_falls_back_to_the_vector_engine():
    def kernel(a, b):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        p = nl.ndarray(a.shape, a.dtype, buffer=nl.psum)
        nisa.tensor_tensor(p, nl.load(a), nl.load(b), nl.add)
        nl.store(out, nl.copy(p))
        return out
    assert engines_of(kernel, A >> 8, B >> 8) == ["Unassigned"]
    np.testing.assert_array_equal(nki.simulate(kernel, A >> 8, B >> 8), (A >> 8) + (B >> 8))


def test_power_runs_on_gpsimd_and_a_psum_operand_is_refused():
    x = RNG.uniform(0.5, 2.0, (128, 32)).astype(np.float32)
    y = RNG.uniform(-2.0, 2.0, (128, 32)).astype(np.float32)

    def kernel(a, b):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_tensor(nl.load(a), nl.load(b), nl.power))
        return out
    assert engines_of(kernel, x, y) == ["Pool"]
    np.testing.assert_allclose(nki.simulate(kernel, x, y), np.power(x.astype(np.float64), y), rtol=1e-5)

    def from_psum(a, b):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        p = nl.ndarray(a.shape, a.dtype, buffer=nl.psum)
        nisa.tensor_copy(p, nl.load(a))
        nl.store(out, nisa.tensor_tensor(p, nl.load(b), nl.power))  # line 109
        return out
    with pytest.raises(nki.KernelError, match=r"test_nki_engine_choice.py:109: .*power runs on the GpSimd Engine, "
                                              r"which cannot access PSUM"):
        nki.to_bir(from_psum, x, y)


def scalar_op_kernel(engine, op0, op1=None):
    def kernel(a):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        more = {} if op1 is None else {"op1": op1, "operand1": 0.25}
        nl.store(out, nisa.tensor_scalar(nl.load(a), op0, 2.0, engine=engine, **more))
        return out
    return kernel


X = RNG.uniform(0.5, 2.0, (128, 32)).astype(np.float32)


def test_tensor_scalar_on_gpsimd_is_rsqrt_only():
    got = nki.simulate(scalar_op_kernel(nisa.gpsimd_engine, nl.rsqrt), X)
    np.testing.assert_allclose(got, 1 / np.sqrt(X.astype(np.float64)), rtol=1e-6)
    assert engines_of(scalar_op_kernel(nisa.gpsimd_engine, nl.rsqrt), X, opcode="TensorScalarPtr") == ["Pool"]
    with pytest.raises(nki.KernelError, match=r"op0=add, op1=None on the GpSimd Engine: GpSimd runs tensor_scalar "
                                              r"for rsqrt only"):
        nki.to_bir(scalar_op_kernel(nisa.gpsimd_engine, nl.add), X)


@pytest.mark.parametrize("op0, op1, np_ops", [(nl.multiply, nl.add, lambda x: x * 2.0 + 0.25),
                                              (nl.multiply, None, lambda x: x * 2.0),
                                              (nl.add, None, lambda x: x + 2.0)])
def test_tensor_scalar_on_the_scalar_engine_of_trn2_takes_its_three_pairs(op0, op1, np_ops):
    kernel = scalar_op_kernel(nisa.scalar_engine, op0, op1)
    np.testing.assert_allclose(nki.simulate(kernel, X, arch="trn2"), np_ops(X.astype(np.float64)), rtol=1e-6)
    assert engines_of(kernel, X, opcode="TensorScalarPtr", arch="trn2") == ["Activation"]


def test_tensor_scalar_on_the_scalar_engine_outside_what_nki_documents_is_refused():
    # trn2 takes three pairs: (add, multiply) is not one of them.
    with pytest.raises(nki.KernelError, match=r"op0=add, op1=mult on the Scalar Engine: on trn2 the Scalar Engine "
                                              r"takes \(multiply, add\), \(multiply, none\) or \(add, none\) only"):
        nki.to_bir(scalar_op_kernel(nisa.scalar_engine, nl.add, nl.multiply), X, arch="trn2")
    # trn1's ScalarE neither adds nor multiplies in tensor_scalar; trn3's does, in any pair.
    with pytest.raises(nki.KernelError, match=r"op0=mult, op1=add on the Scalar Engine: the Scalar Engine adds and "
                                              r"multiplies from NeuronCore-v3 \(trn2\) on; this kernel is traced for "
                                              r"trn1"):
        nki.to_bir(scalar_op_kernel(nisa.scalar_engine, nl.multiply, nl.add), X, arch="trn1")
    np.testing.assert_allclose(nki.simulate(scalar_op_kernel(nisa.scalar_engine, nl.add, nl.multiply), X,
                                            arch="trn3"), (X.astype(np.float64) + 2.0) * 0.25, rtol=1e-6)
    # Max, subtract and comparisons are the Vector Engine's on trn1 / trn2 (the operator table's generations),
    # bit-vector ops on every generation.
    np.testing.assert_array_equal(nki.simulate(scalar_op_kernel(nisa.scalar_engine, nl.maximum), X, arch="trn3"),
                                  np.maximum(X, 2.0))
    for op0, name, arch, x in ((nl.maximum, "max", "trn2", X), (nl.subtract, "subtract", "trn1", X),
                               (nl.greater, "is_gt", "trn2", X),
                               (nl.bitwise_and, "bitwise_and", "trn3", (X * 100).astype(np.int32))):
        with pytest.raises(nki.KernelError, match=rf"op0={name}, op1=None on the Scalar Engine: bit-vector, "
                                                  r"comparison and logical operators, max, min and subtract run on "
                                                  r"the Vector Engine only"):
            nki.to_bir(scalar_op_kernel(nisa.scalar_engine, op0), x, arch=arch)


def reciprocal_kernel(engine=None):
    def kernel(a):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        r = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
        nisa.reciprocal(r, nl.load(a), **({} if engine is None else {"engine": engine}))
        nl.store(out, r)
        return out
    return kernel


def test_reciprocal_takes_the_engine_the_kernel_names():
    """nisa.reciprocal runs on VectorE (max(MIN_II, 8N) cycles) or, with engine=scalar, on ScalarE (N): public NKI
    docs, nki.isa.reciprocal. trn1 clocks DVE 1.12 GHz, ACT 1.4 GHz (calibration.md): for N = 4096 the two differ by
    8 * 4096 / 1.12 - 4096 / 1.4 = 26,331 ns, less the ~1.3 us activation-table load ACT pays first (calibration.md
    E1)."""
    x = RNG.uniform(0.5, 2.0, (128, 4096)).astype(np.float32)
    assert engines_of(reciprocal_kernel(), x, opcode="Reciprocal") == ["Unassigned"]
    assert engines_of(reciprocal_kernel(nisa.vector_engine), x, opcode="Reciprocal") == ["Unassigned"]
    assert engines_of(reciprocal_kernel(nisa.scalar_engine), x, opcode="Activation") == ["Unassigned"]
    for engine in (None, nisa.scalar_engine):
        np.testing.assert_allclose(nki.simulate(reciprocal_kernel(engine), x), 1 / x.astype(np.float64), rtol=2e-7)
    dve = nki.benchmark(reciprocal_kernel(), x, timing_only=True).total_ns
    act = nki.benchmark(reciprocal_kernel(nisa.scalar_engine), x, timing_only=True).total_ns
    assert 26331 - 1500 < dve - act < 26331
    with pytest.raises(nki.KernelError, match=r"nisa.reciprocal: engine=.*gpsimd.*: it runs on the Scalar or the "
                                              r"Vector Engine"):
        nki.to_bir(reciprocal_kernel(nisa.gpsimd_engine), x)


def test_dma_copy_is_triggered_from_the_engine_the_kernel_names_on_that_engines_queue():
    """nisa.dma_copy(engine=...): every engine's sequencer triggers DMAs (reference neuron-arch.md 1.1), each on the
    queue of its engine and type (docs/timing-model.md 2.4: q<Engine>IO0 from a kernel input, IO1 into an output);
    without one, loads go from SP on qSyncIO0 and stores from GpSimd on qGpSimdIO1 (docs/timing-model.md 6)."""
    x = RNG.uniform(-1, 1, (128, 512)).astype(np.float32)

    def copy(load_engine, store_engine):
        def kernel(a):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(t, a, **({} if load_engine is None else {"engine": load_engine}))
            nisa.dma_copy(out, t, **({} if store_engine is None else {"engine": store_engine}))
            return out
        return kernel
    for engines, queues, triggers in (((None, None), ["qSyncIO0", "qGpSimdIO1"], {"SP": 1, "POOL": 1}),
                                      ((nisa.engine.unknown, nisa.engine.dma), ["qSyncIO0", "qGpSimdIO1"],
                                       {"SP": 1, "POOL": 1}),
                                      ((nisa.scalar_engine, nisa.engine.vector), ["qScalarIO0", "qVectorIO1"],
                                       {"ACT": 1, "DVE": 1})):
        kernel = copy(*engines)
        np.testing.assert_array_equal(nki.simulate(kernel, x), x)
        stats = nki.benchmark(kernel, x, timing_only=True).stats
        assert [q["name"] for q in stats["dma"]["queues"]] == queues
        assert {e: n["instructions"] for e, n in stats["engines"].items() if n["instructions"]} == triggers
