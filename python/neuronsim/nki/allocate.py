"""SBUF and PSUM allocation by liveness, with spills, as the Neuron compiler allocates (docs/nki-lowering.md 2).

Sources (neuronx-cc internals, reference README's book, walrus pages): the colorer gives each tensor space only
over its live range -- first write to last read, a use inside a loop the tensor is declared outside of extending it
to the whole loop (walrus/sbuf-liveness-interference.md "The loop-aware endpoint extension"); a block tensor is
allocated only for the blocks live at once ("the shrink factor", alloc_scan.py); PSUM is colored first, in whole
2 KiB banks (walrus/psum-allocator.md); what does not fit is spilled to a DRAM home by a Save after its last use
before the pressure and reloaded by a Load before its next use (walrus/sbuf-spill-select.md section 4); and
"couldn't allocate every tensor in SB and spilling can't help" is the one refusal.

Units. Every on-chip tile becomes one or more units, each one physical BIR tensor placed at a fixed address for a
live interval of program positions (alloc_scan.Scan):
- a tile declared in a loop body, or a block tensor whose blocks live one trip of a loop at a time (alloc_scan.Group),
  rotates over that loop's B buffers (the lowering library's rule: lowering.sbuf_buffers / psum_buffers, outer loops
  first, against the peak of what else is live during the loop). With B > 1 its buffers are in flight for the whole
  loop; with B = 1 it is live from its first to its last use in the body;
- a block tensor too large for the memory whose blocks each loop nest touches one trip at a time is kept in a DRAM
  home, each nest working on the trip's blocks in a unit of its own, reloaded before and saved after the trip
  (spills, the compiler's per-block live ranges split at the nests);
- a tile that does not fit when its turn comes makes room: the live tile, unused at that point, whose next use is
  farthest is spilled (the victim the compiler's cost picks may differ; the traffic is reported either way);
- an explicit placement (nki.compiler.sbuf/psum.mod_alloc / alloc, nl.ndarray(address=)) is placed as written
  (alloc_explicit.py).
"""
import math

from .. import _core
from . import dtypes
from .alloc_explicit import Explicit, check_explicit
from .alloc_nest import commit as nest_commit, plan as nest_plan
from .alloc_ops import Home, LazyMemset, Reload, Save
from .alloc_scan import Scan, block_runs, inside, lazy_memset, pieces, shrink, whole_only
from .budgets import SBUF_BYTES, later_arch, usable_sbuf  # noqa: F401 (SBUF_BYTES: hoist.py's)
from .errors import KernelError
from .symbolic import Idx
from .tracer import Loop

_L = _core.lowering
PSUM_BANK_BYTES = 2048  # per partition (reference neuron-arch.md 1.4; walrus/psum-allocator.md getPsumBankSize)
PSUM_BANKS = 8
ALIGN = 8  # SBUF byte addresses are multiples of 8 (walrus/sbuf-spill-select.md section 3, `aligned`)


class _Pressure(Exception):
    """A round of allocation that did not fit (allocate.Allocation._build): the error to give when nothing can be
    moved to a DRAM home, and what was live."""

    def __init__(self, error, mem, live, deficit):
        super().__init__(str(error))
        self.error, self.mem, self.live, self.deficit = error, mem, live, deficit


class Unit:
    """One physical on-chip tensor (see the module docstring). rows x cols elements per buffer, `buffers` buffers."""

    def __init__(self, alloc, storage, mem, rot, block, rows, cols, group=None, name=None):
        self.storage, self.mem, self.rot, self.block = storage, mem, rot, block
        self.rows, self.cols, self.group = rows, cols, group
        self.elems = cols  # elements per partition of the tile a buffer holds (cols: with a PSUM bank's padding)
        self.dtype = storage.dtype
        self.name = name or storage.name
        self.buffers = 1
        self.items = []  # indices of the items of `block` that use it
        self.accs = []  # the accesses it serves (alloc_scan.Access)
        self.start = self.end = 0
        self.addr = None  # bytes per partition (SBUF) or the first bank (PSUM)
        self.explicit = None
        self.handle = None
        self.home = None  # its DRAM home once spilled
        self.segment = 0
        self.dirty = True  # written since it was last loaded from its home
        self.temp = False  # a PSUM spill's SBUF staging tile (no access of the kernel's)
        self.nest = False  # a nest's unit of a tensor kept in a DRAM home (alloc_nest.py)
        self.tail_save = None  # the Save after its last use in a trip that carries it round the back edge
        if mem == "psum":
            self.banks = max(1, -(-cols * dtypes.size(self.dtype) // PSUM_BANK_BYTES))
            self.cols = self.banks * PSUM_BANK_BYTES // dtypes.size(self.dtype)

    def serve(self, accs):
        """The accesses this unit holds the values of (and so the items of its block that use it)."""
        self.accs = list(accs)
        self.items = sorted({a.item_in(self.block) for a in self.accs})

    @property
    def size(self):
        """Bytes per partition (SBUF) or banks (PSUM), all buffers."""
        if self.mem == "psum":
            return self.banks * self.buffers
        return -(-self.cols * dtypes.size(self.dtype) * self.buffers // ALIGN) * ALIGN

    def describe(self):
        s = self.storage
        where = f" ({s.where[0]}:{s.where[1]})" if s.where else ""
        unit = "banks" if self.mem == "psum" else "bytes"
        return f"{self.name} {list(s.shape)} {s.dtype} x{self.buffers} ({self.size} {unit}){where}"


class Allocation:
    """The units of a trace, placed (see the module docstring); emit_bir asks it where each access goes."""

    def __init__(self, trace, used):
        self.trace = trace
        self.sbuf_cap, self.arch = usable_sbuf(trace)
        self.scan = Scan(trace)
        self.tiles = [s for s in trace.storages if s.onchip and s.id in used]
        self.refined = set()  # storages allocated block run by block run (alloc_scan.pieces) to relieve pressure
        self.demoted = set()  # storages kept in a DRAM home nest by nest (alloc_nest.py) to relieve pressure
        # Next fit (_fit) spreads a recurring tile's instances as the compiler's rotation does, but can leave the
        # free bytes in pieces too small for a large tile; the rounds after a refusal pack without it (first fit).
        self.next_fit = True
        while True:
            try:
                self._build()
                return
            except _Pressure as p:
                if self.next_fit:
                    self.next_fit = False
                    continue
                sid = self._refinable(p)
                if sid is not None:
                    self.refined.add(sid)
                    continue
                sid = self._victim(p)
                if sid is None:
                    raise p.error
                self.demoted.add(sid)

    def _build(self):
        """One round of the compiler's spill fixpoint (walrus/sbuf-spill-select.md: allocate, and when a tile does
        not fit, change the program and allocate again): units, buffers, placement."""
        self.buffers = {}  # loop var -> B
        self.units = []
        self.by_storage = {}  # storage id -> [Unit]
        self.op_unit = {}  # (id(op), storage id) -> Unit, for storages with several units
        self.inserts = {}  # id(block) -> {item index: ([pseudo before], [pseudo after])}
        self.homes = []
        self.peeled = []  # loops whose first trip emit_bir peels for a Pseudo's `when` (alloc_nest.commit)
        self.mod_req = {}  # loop var -> the multiple of B its explicitly placed tiles need
        self.cursor = {}  # memory -> where the next placement starts looking (_fit)
        force_auto = self.trace.__dict__.get("force_auto_alloc", False)
        for s in self.tiles:
            self._make_units(s, force_auto)
        self._decide_buffers()
        for u in self.units:
            self._interval(u)
        check_explicit(self)
        self._place("psum")
        self._place("sbuf")
        self._map_ops()

    def _refinable(self, p):
        """A live tile of the pressure allocated a trip's blocks at once whose block runs, each allocated on its
        own (alloc_scan.pieces), hold fewer bytes at once -- no traffic, so tried before any spill; the largest."""
        best = None
        for u in p.live:
            s = u.storage
            if u.group is None or u.explicit is not None or u.temp or u.nest or u.mem != p.mem or \
                    s.id in self.refined or s.id in self.demoted:
                continue
            accs = self.scan.accesses.get(s.id, [])
            lazy = lazy_memset(s, accs)
            ps = pieces(s, accs[1:] if lazy is not None else accs, self.trace, lazy is not None)
            if ps is not None and max(g.E for g, _ in ps) < u.group.E and (best is None or u.size > best[0]):
                best = (u.size, s.id)
        return best[1] if best else None

    def _victim(self, p):
        """The tile to keep in a DRAM home nest by nest so that the next round fits: of the live tiles whose nests
        work block by block, the one moving the fewest bytes among those that free enough, else the one freeing
        most."""
        best = None
        for u in p.live:
            s = u.storage
            accs = self.scan.accesses.get(s.id, [])
            if u.explicit is not None or u.temp or s.id in self.demoted or u.mem != p.mem or \
                    u.nest or whole_only(s, accs):
                continue
            lazy = lazy_memset(s, accs)
            plan = nest_plan(self, s, accs[1:] if lazy is not None else accs, lazy)
            if plan is None:
                continue
            size = u.size if p.mem == "sbuf" else u.size * PSUM_BANK_BYTES
            freed = size - plan.staging
            key = (0, plan.traffic, -freed) if freed >= p.deficit else (1, -freed, plan.traffic)
            if freed > 0 and (best is None or key < best[0]):
                best = (key, s.id)
        return best[1] if best else None

    # ------------------------------------------------------------------------------------------------ units
    def unit(self, *args, **kw):
        """A new Unit (arguments as Unit's but the allocation), added."""
        return self._add(Unit(self, *args, **kw))

    def _add(self, u):
        self.units.append(u)
        self.by_storage.setdefault(u.storage.id, []).append(u)
        return u

    def _scope_block(self, s):
        return s.scope.body if s.scope is not None else self.trace.root

    def _make_units(self, s, force_auto):
        accs = self.scan.accesses.get(s.id, [])
        spec = s.__dict__.get("placement")
        if spec is not None and not force_auto:
            u = self._add(Unit(self, s, s.buffer, None, self._scope_block(s), s.partitions, s.row))
            u.explicit = Explicit(self, u, spec, accs)
            u.serve(accs)
            return
        if whole_only(s, accs):
            block = self._scope_block(s)
            u = self._add(Unit(self, s, s.buffer, s.scope, block, s.partitions, s.row))
            u.serve(accs)
            return
        lazy = lazy_memset(s, accs)
        rest = accs[1:] if lazy is not None else accs
        if s.id in self.demoted:
            nest_commit(self, nest_plan(self, s, rest, lazy), lazy)
            return
        g = shrink(s, rest, self.trace, lazy is not None)
        cap = PSUM_BANKS * PSUM_BANK_BYTES if s.buffer == "psum" else self.sbuf_cap
        whole = s.bytes_per_partition if g is None else g.E * dtypes.size(s.dtype)
        if s.id in self.refined or whole > cap:
            ps = pieces(s, rest, self.trace, lazy is not None)
            if ps is not None:
                for j, (g, run) in enumerate(ps):
                    u = self._add(Unit(self, s, s.buffer, g.loop, g.loop.body, s.partitions, g.E, g,
                                       name=self.trace.unique(f"{s.name}_p{j}") if j else s.name))
                    u.serve(run)
                    if lazy is not None:
                        self._lazy(u, lazy, run)
                return
        if g is not None and g.E * dtypes.size(s.dtype) > cap:
            p = nest_plan(self, s, rest, lazy)
            if p is not None:
                nest_commit(self, p, lazy)
                return
        if g is not None:
            u = self._add(Unit(self, s, s.buffer, g.loop, g.loop.body, s.partitions, g.E, g))
            u.serve(rest)
            if lazy is not None:
                self._lazy(u, lazy, rest)
            return
        runs = block_runs(s, rest, self.trace)
        if runs is not None:
            block = self._scope_block(s)
            for j, (g, run) in enumerate(runs):
                u = self._add(Unit(self, s, s.buffer, None, block, s.partitions, g.E, g,
                                   name=self.trace.unique(f"{s.name}_b{j}") if j else s.name))
                u.serve(run)
                if lazy is not None:
                    self._lazy(u, lazy, run)
            return
        if s.bytes_per_partition > cap:
            p = nest_plan(self, s, rest, lazy)
            if p is not None:
                nest_commit(self, p, lazy)
                return
        block = self._scope_block(s)
        u = self._add(Unit(self, s, s.buffer, s.scope, block, s.partitions, s.row))
        u.serve(accs)

    def _lazy(self, u, lazy, accs):
        """The nl.zeros of a block tensor allocated per trip: a Memset of the trip's blocks before their first
        access, unless that access overwrites them whole -- a write, or a matmul that starts its accumulation group
        in the trip (NKI nc_matmul "Accumulation mode": a group's first matmul overwrites the PSUM it writes). Whole
        means the tile's elements, not the rest of the PSUM bank the unit takes (walrus/psum-allocator.md: a
        tensor's footprint is rounded up to whole 2 KiB banks); the Memset covers those elements only."""
        first = accs[0]
        v = first.view
        count = 1
        for _, n, _ in v.dims:
            count *= n
        M = first.op.first_of
        starts_group = first.op.type == "Matmult" and (first.op.fields.get("start_tensor_calc") is True or (
            M is not None and M is not u.rot and (u.rot is None or inside(M, u.rot))))
        if (first.write and not first.read or starts_group) and count == u.rows * u.elems:
            lazy.op.extra["dropped"] = True
            return None
        lazy.op.extra["dropped"] = True
        m = LazyMemset(u, lazy.op)
        self._insert(u.block, first.item_in(u.block), before=m)
        return m

    def _insert(self, block, i, before=None, after=None):
        b, a = self.inserts.setdefault(id(block), {}).setdefault(i, ([], []))
        if before is not None:
            b.append(before)
        if after is not None:
            a.insert(0, after)

    def items(self, block):
        """The block's items with the allocator's instructions in their places."""
        ins = self.inserts.get(id(block))
        if not ins:
            return block.items
        out = []
        for i, item in enumerate(block.items):
            b, a = ins.get(i, ((), ()))
            out.extend(b)
            out.append(item)
            out.extend(a)
        return out

    # ------------------------------------------------------------------------------------------------ buffers
    def _loops(self, block, out):
        for item in block.items:
            if isinstance(item, Loop):
                out.append(item)
                self._loops(item.body, out)
        return out

    def _decide_buffers(self):
        """B per loop, outer loops first: the lowering library's rule over the loop's own units against the peak of
        the other units live during it (those of loops not yet decided at one buffer)."""
        for L in self._loops(self.trace.root, []):
            own = [u for u in self.units if u.rot is L and u.explicit is None]
            sb = [u for u in own if u.mem == "sbuf"]
            ps = [u for u in own if u.mem == "psum"]
            if L.trips is None:  # a dynamic loop: its tiles allocated once, reused by every trip (emit_dynamic.py)
                if self.mod_req.get(L.var, 1) > 1:
                    raise KernelError(f"an explicitly placed tile rotates over {self.mod_req[L.var]} buffers in a "
                                      "dynamic loop, whose tiles have one buffer: place it in one", L.where)
                self.buffers[L.var] = 1
                continue
            for u in self.units:
                self._interval(u)
            B = 4
            if sb:
                slot = sum(u.size for u in sb)
                B = min(B, _L.sbuf_buffers(L.trips, slot, self._peak("sbuf", L, own)))
            if ps:
                banks = sum(u.size for u in ps)
                B = min(B if sb else 8, _L.psum_buffers(L.trips, banks, self._peak("psum", L, own)))
            if not sb and not ps:
                B = 1
            req = self.mod_req.get(L.var, 1)
            if req > 1 and B % req:
                m = B * req // math.gcd(B, req)
                # The trips after the loop's whole groups are peeled, trip i in buffer i mod B (section 3 of
                # docs/nki-lowering.md), so B need not divide the trips. More than the loop's trips: its trips never
                # come back to a block, and one buffer index per trip (B = trips) places every trip's block.
                B = m if m <= L.trips else req if req <= L.trips else L.trips
            self.buffers[L.var] = B
            for u in own:
                u.buffers = B

    def _peak(self, mem, L, own):
        s0, s1 = self.scan.loop_extent[L.var]
        ev = []
        for u in self.units:
            if u.mem != mem or u in own or u.end < s0 or u.start > s1:
                continue
            ev.append((max(u.start, s0), u.size))
            ev.append((min(u.end, s1) + 1, -u.size))
        peak = cur = 0
        for _, d in sorted(ev, key=lambda e: (e[0], e[1])):
            cur += d
            peak = max(peak, cur)
        return peak

    def _interval(self, u):
        if u.rot is not None and u.buffers > 1:
            u.start, u.end = self.scan.loop_extent[u.rot.var]
        elif u.items:
            u.start = self.scan.item_range(u.block, u.items[0])[0]
            u.end = self.scan.item_range(u.block, u.items[-1])[1]

    # ------------------------------------------------------------------------------------------------ placement
    def _place(self, mem):
        """First fit in program order, spilling the live SBUF unit whose next use is farthest when a unit does not
        fit; PSUM units are not spilled (a PSUM accumulation group cannot be, walrus/psum-allocator.md)."""
        import heapq
        cap = PSUM_BANKS if mem == "psum" else self.sbuf_cap
        fixed = [u for u in self.units if u.mem == mem and u.explicit is not None]
        if not self.next_fit and self._place_largest_first(mem, cap, fixed):
            return
        todo = [(u.start, -u.size, k, u) for k, u in enumerate(self.units) if u.mem == mem and u.explicit is None]
        heapq.heapify(todo)
        count = len(self.units)
        active, placed, sweep = [], [], 0
        while todo:
            _, _, _, u = heapq.heappop(todo)
            if u.start < sweep:  # a loop spill's unit inside the loop, begun before the point it made room at
                past = True
                swept, active = active, [v for v in placed if v.start <= u.start <= v.end]
            else:
                past, sweep = False, u.start
            if u.size > cap:
                s = u.storage
                if mem == "psum":
                    raise KernelError(f"PSUM tile {u.describe()} needs {u.size * PSUM_BANK_BYTES} bytes per partition; "
                                      f"PSUM holds {cap * PSUM_BANK_BYTES} (8 banks of 2 KiB): tile it into blocks "
                                      "that loops touch one at a time", s.where)
                raise KernelError(f"SBUF overflow: tile {u.describe()} needs {u.size} bytes per partition, the budget "
                                  f"is {cap} ({self.arch}'s usable SBUF, reference neuron-arch.md 1.4): tile it into "
                                  f"blocks that loops touch one at a time{later_arch(cap, u.size)}", s.where)
            active = [v for v in active if v.end >= u.start]
            busy = [v for v in (placed if past else active) if v.end >= u.start and v.start <= u.end] + \
                [f for f in fixed if f.end >= u.start and f.start <= u.end]
            at = self._fit(u, busy, cap)
            if at is None and mem == "sbuf":
                at, new = self._spill_for(u, active, busy, cap)
                for v in new:
                    count += 1
                    heapq.heappush(todo, (v.start, -v.size, count, v))
                active = [v for v in active if v.end >= u.start]
            if at is None:
                self._refuse(mem, u, active, fixed, cap)
            u.addr = at
            if self._large(u):
                self.cursor["sbuf_top"] = at
            else:
                self.cursor[mem] = at + u.size
            placed.append(u)
            if past:
                active = [v for v in swept if v.end >= sweep]
            active.append(u)

    LARGEST_FIRST_UNITS = 2000  # the most units _place_largest_first packs (its cost grows with their square)

    def _place_largest_first(self, mem, cap, fixed):
        """The rounds after a refusal first try every unit of mem largest first, each beside the placed units whose
        intervals meet its own, without spilling: a large tile that program order left only fragments for (a
        long-lived tile placed mid-memory while an earlier one held the top) then finds room. False, and nothing
        placed, when one does not fit."""
        units = [u for u in self.units if u.mem == mem and u.explicit is None]
        if len(units) > self.LARGEST_FIRST_UNITS:
            return False
        units.sort(key=lambda u: (-u.size, u.start, u.name))
        placed = list(fixed)
        for u in units:
            at = self._fit(u, placed, cap) if u.size <= cap else None
            if at is None:
                for v in units:
                    v.addr = None
                return False
            u.addr = at
            placed.append(u)
        return True

    def _large(self, u):
        return u.mem == "sbuf" and u.size * 16 >= self.sbuf_cap

    def _fit(self, u, busy, cap):
        """Where u goes among the placed units busy during its interval, or None. Small tiles pack upwards from
        the bottom, large ones (1/16 of SBUF or more) downwards from the top, as the compiler's select packs them
        (walrus/sbuf-spill-select.md section 3: low band bottom-up, high band top-down); each side continues where
        its last placement ended and wraps round (next fit), so that space a tile freed is taken again only once the
        placements have come round -- a recurring tile's successive instances land apart, as the compiler's address
        rotation spreads them (walrus/address-rotation.md; PSUM tiles go round the 8 banks)."""
        spans = []
        for v in busy:
            lo, hi = v.explicit.bytes_range() if v.explicit is not None else (v.addr, v.addr + v.size)
            if v.explicit is not None and u.mem == "psum":
                lo, hi = lo // PSUM_BANK_BYTES, -(-hi // PSUM_BANK_BYTES)
            if v.end >= u.start and v.start <= u.end:
                spans.append((lo, hi))
        gaps, at = [], 0
        for lo, hi in sorted(spans):
            if lo > at:
                gaps.append((at, lo))
            at = max(at, hi)
        if at < cap:
            gaps.append((at, cap))
        n = u.size
        if self._large(u):
            top = self.cursor.get("sbuf_top", cap) if self.next_fit else cap
            for limit in (top, cap):
                for g0, g1 in reversed(gaps):
                    at = (min(g1, limit) - n) // ALIGN * ALIGN
                    if at >= g0:
                        return at
            return None
        low = self.cursor.get(u.mem, 0) if self.next_fit else 0
        for floor in (low, 0):
            for g0, g1 in gaps:
                lo = max(g0, floor)
                if lo + n <= g1:
                    return lo
        return None

    def _spill_for(self, u, active, busy, cap):
        """Spill live SBUF units (next use farthest first) until u fits; the fewest of them are kept spilled."""
        t = u.start
        cands = []
        for v in active:
            gap = self._gap(v, t)
            if gap is not None:
                cands.append((t - self.scan.item_range(v.block, gap[1])[0], -v.size, v.name, v, gap))
                continue
            gap = self._loop_gap(v, t)
            if gap is not None:
                cands.append((-gap[-1], -v.size, v.name, v, gap))
        cands.sort(key=lambda c: c[:3])
        chosen = []
        rest = list(busy)
        at = None
        for c in cands:
            chosen.append(c)
            rest = [x for x in rest if x is not c[3]]
            at = self._fit(u, rest, cap)
            if at is not None:
                break
        if at is None:
            return None, []
        for c in list(reversed(chosen[:-1])):  # keep only the victims needed
            trial = rest + [c[3]]
            a2 = self._fit(u, trial, cap)
            if a2 is not None:
                chosen.remove(c)
                rest, at = trial, a2
        new = []
        for c in chosen:
            new.extend(self._split_loop(c[3], c[4]) if len(c[4]) > 2 else [self._split(c[3], c[4])])
        return at, new

    def _spillable(self, v):
        return v.explicit is None and not v.temp and v.mem == "sbuf" and v.group is None and \
            not (v.rot is not None and v.buffers > 1)

    def _gap(self, v, t):
        """(last item before t, next item after t) of v's uses when v is not in use at position t, else None."""
        if not self._spillable(v):
            return None
        ranges = self.scan.ranges[id(v.block)]
        j = next((i for i, (a, b) in enumerate(ranges) if a <= t <= b), None)
        if j is None or j in v.items:
            return None
        prev = [i for i in v.items if i < j]
        nxt = [i for i in v.items if i > j]
        if not prev or not nxt:
            return None
        return prev[-1], nxt[0]

    def _split(self, v, gap):
        """Spill v after item gap[0] of its block and reload it, as a new unit, before item gap[1]."""
        prev, nxt = gap
        s = v.storage
        if v.home is None:
            v.home = Home(self.trace.unique(f"{s.name}_SpillSave"), (v.rows, v.cols), v.dtype)
            self.homes.append(v.home)
        w = Unit(self, s, v.mem, v.rot, v.block, v.rows, v.cols, name=self.trace.unique(f"{s.name}_reload"))
        w.home, w.segment, w.buffers = v.home, v.segment + 1, v.buffers
        accs = [a for a in v.accs]
        v.serve([a for a in accs if a.item_in(v.block) <= prev])
        w.serve([a for a in accs if a.item_in(v.block) >= nxt])
        self._interval(v)
        self._interval(w)
        w.dirty = any(a.write for a in w.accs)
        if v.dirty:
            self._insert(v.block, prev, after=Save(v, v.home, v.cols, Idx(0), [(1, v.cols)], None, s.where))
        self._insert(v.block, nxt, before=Reload(w, v.home, v.cols, Idx(0), [(1, v.cols)], None, s.where))
        self._carry(v, w)
        self._add(w)
        return w

    def _carry(self, v, w):
        """w, the unit that now has v's last use in a trip, saves the value carried to the next trip."""
        if v.tail_save is not None:
            w.tail_save, v.tail_save = v.tail_save, None
            w.tail_save.unit = w

    def _loop_gap(self, v, t):
        """(last item before, loop item, next item after or None, distance to the next use) when position t is in a
        loop, item of v's block, that uses v in items of its body before or after t but not at it: v can wait in its
        DRAM home across the loop, reloaded before its first use in each trip and saved after its last when the trip
        writes it (a value carried from trip to trip goes round the back edge through DRAM, as the compiler spills a
        loop-carried value). The distance counts round the back edge when v's next use is in the next trip."""
        if not self._spillable(v):
            return None
        ranges = self.scan.ranges[id(v.block)]
        j = next((i for i, (a, b) in enumerate(ranges) if a <= t <= b), None)
        if j is None or j not in v.items or not isinstance(v.block.items[j], Loop):
            return None
        L = v.block.items[j]
        prev = [i for i in v.items if i < j]
        nxt = [i for i in v.items if i > j]
        if not prev or (v.tail_save is not None and not nxt):
            return None
        body = sorted({a.item_in(L.body) for a in v.accs if a.item_in(v.block) == j})
        jb = next((i for i, (a, b) in enumerate(self.scan.ranges[id(L.body)]) if a <= t <= b), None)
        if jb is None or body[0] <= jb <= body[-1]:  # the unit in the body would be live at t
            return None
        s0, s1 = self.scan.loop_extent[L.var]
        if jb < body[0]:
            dist = self.scan.item_range(L.body, body[0])[0] - t
        else:
            dist = s1 - t + self.scan.item_range(L.body, body[0])[0] - s0
        return prev[-1], j, nxt[0] if nxt else None, dist

    def _split_loop(self, v, gap):
        """Spill v across loop item gap[1] of its block (_loop_gap): saved after item gap[0], a unit of its own in
        the loop's body (reloaded before the trip's first use, saved after its last if the trip writes it), and one
        reloaded before item gap[2] after the loop. The new units."""
        prev, j, nxt = gap[:3]
        s, L = v.storage, v.block.items[j]
        if v.home is None:
            v.home = Home(self.trace.unique(f"{s.name}_SpillSave"), (v.rows, v.cols), v.dtype)
            self.homes.append(v.home)
        accs = list(v.accs)
        v.serve([a for a in accs if a.item_in(v.block) < j])
        self._interval(v)
        if v.dirty:
            self._insert(v.block, prev, after=Save(v, v.home, v.cols, Idx(0), [(1, v.cols)], None, s.where))
        w = Unit(self, s, v.mem, L, L.body, v.rows, v.cols, name=self.trace.unique(f"{s.name}_reload"))
        w.home, w.segment, w.buffers = v.home, v.segment + 1, 1
        w.serve([a for a in accs if a.item_in(v.block) == j])
        self._interval(w)
        w.dirty = any(a.write for a in w.accs)
        self._insert(L.body, w.items[0], before=Reload(w, v.home, v.cols, Idx(0), [(1, v.cols)], None, s.where))
        if w.dirty:
            w.tail_save = Save(w, v.home, v.cols, Idx(0), [(1, v.cols)], None, s.where)
            self._insert(L.body, w.items[-1], after=w.tail_save)
        new = [self._add(w)]
        if nxt is not None:
            x = Unit(self, s, v.mem, v.rot, v.block, v.rows, v.cols, name=self.trace.unique(f"{s.name}_reload"))
            x.home, x.segment, x.buffers = v.home, v.segment + 2, v.buffers
            x.serve([a for a in accs if a.item_in(v.block) > j])
            self._interval(x)
            x.dirty = any(a.write for a in x.accs)
            self._insert(v.block, nxt, before=Reload(x, v.home, v.cols, Idx(0), [(1, v.cols)], None, s.where))
            self._carry(v, x)
            new.append(self._add(x))
        return new

    def _refuse(self, mem, u, active, fixed, cap):
        t = u.start
        live = [v for v in active if v.end >= t] + [f for f in fixed if f.start <= t <= f.end]
        total = sum(v.size for v in live) + u.size
        names = "; ".join(v.describe() for v in sorted(live + [u], key=lambda v: -v.size)[:8])
        where = self.scan.where_of(t)
        point = f"{where[0]}:{where[1]}" if where else f"position {t}"
        if mem == "psum":
            err = KernelError(f"PSUM overflow: the tiles need {total} banks of 2 KiB per partition at {point}, PSUM "
                              f"has {cap}, and spilling cannot help (each live tile is used there or is an "
                              f"accumulation group a trip at a time): {names}", where or u.storage.where)
        else:
            err = KernelError(f"SBUF overflow: the tiles live at {point} need {total} bytes per partition, the budget "
                              f"is {cap} ({self.arch}'s usable SBUF, reference neuron-arch.md 1.4), and spilling cannot "
                              "help (each is used by that instruction, in flight in a loop with rotating buffers, or "
                              f"explicitly placed): {names}{later_arch(cap, total)}", where or u.storage.where)
        raise _Pressure(err, mem, live + [u], total - cap)

    # ------------------------------------------------------------------------------------------------ emission
    def _map_ops(self):
        for sid, units in self.by_storage.items():
            if len(units) > 1:
                for u in units:
                    for a in u.accs:
                        self.op_unit[(id(a.op), sid)] = u

    def unit_of(self, op, s):
        units = self.by_storage[s.id]
        if len(units) == 1:
            return units[0]
        return self.op_unit.get((id(op), s.id), units[0])

    def ahead(self, L):
        """The storages whose loads may run ahead in loop L: its own rotating tiles."""
        B = self.buffers.get(L.var, 1)
        return {u.storage.id for u in self.units if u.rot is L and u.explicit is None and u.buffers == B and
                len(self.by_storage[u.storage.id]) == 1}

    def emit_tensors(self, b):
        """Every unit as a placed BIR tensor, and the DRAM homes of spilled values."""
        for u in self.units:
            if u.explicit is not None:
                u.explicit.emit(b)
                continue
            if u.mem == "psum":
                u.handle = _L.rotating_psum(b, u.name, u.rows, u.cols, u.dtype, u.buffers)
                b.place(u.handle.t.id, 0, 0, u.addr)
            else:
                u.handle = _L.rotating_sbuf(b, u.name, u.rows, u.cols, u.dtype, u.buffers)
                b.place(u.handle.t.id, u.addr, 0, 0)
        for h in self.homes:
            h.emit(b)

    def offsets(self, u, v, env):
        """(rotation slot, the view in u's layout, partition offset) of view v of u's storage in u's tensor."""
        if u.explicit is not None:
            return u.explicit.offsets(v, env)
        if u.group is not None:
            v = u.group.view(v)
        k = env[u.rot.var][1] % u.buffers if u.rot is not None and u.buffers > 1 else 0
        return k, v, 0
