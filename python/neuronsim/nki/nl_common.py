"""What every nki.language / nki.isa / nki.collectives definition uses: dtype names, operand checks in the kernel's
terms (a tile, not a number; one shape), mask= clipping, and recording an instruction on the trace (_emit, _new_tile).
The helpers of the API layer (tests/python/test_nki_layers.py); they define no NKI name."""
import builtins as _b  # sum, max, min, abs, all, any: NKI's names shadow Python's in the modules that define them

from . import dtypes, nl_mask, registry, tracer
from .clips import clipped
from .errors import KernelError, Unsupported, source_location
from .isa_constants import bir_of
from .tracer import Op, View, current, new_storage


def _where():
    return source_location()


def _bir(dt, default="float32"):
    if dt is None:
        return default
    b = dtypes.bir_name(dt)
    if b is None:
        raise KernelError(f"unknown dtype {dt!r} (the nki.language dtypes: float32, bfloat16, float16, tfloat32, "
                          "float8_e4m3, float8_e5m2, int32, int16, int8, uint32, uint16, uint8)")
    return b


def _is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) or type(x).__name__.startswith(("float", "int"))


def _tile(x, what, arg="operand"):
    """x as an on-chip tile: a View in SBUF or PSUM."""
    if isinstance(x, View):
        if x.storage.buffer == "hbm":
            raise KernelError(f"{what}: {arg} is HBM tensor {x.name}; compute instructions read SBUF/PSUM tiles "
                              "(nl.load it first)")
        if not x.dims or not x.dims[0][2]:
            if x.dims and x.storage.onchip:
                raise KernelError(f"{what}: the first dim of {arg} ({x.name}) must be its partition dim")
        return x
    raise KernelError(f"{what}: {arg} must be a tile, got {type(x).__name__} {x!r}")


def _new_tile(shape, bir, buffer="sbuf", name=None, where=None):
    """A new tile of shape; a dim given as a masked operand's clipped extent (nl_mask) keeps its clip in the view the
    instruction writes (the tile is whole, the instruction covers what its mask lets it)."""
    v = new_storage(tuple(shape), bir, buffer, name=name, where=where).view()
    if any(clipped(n) for n in shape):
        v.dims = [(st, m if clipped(m) else n, p) for (st, n, p), m in zip(v.dims, shape)]
    return v


def _emit(type_, ins, outs, what, fields=None, engine=None, kind="compute", where=None):
    """Records one instruction. An nki.isa enum given as the engine or a field value (nisa.engine.vector,
    nisa.reduce_cmd.reset_reduce) is written as its BIR name (isa_constants.bir_of)."""
    tr = current(what)
    where = where or _where()
    if any(isinstance(v, View) and type(v.dyn).__name__ == "Indirection" for v in list(ins) + list(outs)):
        return registry.statement("indirection")(type_, ins, outs, what, fields, engine, kind, where)  # nl_indirect
    engine = bir_of(engine)
    fields = {k: bir_of(v) for k, v in (fields or {}).items()}
    for v in list(ins) + list(outs):
        if isinstance(v, View):
            v.raise_pred(what)
    for v in ins:
        if isinstance(v, View):
            v.storage.__dict__["uses"] = v.storage.__dict__.get("uses", 0) + 1
    for v in outs:
        s = v.storage
        if kind != "zero":
            s.zero_op = None  # something else writes the nl.zeros tile: its memset stays
            s.__dict__["computed"] = True
            if type_ != "Matmult":
                s.__dict__["computed_other"] = True  # written by something else than a matmul (nl_assign)
        s.written = True
        if s.buffer == "hbm" and s.kind == "input":
            # An argument the kernel writes is one of its results (NKI's older output style), in place: it keeps the
            # data it is given (emit_bir: an in-out tensor).
            s.kind = "output"
            s.__dict__["inout"] = True
    if tr.call.get("clips"):  # the call's mask= covers every operand of its instructions
        ins = [nl_mask.clip_operand(v, tr.call) for v in ins]
        outs = [nl_mask.clip_operand(v, tr.call) for v in outs]
    op = Op(type_, list(ins), list(outs), dict(fields or {}), engine, where, what, kind)
    if tr.call.get("drop"):
        op.extra["dropped"] = True  # the call's mask= holds nowhere: nothing runs
    elif not tr.call.get("unresolved"):
        for v in op.ins + op.outs:
            if isinstance(v, View) and v.oob:
                v.raise_oob(where)  # an index out of range that no mask= brings in range
    tr.emit(op)
    for v in outs:
        v.storage.__dict__["producer"] = op
    return op


def _imm(x):
    return ("imm", float(x))


def _mask(views, mask, what):
    """mask=: the views as the call's instructions see them (nl_mask.py; docs/nki-lowering.md "Masks"). An operand
    indexed by a predicate (`img[k < K][n < N]`, NKI's older style) adds it to the call's mask."""
    plain = []
    for v in views:
        if isinstance(v, View) and v.pred is not None:
            mask = v.pred if mask is None or mask is True else mask & v.pred
            v = View(v.storage, v.off_p, v.off_f, v.dims, v.bir_dtype, v.dyn, v.oob)
        plain.append(v)
    return nl_mask.apply(plain, mask, what)


def api_call(fn, args, kw):
    """Every nki.language / nki.isa call (registry.api): the outermost call being traced has one state, tr.call,
    that its mask= sets (nl_mask: "drop" when it holds nowhere, "unresolved" when the kernel is traced again) and
    every instruction it emits reads (_emit); its result is handed back whole (nl_mask.plain_result)."""
    tr = tracer._current
    if tr is None or tr.call:
        return fn(*args, **kw)
    tr.call = {"fn": fn}
    try:
        return nl_mask.plain_result(fn(*args, **kw))
    finally:
        tr.call = {}


registry.define_call_hook(api_call)


def _same_shape(a, b, what, an="x", bn="y"):
    if tuple(a.shape) != tuple(b.shape):
        raise KernelError(f"{what}: shape mismatch: {an} {a.name} is {list(a.shape)}, {bn} {b.name} is "
                          f"{list(b.shape)}")


def _squeeze_free(v):
    """The elements of a tile with its size-1 free dims dropped (for shape checks of [P, 1] scalars)."""
    return [v.shape[0]] + [n for n in v.shape[1:] if n != 1]


def _is_column(v):
    """A [P, 1...] tile: one value per partition (a per-partition scalar operand)."""
    return _b.all(n == 1 for n in v.shape[1:])


def _fresh(v):
    """The producer of v when v is the whole of a temporary nothing has read yet and the last instruction recorded."""
    s = v.storage
    p = s.__dict__.get("producer")
    tr = current()
    if p is None or s.__dict__.get("uses", 0) or not s.__dict__.get("temp") or not v.is_whole():
        return None
    items = tr.stack[-1].items
    if not items or items[-1] is not p:
        return None
    return p
