"""nki.language: reductions along free axes (nl.sum, max, min, prod, mean, all, any): one TensorReduce on VectorE."""
from . import registry
from .errors import KernelError, Unsupported
from .nl_common import _bir, _emit, _mask, _new_tile, _tile
from .tracer import View

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
