"""Partition broadcasts on the PE array, as NKI lowers them (docs/nki-lowering.md 4). `x.broadcast_to((M, F))` of a
[1, F] tile is a matmul of a 1 x M row of ones (the stationary, is_stationary_onezero) with x (the moving) into PSUM:
public NKI docs, Trainium/Inferentia2 Architecture Guide, TensorE "Alternative Use Case" (NKI invokes that matmul
under the hood for broadcast_to), and the fused Mamba tutorial, step 3 ("p-dim broadcast + 2x nisa.tensor_tensor").
Its readers then take one operand from PSUM, which the DVE streams at N cycles instead of 2N (reference neuron-arch.md
4.2, ISA226 tensor_tensor).

nl.broadcast_to records such a broadcast as a DMACopy whose source partition step is 0 (nl_dma.broadcast_to); this
pass over the finished trace (api._trace_once, after hoist.py) turns it into the PE form where the result can live
in PSUM without copies the kernel did not ask for:
- x is a float tile in SBUF (the PE array reads SBUF), its free size a multiple of whole matmuls: at most 512 columns
  per Matmult (one PSUM bank of fp32, nl.tile_size.gemm_moving_fmax), at most MAX_BANKS banks in all;
- every reader of the result is a DVE or ACT compute instruction in the same block as the broadcast, which reads no
  other PSUM operand (a tensor_tensor reads at most one: NKI nki.isa.tensor_tensor), and nothing else writes it.
Any other broadcast keeps its DMA (INFERRED: where the compiler keeps a broadcast that lives across loops or feeds
GpSimd, a DMA or a store is not documented; the DMA keeps it in SBUF, as before)."""
from . import dtypes
from .symbolic import Idx
from .tracer import Loop, Op, View, new_storage

PE_COLUMNS = 512  # a Matmult's moving free size at most (nl.tile_size.gemm_moving_fmax)
PSUM_BANK_BYTES = 2048  # per partition (reference neuron-arch.md 1.4)
# The most PSUM banks one broadcast may take: half the PSUM's 8 (INFERRED, a bound of neuronsim's, as hoist.py's
# MAX_TILE_BYTES: it leaves the kernel's own accumulators their banks).
MAX_BANKS = 4
_READERS = {"TensorTensor", "TensorScalarPtr", "Activation", "TensorCopy", "TensorReduce"}
_ENGINES = (None, "DVE", "Activation")
_FLOATS = ("float32", "bfloat16", "float16")


def place_broadcasts(trace):
    """Every broadcast nl.broadcast_to marked (op.extra["bcast"]: its [1, F] source) that may, on PE."""
    marked = []
    _collect(trace.root, marked)
    if not marked:
        return
    uses = {}
    _uses(trace.root, uses, {op.outs[0].storage.id for _, op in marked})
    for block, op in marked:
        if _eligible(block, op, uses.get(op.outs[0].storage.id, ())):
            _to_pe(trace, block, op)


def _collect(block, out):
    for item in block.items:
        if isinstance(item, Loop):
            _collect(item.body, out)
        elif "bcast" in item.extra:
            out.append((block, item))


def _uses(block, uses, ids):
    """uses[storage id] = [(block, op, reads, writes)] for every op that touches one of ids."""
    for item in block.items:
        if isinstance(item, Loop):
            _uses(item.body, uses, ids)
            continue
        for sid in ids:
            r = sum(1 for v in item.ins if isinstance(v, View) and v.storage.id == sid)
            w = any(isinstance(v, View) and v.storage.id == sid for v in item.outs)
            if r or w:
                uses.setdefault(sid, []).append((block, item, r, w))


def _eligible(block, op, uses):
    x, t = op.extra["bcast"], op.outs[0]
    s = t.storage
    if x.storage.buffer != "sbuf" or x.bir_dtype not in _FLOATS or s.dtype != x.bir_dtype or x.dyn is not None or \
            x.pred is not None or not x.dims[0][2] or x.dims[0][1] != 1 or op.extra.get("dropped"):
        return False
    n = 1
    for _, num, _ in x.dims[1:]:
        n *= num
    if n > PE_COLUMNS and len(x.dims) != 2:
        return False
    banks = -(-n * dtypes.size(s.dtype) // PSUM_BANK_BYTES)
    if banks > MAX_BANKS or s.partitions > 128 or s.pdim != 0:
        return False
    for b, user, reads, writes in uses:
        if user is op:
            continue
        if writes or b is not block or user.type not in _READERS or user.engine not in _ENGINES or reads > 1 or \
                user.extra.get("dropped"):
            return False
        others = [v for v in user.ins if isinstance(v, View) and v.storage.id != s.id and v.storage.buffer == "psum"]
        if others:
            return False
    return True


def _ones(trace, dtype):
    """A [1, 128] row of ones in SBUF, set once at the top of the kernel (one Memset per dtype)."""
    cache = trace.__dict__.setdefault("bcast_ones", {})
    if dtype not in cache:
        s = new_storage((1, 128), dtype, "sbuf", name="broadcast_ones")
        s.scope, s.nki_scope, s.written = None, (), True
        s.__dict__["temp"] = False
        v = View(s, Idx(0), Idx(0), [(1, 1, True), (1, 128, False)], dtype)
        m = Op("Memset", [], [v], {"mode": "Const", "constant": 1.0}, None, None, "nl.broadcast_to", "zero")
        m.extra["nki"] = ()
        trace.root.items.insert(0, m)
        s.__dict__["producer"] = m
        cache[dtype] = s
    return cache[dtype]


def _to_pe(trace, block, op):
    x, t = op.extra["bcast"], op.outs[0]
    s = t.storage
    M = t.dims[0][1]
    ones = _ones(trace, x.bir_dtype)
    stationary = View(ones, Idx(0), Idx(0), [(1, 1, True), (1, M, False)], x.bir_dtype)
    n = 1
    for _, num, _ in x.dims[1:]:
        n *= num
    pieces = []
    if n <= PE_COLUMNS:
        pieces.append((x, t))
    else:  # [1, F] in 512-column matmuls, each into its bank of the [M, F] tile
        (xps, _, _), (xfs, _, _) = x.dims
        (tps, _, _), (tfs, _, _) = t.dims
        for c in range(0, n, PE_COLUMNS):
            k = min(PE_COLUMNS, n - c)
            pieces.append((x.like(x.off_p, x.off_f + c * xfs, [(xps, 1, True), (xfs, k, False)]),
                           t.like(t.off_p, t.off_f + c * tfs, [(tps, M, True), (tfs, k, False)])))
    ops = []
    for mv, out in pieces:
        m = Op("Matmult", [stationary, mv], [out], {"start_tensor_calc": True, "is_weight_onezero": True}, None,
               op.where, op.what)
        m.scope, m.extra["nki"] = op.scope, op.extra.get("nki", ())
        ops.append(m)
    at = block.items.index(op)
    block.items[at:at + 1] = ops
    s.buffer = "psum"
    s.__dict__["producer"] = ops[-1]
    s.__dict__["computed_other"] = False
