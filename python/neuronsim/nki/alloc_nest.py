"""A block tensor kept in a DRAM home, worked on nest by nest (allocate.py): the compiler's per-block live ranges
split where the tensor does not fit, each piece spilled (walrus/sbuf-liveness-interference.md: a live range per
partition block; walrus/sbuf-spill-select.md section 4: a `_SpillSave` home in DRAM, a Save after the value is made
and a reload before each use).

The tensor's accesses lie in the items ("nests") of one block -- the body of the innermost loop holding them all,
or the block the tensor is declared in. In each nest, one trip of a loop touches a set of its blocks (a Group); a
unit holds those blocks for the trip: reloaded from the home before the trip when the trip reads them and an
earlier nest wrote them, saved to the home after the trip when it writes them and a later nest reads them. The home
holds the tensor, or one trip's worth of the loop holding all the accesses when the tensor lives one trip of it at a
time.
"""
from . import dtypes
from .alloc_ops import Home, Reload, Save
from .alloc_scan import find_group, inside, starts
from .symbolic import Idx
from .tracer import Loop, View


class Nest:
    __slots__ = ("item", "accs", "group", "reload", "save", "start", "dims", "carried")

    def __init__(self, item, accs, group, carried=None):
        self.item, self.accs, self.group, self.carried = item, accs, group, carried
        self.reload = self.save = False
        self.start, self.dims = None, None


class Plan:
    """How storage s is kept in a home with a unit per nest; traffic: bytes per partition moved, all trips."""

    def __init__(self, s, block, base, nests):
        self.s, self.block, self.base, self.nests = s, block, base, nests
        self.traffic = 0
        self.staging = max(n.group.E for n in nests) * dtypes.size(s.dtype)


def _common_loop(s, accs):
    common = None
    for a in accs:
        chain, L = [], a.op.scope
        while L is not None:
            chain.append(L)
            L = L.parent
        common = chain if common is None else [L for L in common if any(L is M for M in chain)]
    for L in common or []:
        if L is not s.scope and inside(L, s.scope):
            return L
        break
    return None


def _nest_group(s, accs, item, common, trace):
    """(Group, carried loop or None) of the nest's accesses: the innermost loop of the nest (up to the nest's own
    loop) whose trips touch one set of blocks each -- distinct sets when the nest writes, but for the trips of one
    loop of the nest that no access's offset depends on (a value carried round it: an nl.loop_reduce accumulator);
    an instruction of the nest's block: the set its accesses touch in the trip of the loop holding every access."""
    writes = any(a.write for a in accs)
    if not isinstance(item, Loop):
        return (find_group(s, accs, common, trace, injective=writes) if common is not None else None), None
    chain = None
    for a in accs:
        c, L = [], a.op.scope
        while L is not None:
            c.append(L)
            L = L.parent
        chain = c if chain is None else [L for L in chain if any(L is M for M in c)]
    chain = [L for L in chain or [] if inside(L, item)]
    for L in chain:
        g = find_group(s, accs, L, trace, injective=writes)
        if g is not None:
            return g, None
    if not writes:
        return None, None
    # A value carried round one loop C of the nest: every access reads it (read-modify-write: the first trip of C
    # starts from what the earlier nest or the lazy Memset left), and no access's offset moves with C.
    used = set()
    for a in accs:
        used.update(a.view.off_f.loop)
    carried = [C for C in chain if C.var not in used and (C.trips or 0) > 1]
    if len(carried) != 1 or not all(a.read for a in accs):
        return None, None
    C = carried[0]
    for L in chain:
        if L is C:
            break
        g = find_group(s, accs, L, trace, injective=True, carried=C)
        if g is not None:
            return g, C
    return None, None


def plan(alloc, s, accs, lazy):
    """The Plan for s (accesses accs, its lazy Memset aside), or None when its nests do not work block by block."""
    trace = alloc.trace
    common = _common_loop(s, accs)
    block = common.body if common is not None else alloc._scope_block(s)
    by_item = {}
    for a in accs:
        by_item.setdefault(a.item_in(block), []).append(a)
    order = sorted(by_item)
    if len(order) < 2:
        return None
    if not (accs[0].write and not accs[0].read) and lazy is None:
        return None
    base = None
    if common is not None and (lazy is not None or starts(accs[0], common)):
        base = find_group(s, accs, common, trace)
    if common is not None and base is None:
        return None  # a value carried between trips of the loop holding every access: no home per trip
    nests = []
    for i in order:
        g, carried = _nest_group(s, by_item[i], block.items[i], common, trace)
        if g is None:
            return None
        nests.append(Nest(i, by_item[i], g, carried))
    p = Plan(s, block, base, nests)
    row = base.E if base is not None else s.row
    for j, n in enumerate(nests):
        first = n.accs[0]
        count = 1
        for _, k, _ in first.view.dims:
            count *= k
        n.reload = j > 0 and not (first.write and not first.read and count == s.partitions * n.group.E)
        n.save = any(a.write for a in n.accs) and any(a.read for m in nests[j + 1:] for a in m.accs)
        reloads = 1.0
        if n.carried is not None:
            # Saved after every trip, reloaded before every trip but the first of the carried loop when the nest is
            # the first (that trip starts from the lazy Memset): the compiler's reload before each use and save after
            # each write of a spilled range (walrus/sbuf-spill-select.md section 4).
            if j == 0 and lazy is None:
                return None  # the first trip would read what nothing wrote
            n.save = n.reload = True
            if j == 0:
                reloads = (n.carried.trips - 1) / n.carried.trips
        v = View(s, Idx(0), n.group.home_start, [(1, s.partitions, True)] +
                 [(st, k, False) for st, k in n.group.home_dims], s.dtype)
        if base is not None:
            v = base.view(v)
        n.start, n.dims = v.off_f, [(st, k) for st, k, part in v.dims if not part]
        trips = 1
        L = n.group.loop
        while L is not None:
            trips *= L.trips or 1  # a dynamic loop's trips are unknown: one trip's traffic
            L = L.parent
        p.traffic += (n.reload * reloads + n.save) * n.group.E * dtypes.size(s.dtype) * trips
    p.row = row
    return p


def commit(alloc, p, lazy):
    """The plan's units, home and spill instructions, in the allocation."""
    s = p.s
    home = Home(alloc.trace.unique(f"{s.name}_SpillSave"), (s.partitions, p.row), s.dtype)
    alloc.homes.append(home)
    for j, n in enumerate(p.nests):
        g = n.group
        u = alloc.unit(s, s.buffer, g.loop, g.loop.body, s.partitions, g.E, g,
                       name=alloc.trace.unique(f"{s.name}_n{j}"))
        u.serve(n.accs)
        u.segment = j
        u.nest = True
        via = None
        if s.buffer == "psum":
            via = alloc.unit(s, "sbuf", g.loop, g.loop.body, s.partitions, g.E,
                             name=alloc.trace.unique(f"{s.name}_n{j}_sb"))
            via.items, via.temp = list(u.items), True
        zero = alloc._lazy(u, lazy, n.accs) if j == 0 and lazy is not None else None
        if n.reload:
            r = Reload(u, home, p.row, n.start, n.dims, via, s.where)
            if j == 0 and n.carried is not None:
                # the first trip of the carried loop starts from the Memset, the others from the home: emit_bir
                # peels that trip (alloc.peeled)
                r.when = (n.carried, False)
                if zero is not None:
                    zero.when = (n.carried, True)
                alloc.peeled.append(n.carried)
            alloc._insert(u.block, u.items[0], before=r)
        if n.save:
            alloc._insert(u.block, u.items[-1], after=Save(u, home, p.row, n.start, n.dims, via, s.where))
