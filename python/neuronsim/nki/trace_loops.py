"""The loops of the traced program: the iterators nl.affine_range / nl.sequential_range / nl.fori_loop return
(loop_range). A loop is traced once with its variable symbolic (one BIR loop), or in the segments its loop plan
gives (loop_plan.py: trips peeled, a loop split for `//`), or unrolled when the kernel uses its variable as a Python
value; each records the kernel loop it traces for BIR debug.nki (tracer.NkiLoop)."""
from . import loop_plan
from .errors import Unsupported, source_location
from .symbolic import Idx
from .tracer import Loop, NkiLoop, Op, current


class Peeled(int):
    """A loop variable on a trip traced on its own (loop_plan): its value, and the key of its loop (nl.loop_reduce's
    loop_indices name loops by their variables)."""

    def __new__(cls, value, key):
        obj = int.__new__(cls, value)
        obj.key = key
        return obj


def loop_range(kind, args, where=None):
    """The iterator of nl.affine_range / nl.sequential_range: one trip, the loop variable symbolic."""
    if len(args) == 1:
        start, stop, step = 0, args[0], 1
    elif len(args) in (2, 3):
        start, stop, step = args[0], args[1], args[2] if len(args) == 3 else 1
    else:
        raise Unsupported(f"nl.{kind} takes (stop) or (start, stop[, step])")
    try:
        start, stop, step = int(start), int(stop), int(step)
    except Unsupported:
        raise Unsupported(f"nl.{kind} with a bound that depends on a loop variable: trip counts are static")
    if step <= 0:
        raise Unsupported(f"nl.{kind} with step {step}: steps are positive")
    where = where or source_location()
    if current(f"nl.{kind}").unroll:
        trips = range(start, stop, step)
        current().expand(len(trips), f"nl.{kind} of {len(trips):,} trips, unrolled (its variable is used as a Python "
                                     "value)", where)
        return _unrolled_gen(kind, start, stop, step, where)
    return _loop_gen(kind, start, stop, step, where)


def _unrolled_gen(kind, start, stop, step, where):
    """An unrolled loop (Python runs its trips): its trips are recorded for the instructions they emit."""
    tr = current(f"nl.{kind}")
    entry = [NkiLoop(tr, kind, where, None, start, step), 0]
    tr.nki_stack.append(entry)
    try:
        for trip, value in enumerate(range(start, stop, step)):
            entry[1] = trip
            yield value
    finally:
        if any(e is entry for e in tr.nki_stack):
            tr.nki_stack[:] = [e for e in tr.nki_stack if e is not entry]


def _loop_gen(kind, start, stop, step, where):
    """One segment after the other (loop_plan.segments; the whole loop without a plan): a BIR loop traced once with
    its variable symbolic, a trip traced on its own with its variable a Python int (Peeled), or a split segment, two
    nested loops u, w with i = first + step * (c * u + w)."""
    tr = current(f"nl.{kind}")
    trips = max(0, (stop - start + step - 1) // step)
    if trips == 0:
        Loop(tr, kind, start, stop, step, where)
        return
    key = tr.loop_key(where)
    marker = Op("Marker", [], [], {}, None, where, "loop start", kind="marker")
    marker.extra["dropped"] = True  # emits nothing: where an identity for nl.loop_reduce goes (nl_reduce)
    marker.extra["block"] = tr.stack[-1]
    tr.emit(marker)
    tr.starts.setdefault(key, marker)
    outer = tr.segment
    nki = NkiLoop(tr, kind, where, None, start, step)  # one kernel loop, however many segments it is traced in
    for a, b, r in loop_plan.segments(trips, tr.plan.get(key)):
        tr.segment = (key, a)
        first = start + step * a
        pushed = []

        def enter(L):
            tr.stack[-1].items.append(L)
            tr.stack.append(L.body)
            pushed.append(L)
        # The kernel loop's trip (BIR debug.nki): a number on a peeled trip, else a + the segment's loops' trips.
        if b - a == 1 and r is None:
            value, trip = Peeled(first, key), a
        elif r is None:
            enter(Loop(tr, kind, first, start + step * b, step, where, key, a, nki=nki))
            value, trip = Idx(0, {pushed[0].var: 1}), (a, ((pushed[0], 1),))
        else:
            enter(Loop(tr, kind, 0, (b - a) // r, 1, where, key, a, split=True, nki=nki))
            enter(Loop(tr, kind, 0, r, 1, where, key, a, split=True, nki=nki))
            value = Idx(first, {pushed[0].var: step * r, pushed[1].var: step})
            trip = (a, ((pushed[0], r), (pushed[1], 1)))
        entry = [nki, trip]
        tr.nki_stack.append(entry)
        try:
            yield value
        except GeneratorExit:
            tr.broken = where
            for L in reversed(pushed):
                if tr.stack and tr.stack[-1] is L.body:
                    tr.stack.pop()
            tr.segment = outer
            raise
        finally:
            tr.nki_stack[:] = [e for e in tr.nki_stack if e is not entry]
        for _ in pushed:
            tr.stack.pop()
        tr.segment = outer
