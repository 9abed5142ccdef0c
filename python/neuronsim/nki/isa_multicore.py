"""nki.isa between the cores of a logical core: nisa.core_barrier and nisa.sendrecv (public NKI docs, nki.isa pages),
on the simulator's multi-core engine (docs/multicore.md "Barriers, sends and deadlocks"). With nl.program_id a plain
int per shard, each core's ranks are numbers when the kernel is traced."""
from . import dtypes, registry
from .errors import KernelError, source_location
from .nl_common import _emit, _tile
from .tracer import View, current

_api = registry.api("nki.isa")


def _cores(what):
    tr = current(what)
    if tr.cores < 2:
        raise KernelError(f"{what}: the kernel runs on one core (a launch without a grid is LNC=1, public NKI docs "
                          "nki.jit), and this instruction needs LNC enabled (its NKI page); launch it on the cores "
                          "of a logical core (kernel[nl.nc(2)] or kernel[2] with @nki.jit)", source_location())
    return tr.cores


@_api
def core_barrier(data, cores, engine=None, name=None):
    """Every core of `cores` waits here until all of them have arrived: the writes each made to `data` (shared HBM)
    before it are done on every core, and what follows reads them. Lowered as an all-engine barrier, a CoreBarrier
    on `engine`'s queue (GpSimd unless given) naming the cores, and an all-engine barrier (the barrier waits for the
    instructions issued before it on every engine of its core, as the reference's semaphore protocol has the DMA
    writes complete before the remote semaphore update)."""
    what = "nisa.core_barrier"
    n = _cores(what)
    if not isinstance(data, View):  # the reference asks for shared HBM; the NKI Library also passes SBUF tiles
        raise KernelError(f"{what}: data is the tensor the cores synchronize on, got {data!r}", source_location())
    try:
        ids = sorted({int(c) for c in cores})
    except TypeError:
        raise KernelError(f"{what}: cores is a tuple of core indices, e.g. (0, 1), got {cores!r}",
                          source_location()) from None
    if len(ids) < 2 or ids[0] < 0 or ids[-1] >= n:
        raise KernelError(f"{what}: cores={tuple(cores)!r}; two or more of the logical core's {n} cores "
                          f"(0..{n - 1})", source_location())
    _emit("AllEngineBarrier", [], [], what, {}, kind="barrier")
    _emit("CoreBarrier", [], [], what, {"cores": ids}, engine=engine or "Pool", kind="barrier")
    _emit("AllEngineBarrier", [], [], what, {}, kind="barrier")


@_api
def sendrecv(src, dst, send_to_rank, recv_from_rank, pipe_id, dma_engine=None, name=None):
    """This core sends src to core send_to_rank's dst and receives core recv_from_rank's src into its own dst (a
    CollectiveCompute SendRecv over the logical core's cores, its recv_from_rank / send_to_rank the numbers given:
    with nl.program_id a plain int per shard they are known when each shard is traced). src and dst: SBUF tiles of
    one shape and dtype. pipe_id and dma_engine choose how the hardware synchronizes the transfer; the simulator
    pairs the sends by their order on each core."""
    what = "nisa.sendrecv"
    n = _cores(what)
    src, dst = _tile(src, what, "src"), _tile(dst, what, "dst")
    if src.storage.buffer != "sbuf" or dst.storage.buffer != "sbuf":
        raise KernelError(f"{what}: src and dst must both be in SBUF", source_location())
    if tuple(src.shape) != tuple(dst.shape) or src.bir_dtype != dst.bir_dtype:
        raise KernelError(f"{what}: src {list(src.shape)} {src.bir_dtype} and dst {list(dst.shape)} {dst.bir_dtype} "
                          "need one shape and dtype", source_location())
    if getattr(dma_engine, "name", dma_engine) == "gpsimd_dma":
        # GpSimd's own DMA moves at most 1024 bytes per partition of a 32-bit type, 512 of a 16-bit one, 256 of an
        # 8-bit one -- 256 elements (public NKI docs, nki.isa.sendrecv "dma_engine").
        per = 1
        for d in src.shape[1:]:
            per *= d
        if per > 256:
            raise KernelError(f"{what}: dma_engine=gpsimd_dma moves at most 256 elements per partition "
                              f"({256 * dtypes.size(src.bir_dtype)} bytes of {src.bir_dtype}); {src.name} has "
                              f"{per}", source_location())
    ranks = {}
    for arg, r in (("send_to_rank", send_to_rank), ("recv_from_rank", recv_from_rank)):
        if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < n:
            raise KernelError(f"{what}: {arg}={r!r}; a core of the logical core, 0..{n - 1} (an int: "
                              "nl.program_id is one per shard)", source_location())
        ranks[arg] = int(r)
    _emit("CollectiveCompute", [src], [dst], what,
          {"kind": "SendRecv", "replica_groups": [list(range(n))], "rank_exprs": ranks}, engine="Pool")
