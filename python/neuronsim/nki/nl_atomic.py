"""nl.atomic_rmw (legacy nki.language page): dst = op(dst, value) on HBM rows a [N, 1] tile of indices selects (a
gather view: .ap(vector_offset=) or .vector_select), op np.add ("only supports np.add currently"). The page's
atomicity matters when two partitions of one call name the same row: both updates land. Lowered as the semantics
give it, with no read-modify-write DMA: the updates of partitions that share an index are first summed on PE
(combined = S @ value, S[q, p] = 1 where idx[q] == idx[p]), so that the gather / add / scatter that follows writes
every copy of a row with the same, complete sum. A static dst (no indices) is a load / add / store."""
import numpy as np

from . import registry
from .errors import KernelError, Unsupported
from .nl_common import _is_num
from .tracer import View

_api = registry.api("nki.language")


def _nl(name):
    return registry.function("nki.language", name)


def _is_add(op):
    return op is np.add or op is _nl("add") or getattr(op, "__name__", None) == "add"


@_api
def atomic_rmw(dst, value, op, *, mask=None, **kw):
    what = "nl.atomic_rmw"
    if not isinstance(dst, View) or dst.storage.onchip:
        raise KernelError(f"{what}: dst is an HBM tensor (indexed by a tile of row indices), got {dst!r}")
    if not _is_add(op):
        raise Unsupported(f"{what}: op={op!r}: the page documents np.add only (\"only supports np.add currently\")")
    if mask is not None:
        raise Unsupported(f"{what}: mask= is not lowered for atomic_rmw")
    if not (isinstance(value, View) or _is_num(value)):
        raise KernelError(f"{what}: value is a tile or a scalar, got {value!r}")
    shape = tuple(dst.shape)
    if isinstance(value, View) and tuple(value.shape) != shape:
        value = _nl("broadcast_to")(value, shape)
    old = _nl("load")(dst)
    if dst.dyn is not None and dst.dyn.index is not None:
        if _is_num(value):
            value = _nl("full")(shape, float(value), dtype=np.float32)
        value = _combined(dst.dyn.index, value, shape)
    _nl("store")(dst, _nl("add")(old, value, dtype=dst.dtype))


def _combined(idx, value, shape):
    """value[p] replaced by the sum of value[q] over the partitions q whose index equals idx[p] (PE, fp32)."""
    n = shape[0]
    f = _nl("copy")(idx, dtype=np.float32)                                  # [N, 1]
    row = _nl("copy")(_nl("transpose")(f))                                  # [1, N]
    same = _nl("equal")(_nl("broadcast_to")(row, (n, n)), _nl("broadcast_to")(f, (n, n)), dtype=np.float32)
    flat = value if len(shape) == 2 else value.flatten_dims(1, len(shape) - 1)
    cols = flat.shape[1]
    out = _nl("ndarray")((n, cols), dtype=np.float32, buffer=_nl("sbuf"))
    for c in range(0, cols, 512):
        w = min(512, cols - c)
        out[:, c:c + w] = _nl("matmul")(same, _nl("copy")(flat[:, c:c + w], dtype=np.float32), transpose_x=True)
    return out if len(shape) == 2 else out.reshape(shape)
