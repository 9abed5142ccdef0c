"""nki.collectives on the neuronsim tracer: collective communication between the cores a kernel runs on (an
nl.nc(n) launch grid), as BIR CollectiveCompute instructions on GpSimd, the form workloads/multicore/tp_mlp has
(reference neuronx-cc/bir/sim-bn-rng-collective-dma.md: collectives as an N-rank registry folding with doReduction).
Public NKI docs, nki.collectives pages, give the signatures."""
from . import language as nl
from . import registry
from .errors import KernelError, source_location
from .nl_common import _emit, _tile

__neuronsim__ = True
_api = registry.api("nki.collectives")

_OPS = {nl.add: "add", nl.maximum: "max", nl.minimum: "min"}


@_api
class ReplicaGroup:
    """The ranks that take part together: ReplicaGroup([[0, 1]]) (one group of ranks 0 and 1)."""

    def __init__(self, replica_groups=None, *args, **kw):
        groups = replica_groups if replica_groups is not None else kw.get("groups", args[0] if args else None)
        if not groups or not all(isinstance(g, (list, tuple)) for g in groups):
            raise KernelError("ReplicaGroup takes a list of rank lists, e.g. ReplicaGroup([[0, 1]])", source_location())
        self.groups = [[int(r) for r in g] for g in groups]


def _collective(kind, srcs, dsts, replica_group, op, what):
    srcs = srcs if isinstance(srcs, (list, tuple)) else [srcs]
    dsts = dsts if isinstance(dsts, (list, tuple)) else [dsts]
    if len(srcs) != 1 or len(dsts) != 1:
        raise KernelError(f"{what}: one source and one destination tile (coalesced lists are not lowered)")
    src, dst = _tile(srcs[0], what, "srcs[0]"), _tile(dsts[0], what, "dsts[0]")
    if src.storage.buffer != "sbuf" or dst.storage.buffer != "sbuf":
        raise KernelError(f"{what}: the tiles must be in SBUF (HBM collectives are not lowered)")
    if not isinstance(replica_group, ReplicaGroup):
        raise KernelError(f"{what}: replica_group must be an nki.collectives.ReplicaGroup")
    fields = {"kind": kind, "replica_groups": replica_group.groups}
    if op is not None:
        if op not in _OPS:
            raise KernelError(f"{what}: op is nl.add, nl.maximum or nl.minimum")
        fields["op"] = _OPS[op]
    _emit("CollectiveCompute", [src], [dst], what, fields, engine="Pool")


@_api
def all_reduce(srcs, dsts, replica_group, op, **kw):
    """dsts[0] = op over the group's ranks of srcs[0] (CollectiveCompute AllReduce on GpSimd)."""
    _collective("AllReduce", srcs, dsts, replica_group, op, "nki.collectives.all_reduce")


registry.value("nki.collectives", "NKIObject", nl.NKIObject)  # a re-export in the reference's stub


def __getattr__(name):
    """A documented nki.collectives name not defined here: its registered value (a refusal raises Unsupported when
    called); any other name: Unsupported naming it."""
    return registry.module_getattr("nki.collectives", name)
