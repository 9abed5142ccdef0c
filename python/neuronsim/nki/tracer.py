"""The tracer: a kernel is called once with symbolic tensors and records instructions; it never computes a value.

- Storage: a tensor the kernel declares or is given (HBM, SBUF or PSUM), with the loop it was declared in.
- View: a storage seen through an index: a start offset (symbolic in the loop variables) and [step, num] dims, the
  partition dim marked. Every tile a kernel holds is a View; indexing a View gives a View.
- Trace: the instruction tree (ops and loops) being recorded; nl.affine_range / nl.sequential_range bodies are traced
  once with a symbolic loop variable and become one BIR loop (docs/nki-lowering.md).

Index expressions are symbolic.py's. The traced program knows no NKI call by name: a View's operators (t + u,
t[...] = v) call the nki.language functions the registry holds (registry.py).
"""
import linecache
import re

from . import dtypes, registry
from .errors import KernelError, Unsupported, source_location
from .symbolic import SHARD, Idx, ParDim, _broadcast_sizes, _is_int

_current = None  # the Trace being recorded


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
    steps in elements of bir_dtype (another dtype than the storage's: a reinterpretation of its bytes), and dyn, an
    Indirect when part of the start is known only at run time."""
    __slots__ = ("storage", "off_p", "off_f", "dims", "bir_dtype", "dyn")

    def __init__(self, storage, off_p, off_f, dims, bir_dtype, dyn=None):
        self.storage, self.off_p, self.off_f, self.dims, self.bir_dtype = storage, off_p, off_f, dims, bir_dtype
        self.dyn = dyn

    def like(self, off_p, off_f, dims):
        """This view with another offset and dims (the same storage, dtype and run-time part)."""
        return View(self.storage, off_p, off_f, dims, self.bir_dtype, self.dyn)

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


def _check_range(e, n, what, dim):
    lo, hi = bounds(e)
    if lo < 0 or hi >= n:
        raise KernelError(f"index out of range on {what}: dim {dim} has size {n}, the index reaches [{lo}, {hi}]")


def index_view(v, key):
    what = f"tensor {v.name}"
    if v.dyn is not None and v.dyn.index is not None:
        raise KernelError(f"indexing {what}, a gather / scatter view (vector_offset=): an indirect view is not sliced "
                          "further (NKI NkiTensor.is_indirect)")
    key = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in key):
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (len(v.dims) - len(key) + 1) + key[i + 1:]
    if len(key) > len(v.dims):
        raise KernelError(f"{len(key)} indices for {what} of {len(v.dims)} dims {list(v.shape)}")
    advanced = any(isinstance(k, Idx) and k.axes for k in key)
    off_p, off_f = v.off_p, v.off_f

    def move(step, part, e):
        nonlocal off_p, off_f
        if part:
            off_p = off_p + e * step
        else:
            off_f = off_f + e * step

    dims = []
    if not advanced:
        key = key + (slice(None),) * (len(v.dims) - len(key))
        for d, (k, (step, num, part)) in enumerate(zip(key, v.dims)):
            if isinstance(k, slice):
                start, size, sstep = _slice_size(k, num, what)
                if size > 0:
                    lo, hi = bounds(start)[0], bounds(start + (size - 1) * sstep)[1]
                    if lo < 0 or hi >= num:
                        raise KernelError(f"index out of range on {what}: dim {d} has size {num}, the index reaches "
                                          f"[{lo}, {hi}]")
                move(step, part, start)
                dims.append((step * sstep, size, part))
            else:
                e = Idx.of(k)
                _check_range(e, num, what, d)
                move(step, part, e)
        return v.like(off_p, off_f, dims)
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
        _check_range(e, num, what, d)
        move(step, part, Idx(e.c, e.loop))
        for p, c in e.axes.items():
            r = res[p + R]
            if r[2] is not None and r[2] != part:
                raise Unsupported(f"one index dim of {what} runs over both its partition and a free dim")
            r[0] += c * step
            r[2] = part
    dims = [(s, n, bool(p)) for s, n, p in res]
    dims += list(v.dims[len(key):])
    return v.like(off_p, off_f, dims)


# ---------------------------------------------------------------------------------------------------- trace tree
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
    def __init__(self, trace, kind, start, stop, step, where):
        self.trace = trace
        self.var = len(trace.loops)
        self.kind, self.start, self.stop, self.step, self.where = kind, start, stop, step, where
        self.trips = max(0, (stop - start + step - 1) // step)
        self.body = Block(self)
        self.parent = trace.stack[-1].loop
        trace.loops.append(self)


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
        self.stack[-1].items.append(op)
        return op


def name_from_source(where, default):
    """The variable a line assigns (`x_tile = nl.load(...)` -> x_tile), for tensor names in BIR and messages."""
    if where:
        text = linecache.getline(where[0], where[1])
        m = re.match(r"\s*([A-Za-z_]\w*)\s*(\[[^=]*\])?\s*(\+|-|\*)?=(?!=)", text)
        if m:
            return m.group(1)
    return default


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
    if shared and buffer in ("hbm", "shared_hbm", "private_hbm") and kind == "internal":
        # A launch-grid instance after the first: its n-th HBM allocation is the first instance's (one shared
        # tensor that every instance writes its part of).
        s = shared.pop(0)
        if s.shape != shape or s.dtype != bir_dtype:
            raise KernelError(f"launch-grid instances allocate different HBM tensors ({list(shape)} here, "
                              f"{list(s.shape)} in instance 0)", where)
        return s
    base = name or name_from_source(where, buffer)
    s = Storage(tr, tr.unique(base), buffer, shape, bir_dtype, kind, where)
    return s


# ---------------------------------------------------------------------------------------------------- loops
def loop_range(kind, args, where=None):
    """The iterator of nl.affine_range / nl.sequential_range: one trip, the loop variable symbolic."""
    if len(args) == 1:
        start, stop, step = 0, args[0], 1
    elif len(args) in (2, 3):
        start, stop, step = args[0], args[1], args[2] if len(args) == 3 else 1
    else:
        raise Unsupported(f"nl.{kind} takes (stop) or (start, stop[, step])")
    try:
        start, stop, step = int(start), int(stop), int(step)
    except Unsupported:
        raise Unsupported(f"nl.{kind} with a bound that depends on a loop variable: trip counts are static")
    if step <= 0:
        raise Unsupported(f"nl.{kind} with step {step}: steps are positive")
    where = where or source_location()
    if current(f"nl.{kind}").unroll:
        trips = range(start, stop, step)
        current().expand(len(trips), f"nl.{kind} of {len(trips):,} trips, unrolled (its variable is used as a Python "
                                     "value)", where)
        return iter(trips)
    return _loop_gen(kind, start, stop, step, where)


def _loop_gen(kind, start, stop, step, where):
    tr = current(f"nl.{kind}")
    L = Loop(tr, kind, start, stop, step, where)
    if L.trips == 0:
        return
    tr.stack[-1].items.append(L)
    tr.stack.append(L.body)
    try:
        yield Idx(0, {L.var: 1})
    except GeneratorExit:
        tr.broken = where
        if tr.stack and tr.stack[-1] is L.body:
            tr.stack.pop()
        raise
    tr.stack.pop()
