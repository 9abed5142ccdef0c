"""nki.language: loops (nl.affine_range, nl.sequential_range, nl.fori_loop, nl.static_range), index expressions
(nl.arange, nl.ds, nl.mgrid: symbolic.py's) and launch grids (nl.nc, nl.program_id, nl.num_programs, nl.program_ndim;
docs/nki-lowering.md "Launch grids")."""
import math

from . import dynamic, registry, tracer
from .dynamic import Register
from .errors import KernelError, source_location
from .symbolic import SHARD, Idx, arange, ds, mgrid
from .tracer import current, loop_range

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
    (public NKI docs, nki.language.fori_loop)."""
    if isinstance(lower, Register) or isinstance(upper, Register):
        for i in dynamic.dynamic_range("nl.fori_loop", lower, upper, step):
            body_fun(i)
        return
    for i in loop_range("fori_loop", (lower, upper, step)):
        body_fun(i)


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
    one logical core (LNC = n; trn2, trn3), nl.program_id along it being the core's shard id."""


@_api
def program_id(axis):
    """The launch-grid index of this instance along axis (kernel[g0, g1](...); docs/nki-lowering.md "Launch grids")."""
    tr = current("nl.program_id")
    if axis >= len(tr.program_ids):
        if not tr.grid and axis == 0:
            return 0
        raise KernelError(f"nl.program_id({axis}) in a launch grid of {len(tr.grid)} dims")
    if isinstance(tr.grid[axis], nc):
        return Idx(0, {SHARD: 1})
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
