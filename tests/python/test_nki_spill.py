"""Spills across a loop (python/neuronsim/nki/allocate.py _loop_gap/_split_loop, docs/nki-lowering.md 2): a value
declared before a loop and used inside it, but not by the instruction that needs the room, waits in a DRAM home --
a loop-carried accumulator saved after its update in one trip and reloaded before it in the next. Checked against
numpy, with the spill traffic counted by hand."""
import numpy as np

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

SBUF = 180224  # trn1's usable SBUF bytes per partition (the allocator's budget)
RNG = np.random.default_rng(11)


def selective_scan(delta, u, A, B, C):
    """The fused Mamba tutorial's idiom on one channel tile: delta and u loaded once, a loop over the states whose
    every trip makes [128, n] fp32 temporaries, and a loop-carried accumulator. At n = 8192 each tile is 32 KiB per
    partition; the instruction making dx (deltaU) needs six of them live: 192 KiB, more than SBUF."""
    P, n = delta.shape
    y = nl.ndarray((P, n), nl.float32, buffer=nl.shared_hbm)
    total = nl.zeros((nl.par_dim(P), n), nl.float32)
    dt = nl.load(delta)
    x = nl.load(u)
    for k in nl.affine_range(A.shape[1]):
        a = nl.load(A[0:P, k])
        decay = nisa.activation(op=nl.exp, data=dt, scale=a)
        b = nl.load(B[k:k + 1, 0:n])
        dx = nisa.tensor_tensor(dt, x, op=nl.multiply)
        drive = nisa.tensor_tensor(dx, b.broadcast_to((P, n)), op=nl.multiply)
        h = nisa.tensor_tensor_scan(decay, drive, initial=0, op0=np.multiply, op1=np.add)
        c = nl.load(C[k:k + 1, 0:n])
        total[0:P, 0:n] += nisa.tensor_tensor(h, c.broadcast_to((P, n)), op=nl.multiply)
    nl.store(y, total)
    return y


def selective_scan_ref(delta, u, A, B, C):
    out = np.zeros(delta.shape)
    for k in range(A.shape[1]):
        decay = np.exp(delta * A[:, k:k + 1].astype(np.float64))
        drive = delta.astype(np.float64) * u * B[k]
        h = np.zeros(delta.shape[0])
        for t in range(delta.shape[1]):
            h = decay[:, t] * h + drive[:, t]
            out[:, t] += h * C[k, t]
    return out


def _run_checked(n, states):
    """Benchmark selective_scan on random [128, n] inputs with `states` states; its output checked against numpy."""
    delta = RNG.uniform(0.01, 0.1, (128, n)).astype(np.float32)
    u = RNG.standard_normal((128, n)).astype(np.float32)
    A = -RNG.uniform(0.5, 2.0, (128, states)).astype(np.float32)
    B = RNG.standard_normal((states, n)).astype(np.float32)
    C = RNG.standard_normal((states, n)).astype(np.float32)
    r = nki.benchmark(selective_scan, delta, u, A, B, C)
    np.testing.assert_allclose(r.outputs["y"], selective_scan_ref(delta, u, A, B, C), rtol=1e-4, atol=1e-5)
    return r


def test_loop_carried_accumulator_and_loop_inputs_wait_in_dram():
    n, states = 8192, 3
    assert 6 * n * 4 > SBUF >= 5 * n * 4
    r = _run_checked(n, states)
    # Making dx, the live tiles are total, dt, x, decay and the new dx; the one whose next use is farthest and not
    # at that instruction is total (next used by the trip's last instruction): saved after its nl.zeros, then
    # reloaded before and saved after the += in each of the 3 trips, and reloaded once for the store. Making drive
    # (dx, b, drive, decay, dt, x live), x is next used in the next trip: saved once after its load, reloaded before
    # dx in each trip, never saved again (no trip writes it). Each transfer is one tile, 128 partitions x 32 KiB.
    tile = 128 * n * 4
    assert r.stats["dma"]["spill_save_bytes"] == (1 + states + 1) * tile
    assert r.stats["dma"]["spill_reload_bytes"] == (states + 1 + states) * tile


def test_no_loop_spill_when_the_states_fit():
    n, states = 4096, 2  # 16 KiB tiles: six of them fit
    r = _run_checked(n, states)
    assert r.stats["dma"]["spill_save_bytes"] == 0 and r.stats["dma"]["spill_reload_bytes"] == 0


def carried_sum(x):
    """x [K, 128, nb * 512]: out = the sum over K, accumulated with nl.loop_reduce over a sequential loop into a block
    tensor declared before it (NKIBench's lora dump: its [12, 2, 4, 2, 4, 128, 512] accumulator, 128 KiB per trip of
    the outer loop). At nb = 48 the accumulator and a trip's input tile are 96 KiB each, more than SBUF together:
    the accumulator is kept in a DRAM home block by block, saved after its update in each trip of the k loop and
    reloaded before it in the next -- the first trip starting from its nl.zeros -- then reloaded for the copy out."""
    K, P, F = x.shape
    nb = F // 512
    out = nl.ndarray((P, F), nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((nb, nl.par_dim(128), 512), nl.float32, buffer=nl.sbuf)
    res = nl.ndarray((nb, nl.par_dim(128), 512), nl.float32, buffer=nl.sbuf)
    ip, i_f, i_all = nl.arange(128)[:, None], nl.arange(512)[None, :], nl.arange(F)[None, :]
    for k in nl.sequential_range(K):
        big = nl.ndarray((nl.par_dim(128), F), nl.float32, buffer=nl.sbuf)
        big[ip, i_all] = nl.load(x[k, ip, i_all])
        for b in nl.affine_range(nb):
            acc[b, ip, i_f] = nl.loop_reduce(big[ip, b * 512 + i_f], op=np.add, loop_indices=[k])
    for b in nl.affine_range(nb):
        res[b, ip, i_f] = nl.copy(acc[b, ip, i_f])
        nl.store(out[ip, b * 512 + i_f], value=res[b, ip, i_f])
    return out


def test_a_block_accumulator_carried_round_a_loop_waits_in_a_home_block_by_block():
    K, nb = 3, 48
    assert 2 * nb * 512 * 4 > SBUF
    x = RNG.uniform(-1, 1, (K, 128, nb * 512)).astype(np.float32)
    r = nki.benchmark(carried_sum, x, sanitize=True)
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["out"], x[0] + x[1] + x[2], rtol=1e-6)
    block = 128 * 512 * 4  # bytes of one block, all partitions
    assert r.stats["dma"]["spill_save_bytes"] == K * nb * block  # after the update, every trip
    # before the update in every trip but the first, then once for the copy out
    assert r.stats["dma"]["spill_reload_bytes"] == (K - 1) * nb * block + nb * block
