"""The tracer: a kernel is called once with symbolic tensors and records instructions; it never computes a value.

- Storage: a tensor the kernel declares or is given (HBM, SBUF or PSUM), with the loop it was declared in.
- View: a storage seen through an index: a start offset (symbolic in the loop variables) and [step, num] dims, the
  partition dim marked. Every tile a kernel holds is a View; indexing a View gives a View.
- Trace: the instruction tree (ops and loops) being recorded; nl.affine_range / nl.sequential_range bodies are traced
  once with a symbolic loop variable and become one BIR loop (docs/nki-lowering.md; the iterators: trace_loops.py).

Index expressions are symbolic.py's. The traced program knows no NKI call by name: a View's operators (t + u,
t[...] = v) call the nki.language functions the registry holds (registry.py).
"""
import linecache
import re

from . import dtypes, loop_plan, registry, symbolic
from .clips import Check
from .errors import KernelError, Unsupported, name_from_source, source_location
from .symbolic import _EMPTY, SHARD, Idx, NeedsUnroll, ParDim, _broadcast_sizes, _idx, _is_int

_current = None  # the Trace being recorded


symbolic.context = lambda: _current  # `//` and `%` of loop variables read the trace being recorded


def current(what="this call"):
    if _current is None:
        raise Unsupported(f"{what} is only available while a kernel is traced (inside a function run by "
                          "neuronsim.nki.simulate / benchmark / to_bir or `neuronsim nki`)")
    return _current


def bounds(e):
    """(min, max) of index expression e over the current trace's loop ranges (symbolic.Idx.bounds)."""
    return e.bounds(_current.var_range if _current is not None else None)


# ---------------------------------------------------------------------------------------------------- storage
_BUFFERS = {"hbm", "shared_hbm", "private_hbm", "sbuf", "psum"}


class Storage:
    def __init__(self, trace, name, buffer, shape, dtype, kind="internal", where=None):
        self.trace = trace
        self.id = len(trace.storages)
        self.name = name
        self.buffer = "hbm" if buffer in ("hbm", "shared_hbm", "private_hbm") else buffer
        # The partition dim: the one marked nl.par_dim (NKI's block layout (blocks, par_dim(P), free)), else dim 0.
        self.pdim = next((d for d, s in enumerate(shape) if isinstance(s, ParDim)), 0)
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype  # BIR name
        self.kind = kind  # input / output / internal
        self.scope = trace.stack[-1].loop if trace.stack else None
        self.where = where
        self.zero_op = None  # the Memset of an nl.zeros PSUM tile, until something else writes it
        self.written = False
        # The kernel loops it is declared inside (their NkiLoop ids, outermost first): a tile declared in a loop's
        # body is that trip's own (the sanitizer's loop-carried dependencies, BIR debug.nki "local").
        self.nki_scope = tuple(info.id for info, _ in trace.nki_stack)
        trace.storages.append(self)
        if self.onchip and not self.shape:
            raise KernelError(f"an {self.buffer.upper()} tile needs at least one (partition) dim: {self.name}")
        if self.onchip and self.partitions > 128:
            raise KernelError(f"tile {self.name}: partition dim {self.partitions} > 128 (nl.tile_size.pmax)", where)

    @property
    def onchip(self):
        return self.buffer in ("sbuf", "psum")

    @property
    def partitions(self):
        return self.shape[self.pdim] if self.onchip else 1

    @property
    def row(self):
        """Elements per partition (on chip) or in all (HBM)."""
        r = 1
        for d, s in enumerate(self.shape):
            if not (self.onchip and d == self.pdim):
                r *= s
        return r

    @property
    def bytes_per_partition(self):
        return self.row * dtypes.size(self.dtype)

    def view(self):
        """The whole tensor: the partition dim steps partitions, the others row-major over the free elements."""
        dims, acc = [None] * len(self.shape), 1
        for d in reversed(range(len(self.shape))):
            if self.onchip and d == self.pdim:
                dims[d] = (1, self.shape[d], True)
            else:
                dims[d] = (acc, self.shape[d], False)
                acc *= self.shape[d]
        return View(self, Idx(0), Idx(0), dims, self.dtype)

    def __repr__(self):
        return f"<{self.buffer} tensor {self.name} {list(self.shape)} {self.dtype}>"


def _nl(name):
    """nki.language's function `name`, as the registry holds it."""
    return registry.function("nki.language", name)


class Indirect:
    """The run-time part of a view's start (NKI .ap(scalar_offset= / vector_offset=), docs/nki-lowering.md 4):
    terms, ((source, coef), ...), each adding coef * its value to the start (a source is a register, a dynamic loop's
    variable or a [1, 1] tile read when the instruction runs: dynamic.py); index, a [P, 1] tile of per-partition
    indices (a gather / scatter), each index stepping `stride` elements; oob_skip, NKI's oob_mode.skip."""
    __slots__ = ("terms", "index", "stride")

    def __init__(self, terms=(), index=None, stride=0):
        self.terms, self.index, self.stride = tuple(terms), index, stride


class View:
    """A tile or tensor as the kernel holds it: storage + offset + [(step, num, is_partition)] dims, offsets and
    steps in elements of bir_dtype (another dtype than the storage's: a reinterpretation of its bytes), dyn, an
    Indirect when part of the start is known only at run time, and oob, the index range checks a mask= may still
    make hold (clips.Check; nl_mask applies the mask, _emit raises what is left), and pred, a predicate the kernel
    indexed it by (`x[i < n]`: the mask of the call that takes it, joined to that call's mask=)."""
    __slots__ = ("storage", "off_p", "off_f", "dims", "bir_dtype", "dyn", "oob", "pred")

    def __init__(self, storage, off_p, off_f, dims, bir_dtype, dyn=None, oob=(), pred=None):
        self.storage, self.off_p, self.off_f, self.dims, self.bir_dtype = storage, off_p, off_f, dims, bir_dtype
        self.dyn, self.oob, self.pred = dyn, oob, pred

    def like(self, off_p, off_f, dims, bir_dtype=None):
        """This view with another offset and dims (the same storage, dtype and run-time part: dims moved,
        broadcast...). An index still out of range is an error now: only a mask= on the call that takes the view
        itself may bring it in range."""
        self.raise_pred()
        self.raise_oob()
        return View(self.storage, off_p, off_f, dims, self.bir_dtype if bir_dtype is None else bir_dtype, self.dyn)

    def raise_pred(self, what=None):
        if self.pred is not None:
            raise Unsupported(f"{what or self.name}: a tile indexed by a predicate (x[i < n]) is the mask of the call "
                              "that takes it; this use takes no mask (give the call mask= instead)", source_location())

    def raise_oob(self, where=None):
        for c in self.oob:
            c.verify(self.dims, bounds, where)

    # --- what NKI code reads
    @property
    def shape(self):
        return tuple(d[1] for d in self.dims)

    @property
    def dtype(self):
        return dtypes.from_bir(self.bir_dtype)

    @property
    def ndim(self):
        return len(self.dims)

    @property
    def buffer(self):
        return self.storage.buffer

    @property
    def name(self):
        return self.storage.name

    def __len__(self):
        return self.dims[0][1] if self.dims else 0

    def __iter__(self):
        raise Unsupported(f"iterating over tensor {self.name} in Python: index it with a loop variable instead")

    def __bool__(self):
        """A tensor is true, as NKI takes it (`if bias:` asks whether a tensor was given); its values exist only on
        the simulated device."""
        return True

    @property
    def itemsize(self):
        return dtypes.size(self.bir_dtype)

    @property
    def size(self):
        n = 1
        for d in self.dims:
            n *= d[1]
        return n

    def __repr__(self):
        return f"<{self.buffer} tile of {self.name} {list(self.shape)} {self.bir_dtype}>"

    def is_whole(self):
        return self.off_p.is_const() and self.off_p.c == 0 and self.off_f.is_const() and self.off_f.c == 0 and \
            self.shape == self.storage.shape

    # --- indexing
    def __getitem__(self, key):
        if isinstance(key, (symbolic.Pred, bool)) or type(key).__name__ == "bool_":
            # x[i < n]: the predicate masks the call that takes the view (a Python bool: everywhere or nowhere)
            self.raise_oob()
            key = bool(key) if not isinstance(key, symbolic.Pred) else key
            pred = key if self.pred is None else (self.pred & key if isinstance(self.pred, symbolic.Pred)
                                                  else key & self.pred)
            return View(self.storage, self.off_p, self.off_f, self.dims, self.bir_dtype, self.dyn, (), pred)
        self.raise_pred()
        return index_view(self, key)

    def __setitem__(self, key, value):
        registry.statement("assign")(self[key], value)

    def broadcast_to(self, shape):
        """An HBM view broadcast along its size-1 dims (step 0: a DMA reads the same elements again, as NKI's
        tensor.broadcast_to before a load); a tile: nl.broadcast_to."""
        if self.storage.buffer != "hbm":
            return _nl("broadcast_to")(self, shape)
        shape = tuple(int(s) for s in shape)
        if len(shape) != len(self.dims) or any(n != m and n != 1 for (_, n, _), m in zip(self.dims, shape)):
            raise KernelError(f"{self.name} {list(self.shape)} does not broadcast to {list(shape)}")
        dims = [(st if n == m else 0, m, p) for (st, n, p), m in zip(self.dims, shape)]
        return self.like(self.off_p, self.off_f, dims)

    def reshape(self, shape):
        return _nl("reshape")(self, shape)

    # --- NKI's access-pattern API (NkiTensor.ap / view; nl_views.py)
    def ap(self, pattern, offset=None, scalar_offset=None, vector_offset=None, indirect_dim=0, dtype=None):
        return registry.statement("ap")(self, pattern, offset, scalar_offset, vector_offset, indirect_dim, dtype)

    def view(self, dtype):
        return registry.statement("view_dtype")(self, dtype)

    reinterpret_cast = view

    def get_pattern(self):
        return registry.statement("get_pattern")(self)

    def is_indirect(self):
        return self.dyn is not None
    indirect = lambda self, index, num_elem=None: registry.statement("view.indirect")(self, index, num_elem)
    # NkiTensor's view primitives (nl_views.py)
    strides = property(lambda self: registry.statement("view.strides")(self))
    offset = property(lambda self: registry.statement("view.offset")(self))

    def is_contiguous(self):
        return registry.statement("view.is_contiguous")(self)

    def slice(self, dim, start, end, step=1):
        return registry.statement("view.slice")(self, dim, start, end, step)

    def select(self, dim, index):
        return registry.statement("view.select")(self, dim, index)

    def vector_select(self, dim, vector_offset):
        return registry.statement("view.vector_select")(self, dim, vector_offset)

    def permute(self, dims):
        return registry.statement("view.permute")(self, dims)

    def broadcast(self, dim, size):
        return registry.statement("view.broadcast")(self, dim, size)

    def expand_dim(self, dim):
        return registry.statement("view.expand_dim")(self, dim)

    def squeeze_dim(self, dim):
        return registry.statement("view.squeeze_dim")(self, dim)

    def reshape_dim(self, dim, shape):
        return registry.statement("view.reshape_dim")(self, dim, shape)

    def flatten_dims(self, start_dim, end_dim):
        return registry.statement("view.flatten_dims")(self, start_dim, end_dim)

    def rearrange(self, src_pattern, dst_pattern, fixed_sizes=None, **sizes):
        return registry.statement("view.rearrange")(self, src_pattern, dst_pattern, fixed_sizes, **sizes)

    # the legacy nki.tensor's methods (nl_views.py)
    def expand_dims(self, axis):
        return registry.statement("view.expand_dims")(self, axis)

    def assert_shape(self, shape):
        return registry.statement("view.assert_shape")(self, shape)

    def astype(self, dtype):
        return registry.statement("view.astype")(self, dtype)

    # --- operators: the nl functions, looked up in the registry
    def _op(self, name, other, reverse=False):
        f = _nl(name)
        return f(other, self) if reverse else f(self, other)

    def __add__(self, o):
        return self._op("add", o)

    def __radd__(self, o):
        return self._op("add", o, True)

    def __sub__(self, o):
        return self._op("subtract", o)

    def __rsub__(self, o):
        return self._op("subtract", o, True)

    def __mul__(self, o):
        return self._op("multiply", o)

    def __rmul__(self, o):
        return self._op("multiply", o, True)

    def __truediv__(self, o):
        return self._op("divide", o)

    def __rtruediv__(self, o):
        return self._op("divide", o, True)

    def __pow__(self, o):
        return self._op("power", o)

    def __neg__(self):
        return _nl("negative")(self)

    def __lt__(self, o):
        return self._op("less", o)

    def __le__(self, o):
        return self._op("less_equal", o)

    def __gt__(self, o):
        return self._op("greater", o)

    def __ge__(self, o):
        return self._op("greater_equal", o)

    def __and__(self, o):
        return self._op("bitwise_and", o)

    def __or__(self, o):
        return self._op("bitwise_or", o)

    def __xor__(self, o):
        return self._op("bitwise_xor", o)

    def __matmul__(self, o):
        return _nl("matmul")(self, o)

    def __iadd__(self, o):
        return registry.statement("accumulate")(self, o)

    def __isub__(self, o):
        registry.statement("assign")(self, _nl("subtract")(self, o))
        return self

    def __imul__(self, o):
        registry.statement("assign")(self, _nl("multiply")(self, o))
        return self

    __hash__ = object.__hash__


def _slice_size(k, n, what):
    if (k.start is None or type(k.start) is int) and (k.stop is None or type(k.stop) is int) and \
            (k.step is None or type(k.step) is int and k.step > 0):
        # Plain numbers (`t[...]`, `t[:, 0:64]`): the same as below without building index expressions, which was
        # a few per cent of tracing a 10,000-instruction kernel.
        start = 0 if k.start is None else k.start
        step = 1 if k.step is None else k.step
        return Idx(start), max(0, ((n if k.stop is None else k.stop) - start + step - 1) // step), step
    start = Idx.of(0 if k.start is None else k.start)
    stop = Idx.of(n if k.stop is None else k.stop)
    step = 1 if k.step is None else int(k.step)
    if step <= 0:
        raise Unsupported(f"a slice step must be positive, got {step} ({what})")
    extent = stop - start
    if not extent.is_const():
        raise KernelError(f"the slice {k.start}:{k.stop} of {what} has a size that depends on a loop variable; "
                          "tile sizes are static")
    if start.axes:
        raise Unsupported(f"an nl.arange index inside a slice of {what}")
    return start, max(0, (extent.c + step - 1) // step), step


def _pending(checks, base, terms, n, what, d, dims):
    """An index range check for tensor dim d (size n), kept when the index leaves [0, n) somewhere over the loops'
    ranges: a mask= on the call that takes the view may still make it hold (clips.Check)."""
    c = Check(d, n, base, terms, what)
    lo, hi = c.reach(dims, bounds) or (0, 0)
    if lo < 0 or hi >= n:
        checks.append(c)


def _gather_view(v, key, what):
    """An HBM tensor indexed by an SBUF tile of per-partition indices at one dim (the legacy NKI indirect DMA,
    `t[idx_tile, i_f]`, nl.load / nl.store "Indirect DMA" examples): partition p of the result is index idx[p] of
    that dim; the other indices give the start and the free dims, as in any view. The view a .ap(vector_offset=)
    builds (an Indirect whose rows step that dim)."""
    at = [d for d, k in enumerate(key) if isinstance(k, View)]
    if len(at) > 1:
        raise Unsupported(f"{what}: {len(at)} dims indexed by tiles; an indirect DMA gathers along one dim")
    d, idx = at[0], key[at[0]]
    if v.storage.onchip:
        raise KernelError(f"{what}: a tile as an index reads an HBM tensor (an indirect DMA); {v.name} is in "
                          f"{v.buffer.upper()}")
    if v.dyn is not None:
        raise KernelError(f"{what}: {v.name} already has a run-time offset; an indirect view is not indirected again")
    integer = idx.bir_dtype.startswith(("int", "uint"))
    if not idx.storage.onchip or len(idx.shape) != 2 or idx.shape[1] != 1 or not integer:
        raise KernelError(f"{what}: the index {idx.name} {list(idx.shape)} {idx.bir_dtype} must be an SBUF tile of "
                          "integers of shape [P, 1], one index per partition")
    pnum, step = idx.shape[0], v.dims[d][0]
    advanced = any(isinstance(k, Idx) and k.axes for k in key if not isinstance(k, View))
    here = Idx(0, None, None, {-2: pnum, -1: 1}) if advanced else 0
    w = index_view(v, key[:d] + (here,) + key[d + 1:])
    dims = list(w.dims)
    if not advanced:
        dims.insert(0, (step, pnum, False))
    elif len(dims) >= 2 and dims[0][:2] == (0, pnum):
        dims[0] = (step, pnum, False)
    else:
        raise Unsupported(f"{what}: the index tile {idx.name} gives the partitions of the result; index the other "
                          "dims by integers, slices or free-dim nl.arange ([None, :]) expressions")
    return View(w.storage, w.off_p, w.off_f, dims, w.bir_dtype, Indirect(index=idx, stride=step), w.oob)


def _all_of(key, ndim):
    """Whether index `key` (a tuple) takes every element: full slices (`:`), at most one `...`, no more than ndim."""
    dots = sum(k is Ellipsis for k in key)
    return dots <= 1 and len(key) - dots <= ndim and all(
        k is Ellipsis or type(k) is slice and k.start is None and k.stop is None and k.step is None for k in key)


def index_view(v, key):
    what = f"tensor {v.name}"
    v.raise_oob()
    if isinstance(key, View) or isinstance(key, tuple) and any(isinstance(k, View) for k in key):
        return _gather_view(v, key if isinstance(key, tuple) else (key,), what)
    if v.dyn is not None and v.dyn.index is not None:
        raise KernelError(f"indexing {what}, a gather / scatter view (vector_offset=): an indirect view is not sliced "
                          "further (NKI NkiTensor.is_indirect)")
    key = key if isinstance(key, tuple) else (key,)
    if _all_of(key, len(v.dims)):
        # `t[...]`, `t[:, :]`: every dim whole (a mask's clip dropped, as a slice drops it), new offset objects.
        return View(v.storage, _idx(v.off_p.c, v.off_p.loop, v.off_p.axes, v.off_p.sizes),
                    _idx(v.off_f.c, v.off_f.loop, v.off_f.axes, v.off_f.sizes),
                    [(st, int(n), p) for st, n, p in v.dims], v.bir_dtype, v.dyn, ())
    if any(k is Ellipsis for k in key):
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (len(v.dims) - len(key) + 1) + key[i + 1:]
    if len(key) > len(v.dims):
        raise KernelError(f"{len(key)} indices for {what} of {len(v.dims)} dims {list(v.shape)}")
    advanced = any(isinstance(k, Idx) and k.axes for k in key)
    off_p, off_f = v.off_p, v.off_f
    checks = []

    def move(step, part, e):
        nonlocal off_p, off_f
        if part:
            off_p = off_p + e * step
        else:
            off_f = off_f + e * step

    dims = []
    if not advanced:
        key = key + (slice(None),) * (len(v.dims) - len(key))
        # An integer index drops its dim, except on chip (NKI language guide, "The partition dimension is special"):
        # the partition dim stays at size 1, and a tile stays at least 2-D (the last free dim indexed kept at 1).
        onchip, kept = v.storage.onchip, None
        for d, (k, (step, num, part)) in enumerate(zip(key, v.dims)):
            if isinstance(k, slice):
                start, size, sstep = _slice_size(k, num, what)
                move(step, part, start)
                dims.append((step * sstep, size, part))
                if size > 0:
                    lo, hi = bounds(start)  # the check _pending makes, without building it when it holds
                    if lo < 0 or hi + sstep * (size - 1) >= num:
                        _pending(checks, start, [(len(dims) - 1, sstep)], num, what, d, dims)
            else:
                e = Idx.of(k)
                lo, hi = bounds(e)
                if lo < 0 or hi >= num:
                    _pending(checks, e, [], num, what, d, dims)
                move(step, part, e)
                if onchip and part:
                    dims.append((step, 1, True))
                elif onchip:
                    kept = (len(dims), (step, 1, False))
        if onchip and kept is not None and len(dims) < 2 <= len(v.dims):
            dims.insert(*kept)
        return View(v.storage, off_p, off_f, dims, v.bir_dtype, v.dyn, tuple(checks))
    # Advanced: every index an expression; the result has their broadcast shape, then the dims not indexed.
    if any(isinstance(k, slice) for k in key):
        raise Unsupported(f"mixing slices and nl.arange / nl.mgrid indices on {what}: give every dim as an "
                          "nl.arange expression (or every dim as a slice)")
    idx = [Idx.of(k) for k in key]
    sizes = {}
    for e in idx:
        sizes = _broadcast_sizes(sizes, e.sizes)
    R = max([-p for p in sizes] + [0])
    res = [[0, sizes.get(r - R, 1), None] for r in range(R)]
    for d, (e, (step, num, part)) in enumerate(zip(idx, v.dims)):
        move(step, part, _idx(e.c, e.loop, _EMPTY, _EMPTY))
        for p, c in e.axes.items():
            r = res[p + R]
            if r[2] is not None and r[2] != part:
                raise Unsupported(f"one index dim of {what} runs over both its partition and a free dim")
            r[0] += c * step
            r[2] = part
    dims = [(s, n, bool(p)) for s, n, p in res]
    dims += list(v.dims[len(key):])
    for d, (e, (_, num, _)) in enumerate(zip(idx, v.dims)):
        _pending(checks, _idx(e.c, e.loop, _EMPTY, _EMPTY), [(p + R, c) for p, c in e.axes.items()], num, what, d,
                 dims)
    return View(v.storage, off_p, off_f, dims, v.bir_dtype, v.dyn, tuple(checks))


# ---------------------------------------------------------------------------------------------------- trace tree
class NkiLoop:
    """A loop of the kernel as NKI sees it (the sanitizer's unit: BIR debug.nki): affine_range, sequential_range or
    fori_loop, traced as one BIR loop or unrolled (then each call of the range is a loop of its own, its trips
    numbered 0, 1, ...)."""

    def __init__(self, trace, kind, where, loop=None, start=0, step=1):
        self.id = trace.next_nki_loop
        self.start, self.step = start, step
        trace.next_nki_loop += 1
        self.kind = {"affine_range": "affine", "sequential_range": "sequential"}.get(kind, "sequential")
        self.line = where[1] if where else -1
        self.var = ""
        if where:
            m = re.match(r"\s*for\s+([A-Za-z_]\w*)\s+in\b", linecache.getline(where[0], where[1]))
            self.var = m.group(1) if m else ""
        self.loop = loop  # the traced Loop, or None when unrolled


class Op:
    """One instruction: its BIR type, operands (View or ("imm", value)), fields, engine, and the kernel line."""
    __slots__ = ("type", "ins", "outs", "fields", "engine", "where", "what", "kind", "scope", "first_of", "extra")

    def __init__(self, type_, ins, outs, fields, engine, where, what, kind="compute"):
        self.type, self.ins, self.outs, self.fields, self.engine = type_, ins, outs, fields, engine
        self.where, self.what, self.kind = where, what, kind
        self.scope = None
        self.first_of = None  # a Loop whose first trip starts this matmul's accumulation group
        self.extra = {}


class Block:
    def __init__(self, loop=None):
        self.loop = loop
        self.items = []


class Loop:
    """A traced BIR loop: trips start, start + step, ... < stop. key and trip0: the nl.affine_range /
    sequential_range loop it is a segment of (loop_plan) and the index of its first trip there; split: one of the
    two loops a split makes of a segment (loop_plan: i = c * u + w), which is not cut or split again."""

    def __init__(self, trace, kind, start, stop, step, where, key=None, trip0=0, split=False, nki=None):
        self.trace = trace
        self.var = len(trace.loops)
        self.kind, self.start, self.stop, self.step, self.where = kind, start, stop, step, where
        self.trips = max(0, (stop - start + step - 1) // step)
        self.key, self.trip0, self.split = key, trip0, split
        self.body = Block(self)
        self.parent = trace.stack[-1].loop
        trace.loops.append(self)
        self.nki = nki or NkiLoop(trace, kind, where, self, start, step)  # the kernel loop it traces (a segment's)


class Trace:
    def __init__(self, kernel_name):
        self.kernel_name = kernel_name
        self.root = Block(None)
        self.stack = [self.root]
        self.loops = []
        self.storages = []
        self.names = set()
        self.next_suffix = {}  # base name -> the next suffix to try (names stay O(1) each)
        self.broken = None  # a loop left by break / return
        self.grid = ()
        self.program_ids = ()
        self.unroll = False  # nl.affine_range / sequential_range as Python ranges (NeedsUnroll)
        self.cores = 1  # a launch grid's nl.nc(n) axis: the kernel runs on n cores, its program_id the shard id
        # Loop plans (loop_plan.py): the plans this trace follows, by loop key; what it asks of the next trace.
        self.plan = {}
        self.requests = {}
        self.segment = None  # the key of the loop segment being traced (None: the kernel's top level)
        self.key_counts = {}  # (segment, source line) -> loops of that line traced there so far
        self.starts = {}  # loop key -> the marker op where its first segment starts (nl.loop_reduce's identity)
        self.call = {}  # the NKI call being traced (nl_common.api_call): "drop" (its mask holds nowhere), ...
        # The kernel loops being traced, outermost first: (NkiLoop, trip) -- trip None for a traced loop (its trip
        # is the BIR loop's, emit_bir.py), the trip number for an unrolled one or a peeled trip, (a, ((Loop, coef),
        # ...)) for a segment of a loop plan (trip a + the sum of its BIR loops' trips times coef).
        self.nki_stack = []
        self.next_nki_loop = 0
        self.registers = []  # the virtual registers (dynamic.Register), in order of allocation
        self.arch = "trn1"  # the architecture the kernel is traced for, and its NeuronCore generation (arch core_gen)
        self.core_gen = 2
        # Bounded work and memory (api.trace_kernel sets both; None: unbounded): loop trips unrolled in Python and
        # launch-grid instances traced count against max_instructions, as the run counts the dynamic instructions
        # they become; the instructions recorded against max_static, the most a BIR program holds.
        self.max_instructions = None
        self.max_static = None
        self.expanded = 0
        self.recorded = 0

    def expand(self, count, what, where):
        """`count` more unrolled trips or grid instances (`what`, at the kernel's `where`), refused past the budget
        before any of them is traced."""
        self.expanded += count
        if self.max_instructions is not None and self.expanded > self.max_instructions:
            raise KernelError(f"{what}: {self.expanded:,} unrolled trips and launch-grid instances in all, more than "
                              f"the {self.max_instructions:,} instructions one run may execute (--max-instructions, "
                              "max_instructions=)", where)

    def var_range(self, v):
        if v == SHARD:
            return 0, self.cores - 1
        L = self.loops[v]
        if L.trips is None:
            raise Unsupported("the variable of a dynamic loop in an index expression (it is a register)")
        return L.start, L.start + L.step * max(L.trips - 1, 0)

    # --- loop plans (loop_plan.py)
    def loop_key(self, where):
        k = (self.segment, where)
        n = self.key_counts.get(k, 0)
        self.key_counts[k] = n + 1
        return (self.segment, where, n)

    def request(self, key, cuts=(), split=None):
        """Asks the next trace to cut loop `key` at these trips, or to split its segment (first trip, factor)."""
        p = self.requests.setdefault(key, loop_plan.Plan())
        p.cuts.update(cuts)
        if split is not None:
            p.splits[split[0]] = split[1]

    def request_split(self, var, coef, c, const):
        """`e // c` of e = const + coef * (loop variable var): asks for var's loop split so that the quotient is a
        loop variable (loop_plan.split_for_floordiv); whether it could (else the kernel is unrolled)."""
        if var == SHARD:
            return False
        L = self.loops[var]
        r = loop_plan.split_for_floordiv(Idx(const, {var: coef}), c, L, var)
        if r is None or L.split:
            return False
        self.request(L.key, split=(L.trip0, r))
        return True

    def unique(self, base):
        base = re.sub(r"[^A-Za-z0-9_]", "_", base) or "t"
        name, k = base, self.next_suffix.get(base, 1)
        while name in self.names:
            name = f"{base}_{k}"
            k += 1
        self.next_suffix[base] = k
        self.names.add(name)
        return name

    def emit(self, op):
        if self.broken is not None:
            raise Unsupported("break or return inside an nl.affine_range / nl.sequential_range body: the body is "
                              "traced once as one BIR loop", self.broken)
        self.recorded += 1
        if self.max_static is not None and self.recorded > self.max_static:
            raise KernelError(f"the kernel records more than {self.max_static:,} instructions (the most a BIR program "
                              "holds): unrolled loops or launch-grid instances grow it past that here")
        op.scope = self.stack[-1].loop
        op.extra["nki"] = tuple((info, trip) for info, trip in self.nki_stack)
        self.stack[-1].items.append(op)
        return op


def new_storage(shape, bir_dtype, buffer, name=None, kind="internal", where=None):
    tr = current("creating a tensor")
    where = where or source_location()
    if buffer not in _BUFFERS:
        raise Unsupported(f"buffer {buffer!r}: the front end places tensors in nl.sbuf, nl.psum, nl.hbm, "
                          "nl.shared_hbm or nl.private_hbm")
    shape = tuple(shape)
    for s in shape:
        if not _is_int(s) or int(s) <= 0:
            raise KernelError(f"a tensor shape holds positive integers, got {list(shape)}", where)
    shared = tr.__dict__.get("shared_hbm")
    base = name or name_from_source(where, buffer)
    if shared and buffer in ("hbm", "shared_hbm", "private_hbm") and kind == "internal" and \
            not (buffer == "private_hbm" and tr.__dict__.get("shard", 0)):
        # A launch-grid instance after the first: its HBM allocation of the first instance's name, shape and dtype
        # is that tensor (one shared tensor that every instance writes its part of); another is its own, as is a
        # private_hbm tensor on another core.
        for k, s in enumerate(shared):
            if s.__dict__["base"] == base and s.shape == shape and s.dtype == bir_dtype:
                tr.__dict__.setdefault("reused", set()).add(s.id)
                return shared.pop(k)
    s = Storage(tr, tr.unique(base), buffer, shape, bir_dtype, kind, where)
    s.__dict__["base"] = base
    return s
