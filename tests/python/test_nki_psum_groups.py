"""A matmul summed with `+=` (or nc_matmul(dst, ...) with accumulate=None) into PSUM that nothing wrote, two or more
loop levels below the tile's declaration, its region moved by none of those loops: NKI nc_matmul, "Accumulation
mode" -- the first write of a PSUM location overwrites, later ones accumulate -- so the group starts on the first
trip of all those loops (the front end peels that trip at every level, docs/nki-lowering.md 3). Each kernel first
fills all 8 PSUM banks with large values from an earlier tile, so the sum lands on a bank that held data: a group
that did not start would show that data in the result (and the sanitizer, seeing the bank written, would not say
so). Each result against numpy, each sanitized run without findings."""
import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl
from test_nki_isa_matmul import matmults

RNG = np.random.default_rng(38)
RANGES = {"affine": nl.affine_range, "sequential": nl.sequential_range, "static": nl.static_range}


def fill_psum(g):
    """Writes 2 * g into every PSUM bank (a block tensor of 8 banks, all live between its two loops) and returns the
    sum of the blocks, an SBUF tile: the banks then hold data that a later tile placed there must not add to."""
    gs = nl.load(g)
    t = nl.ndarray((8, nl.par_dim(128), 512), nl.float32, buffer=nl.psum)
    for j in nl.affine_range(8):
        t[j] = nl.multiply(gs, 2.0)
    s = nl.zeros((128, 512), nl.float32, buffer=nl.sbuf)
    for j in nl.sequential_range(8):
        s[...] = nl.add(s, t[j])
    return s


def nested_sum(a, b, g, kinds=("affine", "affine"), form="+="):
    """out = sum over the leading len(kinds) axes of a[..., :, :].T @ b[..., :, :], one PSUM tile declared above the
    loop nest (kinds: its loops, outermost first); junk = 16 g, what the earlier tile left in PSUM."""
    out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
    junk = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
    nl.store(junk, value=fill_psum(g))
    acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)

    def add(x, y):
        if form == "+=":
            acc[...] += nisa.nc_matmul(x, y)
        elif form == "nl.matmul":
            acc[...] += nl.matmul(x, y, transpose_x=True)
        else:
            nisa.nc_matmul(acc, x, y)  # accumulate=None, the dst= form

    def nest(idx, depth):
        for t in RANGES[kinds[depth]](a.shape[depth]):
            if depth + 1 < len(kinds):
                nest(idx + (t,), depth + 1)
            else:
                add(nl.load(a[idx + (t,)]), nl.load(b[idx + (t,)]))
    nest((), 0)
    nl.store(out, value=nl.copy(acc))
    return out, junk


def run(kernel, a, b, **kw):
    g = RNG.uniform(100, 200, (128, 512)).astype(np.float32)
    r = nki.benchmark(kernel, a, b, g, sanitize=True, **kw)
    np.testing.assert_allclose(r.outputs["junk"], 16 * g, rtol=1e-6)
    return r


def operands(*lead):
    return (RNG.uniform(-1, 1, lead + (128, 128)).astype(np.float32),
            RNG.uniform(-1, 1, lead + (128, 512)).astype(np.float32))


def want(a, b):
    """The sum over the leading axes of each pair's a.T @ b."""
    return sum(x.T @ y for x, y in zip(a.reshape(-1, 128, 128), b.reshape(-1, 128, 512)))


def starts(kernel, a, b, **kw):
    """start_tensor_calc of each Matmult of the kernel's BIR, in program order."""
    g = nki.tensor((128, 512))
    return [i["start_tensor_calc"] for i in matmults(nki.to_bir(kernel, a, b, g, **kw))]


@pytest.mark.parametrize("lead", [(2, 4), (3, 5), (2, 2, 3)])
def test_the_group_starts_on_the_first_trip_of_every_loop(lead):
    a, b = operands(*lead)
    kinds = ("affine",) * len(lead)
    r = run(nested_sum, a, b, kinds=kinds)
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["out"], want(a, b), rtol=1e-4, atol=1e-3)
    # One matmul starts the group -- the first trip of every loop, peeled at each level -- and the rest accumulate.
    s = starts(nested_sum, a, b, kinds=kinds)
    assert s[0] is True and s.count(True) == 1


@pytest.mark.parametrize("kinds", [("sequential", "affine"), ("affine", "sequential"), ("static", "affine"),
                                   ("affine", "static"), ("sequential", "static", "affine")])
def test_sequential_and_static_ranges(kinds):
    a, b = operands(*(2, 3, 2)[:len(kinds)])
    r = run(nested_sum, a, b, kinds=kinds)
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["out"], want(a, b), rtol=1e-4, atol=1e-3)
    assert starts(nested_sum, a, b, kinds=kinds).count(True) == 1


@pytest.mark.parametrize("form", ["nl.matmul", "dst="])
def test_nl_matmul_and_the_dst_form(form):
    a, b = operands(2, 3)
    r = run(nested_sum, a, b, form=form)
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["out"], want(a, b), rtol=1e-4, atol=1e-3)


def masked_k(a, b, g, head=0):
    """a [2, K, 128], b [2, K, 512], K not a multiple of 128: the inner loop walks K in tiles of 128 loaded into
    zeroed tiles, the last one under a mask (a tail trip: the loop plan peels it, loop_plan.py); head > 0 masks the
    first head rows of the first tile too (a peeled first trip, whose matmul starts the group)."""
    out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
    junk = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
    nl.store(junk, value=fill_psum(g))
    acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
    K = a.shape[1]
    ip = nl.arange(128)[:, None]
    im, i_n = nl.arange(128)[None, :], nl.arange(512)[None, :]
    for i in nl.affine_range(a.shape[0]):
        for k in nl.affine_range((K + 127) // 128):
            keep = (k * 128 + ip < K) & (k * 128 + ip >= head)
            x = nl.zeros((128, 128), nl.float32, buffer=nl.sbuf)
            y = nl.zeros((128, 512), nl.float32, buffer=nl.sbuf)
            x[ip, im] = nl.load(a[i, k * 128 + ip, im], mask=keep)
            y[ip, i_n] = nl.load(b[i, k * 128 + ip, i_n], mask=keep)
            acc[...] += nisa.nc_matmul(x, y)
    nl.store(out, value=nl.copy(acc))
    return out, junk


@pytest.mark.parametrize("head", [0, 32])
def test_a_masked_tail_or_first_trip(head):
    K = 3 * 128 + 40
    a = RNG.uniform(-1, 1, (2, K, 128)).astype(np.float32)
    b = RNG.uniform(-1, 1, (2, K, 512)).astype(np.float32)
    r = run(masked_k, a, b, head=head)
    assert r.findings == []
    w = np.einsum("ikm,ikn->mn", a[:, head:], b[:, head:])
    np.testing.assert_allclose(r.outputs["out"], w, rtol=1e-4, atol=1e-3)


def blocks_per_q(a, b, g):
    """The region case: acc[q] (a block per q trip, nothing zeroes it) summed over two loops inside the q loop."""
    nq = a.shape[0]
    out = nl.ndarray((nq, 128, 512), nl.float32, buffer=nl.shared_hbm)
    junk = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
    nl.store(junk, value=fill_psum(g))
    acc = nl.ndarray((nq, nl.par_dim(128), 512), nl.float32, buffer=nl.psum)
    for q in nl.affine_range(nq):
        for i in nl.affine_range(a.shape[1]):
            for k in nl.affine_range(a.shape[2]):
                acc[q, :, :] += nisa.nc_matmul(nl.load(a[q, i, k]), nl.load(b[q, i, k]))
        nl.store(out[q], value=nl.copy(acc[q, :, :]))
    return out, junk


def test_a_region_of_the_outer_loop_summed_over_two_loops_inside():
    a, b = operands(3, 2, 3)
    r = run(blocks_per_q, a, b)
    assert r.findings == []
    w = np.stack([want(a[q], b[q]) for q in range(3)])
    np.testing.assert_allclose(r.outputs["out"], w, rtol=1e-4, atol=1e-3)


def explicit_accumulate(a, b):
    out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
    for i in nl.affine_range(a.shape[0]):
        for k in nl.affine_range(a.shape[1]):
            nisa.nc_matmul(acc, nl.load(a[i, k]), nl.load(b[i, k]), accumulate=True)
    nl.store(out, value=nl.copy(acc))
    return out


def test_explicit_accumulate_onto_unwritten_psum_stays_one_finding():
    """accumulate=True is not the compiler's choice: onto PSUM nothing wrote it is what NKI calls undefined, and the
    sanitizer reports the read once; every matmul accumulates."""
    a, b = operands(2, 3)
    r = nki.benchmark(explicit_accumulate, a, b, sanitize=True)
    assert len(r.findings) == 1, r.findings
    f = r.findings[0]
    assert (f["kind"], f["tensor"], f["opcode"]) == ("uninitialized-read", "acc", "Matmult")
    s = [i["start_tensor_calc"] for i in matmults(nki.to_bir(explicit_accumulate, a, b))]
    assert s and not any(s)


def lazily_zeroed_blocks(a, b):
    """The compiler-dumped kernels' idiom (NKIBench's matmul): a PSUM block tensor from nl.zeros(...,
    lazy_initialization=True), a block per trip of the n loop, summed with `+=` over two loops inside it (K in
    groups of tiles). a [kg, kt, 128, 128], b [kg, kt, 128, nn * 512]."""
    kg, kt = a.shape[:2]
    nn = b.shape[3] // 512
    out = nl.ndarray((128, nn * 512), nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((nn, nl.par_dim(128), 512), nl.float32, buffer=nl.psum, lazy_initialization=True)
    res = nl.ndarray((nl.par_dim(128), nn * 512), nl.float32, buffer=nl.sbuf)
    ip, i_m, i_n = nl.arange(128)[:, None], nl.arange(128)[None, :], nl.arange(512)[None, :]
    for n in nl.affine_range(nn):
        for g in nl.affine_range(kg):
            for t in nl.affine_range(kt):
                acc[n, ip, i_n] += nisa.nc_matmul(nl.load(a[g, t, ip, i_m]), nl.load(b[g, t, ip, n * 512 + i_n]))
        res[ip, n * 512 + i_n] = nl.copy(acc[n, ip, i_n])
    nl.store(out, value=res)
    return out


def test_a_lazily_zeroed_block_summed_over_two_loops():
    a = RNG.uniform(-1, 1, (2, 3, 128, 128)).astype(np.float32)
    b = RNG.uniform(-1, 1, (2, 3, 128, 3 * 512)).astype(np.float32)
    r = nki.benchmark(lazily_zeroed_blocks, a, b, sanitize=True)
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["out"], np.einsum("gtpm,gtpn->mn", a, b), rtol=1e-4, atol=1e-3)
    s = [i["start_tensor_calc"] for i in matmults(nki.to_bir(lazily_zeroed_blocks, a, b))]
    assert s[0] is True and not all(s)  # the first trip of g and t starts each block's group
