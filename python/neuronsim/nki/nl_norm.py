"""nki.language: the composite statistics -- softmax, var, rms_norm -- as the VectorE / ScalarE instructions the
element-wise and reduction functions emit (nl_math.py, nl_reduce.py). Public NKI docs, the nki.language page of
each (experimental calls: their pages give the formula, not an instruction sequence)."""
from . import registry
from .errors import KernelError
from .nl_common import _bir, _is_num, _mask, _tile
from .nl_math import _activation, _binary
from .nl_reduce import _axes, _reduce

_api = registry.api("nki.language")


def _free_axes(x, axis, what):
    """The reduced axes: free dims, the trailing ones (the pages: 'can only be the last contiguous dim(s)')."""
    axes = _axes(x, axis, what)
    n = len(x.shape)
    if axes != list(range(n - len(axes), n)):
        raise KernelError(f"{what}: axis={axis} on {x.name} {list(x.shape)}: the last contiguous free dims only")
    return axes


@_api
def softmax(x, axis=-1, *, dtype=None, compute_dtype=None, mask=None, **kw):
    """exp(x - max) / sum(exp(x - max)) along the trailing free axes: TensorReduce max, a broadcast subtract, Exp
    on ScalarE, TensorReduce add, a broadcast divide (fp32 inside)."""
    what = "nl.softmax"
    x = _tile(x, what, "x")
    (x,) = _mask([x], mask, what)
    axes = _free_axes(x, axis, what)
    m = _reduce("max", x, axes, "float32", None, True, what)
    e = _activation("Exp", _binary("subtract", x, m, "float32", None, what), "float32", None, what)
    s = _reduce("add", e, axes, "float32", None, True, what)
    return _binary("divide", e, s, _bir(dtype, x.bir_dtype), None, what)


@_api
def var(x, axis, *, dtype=None, keepdims=False, mask=None, **kw):
    """The population variance mean((x - mean(x))^2) along the trailing free axes, in the keepdims shape (the page:
    'keepdims: currently ignored; result always has keepdims=True shape'): two TensorReduce averages around a
    broadcast subtract and a square."""
    what = "nl.var"
    x = _tile(x, what, "x")
    (x,) = _mask([x], mask, what)
    axes = _free_axes(x, axis, what)
    mu = _reduce("average", x, axes, "float32", None, True, what)
    d = _binary("subtract", x, mu, "float32", None, what)
    return _reduce("average", _binary("mult", d, d, "float32", None, what), axes, _bir(dtype, x.bir_dtype), None,
                   True, what)


@_api
def rms_norm(x, w, axis, n, epsilon=1e-06, *, dtype=None, compute_dtype=None, mask=None, **kw):
    """x / sqrt(sum(x^2) / n + epsilon) * w along the free axis of a [P, F] tile: Square on ScalarE, TensorReduce
    add, Rsqrt(sum * (1/n) + epsilon) on ScalarE, then x times that [P, 1] column and times w (VectorE; w a tile of
    x's shape or broadcast along the free dim)."""
    what = "nl.rms_norm"
    x = _tile(x, what, "x")
    (x,) = _mask([x], mask, what)
    axes = _free_axes(x, axis, what)
    if len(x.shape) != 2 or axes != [1]:
        raise KernelError(f"{what}: lowered for [P, F] tiles with axis=1, got {list(x.shape)} axis={axis}")
    if not _is_num(n) or n <= 0:
        raise KernelError(f"{what}: n must be a positive number, got {n!r}")
    sq = _activation("Square", x, "float32", None, what)
    ss = _reduce("add", sq, axes, "float32", None, True, what)
    r = _activation("Rsqrt", ss, "float32", None, what, bias=float(epsilon), scale=1.0 / float(n))
    y = _binary("mult", x, r, "float32", None, what)
    return _binary("mult", y, w, _bir(dtype, x.bir_dtype), None, what)

