"""nki.language: data movement -- nl.load / nl.store (one DMA each), nl.load_transpose2d, nl.copy and nl.broadcast_to,
the shared identity matrix (a constant loaded), and nl.device_print."""
import math

from . import dtypes, registry
from .dtypes import float32
from .clips import Clipped
from .errors import KernelError, Unsupported
from .nl_common import _bir, _emit, _is_num, _mask, _new_tile, _squeeze_free, _tile
from .nl_create import full, shared_constant
from .symbolic import Idx
from .tracer import View, bounds

_api = registry.api("nki.language")


# ---------------------------------------------------------------------------------------------------- data movement
def _dma(src, dst, what, where=None, oob_skip=False):
    kind = "load" if src.storage.buffer == "hbm" else "store" if dst.storage.buffer == "hbm" else "dma"
    if src.shape != dst.shape and math.prod(src.shape) != math.prod(dst.shape):
        raise KernelError(f"{what}: shape mismatch: source {src.name} {list(src.shape)}, destination {dst.name} "
                          f"{list(dst.shape)}")
    gather, scatter = (v.dyn is not None and v.dyn.index is not None for v in (src, dst))
    if gather or scatter:
        return _indirect_dma(src, dst, gather, scatter, oob_skip, what, where)
    return _emit("Load" if kind == "load" else "Save" if kind == "store" else "DMACopy", [src], [dst], what,
                 kind=kind, where=where)


def _indirect_dma(src, dst, gather, scatter, oob_skip, what, where):
    """A DMA through a gather / scatter view (.ap(vector_offset=idx), nl_views.py): partition p of the other side
    moves the rows the pattern walks from the view's start + idx[p] * stride. IndirectLoad (a gather: ins [table,
    indices]) or IndirectSave (a scatter: ins [values, indices], outs [table]) over a table whose entries are those
    rows, one per index (engines/ops/indirect.cpp); a negative index (0xFFFFFFFF) is skipped, an index past the
    tensor is a run-time error unless oob_mode.skip (oob_is_err false: skipped)."""
    if gather and scatter:
        raise Unsupported(f"{what}: a gather into a scatter (vector_offset= on both sides)")
    v = src if gather else dst
    s = v.storage
    total = math.prod(s.shape) * dtypes.size(s.dtype) // dtypes.size(v.bir_dtype)
    rows = v.dims[1:]
    hi = sum(max(0, (n - 1) * st) for st, n, _ in rows)
    first = bounds(v.off_f)[1]
    n = (total - 1 - first - hi) // v.dyn.stride + 1  # the rows from the start that lie in the tensor
    if n < 1:
        raise KernelError(f"{what}: the rows of {v.name}'s pattern from element {first} leave the tensor", where)
    # The table's rows are the tensor's, not the partitions a mask= narrows (the view's dims came through the mask
    # already): a whole-extent Clipped keeps the call's clips off them (nl_mask.clip_operand).
    table = View(s, Idx(0), v.off_f, [(v.dyn.stride, Clipped(n), False)] + list(rows), v.bir_dtype)
    fields = {"oob_is_err": False} if oob_skip else {}
    if gather:
        return _emit("IndirectLoad", [table, v.dyn.index], [dst], what, fields, kind="dma", where=where)
    return _emit("IndirectSave", [src, v.dyn.index], [table], what, fields, kind="dma", where=where)


@_api
def load(src, *, mask=None, dtype=None, **kw):
    """nl.load: HBM -> a new SBUF tile (one Load, a DMA; a dtype= other than the tensor's adds a tensor_copy)."""
    if not isinstance(src, View) or src.storage.buffer != "hbm":
        raise KernelError(f"nl.load reads an HBM tensor, got {getattr(src, 'name', src)!r}")
    (src,) = _mask([src], mask, "nl.load")
    t = _new_tile(src.shape, src.bir_dtype)
    t.storage.__dict__["temp"] = True
    _dma(src, t, "nl.load")
    if dtype is not None and _bir(dtype) != src.bir_dtype:
        return tensor_copy_to(t, _bir(dtype), "nl.load")
    return t


@_api
def shared_identity_matrix(n, dtype=float32, **kw):
    """An [n, n] identity in SBUF (nl.shared_identity_matrix): loaded from a shared constant."""
    import numpy as np
    return load(shared_constant(np.identity(int(n), dtype=np.float32), dtype=dtype))


@_api
def store(dst, value, *, mask=None, **kw):
    """nl.store: a tile -> HBM (one Save, a DMA; a tile of another dtype is converted first)."""
    if not isinstance(dst, View) or dst.storage.buffer != "hbm":
        raise KernelError(f"nl.store writes an HBM tensor, got {getattr(dst, 'name', dst)!r}")
    if _is_num(value):
        value = full(dst.shape, value, dst.dtype)
    value = _tile(value, "nl.store", "value")
    dst, value = _mask([dst, value], mask, "nl.store")
    if tuple(dst.shape) != tuple(value.shape) and _squeeze_free(dst) != _squeeze_free(value):
        raise KernelError(f"nl.store: shape mismatch: destination {dst.name} {list(dst.shape)}, value {value.name} "
                          f"{list(value.shape)}")
    if value.storage.buffer == "psum":
        value = tensor_copy_to(value, dst.bir_dtype, "nl.store")  # DMAs move SBUF; PSUM goes through a copy
    elif value.bir_dtype != dst.bir_dtype:
        value = tensor_copy_to(value, dst.bir_dtype, "nl.store")
    _dma(value, dst, "nl.store")


# DMA transposes: a DMACopy in Transpose mode (reference bir-json.md 2.4: mode, transpose_op; engines/ops/dma_copy.cpp,
# the source pattern's dims as W Z Y X from the last, output axis k = input axis transpose_op[k]). NKI's permutations
# by rank (nki.isa.dma_transpose): 2-D (1, 0), 3-D (2, 1, 0), 4-D (3, 1, 2, 0).
TRANSPOSE_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}
_TRANSPOSE_OP = {2: "WZXY", 3: "XYZW", 4: "XZYW"}  # the same orders in the labels of a 4-dim source pattern


def transpose_dma(src, what, dtype=None, dst=None):
    """src (HBM or SBUF, 2 to 4 dims) -> a new SBUF tile with its dims permuted as NKI's dma_transpose does: one
    DMACopy, Transpose mode (timed by the engines' DMA transpose rate where the arch has one, else element by element,
    one descriptor per row: docs/timing-model.md 2.5). dtype= other than the source's adds a TensorCopy."""
    n = len(src.dims)
    if n not in TRANSPOSE_AXES:
        raise KernelError(f"{what}: a DMA transpose takes a 2-D, 3-D or 4-D source, {src.name} is {list(src.shape)}")
    if src.storage.buffer == "psum":
        raise KernelError(f"{what}: a DMA moves HBM and SBUF; {src.name} is in PSUM")
    shape = tuple(src.shape[a] for a in TRANSPOSE_AXES[n])
    t = _new_tile(shape, src.bir_dtype)
    t.storage.__dict__["temp"] = True
    _emit("DMACopy", [src], [t], what, {"mode": "Transpose", "transpose_op": _TRANSPOSE_OP[n]}, kind="dma")
    if dtype is not None and _bir(dtype) != src.bir_dtype:
        return tensor_copy_to(t, _bir(dtype), what)
    return t


@_api
def load_transpose2d(src, *, mask=None, dtype=None, **kw):
    """nl.load_transpose2d: a 2-D HBM region [A, B] -> an SBUF tile [B, A] (a transposing DMA, transpose_dma)."""
    if not isinstance(src, View) or src.storage.buffer != "hbm" or len(src.dims) != 2:
        raise KernelError("nl.load_transpose2d reads a 2-D region of an HBM tensor")
    (src,) = _mask([src], mask, "nl.load_transpose2d")
    return transpose_dma(src, "nl.load_transpose2d", dtype)


def tensor_copy_to(x, bir, what, engine=None, buffer="sbuf"):
    t = _new_tile(x.shape, bir, buffer)
    t.storage.__dict__["temp"] = True
    _emit("TensorCopy", [x], [t], what, engine=engine)
    return t


@_api
def copy(x, dtype=None, *, mask=None, **kw):
    """nl.copy: a new tile with x's values (TensorCopy; dtype= converts)."""
    x = _tile(x, "nl.copy", "x")
    (x,) = _mask([x], mask, "nl.copy")
    return tensor_copy_to(x, _bir(dtype, x.bir_dtype), "nl.copy")


@_api
def broadcast_to(x, shape, **kw):
    """nl.broadcast_to: [1, F] -> [P, F] across partitions (a matmul with a row of ones into PSUM, as NKI does it,
    where its readers allow: bcast_pe.py; else a DMA whose source partition step is 0), or [P, 1] ->
    [P, F] along the free dim (a TensorCopy whose source free step is 0). A tile of fewer dims than the shape -- a
    reduction's 1-D result [P] -- is its partition dim followed by free dims of size 1 ([P] -> [P, F])."""
    x = _tile(x, "nl.broadcast_to", "x")
    shape = tuple(int(s) for s in shape)
    xdims = list(x.dims)
    if len(xdims) < len(shape) and xdims and xdims[0][2]:
        xdims += [(0, 1, False)] * (len(shape) - len(xdims))
    if len(shape) != len(xdims):
        raise KernelError(f"nl.broadcast_to: {x.name} {list(x.shape)} to {list(shape)}: the dims differ")
    dims = []
    for (step, num, part), n in zip(xdims, shape):
        if num == n:
            dims.append((step, num, part))
        elif num == 1:
            dims.append((0, n, part))
        else:
            raise KernelError(f"nl.broadcast_to: {x.name} {list(x.shape)} does not broadcast to {list(shape)}")
    src = x.like(x.off_p, x.off_f, dims)
    t = _new_tile(shape, x.bir_dtype)
    t.storage.__dict__["temp"] = True
    if shape[0] != x.shape[0]:
        op = _emit("DMACopy", [src], [t], "nl.broadcast_to", kind="dma")
        op.extra["bcast"] = x  # on PE where its readers allow (bcast_pe.py, after the trace)
    else:
        _emit("TensorCopy", [src], [t], "nl.broadcast_to")
    return t


@_api
def gather_flattened(data, indices, axis=0, *, dtype=None, mask=None, **kw):
    """Per partition, out[p, i] = data[p, indices[p, i]] over data's flattened free dims (numpy's take_along_axis
    on the last axis, the page's example): one Gather on GpSimd, as nisa.nc_n_gather."""
    what = "nl.gather_flattened"
    x, i = _tile(data, what, "data"), _tile(indices, what, "indices")
    x, i = _mask([x, i], mask, what)
    if i.bir_dtype not in ("uint32", "int32") or x.shape[0] != i.shape[0]:
        raise KernelError(f"{what}: indices {i.name} {list(i.shape)} {i.bir_dtype}: uint32 or int32, with data's "
                          f"{x.shape[0]} partitions")
    if axis not in (0, -1, len(x.shape) - 1):
        raise KernelError(f"{what}: axis={axis}: the gather runs along the flattened free dims")
    t = _new_tile(i.shape, x.bir_dtype)
    t.storage.__dict__["temp"] = True
    _emit("Gather", [x, i], [t], what)
    if dtype is not None and _bir(dtype) != x.bir_dtype:
        return tensor_copy_to(t, _bir(dtype), what)
    return t


# ---------------------------------------------------------------------------------------------------- debugging
@_api
def device_print(prefix, x, **kw):
    """nl.device_print(prefix, x): a DevicePrint instruction; the run prints the prefix and x's values."""
    if not (isinstance(x, View) and x.storage.buffer == "hbm"):  # an HBM tensor prints as it is
        x = _tile(x, "nl.device_print", "x")
    _emit("DevicePrint", [x], [], "nl.device_print", {"prefix": str(prefix)})
