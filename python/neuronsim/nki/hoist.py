"""Loop-invariant PE transposes, emitted once before the loop (docs/nki-lowering.md 3): nl.matmul(x, y)
without transpose_x transposes x on PE and copies it to SBUF for every call; when x is the same tile on every trip of
a loop and nothing in the loop writes it, the compiler computes the transpose once before the loop, as it hoists any
loop-invariant computation. A pass over the finished trace, before the lowering (api._trace_once):

- (a) the transpose's x does not change with the loop it sits in: the transpose and its copy move before that loop;
- (b) x changes with that loop (the k of x[:, k * 128:(k + 1) * 128]) but not with the loop around it (the n of the
  public RMSNorm + matmul kernels, whose inner k loop runs once per n): the transposes move before the outer loop,
  into a loop of their own over the same trips, each into its slice of one SBUF tile that the matmul then reads.

Both repeat outwards while they apply. A transpose is never moved out of a loop that writes x, declares it, reads it
at a run-time offset or masks it, nor out of a dynamic, split or single-trip loop."""
from . import dtypes, emit_dynamic
from .allocate import SBUF_BYTES
from .clips import clipped
from .symbolic import Idx
from .tracer import Block, Loop, NkiLoop, View, new_storage

# The most SBUF per partition the tile of (b) may take: a quarter of what the allocator manages (INFERRED, a bound of
# neuronsim's, not the compiler's: it keeps the hoisted tile small beside the kernel's own tiles).
MAX_TILE_BYTES = SBUF_BYTES // 4


def hoist_transposes(trace):
    """Moves every group nl.matmul marked (op.extra["hoist"]: its transpose of x and the copy of the result to SBUF)
    out of the loops around it while it may."""
    moved = True
    while moved:
        moved = False
        for block, group in _groups(trace.root):
            if _hoist_one(trace, block, group):
                moved = True
                break


def _groups(block):
    """(block, group) for every marked group, in blocks of loops (the top level has nothing to hoist out of)."""
    for item in block.items:
        if isinstance(item, Loop):
            for op in item.body.items:
                if not isinstance(op, Loop) and "hoist" in op.extra:
                    yield item.body, op.extra["hoist"]
            yield from _groups(item.body)


def _container(root, L):
    """The block that holds loop L."""
    stack = [root]
    while stack:
        b = stack.pop()
        for item in b.items:
            if item is L:
                return b
            if isinstance(item, Loop):
                stack.append(item.body)
    return None


def _writes(item, sid, skip):
    if isinstance(item, Loop):
        return any(_writes(i, sid, skip) for i in item.body.items)
    if item in skip:
        return False
    return any(isinstance(v, View) and v.storage.id == sid for v in item.outs)


def _ancestor(scope, L):
    """Whether the loop `scope` (None: the top level) is strictly outside L."""
    p = L.parent
    while p is not None:
        if p is scope:
            return True
        p = p.parent
    return scope is None


def _plain(L):
    return not emit_dynamic.is_dynamic(L) and not L.split and L.trips is not None and L.trips >= 2


def _hoist_one(trace, block, group):
    T, C = group
    L0 = block.loop
    if L0 is None or T not in block.items or C not in block.items or T.extra.get("dropped") or \
            C.extra.get("dropped") or not _plain(L0):
        return False
    x = T.ins[0]
    if not isinstance(x, View) or x.dyn is not None or x.oob or any(clipped(n) for _, n, _ in x.dims) or \
            any(clipped(n) for v in C.outs + T.outs for _, n, _ in v.dims):
        return False
    uses = set(x.off_p.loop) | set(x.off_f.loop)
    if L0.var not in uses:  # (a): invariant in its own loop
        H = L0
    else:  # (b): invariant in the loop around it, which holds L0 directly
        H = L0.parent
        if H is None or not _plain(H) or H.var in uses or L0 not in H.body.items:
            return False
    if not _ancestor(x.storage.scope, H) or _writes(H, x.storage.id, (T, C)):
        return False
    outer = _container(trace.root, H)
    if outer is None:
        return False
    if H is L0:
        _move_before(outer, H, [T, C], H.parent, drop=(L0.nki,))
        return True
    return _distribute(trace, outer, H, L0, T, C)


def _rescope(ops, loop, drop, add=()):
    """ops now sit in `loop`'s body (None: the top level), outside the kernel loops in `drop`."""
    for op in ops:
        op.scope = loop
        op.extra["nki"] = tuple(e for e in op.extra.get("nki", ()) if e[0] not in drop) + tuple(add)
        for v in op.outs:
            v.storage.scope = loop
            v.storage.nki_scope = tuple(info.id for info, _ in op.extra["nki"])


def _move_before(outer, H, ops, loop, drop):
    block = ops[0].scope.body
    for op in ops:
        block.items.remove(op)
    at = outer.items.index(H)
    outer.items[at:at] = ops
    _rescope(ops, loop, drop)


def _distribute(trace, outer, H, L0, T, C):
    """(b): the transposes of L0's trips, in a loop of L0's trips before H, into one SBUF tile the matmul reads."""
    y = C.outs[0]
    K, M = y.storage.shape
    if y.storage.pdim != 0 or not y.is_whole() or M % L0.step or \
            L0.trips * M * dtypes.size(y.storage.dtype) > MAX_TILE_BYTES:
        return False
    # The new loop: trips 0 .. L0.trips - 1, its variable t standing for L0's value start + step * t.
    L = Loop.__new__(Loop)
    L.trace = trace
    L.var = len(trace.loops)
    L.kind, L.start, L.stop, L.step, L.where = L0.kind, 0, L0.trips, 1, L0.where
    L.trips, L.key, L.trip0, L.split = L0.trips, None, 0, False
    L.body = Block(L)
    L.parent = H.parent
    trace.loops.append(L)
    L.nki = NkiLoop(trace, L0.kind, L0.where, L, 0, 1)

    def subst(e):
        c = e.loop.get(L0.var, 0)
        loop = {k: v for k, v in e.loop.items() if k != L0.var}
        if c:
            loop[L.var] = c * L0.step
        return Idx(e.c + c * L0.start, loop, e.axes, e.sizes)

    x = T.ins[0]
    T.ins[0] = x.like(subst(x.off_p), subst(x.off_f), x.dims)
    # The tile of all trips' transposes: trip t's in columns [t * M, (t + 1) * M).
    big = new_storage((K, L0.trips * M), y.storage.dtype, "sbuf", name=y.storage.name + "_hoisted",
                      where=C.where)
    big.__dict__["temp"] = True
    big.written = True
    big.__dict__["computed"] = big.__dict__["computed_other"] = True
    C.outs[0] = View(big, Idx(0), Idx(0, {L.var: M}), [(1, K, True), (1, M, False)], y.bir_dtype)
    # Every reader of y (the matmul) reads its trip's slice: column (value - start) / step * M.
    read = View(big, Idx(0), Idx(-L0.start * (M // L0.step), {L0.var: M // L0.step}),
                [(1, K, True), (1, M, False)], y.bir_dtype)
    _replace_reads(H, y.storage.id, read)
    block = L0.body
    block.items.remove(T)
    block.items.remove(C)
    L.body.items[:] = [T, C]
    outer.items.insert(outer.items.index(H), L)
    drop = (H.nki, L0.nki)
    _rescope([T, C], L, drop, add=((L.nki, None),))
    big.scope = H.parent
    big.nki_scope = tuple(info.id for info, _ in C.extra["nki"][:-1])
    C.outs[0].storage.__dict__["producer"] = C
    return True


def _replace_reads(item, sid, view):
    if isinstance(item, Loop):
        for i in item.body.items:
            _replace_reads(i, sid, view)
        return
    item.ins = [view if isinstance(v, View) and v.storage.id == sid else v for v in item.ins]
