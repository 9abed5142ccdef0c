"""nki.isa's accumulator calls -- activation's reduce_cmd forms, activate2 (ScalarE registers), exponential,
tensor_scalar_cumulative and tensor_scalar_reduce's reduce_cmd / reduce_init (VectorE registers) -- on the simulator
against numpy references written from their public nki.isa pages, including chains of calls that leave the
registers to the next one."""
import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(3939)
X = RNG.integers(-4, 5, (64, 16)).astype(np.float32)  # small integers: sums and products are exact in fp32
Y = RNG.integers(-4, 5, (64, 16)).astype(np.float32)
F32 = 2.0 ** -24


def out_like(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype, buffer=nl.shared_hbm)


def test_activation_registers_persist_across_calls():
    """reset_reduce on x, reduce on y, then an idle call whose reduce_res reads the registers: the row sums of
    square(x) and square(y) together (public NKI docs, nki.isa.activation: reduce_res = reduce_regs)."""
    def kernel(x, y):
        s1, s2 = out_like((64, 1)), out_like((64, 1))
        tx, ty = nl.load(x), nl.load(y)
        r1 = nl.ndarray((64, 1), nl.float32, buffer=nl.sbuf)
        r2 = nl.ndarray((64, 1), nl.float32, buffer=nl.sbuf)
        nisa.activation(op=nl.square, data=tx, reduce_op=nl.add, reduce_res=r1,
                        reduce_cmd=nisa.reduce_cmd.reset_reduce)
        nisa.activation(op=nl.square, data=ty, reduce_op=nl.add, reduce_cmd=nisa.reduce_cmd.reduce)
        nisa.activation(op=nl.copy, data=tx, reduce_res=r2)  # idle: reads the registers, folds nothing
        nl.store(s1, r1)
        nl.store(s2, r2)
        return s1, s2
    s1, s2 = nki.simulate(kernel, X, Y)
    np.testing.assert_array_equal(s1, (X * X).sum(1, keepdims=True))
    np.testing.assert_array_equal(s2, (X * X + Y * Y).sum(1, keepdims=True))


def test_activate2_stages_relu_param_and_reduce():
    imm0 = RNG.integers(1, 4, (64, 1)).astype(np.float32)

    def kernel(x, imm0):
        o1, o2, r = out_like(x.shape), out_like(x.shape), out_like((64, 1))
        t, a = nl.load(x), nl.load(imm0)
        d = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        rr = nl.ndarray((64, 1), nl.float32, buffer=nl.sbuf)
        # relu(x * imm0[p] + 0.5), the row max into the registers
        nisa.activate2(dst=d, op=nl.relu, data=t, imm0=a, imm1=0.5, op0=nl.multiply, op1=nl.add,
                       reduce_op=nl.maximum, reduce_res=rr, reduce_cmd=nisa.reduce_cmd.reset_reduce)
        e = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        # copy(2 - x): subtract reversed
        nisa.activate2(e, nl.copy, t, 2.0, 0.0, nl.subtract, None, reverse0=True)
        nl.store(o1, d)
        nl.store(o2, e)
        nl.store(r, rr)
        return o1, o2, r
    o1, o2, r = nki.simulate(kernel, X, imm0)
    want = np.maximum(X * imm0 + 0.5, 0)
    np.testing.assert_array_equal(o1, want)
    np.testing.assert_array_equal(r, want.max(1, keepdims=True))
    np.testing.assert_array_equal(o2, 2 - X)


def test_activate2_refuses_a_pair_the_page_does_not_list():
    def kernel(x):
        d = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        nisa.activate2(dst=d, op=nl.exp, data=nl.load(x), imm0=1.0, imm1=1.0, op0=nl.add, op1=nl.add)
        return None
    with pytest.raises(nki.KernelError, match=r"\(op0, op1\) = \('add', 'add'\) is not one of the page's pairs"):
        nki.to_bir(kernel, X)


def test_exponential_with_a_running_sum_over_two_tiles_and_load_reduce():
    xf = RNG.uniform(-2, 2, (64, 16)).astype(np.float32)
    m = xf.max(1, keepdims=True)

    def kernel(x, m):
        o, s1, s2 = out_like(x.shape), out_like((64, 1)), out_like((64, 1))
        t, mx = nl.load(x), nl.load(m)
        d = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        r1 = nl.ndarray((64, 1), nl.float32, buffer=nl.sbuf)
        r2 = nl.ndarray((64, 1), nl.float32, buffer=nl.sbuf)
        nisa.exponential(dst=d, src=t, max_value=mx, reduce_cmd=nisa.reduce_cmd.reset_reduce)
        e = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        nisa.exponential(dst=e, src=t, max_value=mx, reduce_res=r1, reduce_cmd=nisa.reduce_cmd.reduce)
        f = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        nisa.exponential(dst=f, src=t, max_value=0.0, reduce_res=r2, reduce_cmd=nisa.reduce_cmd.load_reduce,
                         reduce_init=10.0)
        nl.store(o, d)
        nl.store(s1, r1)
        nl.store(s2, r2)
        return o, s1, s2
    o, s1, s2 = nki.simulate(kernel, xf, m)
    want = np.exp(xf.astype(np.float64) - m)
    np.testing.assert_allclose(o, want, rtol=4 * F32)
    np.testing.assert_allclose(s1, 2 * want.sum(1, keepdims=True), rtol=40 * F32)
    np.testing.assert_allclose(s2, 10 + np.exp(xf.astype(np.float64)).sum(1, keepdims=True), rtol=40 * F32)


def test_tensor_scalar_cumulative_reset_load_and_continue():
    seed = RNG.integers(-3, 4, (64, 1)).astype(np.float32)

    def kernel(x, seed):
        o1, o2, o3 = out_like(x.shape), out_like(x.shape), out_like(x.shape)
        t = nl.load(x)
        a = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        b = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        c = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_cumulative(dst=a, src=t, op0=nl.multiply, op1=nl.add, imm0=2.0)  # cumsum(2x)
        nisa.tensor_scalar_cumulative(dst=b, src=t, op0=nl.add, op1=nl.maximum, imm0=0.0, imm1=nl.load(seed),
                                      reduce_cmd=nisa.reduce_cmd.load_reduce)  # running max from seed
        nisa.tensor_scalar_cumulative(dst=c, src=t, op0=nl.multiply, op1=nl.add, imm0=1.0,
                                      reduce_cmd=nisa.reduce_cmd.reduce)  # continues from b's last value
        nl.store(o1, a)
        nl.store(o2, b)
        nl.store(o3, c)
        return o1, o2, o3
    o1, o2, o3 = nki.simulate(kernel, X, seed)
    np.testing.assert_array_equal(o1, np.cumsum(2 * X, axis=1))
    run_max = np.maximum.accumulate(np.concatenate([seed, X], axis=1), axis=1)[:, 1:]
    np.testing.assert_array_equal(o2, run_max)
    np.testing.assert_array_equal(o3, run_max[:, -1:] + np.cumsum(X, axis=1))


def test_tensor_scalar_reduce_keeps_the_registers_without_reduce_res():
    def kernel(x, y):
        s = out_like((64, 1))
        r = nl.ndarray((64, 1), nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_reduce(data=nl.load(x), op0=nl.multiply, operand0=3.0, reduce_op=nl.add)
        nisa.tensor_scalar_reduce(data=nl.load(y), op0=nl.add, operand0=1.0, reduce_op=nl.add, reduce_res=r,
                                  reduce_cmd=nisa.reduce_cmd.reduce, reduce_res_negate=True)
        nl.store(s, r)
        return s
    got = nki.simulate(kernel, X, Y)
    np.testing.assert_array_equal(got, -((3 * X).sum(1, keepdims=True) + (Y + 1).sum(1, keepdims=True)))
