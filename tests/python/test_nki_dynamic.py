"""Registers and dynamic control (public NKI docs: nki.isa.register_alloc / move / load / store, nl.dynamic_range,
nl.fori_loop, nl.while_loop, "NKI Dynamic Loops") on the simulator against numpy: trip counts and conditions read
from tensors at run time, a register as a loop variable and as a run-time offset, and the refusals."""
import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(3738)


def opcodes(doc):
    out = []

    def walk(insts):
        for i in insts:
            out.append(i["opcode"])
            for b in i.get("blocks", []):
                walk(b["instructions"])
    for f in doc["functions"]:
        for b in f["blocks"]:
            walk(b["instructions"])
    return out


def registers(x):
    """register_alloc(7); move it to another register; load a tensor's element; store both: [7, x[0, 0] ]."""
    out = nl.ndarray((1, 2), nl.int32, buffer=nl.shared_hbm)
    r = nisa.register_alloc(7)
    assert isinstance(r, nisa.VirtualRegister)
    q = nisa.register_alloc()
    nisa.register_move(q, r)
    s = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=x)
    v = nisa.register_alloc()
    nisa.register_load(v, s)
    nisa.register_store(out[0:1, 0:1], q)
    nisa.register_store(out[0:1, 1:2], v)
    return out


def test_register_alloc_move_load_store():
    """nisa.register_alloc (with a value), register_move, register_load, register_store; the kernel checks that each
    is a VirtualRegister."""
    np.testing.assert_array_equal(nki.simulate(registers, np.array([[-42]], np.int32)), [[7, -42]])


def sum_first_tiles(x, n):
    """x [T * 128, 64]; n [1, 1] int32: the sum of x's first n tiles of 128 rows. The trip count is a register loaded
    from n (nl.dynamic_range); tile i is x viewed as [T, 128 * 64] at scalar_offset i (indirect_dim 0)."""
    T = x.shape[0] // 128
    out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    n_sb = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=n_sb, src=n)
    count = nisa.register_alloc()
    nisa.register_load(count, n_sb)
    for i in nl.dynamic_range(count):
        t = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x.reshape((T, 128 * 64)).ap([[64, 128], [1, 64]], scalar_offset=i, indirect_dim=0))
        nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
    nl.store(out, acc)
    return out


def test_a_dynamic_range_reads_its_trip_count_from_a_tensor():
    """nl.dynamic_range over a register loaded from a tensor: one DynamicForLoop, 0 to 5 trips."""
    x = RNG.uniform(-1, 1, (5 * 128, 64)).astype(np.float32)
    for n in (0, 1, 3, 5):
        want = x[:n * 128].reshape(n, 128, 64).sum(axis=0, dtype=np.float64) if n else np.zeros((128, 64))
        got = nki.simulate(sum_first_tiles, x, np.array([[n]], np.int32))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    ops = opcodes(nki.to_bir(sum_first_tiles, x, np.array([[2]], np.int32)))
    assert ops.count("DynamicForLoop") == 1 and ops.count("Load") == 2  # the body once, not unrolled


def dynamic_add(a, b, n_tiles):
    """The NKI Library's dynamic-shape idiom: a row window advanced in a dynamic loop. m_start, a [1, 1] SBUF tile,
    is the scalar_offset of every DMA in the body and grows by 128 at the end of each trip."""
    M, H = a.shape
    out = nl.ndarray((M, H), a.dtype, buffer=nl.shared_hbm)
    n_sb = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=n_sb, src=n_tiles[0])
    n_reg = nisa.register_alloc()
    nisa.register_load(n_reg, n_sb)
    m_start = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=m_start, value=0)
    for _ in nl.dynamic_range(0, n_reg, 1):
        for h in nl.affine_range(H // 128):
            x = nl.ndarray((128, 128), a.dtype, buffer=nl.sbuf)
            y = nl.ndarray((128, 128), a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=x, src=a.ap([[H, 128], [1, 128]], offset=h * 128, scalar_offset=m_start,
                                          indirect_dim=0))
            nisa.dma_copy(dst=y, src=b.ap([[H, 128], [1, 128]], offset=h * 128, scalar_offset=m_start,
                                          indirect_dim=0))
            z = nl.ndarray((128, 128), a.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)
            nisa.dma_copy(dst=out.ap([[H, 128], [1, 128]], offset=h * 128, scalar_offset=m_start, indirect_dim=0),
                          src=z)
        nisa.tensor_scalar(dst=m_start, data=m_start, op0=nl.add, operand0=128)
    return out


def test_a_scalar_offset_tile_advanced_in_a_dynamic_loop_walks_the_rows():
    a = RNG.uniform(-1, 1, (512, 256)).astype(np.float32)
    b = RNG.uniform(-1, 1, (512, 256)).astype(np.float32)
    with pytest.warns(UserWarning, match="written by no instruction"):  # rows 384.. are not processed
        got = nki.simulate(dynamic_add, a, b, np.array([[3]], np.int32))
    np.testing.assert_array_equal(got[:384], a[:384] + b[:384])


def fori_copy(data, ub):
    """public NKI docs' nl.fori_loop example: element i of data to the output for i < ub (a register), the loop's
    register i the scalar_offset (indirect_dim 1) of both DMAs."""
    N = data.shape[1]
    out = nl.ndarray((1, N), nl.float32, buffer=nl.shared_hbm)
    ub_sb = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ub_sb, src=ub)
    ub_reg = nisa.register_alloc()
    nisa.register_load(ub_reg, ub_sb)
    zeros = nl.zeros((1, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=out, src=zeros)
    temp = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)

    def body(i):
        nisa.dma_copy(dst=temp, src=data.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1))
        nisa.dma_copy(dst=out.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1), src=temp)

    nl.fori_loop(0, ub_reg, body)
    return out


def test_a_fori_loop_with_a_register_bound_runs_its_body_that_many_times():
    data = RNG.uniform(1, 2, (1, 10)).astype(np.float32)
    got = nki.simulate(fori_copy, data, np.array([[6]], np.int32))
    np.testing.assert_array_equal(got, np.concatenate([data[:, :6], np.zeros((1, 4), np.float32)], axis=1))


def count_down(val, count):
    """public NKI docs' nl.while_loop example: acc += val while the counter (from a tensor) is not 0."""
    out = nl.ndarray((1, 1), nl.float32, buffer=nl.shared_hbm)
    v = nl.ndarray((1, 1), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=v, src=val)
    acc = nl.zeros((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    count_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=count_sb, src=count)
    one = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=one, value=1)
    reg = nisa.register_alloc()
    nisa.register_load(reg, count_sb)

    def body(r):
        nisa.tensor_tensor(dst=acc, data1=acc, data2=v, op=nl.add)
        nisa.tensor_tensor(dst=count_sb, data1=count_sb, data2=one, op=nl.subtract)
        nisa.register_load(r, count_sb)
        return r

    nl.while_loop(reg, body)
    nl.store(out, acc)
    return out


def count_down_bare(val, count):
    """The same with the deprecated bare `while reg:`."""
    out = nl.ndarray((1, 1), nl.float32, buffer=nl.shared_hbm)
    v = nl.ndarray((1, 1), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=v, src=val)
    acc = nl.zeros((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    count_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=count_sb, src=count)
    one = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=one, value=1)
    reg = nisa.register_alloc()
    nisa.register_load(reg, count_sb)
    while reg:
        nisa.tensor_tensor(dst=acc, data1=acc, data2=v, op=nl.add)
        nisa.tensor_tensor(dst=count_sb, data1=count_sb, data2=one, op=nl.subtract)
        nisa.register_load(reg, count_sb)
    nl.store(out, acc)
    return out


@pytest.mark.parametrize("kernel", [count_down, count_down_bare])
def test_a_while_loop_runs_until_its_register_is_zero_and_not_at_all_from_zero(kernel):
    """nl.while_loop and the bare `while reg:`: a true while (0 trips from 0)."""
    val = np.array([[2.5]], np.float32)
    for n in (0, 1, 4):
        np.testing.assert_array_equal(nki.simulate(kernel, val, np.array([[n]], np.int32)), [[2.5 * n]])
    ops = opcodes(nki.to_bir(kernel, val, np.array([[1]], np.int32)))
    assert ops.count("DoWhile") == 1 and ops.count("TensorTensor") == 2


def if_on_register(x):
    r = nisa.register_alloc(1)
    if r:
        nl.store(x, nl.load(x))
    return x


def range_of_register(x):
    r = nisa.register_alloc(2)
    for _ in range(r):
        pass
    return x


def write_loop_variable(x):
    for i in nl.dynamic_range(2):
        nisa.register_move(i, 0)
    return x


def register_step(x):
    r = nisa.register_alloc(2)
    for _ in nl.dynamic_range(0, 8, r):
        pass
    return x


@pytest.mark.parametrize("kernel, text", [
    (if_on_register, "Python truth value"),
    (range_of_register, "Python integer"),
    (write_loop_variable, "read-only"),
    (register_step, "positive compile-time integer"),
])
def test_what_a_register_cannot_do_is_refused_naming_the_line(kernel, text):
    with pytest.raises(nki.KernelError, match=text) as e:
        nki.to_bir(kernel, nki.tensor((4, 4), np.float32))
    assert "test_nki_dynamic.py:" in str(e.value)
