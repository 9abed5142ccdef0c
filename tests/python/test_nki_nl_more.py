"""nki.language's math and statistics beyond the element-wise basics -- abs_max, abs_min, fmod, mod, trunc, tan,
softmax, var, rms_norm -- on the simulator against numpy references written from their public
nki.language pages (which cite numpy.fmod, numpy.mod, numpy.trunc, numpy.tan, numpy.var, torch softmax)."""
import numpy as np

import neuronsim.nki as nki
import neuronsim.nki.language as nl

RNG = np.random.default_rng(4242)
F32 = 2.0 ** -24


def run_unary(fn, x, y=None, shape=None):
    """fn of the loaded x (and y) stored as a float32 result."""
    def one(x):
        out = nl.ndarray(shape or x.shape, nl.float32, buffer=nl.shared_hbm)
        nl.store(out, fn(nl.load(x)))
        return out

    def two(x, y):
        out = nl.ndarray(shape or x.shape, nl.float32, buffer=nl.shared_hbm)
        nl.store(out, fn(nl.load(x), nl.load(y)))
        return out
    return nki.simulate(one, x) if y is None else nki.simulate(two, x, y)


def test_abs_max_and_abs_min_keep_the_sign_and_break_ties_to_y():
    x = np.array([[-5, 1, 3, -2, 0]], np.float32)
    y = np.array([[3, -1, -3, 4, -0.5]], np.float32)
    np.testing.assert_array_equal(run_unary(nl.abs_max, x, y), [[-5, -1, -3, 4, -0.5]])
    np.testing.assert_array_equal(run_unary(nl.abs_min, x, y), [[3, -1, -3, -2, 0]])


def test_fmod_mod_trunc():
    x = RNG.uniform(-10, 10, (32, 16)).astype(np.float32)
    y = RNG.choice([-3.0, -1.5, 2.0, 2.5], (32, 16)).astype(np.float32)
    np.testing.assert_array_equal(run_unary(nl.fmod, x, y), np.fmod(x, y))
    # mod = r + y where r = fmod(x, y) and y have opposite signs: one fp32 add beyond numpy's exact remainder
    np.testing.assert_allclose(run_unary(nl.mod, x, y), np.mod(x.astype(np.float64), y), atol=4 * F32 * 10)
    np.testing.assert_array_equal(run_unary(lambda t: nl.mod(t, 3.0), x), np.mod(x, np.float32(3)))
    np.testing.assert_array_equal(run_unary(nl.trunc, x), np.trunc(x))


def test_tan():
    x = RNG.uniform(-1.2, 1.2, (16, 32)).astype(np.float32)
    np.testing.assert_allclose(run_unary(nl.tan, x), np.tan(x.astype(np.float64)), rtol=8 * F32, atol=8 * F32)


def test_softmax_and_var_along_the_free_axis():
    x = RNG.uniform(-3, 3, (64, 40)).astype(np.float32)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(run_unary(lambda t: nl.softmax(t, axis=1), x), e / e.sum(1, keepdims=True),
                               rtol=64 * F32)
    np.testing.assert_allclose(run_unary(lambda t: nl.var(t, axis=1), x, shape=(64, 1)),
                               x.astype(np.float64).var(1, keepdims=True), rtol=200 * F32)


def test_rms_norm():
    x = RNG.uniform(-2, 2, (32, 48)).astype(np.float32)
    w = RNG.uniform(0.5, 1.5, (32, 48)).astype(np.float32)
    xd = x.astype(np.float64)
    want = xd / np.sqrt((xd * xd).sum(1, keepdims=True) / 48 + 1e-6) * w
    np.testing.assert_allclose(run_unary(lambda t, u: nl.rms_norm(t, u, axis=1, n=48), x, w), want, rtol=64 * F32)
