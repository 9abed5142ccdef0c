"""Loop plans: an nl.affine_range / nl.sequential_range loop traced in segments, when one traced body cannot say
what every trip does (docs/nki-lowering.md "Loops"):

- a mask= that holds on some trips and not on others (the tail trip of `mask=(i * 128 + i_p < n)`) cuts the loop
  where that changes: the trips on which the mask is uniform stay one BIR loop, each trip on which it clips is
  traced on its own (peeled: its loop variable a Python int, the mask then static). NKI's masking page: the compiler
  "skip[s] generating the instruction or generate[s] the instruction with a smaller input tile shape"; a tail trip
  peeled is how a loop keeps one static body beside it.
- `i // c` or `i % c` of a loop variable splits its loop in two nested loops, i = c * u + w (w < c): the quotient u
  and the remainder w are then loop variables, the index affine again (the remainder of the trips, when c does not
  divide them, a loop of its own).

A loop is known across traces by its key: the segment it is traced in (its parent's key and first trip), its
source line and its rank among the loops of that line there. The tracer records what a trace asks (requests) and
api.trace_kernel traces again with the plans merged, until nothing more is asked.

The trace layer (tests/python/test_nki_layers.py): it imports errors, symbolic and clips.
"""
from .clips import holds
from .errors import Unsupported
from .symbolic import Idx

MAX_PEELED = 4096  # trips a mask may peel off one loop; beyond, the mask is refused (docs/nki-lowering.md 7)


class Plan:
    """How one loop (by key) is traced: cuts (trip indices where a segment starts) and splits (segment start ->
    factor c)."""

    def __init__(self):
        self.cuts, self.splits = set(), {}

    def merge(self, other):
        """Adds other's cuts and splits; whether anything was new."""
        new = bool(other.cuts - self.cuts) or any(self.splits.get(k) != v for k, v in other.splits.items())
        self.cuts |= other.cuts
        self.splits.update(other.splits)
        return new


def segments(trips, plan):
    """[(first trip, end trip, split factor or None)] in trip order: the plan's cuts, and a split segment's trips
    past its last whole group of `factor` as a segment of their own."""
    bounds = sorted({0, trips} | {c for c in (plan.cuts if plan else ()) if 0 < c < trips})
    out = []
    for a, b in zip(bounds, bounds[1:]):
        r = plan.splits.get(a) if plan else None
        if r and (b - a) // r >= 1 and r > 1:
            m = a + r * ((b - a) // r)
            out.append((a, m, r))
            if m < b:
                out.append((m, b, None))
        else:
            out.append((a, b, None))
    return out


def _classes(e, op, var, loop, var_range):
    """The class of `e op 0` on trip t of loop (whose variable is var), every other loop variable over its range and
    every arange axis over its extent: "all" (it holds everywhere), "none" (nowhere) or "some". Returns the function
    of t; for <, <=, >, >= the class is monotone in t (e is affine)."""
    rest = _without(e, var)
    rlo, rhi = rest.bounds(var_range)
    a = e.loop[var]

    def cls(t):
        x = a * (loop.start + loop.step * t)
        lo, hi = rlo + x, rhi + x
        if op in ("==", "!="):
            zero, spans = lo == hi == 0, lo <= 0 <= hi
            full, empty = (zero, not spans) if op == "==" else (not spans, zero)
        else:
            full, empty = holds(lo, op) and holds(hi, op), not holds(lo, op) and not holds(hi, op)
        return "all" if full else "none" if empty else "some"
    return cls


def _without(e, var):
    return Idx(e.c, {v: c for v, c in e.loop.items() if v != var}, e.axes, e.sizes)


def cuts_for_mask(e, op, loop, var_range, what):
    """The cuts (trip indices, the loop's key's) that make `e op 0` uniform on every segment of loop but the trips
    that peel off: the change points of its class, and every trip of class "some" cut out alone."""
    cls = _classes(e, op, loop.var, loop, var_range)
    T = loop.trips
    if op in ("==", "!="):
        if T > MAX_PEELED:
            raise Unsupported(f"{what}: a mask= comparing a loop variable with == or != over {T} trips (at most "
                              f"{MAX_PEELED})")
        runs = []
        for t in range(T):
            c = cls(t)
            if runs and runs[-1][2] == c:
                runs[-1][1] = t + 1
            else:
                runs.append([t, t + 1, c])
    else:
        runs = _monotone_runs(cls, T)
    cuts, peeled = set(), 0
    for a, b, c in runs:
        cuts.add(a)
        if c == "some":
            peeled += b - a
            if peeled > MAX_PEELED:
                raise Unsupported(f"{what}: a mask= that clips differently on more than {MAX_PEELED} trips of a "
                                  "loop")
            cuts.update(range(a, b + 1))
    return {loop.trip0 + t for t in cuts if 0 < t < T}


def _monotone_runs(cls, T):
    """[[first trip, end trip, class]] of a class sequence that is monotone in t (three runs at most), by bisection."""
    runs = []
    t = 0
    while t < T:
        c = cls(t)
        lo, hi = t, T - 1  # lo: a trip of class c; the run ends after the last such trip
        if cls(hi) == c:
            lo = hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if cls(mid) == c:
                lo = mid
            else:
                hi = mid
        runs.append([t, lo + 1, c])
        t = lo + 1
    return runs


def split_for_floordiv(e, c, loop, var):
    """The split factor r that makes e // c affine once loop's trips t are r * u + w (w < r), or None: e = K + q * t
    with q = e's coefficient times the loop's step; c must be a multiple of q > 0 and K mod c < q, so that
    e // c = K // c + u and e % c = K mod c + q * w."""
    a = e.loop.get(var, 0)
    q = a * loop.step
    if q <= 0 or c % q or len(e.loop) != 1 or e.axes:
        return None
    K = e.c + a * loop.start
    if K % c >= q:
        return None
    return c // q
