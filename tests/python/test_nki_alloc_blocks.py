"""Allocation of the parts of a block tensor (python/neuronsim/nki/alloc_scan.py pieces, docs/nki-lowering.md 2):
each run of blocks that a loop nest touches one trip at a time gets its own rotating buffers, and a tensor read
across the trips of a later nest is reloaded block by block from a DRAM home. Kernels written here in the idioms of
compiler-dumped kernels (block tensors declared at the top, the tail of a size that is not a multiple of the tile
handled by a mask), each against numpy."""
import numpy as np

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl
from test_nki_alloc import SBUF, allocations
from test_nki_isa_matmul import matmults

RNG = np.random.default_rng(11)


def scaled_rows(x):
    """x [N, 2048] fp32, N not a multiple of 128: a block tensor [nb, 2, 128, 1024] (nb * 8 KiB per partition if
    every block were live) loaded a block at a time and read in halves; the last row block is a masked tail, which
    the front end traces as a loop nest of its own -- two runs of blocks, each its own loop-local tile."""
    N = x.shape[0]
    nb = (N + 127) // 128
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    buf = nl.ndarray((nb, 2, nl.par_dim(128), 1024), nl.float32, buffer=nl.sbuf)
    res = nl.ndarray((nb, 2, nl.par_dim(128), 1024), nl.float32, buffer=nl.sbuf)
    ip = nl.arange(128)[:, None]
    i_half = nl.arange(512)[None, :]
    i_row = nl.arange(1024)[None, :]
    for i in nl.affine_range(nb):
        for j in nl.affine_range(2):
            buf[i, j, ip, i_row] = nl.load(x[i * 128 + ip, j * 1024 + i_row], mask=(i * 128 + ip < N))
            for k in nl.affine_range(2):
                res[i, j, ip, k * 512 + i_half] = nl.multiply(buf[i, j, ip, k * 512 + i_half], 3.0,
                                                              mask=(i * 128 + ip < N))
            nl.store(out[i * 128 + ip, j * 1024 + i_row], value=res[i, j, ip, i_row], mask=(i * 128 + ip < N))
    return out


def test_block_tensor_split_by_a_tail_lives_block_by_block():
    N = 22 * 128 + 44  # 23 row blocks, the last one 44 rows
    x = RNG.standard_normal((N, 2048)).astype(np.float32)
    assert 23 * 2 * 1024 * 4 > SBUF  # 188416 bytes per partition if every block of buf were live
    r = nki.benchmark(scaled_rows, x)
    np.testing.assert_allclose(r.outputs["out"], 3.0 * x, rtol=1e-6)
    assert r.stats["dma"]["spill_save_bytes"] == 0 and r.stats["dma"]["spill_reload_bytes"] == 0
    al = allocations(nki.to_bir(scaled_rows, nki.tensor(x.shape)))
    # buf: one unit for the 22 full row blocks, one for the tail's, each a block (4 KiB) per rotating buffer.
    bufs = sorted(n for n in al if n == "buf" or n.startswith("buf_p"))
    assert len(bufs) == 2
    for n in bufs:
        assert al[n]["allocated"] is True and al[n]["dims"][1] % (1024 * 4) == 0
        assert al[n]["dims"][1] <= 4 * 1024 * 4


def matmul_tail(lhsT, rhs):
    """lhsT [K, M], rhs [K, N] with N not a multiple of 512: the result in a PSUM block tensor [nm, nn, 128, 512]
    zeroed lazily (nn banks per trip of the m loop, more than PSUM's 8 if a trip's blocks were live at once), summed
    over the K tiles, the last N tile a masked tail."""
    K, M = lhsT.shape
    N = rhs.shape[1]
    nk, nm, nn = K // 128, M // 128, (N + 511) // 512
    out = nl.ndarray((M, N), nl.float32, buffer=nl.shared_hbm)
    lhs_sb = nl.ndarray((nk, nl.par_dim(128), M), nl.float32, buffer=nl.sbuf)
    rhs_sb = nl.ndarray((nk, nl.par_dim(128), nn * 512), nl.float32, buffer=nl.sbuf)
    acc = nl.zeros((nm, nn, nl.par_dim(128), 512), nl.float32, buffer=nl.psum, lazy_initialization=True)
    res = nl.ndarray((nm, nn, nl.par_dim(128), 512), nl.float32, buffer=nl.sbuf)
    ip = nl.arange(128)[:, None]
    i_m = nl.arange(M)[None, :]
    i_f = nl.arange(512)[None, :]
    for k in nl.affine_range(nk):
        lhs_sb[k, ip, i_m] = nl.load(lhsT[k * 128 + ip, i_m])
        for j in nl.affine_range(nn):
            rhs_sb[k, ip, j * 512 + i_f] = nl.load(rhs[k * 128 + ip, j * 512 + i_f], mask=(j * 512 + i_f < N))
    for m in nl.affine_range(nm):
        for j in nl.affine_range(nn):
            for k in nl.affine_range(nk):
                acc[m, j, ip, i_f] += nisa.nc_matmul(lhs_sb[k, ip, m * 128 + nl.arange(128)[None, :]],
                                                     rhs_sb[k, ip, j * 512 + i_f], mask=(j * 512 + i_f < N))
            res[m, j, ip, i_f] = nl.copy(acc[m, j, ip, i_f], mask=(j * 512 + i_f < N))
            nl.store(out[m * 128 + ip, j * 512 + i_f], value=res[m, j, ip, i_f], mask=(j * 512 + i_f < N))
    return out


def test_psum_block_tensor_split_by_a_tail_takes_a_bank_per_live_block():
    K, M, N = 256, 256, 8 * 512 + 200  # nn = 9 banks per trip of the m loop
    lhsT = RNG.standard_normal((K, M)).astype(np.float32)
    rhs = RNG.standard_normal((K, N)).astype(np.float32)
    got = nki.simulate(matmul_tail, lhsT, rhs)
    np.testing.assert_allclose(got, lhsT.T @ rhs, rtol=1e-4, atol=1e-3)
    al = allocations(nki.to_bir(matmul_tail, nki.tensor(lhsT.shape), nki.tensor(rhs.shape)))
    accs = [n for n in al if n == "acc" or n.startswith("acc_p")]
    assert len(accs) == 2  # the 8 full N tiles' blocks and the tail's
    assert all(al[n]["type"] == "PSUM" and al[n]["allocated"] is True for n in accs)
    assert sum(al[n]["dims"][1] for n in accs) <= 8 * 2048


def transposed_reuse(q):
    """q [nb, 128, 4, 128] fp32: a block tensor qt [nb, 128, 4, 128] (nb * 2 KiB per partition, more than SBUF)
    written a block per trip by one nest and read by a later nest whose outer loop picks a column group inside
    every block and whose inner loop walks the blocks: all blocks are live between the nests, so qt is kept in a
    DRAM home -- each block saved once, and reloaded in every trip of the inner loop."""
    nb = q.shape[0]
    out = nl.ndarray((4, nb, 128, 128), nl.float32, buffer=nl.shared_hbm)
    qt = nl.ndarray((nb, nl.par_dim(128), 4, 128), nl.float32, buffer=nl.sbuf)
    for b in nl.affine_range(nb):
        qt[b] = nl.load(q[b])
    for a in nl.affine_range(4):
        for b in nl.affine_range(nb):
            nl.store(out[a, b], value=nl.multiply(qt[b, :, a, :], 2.0))
    return out


def test_block_tensor_read_across_trips_is_reloaded_block_by_block():
    nb = 96
    q = RNG.standard_normal((nb, 128, 4, 128)).astype(np.float32)
    assert nb * 4 * 128 * 4 > SBUF  # 196608 bytes per partition
    r = nki.benchmark(transposed_reuse, q)
    np.testing.assert_allclose(r.outputs["out"], 2.0 * q.transpose(2, 0, 1, 3), rtol=1e-6)
    block = 128 * 4 * 128 * 4  # a block, all partitions: 256 KiB
    assert r.stats["dma"]["spill_save_bytes"] == nb * block  # saved once, after the first nest
    assert r.stats["dma"]["spill_reload_bytes"] == 4 * nb * block  # reloaded in each of the 4 x nb trips


def blocked_pv(p_t, v):
    """The attention tutorial's P @ V step: p_t [nq, 128 (k), nk, 128 (q)] fp32 (each q tile's scores, transposed,
    a [128, 128] block per k tile), v [nk, 128 (k), 512] fp32. The result of q tile i is a block of a PSUM block
    tensor declared with nl.ndarray (nothing zeroes it), summed by `+=` over the k tiles, copied out after the sum:
    nq banks (2 KiB per partition each) if every block were live."""
    nq, _, nk, _ = p_t.shape
    out = nl.ndarray((nq, 128, 512), nl.float32, buffer=nl.shared_hbm)
    v_sb = nl.ndarray((nl.par_dim(128), nk, 512), nl.float32, buffer=nl.sbuf)
    for k in nl.affine_range(nk):
        v_sb[:, k, :] = nl.load(v[k])
    acc = nl.ndarray((nq, nl.par_dim(128), 512), nl.float32, buffer=nl.psum)
    res = nl.ndarray((nl.par_dim(128), 512), nl.float32, buffer=nl.sbuf)
    for i in nl.sequential_range(nq):
        p_sb = nl.load(p_t[i])
        for k in nl.affine_range(nk):
            acc[i, :, :] += nisa.nc_matmul(stationary=p_sb[:, k, :], moving=v_sb[:, k, :])
        res[:, :] = nisa.tensor_copy(acc[i, :, :], dtype=nl.float32)
        nl.store(out[i], value=res)
    return out


def test_psum_block_tensor_summed_by_plus_equals_lives_a_q_trip_at_a_time():
    """`+=` into PSUM nothing wrote starts its accumulation group (NKI nc_matmul, "Accumulation mode": with
    accumulate=None the first write of a PSUM location overwrites, later ones accumulate): here on the first trip
    of the k loop, so the block is live from that matmul to its copy, one q trip at a time, and the banks that
    earlier trips used hold nothing that leaks into the next q tile's sum."""
    nq, nk = 12, 3
    assert nq * 512 * 4 > 8 * 2048  # 12 banks if every block of acc were live; PSUM has 8
    p_t = RNG.uniform(-1, 1, (nq, 128, nk, 128)).astype(np.float32)
    v = RNG.uniform(-1, 1, (nk, 128, 512)).astype(np.float32)
    r = nki.benchmark(blocked_pv, p_t, v, sanitize=True)
    want = np.stack([sum(p_t[i, :, k, :].T @ v[k] for k in range(nk)) for i in range(nq)])
    np.testing.assert_allclose(r.outputs["out"], want, rtol=1e-4, atol=1e-4)
    assert r.findings == []  # no accumulation onto unwritten PSUM
    bir = nki.to_bir(blocked_pv, nki.tensor(p_t.shape), nki.tensor(v.shape))
    mm = matmults(bir)
    # The k loop's first trip is peeled: its matmul starts the group (start_tensor_calc), the others accumulate.
    for m in mm:
        k_trip = m["debug"]["nki"]["loops"][1]["trip"]
        assert m["start_tensor_calc"] is (k_trip["terms"] == [] and k_trip["c"] == 0)
    assert any(m["start_tensor_calc"] for m in mm) and not all(m["start_tensor_calc"] for m in mm)
    al = allocations(bir)
    accs = [n for n in al if n == "acc" or n.startswith("acc_p")]
    assert accs and all(al[n]["type"] == "PSUM" for n in accs)
    assert sum(al[n]["dims"][1] for n in accs) <= 8 * 2048
