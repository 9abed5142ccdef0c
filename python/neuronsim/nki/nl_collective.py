"""The legacy nl.all_reduce(x, op, program_axes) (legacy nki.language page: a reduce over the SPMD programs along
the given launch-grid axes, every program receiving the result). How the front end runs a launch grid decides what
it can be (docs/nki-lowering.md "Launch grids"): the programs of a plain axis (kernel[4]) run one after the other on
one core, each traced in turn, so a program cannot receive a reduction of programs that have not run yet; the
programs of an nl.nc(n) axis run at once, one per physical core of the logical core. Over such an axis the call is
nki.collectives.all_reduce among those cores (a CollectiveCompute AllReduce whose replica group is the logical core's
cores), each core's k-th call meeting the others' k-th, which hold the same indices along the other axes. An axis
of one program reduces nothing: the result is x."""
import numpy as np

from . import registry
from .errors import KernelError, Unsupported
from .nl_common import _bir, _emit, _new_tile, _tile
from .nl_loops import nc, spmd_dim
from .tracer import current

_api = registry.api("nki.language")
_OPS = {np.add: "add", np.maximum: "maximum", np.minimum: "minimum"}


def _nl_op(op, what):
    """The nl operator of op (np.add / nl.add, np.maximum / nl.maximum, np.minimum / nl.minimum)."""
    for f, name in _OPS.items():
        g = registry.function("nki.language", name)
        if op is f or op is g:
            return g
    raise KernelError(f"{what}: op is np.add, np.maximum or np.minimum (the reductions an AllReduce performs), got "
                      f"{op!r}")


@_api
def all_reduce(x, op, program_axes, *, dtype=None, mask=None, parallel_reduce=True, asynchronous=False, **kw):
    what = "nl.all_reduce"
    x = _tile(x, what, "x")
    if mask is not None:
        raise Unsupported(f"{what}: mask= is not lowered for all_reduce")
    nl_op = _nl_op(op, what)
    grid = tuple(current(what).grid)
    axes = (program_axes,) if isinstance(program_axes, int) else tuple(program_axes)
    cores = None
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < len(grid):
            raise KernelError(f"{what}: program_axes {program_axes!r}: axis {a!r} is not an axis of the launch grid "
                              f"{list(grid)}")
        g = grid[a]
        if isinstance(g, nc):
            cores = int(g)
        elif int(g) > 1:
            kind = "an nl.spmd_dim axis, part of whose" if isinstance(g, spmd_dim) else "a plain axis, whose"
            raise Unsupported(f"{what}: launch-grid axis {a} ({g!r}) is {kind} programs run one after the other on "
                              "one core (each traced in turn), so a program cannot receive the reduction of programs "
                              "that have not run; over an nl.nc(n) axis, whose programs run at once on the n cores of "
                              "one logical core, all_reduce is lowered")
    out = _new_tile(x.shape, _bir(dtype, x.bir_dtype))
    out.storage.__dict__["temp"] = True
    if cores is None:  # axes of one program each: nothing to reduce
        _emit("TensorCopy", [x], [out], what)
        return out
    c = registry.function("nki.collectives", "ReplicaGroup")
    red = out if out.bir_dtype == "float32" else _new_tile(x.shape, "float32")
    registry.function("nki.collectives", "all_reduce")(srcs=[x], dsts=[red], replica_group=c([list(range(cores))]),
                                                       op=nl_op)
    if red is not out:
        _emit("TensorCopy", [red], [out], what)
    return out
