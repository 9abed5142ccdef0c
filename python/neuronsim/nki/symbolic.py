"""Symbolic values of a traced kernel: index expressions and the shape markers, with no knowledge of the trace.

- Idx: an index expression, c + sum(coef * loop variable) + sum(coef * arange axis). Arange axes are numbered by
  their broadcast position counted from the end (-1 the last), so that nl.arange(128)[:, None] + nl.arange(64)[None, :]
  has the shape (128, 64) by numpy's rules. A loop variable is a key of Idx.loop (the trace's loop number, or SHARD).
- Pred: a comparison of an index expression with 0 (mask=, nisa.affine_select).
- arange, mgrid, ds: nl.arange, nl.mgrid and nl.ds; ParDim: nl.par_dim's shape entry.
- NeedsUnroll: raised when the kernel uses a loop variable as a Python value.

The bottom layer of the NKI front end (tests/python/test_nki_layers.py): it imports errors only.
"""
from .errors import KernelError, Unsupported


# The loop-variable key of the running core's shard id in an Idx (program_id along an nl.nc(n) launch-grid axis);
# lowered to the builder's ShardIDKind term (builder::Aff::shard, BIR `{kind: ShardIDKind, ub}`).
SHARD = -1


def context():
    """The trace being recorded, or None: set by the tracer (tracer.py installs its own function here), so that
    `//` and `%` of a loop variable can read the loops' ranges and ask for a split (loop_plan.py) without this
    module knowing the trace."""
    return None


class NeedsUnroll(Unsupported):
    """The kernel uses a loop variable as a Python value (a list index, an `if`): api.trace_kernel traces it again
    with its nl.affine_range / nl.sequential_range loops unrolled, as NKI 0.7 runs them (docs/nki-lowering.md 1)."""


# ---------------------------------------------------------------------------------------------------- expressions
def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool) or type(x).__name__ in ("int64", "int32")


class Idx:
    """c + sum(loop[v] * v) + sum(axes[pos] * arange(sizes[pos]) at position pos)."""
    __slots__ = ("c", "loop", "axes", "sizes")

    def __init__(self, c=0, loop=None, axes=None, sizes=None):
        self.c = int(c)
        self.loop = {k: v for k, v in (loop or {}).items() if v}
        self.axes = {k: v for k, v in (axes or {}).items() if v}
        self.sizes = dict(sizes or {})

    @staticmethod
    def of(x):
        if type(x) is int:
            return _idx(x, _EMPTY, _EMPTY, _EMPTY)
        if isinstance(x, Idx):
            return x
        if _is_int(x):
            return Idx(int(x))
        raise Unsupported(f"an index must be an integer or an index expression (loop variable, nl.arange), got "
                          f"{type(x).__name__} {x!r}")

    # shape of the index (numpy broadcasting of its aranges)
    @property
    def ndim(self):
        return max([-p for p in self.sizes] + [0])

    @property
    def shape(self):
        n = self.ndim
        return tuple(self.sizes.get(i - n, 1) for i in range(n))

    def is_const(self):
        return not self.loop and not self.axes

    def is_scalar(self):  # loop-affine, no arange axis
        return not self.axes

    def __add__(self, o):
        if type(o) is int:  # an offset by a number: the same terms (an Idx's dicts are never changed in place)
            return _idx(self.c + o, self.loop, self.axes, self.sizes)
        if isinstance(o, slice) or not (isinstance(o, Idx) or _is_int(o)):
            return NotImplemented
        o = Idx.of(o)
        if not o.loop and not o.axes and not o.sizes:
            return _idx(self.c + o.c, self.loop, self.axes, self.sizes)
        if not self.loop and not self.axes and not self.sizes:
            return _idx(self.c + o.c, o.loop, o.axes, o.sizes)
        loop = dict(self.loop)
        for k, v in o.loop.items():
            loop[k] = loop.get(k, 0) + v
        axes = dict(self.axes)
        for k, v in o.axes.items():
            axes[k] = axes.get(k, 0) + v
        return Idx(self.c + o.c, loop, axes, _broadcast_sizes(self.sizes, o.sizes))

    __radd__ = __add__

    def __neg__(self):
        return self * -1

    def __sub__(self, o):
        if not (isinstance(o, Idx) or _is_int(o)):
            return NotImplemented
        return self + (-Idx.of(o))

    def __rsub__(self, o):
        return Idx.of(o) + (-self)

    def __mul__(self, o):
        if isinstance(o, Idx):
            if o.is_const():
                o = o.c
            elif self.is_const():
                return o * self.c
            else:
                raise Unsupported("a product of two index expressions is not affine (index expressions are "
                                  "c + sum(coef * loop variable) + sum(coef * nl.arange))")
        if not _is_int(o):
            return NotImplemented
        k = int(o)
        if k == 0:
            return _idx(0, _EMPTY, _EMPTY, self.sizes)
        return _idx(self.c * k, {v: c * k for v, c in self.loop.items()}, {p: c * k for p, c in self.axes.items()},
                    self.sizes)

    __rmul__ = __mul__

    def __floordiv__(self, o):
        return self._divmod(o, "//")[0]

    def __mod__(self, o):
        return self._divmod(o, "%")[1]

    def _divmod(self, o, sym):
        """(e // c, e % c) for a positive constant c, when both are affine: e = c * Q + R with the range of R within
        one multiple of c (over the loops' ranges) gives Q + floor(R / c) and R - c * floor(R / c). Otherwise a loop
        variable of coefficient a whose loop, split into i = (c / a) * u + w, makes them affine has its loop split
        (loop_plan.py; this trace then goes on with a stand-in and is traced again)."""
        if isinstance(o, Idx) and o.is_const():
            o = o.c
        if not _is_int(o) or int(o) <= 0:
            raise Unsupported(f"{sym} of an index expression by {o!r}: the divisor must be a positive integer")
        c = int(o)
        if self.is_const():
            return Idx(self.c // c), Idx(self.c % c)
        tr = context()
        if self.axes or tr is None:
            if self.loop and not self.axes:
                raise NeedsUnroll(f"{sym} of a loop variable (not affine)")
            raise Unsupported(f"{sym} of an nl.arange index is not affine: the front end lowers affine index "
                              "expressions only (use nl.static_range for an unrolled loop)")
        q = {v: a // c for v, a in self.loop.items() if a % c == 0}
        rest = Idx(self.c, {v: a for v, a in self.loop.items() if a % c})
        lo, hi = rest.bounds(tr.var_range)
        if lo // c == hi // c:
            f = lo // c
            return Idx(f, q), rest - f * c
        if len(rest.loop) == 1:
            (v, a), = rest.loop.items()
            if tr.request_split(v, a, c, rest.c):
                return Idx(lo // c, q), rest - (lo // c) * c  # a stand-in until the loop is split
        raise NeedsUnroll(f"{sym} of a loop variable (not affine)")

    def __index__(self):
        if self.is_const():
            return self.c
        if self.loop and not self.axes:
            raise NeedsUnroll("a loop variable used as a Python integer (a list index, a loop bound, a shape)")
        raise Unsupported("an nl.arange index used as a Python integer (a list index, a loop bound, a shape): its "
                          "value is symbolic while the kernel is traced")

    __int__ = __index__

    def __bool__(self):
        if self.is_const():
            return bool(self.c)
        if self.loop and not self.axes:
            raise NeedsUnroll("Python control flow on a loop variable (if / while on it)")
        raise Unsupported("Python control flow on an nl.arange index (if/while on it): its value is symbolic while "
                          "the kernel is traced; use mask=")

    def _cmp(self, o, op):
        return Pred(self - Idx.of(o), op)

    def __lt__(self, o):
        return self._cmp(o, "<")

    def __le__(self, o):
        return self._cmp(o, "<=")

    def __gt__(self, o):
        return self._cmp(o, ">")

    def __ge__(self, o):
        return self._cmp(o, ">=")

    def __eq__(self, o):
        if isinstance(o, (Idx, int)) and not isinstance(o, bool):
            return self._cmp(o, "==")
        return NotImplemented

    def __ne__(self, o):
        if isinstance(o, (Idx, int)) and not isinstance(o, bool):
            return self._cmp(o, "!=")
        return NotImplemented

    __hash__ = object.__hash__

    def __getitem__(self, key):
        """nl.arange(n)[:, None], [None, :]: places the index's dims, None adding a dim of size 1."""
        key = key if isinstance(key, tuple) else (key,)
        n = self.ndim
        colons = [i for i, k in enumerate(key) if isinstance(k, slice)]
        if any(not (k is None or (isinstance(k, slice) and k == slice(None))) for k in key) or len(colons) != n:
            raise Unsupported(f"an index expression of {n} dims takes {n} ':' and any None, got {key!r}")
        m = len(key)
        remap = {old - n: new - m for old, new in zip(range(n), colons)}
        sizes = {i - m: 1 for i, k in enumerate(key) if k is None}  # the new dims, of size 1
        sizes.update({remap[p]: s for p, s in self.sizes.items()})
        return Idx(self.c, self.loop, {remap[p]: c for p, c in self.axes.items()}, sizes)

    def __repr__(self):
        parts = [str(self.c)] if self.c or not (self.loop or self.axes) else []
        parts += [f"{c}*i{v}" for v, c in self.loop.items()] + [f"{c}*ax{p}" for p, c in self.axes.items()]
        return "Idx(" + " + ".join(parts) + ")"

    def bounds(self, var_range=None):
        """(min, max) over the loop variables' ranges and the aranges' extents; var_range(v) gives loop variable v's
        (first, last) value (the trace's Trace.var_range; tracer.bounds passes it), None takes every variable as 0."""
        lo = hi = self.c
        for v, c in self.loop.items():
            vlo, vhi = var_range(v) if var_range else (0, 0)
            lo += min(c * vlo, c * vhi)
            hi += max(c * vlo, c * vhi)
        for p, c in self.axes.items():
            n = self.sizes.get(p, 1) - 1
            lo += min(0, c * n)
            hi += max(0, c * n)
        return lo, hi


_EMPTY = {}  # the empty terms an Idx may share (never changed: see Idx.__add__)


def _idx(c, loop, axes, sizes):
    """An Idx of these terms as they are (no zero coefficients, dicts shared, not copied): the arithmetic's fast
    path."""
    e = object.__new__(Idx)
    e.c, e.loop, e.axes, e.sizes = c, loop, axes, sizes
    return e


def _broadcast_sizes(a, b):
    out = dict(a)
    for p, s in b.items():
        if p in out and out[p] != s and 1 not in (out[p], s):
            raise KernelError(f"index expressions of sizes {out[p]} and {s} at the same position do not broadcast")
        out[p] = max(out.get(p, 1), s) if p in out else s
    return out


class Pred:
    """A comparison of an index expression with 0 (e - rhs op 0), for mask=; combine with &."""

    def __init__(self, e, op):
        self.terms = [(e, op)]

    def __and__(self, o):
        if o is True or o is False:  # a condition that is a Python bool already: (i < n) & True
            return self if o else False
        p = Pred(Idx(0), "==")
        p.terms = self.terms + o.terms
        return p

    __rand__ = __and__

    def __bool__(self):
        if all(not e.axes for e, _ in self.terms):
            raise NeedsUnroll("Python control flow on a comparison of loop variables (if / while on it)")
        raise Unsupported("Python control flow on a comparison of index expressions: use it as mask=")


def arange(*args):
    """nl.arange(n) / nl.arange(start, stop[, step]): a 1-D index expression."""
    if len(args) == 1:
        start, stop, step = 0, args[0], 1
    elif len(args) in (2, 3):
        start, stop, step = args[0], args[1], args[2] if len(args) == 3 else 1
    else:
        raise Unsupported(f"nl.arange takes (stop) or (start, stop[, step]), got {len(args)} arguments")
    start, stop, step = int(start), int(stop), int(step)
    n = max(0, (stop - start + step - 1) // step)
    return Idx(start, None, {-1: step}, {-1: n})


class _MGrid:
    """nl.mgrid[0:128, 0:512]: one index expression per dim, each along its own position and of the grid's shape."""

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        m = len(key)
        ranges = []
        for k in key:
            if not isinstance(k, slice):
                raise Unsupported("nl.mgrid takes slices: nl.mgrid[0:128, 0:512]")
            start, step = k.start or 0, k.step or 1
            ranges.append((start, step, max(0, (k.stop - start + step - 1) // step)))
        # Dense, as numpy's mgrid: every component has the grid's whole shape (an iota of grid.y is [P, ..., n]).
        sizes = {i - m: n for i, (_, _, n) in enumerate(ranges)}
        out = [Idx(start, None, {i - m: step}, sizes) for i, (start, step, _) in enumerate(ranges)]
        return out[0] if m == 1 else Grid(out)


class Grid(tuple):
    """nl.mgrid's result: the index expressions, one per dim (i_p, i_f = nl.mgrid[...]), also as .p (the partition
    index) and .x, .y, .z (the free indices), as NKI's mgrid gives them (grid = nl.mgrid[0:128, 0:512];
    t[grid.p, grid.x])."""

    @property
    def p(self):
        return self[0]

    @property
    def x(self):
        return self[1]

    @property
    def y(self):
        return self[2]

    @property
    def z(self):
        return self[3]


mgrid = _MGrid()


def ds(start, size):
    """nl.ds(start, size): the slice start:start+size (start may be a loop expression)."""
    return slice(start, start + size) if isinstance(start, Idx) else slice(int(start), int(start) + int(size))


# ---------------------------------------------------------------------------------------------------- shape markers
class ParDim(int):
    """nl.par_dim(n): a shape entry marking the partition dim."""
