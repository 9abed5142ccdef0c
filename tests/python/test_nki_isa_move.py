"""nki.isa's data movement across and within partitions -- nc_stream_shuffle, nc_n_gather, local_gather,
tensor_partition_reduce, dma_compute -- and nl.gather_flattened, on the simulator against numpy references written
from their public pages (local_gather's is the page's own numpy listing, described in the test)."""
import numpy as np
import pytest

import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

RNG = np.random.default_rng(4040)


def out_like(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype, buffer=nl.shared_hbm)


def test_nc_stream_shuffle_per_quadrant_and_broadcast():
    x = RNG.uniform(-1, 1, (64, 8)).astype(np.float32)
    shuffle = [(i - 1) % 32 for i in range(32)]
    shuffle[3] = 255  # partition 3 of each quadrant keeps dst's value

    def kernel(x):
        o1, o2 = out_like((64, 8)), out_like((32, 8))
        t = nl.load(x)
        d = nl.zeros((64, 8), nl.float32)
        nisa.nc_stream_shuffle(dst=d, src=t, shuffle_mask=shuffle)
        b = nl.ndarray((32, 8), nl.float32, buffer=nl.sbuf)
        nisa.nc_stream_shuffle(src=t[5:6, :], dst=b, shuffle_mask=[0] * 32)  # partition 5 to all 32
        nl.store(o1, d)
        nl.store(o2, b)
        return o1, o2
    o1, o2 = nki.simulate(kernel, x)
    want = np.zeros_like(x)
    for q in (0, 32):
        for i in range(32):
            if shuffle[i] != 255:
                want[q + i] = x[q + shuffle[i]]
    np.testing.assert_array_equal(o1, want)
    np.testing.assert_array_equal(o2, np.repeat(x[5:6], 32, axis=0))


def test_nc_n_gather_and_gather_flattened():
    data = RNG.uniform(-1, 1, (16, 4, 8)).astype(np.float32)
    idx = RNG.integers(0, 32, (16, 10)).astype(np.uint32)

    def kernel(data, idx):
        o1, o2 = out_like((16, 10)), out_like((16, 10))
        d, i = nl.load(data), nl.load(idx)
        g = nl.ndarray((16, 10), nl.float32, buffer=nl.sbuf)
        nisa.nc_n_gather(dst=g, data=d, indices=i)
        nl.store(o1, g)
        nl.store(o2, nl.gather_flattened(data=d, indices=i))
        return o1, o2
    o1, o2 = nki.simulate(kernel, data, idx)
    want = np.take_along_axis(data.reshape(16, 32), idx.astype(np.int64), axis=1)
    np.testing.assert_array_equal(o1, want)
    np.testing.assert_array_equal(o2, want)


def test_local_gather_the_pages_numpy_semantics():
    """Per core c (16 partitions): indices_1d = index[16c:16c+16].flatten(order='F')[:n]; every partition p of the
    core takes E elements of its own row at each index (the page's listing, with indices in elements)."""
    P, F, J, E, n = 32, 64, 2, 4, 24
    src = RNG.uniform(0, 100, (P, F)).astype(np.float32)
    index = (RNG.integers(0, F // E, (P, J)) * E).astype(np.uint16)

    def kernel(src, index):
        out = out_like((P, n * E))
        d = nl.ndarray((P, n * E), nl.float32, buffer=nl.sbuf)
        nisa.local_gather(dst=d, src_buffer=nl.load(src), index=nl.load(index), num_elem_per_idx=E,
                          num_valid_indices=n)
        nl.store(out, d)
        return out
    got = nki.simulate(kernel, src, index)
    want = np.zeros((P, n * E), np.float32)
    for c in range(P // 16):
        ids = index[16 * c:16 * c + 16].flatten(order="F")[:n].astype(np.int64)
        for p in range(16 * c, 16 * c + 16):
            want[p] = np.concatenate([src[p, i:i + E] for i in ids])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op, ref", [(nl.add, np.sum), (np.maximum, np.max)], ids=["add", "max"])
def test_tensor_partition_reduce(op, ref):
    a = RNG.uniform(0, 100, (128, 32, 5)).astype(np.float32)  # 160 elements per partition: two chunks

    def kernel(a):
        out = nl.ndarray((1, 32, 5), nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_partition_reduce(op, nl.load(a)))  # the older form: a new tile
        return out
    got = nki.simulate(kernel, a)
    np.testing.assert_allclose(got, ref(a.astype(np.float64), axis=0, keepdims=True), rtol=128 * 2.0 ** -24)


def test_tensor_partition_reduce_dst_form_average():
    a = RNG.uniform(0, 100, (64, 24)).astype(np.float32)

    def kernel(a):
        out = out_like((1, 24))
        d = nl.ndarray((1, 24), nl.float32, buffer=nl.sbuf)
        nisa.tensor_partition_reduce(d, "average", nl.load(a))
        nl.store(out, d)
        return out
    got = nki.simulate(kernel, a)
    np.testing.assert_allclose(got, a.astype(np.float64).mean(0, keepdims=True), rtol=128 * 2.0 ** -24)


def test_dma_compute_adds_hbm_sources():
    a, b, c = (RNG.integers(-50, 50, (64, 32)).astype(np.float32) for _ in range(3))

    def kernel(a, b, c):
        out = out_like((64, 32))
        nisa.dma_compute(out, (a, b, c), scales=(1.0, 1.0, 1.0), reduce_op=nl.add)
        sb = nl.ndarray((64, 32), nl.float32, buffer=nl.sbuf)
        nisa.dma_compute(dst=sb, srcs=[a, b], reduce_op=nl.add)
        out2 = out_like((64, 32))
        nl.store(out2, sb)
        return out, out2
    o1, o2 = nki.simulate(kernel, a, b, c)
    np.testing.assert_array_equal(o1, a + b + c)
    np.testing.assert_array_equal(o2, a + b)

    def scaled(a, b):
        out = out_like((64, 32))
        nisa.dma_compute(out, [a, b], nl.add, scales=[2.0, 1.0])
        return out
    with pytest.raises(nki.KernelError, match="scales must be one 1.0 per source"):
        nki.to_bir(scaled, a, b)
