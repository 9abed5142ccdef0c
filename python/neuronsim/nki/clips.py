"""What a mask= makes of a view's dims, and the index range checks that wait for it (docs/nki-lowering.md "Masks").

- Clipped: the extent of a view's dim (the int: the tile keeps its shape, as in NKI) of which the masked instruction
  covers only [lo, hi). Being an int, it travels with its dim wherever a definition moves dims (a reduction's kept
  axes, a transpose) and into the shape of the instruction's result, whose output it clips alike.
- PairClip: a comparison of two axes (`i_p >= i_f`): the instruction is emitted once per piece, a run of the first
  axis over which the second axis's valid interval does not change (emit_bir; every piece one rectangle).
- Check: an index range check a mask may still make hold (`x[i * 128 + i_p, i_f]` past the end on the tail trip):
  index_view records it, nl_mask applies it to the clipped dims, _emit raises it when no mask did (NKI docs "NKI API
  Masking": the mask is applied before the indices are checked).

The trace layer (tests/python/test_nki_layers.py): it imports errors only.
"""
from .errors import KernelError

_OPS = {"<": lambda x: x < 0, "<=": lambda x: x <= 0, ">": lambda x: x > 0, ">=": lambda x: x >= 0,
        "==": lambda x: x == 0, "!=": lambda x: x != 0}


def holds(x, op):
    """Whether `x op 0` holds."""
    return _OPS[op](x)


def true_intervals(coef, rest, op, n):
    """The k in [0, n) with coef * k + rest op 0, as a list of disjoint [lo, hi) intervals in order."""
    if coef == 0:
        return [(0, n)] if holds(rest, op) and n > 0 else []
    if op == "!=":
        k0 = -rest // coef if rest % coef == 0 else None
        if k0 is None or not 0 <= k0 < n:
            return [(0, n)]
        return [iv for iv in ((0, k0), (k0 + 1, n)) if iv[1] > iv[0]]
    if op == "==":
        if rest % coef or not 0 <= -rest // coef < n:
            return []
        k0 = -rest // coef
        return [(k0, k0 + 1)]
    # <, <=, >, >=: the true set is one interval (the expression is monotone in k): its ends by bisection
    ok = [holds(coef * k + rest, op) for k in (0, n - 1)] if n > 0 else [False, False]
    if ok[0] and ok[1]:
        return [(0, n)]
    if not ok[0] and not ok[1]:
        return []
    lo, hi = 0, n - 1  # the change point between k = lo (ok[0]) and k = hi (ok[1])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(coef * mid + rest, op) == ok[0]:
            lo = mid
        else:
            hi = mid
    return [(0, hi)] if ok[0] else [(hi, n)]


class PairClip:
    """ca * k_a + cb * k_b + c op 0 over the indices k_a in [0, na), k_b in [0, nb) of two dims of one instruction
    (a two-axis mask term). pieces: [((a0, a1), (b0, b1))], a run of k_a values sharing the interval of k_b."""

    def __init__(self, ca, cb, c, op, na, nb):
        runs = []  # [a0, a1, intervals of k_b]
        for ka in range(na):
            ivs = tuple(true_intervals(cb, ca * ka + c, op, nb))
            if runs and runs[-1][2] == ivs:
                runs[-1][1] = ka + 1
            else:
                runs.append([ka, ka + 1, ivs])
        self.pieces = [((a0, a1), iv) for a0, a1, ivs in runs for iv in ivs]
        a = [p[0] for p in self.pieces]
        b = [p[1] for p in self.pieces]
        self.extent = {"a": (min((x[0] for x in a), default=0), max((x[1] for x in a), default=0)),
                       "b": (min((x[0] for x in b), default=0), max((x[1] for x in b), default=0))}


class Clipped(int):
    """A dim's full extent n, of which the instruction covers [lo, hi), and of which the two-axis terms in `pairs`
    ((PairClip, "a" | "b")) cover their pieces."""

    def __new__(cls, n, lo=0, hi=None, pairs=()):
        obj = int.__new__(cls, int(n))
        obj.lo, obj.hi, obj.pairs = lo, int(n) if hi is None else hi, tuple(pairs)
        return obj

    def narrowed(self, lo, hi):
        return Clipped(int(self), max(self.lo, lo), min(self.hi, hi), self.pairs)

    def paired(self, pair, role):
        return Clipped(int(self), self.lo, self.hi, self.pairs + ((pair, role),))

    def span(self, piece=None):
        """[lo, hi) this instruction (its piece: {PairClip: ((a0, a1), (b0, b1))}) covers; the pairs' whole extent
        without a piece."""
        lo, hi = self.lo, self.hi
        for pair, role in self.pairs:
            a, b = piece[pair] if piece is not None else (pair.extent["a"], pair.extent["b"])
            r = a if role == "a" else b
            lo, hi = max(lo, r[0]), min(hi, r[1])
        return lo, hi

    def __repr__(self):
        return f"Clipped({int(self)}, [{self.lo}, {self.hi}){', paired' if self.pairs else ''})"


def clipped(num):
    return isinstance(num, Clipped)


class Check:
    """Tensor dim d (size n) of a view is indexed by base + sum(coef * k_j) over its dims j (k_j in [0, num_j)),
    base an expression of the loop variables; `what` names the tensor."""
    __slots__ = ("d", "n", "base", "terms", "what")

    def __init__(self, d, n, base, terms, what):
        self.d, self.n, self.base, self.terms, self.what = d, n, base, tuple(terms), what

    def reach(self, dims, bounds):
        """(min, max) of the index over the loops' ranges (bounds: Idx -> (min, max)) and the dims' covered spans."""
        lo, hi = bounds(self.base)
        for j, coef in self.terms:
            num = dims[j][1]
            a, b = num.span() if clipped(num) else (0, int(num))
            if b <= a:
                return None  # the instruction covers nothing of this view: no index is used
            lo += min(coef * a, coef * (b - 1))
            hi += max(coef * a, coef * (b - 1))
        return lo, hi

    def error(self, lo, hi, where=None, masked=False):
        tail = " under its mask=" if masked else ""
        return KernelError(f"index out of range on {self.what}: dim {self.d} has size {self.n}, the index reaches "
                           f"[{lo}, {hi}]{tail}", where)

    def verify(self, dims, bounds, where=None, masked=False):
        r = self.reach(dims, bounds)
        if r is not None and (r[0] < 0 or r[1] >= self.n):
            raise self.error(r[0], r[1], where, masked)
