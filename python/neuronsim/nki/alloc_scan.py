"""What the allocator (allocate.py) needs to know of a trace: where every instruction is in program order, which
tiles it touches, and which blocks of a block tensor each loop trip touches.

- Positions: the trace walked in program order, one position per instruction and one per loop header; a loop's
  extent is [its header, its last instruction]. Each item of a block (an instruction or a loop) has a position range.
- Accesses: per on-chip storage, every instruction that reads or writes it, with the path of (block, item index)
  from the kernel's top level down to the instruction.
- Groups: a block tensor (nl.ndarray((nb, nl.par_dim(P), f))) whose every access inside a loop L touches, in each
  trip of L, the same run of G blocks, and different trips different runs, lives one trip at a time: its blocks are
  allocated like a tile declared in L's body (G blocks, rotated with L's buffers), as the compiler allocates a
  tensor only where its blocks are live (the colorer's per-block live ranges and "shrink factor", reference
  neuronx-cc walrus/sbuf-liveness-interference.md, "The partition footprint -- the shrink factor").
"""
import math

from .emit_dynamic import tile_terms
from .symbolic import Idx
from .tracer import Loop, View


class Access:
    __slots__ = ("op", "view", "read", "write", "pos", "path")

    def __init__(self, op, view, read, write, pos, path):
        self.op, self.view, self.read, self.write, self.pos, self.path = op, view, read, write, pos, path

    def item_in(self, block):
        """The index of the item of `block` that holds this access (None when the block is not on its path)."""
        for b, i in self.path:
            if b is block:
                return i
        return None


def _accumulates(op):
    """A matmul that adds to what its PSUM destination holds (an accumulation group's later matmuls)."""
    return op.type == "Matmult" and (op.first_of is not None or op.fields.get("start_tensor_calc") is False)


class Scan:
    """The trace's program order and the on-chip accesses (see the module docstring)."""

    def __init__(self, trace):
        self.trace = trace
        self.pos = {}  # id(op) -> position
        self.loop_extent = {}  # loop var -> (header position, last position)
        self.ranges = {}  # id(block) -> [(first, last) position of each item]
        self.accesses = {}  # storage id -> [Access] in program order
        self.where = []  # position -> the kernel line of its instruction or loop
        self.n = 0
        self._walk(trace.root, ())

    def _walk(self, block, path):
        ranges = []
        for i, item in enumerate(block.items):
            here = path + ((block, i),)
            start = self.n
            self.n += 1
            self.where.append(item.where)
            if isinstance(item, Loop):
                self._walk(item.body, here)
                self.loop_extent[item.var] = (start, self.n - 1)
            else:
                self.pos[id(item)] = start
                if not item.extra.get("dropped"):
                    self._record(item, start, here)
            ranges.append((start, self.n - 1))
        self.ranges[id(block)] = ranges

    def _record(self, op, pos, path):
        seen = {}
        acc_out = _accumulates(op)
        for k, v in enumerate(op.ins + op.outs):
            if not isinstance(v, View) or not v.storage.onchip:
                continue
            out = k >= len(op.ins)
            key = (v.storage.id, id(v))
            a = seen.get(key)
            if a is None:
                a = seen[key] = Access(op, v, False, False, pos, path)
                self.accesses.setdefault(v.storage.id, []).append(a)
            a.write |= out
            a.read |= (not out) or (out and acc_out)
        for v in tile_terms(op):  # a [1, 1] tile an operand takes its run-time offset from: read by the op
            if v.storage.onchip and (v.storage.id, id(v)) not in seen:
                seen[(v.storage.id, id(v))] = a = Access(op, v, True, False, pos, path)
                self.accesses.setdefault(v.storage.id, []).append(a)

    def where_of(self, t):
        return self.where[t] if 0 <= t < len(self.where) else None

    def item_range(self, block, i):
        return self.ranges[id(block)][i]

    def loops_of(self, op):
        """The loops around op, innermost first."""
        out, L = [], op.scope
        while L is not None:
            out.append(L)
            L = L.parent
        return out


def whole_only(s, accs):
    """Whether tile s must be allocated whole (never a trip's blocks, a nest's unit or an explicit block table): an
    access with a run-time start (.ap(scalar_offset=...), its blocks unknown when tracing), one of another dtype (a
    reinterpretation: offsets in other units), or one inside a dynamic loop within s's scope (its trips unknown; a
    tile declared in a dynamic loop's body is made anew in each trip, and its blocks may still live a trip of a
    static loop in that body at a time)."""
    for a in accs:
        v = a.view
        if v.dyn is not None or v.bir_dtype != s.dtype:
            return True
        L = a.op.scope
        while L is not None and L is not s.scope:
            if L.trips is None:
                return True
            L = L.parent
    return False


def inside(loop, scope):
    """Whether `loop` is `scope` or inside it (scope None: the kernel's top level holds everything)."""
    while loop is not None:
        if loop is scope:
            return True
        loop = loop.parent
    return scope is None


# ---------------------------------------------------------------------------------------------------- groups
class Group:
    """The blocks of storage s one trip of `loop` touches, held in a unit of E elements per partition.
    home_start (an Idx of the loop variables) and home_dims ([(step, n)], the free dims) give where they are in s's
    own layout; view(v) is an access of s seen in the unit (its offsets and steps in the unit's layout)."""
    __slots__ = ("loop", "E", "home_start", "home_dims", "_strip")

    def __init__(self, loop, E, home_start, home_dims, strip):
        self.loop, self.E, self.home_start, self.home_dims, self._strip = loop, E, home_start, home_dims, strip

    def view(self, v):
        off, dims = self._strip(v)
        return View(v.storage, v.off_p, off, dims, v.bir_dtype)


def block_elems(s):
    """Elements per partition of one block of s (its dims after the partition dim) and the number of blocks (the
    dims before it); (row, 1) for a tile without block dims."""
    be = 1
    for d in range(s.pdim + 1, len(s.shape)):
        be *= s.shape[d]
    return be, s.row // be if be else 1


def lazy_memset(s, accs):
    """The nl.zeros (or whole-tile Memset) that starts s, when it is s's first access and covers it whole: with
    s's blocks allocated per trip it becomes a Memset of the trip's blocks (lazy initialisation)."""
    if not accs:
        return None
    a = accs[0]
    if a.op.type == "Memset" and a.op.kind == "zero" and a.op.scope is s.scope and a.write and not a.read and \
            len(a.op.outs) == 1 and a.view.is_whole():
        return a
    return None


def _span(v, inner, var_range):
    lo = hi = v.off_f.c
    for var, c in v.off_f.loop.items():
        if var in inner:
            r0, r1 = var_range(var)
            lo += min(c * r0, c * r1)
            hi += max(c * r0, c * r1)
    for st, n, part in v.dims:
        if not part and n > 1:
            if st >= 0:
                hi += st * (n - 1)
            else:
                lo += st * (n - 1)
    return lo, hi


def _outer(s, L):
    """{var: loop} of L and the loops between it and s's scope; None when L is not inside s's scope."""
    out = {}
    M = L
    while M is not None and M is not s.scope:
        out[M.var] = M
        M = M.parent
    return out if M is s.scope else None


def find_group(s, accs, L, trace, injective=True, carried=None):
    """The Group of s in loop L (every access in accs inside L), or None when the trips of L do not touch disjoint
    sets of blocks of s: a run of consecutive blocks (_run_group) or the blocks at fixed indices of the block dims
    the trip's variables index, the compiler's shrunk dims (_dim_group). injective False: trips may touch the
    same blocks (accesses that only read). carried: a loop around L whose trips all touch the same blocks (a value
    carried from trip to trip of it, alloc_nest.py), left out of the injectivity check."""
    if s.pdim == 0 or block_elems(s)[1] <= 1:
        return None
    out_vars = _outer(s, L)
    if out_vars is None or any(not any(x is L for x in _chain(a.op.scope)) for a in accs):
        return None
    inner = {M.var for M in trace.loops if _inner(M.var, L, trace)}
    inj = {v: M for v, M in out_vars.items() if M is not carried}
    return _run_group(s, accs, L, out_vars, inner, trace, injective, inj) or \
        _dim_group(s, accs, L, out_vars, inner, injective, inj)


def _run_group(s, accs, L, out_vars, inner, trace, injective=True, inj=None):
    be, _ = block_elems(s)
    coef = None
    D = 0
    within = set()  # outer variables that move a read-only access inside the trip's blocks (not between blocks)
    for a in accs:
        c = {}
        for var, k in a.view.off_f.loop.items():
            if var in out_vars:
                if k % be:
                    if injective or var == L.var:
                        return None
                    within.add(var)
                    continue
                c[var] = k
            elif var not in inner:
                return None
        if coef is None:
            coef = c
        elif c != coef:
            return None
        for k in c.values():
            D = math.gcd(D, abs(k) // be)
    if not coef or L.var not in coef or within & set(coef):
        return None
    spans = [_span(a.view, inner | within, trace.var_range) for a in accs]
    for G in [g for g in range(1, D + 1) if D % g == 0]:
        E = G * be
        qs = {lo // E for lo, _ in spans}
        if len(qs) != 1:
            continue
        (q,) = qs
        if any(hi >= (q + 1) * E for _, hi in spans):
            continue
        if injective and not _injective({v: k // E for v, k in coef.items()}, out_vars if inj is None else inj):
            return None

        def strip(v, coef=coef, q=q, E=E):
            o = v.off_f
            return Idx(o.c - q * E, {x: k for x, k in o.loop.items() if x not in coef}, o.axes, o.sizes), v.dims
        return Group(L, E, Idx(q * E, dict(coef)), [(1, E)], strip)
    return None


def _digit(c, strides, shape):
    """(dim, k) with c = k * strides[dim] and 0 < k < shape[dim] (the largest stride that divides c), else None."""
    for d in range(len(strides)):
        if strides[d] <= abs(c) and c % strides[d] == 0:
            k = c // strides[d]
            return (d, k) if abs(k) < shape[d] else None
    return None


def _digits(c, strides, shape):
    out = {}
    for d in range(len(strides)):
        out[d], c = divmod(c, strides[d])
    return out if c == 0 and all(0 <= out[d] < shape[d] for d in out) else None


def _dim_group(s, accs, L, out_vars, inner, injective=True, inj=None):
    """The blocks at fixed indices of the block dims the trip's variables index (the same dims and indices in every
    access), the other dims kept whole in the unit, in their order."""
    shape = [n for d, n in enumerate(s.shape) if d != s.pdim]
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    nblock = s.pdim
    key = None
    for a in accs:
        drop = {}
        for var, k in a.view.off_f.loop.items():
            dk = _digit(k, strides, shape)
            if dk is None:
                return None
            if var in out_vars:
                if dk[0] >= nblock:
                    return None
                drop.setdefault(dk[0], {})[var] = dk[1]
            elif var not in inner:
                return None
        digits = _digits(a.view.off_f.c, strides, shape)
        if digits is None:
            return None
        k = tuple(sorted((d, tuple(sorted(v.items())), digits[d]) for d, v in drop.items()))
        if key is None:
            key = k
        elif k != key:
            return None
    dropped = [d for d, _, _ in key]
    for a in accs:
        for var, k in a.view.off_f.loop.items():
            if var in inner and _digit(k, strides, shape)[0] in dropped:
                return None
        for st, n, part in a.view.dims:
            if not part and n > 1 and st:
                dk = _digit(st, strides, shape)
                if dk is None or dk[0] in dropped:
                    return None
    if not any(L.var in dict(v) for _, v, _ in key):
        return None
    w, g = 1, {}
    for d, v, _ in reversed(key):
        for var, k in v:
            g[var] = g.get(var, 0) + k * w
        w *= shape[d]
    if injective and not _injective(g, out_vars if inj is None else inj):
        return None
    kept = [d for d in range(len(shape)) if d not in dropped]
    pstr = {}
    acc = 1
    for d in reversed(kept):
        pstr[d] = acc
        acc *= shape[d]
    E = acc
    start = Idx(sum(c * strides[d] for d, _, c in key),
                {var: sum(k * strides[d] for d, v, _ in key for x, k in v if x == var) for var in out_vars
                 if any(x == var for _, v, _ in key for x, _ in v)})

    def remap(c):
        d, k = _digit(c, strides, shape)
        return k * pstr[d]

    def strip(v):
        o = v.off_f
        digits = _digits(o.c, strides, shape)
        c = sum(digits[d] * pstr[d] for d in kept)
        loop = {x: remap(k) for x, k in o.loop.items() if x in inner}
        dims = [(st if part or n <= 1 or not st else remap(st), n, part) for st, n, part in v.dims]
        return Idx(c, loop, o.axes, o.sizes), dims
    return Group(L, E, start, [(strides[d], shape[d]) for d in kept], strip)


def _runs(s, accs, trace, fixed):
    """The accesses of s in runs of blocks no access joins, in block order, each [first block, last block,
    [accesses]]: the blocks an access touches over the values of its loop variables but those in `fixed` (held at
    0: the trip of the loops they belong to)."""
    be, _ = block_elems(s)
    spans = []
    for a in accs:
        lo, hi = _span(a.view, set(a.view.off_f.loop) - fixed, trace.var_range)
        spans.append((lo // be, hi // be, a))
    runs = []
    for b0, b1, a in sorted(spans, key=lambda x: (x[0], x[1])):
        if runs and b0 <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], b1)
            runs[-1][2].append(a)
        else:
            runs.append([b0, b1, [a]])
    for r in runs:
        r[2].sort(key=lambda a: a.pos)
    return runs


def pieces(s, accs, trace, lazy=False):
    """Block tensor s allocated block run by block run, each run as its own loop-local tile: [(Group, accesses)],
    or None. The runs are those of one trip of the innermost loop whose trips touch disjoint blocks of s (of the
    whole kernel when there is none); each run is allocated by shrink, in the innermost loop whose trips touch
    disjoint blocks of it -- the compiler's per-block live ranges: a block indexed by a loop variable lives from
    its write to its last read in that trip (walrus/sbuf-liveness-interference.md, a live range per block)."""
    be, nblocks = block_elems(s)
    if not accs or s.pdim == 0 or nblocks <= 1:
        return None
    fixed = set()
    for L in _common_loops(accs):
        if L is s.scope or not inside(L, s.scope):
            break
        if find_group(s, accs, L, trace) is not None:
            fixed = set(_outer(s, L))
            break
    runs = _runs(s, accs, trace, fixed)
    if len(runs) <= 1:
        return None
    out = []
    for _, _, run in runs:
        g = shrink(s, run, trace, lazy)
        if g is None:
            return None
        out.append((g, run))
    return out


def block_runs(s, accs, trace):
    """A block tensor whose accesses each touch a fixed run of blocks (an unrolled kernel's constant block indices,
    or a loop that stays within one run): the runs that no access joins, as (Group, its accesses), in block order,
    each live only from its own first write to its last read (the compiler's per-block live ranges). None when
    every access reaches one run."""
    be, nblocks = block_elems(s)
    if s.pdim == 0 or nblocks <= 1:
        return None
    runs = _runs(s, accs, trace, set())
    if len(runs) <= 1:
        return None
    out = []
    for b0, b1, run in runs:
        E = (b1 - b0 + 1) * be

        def strip(v, q=b0 * be):
            o = v.off_f
            return Idx(o.c - q, o.loop, o.axes, o.sizes), v.dims
        out.append((Group(None, E, Idx(b0 * be), [(1, E)], strip), run))
    return out


def _chain(L):
    while L is not None:
        yield L
        L = L.parent


def _common_loops(accs):
    """The loops (innermost first) that hold every access of accs."""
    common = None
    for a in accs:
        chain = list(_chain(a.op.scope))
        common = chain if common is None else [L for L in common if any(L is M for M in chain)]
    return common or []


def _inner(var, L, trace):
    """Whether loop variable var belongs to a loop strictly inside L."""
    if var < 0:
        return False
    M = trace.loops[var].parent
    while M is not None:
        if M is L:
            return True
        M = M.parent
    return False


def _injective(g, loops):
    """Whether sum(g[v] * v) takes a different value at every point of the loops' ranges (a mixed-radix number:
    each coefficient larger than the span of the smaller ones)."""
    acc = 0
    for var, k in sorted(g.items(), key=lambda x: abs(x[1])):
        L = loops[var]
        if L.trips <= 1:
            continue
        step = abs(k) * L.step
        if step <= acc:
            return False
        acc += step * (L.trips - 1)
    return all(g.get(v, 0) or L.trips <= 1 for v, L in loops.items())


def starts(a, L):
    """Whether access a, a tile's first, gives the trip's blocks their value in each trip of L before anything reads
    them: a write, or a matmul whose accumulation group starts on the first trip of a loop inside L."""
    if a.write and not a.read:
        return True
    M = a.op.first_of
    return a.op.type == "Matmult" and M is not None and M is not L and inside(M, L)


def shrink(s, accs, trace, lazy=False):
    """The Group s is allocated by: the innermost loop inside s's scope whose trips touch disjoint runs of s's
    blocks, each run written in its trip before it is read (or zeroed by s's lazy Memset, `lazy`). None: s is
    allocated whole. accs: s's accesses but that Memset."""
    if not accs or s.pdim == 0:
        return None
    for L in _common_loops(accs):
        if L is s.scope or not inside(L, s.scope):
            break
        if not lazy and not starts(accs[0], L):
            continue
        g = find_group(s, accs, L, trace)
        if g is not None:
            return g
    return None
