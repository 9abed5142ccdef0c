"""The tile statements that are no NKI call: dst[...] = value (_assign) and dst += value (_accumulate), registered
for the tracer's View (registry.statement); and _matmul_into, a matmul that writes its PSUM tile in an accumulation
group (dst += matmul, nisa.nc_matmul(dst, ...))."""
from . import registry
from .errors import KernelError, Unsupported
from .nl_common import _emit, _fresh, _is_num, _squeeze_free
from .nl_dma import store
from .nl_indirect import engine_of
from .nl_mask import carry_clips
from .nl_math import add
from .nl_reduce import finish_loop_reduce
from .tracer import View, current


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
    if _same(dst, value):
        return  # t[i] += x stores t[i] back into itself: nothing to do
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
    if type(dst.dyn).__name__ == "Indirection":
        # A tensor-indirection view (nl_indirect): the value is scattered by a copy on the engine that computed it
        # (whose offset group size applies); a matmul's PSUM result is not.
        eng = engine_of(p.type, p.engine, p.kind) if p is not None else None
        if eng == "PE":
            raise Unsupported(f"{what}: a matmul result into a tensor-indirection view: copy it out of PSUM first")
        _emit("TensorCopy", [value], [dst], what, engine=eng)
        return
    if p is not None and p.kind == "loop_reduce":
        finish_loop_reduce(p, carry_clips(dst, p.outs[0]))
        value.storage.__dict__["dead"] = True
        dst.storage.written = True
        dst.storage.zero_op = None
        return
    if p is not None and p.kind == "load" and dst.storage.buffer == "psum":
        raise KernelError(f"{what}: nl.load into PSUM tile {dst.name}: DMAs write SBUF")
    # A matmul writes PSUM only: its result assigned to an SBUF tile is copied out below.
    if p is not None and len(p.outs) == 1 and p.kind != "zero" and \
            (p.type != "Matmult" or dst.storage.buffer == "psum"):
        # The instruction writes the destination directly (its output dtype becomes the destination's), over what
        # its mask= lets it (nl_mask.carry_clips).
        p.outs[0] = carry_clips(dst, p.outs[0])
        value.storage.__dict__["dead"] = True
        dst.storage.written = True
        dst.storage.zero_op = None
        dst.storage.__dict__["computed"] = True
        if p.type != "Matmult":
            dst.storage.__dict__["computed_other"] = True
        return
    _emit("TensorCopy", [value], [dst], what)


def _same(a, b):
    def key(i):
        return i.c, tuple(sorted(i.loop.items())), tuple(sorted(i.axes.items()))
    return a.storage is b.storage and key(a.off_p) == key(b.off_p) and key(a.off_f) == key(b.off_f) and \
        list(a.dims) == list(b.dims) and a.bir_dtype == b.bir_dtype


registry.define_statement("assign", _assign)


def _matmul_into(dst, value, p, accumulate, what):
    """The matmul p (whose fresh result is value) writes dst, a PSUM tile, instead: `dst += matmul` and the dst=
    form of nc_matmul. Accumulation groups (reference neuron-arch.md 3.3 nc_matmul: accumulate False starts a group,
    True adds, None -- and `+=`, which passes None -- lets the compiler choose, the first write of a PSUM location
    overwriting, NKI nc_matmul "Accumulation mode"): into a tile nothing but a zeroing wrote since it was declared
    (nl.zeros, or nl.ndarray that nothing wrote), the first matmul starts the group -- here (start_tensor_calc true,
    the zeroing Memset dropped) or, from loops inside the tile's scope, on the first trip of all of them (first_of:
    the outermost; emit_bir peels that trip at every level); a region that depends on the innermost loop's variable
    is its trip's own group, one that depends on an outer loop's starts on the first trip of the loops inside that
    one; anything else accumulates."""
    if dst.storage.buffer != "psum":
        raise KernelError(f"{what}: a matmul result accumulates in PSUM, but {dst.name} is in "
                          f"{dst.storage.buffer.upper()} (declare it with buffer=nl.psum)")
    if type(dst.dyn).__name__ == "Indirection":
        raise Unsupported(f"{what}: a matmul accumulating into {dst.name}, a tensor-indirection view (.indirect): "
                          "copy the result out of PSUM into it")
    if tuple(dst.shape) != tuple(value.shape):
        raise KernelError(f"{what}: shape mismatch: {dst.name} {list(dst.shape)} and the matmul result "
                          f"{list(value.shape)}")
    p.outs[0] = carry_clips(dst, p.outs[0])
    value.storage.__dict__["dead"] = True
    p.extra["accumulates"] = True  # a fold of the accumulation group (the sanitizer's reduction, BIR debug.nki)
    st = dst.storage
    z = st.zero_op
    fresh = z is not None or not st.__dict__.get("computed")
    home = z.scope if z is not None else st.scope
    box = _box(dst)
    seen = st.__dict__.setdefault("mm_regions", [])  # the fixed regions matmuls wrote (_box)
    start = False
    uninit = accumulate is True and z is None and not st.__dict__.get("computed")
    if uninit:
        # accumulate=True (explicit) into a tile that nothing zeroed or wrote (nl.ndarray): the matmul accumulates
        # into whatever PSUM holds -- undefined on silicon (NKI nc_matmul: accumulate=True on an uninitialized PSUM
        # location), which the simulator's first-write copy hides; written as an accumulation so that a sanitized
        # run reports the read of unwritten PSUM. `+=` passes None: the first write overwrites, as the compiler's.
        fresh = False
    chain, outer = _group_loops(p, home, dst)
    if accumulate is False:
        start = True
    elif fresh and dst.is_whole():
        if p.scope is home:
            start = True
            if z is not None:
                z.extra["dropped"] = True
        elif chain and outer is home:
            p.first_of = chain[-1]
            if z is not None:
                z.extra["dropped"] = True
    elif fresh and p.scope is not None and p.scope.var in dst.off_f.loop:
        start = True  # each trip writes a region of its own
    elif fresh and chain and outer is not None and outer.var in dst.off_f.loop:
        p.first_of = chain[-1]  # a region of an enclosing loop's trip, summed over the loops inside that one
    elif not uninit and not st.__dict__.get("computed_other") and box is not None and \
            not st.__dict__.get("mm_moving") and (p.scope is home or (chain and outer is home)):
        # a fixed region (an unrolled kernel's block) that no matmul has written yet starts its group -- unless it
        # is an accumulate=True into a tile nothing wrote, kept an accumulation above -- where the tile lives, or
        # from loops inside that on the first trip of them all
        if all(b[1] < box[0] or box[1] < b[0] or b[3] < box[2] or box[3] < b[2] for b in seen):
            if p.scope is home:
                start = True
            else:
                p.first_of = chain[-1]
    if box is None:
        st.__dict__["mm_moving"] = True  # a matmul wrote a region that moves with a loop: no region is known new
    elif box not in seen:
        seen.append(box)
    p.fields["start_tensor_calc"] = start
    st.zero_op = None
    st.__dict__["computed"] = True
    return dst


def _group_loops(p, home, dst):
    """(chain, outer): the loops around matmul p, innermost first, up to (not including) `outer` -- the first loop
    whose variable moves dst's free offset, or the tile's scope `home` -- when the group can start on the first trip of
    all of them: each a static loop (a dynamic loop's first trip is not peeled) that moves neither of dst's offsets,
    p recorded in the innermost one's body. ([], None) otherwise."""
    if p.scope is None or current().stack[-1].loop is not p.scope:
        return [], None
    chain, L = [], p.scope
    while L is not None and L.var not in dst.off_f.loop and L is not home:
        if L.trips is None or L.var in dst.off_p.loop:
            return [], None
        chain.append(L)
        L = L.parent
    if L is None and home is not None:
        return [], None  # the tile's scope is no loop around p
    return chain, L


def _box(dst):
    """(first, last partition, first, last free element) of a region at fixed offsets, else None."""
    if not (dst.off_f.is_const() and dst.off_p.is_const()):
        return None
    lo_f, hi_f, lo_p, hi_p = dst.off_f.c, dst.off_f.c, dst.off_p.c, dst.off_p.c
    for step, n, part in dst.dims:
        if part:
            hi_p += step * (n - 1)
        else:
            hi_f += step * (n - 1)
    return lo_p, hi_p, lo_f, hi_f


def _accumulate(dst, value):
    """dst += value: a fresh matmul result accumulates in its PSUM tile (_matmul_into); anything else is dst = dst +
    value."""
    if isinstance(value, View):
        p = _fresh(value)
        if p is not None and p.type == "Matmult" and not p.fields.get("is_transpose"):
            return _matmul_into(dst, value, p, None, "+= accumulation")
    _assign(dst, add(dst, value))
    return dst


registry.define_statement("accumulate", _accumulate)
