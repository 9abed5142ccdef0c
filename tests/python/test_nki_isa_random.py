"""nki.isa's and nki.language's random numbers -- rand_set_state / rand_get_state, rand2, rng, dropout, nl.rand,
nl.dropout (and the refused set_rng_seed / random_seed) -- on the simulator. The values are the simulator's XORWOW
model (engines/ops/random.cpp; the algorithm the public rand2 page names): with a state set by rand_set_state they
are checked bit for bit against a numpy XORWOW written here; otherwise by their documented ranges."""
import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(4141)
M32 = 0xFFFFFFFF


def xorwow(s):
    """One XORWOW step on state s (6 ints, changed in place): the 32 random bits."""
    t = s[0] ^ (s[0] >> 2)
    s[0], s[1], s[2], s[3] = s[1], s[2], s[3], s[4]
    s[4] = (s[4] ^ (s[4] << 4) ^ t ^ (t << 1)) & M32
    s[5] = (s[5] + 362437) & M32
    return (s[5] + s[4]) & M32


def uniform(bits, lo, hi):
    u = np.uint32((bits & 0x7FFFFF) | 0x3F800000).view(np.float32) - np.float32(1)
    return np.float32(lo) + (np.float32(hi) - np.float32(lo)) * u


def out_like(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype, buffer=nl.shared_hbm)


STATE = RNG.integers(1, 2 ** 32, (4, 24), dtype=np.uint64).astype(np.uint32)


def test_rand2_rng_and_get_state_follow_the_state_set():
    def kernel(state):
        r2, bits, after = out_like((4, 5)), out_like((4, 3), nl.uint32), out_like((4, 24), nl.uint32)
        nisa.rand_set_state(nl.load(state), engine=nisa.engine.vector)
        u = nl.ndarray((4, 5), nl.float32, buffer=nl.sbuf)
        nisa.rand2(u, -2.0, 3.0)
        b = nl.ndarray((4, 3), nl.uint32, buffer=nl.sbuf)
        nisa.rng(b)
        s = nl.ndarray((4, 24), nl.uint32, buffer=nl.sbuf)
        nisa.rand_get_state(s, engine=nisa.vector_engine)
        nl.store(r2, u)
        nl.store(bits, b)
        nl.store(after, s)
        return r2, bits, after
    r2, bits, after = nki.simulate(kernel, STATE)
    for p in range(4):
        s = [int(v) for v in STATE[p, :6]]  # lane 0 drives every element
        np.testing.assert_array_equal(r2[p], [uniform(xorwow(s), -2, 3) for _ in range(5)])
        np.testing.assert_array_equal(bits[p], [xorwow(s) for _ in range(3)])
        np.testing.assert_array_equal(after[p], s + [int(v) for v in STATE[p, 6:]])


def test_dropout_zeroes_where_the_draw_is_below_the_probability():
    x = RNG.uniform(1, 2, (4, 64)).astype(np.float32)
    prob = np.array([[0.0], [1.0], [0.25], [0.75]], np.float32)

    def kernel(x, prob, state):
        o1, o2 = out_like(x.shape), out_like(x.shape)
        nisa.rand_set_state(nl.load(state), engine=nisa.vector_engine)
        d = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        t = nl.load(x)
        nisa.dropout(d, t, nl.load(prob))
        nl.store(o1, d)
        nl.store(o2, nl.dropout(t, 0.5))  # nl.dropout continues the same stream
        return o1, o2
    o1, o2 = nki.simulate(kernel, x, prob, STATE)
    for p in range(4):
        s = [int(v) for v in STATE[p, :6]]
        u1 = np.array([uniform(xorwow(s), 0, 1) for _ in range(64)])
        u2 = np.array([uniform(xorwow(s), 0, 1) for _ in range(64)])
        np.testing.assert_array_equal(o1[p], np.where(u1 < prob[p], 0, x[p]))
        np.testing.assert_array_equal(o2[p], np.where(u2 < 0.5, 0, x[p]))
    assert np.all(o1[0] == x[0]) and np.all(o1[1] == 0)  # probability 0 keeps all, 1 drops all


def test_nl_rand_is_uniform_in_0_1():
    def kernel():
        out = out_like((128, 256))
        nl.store(out, nl.rand((128, 256), dtype=nl.float32))
        return out
    got = nki.simulate(kernel)
    assert got.min() >= 0 and got.max() < 1
    assert abs(got.mean() - 0.5) < 0.01 and abs(got.var() - 1 / 12) < 0.005  # 32768 draws


def test_seeding_by_a_32_bit_seed_is_refused_with_its_reason():
    def kernel(seed):
        nisa.set_rng_seed(nl.load(seed))
        return None
    with pytest.raises(nki.Unsupported, match="nisa.set_rng_seed is not lowered by neuronsim.s NKI front end: "
                                              "how the engine expands a 32-bit seed"):
        nki.to_bir(kernel, np.zeros((1, 1), np.uint32))

    def legacy(seed):
        nl.random_seed(nl.load(seed))
        return None
    with pytest.raises(nki.Unsupported, match="nl.random_seed is not lowered by neuronsim.s NKI "
                                              "front end: how the engine expands"):
        nki.to_bir(legacy, np.zeros((1, 1), np.int32))

    def gpsimd(state):
        nisa.rand_set_state(nl.load(state))  # the page's default engine, GpSimd
        return None
    with pytest.raises(nki.Unsupported, match="GpSimd engine: its generator"):
        nki.to_bir(gpsimd, np.zeros((4, 6), np.uint32))
