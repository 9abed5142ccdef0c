"""nki.collectives on the neuronsim tracer: collective communication between the cores a kernel runs on, as BIR
CollectiveCompute instructions on GpSimd, the form workloads/multicore/tp_mlp has (reference neuronx-cc/bir/
sim-bn-rng-collective-dma.md 4: collectives as an N-rank registry folding with doReduction). Public NKI docs,
nki.collectives pages, give the signatures and the rules (docs/multicore.md "Collectives" how they execute).

A replica group's entries are the run's cores (ranks when LNC is 1: `nki.simulate(kernel, ..., ranks=4)`, `neuronsim
nki --cores 4`; the shards of one logical core with nl.nc(2)). Every rank runs the same program; each rank's data is
its own copy of the kernel's tensors (per-rank inputs: docs/multicore.md "DRAM and data per rank").
"""
import math

import numpy as np

from . import language as nl
from . import registry
from .dynamic import Register, register_op
from .errors import KernelError, source_location
from .nl_common import _emit
from .nl_create import shared_constant as _shared_constant
from .nl_dma import _dma
from .symbolic import Idx
from .tracer import View, new_storage
from .tracer import current as current_trace

__neuronsim__ = True
_api = registry.api("nki.collectives")

_OPS = {nl.add: "add", nl.maximum: "max", nl.minimum: "min"}


@_api
class ReplicaGroup:
    """The ranks that take part together: ReplicaGroup([[0, 1]]) (one group of ranks 0 and 1); sub-groups do not
    overlap."""

    def __init__(self, replica_groups=None, *args, **kw):
        groups = replica_groups if replica_groups is not None else kw.get("groups", args[0] if args else None)
        if not groups or not all(isinstance(g, (list, tuple)) and g for g in groups):
            raise KernelError("ReplicaGroup takes a list of rank lists, e.g. ReplicaGroup([[0, 1]])", source_location())
        self.groups = [[int(r) for r in g] for g in groups]
        seen = [r for g in self.groups for r in g]
        if len(set(seen)) != len(seen):
            raise KernelError(f"ReplicaGroup {self.groups}: a rank is in more than one sub-group", source_location())
        if len({len(g) for g in self.groups}) != 1:
            raise KernelError(f"ReplicaGroup {self.groups}: the sub-groups have different sizes", source_location())

    @property
    def size(self):
        return len(self.groups[0])

    def __repr__(self):
        return f"ReplicaGroup({self.groups})"


def _one(xs, what, arg):
    xs = xs if isinstance(xs, (list, tuple)) else [xs]
    if len(xs) != 1:
        raise KernelError(f"{what}: {arg} holds {len(xs)} tensors; one per call (coalesced lists are not lowered: "
                          "call it once per tensor)", source_location())
    x = xs[0]
    if not isinstance(x, View):
        raise KernelError(f"{what}: {arg}[0] must be a tensor, got {type(x).__name__}", source_location())
    if x.storage.buffer == "psum":
        raise KernelError(f"{what}: {arg}[0] ({x.name}) is in PSUM; collectives move SBUF or HBM tensors",
                          source_location())
    return x


def _operands(srcs, dsts, what, hbm_only=False):
    src, dst = _one(srcs, what, "srcs"), _one(dsts, what, "dsts")
    if (src.storage.buffer == "hbm") != (dst.storage.buffer == "hbm"):
        raise KernelError(f"{what}: srcs[0] ({src.buffer}) and dsts[0] ({dst.buffer}) mix memory spaces: all on HBM "
                          "or all on SBUF (nki.collectives)", source_location())
    if hbm_only and src.storage.buffer != "hbm":
        raise KernelError(f"{what}: the tensors must be on HBM (SBUF is not supported for it, nki.collectives)",
                          source_location())
    if src.bir_dtype != dst.bir_dtype:
        raise KernelError(f"{what}: srcs[0] is {src.bir_dtype}, dsts[0] {dst.bir_dtype}: one dtype", source_location())
    return src, dst


def _group(replica_group, what):
    if not isinstance(replica_group, ReplicaGroup):
        raise KernelError(f"{what}: replica_group must be an nki.collectives.ReplicaGroup, got {replica_group!r}",
                          source_location())
    return replica_group


def _op(op, what):
    if op not in _OPS:
        raise KernelError(f"{what}: op is nl.add, nl.maximum or nl.minimum, got {op!r}", source_location())
    return _OPS[op]


def _dim(collective_dim, allowed, what):
    if collective_dim not in allowed:
        raise KernelError(f"{what}: collective_dim={collective_dim!r}; " +
                          " or ".join(str(d) for d in allowed) + " is supported (nki.collectives)", source_location())
    return collective_dim


def _scaled(big, small, n, what, verb):
    """big's shape is small's with dim 0 times n (the rank-order concatenation along dim 0)."""
    want = (small.shape[0] * n,) + tuple(small.shape[1:])
    if tuple(big.shape) != want:
        raise KernelError(f"{what}: {verb} over {n} ranks along dim 0 needs {list(want)}, got {list(big.shape)}",
                          source_location())


def _cc(kind, src, dst, group, what, op=None):
    fields = {"kind": kind, "replica_groups": group.groups}
    if op is not None:
        fields["op"] = op
    _emit("CollectiveCompute", [src], [dst], what, fields, engine="Pool")


@_api
def all_reduce(srcs, dsts, replica_group, op, priority=None, name=None):
    """dsts[0] = op over the group's ranks of srcs[0], in rank order in fp32 (CollectiveCompute AllReduce)."""
    what = "nki.collectives.all_reduce"
    src, dst = _operands(srcs, dsts, what)
    if tuple(src.shape) != tuple(dst.shape):
        raise KernelError(f"{what}: srcs[0] {list(src.shape)} and dsts[0] {list(dst.shape)} differ", source_location())
    _cc("AllReduce", src, dst, _group(replica_group, what), what, _op(op, what))


@_api
def all_gather(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    """dsts[0] = the group's srcs[0] concatenated in rank order along collective_dim (0; CollectiveCompute AllGather,
    a flat concatenation, which dim 0 is)."""
    what = "nki.collectives.all_gather"
    src, dst = _operands(srcs, dsts, what)
    g = _group(replica_group, what)
    if collective_dim == 1 and src.storage.buffer != "hbm":
        return _gather_columns(src, dst, g, what)
    _dim(collective_dim, (0,), what)
    _scaled(dst, src, g.size, what, "gathering")
    _cc("AllGather", src, dst, g, what)


def _gather_columns(src, dst, g, what):
    """An SBUF all_gather along dim 1 (the reference allows 0 or 1 on SBUF): dst [H, n W] holds rank r's [H, W] in
    columns [r W, (r + 1) W). The simulator's AllGather concatenates flat in rank order, so it gathers into an HBM
    scratch [n H, W] of this core's own, and one DMA moves it into dst column block by column block."""
    if len(src.shape) != 2 or len(dst.shape) != 2 or tuple(dst.shape) != (src.shape[0], src.shape[1] * g.size):
        raise KernelError(f"{what}: gathering [H, W] tiles over {g.size} ranks along dim 1 needs dsts[0] [H, "
                          f"{g.size} W] = {[src.shape[0], src.shape[1] * g.size]}, got {list(dst.shape)}",
                          source_location())
    n, (h, w) = g.size, src.shape
    scratch = new_storage((n * h, w), src.bir_dtype, "private_hbm", name="all_gather_scratch",
                          where=source_location())
    _cc("AllGather", src, scratch.view(), g, what)
    (pstep, _, _), (fstep, _, _) = dst.dims
    by_rank = View(scratch, Idx(0), Idx(0), [(w, h, False), (h * w, n, False), (1, w, False)], src.bir_dtype)
    into = View(dst.storage, dst.off_p, dst.off_f, [(pstep, h, True), (fstep * w, n, False), (fstep, w, False)],
                dst.bir_dtype)
    _dma(by_rank, into, what)


@_api
def reduce_scatter(srcs, dsts, replica_group, collective_dim, op, priority=None, name=None):
    """dsts[0] on rank r = chunk r (along dim 0) of op over the group's srcs[0] (CollectiveCompute ReduceScatter)."""
    what = "nki.collectives.reduce_scatter"
    src, dst = _operands(srcs, dsts, what)
    g = _group(replica_group, what)
    _dim(collective_dim, (0,), what)
    _scaled(src, dst, g.size, what, "scattering")
    _cc("ReduceScatter", src, dst, g, what, _op(op, what))


@_api
def all_to_all(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    """Rank r's dsts[0] chunk p (along dim 0) = rank p's srcs[0] chunk r (CollectiveCompute AllToAll; HBM tensors,
    as the reference says)."""
    what = "nki.collectives.all_to_all"
    src, dst = _operands(srcs, dsts, what, hbm_only=True)
    g = _group(replica_group, what)
    _dim(collective_dim, (0,), what)
    if tuple(src.shape) != tuple(dst.shape) or src.shape[0] % g.size:
        raise KernelError(f"{what}: srcs[0] {list(src.shape)} and dsts[0] {list(dst.shape)} must have one shape whose "
                          f"dim 0 the {g.size} ranks divide", source_location())
    _cc("AllToAll", src, dst, g, what)


@_api
def collective_permute(srcs, dsts, source_target_pairs, priority=None, name=None):
    """dsts[0] of each target = srcs[0] of its source (CollectiveCompute Permute with src_target_pairs; HBM tensors,
    as the reference says)."""
    what = "nki.collectives.collective_permute"
    src, dst = _operands(srcs, dsts, what, hbm_only=True)
    if tuple(src.shape) != tuple(dst.shape):
        raise KernelError(f"{what}: srcs[0] {list(src.shape)} and dsts[0] {list(dst.shape)} differ", source_location())
    try:
        pairs = [[int(s), int(t)] for s, t in source_target_pairs]
    except (TypeError, ValueError):
        raise KernelError(f"{what}: source_target_pairs is a list of (source, target) rank pairs, got "
                          f"{source_target_pairs!r}", source_location()) from None
    ranks = sorted({r for p in pairs for r in p})
    _emit("CollectiveCompute", [src], [dst], what,
          {"kind": "Permute", "replica_groups": [ranks], "src_target_pairs": pairs}, engine="Pool")


def _channels(xs, what, arg, channel_ids):
    if list(channel_ids) != [0]:
        raise KernelError(f"{what}: channel_ids={list(channel_ids)}; one channel ([0]) is lowered", source_location())
    if not isinstance(xs, (list, tuple)) or len(xs) != 1:
        raise KernelError(f"{what}: {arg} is a list of one tensor list per channel, e.g. [[t]]", source_location())
    return xs[0]


@_api
def collective_permute_implicit(srcs_by_channel, dsts_by_channel, replica_group, channel_ids=(0,), priority=None,
                                name=None):
    """Each rank's dsts <- its ring predecessor's srcs, the ring being the replica group's rank list in list order
    (CollectiveCompute PermuteImplicit; one channel)."""
    what = "nki.collectives.collective_permute_implicit"
    src, dst = _operands(_channels(srcs_by_channel, what, "srcs_by_channel", channel_ids),
                         _channels(dsts_by_channel, what, "dsts_by_channel", channel_ids), what)
    _cc("PermuteImplicit", src, dst, _group(replica_group, what), what)


@_api
def collective_permute_implicit_reduce(srcs0_by_channel, srcs1_by_channel, dsts_by_channel, replica_group, op,
                                       channel_ids=(0,), priority=None, name=None):
    """Each rank folds op(srcs0, srcs1), sends it to its ring successor and receives its predecessor's into dsts
    (CollectiveCompute PermuteReduceImplicit; one channel)."""
    what = "nki.collectives.collective_permute_implicit_reduce"
    a, dst = _operands(_channels(srcs0_by_channel, what, "srcs0_by_channel", channel_ids),
                       _channels(dsts_by_channel, what, "dsts_by_channel", channel_ids), what)
    b, _ = _operands(_channels(srcs1_by_channel, what, "srcs1_by_channel", channel_ids), [dst], what)
    g = _group(replica_group, what)
    _emit("CollectiveCompute", [a, b], [dst], what,
          {"kind": "PermuteReduceImplicit", "replica_groups": g.groups, "op": _op(op, what)}, engine="Pool")


@_api
def rank_id(name=None):
    """The rank of the core running the kernel, in a register (GetGlobalRankId: rank = core / LNC, docs/multicore.md
    "Cores, shards and ranks"); use it as .ap(scalar_offset=) or a dynamic loop bound as any register."""
    what = "nki.collectives.rank_id"
    r = Register(current_trace(what))
    register_op("GetGlobalRankId", [], [r], what)
    return r


@_api
def collective_permute_implicit_current_processing_rank_id(iteration_id, replica_group, channel_id=0, name=None):
    """In a register, the rank whose data ring step iteration_id processes on this core: at step k the rank k places
    before this one in the replica group's ring, this core's own at step 0 (GetCurProcessingRankID; docs/multicore.md
    "Collectives"). iteration_id is a number when the kernel is traced (a Python or static_range loop)."""
    what = "nki.collectives.collective_permute_implicit_current_processing_rank_id"
    if isinstance(iteration_id, bool) or not isinstance(iteration_id, int):
        raise KernelError(f"{what}: iteration_id={iteration_id!r}; a number when the kernel is traced (loop with "
                          "range / nl.static_range; a loop variable of nl.affine_range is not lowered here)",
                          source_location())
    if channel_id != 0:
        raise KernelError(f"{what}: channel_id={channel_id!r}; one channel (0) is lowered", source_location())
    g = _group(replica_group, what)
    r = Register(current_trace(what))
    register_op("GetCurProcessingRankID", [], [r], what,
                {"iter_id": int(iteration_id), "channel_id": 0, "replica_groups": g.groups})
    return r


def _meta_rows(meta, n, what):
    """The rows of a metadata tensor ((rows, n) in HBM, (1, rows, n) in SBUF; uint32), each as an [n] view."""
    if not isinstance(meta, View):
        raise KernelError(f"{what}: metadata_tensor is a uint32 tensor, got {meta!r}", source_location())
    shape = tuple(meta.shape)
    rows = shape[-2] if len(shape) >= 2 else 0
    want = (rows, n) if meta.storage.buffer == "hbm" else (1, rows, n)
    if shape != want or rows not in (3, 4) or meta.bir_dtype not in ("uint32", "int32"):
        raise KernelError(f"{what}: metadata_tensor {meta.name} {list(shape)} {meta.bir_dtype}: a uint32 tensor of 3 "
                          f"or 4 rows of {n} ranks, [rows, {n}] in HBM, [1, rows, {n}] in SBUF (nki.collectives)",
                          source_location())
    return [meta[i] if meta.storage.buffer == "hbm" else meta[0, i] for i in range(rows)]


def _variable(src, dst, g, meta, recv_counts_known, has_rdispls, what, broadcast):
    """all_to_all_v / all_gather_v on the simulator's AllToAllV (docs/multicore.md "Collectives": ins[1] a uint32
    metadata of 4 rows: send counts, send displacements, recv counts, recv displacements, each checked against the
    senders'). The NKI metadata becomes that one in a private HBM scratch: rows 0-1 copied (all_gather_v's single
    chunk, its first column, broadcast to every rank's column), row 2 the counts each sender sends this rank (a
    one-element-per-rank AllToAll of row 0), row 3 the caller's displacements (has_rdispls) or rank r's equal slot
    r * dst elements / n (the NKI page's default). Row 2 is copied back into the caller's metadata unless
    recv_counts_known (NKI writes the received counts there)."""
    n = g.size
    rows = _meta_rows(meta, n, what)
    if has_rdispls and len(rows) < 4:
        raise KernelError(f"{what}: has_rdispls=True reads row 3 (recv displacements); metadata_tensor has 3 rows",
                          source_location())
    scratch = new_storage((4, n), "uint32", "private_hbm", name="collective_v_meta", where=source_location())
    row = [View(scratch, Idx(0), Idx(i * n), [(1, n, False)], "uint32") for i in range(4)]
    for i in (0, 1):
        first = View(rows[i].storage, rows[i].off_p, rows[i].off_f, [(0, n, False)], rows[i].bir_dtype)
        _dma(first if broadcast else rows[i], row[i], what)
    _cc("AllToAll", row[0], row[2], g, what)
    if has_rdispls:
        _dma(rows[3], row[3], what)
    else:
        slot = math.prod(dst.shape) // n
        _dma(_shared_constant(np.arange(n, dtype=np.uint32) * slot), row[3], what)
    _emit("CollectiveCompute", [src, scratch.view()], [dst], what,
          {"kind": "AllToAllV", "replica_groups": g.groups}, engine="Pool")
    if not recv_counts_known:
        _dma(row[2], rows[2], what)


def _flat(srcs, dsts, what):
    src, dst = _one(srcs, what, "srcs"), _one(dsts, what, "dsts")
    if src.storage.buffer != "hbm" or dst.storage.buffer != "hbm":
        raise KernelError(f"{what}: srcs[0] and dsts[0] must be on HBM (nki.collectives)", source_location())
    if src.bir_dtype != dst.bir_dtype:
        raise KernelError(f"{what}: srcs[0] is {src.bir_dtype}, dsts[0] {dst.bir_dtype}: one dtype", source_location())
    return src, dst


@_api
def all_to_all_v(srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False, has_rdispls=False,
                 priority=None, name=None):
    """Flat buffers: rank r's dsts[0] receives, from each rank j of the group, the send_counts[r] elements of rank j's
    srcs[0] from send_displs[r] (counts and displacements read from the metadata when it runs), at recv_displs[j] or
    slot j of n equal slots (public NKI docs, nki.collectives.all_to_all_v)."""
    what = "nki.collectives.all_to_all_v"
    src, dst = _flat(srcs, dsts, what)
    _variable(src, dst, _group(replica_group, what), metadata_tensor, recv_counts_known, has_rdispls, what, False)


@_api
def all_gather_v(srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False, has_rdispls=False,
                 priority=None, name=None):
    """Flat buffers: every rank's one chunk (send_count elements of srcs[0] from send_displ: the first column of
    metadata rows 0 and 1) lands in every rank's dsts[0] at slot j of n equal slots, j the sender's place in the
    group (public NKI docs, nki.collectives.all_gather_v)."""
    what = "nki.collectives.all_gather_v"
    src, dst = _flat(srcs, dsts, what)
    _variable(src, dst, _group(replica_group, what), metadata_tensor, recv_counts_known, has_rdispls, what, True)


registry.value("nki.collectives", "NKIObject", nl.NKIObject)  # a re-export in the reference's stub


def __getattr__(name):
    """A documented nki.collectives name not defined here: its registered value (a refusal raises Unsupported when
    called); any other name: Unsupported naming it."""
    return registry.module_getattr("nki.collectives", name)
