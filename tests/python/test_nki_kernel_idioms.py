"""Idioms of public NKI kernels that the front end once refused or mis-shaped, each in a kernel written here in their
style and checked on the simulator against numpy: a causal mask and an index ramp whose base moves with the loop
variables (nisa.affine_select / nisa.iota of `tile * 128 + i_p`), an iota of a sum of nl.mgrid components (dense,
as numpy's mgrid), nisa.tensor_tensor with a [P, 1] operand (one value per partition across the free dims), and a
kernel whose module-level allocator object places its tiles while the front end traces the kernel more than once."""
import warnings

import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(3737)
NEG = -9984.0  # the fill value causal-attention kernels use in place of -inf


def simulate_quietly(kernel, *args):
    """The loops of these kernels are unrolled (the instruction's base is an immediate), with a warning."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = nki.simulate(kernel, *args)
    return out, [str(w.message) for w in got]


def test_causal_mask_whose_base_moves_with_the_query_and_key_tiles():
    q_tiles, k_tiles, P, F = 2, 3, 128, 64
    s = RNG.standard_normal((q_tiles * P, k_tiles * F)).astype(np.float32)

    def kernel(scores):
        out = nl.ndarray(scores.shape, nl.float32, buffer=nl.shared_hbm)
        i_p = nl.arange(P)[:, None]
        i_f = nl.arange(F)[None, :]
        for qi in nl.affine_range(q_tiles):
            for ki in nl.affine_range(k_tiles):
                tile = nl.load(scores[qi * P + i_p, ki * F + i_f])
                q_pos = qi * P + i_p
                k_pos = ki * F + i_f
                kept = nisa.affine_select(pred=(q_pos >= k_pos), on_true_tile=tile, on_false_value=NEG)
                nl.store(out[qi * P + i_p, ki * F + i_f], kept)
        return out
    got, warned = simulate_quietly(kernel, s)
    q, k = np.mgrid[0:q_tiles * P, 0:k_tiles * F]
    np.testing.assert_array_equal(got, np.where(q >= k, s, NEG))
    assert any("affine_select" in w and "unrolled" in w for w in warned)


def test_iota_of_a_position_that_starts_at_the_tile():
    tiles, P, F = 3, 128, 4  # positions tile * 512 + p * 4 + f, as an image kernel numbers its output pixels

    def kernel():
        out = nl.ndarray((tiles * P, F), nl.int32, buffer=nl.shared_hbm)
        i_p = nl.arange(P)[:, None]
        i_f = nl.arange(F)[None, :]
        for t in nl.affine_range(tiles):
            pos = nisa.iota(t * P * F + i_p * F + i_f, dtype=nl.int32)
            nl.store(out[t * P + i_p, i_f], pos)
        return out
    got, warned = simulate_quietly(kernel)
    np.testing.assert_array_equal(got, np.arange(tiles * P * F).reshape(tiles * P, F))
    assert any("iota" in w for w in warned)


def test_iota_of_mgrid_components_has_the_whole_grid_shape():
    P, A, B, C = 16, 4, 3, 3

    def kernel():
        out = nl.ndarray((P, A, B, C), nl.int32, buffer=nl.shared_hbm)
        g = nl.mgrid[0:P, 0:A, 0:B, 0:C]
        window = nisa.iota(3 * g.y + g.z, dtype=nl.int32)  # the index within a 3 x 3 window, for every (p, a)
        nl.store(out, window)
        return out
    got = nki.simulate(kernel)
    _, _, y, z = np.mgrid[0:P, 0:A, 0:B, 0:C]
    assert got.shape == (P, A, B, C)
    np.testing.assert_array_equal(got, 3 * y + z)


@pytest.mark.parametrize("scale_first", [False, True])
def test_tensor_tensor_with_a_per_partition_scale(scale_first):
    x = RNG.standard_normal((128, 96)).astype(np.float32)
    scale = RNG.uniform(0.5, 2.0, (128, 1)).astype(np.float32)

    def kernel(x, scale):
        out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
        t, s = nl.load(x), nl.load(scale)
        a, b = (s, t) if scale_first else (t, s)
        d = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=d, data1=a, data2=b, op=nl.subtract)
        nl.store(out, d)
        return out
    got = nki.simulate(kernel, x, scale)
    np.testing.assert_allclose(got, scale - x if scale_first else x - scale, rtol=0, atol=1e-6)


class BumpAllocator:
    """A module-level allocator in the style of the attention tutorial's: each tile at the next free byte."""

    def __init__(self):
        self.offset = 0

    def allocate(self, nbytes):
        addr = self.offset
        self.offset += nbytes
        return nki.compiler.sbuf.mod_alloc(base_addr=addr)


allocator = BumpAllocator()


def test_a_retraced_kernel_sees_its_module_allocator_as_the_first_trace_did():
    n, F = 4, 32_768  # four [128, 32768] fp32 tiles: 128 KiB a partition each would not fit twice in SBUF
    x = RNG.standard_normal((128, n)).astype(np.float32)
    offset = allocator.offset

    def kernel(x):
        out = nl.ndarray((128, n), nl.float32, buffer=nl.shared_hbm)
        big = nl.ndarray((128, F), nl.float32, buffer=allocator.allocate(F * 4))
        small = nl.ndarray((128, n), nl.float32, buffer=allocator.allocate(n * 4))
        nisa.memset(big, 1.0)
        t = nl.load(x)
        for i in nl.affine_range(n):
            col = [0.5, 1.5, 2.5, 3.5][i]  # a loop variable as a Python index: the kernel is traced again unrolled
            small[:, i] = nl.add(nl.multiply(t[:, i], col), big[:, i])
        nl.store(out, small)
        return out
    got, warned = simulate_quietly(kernel, x)
    np.testing.assert_allclose(got, x * np.array([0.5, 1.5, 2.5, 3.5], np.float32) + 1.0, rtol=1e-6)
    assert any("unrolled" in w for w in warned)  # traced at least twice
    assert allocator.offset == offset + (F + n) * 4  # the last trace started from the offset the first one found


C = 24_000  # a vocabulary chunk on one partition: two fp32 rows of it (192000 bytes) fit trn2's SBUF, not trn1's


def one_row_softmax_grad(logits, target):
    """exp(logits) less a one-hot of the target, a whole vocabulary chunk on one partition (a loss kernel's shape)."""
    out = nl.ndarray((1, C), nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray((1, C), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=logits)
    tgt = nl.ndarray((1, 1), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=tgt, src=target)
    grad = nl.ndarray((1, C), nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=grad, op=nl.exp, data=x)
    onehot = nl.ndarray((1, C), nl.float32, buffer=nl.sbuf)
    nisa.iota(onehot, [[1, C]], 0, 0)
    nisa.tensor_scalar(dst=onehot, data=onehot, op0=nl.equal, operand0=tgt)
    nisa.tensor_tensor(dst=grad, data1=grad, data2=onehot, op=nl.subtract)
    nisa.dma_copy(dst=out, src=grad)
    return out


def test_the_sbuf_budget_is_the_arch_s(monkeypatch):
    logits = RNG.uniform(-1, 1, (1, C)).astype(np.float32)
    target = np.array([[1234.0]], np.float32)
    want = np.exp(logits)
    want[0, 1234] -= 1
    with pytest.raises(nki.KernelError, match=r"SBUF overflow: .* need 19\d{4} bytes per partition, the budget is "
                                              r"180224 \(trn1's usable SBUF"):
        nki.simulate(one_row_softmax_grad, logits, target)
    got = nki.simulate(one_row_softmax_grad, logits, target, arch="trn2")  # 212984 usable bytes
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")  # the compiler's off-device target, as arch=
    np.testing.assert_allclose(nki.simulate(one_row_softmax_grad, logits, target), want, rtol=1e-5, atol=1e-5)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn9")
    with pytest.raises(nki.KernelError, match="NEURON_PLATFORM_TARGET_OVERRIDE='trn9': the targets are"):
        nki.simulate(one_row_softmax_grad, logits, target)


def test_a_large_tile_finds_room_that_program_order_left_in_pieces():
    # a [128, 13000] fp32 (52000 bytes a partition) made first, at the top; b (28000) made from it below it, and
    # alive to the end; c (120000) starts where b is read: the bytes free then, [0, 100224) and a's [128224, 180224)
    # once a is dead, hold no 120000 in one piece, and b cannot be spilled (c's first instruction reads it). Placed
    # largest first, c, a and b all fit trn1's 180224 bytes.
    x = RNG.standard_normal((128, 30000)).astype(np.float32)

    def kernel(x):
        out = nl.ndarray((128, 30000), nl.float32, buffer=nl.shared_hbm)
        a = nl.ndarray((128, 13000), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=x[:, 0:13000])
        b = nl.ndarray((128, 7000), nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=b, data=a[:, 0:7000], op0=nl.multiply, operand0=2.0)
        c = nl.ndarray((128, 30000), nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=c[:, 0:7000], data=b, op0=nl.add, operand0=1.0)
        nisa.dma_copy(dst=c[:, 7000:30000], src=x[:, 7000:30000])
        nisa.dma_copy(dst=out, src=c)
        return out
    got = nki.simulate(kernel, x)
    want = x.copy()
    want[:, :7000] = 2 * x[:, :7000] + 1
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_operands_indexed_by_predicates_and_a_moving_window_of_three_free_dims():
    # A convolution step in the older style: the filter's output channels and the image window's positions masked by
    # indexing the operands with predicates (tile[c < C][k < K]); the moving operand [C_in, H, W] streams its two
    # free dims, and the PSUM result is [C_out, H, W]. C_out = 96 of a 128-wide tile: the last 32 columns masked.
    C_in, C_out, H, W = 64, 96, 4, 8
    filt = RNG.standard_normal((C_in, 128)).astype(np.float32)
    img = RNG.standard_normal((C_in, H, W)).astype(np.float32)

    def kernel(filt, img):
        out = nl.ndarray((C_out, H, W), nl.float32, buffer=nl.shared_hbm)
        f = nl.load(filt)
        x = nl.load(img)
        i_ci = nl.arange(C_in)[:, None]
        i_co = nl.arange(128)[None, :]
        i_h = nl.arange(H)[None, :, None]
        i_w = nl.arange(W)[None, None, :]
        ps = nl.zeros((128, H, W), nl.float32, buffer=nl.psum)
        i_o = nl.arange(128)[:, None, None]
        ps[i_o, i_h, i_w] += nisa.nc_matmul(f[i_ci, i_co][i_co < C_out], x[i_h < H][i_w < W])
        res = nl.copy(ps[nl.arange(C_out)[:, None, None], i_h, i_w])
        nl.store(out, res)
        return out
    got = nki.simulate(kernel, filt, img)
    want = np.einsum("cm,chw->mhw", filt[:, :C_out], img)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_predicate_index_on_a_call_without_mask_is_refused_by_name():
    def kernel(x):
        out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        i_f = nl.arange(64)[None, :]
        nl.store(out, t[i_f < 32].reshape((128, 64)))
        return out
    with pytest.raises(nki.Unsupported, match=r"indexed by a predicate \(x\[i < n\]\) is the mask of the call"):
        nki.to_bir(kernel, np.zeros((128, 64), np.float32))
