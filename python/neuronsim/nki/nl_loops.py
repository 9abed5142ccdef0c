"""nki.language: loops (nl.affine_range, nl.sequential_range, nl.fori_loop, nl.static_range), index expressions
(nl.arange, nl.ds, nl.mgrid: symbolic.py's) and launch grids (nl.nc, nl.spmd_dim, nl.program_id, nl.num_programs,
nl.program_ndim; docs/nki-lowering.md "Launch grids")."""
import math

from . import dynamic, registry, tracer
from .dynamic import Register
from .errors import KernelError, source_location
from .symbolic import arange, ds, mgrid
from .trace_loops import loop_range
from .tracer import current

_api = registry.api("nki.language")
registry.register("nki.language", "arange", arange)
registry.register("nki.language", "ds", ds)
registry.register("nki.language", "mgrid", mgrid)


# ---------------------------------------------------------------------------------------------------- loops
@_api
def affine_range(*args, **kw):
    """A loop whose iterations are independent: traced once, one BIR loop (never unrolled)."""
    return loop_range("affine_range", args)


@_api
def sequential_range(*args, **kw):
    """A loop with a carried dependency: traced once, one BIR loop (the simulator orders it by its dependencies)."""
    return loop_range("sequential_range", args)


@_api
def fori_loop(lower, upper, body_fun, step=1, **kw):
    """body_fun(i) for i in range(lower, upper, step), traced once as one BIR loop: with static bounds a Loop (i an
    index expression, NKI 0.7's compiled loop); with a bound in a register a DynamicForLoop, i the loop's register
    (public NKI docs, nki.language.fori_loop). The body's calls are the kernel's own (nl_common.api_call: their own
    mask=), not fori_loop's."""
    tr = current("nl.fori_loop")
    dynamic_bound = isinstance(lower, Register) or isinstance(upper, Register)
    trips = dynamic.dynamic_range("nl.fori_loop", lower, upper, step) if dynamic_bound else \
        loop_range("fori_loop", (lower, upper, step))
    for i in trips:
        saved, tr.call = tr.call, {}
        try:
            body_fun(i)
        finally:
            tr.call = saved


@_api
def dynamic_range(start, stop=None, step=1):
    """A loop run by the hardware with run-time bounds (a DynamicForLoop, never unrolled): start and stop integers or
    registers, step a positive integer; its variable is a register (public NKI docs, nki.language.dynamic_range)."""
    if stop is None:
        start, stop = 0, start
    return dynamic.dynamic_range("nl.dynamic_range", start, stop, step)


@_api
def while_loop(init, body_fun):
    """r = init; while r != 0: r = body_fun(r) -- a true while, the body traced once (public NKI docs,
    nki.language.while_loop): RegisterMove r <- init, then a DoWhile on r under a guard that skips it when r starts
    at 0; a body returning another register q ends each trip with RegisterMove r <- q."""
    what = "nl.while_loop"
    if not isinstance(init, Register):
        raise KernelError(f"{what}: init is a register (nisa.register_alloc), got {init!r}")
    tr = current(what)
    where = source_location()
    r = Register(tr)
    dynamic.register_op("RegisterMove", [init], [r], what, where=where)
    L = dynamic.DynamicLoop(tr, "while", None, None, 1, where)
    L.cond = L.param = r
    tr.stack[-1].items.append(L)
    tr.stack.append(L.body)
    try:
        q = body_fun(r)
        if not isinstance(q, Register):
            raise KernelError(f"{what}: the body returns the register of the next condition, got {q!r}", where)
        if q is not r:
            dynamic.register_op("RegisterMove", [q], [r], what, where=where)
    finally:
        if tr.stack[-1] is L.body:
            tr.stack.pop()


@_api
def static_range(*args, **kw):
    """Unrolled: a plain Python range (its trips count against max_instructions, Trace.expand)."""
    trips = range(*[int(a) for a in args])
    if tracer._current is not None:
        tracer._current.expand(len(trips), f"nl.static_range of {len(trips):,} trips", None)
    return trips


@_api
class nc(int):
    """nl.nc(n) in a launch grid (kernel[nl.nc(2)](...)): the axis whose instances run on n physical NeuronCores of
    one logical core (LNC = n; trn2, trn3), nl.program_id along it being the core's shard id. nl.nc(2) * 2 and
    2 * nl.nc(2) are nl.spmd_dim(nl.nc(2), 2) and nl.spmd_dim(2, nl.nc(2))."""

    def __mul__(self, other):
        return spmd_dim(self, other)

    def __rmul__(self, other):
        return spmd_dim(other, self)


@_api
class spmd_dim:
    """nl.spmd_dim(nl.nc(2), 2): one launch-grid axis of 2 x 2 instances made of sub-dimensions, outermost first (the
    legacy nki.language.spmd_dim page and its example): an nl.nc(n) sub-dimension's index is the core's shard id, a
    plain one's the instances each core runs one after the other. program_id along the axis is the sub-indices
    combined row-major: spmd_dim(nc(2), 2) gives core 0 programs 0, 1 and core 1 programs 2, 3; spmd_dim(2, nc(2))
    core 0 programs 0, 2 and core 1 programs 1, 3."""

    def __init__(self, *dims):
        if not dims or any(not isinstance(d, int) or isinstance(d, bool) or int(d) <= 0 for d in dims):
            raise KernelError(f"nl.spmd_dim takes positive sub-dimension sizes (ints or nl.nc(n)), got {dims!r}")
        if sum(isinstance(d, nc) for d in dims) > 1:
            raise KernelError("nl.spmd_dim has at most one nl.nc(n) sub-dimension")
        self.dims = tuple(d if isinstance(d, nc) else int(d) for d in dims)

    def __int__(self):
        return math.prod(int(d) for d in self.dims)

    __index__ = __int__

    def __repr__(self):
        return "spmd_dim(" + ", ".join(f"nc({int(d)})" if isinstance(d, nc) else str(d) for d in self.dims) + ")"


def grid_cores(grid):
    """The physical cores a launch grid runs on: its nl.nc(n) (alone or inside an nl.spmd_dim), else 1."""
    for g in grid:
        for d in (g.dims if isinstance(g, spmd_dim) else (g,)):
            if isinstance(d, nc):
                return int(d)
    return 1


def grid_instances(grid, shard):
    """The launch-grid indices the core of shard id `shard` runs, one after the other, in order: every combination of
    the plain (sub-)dimensions, the nl.nc one fixed at the shard id."""
    ids = [()]
    for g in grid:
        dims = g.dims if isinstance(g, spmd_dim) else (g,)
        along = [0]
        for d in dims:
            along = [a * int(d) + k for a in along for k in ([shard] if isinstance(d, nc) else range(int(d)))]
        ids = [i + (a,) for i in ids for a in along]
    return ids


@_api
def program_id(axis=0):
    """The launch-grid index of this instance along axis, a plain int (kernel[g0, g1](...); along an nl.nc(n) axis
    the core's shard id: each shard is traced on its own; docs/nki-lowering.md "Launch grids")."""
    tr = current("nl.program_id")
    axis = int(axis)
    if axis >= len(tr.program_ids):
        if not tr.grid and axis == 0:
            return 0
        raise KernelError(f"nl.program_id({axis}) in a launch grid of {len(tr.grid)} dims")
    return tr.program_ids[axis]


@_api
def num_programs(axes=None):
    tr = current("nl.num_programs")
    grid = tuple(int(g) for g in tr.grid) or (1,)
    if axes is None:
        return math.prod(grid)
    if isinstance(axes, int):
        return grid[axes] if axes < len(grid) else 1
    return math.prod(grid[a] for a in axes)


@_api
def program_ndim():
    return len(current("nl.program_ndim").grid)
