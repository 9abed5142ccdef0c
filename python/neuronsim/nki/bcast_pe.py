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
A row longer than MAX_BANKS banks (more than the whole PSUM's 8 banks for a long sequence: 7,168 fp32 columns are 14)
goes through PSUM piece by piece: its one reader, an elementwise DVE / ACT instruction, is cut column-wise into
pieces of at most MAX_BANKS banks, each piece's matmuls into PSUM just before the piece of the reader that takes
them (INFERRED from the Architecture Guide's "NKI invokes such matmul under the hood" for broadcast_to, which sets
no size limit, and the PSUM's 16 KiB per partition, reference neuron-arch.md 1.4: a broadcast that takes the
matmul's path and is longer than PSUM can only reach its reader bank by bank; docs/nki-lowering.md 4).
Any other broadcast keeps its DMA (INFERRED: where the compiler keeps a broadcast that lives across loops or feeds
GpSimd, a DMA or a store is not documented; the DMA keeps it in SBUF, as before)."""
from . import dtypes
from .allocate import PSUM_BANK_BYTES  # per partition (reference neuron-arch.md 1.4)
from .symbolic import Idx
from .tracer import Loop, Op, View, new_storage

PE_COLUMNS = 512  # a Matmult's moving free size at most (nl.tile_size.gemm_moving_fmax)
# The most PSUM banks one broadcast may take: half the PSUM's 8 (INFERRED, a bound of neuronsim's, as hoist.py's
# MAX_TILE_BYTES: it leaves the kernel's own accumulators their banks).
MAX_BANKS = 4
_READERS = {"TensorTensor", "TensorScalarPtr", "Activation", "TensorCopy", "TensorReduce"}
_ENGINES = (None, "DVE", "Activation")
# Readers that may be cut column-wise: each output element depends on the same column of its inputs only (no
# accumulation across columns: not a scan, a reduce or an accumulating activation).
_ELEMENTWISE = {"TensorTensor", "TensorCopy", "TensorScalarPtr", "Activation"}
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
        mine = uses.get(op.outs[0].storage.id, ())
        if _eligible(block, op, mine):
            _to_pe(trace, block, op)
        else:
            reader = _splittable(block, op, mine)
            if reader is not None:
                _to_pe_in_pieces(trace, block, op, reader)


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


def _row_ok(op):
    x, s = op.extra["bcast"], op.outs[0].storage
    return not (x.storage.buffer != "sbuf" or x.bir_dtype not in _FLOATS or s.dtype != x.bir_dtype or
                x.dyn is not None or x.pred is not None or not x.dims[0][2] or x.dims[0][1] != 1 or
                op.extra.get("dropped"))


def _eligible(block, op, uses):
    x, t = op.extra["bcast"], op.outs[0]
    s = t.storage
    if not _row_ok(op):
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


def _plain_2d(v, n):
    """v is a [P, n] view with a partition dim first and one free dim of n, nothing known only at run time."""
    return isinstance(v, View) and len(v.dims) == 2 and v.dims[0][2] and not v.dims[1][2] and v.dims[1][1] == n and \
        v.dyn is None and v.pred is None and not v.oob


def _splittable(block, op, uses):
    """The one reader of a broadcast too long for MAX_BANKS banks, if it can be cut column-wise; else None."""
    x, t = op.extra["bcast"], op.outs[0]
    s = t.storage
    if not _row_ok(op) or len(x.dims) != 2 or s.partitions > 128 or s.pdim != 0 or not _plain_2d(t, x.dims[1][1]):
        return None
    n = x.dims[1][1]
    readers = [(b, u, r, w) for b, u, r, w in uses if u is not op]
    if len(readers) != 1:
        return None
    b, user, reads, writes = readers[0]
    f = user.fields
    if b is not block or writes or reads != 1 or user.type not in _ELEMENTWISE or user.engine not in _ENGINES or \
            user.extra.get("dropped") or f.get("is_tensor_tensor_scan") or f.get("acc", "Idle") not in ("Idle", None) or \
            len(user.outs) != 1 or user.type == "Activation" and len(user.ins) > 2:
        return None
    views = [v for v in list(user.ins) + list(user.outs) if isinstance(v, View)]
    if not all(_plain_2d(v, n) for v in views) or \
            any(v.storage.buffer == "psum" and v.storage.id != s.id for v in user.ins if isinstance(v, View)):
        return None
    out = user.outs[0]
    for v in user.ins:  # an input that is also the output: the same elements (an in-place update), or not cut
        if isinstance(v, View) and v.storage.id == out.storage.id and (str(v.off_p), str(v.off_f), v.dims) != \
                (str(out.off_p), str(out.off_f), out.dims):
            return None
    at, end = block.items.index(op), block.items.index(user)
    if end < at:
        return None
    for item in block.items[at + 1:end]:  # the matmuls move down to the reader: nothing between may write the row
        if isinstance(item, Loop) or any(isinstance(v, View) and v.storage.id == x.storage.id for v in item.outs):
            return None
    return user


def _to_pe_in_pieces(trace, block, op, reader):
    """The broadcast as matmuls into PSUM, MAX_BANKS banks at a time, each group followed by its piece of the reader
    (module docstring); the reader's other operands and its output cut at the same columns."""
    x, t = op.extra["bcast"], op.outs[0]
    s = t.storage
    M, n = t.dims[0][1], x.dims[1][1]
    size = dtypes.size(s.dtype)
    cols = MAX_BANKS * PSUM_BANK_BYTES // size // PE_COLUMNS * PE_COLUMNS
    ones = _ones(trace, x.bir_dtype)
    stationary = View(ones, Idx(0), Idx(0), [(1, 1, True), (1, M, False)], x.bir_dtype)
    (xps, _, _), (xfs, _, _) = x.dims
    ops = []
    for c in range(0, n, cols):
        k = min(cols, n - c)
        piece = new_storage((M, k), s.dtype, "psum", name=s.name)
        piece.scope, piece.nki_scope, piece.written = s.scope, s.nki_scope, True
        for j in range(0, k, PE_COLUMNS):
            kk = min(PE_COLUMNS, k - j)
            mv = x.like(x.off_p, x.off_f + (c + j) * xfs, [(xps, 1, True), (xfs, kk, False)])
            dst = View(piece, Idx(0), Idx(j), [(1, M, True), (1, kk, False)], s.dtype)
            m = Op("Matmult", [stationary, mv], [dst], {"start_tensor_calc": True, "is_weight_onezero": True}, None,
                   op.where, op.what)
            m.scope, m.extra["nki"] = op.scope, op.extra.get("nki", ())
            ops.append(m)
            piece.__dict__["producer"] = m
        piece.__dict__["computed_other"] = False
        whole = View(piece, Idx(0), Idx(0), [(1, M, True), (1, k, False)], s.dtype)

        def cut(v):
            if not isinstance(v, View):
                return v
            if v.storage.id == s.id:
                return whole
            (ps, pn, _), (fs, _, _) = v.dims
            return v.like(v.off_p, v.off_f + c * fs, [(ps, pn, True), (fs, k, False)])
        r = Op(reader.type, [cut(v) for v in reader.ins], [cut(v) for v in reader.outs], dict(reader.fields),
               reader.engine, reader.where, reader.what, reader.kind)
        r.scope, r.first_of, r.extra = reader.scope, reader.first_of, dict(reader.extra)
        ops.append(r)
    block.items.remove(op)
    at = block.items.index(reader)
    block.items[at:at + 1] = ops
