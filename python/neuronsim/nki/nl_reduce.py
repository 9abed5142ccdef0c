"""nki.language: reductions along free axes (nl.sum, max, min, prod, mean, all, any): one TensorReduce on VectorE;
and across a loop's trips (nl.loop_reduce): one TensorTensor into the destination per trip."""
import builtins as _b  # nl.min / nl.max below shadow Python's

from . import nl_math, registry
from .errors import KernelError, Unsupported
from .nl_common import _bir, _emit, _mask, _new_tile, _tile
from .symbolic import Idx
from .trace_loops import Peeled
from .tracer import Op, View, current

_api = registry.api("nki.language")


# ---------------------------------------------------------------------------------------------------- reductions
def _axes(x, axis, what):
    """The reduced free axes, sorted; the partition axis is refused."""
    n = len(x.shape)
    axes = [axis] if isinstance(axis, int) else list(axis)
    axes = sorted(a + n if a < 0 else a for a in axes)
    if 0 in axes:
        raise Unsupported(f"{what} over the partition axis (axis 0): reduce along free axes (transpose first, or "
                          "nisa.nc_matmul with a ones vector)")
    if not axes or axes[-1] >= n or len(set(axes)) != len(axes) or len(axes) > 4:
        raise KernelError(f"{what}: axis={axis} on {x.name} {list(x.shape)}: one to four distinct free axes")
    return axes


def _reduced_last(x, axes):
    """x with the reduced axes moved innermost (a pattern may walk its free dims in any order; TensorReduce folds the
    innermost ones, reference neuron-arch.md 3.3 tensor_reduce)."""
    keep = [d for d in range(len(x.dims)) if d not in axes]
    return x.like(x.off_p, x.off_f, [x.dims[d] for d in keep + axes]), keep


def _shape_before(x, kept, axes):
    """The shape of the view before _reduced_last reordered it."""
    order = kept + axes
    shape = [0] * len(order)
    for pos, d in enumerate(order):
        shape[d] = x.shape[pos]
    return shape


_AXIS = {1: "X", 2: "XY", 3: "XYZ", 4: "XYZW"}


def _reduce(alu, x, axis, dtype, mask, keepdims, what, negate=False):
    """A reduction along the trailing free axes: one TensorReduce (VectorE; NKI nki.isa.tensor_reduce)."""
    x = _tile(x, what, "x")
    (x,) = _mask([x], mask, what)
    axes = _axes(x, axis, what)
    k = len(axes)
    x, kept = _reduced_last(x, axes)
    shape = [x.shape[i] for i in range(len(kept))] if not keepdims else \
        [1 if d in axes else n for d, n in enumerate(_shape_before(x, kept, axes))]
    out = _new_tile(shape, _bir(dtype, x.bir_dtype))
    out.storage.__dict__["temp"] = True
    f = {"op": alu, "axis": _AXIS[k]}
    if negate:
        f["negate"] = True
    _emit("TensorReduce", [x], [out], what, f)
    return out


@_api
def sum(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):  # noqa: A001 - NKI's name
    return _reduce("add", x, axis, dtype, mask, keepdims, "nl.sum")


@_api
def max(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):  # noqa: A001
    return _reduce("max", x, axis, dtype, mask, keepdims, "nl.max")


@_api
def min(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):  # noqa: A001
    return _reduce("min", x, axis, dtype, mask, keepdims, "nl.min")


@_api
def prod(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):
    return _reduce("mult", x, axis, dtype, mask, keepdims, "nl.prod")


@_api
def mean(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):
    """The mean: TensorReduce with the `average` op (the simulator folds a running mean, tensor_reduce.cpp)."""
    return _reduce("average", x, axis, dtype, mask, keepdims, "nl.mean")


@_api
def all(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):  # noqa: A001
    return _reduce("logical_and", x, axis, dtype, mask, keepdims, "nl.all")


@_api
def any(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):  # noqa: A001
    return _reduce("logical_or", x, axis, dtype, mask, keepdims, "nl.any")


# ---------------------------------------------------------------------------------------------------- loop_reduce
def _loop_ops():
    """loop_reduce's op= (a numpy ufunc or an nl function) -> the ALU op and its identity."""
    import numpy as np
    big = 3.4028234663852886e38  # fp32's largest finite value: the identity of max / min (a Memset holds a number)
    t = {"add": 0.0, "mult": 1.0, "max": -big, "min": big}
    pairs = {np.add: "add", np.sum: "add", np.multiply: "mult", np.prod: "mult", np.maximum: "max", np.max: "max",
             np.minimum: "min", np.min: "min", nl_math.add: "add", nl_math.multiply: "mult",
             nl_math.maximum: "max", nl_math.minimum: "min", sum: "add", prod: "mult", max: "max", min: "min"}
    return {f: (a, t[a]) for f, a in pairs.items()}


def _loop_keys(loop_indices, what):
    """The loops loop_indices name (their keys, tracer.Loop.key): loop variables, or the numbers a trip traced on
    its own has (trace_loops.Peeled); None for a plain number (an unrolled loop: nothing names it)."""
    tr = current(what)
    idx = loop_indices if isinstance(loop_indices, (list, tuple)) else [loop_indices]
    keys = []
    for i in idx:
        if isinstance(i, Peeled):
            keys.append(i.key)
        elif isinstance(i, Idx) and i.loop and not i.axes:
            keys.extend(tr.loops[v].key for v in i.loop if v in range(len(tr.loops)))
        elif isinstance(i, int) or isinstance(i, Idx) and i.is_const():
            keys.append(None)
        else:
            raise KernelError(f"{what}: loop_indices names loop variables (of nl.affine_range / sequential_range), "
                              f"got {i!r}")
    return keys


@_api
def loop_reduce(x, op, loop_indices, *, dtype=None, mask=None, **kw):
    """dst[...] = nl.loop_reduce(x, op, loop_indices=[i]) inside loop i: dst = op(dst, x) on every trip (one
    TensorTensor on VectorE; NKI docs, nki.language.loop_reduce: "the destination tile is also the rhs input to op").
    A destination nothing wrote before is first set to op's identity, once, before the loop (a Memset; the
    compiler's dumps of NKIBench reduce into such tiles). The result must be assigned to its destination
    (nl_assign._assign completes the instruction)."""
    what = "nl.loop_reduce"
    x = _tile(x, what, "x")
    (x,) = _mask([x], mask, what)
    ops = _loop_ops()
    try:
        alu, identity = ops[op]
    except (KeyError, TypeError):
        raise Unsupported(f"{what}: op={getattr(op, '__name__', op)!r} (add, multiply, maximum, minimum reduce across "
                          "a loop)")
    keys = _loop_keys(loop_indices, what)
    out = _new_tile(x.shape, _bir(dtype, x.bir_dtype))
    out.storage.__dict__["temp"] = True
    p = _emit("TensorTensor", [x], [out], what, {"op": alu}, kind="loop_reduce")
    p.extra["loop_reduce"] = (keys, identity)
    return out


def finish_loop_reduce(p, dst):
    """dst[...] = the result of loop_reduce p: the instruction reads dst and x and writes dst; an identity Memset of
    dst before the outermost reduced loop when nothing wrote dst before (with loops unrolled, nothing names that
    loop: the first trip then copies x)."""
    keys, identity = p.extra.pop("loop_reduce")
    tr = current("nl.loop_reduce")
    x = p.ins[0]
    fresh = not dst.storage.written
    p.kind = "compute"
    if _b.all(k is None for k in keys):
        if fresh:
            p.type, p.fields = "TensorCopy", {}
            p.outs[0] = dst
            return
    elif fresh:
        marker = _b.min((tr.starts[k] for k in keys if k is not None), key=lambda m: _depth(m.scope))
        reduced = {L.var for L in tr.loops if L.key in keys or _inside_any(L, keys)}
        region = dst
        if set(dst.off_p.loop) & reduced or set(dst.off_f.loop) & reduced:
            region = dst.storage.view()  # dst moves with the reduced loops: the whole tile starts at the identity
        if dst.storage.scope is not None and (dst.storage.scope.key in keys or _inside_any(dst.storage.scope, keys)):
            raise KernelError("nl.loop_reduce into a tile declared inside the reduced loop: declare it before the "
                              "loop", p.where)
        m = Op("Memset", [], [region], {"mode": "Const", "constant": identity}, None, p.where, "nl.loop_reduce")
        m.scope = marker.scope
        block = marker.extra["block"]
        block.items.insert(block.items.index(marker), m)
    p.ins = [dst, x]
    p.outs[0] = dst


def _depth(loop):
    d = 0
    while loop is not None:
        loop, d = loop.parent, d + 1
    return d


def _inside_any(loop, keys):
    loop = loop.parent
    while loop is not None:
        if loop.key in keys:
            return True
        loop = loop.parent
    return False
