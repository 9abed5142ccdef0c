"""Kernel to BIR: a finished trace emitted as BIR through the builder and the lowering library (neuronsim._core.builder
/ .lowering, the C++ of include/neuronsim/builder.hpp and include/neuronsim/lowering.hpp that the workload generator
uses too). Not to be confused with that library itself (lowering/) or with the simulator's BIR-to-stream step.
docs/nki-lowering.md states every rule with its source. In short:

- HBM tensors: the kernel's arguments are ExternalInput (ExternalOutput when the kernel writes them), the tensors it
  returns ExternalOutput, other HBM tensors Internal DRAM.
- SBUF / PSUM: one physical tensor per tile; a tile declared in a loop body gets the loop's B rotating buffers
  (lowering.rotating_sbuf / rotating_psum), B = min(lowering.sbuf_buffers(...), lowering.psum_buffers(...)) over the
  loop's own tiles against everything declared outside it. More than the budget (lowering.USABLE_SBUF_BYTES per
  partition, 8 PSUM banks of 2 KiB) is a KernelError naming the tensors.
- Loops: every traced loop is lowering.pipelined_loop (pipelined_loop_first when its first trip starts a PSUM
  accumulation group): loads into the loop's own tiles from tensors the kernel never writes run B - 1 trips ahead.
- Loads and stores: lowering.load / lowering.store (one DMA each, SP, the compiler's queues).
- Every instruction carries its kernel line as BIR debug information (the profile's source lines).
"""
from .. import _core
from . import dtypes, emit_dynamic
from .errors import KernelError
from .symbolic import SHARD
from .tracer import Loop, View

_B = _core.builder
_L = _core.lowering
PSUM_BANK_BYTES = 2048  # per partition (reference neuron-arch.md 1.4)
PSUM_BANKS = 8


class Lowered:
    """The lowered kernel: the builder (its BIR), and the names of its input and output tensors in argument order."""

    def __init__(self, builder, inputs, outputs, label):
        self.builder, self.inputs, self.outputs, self.label = builder, inputs, outputs, label
        self.constants = {}  # name -> the array an nl.shared_constant holds, as the run takes it


def _const_bits(data, bir):
    import numpy as np
    if bir in ("bfloat16", "float8e4", "float8e5", "float8_e4m3fn"):
        return _core.from_float32(np.asarray(data, dtype=np.float32), bir)
    return np.ascontiguousarray(np.asarray(data).astype(dtypes.numpy_of(bir)))


def _walk(block, fn):
    for item in block.items:
        if isinstance(item, Loop):
            fn(item)
            _walk(item.body, fn)
        else:
            fn(item)


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


def _inside(scope, loop):
    """Whether a tile declared in `scope` (a Loop or None) is declared inside `loop`."""
    while scope is not None:
        if scope is loop:
            return True
        scope = scope.parent
    return False


def _banks(s):
    return max(1, -(-s.bytes_per_partition // PSUM_BANK_BYTES))


class _Alloc:
    """Buffers per loop and the physical tensors of every on-chip tile."""

    def __init__(self, trace, used):
        self.trace = trace
        self.tiles = [s for s in trace.storages if s.onchip and s.id in used]
        self.buffers = {}  # loop var -> B
        for L in self._loops_top_down(trace.root):
            if emit_dynamic.is_dynamic(L):  # its tiles are allocated once and reused by every trip
                self.buffers[L.var] = 1
                continue
            own = [s for s in self.tiles if s.scope is L]
            sb = [s for s in own if s.buffer == "sbuf"]
            ps = [s for s in own if s.buffer == "psum"]
            B = 4
            if sb:
                slot = sum(s.bytes_per_partition for s in sb)
                fixed = sum(s.bytes_per_partition * self._b(s) for s in self.tiles
                            if s.buffer == "sbuf" and s.scope is not L)
                B = min(B, _L.sbuf_buffers(L.trips, slot, fixed))
            if ps:
                banks = sum(_banks(s) for s in ps)
                other = sum(_banks(s) * self._b(s) for s in self.tiles if s.buffer == "psum" and s.scope is not L)
                B = min(B if sb else 8, _L.psum_buffers(L.trips, banks, other))
            if not sb and not ps:
                B = 1
            self.buffers[L.var] = B
        self.alias = {}  # storage id -> the storage whose buffer it shares
        if not self._fits():
            self._share_by_lifetime()
        self._check_budget()

    def _fits(self):
        sb = sum(s.bytes_per_partition * self._b(s) for s in self.tiles if s.buffer == "sbuf")
        ps = sum(_banks(s) * self._b(s) for s in self.tiles if s.buffer == "psum")
        return sb <= _L.USABLE_SBUF_BYTES and ps <= PSUM_BANKS

    def _share_by_lifetime(self):
        """Tiles that do not fit get buffers shared by lifetime: tiles of one buffer, scope, shape and dtype whose
        lifetimes (first to last use in program order, a use inside a loop the tile is declared outside of counting
        for the whole loop) do not overlap take the same physical tensor, the simulator ordering the later tile's
        writes after the earlier one's reads (its memory dependencies). Kernels that fit are left as declared."""
        life = {}  # storage id -> [first, last] position
        pos = [0]

        def use(sid, lo, hi):
            a, b = life.get(sid, (lo, hi))
            life[sid] = (min(a, lo), max(b, hi))

        def visit(block, enclosing):
            for item in block.items:
                if isinstance(item, Loop):
                    start, pending = pos[0], []
                    visit(item.body, enclosing + [(item, start, pending)])
                    for sid in pending:  # used in the loop, declared outside it: live for the whole loop
                        use(sid, start, pos[0])
                    continue
                pos[0] += 1
                for v in item.ins + item.outs + emit_dynamic.tile_terms(item):
                    if not isinstance(v, View) or not v.storage.onchip:
                        continue
                    use(v.storage.id, pos[0], pos[0])
                    outer = next((e for e in enclosing if not _inside(v.storage.scope, e[0])), None)
                    if outer is not None:
                        outer[2].append(v.storage.id)
        visit(self.trace.root, [])
        groups = {}
        for s in self.tiles:
            if s.id not in life:
                continue
            a, b = life[s.id]
            key = (s.buffer, s.scope.var if s.scope is not None else None, s.dtype)
            groups.setdefault(key, []).append((a, b, s))
        self.size = {}  # representative id -> (partitions, row): the largest of the tiles that share it
        for items in groups.values():
            items.sort(key=lambda x: x[0])
            free_at = []  # (end, representative)
            for a, b, s in items:
                for k, (e, rep) in enumerate(free_at):
                    if e < a:
                        self.alias[s.id] = rep.id
                        free_at[k] = (b, rep)
                        p, r = self.size[rep.id]
                        self.size[rep.id] = (max(p, s.partitions), max(r, s.row))
                        break
                else:
                    free_at.append((b, s))
                    self.size[s.id] = (s.partitions, s.row)
        self.tiles = [s for s in self.tiles if s.id not in self.alias]

    def _loops_top_down(self, block):
        out = []
        for item in block.items:
            if isinstance(item, Loop):
                out.append(item)
                out.extend(self._loops_top_down(item.body))
        return out

    def _b(self, s):
        return self.buffers.get(s.scope.var, 1) if s.scope is not None else 1

    def rows(self, s):
        """(partitions, elements per partition) of the physical tensor of tile s (shared tiles: the largest)."""
        return self.__dict__.get("size", {}).get(s.id, (s.partitions, s.row))

    def bytes(self, s):
        return self.rows(s)[1] * dtypes.size(s.dtype)

    def banks(self, s):
        return max(1, -(-self.bytes(s) // PSUM_BANK_BYTES))

    def _check_budget(self):
        sb = [(s, self.bytes(s) * self._b(s)) for s in self.tiles if s.buffer == "sbuf"]
        total = sum(b for _, b in sb)
        if total > _L.USABLE_SBUF_BYTES:
            top = sorted(sb, key=lambda x: -x[1])[:6]
            names = ", ".join(f"{s.name} {list(s.shape)} {s.dtype} x{self._b(s)} ({s.where[0]}:{s.where[1]})"
                              if s.where else f"{s.name}" for s, _ in top)
            raise KernelError(f"SBUF overflow: the tiles need {total} bytes per partition, the budget is "
                              f"{_L.USABLE_SBUF_BYTES} (trn1's usable SBUF, reference neuron-arch.md 1.4); largest: "
                              f"{names}", top[0][0].where)
        ps = [(s, self.banks(s) * self._b(s)) for s in self.tiles if s.buffer == "psum"]
        banks = sum(b for _, b in ps)
        for s, _ in ps:
            if s.bytes_per_partition > PSUM_BANK_BYTES * PSUM_BANKS:
                raise KernelError(f"PSUM tile {s.name} {list(s.shape)} {s.dtype} needs {s.bytes_per_partition} bytes "
                                  f"per partition; PSUM holds {PSUM_BANK_BYTES * PSUM_BANKS}", s.where)
        if banks > PSUM_BANKS:
            names = ", ".join(f"{s.name} {list(s.shape)} x{self._b(s)} ({b} banks)" for s, b in ps)
            raise KernelError(f"PSUM overflow: the tiles need {banks} banks of 2 KiB per partition, PSUM has "
                              f"{PSUM_BANKS}: {names}", ps[0][0].where)


def emit_bir(trace, label, arg_names, outputs):
    """The trace as BIR: a Lowered whose builder holds the kernel, its inputs and outputs named in argument order."""
    b = _B.Builder(label)
    used = _used_storages(trace)
    alloc = _Alloc(trace, used)
    handles = {}  # storage id -> TensorHandle or Rotating
    inputs = []
    out_ids = [v.storage.id for v in outputs]
    for s in trace.storages:
        if s.buffer != "hbm" or (s.id not in used and s.kind != "input" and s.id not in out_ids):
            continue
        shape = list(s.shape)
        if s.id in out_ids or s.kind == "output":
            handles[s.id] = b.output(s.name, shape, s.dtype)
        elif s.kind in ("input", "const"):
            handles[s.id] = b.input(s.name, shape, s.dtype)
            inputs.append(s.name)
        else:
            handles[s.id] = b.dram(s.name, shape, s.dtype)
    for s in alloc.tiles:
        B = alloc._b(s)
        rows, row = alloc.rows(s)
        if s.buffer == "psum":
            # A PSUM tile takes whole 2 KiB banks: its buffers rotate over banks, as the generator's do (one
            # accumulation group per bank, reference neuron-arch.md 1.4).
            cols = alloc.banks(s) * PSUM_BANK_BYTES // dtypes.size(s.dtype)
            handles[s.id] = _L.rotating_psum(b, s.name, rows, cols, s.dtype, B)
        else:
            handles[s.id] = _L.rotating_sbuf(b, s.name, rows, row, s.dtype, B)
    for sid, rep in alloc.alias.items():
        handles[sid] = handles[rep]
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


class _Moved:
    """An op seen with other operand views (the same instruction otherwise)."""

    def __init__(self, op, ins, outs):
        self.__dict__.update({k: getattr(op, k) for k in op.__slots__})
        self.ins, self.outs = ins, outs


class _Ctx:
    def __init__(self, b, trace, alloc, handles):
        self.b, self.trace, self.alloc, self.handles = b, trace, alloc, handles
        self.loop_names = 0
        self.regs = emit_dynamic.Registers(trace)
        self.tmp = {}  # id(a [1, 1] tile an operand offsets by) -> the register it is read into (emit_dynamic)
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

    def ap(self, v, env, where, keep=False):
        s = v.storage
        h = self.handles[s.id]
        dims = [(st, n) for st, n, part in v.dims if not part]
        parts = [(st, n) for st, n, part in v.dims if part]
        run_time = emit_dynamic.run_time_start(v, env, self.tmp) if v.dyn is not None else 0
        if not s.onchip:
            # The first dim stays a pair of its own (a DMA's HBM side moves it across partitions); the rest merge.
            all_dims = [(st, n) for st, n, _ in v.dims] or [(1, 1)]
            dims = [all_dims[0]] + (self._merge(all_dims[1:]) or [(1, 1)])
            start = self.aff(v.off_f, env) + run_time
            return h.at_dtype(start, dims, v.bir_dtype) if v.bir_dtype != s.dtype else h.at(start, dims)
        if len(parts) > 1 or (parts and not v.dims[0][2]):
            raise KernelError(f"tile {s.name}: the partition dim must be the first dim of an access", where)
        slot = env[s.scope.var][1] if s.scope is not None else 0
        # Offsets and steps count the view's dtype: a view of another dtype (a reinterpretation, nl_views.py) scales
        # the physical row and the buffer slot by the ratio of the sizes (whole numbers: nl_views checks the row).
        esz, vsz = dtypes.size(s.dtype), dtypes.size(v.bir_dtype)
        phys_row, cols = h.cols * h.buffers * esz // vsz, h.cols * esz // vsz
        pstep, pnum = parts[0] if parts else (1, 1)
        start = self.aff(v.off_p, env) * phys_row + self.aff(v.off_f, env) + slot * cols + run_time
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
    def block(self, block, env, items=None):
        for item in items if items is not None else block.items:
            if isinstance(item, Loop):
                self.loop(item, env)
            else:
                self.op(item, env)

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
        if op.extra.get("dropped"):
            return
        if op.kind == "register":
            emit_dynamic.register_op(self, op, env)
            return
        self.tmp = emit_dynamic.load_tile_offsets(self, op, env)
        b = self.b
        where = op.where
        if op.type not in ("Matmult",):
            moved = self._partition_first(op.ins + op.outs)
            ins, outs = moved[:len(op.ins)], moved[len(op.ins):]
            if ins != op.ins or outs != op.outs:
                op = _Moved(op, ins, outs)
        if op.kind in ("load", "store") and op.type in ("Load", "Save"):
            src, dst = self.ap(op.ins[0], env, where), self.ap(op.outs[0], env, where)
            r = (_L.load if op.kind == "load" else _L.store)(b, src, dst)
        else:
            keep = op.type == "TensorReduce"
            r = b.add(op.type, [self.arg(x, env, where, keep) for x in op.ins],
                      [self.arg(x, env, where) for x in op.outs])
            for k, v in op.fields.items():
                r.set(k, v)
            if op.first_of is not None:
                r.set("start_tensor_calc", bool(first and first.get(op.first_of.var)))
            if op.engine:
                r.engine(op.engine)
            if op.kind == "dma":
                r.engine("SP")
        if where:
            r.source(where[0], where[1])

    def loop(self, L, env):
        if emit_dynamic.is_dynamic(L):
            emit_dynamic.loop(self, L, env)
            return
        B = self.alloc.buffers.get(L.var, 1)
        own = {s.id for s in self.alloc.tiles if s.scope is L}
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
                return bool(item.body.items) and not emit_dynamic.is_dynamic(item) and \
                    all(loads_ahead(i) for i in item.body.items)
            return (item.kind == "load" and item.type == "Load" and item.outs[0].storage.id in own and
                    item.ins[0].storage.id in self.read_only and item.outs[0].storage.id not in written_in_body
                    and not emit_dynamic.run_time_sources(item) & changing)

        def writes(item):
            if isinstance(item, Loop):
                for i in item.body.items:
                    writes(i)
            else:
                for v in item.outs:
                    written_in_body.add(v.storage.id)
        for item in L.body.items:
            if B > 1 and loads_ahead(item):
                ahead.append(item)
            else:
                rest.append(item)
            writes(item)
        first_group = any(not isinstance(i, Loop) and i.first_of is L for i in L.body.items)
        self.loop_names += 1
        name = f"l{L.where[1] if L.where else 0}_{self.loop_names}"

        def env_for(i, k, first=None):
            e = dict(env)
            e[L.var] = (i * L.step + L.start, k)
            return e

        def load(i, k):
            self.block(None, env_for(i, k), ahead)

        if first_group:
            def body(i, k, first):
                e = env_for(i, k)
                for item in rest:
                    if isinstance(item, Loop):
                        self.loop(item, e)
                    else:
                        self.op(item, e, {L.var: first})
            _L.pipelined_loop_first(self.b, name, L.trips, B, load, body)
        else:
            def body(i, k):
                self.block(None, env_for(i, k), rest)
            _L.pipelined_loop(self.b, name, L.trips, B, load, body)
