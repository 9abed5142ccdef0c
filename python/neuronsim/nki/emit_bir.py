"""Kernel to BIR: a finished trace emitted as BIR through the builder and the lowering library (neuronsim._core.builder
/ .lowering, the C++ of include/neuronsim/builder.hpp and include/neuronsim/lowering.hpp that the workload generator
uses too). Not to be confused with that library itself (lowering/) or with the simulator's BIR-to-stream step.
docs/nki-lowering.md states every rule with its source. In short:

- HBM tensors: the kernel's arguments are ExternalInput (ExternalOutput when the kernel writes them), the tensors it
  returns ExternalOutput, other HBM tensors Internal DRAM.
- SBUF / PSUM: placed by allocate.Allocation (liveness, rotating buffers per loop, spills, explicit placement);
  each unit of it is one placed BIR tensor, and its spill / reload / lazy Memset instructions sit among the items.
- Loops: every traced loop is lowering.pipelined_loop (pipelined_loop_first when its first trip starts a PSUM
  accumulation group, alone or with the first trips of the loops around it: _group_loops): loads into the loop's
  own tiles from tensors the kernel never writes run B - 1 trips ahead.
- Loads and stores: lowering.load / lowering.store (one DMA each, SP, the compiler's queues).
- Every instruction carries its kernel line as BIR debug information (the profile's source lines).
"""
import itertools
import math

from .. import _core
from . import dtypes, emit_dynamic
from .alloc_ops import Pseudo
from .allocate import Allocation
from .clips import clipped
from .errors import KernelError
from .symbolic import SHARD
from .tracer import Loop, Op, View

_B = _core.builder
_L = _core.lowering


class Lowered:
    """The lowered kernel: the builder (its BIR), and the names of its input and output tensors in argument order."""

    def __init__(self, builder, inputs, outputs, label):
        self.builder, self.inputs, self.outputs, self.label = builder, inputs, outputs, label
        self.constants = {}  # name -> the array an nl.shared_constant holds, as the run takes it


def _const_bits(data, bir):
    import numpy as np
    if bir in ("bfloat16", "float8e4", "float8e5", "float8_e4m3fn"):
        a = np.asarray(data)
        if a.dtype == dtypes.numpy_type(dtypes.from_bir(bir)):  # a bfloat16 / fp8 array of this type: its bits
            return np.ascontiguousarray(a).view(dtypes.numpy_of(bir))
        return _core.from_float32(np.asarray(a, dtype=np.float32), bir)
    return np.ascontiguousarray(np.asarray(data).astype(dtypes.numpy_of(bir)))


def _walk(block, fn):
    for item in block.items:
        if isinstance(item, Loop):
            fn(item)
            _walk(item.body, fn)
        else:
            fn(item)


def _group_loops(op):
    """The loops on whose first trip, all of them, matmul op starts its accumulation group: from its own out to
    op.first_of (nl_assign._matmul_into), innermost first. BIR carries the start as a plain boolean of the
    instruction (Matmult start_tensor_calc, reference bir-json.md 2.1; the START bit the encoder copies, reference
    neuronx-cc/arch/pe-engine.md "The Accumulate Chain"), no expression of the loop variables as MatmultSymbolic's
    tile_size_expr: so that trip is peeled at every level (pipelined_loop_first), and the rest keep false."""
    out, M = [], op.scope
    while M is not None:
        out.append(M)
        if M is op.first_of:
            return out
        M = M.parent
    return []


def _used_storages(trace):
    used = set()

    def visit(item):
        if isinstance(item, Loop) or item.extra.get("dropped"):
            return
        for v in item.ins + item.outs + emit_dynamic.tile_terms(item):
            if isinstance(v, View):
                used.add(v.storage.id)
    _walk(trace.root, visit)
    return used


def emit_bir(trace, label, arg_names, outputs):
    """The trace as BIR: a Lowered whose builder holds the kernel, its inputs and outputs named in argument order."""
    b = _B.Builder(label)
    used = _used_storages(trace)
    alloc = Allocation(trace, used)
    handles = {}  # storage id -> TensorHandle or Rotating
    inputs = []
    out_ids = [v.storage.id for v in outputs]
    for s in trace.storages:
        if s.buffer != "hbm" or (s.id not in used and s.kind != "input" and s.id not in out_ids):
            continue
        shape = list(s.shape)
        if s.__dict__.get("inout"):
            # An argument the kernel also writes: filled with the caller's data, written out after the run.
            handles[s.id] = b.inout(s.name, shape, s.dtype)
            inputs.append(s.name)
        elif s.id in out_ids or s.kind == "output":
            handles[s.id] = b.output(s.name, shape, s.dtype)
        elif s.kind in ("input", "const"):
            handles[s.id] = b.input(s.name, shape, s.dtype)
            inputs.append(s.name)
        else:
            handles[s.id] = b.dram(s.name, shape, s.dtype)
    alloc.emit_tensors(b)
    # The NKI tile each SBUF / PSUM tensor holds (its shape, rotating buffers) and the arguments the kernel writes in
    # place, as allocation debug.nki: the sanitizer's messages speak of the tile, and count the caller's data in an
    # in-place argument as written. Only a unit that holds its whole tile in the tile's own layout says so (a block
    # of a block tensor, a group, an explicit placement or a spill's staging tile is named by its BIR tensor).
    for u in alloc.units:
        st = u.storage
        if (u.explicit is not None or u.group is not None or u.temp or u.nest or u.handle is None
                or u.rows * u.cols < math.prod(st.shape) or st.shape[st.pdim] != u.rows):
            continue
        b.tensor_nki(u.handle.t.id, list(st.shape), st.pdim, u.buffers, u.cols)
    for s in trace.storages:
        if s.buffer == "hbm" and s.kind == "output" and s.name in arg_names and s.id in handles:
            b.tensor_nki(handles[s.id].id, argument=True)
    ctx = _Ctx(b, trace, alloc, handles)
    ctx.block(trace.root, {})
    outs = []
    for s in trace.storages:
        if s.buffer == "hbm" and (s.id in out_ids or s.kind == "output") and s.id in handles:
            outs.append(s.name)
    low = Lowered(b, inputs, outs, label)
    # nl.shared_constant data, as the run takes it (bf16 / fp8 as raw bits, the simulator's own rounding)
    for s in trace.storages:
        if s.kind == "const" and s.id in handles:
            low.constants[s.name] = _const_bits(s.__dict__["data"], s.dtype)
    return low


def _unclip(v, piece):
    """v with its clipped dims (a mask=: clips.Clipped) narrowed to what the instruction covers, its start moved to
    the first element covered; None when that is nothing."""
    if not any(clipped(n) for _, n, _ in v.dims):
        return v
    off_p, off_f, dims = v.off_p, v.off_f, []
    for st, n, part in v.dims:
        if clipped(n):
            lo, hi = n.span(piece)
            if hi <= lo:
                return None
            if part:
                off_p = off_p + lo * st
            else:
                off_f = off_f + lo * st
            n = hi - lo
        dims.append((st, n, part))
    return View(v.storage, off_p, off_f, dims, v.bir_dtype, v.dyn)


_REDUCE_OPS = {"add": "add", "max": "max", "min": "min", "mult": "mult"}


def _view_key(v):
    return (v.storage.id, v.off_p.c, tuple(sorted(v.off_p.loop.items())), tuple(sorted(v.off_p.axes.items())),
            v.off_f.c, tuple(sorted(v.off_f.loop.items())), tuple(sorted(v.off_f.axes.items())), tuple(v.dims),
            v.bir_dtype)


def _reduction(op):
    """(op, ins index) of an associative reduction step: a matmul folding into its accumulation group (-1: it reads
    its PSUM destination), or `acc = acc op x` / `acc = acc op c` by add, max, min or multiply (the NKI affine_range
    page's associative reductions); ("", -1) otherwise."""
    if op.type == "Matmult" and op.extra.get("accumulates"):
        return "add", -1
    if not op.outs or not isinstance(op.outs[0], View):
        return "", -1
    o = op.outs[0]
    if op.type == "TensorTensor" and op.fields.get("op") in _REDUCE_OPS and not op.fields.get("acc"):
        for k, x in enumerate(op.ins[:2]):
            if isinstance(x, View) and x.storage is o.storage and _view_key(x) == _view_key(o):
                return _REDUCE_OPS[op.fields["op"]], k
    if op.type == "TensorScalarPtr" and op.fields.get("op0") in _REDUCE_OPS and \
            op.fields.get("op1", "bypass") == "bypass" and len(op.ins) == 2 and isinstance(op.ins[0], View) and \
            not any(op.fields.get(f) for f in ("acc", "is_scalar_tensor_tensor", "is_tensor_tensor_scan")) and \
            op.ins[0].storage is o.storage and _view_key(op.ins[0]) == _view_key(o):
        return _REDUCE_OPS[op.fields["op0"]], 0
    return "", -1


class _Moved:
    """An op seen with other operand views (the same instruction otherwise)."""

    def __init__(self, op, ins, outs):
        self.__dict__.update({k: getattr(op, k) for k in Op.__slots__})
        self.ins, self.outs = ins, outs


class _Unit:
    """An allocation unit's BIR tensor and layout (its handle's fields, each a call into the builder to read)."""
    __slots__ = ("t", "cols", "buffers")

    def __init__(self, handle):
        self.t, self.cols, self.buffers = handle.t, handle.cols, handle.buffers


class _Ctx:
    def __init__(self, b, trace, alloc, handles):
        self.b, self.trace, self.alloc, self.handles = b, trace, alloc, handles
        self.loop_names = 0
        self.cur_op = None  # the trace's instruction being emitted (its operands' units, allocate.py)
        self.regs = emit_dynamic.Registers(trace)
        self.tmp = {}  # id(a [1, 1] tile an operand offsets by) -> the register it is read into (emit_dynamic)
        self.units = {}  # id(an allocation unit) -> _Unit
        self.group_loops = {}  # id(loop) -> _groups_in(loop)
        # Sources the kernel never writes: their loads may run ahead of the trips that consume them.
        self.read_only = {s.id for s in trace.storages if s.buffer == "hbm" and not s.written}

    # --- expressions
    def aff(self, e, env):
        if e.axes:
            raise KernelError("an nl.arange index left over in an access offset (internal)")
        a = _B.Aff(e.c)
        for v, c in e.loop.items():
            a = a + (_B.Aff.shard(self.trace.cores) if v == SHARD else env[v][0]) * c
        return a

    def _start(self, off_p, off_f, poff, phys_row, base, env):
        """aff(off_p + poff) * phys_row + aff(off_f) + base, with one builder term per loop variable: the same Aff
        (its terms are a map: the coefficients summed in Python first give the same map), without building the
        partial sums through the builder."""
        if off_p.axes or off_f.axes:
            raise KernelError("an nl.arange index left over in an access offset (internal)")
        c = (off_p.c + poff) * phys_row + off_f.c + base
        if not off_p.loop and not off_f.loop:
            return _B.Aff(c)
        coefs = {v: k * phys_row for v, k in off_p.loop.items()}
        for v, k in off_f.loop.items():
            coefs[v] = coefs.get(v, 0) + k
        a = _B.Aff(c)
        for v, k in coefs.items():
            a = a + (_B.Aff.shard(self.trace.cores) if v == SHARD else env[v][0]) * k
        return a

    def ap(self, v, env, where, keep=False):
        s = v.storage
        h = self.handles.get(s.id)
        if s.onchip:
            u = self.alloc.unit_of(self.cur_op, s)
            h = self.units.get(id(u))
            if h is None:  # the unit's tensor and layout, read from the builder once
                h = self.units[id(u)] = _Unit(u.handle)
            slot, v, poff = self.alloc.offsets(u, v, env)  # v in the unit's own layout
        dims, parts = [], []
        for st, n, part in v.dims:
            (parts if part else dims).append((st, n))
        run_time = emit_dynamic.run_time_start(v, env, self.tmp) if v.dyn is not None else None
        if not s.onchip:
            # The first dim stays a pair of its own (a DMA's HBM side moves it across partitions); the rest merge.
            all_dims = [(st, n) for st, n, _ in v.dims] or [(1, 1)]
            dims = all_dims if keep else [all_dims[0]] + (self._merge(all_dims[1:]) or [(1, 1)])
            start = self.aff(v.off_f, env) if run_time is None else self.aff(v.off_f, env) + run_time
            return h.at_dtype(start, dims, v.bir_dtype) if v.bir_dtype != s.dtype else h.at(start, dims)
        if len(parts) > 1 or (parts and not v.dims[0][2]):
            raise KernelError(f"tile {s.name}: the partition dim must be the first dim of an access", where)
        # Offsets and steps count the view's dtype: a view of another dtype (a reinterpretation, nl_views.py) scales
        # the physical row and the buffer slot by the ratio of the sizes (whole numbers: nl_views checks the row).
        esz, vsz = dtypes.size(s.dtype), dtypes.size(v.bir_dtype)
        phys_row, cols = h.cols * h.buffers * esz // vsz, h.cols * esz // vsz
        pstep, pnum = parts[0] if parts else (1, 1)
        if type(slot) is int and type(poff) is int:
            start = self._start(v.off_p, v.off_f, poff, phys_row, slot * cols, env)
        else:
            start = self.aff(v.off_p + poff, env) * phys_row + self.aff(v.off_f, env) + slot * cols
        if run_time is not None:  # (adding nothing gives the same Aff)
            start = start + run_time
        # A reduction counts its axes in pattern dims: its input keeps the free dims it has.
        free = (dims if keep else self._merge(dims)) or [(1, 1)]
        if v.bir_dtype != s.dtype:
            return h.t.at_dtype(start, [(pstep * phys_row, pnum)] + free, v.bir_dtype)
        return h.t.at(start, [(pstep * phys_row, pnum)] + free)

    @staticmethod
    def _merge(dims):
        """Adjacent dims that walk contiguously become one; size-1 dims go (the pattern's element order is kept)."""
        out = []
        for st, n in dims:
            if n == 1:
                continue
            if out and out[-1][0] == st * n:
                out[-1] = (st, out[-1][1] * n)
            else:
                out.append((st, n))
        return out

    def arg(self, x, env, where, keep=False):
        if not isinstance(x, View):  # a register or ("imm", value[, dtype])
            return emit_dynamic.arg(x)
        return _B.Builder.ap(self.ap(x, env, where, keep))

    # --- the tree
    def block(self, block, env, items=None, first=None):
        for item in items if items is not None else self.alloc.items(block):
            if isinstance(item, Loop):
                self.loop(item, env, first)
            else:
                self.op(item, env, first)

    @staticmethod
    def _partition_first(views):
        """Tiles whose partition dim is not their first (a block tile (blocks, par_dim(P), free) indexed whole): when
        every on-chip operand has it at the same position, that dim moves first in all of them -- the same
        permutation of every operand keeps their elements in correspondence."""
        on = [v for v in views if isinstance(v, View) and v.storage.onchip]
        at = {next((d for d, dim in enumerate(v.dims) if dim[2]), 0) for v in on}
        if len(at) != 1 or 0 in at:
            return views
        (d,) = at
        out = []
        for v in views:
            if isinstance(v, View) and len(v.dims) > d:
                dims = [v.dims[d]] + v.dims[:d] + v.dims[d + 1:]
                v = v.like(v.off_p, v.off_f, dims)
            out.append(v)
        return out

    def op(self, op, env, first=None):
        if isinstance(op, Pseudo):
            if op.when is None or bool((first or {}).get(op.when[0].var)) is op.when[1]:
                op.emit(self, env)
            return
        if op.extra.get("dropped"):
            return
        if op.kind == "shard_part":
            return self.shard_part(op.fields["shard"], op.fields["shards"])
        self.cur_op = op
        if op.kind == "register":
            emit_dynamic.register_op(self, op, env)
            return
        if op.kind == "loop_reduce":
            raise KernelError("nl.loop_reduce: its result must be assigned to the tile it reduces into "
                              "(dst[...] = nl.loop_reduce(x, op, loop_indices=[i]))", op.where)
        if not any(type(n) is not int and clipped(n) for v in op.ins + op.outs if isinstance(v, View)
                   for _, n, _ in v.dims):
            self._op(op, env, first)  # no mask= clip: the instruction as it is
            return
        # A two-axis mask= (clips.PairClip): the instruction once per piece of its valid set; a piece or a clip that
        # leaves nothing emits nothing.
        pairs = list({id(p): p for v in op.ins + op.outs if isinstance(v, View) for _, n, _ in v.dims
                      if clipped(n) for p, _ in n.pairs}.values())
        for combo in itertools.product(*(p.pieces for p in pairs)):
            piece = dict(zip(pairs, combo))
            views = [_unclip(v, piece) if isinstance(v, View) else v for v in op.ins + op.outs]
            if any(v is None for v in views):
                continue
            self._op(_Moved(op, views[:len(op.ins)], views[len(op.ins):]), env, first)

    def _op(self, op, env, first):
        self.tmp = emit_dynamic.load_tile_offsets(self, op, env)
        b = self.b
        where = op.where
        if op.type not in ("Matmult",):
            moved = self._partition_first(op.ins + op.outs)
            ins, outs = moved[:len(op.ins)], moved[len(op.ins):]
            if ins != op.ins or outs != op.outs:
                op = _Moved(op, ins, outs)
        if op.kind in ("load", "store") and op.type in ("Load", "Save") and not op.engine:
            src, dst = self.ap(op.ins[0], env, where), self.ap(op.outs[0], env, where)
            r = (_L.load if op.kind == "load" else _L.store)(b, src, dst)
        else:
            # A reduction counts its axes in pattern dims, a DMA transpose permutes them: their inputs keep the
            # dims they have.
            keep = op.type == "TensorReduce" or op.fields.get("mode") == "Transpose"
            r = b.add(op.type, [self.arg(x, env, where, keep) for x in op.ins],
                      [self.arg(x, env, where) for x in op.outs])
            for k, v in op.fields.items():
                if k == "rank_exprs":  # SendRecv's recv_from_rank / send_to_rank: QuasiAffineExprs (numbers here)
                    for key, rank in v.items():
                        r.set_expr(key, _B.Aff(rank))
                else:
                    r.set(k, v)
            if op.first_of is not None:
                loops = _group_loops(op)
                r.set("start_tensor_calc", bool(first and loops) and all(first.get(M.var) for M in loops))
            if op.engine:  # a DMA the kernel triggers on an engine: that engine's queue (sim/schedule.cpp default)
                r.engine(op.engine)
            elif op.kind == "dma":
                r.engine("SP")
        if where:
            r.source(where[0], where[1])
        self._nki(r, op, env)

    def _nki(self, r, op, env):
        """BIR debug.nki: the kernel loops around the instruction and its trip of each (an expression of the BIR
        loop variables, however the loop was pipelined or peeled; a number in an unrolled one), how many of them each
        operand's tile is declared inside, and the associative reduction it folds into (the sanitizer's
        loop-carried dependencies, docs/sanitizer.md)."""
        nest = op.extra.get("nki", ())
        reduce, reduce_in = _reduction(op)
        if not nest and not reduce:
            return
        loops = []
        for info, trip in nest:
            if trip is None:
                t = env[info.loop.var][2]
            elif isinstance(trip, tuple):  # a segment of a loop plan: its first trip + its BIR loops' trips
                t = _B.Aff(trip[0])
                for L, coef in trip[1]:
                    t = t + env[L.var][2] * coef
            else:
                t = _B.Aff(trip)
            loops.append((info.id, info.kind, info.line, info.var, info.start, info.step, t))
        ids = [info.id for info, _ in nest]
        local = []
        for x in list(op.ins) + list(op.outs):
            d = 0
            if isinstance(x, View):
                scope = x.storage.nki_scope
                while d < len(ids) and d < len(scope) and ids[d] == scope[d]:
                    d += 1
            local.append(d)
        r.nki(loops, local, reduce, reduce_in)

    def shard_part(self, s, n):
        """Where shard s's part of a kernel whose shards trace differently starts (shards.py; s == n: where the parts
        end). Each part is a basic block: part s - 1 ends with a jump past the parts, and part s starts with a branch
        on the core's shard id (an immediate ShardIDKind selects, Builder.shard_id) that skips it on the other
        cores -- a branch the simulator resolves for each core when it walks the program."""
        b = self.b
        if s > 0:
            b.add("UnconditionalBranch", [], []).set("target", "shard_parts_end")
        b.block(f"shard{s}" if s < n else "shard_parts_end")
        if s < n - 1:
            b.add("CompareAndBranch", [_B.Builder.shard_id(n), _B.Builder.imm(s, "int32")], []) \
                .set("comp_op", "IS_NEIMM").set("on_true", f"shard{s + 1}")

    def loop(self, L, env, first=None):
        if emit_dynamic.is_dynamic(L):
            emit_dynamic.loop(self, L, env)
            return
        B = self.alloc.buffers.get(L.var, 1)
        own = self.alloc.ahead(L)
        ahead, rest = [], []
        written_in_body = set()

        changing = set()  # registers and storages the body writes (a run-time start that reads one stays put)

        def collect(item):
            for i in item.body.items if isinstance(item, Loop) else [item]:
                if isinstance(i, Loop):
                    collect(i)
                else:
                    changing.update(emit_dynamic.writes_of(i))
        collect(L)

        def loads_ahead(item):
            """A load into this loop's own tile from a tensor the kernel never writes, that tile's first write in the
            body (or a loop of nothing but such loads): it may run B - 1 trips ahead -- unless its start reads a
            register or tile the body writes."""
            if isinstance(item, Loop):
                body = [i for i in item.body.items if isinstance(i, Loop) or not i.extra.get("dropped")]
                return bool(body) and not emit_dynamic.is_dynamic(item) and all(loads_ahead(i) for i in body)
            return (item.kind in ("load", "dma") and item.type in ("Load", "DMACopy") and
                    item.ins[0].storage.buffer == "hbm" and
                    item.outs[0].storage.onchip and item.outs[0].storage.id in own and
                    item.ins[0].storage.id in self.read_only and item.outs[0].storage.id not in written_in_body
                    and not emit_dynamic.run_time_sources(item) & changing)

        def writes(item):
            if isinstance(item, Loop):
                for i in item.body.items:
                    writes(i)
            else:
                for v in item.outs:
                    written_in_body.add(v.storage.id)
        for item in self.alloc.items(L.body):
            if B > 1 and loads_ahead(item):
                ahead.append(item)
            else:
                rest.append(item)
            writes(item)
        # Peeled when a matmul inside starts its accumulation group on the first trip of this loop and of every loop
        # between it and the group's outermost one (_group_loops), and those outer loops are on their first trip here.
        outer = first or {}
        first_group = any(all(outer.get(M.var) for M in loops[loops.index(L) + 1:])
                          for loops in self._groups_in(L))
        self.loop_names += 1
        name = f"l{L.where[1] if L.where else 0}_{self.loop_names}"

        def env_for(i, k, first=None):
            e = dict(env)
            e[L.var] = (i * L.step + L.start, k, i)  # value, rotating buffer, trip
            return e

        def load(i, k):
            self.block(None, env_for(i, k), ahead)

        if first_group:
            def body(i, k, first):
                e = env_for(i, k)
                self.block(None, e, rest, {**outer, L.var: first})
            _L.pipelined_loop_first(self.b, name, L.trips, B, load, body)
        else:
            def body(i, k):
                self.block(None, env_for(i, k), rest, {**outer, L.var: False} if first else None)
            _L.pipelined_loop(self.b, name, L.trips, B, load, body)

    def _groups_in(self, L):
        """The group loops (_group_loops) that hold L, of the matmuls in L's body and the loops inside it."""
        cache = self.group_loops
        if id(L) not in cache:
            out = []

            def visit(item):
                if not isinstance(item, Loop) and item.first_of is not None:
                    loops = _group_loops(item)
                    if L in loops:
                        out.append(loops)
            _walk(L.body, visit)
            if any(C is L for C in self.alloc.peeled):
                out.append([L])  # an allocator instruction emitted in the first trip of L only, or in the others
            cache[id(L)] = out
        return cache[id(L)]
