"""What every nki.language / nki.isa / nki.collectives definition uses: dtype names, operand checks in the kernel's
terms (a tile, not a number; one shape), mask= clipping, and recording an instruction on the trace (_emit, _new_tile).
The helpers of the API layer (tests/python/test_nki_layers.py); they define no NKI name."""
import builtins as _b  # sum, max, min, abs, all, any: NKI's names shadow Python's in the modules that define them

from . import dtypes
from .errors import KernelError, Unsupported, source_location
from .isa_constants import bir_of
from .symbolic import NeedsUnroll
from .tracer import Op, View, bounds, current, new_storage


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
    return new_storage(tuple(shape), bir, buffer, name=name, where=where).view()


def _emit(type_, ins, outs, what, fields=None, engine=None, kind="compute", where=None):
    """Records one instruction. An nki.isa enum given as the engine or a field value (nisa.engine.vector,
    nisa.reduce_cmd.reset_reduce) is written as its BIR name (isa_constants.bir_of)."""
    tr = current(what)
    where = where or _where()
    engine = bir_of(engine)
    fields = {k: bir_of(v) for k, v in (fields or {}).items()}
    for v in ins:
        if isinstance(v, View):
            v.storage.__dict__["uses"] = v.storage.__dict__.get("uses", 0) + 1
    for v in outs:
        s = v.storage
        if kind != "zero":
            s.zero_op = None  # something else writes the nl.zeros tile: its memset stays
            s.__dict__["computed"] = True
        s.written = True
        if s.buffer == "hbm" and s.kind == "input":
            s.kind = "output"  # an argument the kernel writes is one of its results (NKI's older output style)
    op = Op(type_, list(ins), list(outs), dict(fields or {}), engine, where, what, kind)
    tr.emit(op)
    for v in outs:
        v.storage.__dict__["producer"] = op
    return op


def _imm(x):
    return ("imm", float(x))


def _mask(views, mask, what):
    """mask=: a comparison of nl.arange expressions that does not involve a loop variable clips the operands' dims
    statically (docs/nki-lowering.md "Masks"); any other mask is refused."""
    if mask is None or mask is True:  # mask=True: every element (a constant mask, as NKI takes it)
        return views
    if mask is False:
        raise Unsupported(f"{what}: mask=False (a constant mask that holds for no element: the instruction would "
                          "write nothing; leave the call out instead)")
    if not hasattr(mask, "terms"):
        raise KernelError(f"{what}: mask= takes a comparison of index expressions, got {mask!r}")
    clip = {}
    for e, op in mask.terms:
        lo_e, hi_e = bounds(e)  # over the loops' ranges and the axes' extents
        if _holds(lo_e, op) and _holds(hi_e, op) and op not in ("==", "!="):
            continue  # true for every element of every trip (a remainder mask the shapes never need): no clipping
        if e.loop and len(e.axes) == 1:
            raise NeedsUnroll(f"{what}: a mask= that holds for some trips of a loop and not others")
        if e.loop or len(e.axes) != 1:
            raise Unsupported(f"{what}: a mask= on two index axes at once (only masks of one nl.arange axis against "
                              "constants are lowered; use nisa.affine_select)")
        (pos, c), = e.axes.items()
        n = e.sizes.get(pos, 1)
        lo, hi = clip.get(pos, (0, n))
        # c*k + e.c op 0  for k in [0, n): the k that satisfy it form one interval
        ok = [k for k in range(n) if _holds(c * k + e.c, op)]
        if not ok or ok != list(range(ok[0], ok[-1] + 1)):
            raise Unsupported(f"{what}: a mask= whose true set is empty or not one interval")
        clip[pos] = (_b.max(lo, ok[0]), _b.min(hi, ok[-1] + 1))
    out = []
    for v in views:
        if not isinstance(v, View):
            out.append(v)
            continue
        dims, off_p, off_f = list(v.dims), v.off_p, v.off_f
        for pos, (lo, hi) in clip.items():
            d = len(dims) + pos
            if d < 0 or hi <= lo:
                continue
            step, num, part = dims[d]
            if num == 1:
                continue
            if part:
                off_p = off_p + lo * step
            else:
                off_f = off_f + lo * step
            dims[d] = (step, hi - lo, part)
        out.append(v.like(off_p, off_f, dims))
    return out


def _holds(x, op):
    return {"<": x < 0, "<=": x <= 0, ">": x > 0, ">=": x >= 0, "==": x == 0, "!=": x != 0}[op]


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
