"""nki.isa: data movement across partitions and within them -- nc_stream_shuffle (BIR StreamShuffle), nc_n_gather and
local_gather (Gather, its per-partition and its 16-partition-group forms), tensor_partition_reduce (PE transposes
around a TensorReduce), and dma_compute (a DMACopy in CCE mode). Public NKI docs, the nki.isa page of each;
semantics in engines/ops/shuffle.cpp, indirect.cpp, dma_copy.cpp."""
from . import registry
from .errors import KernelError, Unsupported, source_location
from .isa_common import alu, out_tile
from .nl_common import _bir, _emit, _mask, _new_tile, _tile
from .nl_dma import tensor_copy_to
from .nl_matmul import _pe_transpose
from .tracer import View

_api = registry.api("nki.isa")


def _per_partition(v):
    n = 1
    for d in v.shape[1:]:
        n *= d
    return n


@_api
def nc_stream_shuffle(dst=None, src=None, shuffle_mask=None, *, mask=None, dtype=None, name=None, **kw):
    """Within each 32-partition quadrant, dst partition i takes src partition shuffle_mask[i] (255: dst partition i
    left as it is); one StreamShuffle on VectorE. src and dst share a dtype and their elements per partition; dst may
    span more partitions than src (one source partition broadcast with mask entries 0). A positional call follows
    the current page's order (dst, src, shuffle_mask); the older page's was (src, dst, ...), so its calls name them."""
    what = "nisa.nc_stream_shuffle"
    if dst is None or src is None or shuffle_mask is None:
        raise KernelError(f"{what} takes dst, src and shuffle_mask")
    s, d = _tile(src, what, "src"), _tile(dst, what, "dst")
    s, d = _mask([s, d], mask, what)
    if s.bir_dtype != d.bir_dtype:
        raise KernelError(f"{what}: src {s.name} is {s.bir_dtype}, dst {d.name} {d.bir_dtype}; they share a dtype")
    if _per_partition(s) != _per_partition(d):
        raise KernelError(f"{what}: src {list(s.shape)} and dst {list(d.shape)} differ in elements per partition")
    try:
        m = [int(v) for v in shuffle_mask]
    except TypeError:
        raise KernelError(f"{what}: shuffle_mask must be a list of 32 integers (a loop variable is not lowered)")
    if len(m) != 32 or any(not (0 <= v < 32 or v == 255) for v in m):
        raise KernelError(f"{what}: shuffle_mask must hold 32 entries, each 0..31 or 255, got {shuffle_mask!r}")
    if any(v != 255 and v >= s.shape[0] for v in m[:d.shape[0]]):
        raise KernelError(f"{what}: shuffle_mask selects a partition beyond src {s.name}'s {s.shape[0]}")
    _emit("StreamShuffle", [s], [d], what, {"mask": m}, engine="DVE")
    return d


def _gather_operands(data, indices, what, index_dtypes):
    x, i = _tile(data, what, "data"), _tile(indices, what, "indices")
    for v, arg in ((x, "data"), (i, "indices")):
        if v.storage.buffer != "sbuf":
            raise KernelError(f"{what}: {arg} {v.name} must be in SBUF (GpSimd cannot access PSUM)")
    if i.bir_dtype not in index_dtypes:
        raise KernelError(f"{what}: indices {i.name} is {i.bir_dtype}; they are " + " or ".join(index_dtypes))
    return x, i


@_api
def nc_n_gather(dst=None, data=None, indices=None, *, name=None, **kw):
    """Per partition, dst[p, i] = data[p, indices[p, i]] over data's flattened free dims (one Gather on GpSimd);
    dst has data's dtype and indices' elements per partition."""
    what = "nisa.nc_n_gather"
    x, i = _gather_operands(data, indices, what, ("uint32",))
    if x.shape[0] != i.shape[0]:
        raise KernelError(f"{what}: data {list(x.shape)} and indices {list(i.shape)} differ in partitions")
    out = out_tile(dst, i.shape, x.bir_dtype, what)
    if out.bir_dtype != x.bir_dtype:
        raise KernelError(f"{what}: dst {out.name} is {out.bir_dtype}; it has data's dtype {x.bir_dtype}")
    _emit("Gather", [x, i], [out], what)
    return out


@_api
def local_gather(dst=None, src_buffer=None, index=None, num_elem_per_idx=1, num_valid_indices=None, *, mask=None,
                 name=None, **kw):
    """Each group of 16 partitions (a GpSimd core) flattens its 16 partitions of index column-major into one list,
    keeps the first num_valid_indices, and every partition p of the group takes num_elem_per_idx elements of its own
    row at each: dst[p, k * E + e] = src_buffer[p, idx[k] + e] (the page's numpy reference). One Gather in its local
    form (num_elem_per_idx, num_valid_indices; engines/ops/indirect.cpp). The older form returns [P, n * E]."""
    what = "nisa.local_gather"
    if dst is not None and not isinstance(dst, View):  # the older positional form local_gather(src_buffer, index, ...)
        dst, src_buffer, index, num_elem_per_idx = None, dst, src_buffer, index if index is not None else 1
    x, i = _gather_operands(src_buffer, index, what, ("uint16",))
    P = x.shape[0]
    if i.shape[0] != P or P % 16:
        raise KernelError(f"{what}: src_buffer {list(x.shape)} and index {list(i.shape)} have one partition count, a "
                          "multiple of 16")
    E = int(num_elem_per_idx)
    if E not in (1, 2, 4, 8, 16, 32):
        raise KernelError(f"{what}: num_elem_per_idx {E} is not 1, 2, 4, 8, 16 or 32")
    per_core = 16 * _per_partition(i)
    n = per_core if num_valid_indices is None else int(num_valid_indices)
    if not 0 < n <= min(per_core, 4096):
        raise KernelError(f"{what}: num_valid_indices {n}: at most the {per_core} indices a core holds, and 4096")
    out = out_tile(dst, (P, n * E), x.bir_dtype, what)
    if out.bir_dtype != x.bir_dtype:
        raise KernelError(f"{what}: dst {out.name} is {out.bir_dtype}; local_gather does not cast ({x.bir_dtype})")
    _emit("Gather", [x, i], [out], what, {"num_elem_per_idx": E, "num_valid_indices": n})
    return out


_PARTITION_OPS = ("add", "average", "max", "bitwise_or", "bitwise_and")


@_api
def tensor_partition_reduce(dst=None, op=None, data=None, *, mask=None, dtype=None, name=None, **kw):
    """The reduction of data [P, ...] across its partitions with op (add, average, max, bitwise_or, bitwise_and):
    [1, ...]. Lowered per 128-element chunk of the free elements as a PE transpose ([P, f] -> PSUM [f, P]), a
    TensorReduce along the free axis ([f, 1]) and a PE transpose back ([1, f], copied into the result): the GpSimd
    instruction of the page has no BIR form in the simulator's tables. Float data only (the PE moves floats)."""
    what = "nisa.tensor_partition_reduce"
    if dst is not None and not isinstance(dst, View):  # the older form tensor_partition_reduce(op, data)
        dst, op, data = None, dst, op
    x = _tile(data, what, "data")
    (x,) = _mask([x], mask, what)
    o = alu(op, what)
    if o not in _PARTITION_OPS:
        raise KernelError(f"{what}: op {o} is not add, average, max, bitwise_or or bitwise_and")
    if o.startswith("bitwise") or x.bir_dtype in ("int32", "uint32", "int16", "uint16", "int8"):
        raise Unsupported(f"{what} of {x.bir_dtype} data with {o}: lowered for float data only (the PE transposes "
                          "move floats)", source_location())
    if x.storage.buffer != "sbuf":
        x = tensor_copy_to(x, x.bir_dtype, what)
    shape = (1,) + tuple(x.shape[1:])
    out = out_tile(dst, shape, _bir(dtype, x.bir_dtype), what)
    F = _per_partition(x)
    flat = View(x.storage, x.off_p, x.off_f, [x.dims[0]] + _flat_free(x, what), x.bir_dtype)
    oflat = View(out.storage, out.off_p, out.off_f, [out.dims[0]] + _flat_free(out, what), out.bir_dtype)
    for c0 in range(0, F, 128):
        f = min(128, F - c0)
        chunk = View(flat.storage, flat.off_p, flat.off_f + c0 * flat.dims[1][0],
                     [flat.dims[0], (flat.dims[1][0], f, False)], flat.bir_dtype)
        t = _pe_transpose(chunk, what)
        col = _new_tile((f, 1), "float32")
        col.storage.__dict__["temp"] = True
        _emit("TensorReduce", [t], [col], what, {"op": o, "axis": "X"})
        row = _pe_transpose(col, what)
        ochunk = View(oflat.storage, oflat.off_p, oflat.off_f + c0 * oflat.dims[1][0],
                      [oflat.dims[0], (oflat.dims[1][0], f, False)], oflat.bir_dtype)
        _emit("TensorCopy", [row], [ochunk], what)
    return out


def _flat_free(v, what):
    """v's free dims as one (step, n) dim: they must walk contiguously."""
    dims = [d for d in v.dims[1:] if d[1] != 1]
    if not dims:
        return [(1, 1, False)]
    for (s0, n0, _), (s1, n1, _) in zip(dims, dims[1:]):
        if s0 != s1 * n1:
            raise Unsupported(f"{what} of a tile whose free dims are not contiguous", source_location())
    return [(dims[-1][0], _per_partition(v), False)]


@_api
def dma_compute(dst=None, srcs=None, reduce_op=None, scales=None, unique_indices=True, oob_mode=None, *, name=None,
                **kw):
    """dst = srcs[0] * scales[0] + srcs[1] * scales[1] + ... in fp32 inside a DMA engine, cast to dst's dtype (one
    DMACopy in CCE mode: cce_op add, constants the scales; engines/ops/dma_copy.cpp). HBM or SBUF tensors of one
    element count; at most 16 sources; reduce_op add and every scale 1.0 (public NKI docs)."""
    what = "nisa.dma_compute"
    if not isinstance(dst, View) or not srcs:
        raise KernelError(f"{what} takes a dst tensor and a list of srcs")
    srcs = list(srcs)
    if len(srcs) > 16:
        raise KernelError(f"{what}: at most 16 sources, got {len(srcs)}")
    if alu(reduce_op, what) != "add":
        raise KernelError(f"{what}: reduce_op must be add (public NKI docs)")
    if scales is not None and (len(scales) != len(srcs) or any(float(s) != 1.0 for s in scales)):
        raise KernelError(f"{what}: scales must be one 1.0 per source (public NKI docs), got {scales!r}")
    views = []
    for k, s in enumerate(srcs):
        if not isinstance(s, View):
            raise KernelError(f"{what}: srcs[{k}] must be a tensor, got {s!r}")
        if s.storage.buffer == "psum":
            raise KernelError(f"{what}: srcs[{k}] {s.name} is in PSUM; DMAs move HBM and SBUF")
        n_s, n_d = 1, 1
        for n in s.shape:
            n_s *= n
        for n in dst.shape:
            n_d *= n
        if n_s != n_d:
            raise KernelError(f"{what}: srcs[{k}] {s.name} {list(s.shape)} and dst {dst.name} {list(dst.shape)} differ "
                              "in element count")
        views.append(s)
    if dst.storage.buffer == "psum":
        raise KernelError(f"{what}: dst {dst.name} is in PSUM; DMAs move HBM and SBUF")
    _emit("DMACopy", views, [dst], what, {"mode": "CCE", "cce_op": "add", "constants": [1.0] * len(views)},
          kind="dma")
    return dst


# ------------------------------------------------------------------------------ copies at a run-time offset
# nki.isa.tensor_copy_dynamic_src / _dst (SDK 2.20-2.31 pages; removed in 2.32 for tensor_copy with
# .ap(scalar_offset=)): a tensor_copy whose source (destination) sits at an offset within each partition known only
# at run time -- a view whose start holds a [1, 1] SBUF tile or a register (.ap(scalar_offset=), .select(dim, t)).
# The legacy page returns the copy (tensor_copy_dynamic_src(src)) and names dst (tensor_copy_dynamic_dst(dst=, src=));
# the current one passes dst first.
def _dynamic(v, what, arg):
    v = _tile(v, what, arg)
    if v.dyn is None or v.dyn.index is not None:
        raise KernelError(f"{what}: {arg} {v.name} must sit at a run-time offset within each partition (a view made "
                          "with .ap(scalar_offset=) or .select(dim, tile) by a [1, 1] SBUF tile or a register)")
    return v


def _copy(dst, src, engine, dtype, mask):
    tensor_copy = registry.function("nki.isa", "tensor_copy")
    if dst is None:
        return tensor_copy(src, engine, dtype=dtype, mask=mask)
    return tensor_copy(dst=dst, src=src, engine=engine, dtype=dtype, mask=mask)


@_api
def tensor_copy_dynamic_src(*args, src=None, dst=None, engine=None, mask=None, dtype=None, name=None, **kw):
    """A copy whose source sits at a run-time offset: legacy tensor_copy_dynamic_src(src) returns the tile; the
    current tensor_copy_dynamic_src(dst, src, engine) writes dst."""
    what = "nisa.tensor_copy_dynamic_src"
    if len(args) >= 2 or (args and src is not None):
        dst, src, *rest = (args if src is None else (args[0], src))
        engine = rest[0] if rest else engine
    elif args:
        src = args[0]
    if src is None:
        raise KernelError(f"{what} takes src")
    return _copy(dst, _dynamic(src, what, "src"), engine, dtype, mask)


@_api
def tensor_copy_dynamic_dst(*args, dst=None, src=None, engine=None, mask=None, dtype=None, name=None, **kw):
    """A copy whose destination sits at a run-time offset: tensor_copy_dynamic_dst(dst=, src=) (legacy: keywords
    only) or (dst, src, engine) (current)."""
    what = "nisa.tensor_copy_dynamic_dst"
    if args:
        dst, *rest = args
        src = rest[0] if rest else src
        engine = rest[1] if len(rest) > 1 else engine
    if dst is None or src is None:
        raise KernelError(f"{what} takes dst and src")
    _copy(_dynamic(dst, what, "dst"), _tile(src, what, "src"), engine, dtype, mask)
    return dst
