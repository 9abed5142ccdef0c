"""The instructions the allocator adds to a kernel (allocate.py): spills and reloads of a tile to and from its home
in HBM, and the per-trip Memset of a block tensor's lazily zeroed blocks. They sit in a block's item list like the
trace's own instructions; emit_bir calls emit(ctx, env) for each.

Spill and reload DMAs go on the queue the compiler gives them, qSyncSpillReload0 (NKI docs "NKI Performance
Guide": an instruction "blocked on S[47] (qSyncSpillReload0) ... is blocked by DMA activities for spilling"); the
simulator counts the bytes of the transfers on that queue as spill saves (into DRAM) and reloads (into SBUF), as
neuron-profile's spill_save_bytes / spill_reload_bytes (sim/run_summary). A PSUM value is spilled through SBUF:
TensorCopy into an SBUF tile, then the DMA (DMAs move HBM and SBUF; the compiler's PSUM spill is a TensorCopy out of
PSUM, reference neuronx-cc walrus/psum-allocator.md "insert_spill_code").
"""
from .. import _core

_B = _core.builder
SPILL_QUEUE = "qSyncSpillReload0"


class Pseudo:
    """An instruction the allocator adds. kind "spill": never a load that may run ahead (emit_bir.loop). when:
    (loop, first) -- emitted only in the first trip of that loop (first True) or only in the others (False)."""
    kind = "spill"
    ins = outs = ()
    first_of = None
    where = None
    extra = {}
    when = None


def _slot_ap(u, env, E=None):
    """Unit u's current buffer (the trip's slot of its rotation loop), all its rows, E elements (default: a buffer)."""
    h = u.handle
    k = env[u.rot.var][1] % u.buffers if u.rot is not None and u.buffers > 1 else 0
    cols = h.cols if E is None else E
    return h.t.at(_B.Aff(k * h.cols), [(h.cols * h.buffers, u.rows), (1, cols)])


def _home_ap(ctx, home, row, start, rows, dims, env):
    """rows x dims of the HBM home (row elements per row) from element `start` (an Idx of loop variables)."""
    return home.at(ctx.aff(start, env), [(row, rows)] + list(dims))


def _dma(ctx, type_, src, dst, where):
    r = ctx.b.add(type_, [_B.Builder.ap(src)], [_B.Builder.ap(dst)])
    r.engine("SP")
    r.set("queue", SPILL_QUEUE)
    if where:
        r.source(where[0], where[1])
    return r


def _copy(ctx, src, dst, where):
    r = ctx.b.add("TensorCopy", [_B.Builder.ap(src)], [_B.Builder.ap(dst)])
    if where:
        r.source(where[0], where[1])


class _HomeTransfer(Pseudo):
    """A DMA between a unit and its home in HBM: `dims` the home's (step, count) pairs, E their element count."""

    def __init__(self, unit, home, row, start, dims, via=None, where=None):
        self.unit, self.home, self.row, self.start, self.dims, self.via = unit, home, row, start, dims, via
        self.E = 1
        for _, n in dims:
            self.E *= n
        self.where = where


class Save(_HomeTransfer):
    """unit -> its home in HBM (the trip's group of a block tensor, or a whole tile). PSUM through `via`, an SBUF
    unit."""

    def emit(self, ctx, env):
        src = _slot_ap(self.unit, env, self.E)
        if self.via is not None:
            tmp = _slot_ap(self.via, env, self.E)
            _copy(ctx, src, tmp, self.where)
            src = tmp
        _dma(ctx, "Save", src, _home_ap(ctx, self.home.handle, self.row, self.start, self.unit.rows, self.dims, env),
             self.where)


class Reload(_HomeTransfer):
    """its home in HBM -> unit (PSUM through `via`)."""

    def emit(self, ctx, env):
        dst = _slot_ap(self.unit, env, self.E)
        src = _home_ap(ctx, self.home.handle, self.row, self.start, self.unit.rows, self.dims, env)
        if self.via is not None:
            tmp = _slot_ap(self.via, env, self.E)
            _dma(ctx, "Load", src, tmp, self.where)
            _copy(ctx, tmp, dst, self.where)
        else:
            _dma(ctx, "Load", src, dst, self.where)


class LazyMemset(Pseudo):
    """The Memset of a block tensor's nl.zeros, per trip on the trip's blocks (allocate.py: lazy initialisation)."""

    def __init__(self, unit, op):
        self.unit, self.op, self.where = unit, op, op.where

    def emit(self, ctx, env):
        r = ctx.b.add("Memset", [], [_B.Builder.ap(_slot_ap(self.unit, env, self.unit.elems))])
        for k, v in self.op.fields.items():
            r.set(k, v)
        if self.op.engine:
            r.engine(self.op.engine)
        if self.where:
            r.source(self.where[0], self.where[1])


class Home:
    """An Internal DRAM tensor holding spilled values (the compiler's `<tensor>_SpillSave` home)."""

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, shape, dtype
        self.handle = None

    def emit(self, b):
        self.handle = b.dram(self.name, list(self.shape), self.dtype)
