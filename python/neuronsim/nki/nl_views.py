"""NKI's access-pattern API on the traced tensors (public NKI docs, deep dive "NKI Access Patterns", NkiTensor.ap /
view / get_pattern): views that address a tensor's storage by an explicit [[step, num], ...] pattern, at a static
offset, a run-time one (scalar_offset: a register, a dynamic loop's variable or a [1, 1] tile) or one per partition
(vector_offset: a gather / scatter), as another dtype; and nl.reshape of an HBM view. A view is a tracer.View whose
dtype may differ from its storage's (offsets and steps count its own elements) and whose dyn (tracer.Indirect) holds
the run-time part. docs/nki-lowering.md 1 and 4 say what each becomes in BIR.

Patterns follow NKI: the first pair of an SBUF / PSUM pattern is the partition dim, [free size, partitions] (the
partition access must be contiguous: "Restriction on SBUF/PSUM Tensors"); an HBM pattern walks the flattened tensor.
.ap is not composable: the pattern replaces the view's dims, its offset adds to the view's start.
"""
import math
from fractions import Fraction

from . import dtypes, registry
from .dynamic import Register
from .errors import KernelError, Unsupported
from .nl_common import _bir
from .symbolic import Idx
from .tracer import Indirect, View, bounds

_api = registry.api("nki.language")


def _scaled(e, r, what):
    """Index expression e (elements of one dtype) in elements of another, r = old size / new size."""
    e = Idx.of(e)
    parts = [e.c] + list(e.loop.values())
    if any((Fraction(x) * r).denominator != 1 for x in parts):
        raise KernelError(f"{what}: an offset of {e!r} elements is not a whole number of the new dtype's elements")
    return Idx(int(e.c * r), {v: int(c * r) for v, c in e.loop.items()})


def _whole(x, what):
    if Fraction(x).denominator != 1:
        raise KernelError(what)
    return int(x)


def _pairs(pattern, what):
    try:
        pairs = [(int(st), int(n)) for st, n in pattern]
    except (TypeError, ValueError):
        raise KernelError(f"{what}: pattern is a list of [step, num] pairs, got {pattern!r}")
    if not pairs or any(n <= 0 for _, n in pairs):
        raise KernelError(f"{what}: pattern {pattern!r} needs at least one pair, each of a positive num")
    return pairs


def _span(pairs):
    lo = sum(min(0, (n - 1) * st) for st, n in pairs)
    hi = sum(max(0, (n - 1) * st) for st, n in pairs)
    return lo, hi


def _start(v, nd, what):
    """The view's own start in elements of dtype nd: (partition offset, free offset) on chip, (0, flat) in HBM."""
    r = Fraction(dtypes.size(v.bir_dtype), dtypes.size(nd))
    return v.off_p, _scaled(v.off_f, r, what)


def _row(s, nd, what):
    """Elements of dtype nd per partition of on-chip tensor s (its whole free size)."""
    return _whole(Fraction(s.row * dtypes.size(s.dtype), dtypes.size(nd)),
                  f"{what}: a partition row of {s.name} ({s.bytes_per_partition} bytes) is not a whole number of "
                  f"{nd} elements")


def _run_time(v, nd, scalar_offset, vector_offset, indirect_dim, pnum, what):
    """The run-time part of the start (an Indirect, or None) and a static part (an Idx) for a scalar_offset given as
    an integer or a static loop expression. The offset counts steps of dim indirect_dim of the tensor .ap is called
    on: prod(A.shape[indirect_dim + 1:]) elements (NKI Access Patterns, "Scalar Dynamic Access": "512 is read from
    the shape of the base tensor, not from the access pattern")."""
    if scalar_offset is None and vector_offset is None:
        return None, Idx(0)
    if scalar_offset is not None and vector_offset is not None:
        raise KernelError(f"{what}: scalar_offset and vector_offset are mutually exclusive (NKI NkiTensor.ap)")
    s = v.storage
    d = int(indirect_dim)
    if not 0 <= d < len(v.shape):
        raise KernelError(f"{what}: indirect_dim {d} is not a dim of {v.name} {list(v.shape)}")
    if s.onchip and v.dims[d][2]:
        raise Unsupported(f"{what}: a run-time offset on the partition dim of on-chip tensor {s.name} (NKI "
                          "NkiTensor.select: \"Dynamic on-chip: dim must not be 0\")")
    coef = _whole(Fraction(math.prod(v.shape[d + 1:]) * dtypes.size(v.bir_dtype), dtypes.size(nd)),
                  f"{what}: dim {indirect_dim} of {v.name} is not a whole number of {nd} elements")
    if vector_offset is not None:
        if s.onchip:
            raise KernelError(f"{what}: vector_offset indexes an HBM tensor; {s.name} is in {s.buffer.upper()} "
                              "(public NKI docs, nki.isa.dma_copy \"Indirect addressing\")")
        if d != 0:
            raise Unsupported(f"{what}: vector_offset with indirect_dim {d}: NKI supports indirect_dim=0 only "
                              "(\"NKI Access Patterns\", Vector Dynamic Access)")
        idx = vector_offset
        if not isinstance(idx, View) or not idx.storage.onchip:
            raise KernelError(f"{what}: vector_offset is an SBUF tile of per-partition indices, got {idx!r}")
        if idx.shape[0] != pnum or any(n != 1 for n in idx.shape[1:]):
            raise KernelError(f"{what}: vector_offset {idx.name} {list(idx.shape)} must be [{pnum}, 1]: one index "
                              "per partition of the pattern")
        return Indirect(index=idx, stride=coef), Idx(0)
    x = scalar_offset
    if isinstance(x, Register):
        return Indirect(terms=[(x, coef)]), Idx(0)
    if isinstance(x, View):
        if not x.storage.onchip or math.prod(x.shape) != 1:
            raise KernelError(f"{what}: scalar_offset is a register or an SBUF tensor of shape (1, 1), got "
                              f"{x.buffer.upper()} {x.name} {list(x.shape)}")
        x.storage.__dict__["uses"] = x.storage.__dict__.get("uses", 0) + 1  # read when the instruction runs
        return Indirect(terms=[(x, coef)]), Idx(0)
    if isinstance(x, (Idx, int)) and not isinstance(x, bool):
        return None, Idx.of(x) * coef
    raise KernelError(f"{what}: scalar_offset is a register or an SBUF tensor of shape (1, 1), got {x!r}")


def ap(v, pattern, offset=None, scalar_offset=None, vector_offset=None, indirect_dim=0, dtype=None):
    """NkiTensor.ap: the view of v's storage that pattern walks from v's start + offset, as dtype."""
    s = v.storage
    what = f"{v.name}.ap"
    pairs = _pairs(pattern, what)
    nd = _bir(dtype) if dtype is not None else v.bir_dtype
    if v.dyn is not None:
        raise KernelError(f"{what}: {v.name} already has a run-time offset; an indirect view is not indirected again "
                          "(NKI NkiTensor.is_indirect)")
    off_p, base = _start(v, nd, what)
    dyn, static = _run_time(v, nd, scalar_offset, vector_offset, indirect_dim, pairs[0][1], what)
    start = base + (Idx.of(offset) if offset is not None else Idx(0)) + static
    if not s.onchip:
        total = _whole(Fraction(math.prod(s.shape) * dtypes.size(s.dtype), dtypes.size(nd)),
                       f"{what}: {s.name} is not a whole number of {nd} elements")
        dims = [(st, n, False) for st, n in pairs]
        if dyn is not None and dyn.index is not None:
            dims[0] = (dyn.stride, pairs[0][1], False)  # the indexed dim steps the base tensor's rows
            lo, hi = _span(pairs[1:])
        else:
            lo, hi = _span(pairs)
        _check_flat(start, lo, hi, total, dyn, f"{what}: HBM tensor {s.name} of {total} {nd} elements")
        return View(s, Idx(0), start, dims, nd, dyn)
    if s.pdim != 0:
        raise Unsupported(f"{what}: .ap on block tile {s.name} {list(s.shape)}, whose partition dim is not its first")
    row = _row(s, nd, what)
    pstep, pnum = pairs[0]
    if pnum > 1 and pstep != row:
        raise KernelError(f"{what}: the partition pair [{pstep}, {pnum}] must step {row}, the tensor's free size: "
                          "partitions are accessed contiguously (NKI Access Patterns, \"Restriction on SBUF/PSUM "
                          "Tensors\")")
    if start.is_const():
        off_p, start = off_p + start.c // row, Idx(start.c % row)
    lo, hi = _span(pairs[1:])
    p_lo, p_hi = bounds(off_p)
    if p_lo < 0 or p_hi + pnum > s.partitions:
        raise KernelError(f"{what}: partitions [{p_lo}, {p_hi + pnum - 1}] of {s.name}, which has {s.partitions}")
    _check_flat(start, lo, hi, row, dyn, f"{what}: a partition row of {s.name} ({row} {nd} elements)")
    dims = [(1, pnum, True)] + [(st, n, False) for st, n in pairs[1:]]
    return View(s, off_p, start, dims, nd, dyn)


def _check_flat(start, lo, hi, total, dyn, what):
    """Every element in [0, total): exactly for a static start; for a run-time one the pattern at least fits (the
    simulator checks the rest when the instruction runs)."""
    if dyn is not None:
        if hi - lo + 1 > total:
            raise KernelError(f"{what}: the pattern spans {hi - lo + 1} elements")
        return
    s_lo, s_hi = bounds(start)
    if s_lo + lo < 0 or s_hi + hi >= total:
        raise KernelError(f"index out of range: {what}: the pattern reaches elements [{s_lo + lo}, {s_hi + hi}]")


def get_pattern(v):
    """NkiTensor.get_pattern: [[step, num], ...] of the view's dims (on chip the partition pair steps the row)."""
    s = v.storage
    out = []
    for st, n, part in v.dims:
        out.append([_row(s, v.bir_dtype, "get_pattern") if part else st, n])
    return out


def view_dtype(v, dtype):
    """NkiTensor.view(dtype): the same bytes as another dtype; the last dim's size scales by the ratio of the sizes
    (public NKI docs, NkiTensor.view)."""
    nd = _bir(dtype)
    what = f"{v.name}.view({nd})"
    if nd == v.bir_dtype:
        return v
    if v.dyn is not None and v.dyn.index is not None:
        raise KernelError(f"{what}: not after a vector select (NKI NkiTensor.view)")
    if not v.dims or v.dims[-1][2] or (v.dims[-1][0] != 1 and v.dims[-1][1] != 1):
        raise KernelError(f"{what}: the last dim must be contiguous in memory (NKI NkiTensor.view)")
    r = Fraction(dtypes.size(v.bir_dtype), dtypes.size(nd))
    msg = f"{what}: {list(v.shape)} {v.bir_dtype} is not a whole number of {nd} elements along a free dim"
    dims = [(st, n, True) if part else (_whole(st * r, msg), n, False) for st, n, part in v.dims[:-1]]
    dims.append((1, _whole(v.dims[-1][1] * r, msg), False))
    dyn = None
    if v.dyn is not None:
        dyn = Indirect(terms=[(src, _whole(c * r, msg)) for src, c in v.dyn.terms])
    return View(v.storage, v.off_p, _scaled(v.off_f, r, what), dims, nd, dyn)


registry.define_statement("ap", ap)
registry.define_statement("view_dtype", view_dtype)
registry.define_statement("get_pattern", get_pattern)


def reshape_view(x, shape, what="reshape"):
    """x.reshape(shape) (public NKI docs, NkiTensor.reshape: the same elements in another shape, no copy): an HBM view
    whose elements are one contiguous row-major region (a whole tensor or a slice of whole trailing dims), or a tile
    whose free dims are contiguous, the partition dim kept ("shape[0] must equal t.shape[0]")."""
    shape = tuple(int(s) for s in shape)
    if math.prod(shape) != math.prod(x.shape):
        raise KernelError(f"{what} of {x.name} {list(x.shape)} to {list(shape)}: the element counts differ")
    if x.dyn is not None:
        raise Unsupported(f"{what} of {x.name}, a view with a run-time offset")
    onchip = x.storage.onchip
    if onchip and (not x.dims or not x.dims[0][2] or not shape or shape[0] != x.shape[0]):
        raise KernelError(f"{what} of tile {x.name} {list(x.shape)} to {list(shape)}: the partition dim stays "
                          "first and keeps its size (NKI NkiTensor.reshape)")
    acc = 1
    for st, n, _ in reversed(x.dims[1:] if onchip else x.dims):
        if n != 1 and st != acc:
            raise KernelError(f"{what} of {x.name} {list(x.shape)}: the view is not contiguous in memory (a strided "
                              "or transposed slice); NKI reshapes a contiguous region only")
        acc *= n
    free = shape[1:] if onchip else shape
    strides, acc = [], 1
    for s in reversed(free):
        strides.append(acc)
        acc *= s
    strides.reverse()
    dims = [(st, s, False) for st, s in zip(strides, free)]
    if onchip:
        dims = [x.dims[0]] + dims
    return x.like(x.off_p, x.off_f, dims)


# ---------------------------------------------------------------------------------------------------- view primitives
# NkiTensor's views (public NKI docs, NkiTensor: "implemented on top of .ap()", each composing a new pattern at trace
# time): they rearrange a view's dims, partition dim first on chip.
def _dim(v, d, what, partition_ok=False):
    d = int(d)
    if d < 0:
        d += len(v.dims)
    if not 0 <= d < len(v.dims):
        raise KernelError(f"{what}: dim {d} of {v.name} {list(v.shape)}")
    if v.dims[d][2] and not partition_ok:
        raise KernelError(f"{what}: dim {d} is the partition dim of {v.name} (NKI: on-chip views keep it first)")
    if v.dyn is not None and v.dyn.index is not None and d == 0:
        raise KernelError(f"{what}: dim 0 of {v.name} is the indexed dim of a vector select (NKI is_indirect)")
    return d


def strides(v):
    """NkiTensor.strides: each dim's step in elements (on chip the partition dim steps the free size)."""
    return tuple(_row(v.storage, v.bir_dtype, "strides") if part else st for st, _, part in v.dims)


def offset(v):
    """NkiTensor.offset: the view's start in elements of the flattened storage (an index expression in a loop)."""
    if not v.storage.onchip:
        return v.off_f.c if v.off_f.is_const() else v.off_f
    e = v.off_p * _row(v.storage, v.bir_dtype, "offset") + v.off_f
    return e.c if e.is_const() else e


def is_contiguous(v):
    """NkiTensor.is_contiguous: every dim of size > 1 steps the product of the sizes inside it (the partition dim
    skipped on chip)."""
    acc = 1
    for st, n, part in reversed(v.dims):
        if part:
            continue
        if n != 1 and st != acc:
            return False
        acc *= n
    return True


def slice_(v, dim, start, end, step=1):
    """NkiTensor.slice: t[..., start:end:step, ...] along dim."""
    d = _dim(v, dim, f"{v.name}.slice", partition_ok=True)
    return v[(slice(None),) * d + (slice(start, end, step),)]


def select(v, dim, index):
    """NkiTensor.select: one index of dim, the dim removed; a register or a [1, 1] tile selects at run time (the
    dim's step times its value added to the start, as .ap(scalar_offset=) does)."""
    what = f"{v.name}.select"
    d = _dim(v, dim, what)
    if isinstance(index, (Register, View)):
        if v.dyn is not None:
            raise KernelError(f"{what}: one run-time select per view (NKI NkiTensor.select)")
        if isinstance(index, View) and (not index.storage.onchip or math.prod(index.shape) != 1):
            raise KernelError(f"{what}: a run-time index is a register or an SBUF tensor of shape (1, 1)")
        if isinstance(index, View):
            index.storage.__dict__["uses"] = index.storage.__dict__.get("uses", 0) + 1
        step = v.dims[d][0]
        return View(v.storage, v.off_p, v.off_f, v.dims[:d] + v.dims[d + 1:], v.bir_dtype,
                    Indirect(terms=[(index, step)]))
    key = (slice(None),) * d + (index,)
    return v[key]


def vector_select(v, dim, vector_offset):
    """NkiTensor.vector_select: partition p of the result reads index vector_offset[p] of dim 0 of an HBM tensor (a
    gather, as .ap(vector_offset=)); the result has vector_offset.shape[0] rows."""
    what = f"{v.name}.vector_select"
    if int(dim) != 0:
        raise KernelError(f"{what}: dim must be 0 (NKI NkiTensor.vector_select)")
    if v.storage.onchip:
        raise KernelError(f"{what}: only HBM tensors (NKI NkiTensor.vector_select); {v.name} is in "
                          f"{v.buffer.upper()}")
    if v.dyn is not None:
        raise KernelError(f"{what}: one run-time select per view (NKI NkiTensor.vector_select)")
    idx = vector_offset
    if not isinstance(idx, View) or not idx.storage.onchip or any(n != 1 for n in idx.shape[1:]):
        raise KernelError(f"{what}: vector_offset is an SBUF tile of shape (P, 1), got {idx!r}")
    step = v.dims[0][0]
    return View(v.storage, v.off_p, v.off_f, [(step, idx.shape[0], False)] + list(v.dims[1:]), v.bir_dtype,
                Indirect(index=idx, stride=step))


def permute(v, order):
    """NkiTensor.permute: the dims in another order (on chip the partition dim stays first)."""
    order = [int(o) for o in order]
    if sorted(order) != list(range(len(v.dims))):
        raise KernelError(f"{v.name}.permute({order}): not a permutation of {len(v.dims)} dims")
    if (v.storage.onchip or v.dyn is not None and v.dyn.index is not None) and order[0] != 0:
        raise KernelError(f"{v.name}.permute({order}): dim 0 stays first (NKI NkiTensor.permute)")
    return v.like(v.off_p, v.off_f, [v.dims[o] for o in order])


def broadcast(v, dim, size):
    """NkiTensor.broadcast: a size-1 dim repeated size times (step 0)."""
    d = _dim(v, dim, f"{v.name}.broadcast")
    if v.dims[d][1] != 1:
        raise KernelError(f"{v.name}.broadcast: dim {d} has size {v.dims[d][1]}, not 1")
    dims = list(v.dims)
    dims[d] = (0, int(size), False)
    return v.like(v.off_p, v.off_f, dims)


def expand_dim(v, dim):
    """NkiTensor.expand_dim: a new dim of size 1 at position dim (not before the partition dim)."""
    d = int(dim)
    if not 0 <= d <= len(v.dims) or (d == 0 and (v.storage.onchip or v.dyn is not None)):
        raise KernelError(f"{v.name}.expand_dim({dim}): not a position a new dim may take (NKI NkiTensor.expand_dim)")
    return v.like(v.off_p, v.off_f, v.dims[:d] + [(1, 1, False)] + v.dims[d:])


def squeeze_dim(v, dim):
    """NkiTensor.squeeze_dim: a dim of size 1 removed."""
    d = _dim(v, dim, f"{v.name}.squeeze_dim")
    if v.dims[d][1] != 1:
        raise KernelError(f"{v.name}.squeeze_dim: dim {d} has size {v.dims[d][1]}, not 1")
    return v.like(v.off_p, v.off_f, v.dims[:d] + v.dims[d + 1:])


def reshape_dim(v, dim, shape):
    """NkiTensor.reshape_dim: dim split into shape (one entry may be -1), row-major within the dim's step."""
    d = _dim(v, dim, f"{v.name}.reshape_dim")
    st, n, _ = v.dims[d]
    shape = [int(s) for s in shape]
    if shape.count(-1) == 1:
        known = math.prod(s for s in shape if s != -1)
        shape[shape.index(-1)] = n // known if known and n % known == 0 else -1
    if any(s <= 0 for s in shape) or math.prod(shape) != n:
        raise KernelError(f"{v.name}.reshape_dim({d}, {shape}): does not split a dim of {n}")
    dims, acc = [], st
    for s in reversed(shape):
        dims.append((acc, s, False))
        acc *= s
    return v.like(v.off_p, v.off_f, v.dims[:d] + dims[::-1] + v.dims[d + 1:])


def flatten_dims(v, start_dim, end_dim):
    """NkiTensor.flatten_dims: dims start..end (contiguous in memory) merged into one."""
    a, b = _dim(v, start_dim, f"{v.name}.flatten_dims"), _dim(v, end_dim, f"{v.name}.flatten_dims")
    for k in range(a, b):
        if v.dims[k][1] != 1 and v.dims[k][0] != v.dims[k + 1][0] * v.dims[k + 1][1]:
            raise KernelError(f"{v.name}.flatten_dims({a}, {b}): the dims are not contiguous in memory")
    n = math.prod(x[1] for x in v.dims[a:b + 1])
    return v.like(v.off_p, v.off_f, v.dims[:a] + [(v.dims[b][0], n, False)] + v.dims[b + 1:])



def rearrange(v, src_pattern, dst_pattern, fixed_sizes=None, **sizes):
    """NkiTensor.rearrange (einops-style, public NKI docs): src_pattern names v's dims, a tuple of names splitting one
    dim (row-major, sizes from fixed_sizes or keywords, one may be left to infer); dst_pattern orders the same names,
    a tuple of names merging dims. Composed of reshape_dim, permute and flatten_dims (on chip the partition dim stays
    first and whole)."""
    what = f"{v.name}.rearrange({src_pattern!r}, {dst_pattern!r})"
    known = {**(fixed_sizes or {}), **sizes}

    def groups(pattern, side):
        if not isinstance(pattern, (tuple, list)):
            raise KernelError(f"{what}: the {side} pattern is a tuple of names and tuples of names, got {pattern!r}")
        out = []
        for g in pattern:
            names = tuple(g) if isinstance(g, (tuple, list)) else (g,)
            if not names or not all(isinstance(n, str) and n.isidentifier() for n in names):
                raise KernelError(f"{what}: {g!r} in the {side} pattern is not a name or a tuple of names")
            out.append(names)
        return out

    src, dst = groups(src_pattern, "source"), groups(dst_pattern, "destination")
    if len(src) != len(v.dims):
        raise KernelError(f"{what}: the source pattern names {len(src)} dims; {v.name} has {len(v.dims)}")
    names = [n for g in src for n in g]
    flat_dst = [n for g in dst for n in g]
    if len(set(names)) != len(names) or sorted(names) != sorted(flat_dst):
        raise KernelError(f"{what}: each name appears once on each side (source {names}, destination {flat_dst})")
    if set(known) - set(names):
        raise KernelError(f"{what}: sizes given for names the patterns do not use: {sorted(set(known) - set(names))}")
    try:
        for d in reversed(range(len(src))):  # split from the last dim so earlier dims keep their positions
            g, n = src[d], v.dims[d][1]
            if len(g) == 1:
                if g[0] in known and int(known[g[0]]) != n:
                    raise KernelError(f"{what}: {g[0]} is given size {known[g[0]]}; the dim has {n}")
                continue
            split = [int(known[x]) if x in known else -1 for x in g]
            if split.count(-1) > 1:
                raise KernelError(f"{what}: the sizes of {g} are not known (give all but one in fixed_sizes)")
            v = v.reshape_dim(d, split)
        v = v.permute([names.index(n) for n in flat_dst])
        ends, k = [], 0
        for g in dst:
            ends.append((k, k + len(g) - 1))
            k += len(g)
        for a, b in reversed(ends):
            if b > a:
                v = v.flatten_dims(a, b)
    except KernelError as e:
        raise KernelError(f"{what}: {e}") from None
    return v


def _expand(v, axis, what):
    """numpy.expand_dims on a view: a size-1 dim at each position of axis (an int or a sequence) of the expanded
    shape; not the partition dim of a tile (legacy nki.language.expand_dims: "must be free dimensions")."""
    axes = [int(a) for a in axis] if isinstance(axis, (tuple, list)) else [int(axis)]
    n = len(v.dims) + len(axes)
    pos = sorted(a + n if a < 0 else a for a in axes)
    if len(set(pos)) != len(pos) or any(not 0 <= a < n for a in pos):
        raise KernelError(f"{what}: axis {axis} is not a set of positions of a {n}-dim result")
    for a in pos:
        if a == 0 and (v.storage.onchip or v.dyn is not None):
            raise KernelError(f"{what}: axis 0 is the partition dim of tile {v.name}; a new dim goes after it")
        v = v.like(v.off_p, v.off_f, v.dims[:a] + [(1, 1, False)] + v.dims[a:])
    return v


@_api
def expand_dims(x, axis):
    """nl.expand_dims: x with a size-1 dim at each position of axis (a view: no copy, no instruction)."""
    if not isinstance(x, View):
        raise KernelError(f"nl.expand_dims of {x!r}: a tile or tensor is expanded")
    return _expand(x, axis, "nl.expand_dims")


def assert_shape(v, shape):
    """Legacy nki.tensor.assert_shape: v itself when its shape is shape, else a KernelError naming both."""
    if tuple(int(s) for s in shape) != tuple(v.shape):
        raise KernelError(f"assert_shape: {v.name} has shape {list(v.shape)}, not {list(shape)}")
    return v


def astype(v, dtype):
    """Legacy nki.tensor.astype: a copy of tile v converted to dtype (TensorCopy; "Copy ALWAYS occur")."""
    return registry.function("nki.language", "copy")(v, dtype=dtype)

for _name, _fn in [("strides", strides), ("offset", offset), ("is_contiguous", is_contiguous), ("slice", slice_),
                   ("select", select), ("vector_select", vector_select), ("permute", permute),
                   ("broadcast", broadcast), ("expand_dim", expand_dim), ("squeeze_dim", squeeze_dim),
                   ("reshape_dim", reshape_dim), ("flatten_dims", flatten_dims), ("rearrange", rearrange),
                   ("assert_shape", assert_shape), ("astype", astype),
                   ("expand_dims", lambda v, axis: _expand(v, axis, f"{v.name}.expand_dims"))]:
    registry.define_statement("view." + _name, _fn)

# The members of NkiTensor (and the legacy nki.tensor's view) this module gives the traced tensors, as the coverage
# table lists them (registry; docs/nki-api.md).
for _name in ("ap", "view", "reinterpret_cast", "get_pattern", "is_indirect", "strides", "offset", "is_contiguous",
              "slice", "select", "vector_select", "permute", "broadcast", "expand_dim", "squeeze_dim", "reshape_dim",
              "flatten_dims", "rearrange"):
    registry.value("nki.language", "NkiTensor." + _name, getattr(View, _name))
for _name in ("view", "assert_shape", "astype", "expand_dims"):  # the legacy nki.tensor's members
    registry.value("nki", "tensor." + _name, getattr(View, _name))
