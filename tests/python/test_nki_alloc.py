"""SBUF / PSUM allocation by liveness, spills and explicit placement (python/neuronsim/nki/allocate.py,
docs/nki-lowering.md 2), each kernel against numpy. Kernels written here in the published kernels' idioms: block
tensors indexed per block in a loop, qk as a PSUM block tensor, nki.compiler.*.mod_alloc and nl.ndarray(address=)."""
import functools
import warnings

import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.compiler as ncc
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

SBUF = 180224  # trn1's usable SBUF bytes per partition (the allocator's budget)
RNG = np.random.default_rng(7)


def allocations(bir):
    """name -> its memory location (type, dims, addr, bank, base, allocated) in the BIR module."""
    out = {}
    for a in bir["functions"][0]["allocations"]:
        loc = a["memorylocations"][0]
        out[loc["name"]] = loc
    return out


def instructions(bir):
    out = []

    def walk(items):
        for i in items:
            out.append(i)
            for b in i.get("blocks", []):
                walk(b.get("instructions", []))
    for b in bir["functions"][0]["blocks"]:
        walk(b["instructions"])
    return out


def spill_dmas(bir):
    return [i for i in instructions(bir) if i.get("queue", "").startswith("qSyncSpillReload")]


# ---------------------------------------------------------------------------------------------------- liveness
def block_exp(a):
    """A block tensor of 64 blocks of [128, 1024] fp32 (256 KiB per partition if all were live), each block loaded
    and used in its own trip: it lives a trip at a time."""
    n = a.shape[0]
    out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
    buf = nl.ndarray((n, nl.par_dim(128), 1024), nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(n):
        buf[i] = nl.load(a[i])
        nl.store(out[i], nl.exp(buf[i]))
    return out


def test_block_tensor_larger_than_sbuf_lives_a_trip_at_a_time():
    a = RNG.standard_normal((64, 128, 1024)).astype(np.float32)
    assert 64 * 1024 * 4 > SBUF
    np.testing.assert_allclose(nki.simulate(block_exp, a), np.exp(a), rtol=1e-5, atol=1e-6)
    bir = nki.to_bir(block_exp, nki.tensor(a.shape))
    buf = allocations(bir)["buf"]
    # The loop's 64 trips rotate over B = 4 buffers of one block each (the lowering library's rule), placed.
    assert buf["type"] == "SB" and buf["allocated"] is True
    assert buf["dims"] == [128, 4 * 1024 * 4]
    assert spill_dmas(bir) == []


def qk_blocks(q, k):
    """The attention tutorial's qk: a PSUM block tensor [nq, nk, 128, 512] fp32 (nq * nk banks if all were live),
    each block a matmul read in the same trip."""
    nq, nk = q.shape[1] // 128, k.shape[1] // 512
    out = nl.ndarray((nq, nk, 128, 512), nl.float32, buffer=nl.shared_hbm)
    q_sb = nl.load(q)
    k_sb = nl.load(k)
    qk = nl.ndarray((nq, nk, nl.par_dim(128), 512), nl.float32, buffer=nl.psum)
    for i in nl.affine_range(nq):
        for j in nl.affine_range(nk):
            qk[i, j] = nisa.nc_matmul(q_sb[:, nl.ds(i * 128, 128)], k_sb[:, nl.ds(j * 512, 512)])
            nl.store(out[i, j], nl.copy(qk[i, j]))
    return out


def test_psum_block_tensor_larger_than_8_banks():
    q = RNG.standard_normal((128, 1024)).astype(np.float32)
    k = RNG.standard_normal((128, 1024)).astype(np.float32)
    got = nki.simulate(qk_blocks, q, k)  # qk [8, 2, 128, 512]: 16 banks if all were live
    want = (q.T @ k).reshape(8, 128, 2, 512).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    qk = allocations(nki.to_bir(qk_blocks, nki.tensor(q.shape), nki.tensor(k.shape)))["qk"]
    assert qk["type"] == "PSUM" and qk["allocated"] is True and qk["dims"][1] <= 8 * 2048


def qk_two_nests(q, k):
    """qk written by one loop nest and read by another: its 16 blocks are live at once between the nests, 16 banks
    of PSUM. The allocator keeps it in a DRAM home, each nest working a block at a time."""
    nq, nk = q.shape[1] // 128, k.shape[1] // 512
    out = nl.ndarray((nq, 128, nk * 512), nl.float32, buffer=nl.shared_hbm)
    q_sb = nl.load(q)
    k_sb = nl.load(k)
    qk = nl.ndarray((nq, nk, nl.par_dim(128), 512), nl.float32, buffer=nl.psum)
    for i in nl.affine_range(nq):
        for j in nl.affine_range(nk):
            qk[i, j] = nisa.nc_matmul(q_sb[:, nl.ds(i * 128, 128)], k_sb[:, nl.ds(j * 512, 512)])
    for i in nl.affine_range(nq):
        row = nl.ndarray((128, nk * 512), nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(nk):
            row[:, nl.ds(j * 512, 512)] = nl.multiply(qk[i, j], 2.0)
        nl.store(out[i], row)
    return out


def test_psum_tensor_live_across_nests_goes_through_dram():
    q = RNG.standard_normal((128, 1024)).astype(np.float32)
    k = RNG.standard_normal((128, 1024)).astype(np.float32)
    r = nki.benchmark(qk_two_nests, q, k)
    want = 2 * (q.T @ k).reshape(8, 128, 1024)
    np.testing.assert_allclose(r.outputs["out"], want, rtol=1e-4, atol=1e-3)
    # Each of the 16 blocks (128 partitions x 512 fp32 = 256 KiB) is saved once after the first nest and
    # reloaded once before the second.
    block = 128 * 512 * 4
    assert r.stats["dma"]["spill_save_bytes"] == 16 * block
    assert r.stats["dma"]["spill_reload_bytes"] == 16 * block


# ---------------------------------------------------------------------------------------------------- spills
def live_tiles(a):
    """N tiles of [128, 8192] fp32 (32 KiB per partition each) made one after the other and summed afterwards:
    SBUF holds five of them (5 x 32 KiB <= 176 KiB), so N - 5 must be spilled while the last ones are made."""
    n = a.shape[0]
    out = nl.ndarray(a.shape[1:], nl.float32, buffer=nl.shared_hbm)
    t = []
    for i in range(n):
        x = nl.load(a[i])
        x[...] = nl.multiply(x, float(i + 1))  # computed: it cannot be loaded again from the input
        t.append(x)
    for i in range(1, n):
        t[0][...] = nl.add(t[0], t[i])
    nl.store(out, t[0])
    return out


@pytest.mark.parametrize("n", [6, 7])
def test_spill_traffic_is_what_the_live_set_needs(n):
    a = RNG.standard_normal((n, 128, 8192)).astype(np.float32)
    r = nki.benchmark(live_tiles, a)
    want = sum((i + 1) * a[i] for i in range(n))
    np.testing.assert_allclose(r.outputs["out"], want, rtol=1e-5, atol=1e-4)
    # k = n - 5 tiles spilled (the ones used last: the sum reaches them last), each saved once and reloaded once:
    # 128 partitions x 32 KiB.
    k, tile = n - 5, 128 * 8192 * 4
    assert r.stats["dma"]["spill_save_bytes"] == k * tile
    assert r.stats["dma"]["spill_reload_bytes"] == k * tile
    assert f"spills: {k * tile} bytes saved to DRAM, {k * tile} bytes reloaded" in r.summary()
    bir = nki.to_bir(live_tiles, nki.tensor(a.shape))
    dmas = spill_dmas(bir)
    assert sorted(i["opcode"] for i in dmas) == ["Load"] * k + ["Save"] * k


def test_no_spill_when_the_tiles_fit():
    a = RNG.standard_normal((5, 128, 8192)).astype(np.float32)
    r = nki.benchmark(live_tiles, a)
    np.testing.assert_allclose(r.outputs["out"], sum((i + 1) * a[i] for i in range(5)), rtol=1e-5, atol=1e-4)
    assert r.stats["dma"]["spill_save_bytes"] == 0 and "spills:" not in r.summary()


def test_refused_only_when_spilling_cannot_help():
    def kernel(a):
        out = nl.ndarray((128, 32768), nl.float32, buffer=nl.shared_hbm)
        big = nl.load(a)  # 128 KiB per partition
        also = nl.exp(big)  # another 128 KiB, made while big is read: both live at that instruction
        nl.store(out, also)
        return out
    with pytest.raises(nki.KernelError, match=r"SBUF overflow: the tiles live at .*test_nki_alloc.py:\d+ need 262144 "
                                              r"bytes per partition, the budget is 180224 .*spilling cannot help.*big"
                                              r".*also") as e:
        nki.to_bir(kernel, nki.tensor((128, 32768)))
    assert "large enough" not in str(e.value)  # 256 KiB fits no arch's SBUF: no arch to suggest


def two_live(a):
    """An instruction whose operands take 2 x 96 KiB per partition: more than trn1's usable SBUF, less than trn2's."""
    out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
    big = nl.load(a)
    nl.store(out, nl.exp(big))
    return out


def test_overflow_that_a_later_arch_holds_names_it():
    with pytest.raises(nki.KernelError, match=r"need 196608 bytes per partition, the budget is 180224 \(trn1's .*big.*"
                                              r"\. trn2's usable SBUF \(212984 bytes\) is large enough: trace for trn2 "
                                              r"if the kernel is written for it \(arch='trn2'"):
        nki.to_bir(two_live, nki.tensor((4, 24576)))
    a = RNG.standard_normal((4, 24576)).astype(np.float32)
    np.testing.assert_allclose(nki.simulate(two_live, a, arch="trn2"), np.exp(a), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------------- placement
def placed(a):
    """mod_alloc and address= as the NKI Direct Allocation guide and the NKI Library use them."""
    n = a.shape[0]
    out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
    buf = nl.ndarray((n, nl.par_dim(128), 512), nl.float32,
                     buffer=ncc.sbuf.mod_alloc(base_addr=8192, num_free_tiles=(2,)))
    res = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf, address=(0, 4096))
    ps = nl.ndarray((n, nl.par_dim(128), 512), nl.float32, buffer=ncc.psum.mod_alloc(base_bank=2, num_bank_tiles=(2,)))
    ident = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf, address=(0, 0))
    ident[...] = nl.load(nl.shared_constant(np.identity(128, dtype=np.float32)))
    for i in nl.affine_range(n):
        buf[i] = nl.load(a[i])
        ps[i] = nisa.nc_matmul(ident, buf[i])  # identity @ block
        res[...] = nl.multiply(ps[i], 3.0)
        nl.store(out[i], res)
    return out


def test_explicit_placement_is_where_the_kernel_says():
    a = RNG.standard_normal((4, 128, 512)).astype(np.float32)
    np.testing.assert_allclose(nki.simulate(placed, a), 3 * a, rtol=1e-5, atol=1e-5)
    al = allocations(nki.to_bir(placed, nki.tensor(a.shape)))
    # mod_alloc(base_addr=8192, num_free_tiles=(2,)): two physical tiles of 512 fp32 from byte 8192.
    assert (al["buf"]["addr"], al["buf"]["base"], al["buf"]["dims"], al["buf"]["allocated"]) == (8192, 0, [128, 4096],
                                                                                                 True)
    # address=(0, 4096) and (0, 0).
    assert (al["res"]["addr"], al["res"]["dims"]) == (4096, [128, 2048])
    assert (al["ident"]["addr"], al["ident"]["dims"]) == (0, [128, 512])
    # psum.mod_alloc(base_bank=2, num_bank_tiles=(2,)): banks 2 and 3.
    assert (al["ps"]["type"], al["ps"]["bank"], al["ps"]["addr"], al["ps"]["dims"]) == ("PSUM", 2, 0, [128, 4096])


def overlapping(a):
    out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
    t0 = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf, address=(0, 0))
    t1 = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf, address=(0, 1024))  # bytes [1024, 3072): overlaps t0
    t0[...] = nl.load(a)
    t1[...] = nl.exp(t0)
    nl.store(out, nl.add(t0, t1))
    return out


def test_overlap_of_two_live_placed_tensors_is_refused():
    with pytest.raises(nki.KernelError, match=r"SBUF placement conflict: t0 \[128, 512\] float32 \(.*test_nki_alloc"
                                              r"\.py:\d+, address=\(0, 0\).* and t1 \[128, 512\] float32 \(.*"
                                              r"test_nki_alloc\.py:\d+, address=\(0, 1024\).*overlap"):
        nki.to_bir(overlapping, nki.tensor((128, 512)))


def sized_for_bf16(x):
    """Placements computed for a 2-byte input, as the nki-samples allocated kernels write them: a [128, 128]
    identity at byte 0 in the input's dtype, a [128, 1] fp32 bias at 256 (right after 128 bf16), the input at 264.
    out = (x^T)^2: x transposed on the PE through the identity, squared on the ACT."""
    out = nl.ndarray((128, 128), nl.float32, buffer=nl.shared_hbm)
    ident = nl.ndarray((128, 128), x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    ident[...] = nl.load(nl.shared_constant(np.identity(128, dtype=np.int8), dtype=x.dtype))
    bias = nl.ndarray((128, 1), nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=256))
    bias[...] = 0
    xs = nl.ndarray((128, 128), x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=264))
    xs[...] = nl.load(x)
    xt = nisa.nc_matmul(xs, ident)  # xs^T @ identity
    nl.store(out, nisa.activation(op=nl.square, data=xt, bias=bias))
    return out


def test_placements_sized_for_bf16_run_in_bf16_and_conflict_in_fp32():
    x = RNG.integers(-64, 64, size=(128, 128)) / 8.0  # exact in bf16
    got = nki.simulate(sized_for_bf16, nki.array(x, nl.bfloat16))
    np.testing.assert_array_equal(got, (x.T ** 2).astype(np.float32))
    # In fp32 the identity takes bytes [0, 512) and the bias at 256 lies inside it while both are live: refused,
    # naming both tensors with their shapes and dtypes (the dtype is what moved the identity's end).
    with pytest.raises(nki.KernelError, match=r"SBUF placement conflict: ident \[128, 128\] float32 \(.*mod_alloc\("
                                              r"base_addr=0.*bytes \[0, 512\)\) and bias \[128, 1\] float32 \("
                                              r".*bytes \[256, 260\)\) overlap in memory and are both live"):
        nki.to_bir(sized_for_bf16, nki.tensor((128, 128)))


def test_same_address_at_different_times_is_fine():
    def kernel(a):
        out = nl.ndarray((2, 128, 512), nl.float32, buffer=nl.shared_hbm)
        for i in range(2):  # unrolled: t_i at one address, the second after the first is dead
            t = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf, address=(0, 0))
            t[...] = nl.load(a[i])
            nl.store(out[i], t)
        return out
    a = RNG.standard_normal((2, 128, 512)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel, a), a)


def test_out_of_range_and_bad_start_partition_are_refused():
    def beyond(a):
        t = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf, address=(0, SBUF - 1024))
        t[...] = nl.load(a)
        out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, t)
        return out
    with pytest.raises(nki.KernelError, match=r"tensor t .* bytes \[179200, 181248\) are outside the 180224 usable"):
        nki.to_bir(beyond, nki.tensor((128, 512)))

    def odd_partition(a):
        t = nl.ndarray((2, nl.par_dim(64), 512), nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0, base_partition=32))
        t[0] = nl.load(a)
        out = nl.ndarray((64, 512), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, t[0])
        return out
    with pytest.raises(nki.KernelError, match=r"a tile of 64 partitions starts at partition 32; the ISA allows 0, 64"):
        nki.to_bir(odd_partition, nki.tensor((64, 512)))


def test_too_few_physical_tiles_for_the_live_blocks_is_refused():
    """The Direct Allocation guide's lifetime conflict: 4 blocks written by one loop and read by another, all live
    in between, on 2 physical tiles."""
    def kernel(a):
        out = nl.ndarray((4, 128, 512), nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((4, nl.par_dim(128), 512), nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0,
                                                                                         num_free_tiles=(2,)))
        for i in range(4):
            t[i] = nl.load(a[i])
        for i in range(4):
            nl.store(out[i], t[i])
        return out
    with pytest.raises(nki.KernelError, match=r"placement conflict: t block \(0,\) .* and t block \(2,\) .*overlap"):
        nki.to_bir(kernel, nki.tensor((4, 128, 512)))


def test_force_auto_alloc_ignores_the_placement():
    @ncc.force_auto_alloc
    def kernel(a):
        return overlapping(a)
    a = RNG.standard_normal((128, 512)).astype(np.float32)
    np.testing.assert_allclose(nki.simulate(kernel, a), a + np.exp(a), rtol=1e-5, atol=1e-5)


def unrolled_accumulate(x, y):
    """A PSUM block tensor summed block by block in an unrolled kernel (NeedsUnroll: a list indexed by the loop
    variable), as the attention tutorial's pipelined versions sum attn_out_psum[i]: each block's first matmul starts
    its group, the rest add; the blocks share banks over time."""
    nb, kt = x.shape[0], x.shape[2] // 128
    out = nl.ndarray((nb, 128, 512), nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((nb, nl.par_dim(128), 512), nl.float32, buffer=nl.psum)
    xs = [nl.load(x[b]) for b in range(nb)]
    y_sb = nl.load(y)
    for b in nl.affine_range(nb):
        for k in nl.affine_range(kt):
            acc[b] += nisa.nc_matmul(xs[b][:, nl.ds(k * 128, 128)], y_sb[:, nl.ds(k * 512, 512)])
        nl.store(out[b], nl.copy(acc[b]))
    return out


def test_unrolled_block_accumulation_starts_each_group():
    x = RNG.standard_normal((10, 128, 256)).astype(np.float32)  # 10 blocks of one bank: more than PSUM's 8
    y = RNG.standard_normal((128, 1024)).astype(np.float32)
    got = nki.simulate(unrolled_accumulate, x, y)
    want = np.stack([sum(x[b][:, k * 128:(k + 1) * 128].T @ y[:, k * 512:(k + 1) * 512] for k in range(2))
                     for b in range(10)])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_alloc_function_places_each_block():
    """nki.compiler.sbuf.alloc / psum.alloc: the function gives each block's place, evaluated once per block (the
    NKI Direct Allocation guide's simple_1d_alloc_func: blocks side by side from a base)."""
    def kernel(a):
        n = a.shape[0]
        out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((n, nl.par_dim(128), 256), nl.float32,
                       buffer=ncc.sbuf.alloc(lambda idx, pdim, fdim: (0, 2048 + idx[0] * fdim)))
        p = nl.ndarray((n, nl.par_dim(128), 128), nl.float32,
                       buffer=ncc.psum.alloc(lambda idx, pdim, fdim: (4 + idx[0] % 2, 0, 0)))
        ident = nl.ndarray((128, 128), nl.float32, buffer=ncc.sbuf.alloc(lambda idx, pdim, fdim: (0, 0)))
        ident[...] = nl.load(nl.shared_constant(np.identity(128, dtype=np.float32)))
        for i in range(n):
            t[i] = nl.load(a[i])
        for i in range(n):
            p[i] = nisa.nc_matmul(t[i][:, 0:128], ident)  # transpose of the block's first 128 columns
            nl.store(out[i, :, 0:128], nl.copy(p[i]))
            nl.store(out[i, :, 128:256], t[i][:, 128:256])
        return out
    a = RNG.standard_normal((3, 128, 256)).astype(np.float32)
    got = nki.simulate(kernel, a)
    np.testing.assert_allclose(got[:, :, :128], a[:, :, :128].transpose(0, 2, 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[:, :, 128:], a[:, :, 128:])
    al = allocations(nki.to_bir(kernel, nki.tensor(a.shape)))
    # Three blocks of 1 KiB from byte 2048; PSUM blocks alternate between banks 4 and 5.
    assert (al["t"]["addr"], al["t"]["dims"]) == (2048, [128, 3 * 1024])
    assert (al["p"]["bank"], al["p"]["addr"], al["p"]["dims"]) == (4, 0, [128, 2048 + 512])


def test_alloc_function_with_a_bound_leading_parameter():
    """A public kernel's allocation function takes a table first, bound by name with functools.partial; its block
    arguments are then keyword-only, so they are passed by their names idx, pdim_size, fdim_size (the published
    kernels' spelling). Any other function still gets them by position (the lambdas above)."""
    import functools

    def addr(bank_of, idx, pdim_size, fdim_size):
        return (bank_of[idx[0]], 0, 0)

    def kernel(a):
        out = nl.ndarray((2, 128, 128), nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((nl.par_dim(128), 128), nl.float32, buffer=ncc.sbuf.alloc(lambda idx, pdim, fdim: (0, 0)))
        p = nl.ndarray((2, nl.par_dim(128), 128), nl.float32,
                       buffer=ncc.psum.alloc(functools.partial(addr, bank_of={0: 6, 1: 7})))
        ident = nl.ndarray((128, 128), nl.float32, buffer=ncc.sbuf.alloc(lambda idx, pdim, fdim: (0, 512)))
        ident[...] = nl.load(nl.shared_constant(np.identity(128, dtype=np.float32)))
        t[...] = nl.load(a)
        for i in range(2):
            p[i] = nisa.nc_matmul(t, ident)
            nl.store(out[i], nl.copy(p[i]))
        return out
    a = RNG.standard_normal((128, 128)).astype(np.float32)
    got = nki.simulate(kernel, a)
    np.testing.assert_allclose(got, np.stack([a.T, a.T]), rtol=1e-5, atol=1e-5)
    assert allocations(nki.to_bir(kernel, nki.tensor(a.shape)))["p"]["bank"] == 6  # from the bound table: banks 6 and 7



def dynamic_block_sum(x, n):
    """2 * the sum of x's first n tiles of 128 rows, block by block. acc, a block tensor of 8 blocks [128, 64], is
    touched inside and outside a dynamic loop (nl.dynamic_range over a register read from n; tile i of x at a run-time
    offset); dbl, a block tensor declared in the dynamic body, is touched by the trips of a static loop there."""
    T = x.shape[0] // 128
    out = nl.ndarray((8, 128, 64), nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((8, nl.par_dim(128), 64), nl.float32, buffer=nl.sbuf)
    for j in nl.affine_range(8):
        nisa.memset(dst=acc[j], value=0.0)
    n_sb = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=n_sb, src=n)
    count = nisa.register_alloc()
    nisa.register_load(count, n_sb)
    for i in nl.dynamic_range(count):
        blk = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=blk, src=x.reshape((T, 128 * 512)).ap([[512, 128], [1, 512]], scalar_offset=i,
                                                                 indirect_dim=0))
        dbl = nl.ndarray((8, nl.par_dim(128), 64), nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(8):
            nisa.tensor_tensor(dst=dbl[j], data1=blk[:, j * 64:(j + 1) * 64], data2=blk[:, j * 64:(j + 1) * 64],
                               op=nl.add)
            nisa.tensor_tensor(dst=acc[j], data1=acc[j], data2=dbl[j], op=nl.add)
    for j in nl.affine_range(8):
        nl.store(out[j], acc[j])
    return out


def test_block_tensors_and_dynamic_loops():
    """A dynamic loop's trips are unknown when tracing: acc, touched in it, is allocated whole (8 blocks); dbl,
    declared in its body, still lives a trip of the static loop at a time (fewer than its 8 blocks), and blk, the
    body's own tile, has one buffer (docs/nki-lowering.md 2). Values against numpy for 0, 2 and 3 trips."""
    x = RNG.uniform(-1, 1, (3 * 128, 512)).astype(np.float32)
    for n in (0, 2, 3):
        got = nki.simulate(dynamic_block_sum, x, np.array([[n]], np.int32))
        want = 2 * x[:n * 128].reshape(n, 128, 8, 64).sum(axis=0).transpose(1, 0, 2) if n else np.zeros((8, 128, 64))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    al = allocations(nki.to_bir(dynamic_block_sum, x, np.array([[2]], np.int32)))
    assert al["acc"]["dims"] == [128, 8 * 64 * 4]  # bytes per partition
    assert al["blk"]["dims"] == [128, 512 * 4]
    assert al["dbl"]["dims"][1] < 8 * 64 * 4


# ------------------------------------------------------------------------- rotation over several block dims
ADDRESSES = []  # the running SBUF address of rotating_over_two_dims, once per execution of its loop body


def psum_bank(banks, idx, pdim_size, fdim_size):
    return (banks[idx], 0, 0)


def rotating_over_two_dims(a, w, same_banks_at_once=False):
    K = a.shape[1]
    """The public allocated attention kernel's idiom: a running address the kernel's Python adds each tile's size
    to as it declares it (inside the loop: NKI traces the body once), a PSUM tile rotating over two block dims
    (num_bank_tiles=(2, 4): bank 4 g + k % 4) in two loops, and an allocation function placing a tile of the outer
    loop on banks the inner loop's tile used before it in the same trip (1 and 5)."""
    out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
    sums = nl.ndarray((2, 128, 128), nl.float32, buffer=nl.shared_hbm)
    addr = 0
    wt = nl.ndarray((128, 128), nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=addr))
    addr += 128 * 4
    wt[...] = nl.load(w)
    for g in nl.affine_range(2):
        xs = nl.ndarray((K, nl.par_dim(128), 128), nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=addr,
                                                                                         num_free_tiles=(4,)))
        addr += 4 * 128 * 4
        ys = nl.ndarray((2, nl.par_dim(128), 128), nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=addr,
                                                                                         num_free_tiles=(2,)))
        addr += 2 * 128 * 4
        ADDRESSES.append(addr)
        ps = nl.ndarray((2, K, nl.par_dim(128), 128), nl.float32,
                        buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2, 4)))
        other = nl.ndarray((2, K, nl.par_dim(128), 128), nl.float32,
                           buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2, 4)))
        tot = nl.ndarray((2, nl.par_dim(128), 128), nl.float32,
                         buffer=ncc.psum.alloc(functools.partial(psum_bank, {(0,): 1, (1,): 5})))
        for k in nl.affine_range(K):
            xs[k] = nl.load(a[g, k])
            ps[g, k] = nisa.nc_matmul(wt, xs[k])  # w.T @ a[g, k]
            if same_banks_at_once:  # a second tile on the same banks while ps[g, k] is still to be read
                other[g, k] = nisa.nc_matmul(wt, xs[k])
            ys[g] = nl.copy(ps[g, k])
            nl.store(out[g, k], ys[g])
        tot[g] = nisa.nc_matmul(wt, xs[K - 1])
        ys[g] = nl.copy(tot[g])
        nl.store(sums[g], ys[g])
    return out, sums


@pytest.mark.parametrize("K", [4, 10])  # 10: a loop whose trips the rotation over 4 banks does not divide
def test_a_tile_rotating_over_two_block_dims_is_placed_per_trip_without_unrolling_the_kernels_python(K):
    a = RNG.standard_normal((2, K, 128, 128)).astype(np.float32)
    w = RNG.standard_normal((128, 128)).astype(np.float32)
    ADDRESSES.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # unrolling the loops would warn (and run the body's Python once a trip)
        out, sums = nki.simulate(rotating_over_two_dims, a, w)
    assert ADDRESSES == [512 + 2048 + 1024]  # the body's Python ran once, as NKI traces it
    ref = np.einsum("pm,gkpn->gkmn", w.astype(np.float64), a.astype(np.float64))
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(sums, ref[:, K - 1], rtol=1e-4, atol=1e-3)


def test_two_tiles_on_the_same_banks_in_the_same_trip_are_still_refused():
    with pytest.raises(nki.KernelError, match=r"PSUM placement conflict: .*ps.* and .*other|PSUM placement conflict: "
                                              r".*other.* and .*ps"):
        nki.to_bir(rotating_over_two_dims, nki.tensor((2, 4, 128, 128)), nki.tensor((128, 128)),
                   same_banks_at_once=True)
