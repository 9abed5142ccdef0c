"""Multi-core NKI kernels in the NKI Library's idioms (written here): nl.program_id a plain int per shard with
`if` branches doing different work per shard, nisa.core_barrier between shards writing then reading shared HBM, a
nisa.sendrecv ring, and nki.collectives over 2 and 4 ranks with per-rank inputs -- each against numpy."""
import json

import numpy as np
import pytest

from neuronsim import nki
from neuronsim.nki import isa as nisa
from neuronsim.nki import language as nl
from neuronsim.nki.collectives import ReplicaGroup

from conftest import cli

cc = nki.collectives
RNG = np.random.default_rng(37)


def _opcodes(doc):
    return [i["opcode"] for f in doc["functions"] for b in f["blocks"] for i in b["instructions"]]


def test_shard_branches_do_different_work_per_shard():
    """`if nl.program_id(0) == 0:` as the NKI Library writes it: shard 0 negates its rows, shard 1 doubles its own and
    adds one; each shard is traced on its own and the program branches on the core's shard id."""
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        shard = nl.program_id(0)
        assert isinstance(shard, int)  # a plain int per shard, as NKI gives it
        rows = x.shape[0] // nl.num_programs(0)
        t = nl.load(x[nl.ds(shard * rows, rows), :])
        if shard == 0:
            r = nl.negative(t)
        else:
            r = nl.add(nl.multiply(t, 2.0), 1.0)
        nl.store(out[nl.ds(shard * rows, rows), :], r)
        return out
    x = RNG.uniform(-1, 1, (256, 16)).astype(np.float32)
    want = np.vstack([-x[:128], x[128:] * 2 + 1])
    np.testing.assert_array_equal(nki.simulate(nki.jit(kernel)[nl.nc(2)], x), want)
    np.testing.assert_array_equal(nki.simulate(nki.jit(kernel)[2])(x), want)  # the current API: kernel[lnc]
    ops = _opcodes(nki.to_bir(nki.jit(kernel)[2], x))
    assert ops.count("CompareAndBranch") == 1  # one branch on the shard id picks each core's part


def test_shards_that_differ_only_in_offsets_stay_one_program():
    """Shards whose traces differ only in offsets linear in the shard id are one program with ShardIDKind terms (no
    branch), as cheap as tracing once with a symbolic shard id."""
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        s = nl.program_id(0)
        t = nl.load(x[nl.ds(s * 128, 128), :])
        nl.store(out[nl.ds(s * 128, 128), :], nl.multiply(t, 3.0))
        return out
    x = RNG.uniform(-1, 1, (256, 8)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(nki.jit(kernel)[2])(x), x * 3)
    doc = nki.to_bir(nki.jit(kernel)[2], x)
    assert "CompareAndBranch" not in _opcodes(doc) and '"ShardIDKind"' in json.dumps(doc)


def test_core_barrier_orders_writes_then_reads_of_shared_hbm():
    """Each shard writes its half of a shared HBM tensor, the barrier, then each reads the other shard's half."""
    def kernel(x):
        buf = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        s = nl.program_id(0)
        mine = nl.load(x[nl.ds(s * 128, 128), :])
        nl.store(buf[nl.ds(s * 128, 128), :], nl.exp(mine))
        nisa.core_barrier(buf, (0, 1))
        other = nl.load(buf[nl.ds((1 - s) * 128, 128), :])
        nl.store(out[nl.ds(s * 128, 128), :], nl.add(other, mine))
        return out
    x = RNG.uniform(-1, 1, (256, 32)).astype(np.float32)
    got = nki.simulate(nki.jit(kernel)[2])(x)
    e = np.exp(x)
    np.testing.assert_allclose(got, np.vstack([e[128:] + x[:128], e[:128] + x[128:]]), rtol=1e-5, atol=1e-6)


def test_sendrecv_ring_swaps_the_shards_tiles():
    """nisa.sendrecv in a ring of the two shards: each sends its tile to the next and receives the previous one's."""
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        s, n = nl.program_id(0), nl.num_programs(0)
        t = nl.load(x[nl.ds(s * 64, 64), :])
        got = nl.ndarray((64, 16), x.dtype, buffer=nl.sbuf)
        nisa.sendrecv(src=t, dst=got, send_to_rank=(s + 1) % n, recv_from_rank=(s - 1) % n, pipe_id=0)
        nl.store(out[nl.ds(s * 64, 64), :], nl.multiply(got, float(s + 1)))
        return out
    x = RNG.uniform(-1, 1, (128, 16)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(nki.jit(kernel)[2])(x), np.vstack([x[64:], x[:64] * 2]))


@pytest.mark.parametrize("cols, dtype, ok", [(256, np.float32, True), (257, np.float32, False),
                                             (256, np.float16, True), (512, np.float16, False)])
def test_sendrecv_on_gpsimds_dma_moves_at_most_256_elements_per_partition(cols, dtype, ok):
    """dma_engine=gpsimd_dma: at most 1024 bytes per partition of a 32-bit type, 512 of a 16-bit one (public NKI
    docs, nki.isa.sendrecv); the default shared DMA has no such limit."""
    def kernel(x, engine):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        s = nl.program_id(0)
        t = nl.load(x[nl.ds(s * 64, 64), :])
        got = nl.ndarray((64, cols), x.dtype, buffer=nl.sbuf)
        nisa.sendrecv(src=t, dst=got, send_to_rank=1 - s, recv_from_rank=1 - s, pipe_id=0, dma_engine=engine)
        nl.store(out[nl.ds(s * 64, 64), :], got)
        return out
    x = RNG.uniform(-1, 1, (128, cols)).astype(dtype)
    swapped = np.vstack([x[64:], x[:64]])
    np.testing.assert_array_equal(nki.simulate(nki.jit(kernel)[2])(x, nisa.dma_engine.dma), swapped)
    if ok:
        np.testing.assert_array_equal(nki.simulate(nki.jit(kernel)[2])(x, nisa.dma_engine.gpsimd_dma), swapped)
    else:
        with pytest.raises(nki.KernelError, match=rf"dma_engine=gpsimd_dma moves at most 256 elements per partition "
                                                  rf"\({256 * np.dtype(dtype).itemsize} bytes of .*\); t.* has {cols}"):
            nki.simulate(nki.jit(kernel)[2])(x, nisa.dma_engine.gpsimd_dma)

def _sbuf_collective(kind, ranks):
    group = ReplicaGroup([list(range(ranks))])

    def kernel(x):
        p, f = x.shape
        t = nl.load(x)
        if kind == "all_reduce":
            r = nl.ndarray((p, f), x.dtype, buffer=nl.sbuf)
            cc.all_reduce(srcs=[t], dsts=[r], replica_group=group, op=nl.add)
        elif kind == "all_gather":
            r = nl.ndarray((p * ranks, f), x.dtype, buffer=nl.sbuf)
            cc.all_gather(srcs=[t], dsts=[r], replica_group=group, collective_dim=0)
        else:
            r = nl.ndarray((p // ranks, f), x.dtype, buffer=nl.sbuf)
            cc.reduce_scatter(srcs=[t], dsts=[r], replica_group=group, collective_dim=0, op=nl.maximum)
        out = nl.ndarray(r.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out
    return kernel


@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("kind", ["all_reduce", "all_gather", "reduce_scatter"])
def test_sbuf_collectives_over_ranks_against_numpy(kind, ranks):
    xs = [RNG.uniform(-1, 1, (32, 8)).astype(np.float32) for _ in range(ranks)]
    got = nki.simulate(nki.jit(_sbuf_collective(kind, ranks)), xs, ranks=ranks)
    assert len(got) == ranks
    for r in range(ranks):
        if kind == "all_reduce":
            want = xs[0].copy()
            for x in xs[1:]:
                want = want + x  # folded in rank order in fp32
        elif kind == "all_gather":
            want = np.vstack(xs)
        else:
            rows = 32 // ranks
            want = np.maximum.reduce(xs)[r * rows:(r + 1) * rows]
        np.testing.assert_array_equal(got[r], want, err_msg=f"rank {r}")


@pytest.mark.parametrize("ranks", [2, 4])
def test_all_to_all_on_hbm_over_ranks(ranks):
    group = ReplicaGroup([list(range(ranks))])

    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        cc.all_to_all(srcs=[x], dsts=[out], replica_group=group, collective_dim=0)
        return out
    xs = [RNG.uniform(-1, 1, (ranks * 4, 8)).astype(np.float32) for _ in range(ranks)]
    got = nki.simulate(kernel, xs, ranks=ranks)
    for r in range(ranks):  # rank r's chunk p is rank p's chunk r
        np.testing.assert_array_equal(got[r], np.vstack([xs[p][r * 4:(r + 1) * 4] for p in range(ranks)]))


@pytest.mark.parametrize("ranks", [2, 4])
def test_variable_count_all_to_all_and_all_gather(ranks):
    """all_to_all_v / all_gather_v (public NKI docs, nki.collectives): counts and displacements in a uint32 metadata
    tensor read when the collective runs; chunks land in n equal slots of the flat output and row 2 returns the
    counts received. Per-rank metadata in HBM for all_to_all_v, in SBUF ([1, 3, n]) for all_gather_v, whose single
    chunk is its metadata's first column."""
    group, slot, size = ReplicaGroup([list(range(ranks))]), 6, 24
    xs = [RNG.uniform(-1, 1, (size,)).astype(np.float32) for _ in range(ranks)]
    metas = [np.stack([RNG.integers(0, slot + 1, ranks), RNG.integers(0, size - slot, ranks),
                       np.zeros(ranks, int)]).astype(np.uint32) for _ in range(ranks)]

    def to_all(x, meta):
        out = nl.ndarray((ranks * slot,), x.dtype, buffer=nl.shared_hbm)
        nl.store(out.reshape((1, ranks * slot)), nl.full((1, ranks * slot), -7.0, nl.float32))
        cc.all_to_all_v(srcs=[x], dsts=[out], replica_group=group, metadata_tensor=meta)
        return out, meta

    def gather(x, meta):
        out = nl.ndarray((ranks * slot,), x.dtype, buffer=nl.shared_hbm)
        nl.store(out.reshape((1, ranks * slot)), nl.full((1, ranks * slot), -7.0, nl.float32))
        m = nl.ndarray((1, 3, ranks), nl.uint32, buffer=nl.sbuf)
        nisa.dma_copy(dst=m, src=meta.reshape((1, 3, ranks)))
        cc.all_gather_v(srcs=[x], dsts=[out], replica_group=group, metadata_tensor=m, recv_counts_known=True)
        return out
    got = nki.simulate(to_all, xs, metas, ranks=ranks)
    got_gather = nki.simulate(gather, xs, metas, ranks=ranks)
    for r in range(ranks):
        want = np.full(ranks * slot, -7.0, np.float32)
        want_gather = want.copy()
        for j in range(ranks):
            c, d = metas[j][0, r], metas[j][1, r]  # what rank j sends rank r
            want[j * slot:j * slot + c] = xs[j][d:d + c]
            c, d = metas[j][0, 0], metas[j][1, 0]  # rank j's one chunk, to every rank
            want_gather[j * slot:j * slot + c] = xs[j][d:d + c]
        np.testing.assert_array_equal(got[r][0], want, err_msg=f"all_to_all_v rank {r}")
        np.testing.assert_array_equal(got[r][1][2], [metas[j][0, r] for j in range(ranks)])
        np.testing.assert_array_equal(got_gather[r], want_gather, err_msg=f"all_gather_v rank {r}")


def test_a_replicated_argument_and_a_per_rank_list_of_the_wrong_length():
    group = ReplicaGroup([[0, 1]])

    def kernel(x, w):
        t = nl.multiply(nl.load(x), nl.load(w))
        r = nl.ndarray(t.shape, x.dtype, buffer=nl.sbuf)
        cc.all_reduce(srcs=[t], dsts=[r], replica_group=group, op=nl.add)
        out = nl.ndarray(t.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out
    xs = [RNG.uniform(-1, 1, (16, 8)).astype(np.float32) for _ in range(2)]
    w = RNG.uniform(-1, 1, (16, 8)).astype(np.float32)  # every rank's
    got = nki.simulate(kernel, xs, w, ranks=2)
    for r in range(2):
        np.testing.assert_array_equal(got[r], xs[0] * w + xs[1] * w)
    with pytest.raises(nki.KernelError, match="list of 2 arrays"):
        nki.simulate(kernel, xs + xs[:1], w, ranks=2)


@pytest.mark.parametrize("ranks", [2, 4])
def test_sbuf_all_gather_along_the_free_dim(ranks):
    """all_gather(collective_dim=1) of SBUF tiles, as the NKI Library's SBUF-to-SBUF all-gather calls it: rank r's
    [H, W] lands in columns [r W, (r + 1) W)."""
    group = ReplicaGroup([list(range(ranks))])

    def kernel(x):
        h, w = x.shape
        t = nl.ndarray((h, w), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        g = nl.ndarray((h, w * ranks), x.dtype, buffer=nl.sbuf)
        cc.all_gather(dsts=[g], srcs=[t], replica_group=group, collective_dim=1)
        out = nl.ndarray((h, w * ranks), x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=g)
        return out
    xs = [RNG.uniform(-1, 1, (16, 8)).astype(np.float32) for _ in range(ranks)]
    for r, got in enumerate(nki.simulate(kernel, xs, ranks=ranks)):
        np.testing.assert_array_equal(got, np.hstack(xs), err_msg=f"rank {r}")


def test_collective_refusals_name_the_call():
    def bad_dim(x):
        t = nl.load(x)
        r = nl.ndarray((32, 16), x.dtype, buffer=nl.sbuf)
        cc.reduce_scatter(srcs=[t], dsts=[r], replica_group=ReplicaGroup([[0, 1]]), collective_dim=1, op=nl.add)
        return r
    with pytest.raises(nki.KernelError, match="reduce_scatter: collective_dim=1; 0 is supported"):
        nki.to_bir(bad_dim, np.zeros((32, 8), np.float32))
    def bad_meta(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        meta = nl.ndarray((2, 2), nl.uint32, buffer=nl.shared_hbm)
        cc.all_to_all_v(srcs=[x], dsts=[out], replica_group=ReplicaGroup([[0, 1]]), metadata_tensor=meta)
        return out
    with pytest.raises(nki.KernelError, match=r"all_to_all_v: metadata_tensor meta \[2, 2\] uint32: a uint32 tensor"):
        nki.to_bir(bad_meta, np.zeros((8,), np.float32))

    def one_core(x):
        nisa.core_barrier(x, (0, 1))
        return x
    # NKI: a launch without a grid is LNC=1 (nki.jit), and core_barrier needs LNC enabled (its page).
    with pytest.raises(nki.KernelError, match=r"core_barrier: the kernel runs on one core \(a launch without a grid"):
        nki.to_bir(one_core, np.zeros((4, 4), np.float32))


def test_neuronsim_nki_takes_per_rank_inputs_as_run_does(tmp):
    """`neuronsim nki --cores 2 --lnc 1 --inputs DIR`: rank r reads DIR/rank<r>/x.npy (the tracer takes the shape
    from rank 0's), outputs in OUTDIR/rank<r>/."""
    (tmp / "k.py").write_text(
        "from neuronsim.nki import language as nl\n"
        "from neuronsim.nki import collectives as cc\n"
        "def k(x):\n"
        "    t = nl.load(x)\n"
        "    r = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)\n"
        "    cc.all_reduce(srcs=[t], dsts=[r], replica_group=cc.ReplicaGroup([[0, 1]]), op=nl.add)\n"
        "    y = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)\n"
        "    nl.store(y, r)\n"
        "    return y\n")
    xs = [RNG.uniform(-1, 1, (16, 8)).astype(np.float32) for _ in range(2)]
    for r, x in enumerate(xs):
        (tmp / "in" / f"rank{r}").mkdir(parents=True)
        np.save(tmp / "in" / f"rank{r}" / "x.npy", x)
    cli("nki", f"{tmp / 'k.py'}::k", "--inputs", tmp / "in", "--cores", 2, "--lnc", 1, "--outdir", tmp / "out",
        "--quiet")
    for r in range(2):
        np.testing.assert_array_equal(np.load(tmp / "out" / f"rank{r}" / "y.npy"), xs[0] + xs[1])


@pytest.mark.parametrize("ranks", [2, 4])
def test_permutes_over_a_ring_of_ranks(ranks):
    """collective_permute with explicit pairs (r -> r + 1), collective_permute_implicit (each rank receives its ring
    predecessor's) and collective_permute_implicit_reduce (each folds its two inputs and passes the sum on)."""
    group = ReplicaGroup([list(range(ranks))])
    pairs = [(r, (r + 1) % ranks) for r in range(ranks)]

    def kernel(x, y):
        moved = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        cc.collective_permute(srcs=[x], dsts=[moved], source_target_pairs=pairs)
        a, b = nl.load(x), nl.load(y)
        ring = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        cc.collective_permute_implicit(srcs_by_channel=[[a]], dsts_by_channel=[[ring]], replica_group=group)
        folded = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        cc.collective_permute_implicit_reduce(srcs0_by_channel=[[a]], srcs1_by_channel=[[b]],
                                              dsts_by_channel=[[folded]], replica_group=group, op=nl.add)
        o1 = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        o2 = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(o1, ring)
        nl.store(o2, folded)
        return moved, o1, o2
    xs = [RNG.uniform(-1, 1, (8, 4)).astype(np.float32) for _ in range(ranks)]
    ys = [RNG.uniform(-1, 1, (8, 4)).astype(np.float32) for _ in range(ranks)]
    got = nki.simulate(kernel, xs, ys, ranks=ranks)
    for r in range(ranks):
        prev = (r - 1) % ranks
        np.testing.assert_array_equal(got[r][0], xs[prev])
        np.testing.assert_array_equal(got[r][1], xs[prev])
        np.testing.assert_array_equal(got[r][2], xs[prev] + ys[prev])


def test_spmd_dim_mixes_cores_and_instances():
    """nl.spmd_dim(nl.nc(2), 2): 4 programs along one axis, 2 per core: core s runs programs 2s and 2s + 1."""
    def kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        i = nl.program_id(0)
        t = nl.load(x[nl.ds(i * 32, 32), :])
        nl.store(out[nl.ds(i * 32, 32), :], nl.multiply(t, float(i + 1)))
        return out
    x = RNG.uniform(-1, 1, (128, 8)).astype(np.float32)
    got = nki.simulate(nki.jit(kernel)[nl.spmd_dim(nl.nc(2), 2)], x)
    np.testing.assert_array_equal(got, x * np.repeat(np.arange(1, 5, dtype=np.float32), 32)[:, None])


def test_rank_ids_in_registers():
    """nki.collectives.rank_id() and the ring's processing rank at step 1 (the predecessor's), stored from their
    registers into each rank's output."""
    group = ReplicaGroup([[0, 1, 2, 3]])

    def kernel(x):
        out = nl.ndarray((1, 2), nl.int32, buffer=nl.shared_hbm)
        nisa.register_store(out[0:1, 0:1], cc.rank_id())
        nisa.register_store(out[0:1, 1:2], cc.collective_permute_implicit_current_processing_rank_id(1, group))
        return out
    got = nki.simulate(kernel, np.zeros((1, 1), np.float32), ranks=4)
    assert [g.tolist() for g in got] == [[[r, (r - 1) % 4]] for r in range(4)]
