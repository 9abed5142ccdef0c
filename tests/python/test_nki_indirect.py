"""NkiTensor.indirect (public NKI docs, the NkiTensor page, "Tensor Indirection", NeuronCore-v4 and later) on the
simulator against numpy: a [P, n] view whose column i is t[:, off_i], off_i = index[i % G, i // G], G = 16 for an
instruction of the vector, scalar or gpsimd engine and 32 for the tensor engine; read, it gathers, written, it
scatters. trn1 and trn2 refuse it, naming the generation."""
import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(3737)


def offsets(idx, n, group):
    """The page's snake order: offset i is idx[i % group, i // group]."""
    return [int(idx[i % group, i // group]) for i in range(n)]


def gather_on(engine, n):
    def kernel(a, idx):
        out = nl.ndarray((a.shape[0], n), nl.float32, buffer=nl.shared_hbm)
        r = nl.ndarray((a.shape[0], n), nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=r, src=nl.load(a).indirect(nl.load(idx), n), engine=engine)
        nl.store(out, r)
        return out
    return kernel


@pytest.mark.parametrize("engine", [nisa.engine.vector, nisa.engine.scalar, nisa.engine.gpsimd])
def test_indirect_gathers_columns_in_groups_of_16_on_vector_scalar_gpsimd(engine):
    """32 partitions, index [32, 3]: 40 columns read idx[0..15, 0], idx[0..15, 1], idx[0..7, 2] (G = 16), not the
    order G = 32 would give (idx[0..31, 0], idx[0..7, 1])."""
    a = RNG.uniform(-1, 1, (32, 96)).astype(np.float32)
    idx = RNG.integers(0, 96, (32, 3)).astype(np.int32)
    got = nki.simulate(gather_on(engine, 40), a, idx, arch="trn3")
    np.testing.assert_array_equal(got, a[:, offsets(idx, 40, 16)])
    assert offsets(idx, 40, 16) != offsets(idx, 40, 32)


def matmul_gather(w, x, idx):
    """PSUM [16, 40] = w[64, 16].T @ x[64, :] columns off_i (the moving operand indirected: G = 32)."""
    out = nl.ndarray((16, 40), nl.float32, buffer=nl.shared_hbm)
    p = nisa.nc_matmul(nl.load(w), nl.load(x).indirect(nl.load(idx), 40))
    nl.store(out, nl.copy(p))
    return out


def test_indirect_gathers_in_groups_of_32_for_the_tensor_engine():
    w = RNG.uniform(-1, 1, (64, 16)).astype(np.float32)
    x = RNG.uniform(-1, 1, (64, 128)).astype(np.float32)
    idx = RNG.integers(0, 128, (64, 2)).astype(np.int32)
    got = nki.simulate(matmul_gather, w, x, idx, arch="trn3")
    np.testing.assert_allclose(got, w.T.astype(np.float64) @ x[:, offsets(idx, 40, 32)], rtol=1e-5, atol=1e-5)


def scatter(a, idx):
    """t = a in SBUF; t.indirect(idx, 20) = exp(a[:, :20]) (ScalarE, G = 16): column j of the result lands at
    column off_j of t; t returned."""
    out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    nisa.activation(dst=t.indirect(nl.load(idx), 20), op=nl.exp, data=nl.load(a[:, 0:20]))
    nl.store(out, t)
    return out


def test_indirect_as_a_destination_scatters_the_columns():
    a = RNG.uniform(-1, 1, (16, 64)).astype(np.float32)
    idx = np.stack([RNG.permutation(64)[:2] for _ in range(16)]).astype(np.int32)  # [16, 2]
    offs = offsets(idx, 20, 16)
    want = a.copy()
    for j, off in enumerate(offs):  # in column order: a repeated offset keeps the last column written
        want[:, off] = np.exp(a[:, j])
    np.testing.assert_allclose(nki.simulate(scatter, a, idx, arch="trn3"), want, rtol=1e-6, atol=0)


@pytest.mark.parametrize("arch, gen", [("trn1", "NeuronCore-v2"), ("trn2", "NeuronCore-v3")])
def test_indirect_is_refused_before_neuroncore_v4(arch, gen):
    with pytest.raises(nki.Unsupported) as e:
        nki.simulate(gather_on(nisa.engine.vector, 16), np.zeros((16, 32), np.float32),
                     np.zeros((16, 1), np.int32), arch=arch)
    assert "NeuronCore-v4" in str(e.value) and gen in str(e.value)


def test_indirect_checks_that_the_offsets_lie_in_the_index_tile():
    """16 partitions, index [16, 1]: 20 columns need idx[3, 1] in groups of 16."""
    with pytest.raises(nki.KernelError) as e:
        nki.simulate(gather_on(nisa.engine.vector, 20), np.zeros((16, 32), np.float32),
                     np.zeros((16, 1), np.int32), arch="trn3")
    assert "groups of 16" in str(e.value) and "index[15, 1]" in str(e.value)


def matmul_into_indirect(w, x, idx):
    p = nl.ndarray((16, 64), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(p.indirect(nl.load(idx), 16), nl.load(w), nl.load(x))
    return p


def sliced(a, idx):
    r = nl.ndarray((16, 8), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=nl.load(a).indirect(nl.load(idx), 16)[:, 0:8])
    return r


@pytest.mark.parametrize("kernel, message", [(matmul_into_indirect, "matmul"), (sliced, "a slice")])
def test_indirect_refuses_what_it_does_not_lower(kernel, message):
    """A matmul accumulating into an indirection view (its PSUM accumulation group) and a slice of one."""
    args = {matmul_into_indirect: (np.zeros((8, 16), np.float32), np.zeros((8, 16), np.float32),
                                   np.zeros((16, 1), np.int32)),
            sliced: (np.zeros((16, 32), np.float32), np.zeros((16, 1), np.int32))}[kernel]
    with pytest.raises(nki.Unsupported) as e:
        nki.simulate(kernel, *args, arch="trn3")
    assert message in str(e.value)
