"""The shards of an nl.nc(n) launch grid: each shard is traced on its own with nl.program_id a plain int (as NKI runs
an LNC kernel: one trace per physical core), and the n parts become one program (docs/nki-lowering.md "Launch grids"):

- merged, when the parts are the same but for integer offsets that grow linearly with the shard id (the shard's
  rows, columns or rank): part 0 with each such offset c + d * shard, a ShardIDKind term, as one trace with a
  symbolic shard id would give -- the program of a kernel whose shards differ only in where they work;
- otherwise side by side: part s behind a marker op (kind "shard_part") that emit_bir.py lowers to a branch on the
  core's shard id, so that each core runs its own part (a kernel with `if nl.program_id(0) == 0:`).

Two parts are the same when they record the same ops and loops in the same order, with the same fields, on
corresponding tensors: the k-th tensor or loop part s creates stands for part 0's k-th, and a tensor both use (an
argument, the shared HBM tensors) is the same object. Anything else that differs (a field, an immediate, a shape, a
loop bound, a register) keeps the parts side by side.

The trace layer (tests/python/test_nki_layers.py): it imports tracer and symbolic only.
"""
import math

from .symbolic import SHARD, Idx
from .tracer import Loop, Op, Storage, View


class Part:
    """What tracing one shard added to the trace: root items [i0, i1), storages [s0, s1), loops [l0, l1); reused:
    the ids of the shared HBM tensors it took from the first instance instead of creating its own."""

    def __init__(self, tr):
        self.tr = tr
        self.i0, self.s0, self.l0 = len(tr.root.items), len(tr.storages), len(tr.loops)
        self.reused = set()

    def close(self):
        self.i1, self.s1, self.l1 = len(self.tr.root.items), len(self.tr.storages), len(self.tr.loops)
        return self

    @property
    def items(self):
        return self.tr.root.items[self.i0:self.i1]

    @property
    def storages(self):
        return self.tr.storages[self.s0:self.s1]

    @property
    def loops(self):
        return self.tr.loops[self.l0:self.l1]


def marker(shard, shards):
    """The op that starts shard `shard`'s part (shard == shards: the end of the parts)."""
    return Op("ShardPart", [], [], {"shard": shard, "shards": shards}, "SP", None, "launch grid", kind="shard_part")


def combine(tr, parts):
    """Makes the trace's root one program for the cores of its shards: merged (True) or parts side by side (False)."""
    n = len(parts)
    deltas = {}  # id(Idx of part 0) -> [the Idx, its offset in part s for s = 1..n-1]
    if all(_Matcher(parts[0], parts[s], s, deltas).run() for s in range(1, n)) and _linear(deltas, n):
        for idx, *d in deltas.values():
            if d[0]:
                idx.loop = {**idx.loop, SHARD: idx.loop.get(SHARD, 0) + d[0]}  # Idx dicts are shared, not changed
        tr.root.items = parts[0].items
        del tr.storages[parts[0].s1:]  # the other parts' tensors and loops stand for part 0's
        del tr.loops[parts[0].l1:]
        return True
    items = []
    for s, p in enumerate(parts):
        items += [marker(s, n)] + p.items
    tr.root.items = items + [marker(n, n)]
    return False


def _linear(deltas, n):
    """Whether each offset moves by the same step from one shard to the next (c + d * shard)."""
    return all(len(d) == n - 1 and d[s - 1] == s * d[0] for _, *d in deltas.values() for s in range(1, n))


class _Matcher:
    """Compares part s with part 0, object by object, recording the offsets that differ (deltas)."""

    # Attributes that name an object rather than describe it (a tensor's name and id, the trace it belongs to, a
    # loop's number) or that the comparison of the ops covers (written, zero_op, the body, the source line).
    _SKIP = {"trace", "id", "name", "base", "where", "written", "zero_op", "var", "body", "parent"}

    def __init__(self, p0, ps, s, deltas):
        self.p0, self.ps, self.s, self.deltas = p0, ps, s, deltas
        self.corr = {}  # id(tensor or loop of part s) -> its counterpart in part 0
        self.busy = set()

    def run(self):
        own0 = [st for st in self.p0.storages if st.id not in self.ps.reused]
        if len(own0) != len(self.ps.storages) or len(self.p0.loops) != len(self.ps.loops):
            return False
        if any(st.buffer == "hbm" and st.kind != "const" for st in self.ps.storages):
            return False  # an HBM tensor of its own on each core (private_hbm): one program would share it
        for a, b in zip(self.p0.loops, self.ps.loops):
            self.corr[id(b)] = a
        for a, b in zip(own0, self.ps.storages):
            self.corr[id(b)] = a
        try:
            return all(self._attrs(a, b) for a, b in zip(own0, self.ps.storages)) and \
                self._tree(self.p0.items, self.ps.items)
        except Exception:  # an attribute that does not compare (a value of a type nothing here knows)
            return False

    def _tree(self, xs, ys):
        if len(xs) != len(ys):
            return False
        for a, b in zip(xs, ys):
            if isinstance(a, Loop) or isinstance(b, Loop):
                if type(a) is not type(b) or self.corr.get(id(b)) is not a or a.where != b.where or \
                        not self._attrs(a, b) or not self._tree(a.body.items, b.body.items):
                    return False
            elif not self.same(a, b):
                return False
        return True

    def _attrs(self, a, b):
        da, db = vars(a), vars(b)
        keys = (set(da) | set(db)) - self._SKIP
        return all(k in da and k in db and self.same(da[k], db[k]) for k in keys)

    def same(self, a, b):
        if a is b:
            return True
        if type(a) is not type(b):
            return False
        if isinstance(a, (Storage, Loop)):
            return self.corr.get(id(b)) is a
        if isinstance(a, Idx):
            return self._idx(a, b)
        if isinstance(a, (list, tuple)):
            return len(a) == len(b) and all(self.same(x, y) for x, y in zip(a, b))
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(self.same(a[k], b[k]) for k in a)
        if isinstance(a, float):
            return a == b or (math.isnan(a) and math.isnan(b))
        if isinstance(a, (View, Op)):
            return self._slots(a, b)
        if type(a).__module__ == "numpy":
            import numpy as np
            return bool(np.array_equal(a, b))
        if isinstance(a, (int, str, bytes)) or type(a).__eq__ is not object.__eq__:
            return bool(a == b)
        if hasattr(a, "__dict__"):  # another object (a mask, a register): the same attributes
            key = (id(a), id(b))
            if key in self.busy:
                return True
            self.busy.add(key)
            return self._attrs(a, b)
        return False

    def _slots(self, a, b):
        key = (id(a), id(b))
        if key in self.busy:
            return True
        self.busy.add(key)
        if isinstance(a, Op) and a.where != b.where:
            return False
        skip = ("scope", "where") if isinstance(a, Op) else ()
        return all(self.same(getattr(a, k, None), getattr(b, k, None)) for k in type(a).__slots__ if k not in skip)

    def _idx(self, a, b):
        if a.axes != b.axes or a.sizes != b.sizes or len(a.loop) != len(b.loop):
            return False
        loops = self.ps.tr.loops
        for v, c in b.loop.items():
            mapped = self.corr.get(id(loops[v])) if 0 <= v < len(loops) else None
            if a.loop.get(mapped.var if mapped is not None else v) != c:
                return False
        entry = self.deltas.setdefault(id(a), [a])
        d = b.c - a.c
        if len(entry) > self.s:  # met before for this shard: the same object must move the same way
            return entry[self.s] == d
        entry.append(d)
        return len(entry) == self.s + 1
