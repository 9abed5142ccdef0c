"""nki.language (nl) on the neuronsim tracer: each function records the BIR instruction(s) NKI lowers it to.

Every function is a small definition of its own (a second engineer may add functions beside these): it checks its
operands in the kernel's terms (KernelError naming the kernel's file:line and the tensor) and emits through
_emit / _new_tile. The engine an instruction runs on is the simulator's rule for its BIR type (engine_policy.cpp,
from the NKI ISA pages) unless the NKI call names one. Public NKI docs, nki.language pages, are the source of each
signature; docs/nki-lowering.md lists what each lowers to.
"""
import builtins as _b  # sum, max, min, abs, all, any: NKI's names below shadow Python's
import math

from . import dtypes, registry
from .dtypes import (bfloat16, bool_, float8_e4m3, float8_e4m3fn, float8_e5m2, float16, float32, int8, int16, int32,
                     tfloat32, uint8, uint16, uint32)
from .errors import KernelError, Unsupported, source_location
from .symbolic import Idx, NeedsUnroll, ParDim, SHARD, arange, ds, mgrid
from .tracer import Op, View, bounds, current, loop_range, new_storage

_api = registry.api("nki.language")
# The index expressions (symbolic.py) are nki.language names too.
registry.register("nki.language", "arange", arange)
registry.register("nki.language", "ds", ds)
registry.register("nki.language", "mgrid", mgrid)

# ---------------------------------------------------------------------------------------------------- constants
sbuf, psum, hbm, shared_hbm, private_hbm = "sbuf", "psum", "hbm", "shared_hbm", "private_hbm"


class tile_size:
    """nl.tile_size (public NKI docs): the hardware tile maxima."""
    pmax = 128
    psum_fmax = 2048
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    psum_num_banks = 8
    total_available_sbuf_size = 180224  # trn1's usable bytes per partition (the lowering's budget)


@_api
def par_dim(n):
    """nl.par_dim(n): marks the partition dim of a shape (NKI's (blocks, par_dim(P), free) tiles); without it the
    first dim of an SBUF/PSUM tile is its partition dim."""
    return ParDim(int(n))


# ---------------------------------------------------------------------------------------------------- helpers
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
    tr = current(what)
    where = where or _where()
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
    if mask is None:
        return views
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
        out.append(View(v.storage, off_p, off_f, dims, v.bir_dtype))
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


# ---------------------------------------------------------------------------------------------------- creation
def _create(shape, dtype, buffer, what, name=None):
    if buffer is None:
        buffer = sbuf
    b = buffer if isinstance(buffer, str) else getattr(buffer, "name", str(buffer))
    if not isinstance(buffer, str) and hasattr(buffer, "kw"):
        import warnings
        warnings.warn(f"neuronsim.nki: {what}: an explicit allocation ({b}) is placed by neuronsim's own allocation "
                      "(docs/nki-lowering.md 2), not at its address", stacklevel=3)
    return _new_tile(tuple(shape), _bir(dtype), b, name=name)


@_api
def ndarray(shape, dtype, *, buffer=None, name="", **kw):
    """nl.ndarray: a tensor of the given shape in buffer (default SBUF); its values are not set."""
    return _create(shape, dtype, buffer, "nl.ndarray", name or None)


@_api
def empty_like(a, dtype=None, *, buffer=None, name="", **kw):
    return _create(a.shape, dtype if dtype is not None else a.dtype, buffer or a.buffer, "nl.empty_like",
                   name or None)


def _filled(shape, dtype, buffer, value, what, name=None):
    t = _create(shape, dtype, buffer, what, name)
    t.storage.__dict__["temp"] = False
    if t.storage.buffer == "hbm":
        raise Unsupported(f"{what} in HBM: create the tile in SBUF and nl.store it")
    op = _emit("Memset", [], [t], what, {"mode": "Const", "constant": float(value)}, kind="zero")
    if t.storage.buffer == "psum" and value == 0:
        t.storage.zero_op = op  # nl.zeros in PSUM: a matmul accumulation group may take its place (lower.py)
    return t


@_api
def zeros(shape, dtype, *, buffer=None, name="", **kw):
    return _filled(shape, dtype, buffer, 0.0, "nl.zeros", name or None)


@_api
def ones(shape, dtype, *, buffer=None, name="", **kw):
    return _filled(shape, dtype, buffer, 1.0, "nl.ones", name or None)


@_api
def full(shape, fill_value, dtype, *, buffer=None, name="", **kw):
    return _filled(shape, dtype, buffer, fill_value, "nl.full", name or None)


@_api
def zeros_like(a, dtype=None, *, buffer=None, name="", **kw):
    return _filled(a.shape, dtype if dtype is not None else a.dtype, buffer or a.buffer, 0.0, "nl.zeros_like",
                   name or None)


@_api
def ones_like(a, dtype=None, *, buffer=None, name="", **kw):
    return _filled(a.shape, dtype if dtype is not None else a.dtype, buffer or a.buffer, 1.0, "nl.ones_like",
                   name or None)


@_api
def full_like(a, fill_value, dtype=None, *, buffer=None, name="", **kw):
    return _filled(a.shape, dtype if dtype is not None else a.dtype, buffer or a.buffer, fill_value, "nl.full_like",
                   name or None)


@_api
def shared_constant(constant, dtype=None, **kw):
    """An HBM tensor holding constant data the kernel carries (nl.shared_constant): an input of the BIR whose data
    neuronsim.nki.simulate / benchmark and `neuronsim nki` supply with the run (docs/nki-lowering.md 2)."""
    import numpy as np
    data = np.asarray(constant)
    bir = _bir(dtype, dtypes.bir_name(data.dtype) or "float32")
    v = new_storage(data.shape, bir, "hbm", kind="const").view()
    v.storage.__dict__["data"] = data
    return v


@_api
def shared_identity_matrix(n, dtype=float32, **kw):
    """An [n, n] identity in SBUF (nl.shared_identity_matrix): loaded from a shared constant."""
    import numpy as np
    return load(shared_constant(np.identity(int(n), dtype=np.float32), dtype=dtype))


@_api
def reshape(x, shape):
    """Reshape of an HBM tensor (a new row-major view of the same elements); tiles keep their shape."""
    if not isinstance(x, View) or x.storage.buffer != "hbm" or not x.is_whole():
        raise Unsupported("reshape of anything but a whole HBM tensor")
    shape = tuple(int(s) for s in shape)
    if math.prod(shape) != math.prod(x.shape):
        raise KernelError(f"reshape of {x.name} {list(x.shape)} to {list(shape)}: the element counts differ")
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    strides.reverse()
    return View(x.storage, Idx(0), Idx(0), [(st, s, False) for st, s in zip(strides, shape)], x.bir_dtype)


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
    """NKI 0.7's compiled loop: body_fun(i) for i in range(lower, upper, step), traced once as one BIR loop (static
    bounds; a bound held in a register is refused)."""
    for i in loop_range("fori_loop", (lower, upper, step)):
        body_fun(i)


@_api
def static_range(*args, **kw):
    """Unrolled: a plain Python range."""
    return range(*[int(a) for a in args])


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


# ---------------------------------------------------------------------------------------------------- data movement
def _dma(src, dst, what, where=None):
    kind = "load" if src.storage.buffer == "hbm" else "store" if dst.storage.buffer == "hbm" else "dma"
    if src.shape != dst.shape and math.prod(src.shape) != math.prod(dst.shape):
        raise KernelError(f"{what}: shape mismatch: source {src.name} {list(src.shape)}, destination {dst.name} "
                          f"{list(dst.shape)}")
    return _emit("Load" if kind == "load" else "Save" if kind == "store" else "DMACopy", [src], [dst], what,
                 kind=kind, where=where)


@_api
def load(src, *, mask=None, dtype=None, **kw):
    """nl.load: HBM -> a new SBUF tile (one Load, a DMA; a dtype= other than the tensor's adds a tensor_copy)."""
    if not isinstance(src, View) or src.storage.buffer != "hbm":
        raise KernelError(f"nl.load reads an HBM tensor, got {getattr(src, 'name', src)!r}")
    (src,) = _mask([src], mask, "nl.load")
    t = _new_tile(src.shape, src.bir_dtype)
    t.storage.__dict__["temp"] = True
    _dma(src, t, "nl.load")
    if dtype is not None and _bir(dtype) != src.bir_dtype:
        return tensor_copy_to(t, _bir(dtype), "nl.load")
    return t


@_api
def store(dst, value, *, mask=None, **kw):
    """nl.store: a tile -> HBM (one Save, a DMA; a tile of another dtype is converted first)."""
    if not isinstance(dst, View) or dst.storage.buffer != "hbm":
        raise KernelError(f"nl.store writes an HBM tensor, got {getattr(dst, 'name', dst)!r}")
    if _is_num(value):
        value = full(dst.shape, value, dst.dtype)
    value = _tile(value, "nl.store", "value")
    dst, value = _mask([dst, value], mask, "nl.store")
    if tuple(dst.shape) != tuple(value.shape) and _squeeze_free(dst) != _squeeze_free(value):
        raise KernelError(f"nl.store: shape mismatch: destination {dst.name} {list(dst.shape)}, value {value.name} "
                          f"{list(value.shape)}")
    if value.storage.buffer == "psum":
        value = tensor_copy_to(value, dst.bir_dtype, "nl.store")  # DMAs move SBUF; PSUM goes through a copy
    elif value.bir_dtype != dst.bir_dtype:
        value = tensor_copy_to(value, dst.bir_dtype, "nl.store")
    _dma(value, dst, "nl.store")


@_api
def load_transpose2d(src, *, mask=None, dtype=None, **kw):
    """nl.load_transpose2d: a 2-D HBM region [A, B] -> an SBUF tile [B, A] (one Load whose source pattern walks the
    region column by column)."""
    if not isinstance(src, View) or src.storage.buffer != "hbm" or len(src.dims) != 2:
        raise KernelError("nl.load_transpose2d reads a 2-D region of an HBM tensor")
    (src,) = _mask([src], mask, "nl.load_transpose2d")
    tsrc = View(src.storage, src.off_p, src.off_f, [src.dims[1], src.dims[0]], src.bir_dtype)
    t = _new_tile(tsrc.shape, src.bir_dtype)
    t.storage.__dict__["temp"] = True
    _dma(tsrc, t, "nl.load_transpose2d")
    if dtype is not None and _bir(dtype) != src.bir_dtype:
        return tensor_copy_to(t, _bir(dtype), "nl.load_transpose2d")
    return t


def tensor_copy_to(x, bir, what, engine=None, buffer="sbuf"):
    t = _new_tile(x.shape, bir, buffer)
    t.storage.__dict__["temp"] = True
    _emit("TensorCopy", [x], [t], what, engine=engine)
    return t


@_api
def copy(x, dtype=None, *, mask=None, **kw):
    """nl.copy: a new tile with x's values (TensorCopy; dtype= converts)."""
    x = _tile(x, "nl.copy", "x")
    (x,) = _mask([x], mask, "nl.copy")
    return tensor_copy_to(x, _bir(dtype, x.bir_dtype), "nl.copy")


@_api
def broadcast_to(x, shape, **kw):
    """nl.broadcast_to: [1, F] -> [P, F] across partitions (a DMA whose source partition step is 0), or [P, 1] ->
    [P, F] along the free dim (a TensorCopy whose source free step is 0)."""
    x = _tile(x, "nl.broadcast_to", "x")
    shape = tuple(int(s) for s in shape)
    if len(shape) != len(x.shape):
        raise KernelError(f"nl.broadcast_to: {x.name} {list(x.shape)} to {list(shape)}: the dims differ")
    dims = []
    for (step, num, part), n in zip(x.dims, shape):
        if num == n:
            dims.append((step, num, part))
        elif num == 1:
            dims.append((0, n, part))
        else:
            raise KernelError(f"nl.broadcast_to: {x.name} {list(x.shape)} does not broadcast to {list(shape)}")
    src = View(x.storage, x.off_p, x.off_f, dims, x.bir_dtype)
    t = _new_tile(shape, x.bir_dtype)
    t.storage.__dict__["temp"] = True
    if shape[0] != x.shape[0]:
        _emit("DMACopy", [src], [t], "nl.broadcast_to", kind="dma")
    else:
        _emit("TensorCopy", [src], [t], "nl.broadcast_to")
    return t


def _assign(dst, value):
    """dst[...] = value: the instruction that made value writes dst instead, or a copy (a Memset for a number, a
    Save for an HBM destination)."""
    what = "tile assignment"
    if _is_num(value):
        if dst.storage.buffer == "hbm":
            raise Unsupported("assigning a number to an HBM tensor: nl.store a tile")
        op = _emit("Memset", [], [dst], what, {"mode": "Const", "constant": float(value)}, kind="zero")
        if dst.storage.buffer == "psum" and float(value) == 0.0 and dst.is_whole():
            dst.storage.zero_op = op  # as nl.zeros: a matmul accumulation group may take its place
        return
    if not isinstance(value, View):
        raise KernelError(f"{what}: {dst.name}[...] = {type(value).__name__}: the value must be a tile or a number")
    if dst.storage.buffer == "hbm":
        store(dst, value)
        return
    if value.storage.buffer == "hbm":
        raise KernelError(f"{what}: {dst.name}[...] = HBM tensor {value.name}: use nl.load")
    if tuple(dst.shape) != tuple(value.shape):
        if _squeeze_free(dst) != _squeeze_free(value):
            raise KernelError(f"{what}: shape mismatch: {dst.name}{list(dst.shape)} = {value.name}"
                              f"{list(value.shape)}")
    p = _fresh(value)
    if p is not None and p.kind == "load" and dst.storage.buffer == "psum":
        raise KernelError(f"{what}: nl.load into PSUM tile {dst.name}: DMAs write SBUF")
    # A matmul writes PSUM only: its result assigned to an SBUF tile is copied out below.
    if p is not None and len(p.outs) == 1 and p.kind != "zero" and \
            (p.type != "Matmult" or dst.storage.buffer == "psum"):
        # The instruction writes the destination directly (its output dtype becomes the destination's).
        p.outs[0] = dst
        value.storage.__dict__["dead"] = True
        dst.storage.written = True
        dst.storage.zero_op = None
        dst.storage.__dict__["computed"] = True
        return
    _emit("TensorCopy", [value], [dst], what)


registry.define_statement("assign", _assign)


def _matmul_into(dst, value, p, accumulate, what):
    """The matmul p (whose fresh result is value) writes dst, a PSUM tile, instead: `dst += matmul` and the dst=
    form of nc_matmul. Accumulation groups (reference neuron-arch.md 3.3 nc_matmul: accumulate False starts a group,
    True adds, None lets the compiler choose, the first write overwriting): into a tile nothing but a zeroing wrote
    since it was declared, the first matmul starts the group -- here (start_tensor_calc true, the zeroing Memset
    dropped) or, from a loop directly inside the tile's scope, on the loop's first trip (pipelined_loop_first); a
    region that depends on the innermost loop's variable is its trip's own group; anything else accumulates."""
    if dst.storage.buffer != "psum":
        raise KernelError(f"{what}: a matmul result accumulates in PSUM, but {dst.name} is in "
                          f"{dst.storage.buffer.upper()} (declare it with buffer=nl.psum)")
    if tuple(dst.shape) != tuple(value.shape):
        raise KernelError(f"{what}: shape mismatch: {dst.name} {list(dst.shape)} and the matmul result "
                          f"{list(value.shape)}")
    p.outs[0] = dst
    value.storage.__dict__["dead"] = True
    st = dst.storage
    z = st.zero_op
    fresh = z is not None or not st.__dict__.get("computed")
    home = z.scope if z is not None else st.scope
    start = False
    if accumulate is False:
        start = True
    elif fresh and dst.is_whole():
        if p.scope is home:
            start = True
            if z is not None:
                z.extra["dropped"] = True
        elif p.scope is not None and p.scope.parent is home and current().stack[-1].loop is p.scope:
            p.first_of = p.scope
            if z is not None:
                z.extra["dropped"] = True
    elif fresh and p.scope is not None and p.scope.var in dst.off_f.loop:
        start = True  # each trip writes a region of its own
    p.fields["start_tensor_calc"] = start
    st.zero_op = None
    st.__dict__["computed"] = True
    return dst


def _accumulate(dst, value):
    """dst += value: a fresh matmul result accumulates in its PSUM tile (_matmul_into); anything else is dst = dst +
    value."""
    if isinstance(value, View):
        p = _fresh(value)
        if p is not None and p.type == "Matmult" and not p.fields.get("is_transpose"):
            return _matmul_into(dst, value, p, True, "+= accumulation")
    _assign(dst, add(dst, value))
    return dst


registry.define_statement("accumulate", _accumulate)


# ---------------------------------------------------------------------------------------------------- element-wise
def _binary(alu, x, y, dtype, mask, what):
    """x op y: TensorTensor for two tiles of one shape; TensorScalarPtr when one side is a number or a [P, 1]
    per-partition column (reverse0 when the scalar is the left operand), as the NKI ISA pages assign them (reference
    neuron-arch.md 3.3: tensor_tensor, tensor_scalar on VectorE)."""
    if _is_num(x) and _is_num(y):
        raise KernelError(f"{what}: both operands are numbers; one must be a tile")
    if _is_num(x) or _is_num(y):
        t, s, rev = (y, x, True) if _is_num(x) else (x, y, False)
        t = _tile(t, what, "x" if not rev else "y")
        (t,) = _mask([t], mask, what)
        out = _new_tile(t.shape, _bir(dtype, t.bir_dtype if dtypes.is_float(t.bir_dtype) or
                                      float(s).is_integer() else "float32"))
        out.storage.__dict__["temp"] = True
        f = {"op0": alu}
        if rev:
            f["reverse0"] = True
        _emit("TensorScalarPtr", [t, _imm(s)], [out], what, f)
        return out
    x, y = _tile(x, what, "x"), _tile(y, what, "y")
    x, y = _mask([x, y], mask, what)
    bir = _bir(dtype, dtypes.promote(x.bir_dtype, y.bir_dtype))
    if tuple(x.shape) == tuple(y.shape):
        if x.storage.buffer == "psum" and y.storage.buffer == "psum":
            raise KernelError(f"{what}: both operands ({x.name}, {y.name}) are in PSUM; tensor_tensor reads at most "
                              "one PSUM operand (NKI nki.isa.tensor_tensor)")
        out = _new_tile(x.shape, bir)
        out.storage.__dict__["temp"] = True
        _emit("TensorTensor", [x, y], [out], what, {"op": alu})
        return out
    if x.shape[0] == y.shape[0] and (_is_column(y) or _is_column(x)):
        t, col, rev = (x, y, False) if _is_column(y) else (y, x, True)
        out = _new_tile(t.shape, bir)
        out.storage.__dict__["temp"] = True
        f = {"op0": alu}
        if rev:
            f["reverse0"] = True
        _emit("TensorScalarPtr", [t, col], [out], what, f)
        return out
    # Free-dim broadcasting (numpy rules over the free dims; the partition dims must agree).
    shape = _broadcast_shape(x, y, what)
    xb, yb = _broadcast_view(x, shape, what), _broadcast_view(y, shape, what)
    out = _new_tile(shape, bir)
    out.storage.__dict__["temp"] = True
    _emit("TensorTensor", [xb, yb], [out], what, {"op": alu})
    return out


def _broadcast_shape(x, y, what):
    a, b = list(x.shape), list(y.shape)
    n = _b.max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    out = []
    for i, (p, q) in enumerate(zip(a, b)):
        if p != q and 1 not in (p, q):
            raise KernelError(f"{what}: shape mismatch: {x.name} {list(x.shape)} and {y.name} {list(y.shape)} do not "
                              "broadcast")
        out.append(_b.max(p, q))
    if a[0] != b[0]:
        raise KernelError(f"{what}: {x.name} {list(x.shape)} and {y.name} {list(y.shape)} differ in the partition "
                          "dim; broadcast across partitions with nl.broadcast_to")
    return out


def _broadcast_view(v, shape, what):
    dims = list(v.dims)
    while len(dims) < len(shape):
        dims.insert(1, (0, 1, False))
    out = []
    for (step, num, part), n in zip(dims, shape):
        out.append((step, num, part) if num == n else (0, n, part))
    return View(v.storage, v.off_p, v.off_f, out, v.bir_dtype)


# One definition per NKI function (public NKI docs, nki.language element-wise pages); the ALU op names are BIR's
# (isa/tables/alu_ops.def).
@_api
def add(x, y, *, dtype=None, mask=None, **kw):
    return _binary("add", x, y, dtype, mask, "nl.add")


@_api
def subtract(x, y, *, dtype=None, mask=None, **kw):
    return _binary("subtract", x, y, dtype, mask, "nl.subtract")


@_api
def multiply(x, y, *, dtype=None, mask=None, **kw):
    return _binary("mult", x, y, dtype, mask, "nl.multiply")


@_api
def divide(x, y, *, dtype=None, mask=None, **kw):
    return _binary("divide", x, y, dtype, mask, "nl.divide")


@_api
def maximum(x, y, *, dtype=None, mask=None, **kw):
    return _binary("max", x, y, dtype, mask, "nl.maximum")


@_api
def minimum(x, y, *, dtype=None, mask=None, **kw):
    return _binary("min", x, y, dtype, mask, "nl.minimum")


@_api
def power(x, y, *, dtype=None, mask=None, **kw):
    return _binary("pow", x, y, dtype, mask, "nl.power")


@_api
def equal(x, y, *, dtype=None, mask=None, **kw):
    return _binary("is_equal", x, y, dtype, mask, "nl.equal")


@_api
def not_equal(x, y, *, dtype=None, mask=None, **kw):
    return _binary("not_equal", x, y, dtype, mask, "nl.not_equal")


@_api
def greater(x, y, *, dtype=None, mask=None, **kw):
    return _binary("is_gt", x, y, dtype, mask, "nl.greater")


@_api
def greater_equal(x, y, *, dtype=None, mask=None, **kw):
    return _binary("is_ge", x, y, dtype, mask, "nl.greater_equal")


@_api
def less(x, y, *, dtype=None, mask=None, **kw):
    return _binary("is_lt", x, y, dtype, mask, "nl.less")


@_api
def less_equal(x, y, *, dtype=None, mask=None, **kw):
    return _binary("is_le", x, y, dtype, mask, "nl.less_equal")


@_api
def logical_and(x, y, *, dtype=None, mask=None, **kw):
    return _binary("logical_and", x, y, dtype, mask, "nl.logical_and")


@_api
def logical_or(x, y, *, dtype=None, mask=None, **kw):
    return _binary("logical_or", x, y, dtype, mask, "nl.logical_or")


@_api
def logical_xor(x, y, *, dtype=None, mask=None, **kw):
    return _binary("logical_xor", x, y, dtype, mask, "nl.logical_xor")


@_api
def bitwise_and(x, y, *, dtype=None, mask=None, **kw):
    return _binary("bitwise_and", x, y, dtype, mask, "nl.bitwise_and")


@_api
def bitwise_or(x, y, *, dtype=None, mask=None, **kw):
    return _binary("bitwise_or", x, y, dtype, mask, "nl.bitwise_or")


@_api
def bitwise_xor(x, y, *, dtype=None, mask=None, **kw):
    return _binary("bitwise_xor", x, y, dtype, mask, "nl.bitwise_xor")


@_api
def left_shift(x, y, *, dtype=None, mask=None, **kw):
    return _binary("logical_shift_left", x, y, dtype, mask, "nl.left_shift")


@_api
def right_shift(x, y, *, dtype=None, mask=None, **kw):
    return _binary("logical_shift_right", x, y, dtype, mask, "nl.right_shift")


def _activation(func, x, dtype, mask, what, bias=None, scale=1.0):
    """f(x): one Activation on ScalarE (NKI: transcendental functions run on the Scalar Engine; reference
    neuron-arch.md 3.5, the activation function table)."""
    x = _tile(x, what, "x")
    (x,) = _mask([x], mask, what)
    out = _new_tile(x.shape, _bir(dtype, x.bir_dtype if dtypes.is_float(x.bir_dtype) else "float32"))
    out.storage.__dict__["temp"] = True
    ins = [x, _imm(scale)]
    if bias is not None:
        ins.append(_imm(bias) if _is_num(bias) else _tile(bias, what, "bias"))
    _emit("Activation", ins, [out], what, {"func": func})
    return out


@_api
def exp(x, *, dtype=None, mask=None, **kw):
    return _activation("Exp", x, dtype, mask, "nl.exp")


@_api
def log(x, *, dtype=None, mask=None, **kw):
    return _activation("Ln", x, dtype, mask, "nl.log")


@_api
def tanh(x, *, dtype=None, mask=None, **kw):
    return _activation("Tanh", x, dtype, mask, "nl.tanh")


@_api
def sigmoid(x, *, dtype=None, mask=None, **kw):
    return _activation("Sigmoid", x, dtype, mask, "nl.sigmoid")


@_api
def relu(x, *, dtype=None, mask=None, **kw):
    return _activation("Relu", x, dtype, mask, "nl.relu")


@_api
def gelu(x, *, dtype=None, mask=None, **kw):
    return _activation("Gelu", x, dtype, mask, "nl.gelu")


@_api
def gelu_apprx_tanh(x, *, dtype=None, mask=None, **kw):
    return _activation("Gelu_apprx_tanh", x, dtype, mask, "nl.gelu_apprx_tanh")


@_api
def silu(x, *, dtype=None, mask=None, **kw):
    return _activation("Silu", x, dtype, mask, "nl.silu")


@_api
def softplus(x, *, dtype=None, mask=None, **kw):
    return _activation("Softplus", x, dtype, mask, "nl.softplus")


@_api
def mish(x, *, dtype=None, mask=None, **kw):
    return _activation("Mish", x, dtype, mask, "nl.mish")


@_api
def sqrt(x, *, dtype=None, mask=None, **kw):
    return _activation("Sqrt", x, dtype, mask, "nl.sqrt")


@_api
def rsqrt(x, *, dtype=None, mask=None, **kw):
    return _activation("Rsqrt", x, dtype, mask, "nl.rsqrt")


@_api
def erf(x, *, dtype=None, mask=None, **kw):
    return _activation("Erf", x, dtype, mask, "nl.erf")


@_api
def sin(x, *, dtype=None, mask=None, **kw):
    return _activation("Sin", x, dtype, mask, "nl.sin")


@_api
def cos(x, *, dtype=None, mask=None, **kw):
    """cos(x) = sin(x + pi/2): ScalarE has no cosine (reference neuron-arch.md 3.5 lists sin only); the bias adds
    pi/2 before the Sin."""
    return _activation("Sin", x, dtype, mask, "nl.cos", bias=math.pi / 2)


@_api
def arctan(x, *, dtype=None, mask=None, **kw):
    return _activation("Arctan", x, dtype, mask, "nl.arctan")


@_api
def sign(x, *, dtype=None, mask=None, **kw):
    return _activation("Sign", x, dtype, mask, "nl.sign")


@_api
def square(x, *, dtype=None, mask=None, **kw):
    return _activation("Square", x, dtype, mask, "nl.square")


@_api
def abs(x, *, dtype=None, mask=None, **kw):  # noqa: A001 - NKI's name
    return _activation("Abs", x, dtype, mask, "nl.abs")


@_api
def reciprocal(x, *, dtype=None, mask=None, **kw):
    """1/x: the Reciprocal instruction (VectorE; NKI nki.isa.reciprocal)."""
    x = _tile(x, "nl.reciprocal", "x")
    (x,) = _mask([x], mask, "nl.reciprocal")
    out = _new_tile(x.shape, _bir(dtype, x.bir_dtype))
    out.storage.__dict__["temp"] = True
    _emit("Reciprocal", [x], [out], "nl.reciprocal")
    return out


@_api
def negative(x, *, dtype=None, mask=None, **kw):
    """-x: TensorScalarPtr multiply by -1 (VectorE)."""
    return _binary("mult", x, -1.0, dtype, mask, "nl.negative")


@_api
def invert(x, *, dtype=None, mask=None, **kw):
    """~x (bitwise not, integer tiles): TensorScalarPtr bitwise_xor with all ones."""
    return _binary("bitwise_xor", x, -1, dtype, mask, "nl.invert")


bitwise_not = registry.register("nki.language", "bitwise_not", invert)


@_api
def logical_not(x, *, dtype=None, mask=None, **kw):
    """not x: (x == 0), TensorScalarPtr is_equal 0."""
    return _binary("is_equal", x, 0.0, dtype, mask, "nl.logical_not")


def _rounding(x, dtype, mask, what, ceil_):
    """No instruction rounds to an integer: t = x - mod(x, 1) truncates (the ALU's mod is C fmod, the remainder with
    x's sign, engines/alu_kernels.hpp), then floor = t - (x < t) and ceil = t + (x > t): four VectorE instructions."""
    x = _tile(x, what, "x")
    (x,) = _mask([x], mask, what)
    frac = _binary("mod", x, 1.0, "float32", None, what)
    t = _binary("subtract", x, frac, "float32", None, what)
    step = _binary("is_gt" if ceil_ else "is_lt", x, t, "float32", None, what)
    return _binary("add" if ceil_ else "subtract", t, step, _bir(dtype, x.bir_dtype), None, what)


@_api
def floor(x, *, dtype=None, mask=None, **kw):
    return _rounding(x, dtype, mask, "nl.floor", False)


@_api
def ceil(x, *, dtype=None, mask=None, **kw):
    return _rounding(x, dtype, mask, "nl.ceil", True)


# ---------------------------------------------------------------------------------------------------- reductions
def _axes(x, axis, what):
    """The reduced free axes, sorted; the partition axis is refused."""
    n = len(x.shape)
    axes = [axis] if isinstance(axis, int) else list(axis)
    axes = sorted(a + n if a < 0 else a for a in axes)
    if 0 in axes:
        raise Unsupported(f"{what} over the partition axis (axis 0): reduce along free axes (transpose first, or "
                          "nisa.nc_matmul with a ones vector)")
    if not axes or axes[-1] >= n or len(set(axes)) != len(axes) or len(axes) > 4:
        raise KernelError(f"{what}: axis={axis} on {x.name} {list(x.shape)}: one to four distinct free axes")
    return axes


def _reduced_last(x, axes):
    """x with the reduced axes moved innermost (a pattern may walk its free dims in any order; TensorReduce folds the
    innermost ones, reference neuron-arch.md 3.3 tensor_reduce)."""
    keep = [d for d in range(len(x.dims)) if d not in axes]
    return View(x.storage, x.off_p, x.off_f, [x.dims[d] for d in keep + axes], x.bir_dtype), keep


def _shape_before(x, kept, axes):
    """The shape of the view before _reduced_last reordered it."""
    order = kept + axes
    shape = [0] * len(order)
    for pos, d in enumerate(order):
        shape[d] = x.shape[pos]
    return shape


_AXIS = {1: "X", 2: "XY", 3: "XYZ", 4: "XYZW"}


def _reduce(alu, x, axis, dtype, mask, keepdims, what, negate=False):
    """A reduction along the trailing free axes: one TensorReduce (VectorE; NKI nki.isa.tensor_reduce)."""
    x = _tile(x, what, "x")
    (x,) = _mask([x], mask, what)
    axes = _axes(x, axis, what)
    k = len(axes)
    x, kept = _reduced_last(x, axes)
    shape = [x.shape[i] for i in range(len(kept))] if not keepdims else \
        [1 if d in axes else n for d, n in enumerate(_shape_before(x, kept, axes))]
    out = _new_tile(shape, _bir(dtype, x.bir_dtype))
    out.storage.__dict__["temp"] = True
    f = {"op": alu, "axis": _AXIS[k]}
    if negate:
        f["negate"] = True
    _emit("TensorReduce", [x], [out], what, f)
    return out


@_api
def sum(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):  # noqa: A001 - NKI's name
    return _reduce("add", x, axis, dtype, mask, keepdims, "nl.sum")


@_api
def max(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):  # noqa: A001
    return _reduce("max", x, axis, dtype, mask, keepdims, "nl.max")


@_api
def min(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):  # noqa: A001
    return _reduce("min", x, axis, dtype, mask, keepdims, "nl.min")


@_api
def prod(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):
    return _reduce("mult", x, axis, dtype, mask, keepdims, "nl.prod")


@_api
def mean(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):
    """The mean: TensorReduce with the `average` op (the simulator folds a running mean, tensor_reduce.cpp)."""
    return _reduce("average", x, axis, dtype, mask, keepdims, "nl.mean")


@_api
def all(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):  # noqa: A001
    return _reduce("logical_and", x, axis, dtype, mask, keepdims, "nl.all")


@_api
def any(x, axis, *, dtype=None, mask=None, keepdims=False, **kw):  # noqa: A001
    return _reduce("logical_or", x, axis, dtype, mask, keepdims, "nl.any")


# ---------------------------------------------------------------------------------------------------- matmul
def _pe_transpose(x, what):
    """x [P, F] -> PSUM [F, P]: a PE transpose (Matmult is_transpose, the identity matmul of NKI nc_transpose;
    reference neuron-arch.md 3.3), output dtype = input dtype."""
    if x.shape[0] > 128 or len(x.shape) != 2 or x.shape[1] > 128:
        raise KernelError(f"{what}: a PE transpose takes a 2-D tile of at most [128, 128], {x.name} is "
                          f"{list(x.shape)}")
    out = _new_tile((x.shape[1], x.shape[0]), x.bir_dtype, "psum")
    out.storage.__dict__["temp"] = True
    _emit("Matmult", [x], [out], what, {"is_transpose": True})
    return out


def _dve_transpose(x, what):
    """x [P, F] -> [F, P] with P, F <= 32: one StreamTranspose on VectorE (NKI nc_transpose on the vector engine),
    output dtype = input dtype (StreamTranspose does not cast) in x's own buffer (SBUF or PSUM)."""
    if len(x.shape) != 2 or x.shape[0] > 32 or x.shape[1] > 32:
        raise KernelError(f"{what}: a vector-engine transpose takes a 2-D tile of at most [32, 32], {x.name} is "
                          f"{list(x.shape)} (the tensor engine takes up to [128, 128])")
    out = _new_tile((x.shape[1], x.shape[0]), x.bir_dtype, x.storage.buffer)
    out.storage.__dict__["temp"] = True
    _emit("StreamTranspose", [x], [out], what, {}, engine="DVE")
    return out


def matmul_op(stationary, moving, what, dtype="float32"):
    """out[M, N] = stationary[K, M]^T @ moving[K, N] in PSUM (fp32): one Matmult on PE (NKI nki.isa.nc_matmul)."""
    st, mv = _tile(stationary, what, "stationary"), _tile(moving, what, "moving")
    for v, arg in ((st, "stationary"), (mv, "moving")):
        if v.storage.buffer != "sbuf":
            raise KernelError(f"{what}: the {arg} operand {v.name} is in {v.storage.buffer.upper()}; the PE array "
                              "reads SBUF (copy PSUM results to SBUF first)")
        if len(v.shape) != 2:
            raise KernelError(f"{what}: the {arg} operand {v.name} must be 2-D, it is {list(v.shape)}")
    K, M = st.shape
    K2, N = mv.shape
    if K != K2:
        raise KernelError(f"{what}: shape mismatch: the contraction (partition) dims differ: stationary {st.name} "
                          f"{list(st.shape)}, moving {mv.name} {list(mv.shape)}")
    if M > 128 or N > 512:
        raise KernelError(f"{what}: stationary free size {M} (max 128) / moving free size {N} (max 512) "
                          "(nl.tile_size.gemm_stationary_fmax, gemm_moving_fmax)")
    out = _new_tile((M, N), _bir(dtype), "psum")
    out.storage.__dict__["temp"] = True
    _emit("Matmult", [st, mv], [out], what, {"start_tensor_calc": True})
    return out


@_api
def matmul(x, y, *, transpose_x=False, mask=None, **kw):
    """nl.matmul: x @ y (x [M, K]) or x.T @ y (transpose_x=True, x [K, M]) into a PSUM tile (fp32). Without
    transpose_x, x is transposed on PE first and copied back to SBUF, as the compiler does."""
    x, y = _tile(x, "nl.matmul", "x"), _tile(y, "nl.matmul", "y")
    x, y = _mask([x, y], mask, "nl.matmul")
    # The PE array reads SBUF: an operand in PSUM (an nl.transpose or nl.matmul result) is copied out first, as the
    # compiler does for nl.matmul (nisa.nc_matmul refuses it instead).
    if x.storage.buffer == "psum":
        x = tensor_copy_to(x, x.bir_dtype, "nl.matmul")
    if y.storage.buffer == "psum":
        y = tensor_copy_to(y, y.bir_dtype, "nl.matmul")
    if not transpose_x:
        if x.storage.buffer != "sbuf":
            raise KernelError(f"nl.matmul: x {x.name} must be in SBUF")
        xt = _pe_transpose(x, "nl.matmul")
        x = tensor_copy_to(xt, x.bir_dtype, "nl.matmul")
    return matmul_op(x, y, "nl.matmul")


@_api
def transpose(x, *, dtype=None, mask=None, **kw):
    """nl.transpose: a 2-D tile transposed on PE into PSUM."""
    x = _tile(x, "nl.transpose", "x")
    (x,) = _mask([x], mask, "nl.transpose")
    if x.storage.buffer != "sbuf":
        raise KernelError(f"nl.transpose: x {x.name} must be in SBUF (the PE array reads SBUF)")
    out = _pe_transpose(x, "nl.transpose")
    if dtype is not None and _bir(dtype) != x.bir_dtype:
        return tensor_copy_to(out, _bir(dtype), "nl.transpose")
    return out


# ---------------------------------------------------------------------------------------------------- selection
@_api
def where(condition, x, y, *, dtype=None, mask=None, **kw):
    """nl.where: condition ? x : y (Select on VectorE; x / y a tile of the shape or a number)."""
    c = _tile(condition, "nl.where", "condition")
    ins = [c]
    for v, arg in ((x, "x"), (y, "y")):
        if _is_num(v):
            ins.append(_imm(v))
        else:
            v = _tile(v, "nl.where", arg)
            _same_shape(c, v, "nl.where", "condition", arg)
            ins.append(v)
    ins = _mask(ins, mask, "nl.where")
    bir = _bir(dtype, next((v.bir_dtype for v in ins[1:] if isinstance(v, View)), "float32"))
    out = _new_tile(c.shape, bir)
    out.storage.__dict__["temp"] = True
    _emit("Select", ins, [out], "nl.where")
    return out


# ---------------------------------------------------------------------------------------------------- debugging
@_api
def device_print(prefix, x, **kw):
    """nl.device_print(prefix, x): a DevicePrint instruction; the run prints the prefix and x's values."""
    if not (isinstance(x, View) and x.storage.buffer == "hbm"):  # an HBM tensor prints as it is
        x = _tile(x, "nl.device_print", "x")
    _emit("DevicePrint", [x], [], "nl.device_print", {"prefix": str(prefix)})



def __getattr__(name):
    """Every nki.language name not defined above: Unsupported naming the call and the kernel's line."""
    if name.startswith("__"):
        raise AttributeError(name)
    raise Unsupported(f"nl.{name} is not lowered by neuronsim's NKI front end (docs/nki-lowering.md lists what is)",
                      source_location())
