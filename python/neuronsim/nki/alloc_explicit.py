"""Explicitly placed tiles (allocate.py): where each block of the tile is, as the kernel wrote it, and the checks.

- nl.ndarray(..., address=(partition, byte)) (the current NKI): the whole tensor at that partition and byte offset
  (PSUM: the byte offset over the 8 banks, bank = byte // 2048).
- nki.compiler.sbuf.mod_alloc(base_addr, base_partition, num_par_tiles, num_free_tiles): block idx (the dims before
  the partition dim) at partition base_partition + lin(idx % num_par_tiles) * P and byte
  base_addr + lin(idx % num_free_tiles) * (bytes of a block); psum.mod_alloc(base_bank, base_addr, ...): bank
  base_bank + lin(idx % num_bank_tiles) (NKI reference nki.compiler.sbuf.mod_alloc / psum.mod_alloc; "NKI Direct
  Allocation Developer Guide"). A tile without block dims is one block at the base.
- sbuf.alloc(func) / psum.alloc(func): func(idx, partitions, bytes per partition) gives (partition, byte) / (bank,
  partition, byte) for every block, evaluated once per block as the compiler does.

Refused, naming the tensors and their lines: a block placed outside the memory (SBUF bytes [0, the arch's usable
bytes: 180224 on trn1), the 16 KiB of PSUM, partitions [0, 128)), a start partition the ISA does not allow for the
tile's partition count (the guide's rule: more than 64 partitions start at 0, more than 32 at 0 or 64, else at
0/32/64/96), a PSUM block across a bank boundary, and two placed blocks that overlap in memory while both are live
(first write to last read, a use in a loop counting for the whole loop) -- two tensors, or two blocks of one tensor
with too few physical tiles.
"""
import inspect
import itertools
import math

from .. import _core
from . import dtypes
from .alloc_scan import block_elems, whole_only
from .errors import KernelError
from .symbolic import Idx, NeedsUnroll
from .tracer import View

_L = _core.lowering
PSUM_BYTES = 8 * 2048
BANK = 2048


def _lin(shape, idx):
    k = 0
    for n, i in zip(shape, idx):
        k = k * n + i
    return k


def _unlin(shape, b):
    out = []
    for n in reversed(shape):
        out.append(b % n)
        b //= n
    return tuple(reversed(out))


def _where(s):
    return f"{s.where[0]}:{s.where[1]}" if s.where else "?"


class Explicit:
    """The placement of unit u's tile: per block (row-major over the dims before the partition dim) its (partition,
    byte) -- PSUM bytes count over the banks -- and, for a modulo placement over one block dim, the rule."""

    def __init__(self, alloc, u, spec, accs):
        self.alloc, self.unit, self.spec = alloc, u, spec
        s = u.storage
        self.s = s
        self.dsz = dtypes.size(s.dtype)
        self.be, self.nblocks = block_elems(s) if s.pdim > 0 else (s.row, 1)
        self.bshape = tuple(s.shape[:s.pdim]) if s.pdim > 0 else (1,)
        self.strides = tuple(math.prod(self.bshape[d + 1:]) for d in range(len(self.bshape)))  # per block dim
        self.P = s.partitions
        self.fdim = self.be * self.dsz
        self.mod = None  # mod_alloc's moduli, one per block dim (a block's place is its index modulo them)
        f = spec.fields
        if spec.kind == "address" or s.pdim == 0:
            if spec.kind == "address":
                base = (f["partition"], f["byte"])
            elif spec.kind == "mod":
                base = (f["base_partition"], f.get("base_bank", 0) * BANK + f["base_addr"] if s.buffer == "psum"
                        else f["base_addr"])
            else:
                base = self._call((0,) * len(self.bshape))
            self.table = [base]
            self.identity = True
            self.fdim = s.row * self.dsz
        else:
            self.identity = False
            self.table = [self._place(_unlin(self.bshape, b)) for b in range(self.nblocks)]
            if spec.kind == "mod":
                self.mod = self._moduli()
            elif spec.kind == "func":  # a function places each index of each block dim: period the dim's size
                self.mod = self.bshape
        ps = [p for p, _ in self.table]
        bs = [b for _, b in self.table]
        self.pmin, self.bmin = min(ps), min(bs)
        self.rows = max(ps) - self.pmin + self.P
        span = max(bs) - self.bmin + self.fdim
        for b in bs:
            if (b - self.bmin) % self.dsz:
                raise KernelError(f"{self._name()}: the blocks' byte addresses {sorted(set(bs))[:4]} are not a "
                                  f"whole number of {s.dtype} elements apart", s.where)
        self.cols = -(-span // self.dsz)
        if not self.identity and whole_only(s, accs):
            raise KernelError(f"{self._name()}: a tile placed block by block is accessed with a run-time offset, "
                              "as another dtype or inside a dynamic loop: place it whole (address=, or one block)",
                              s.where)
        self._require_buffers(accs)

    # ---------------------------------------------------------------- the placement of one block
    def _name(self):
        return f"tensor {self.s.name} ({_where(self.s)}) placed by {self.spec!r}"

    def _moduli(self):
        f = self.spec.fields
        key = "num_bank_tiles" if self.s.buffer == "psum" else "num_free_tiles"
        n = tuple(f.get(key, ())) or (1,) * len(self.bshape)
        if len(n) != len(self.bshape):
            raise KernelError(f"{self._name()}: {key}={n} has {len(n)} entries, the tensor {len(self.bshape)} block "
                              "dims", self.s.where)
        return n

    def _call(self, idx):
        f = self.spec.fields
        r = _call_alloc(f["func"], idx, self.P, self.fdim)
        try:
            r = tuple(int(x) for x in r)
        except (TypeError, ValueError):
            raise KernelError(f"{self._name()}: the allocation function returned {r!r} for block {idx}", self.s.where)
        if self.s.buffer == "psum":
            if len(r) != 3:
                raise KernelError(f"{self._name()}: a PSUM allocation function returns (bank, partition, byte), got "
                                  f"{r!r}", self.s.where)
            return r[1], r[0] * BANK + r[2]
        if len(r) != 2:
            raise KernelError(f"{self._name()}: an SBUF allocation function returns (partition, byte), got {r!r}",
                              self.s.where)
        return r

    def _place(self, idx):
        f = self.spec.fields
        if self.spec.kind == "func":
            return self._call(idx)
        mod = lambda n: tuple(i % m for i, m in zip(idx, n)) if n else (0,) * len(idx)
        par = tuple(f.get("num_par_tiles", ())) or (1,) * len(idx)
        if len(par) != len(idx):
            raise KernelError(f"{self._name()}: num_par_tiles={par} has {len(par)} entries, the tensor {len(idx)} "
                              "block dims", self.s.where)
        p = f["base_partition"] + _lin(par, mod(par)) * self.P
        if self.s.buffer == "psum":
            banks = self._moduli()
            free = tuple(f.get("num_free_tiles", ())) or (1,) * len(idx)
            return p, (f["base_bank"] + _lin(banks, mod(banks))) * BANK + f["base_addr"] + \
                _lin(free, mod(free)) * self.fdim
        free = self._moduli()
        return p, f["base_addr"] + _lin(free, mod(free)) * self.fdim

    def _dim_of(self, k):
        """(block dim, its index's coefficient) of a loop variable whose coefficient in the linear block index is
        k: the variable indexes one block dim (tile[i, j] with i and j of different loops); None when it moves
        several (tile[i, i])."""
        for d, st in enumerate(self.strides):
            if k % st == 0:
                c = k // st
                return (d, c) if d == 0 or abs(c) < self.bshape[d] else None
        return None

    def _require_buffers(self, accs):
        """A block index that depends on a loop variable: each block dim's index modulo its mod_alloc modulus must
        be known in each unrolled trip of the loop (emit_bir unrolls a loop by its B), so the loop's B is a
        multiple of what that modulus needs. NKI traces a loop body once (its Python runs once: the public
        allocated attention kernel adds each tile's size to an address as it declares it), so a tile rotating over
        two block dims in two loops (a PSUM tile of num_bank_tiles=(2, 4)) is placed per dim, not by unrolling."""
        if self.identity:
            return
        for a in accs:
            g, _, _ = self._split(a.view.off_f)
            for v, k in g.items():
                if self.mod is None:
                    raise NeedsUnroll(f"{self._name()}: a block index that depends on a loop variable")
                L = self.alloc.trace.loops[v] if v >= 0 else None
                if L is None:
                    raise NeedsUnroll(f"{self._name()}: a block index that depends on the shard id")
                dim = self._dim_of(k)
                if dim is None:
                    raise NeedsUnroll(f"{self._name()}: a loop variable that indexes several block dims")
                d, c = dim
                n = self.mod[d]
                need = n // math.gcd(n, abs(c * L.step) % n or n)
                if need > 1:
                    old = self.alloc.mod_req.get(v, 1)
                    self.alloc.mod_req[v] = old * need // math.gcd(old, need)

    def _split(self, off_f):
        """(block coefficients per loop variable, constant block, the offset within the block) of a free offset."""
        g = {}
        within = {}
        for v, k in off_f.loop.items():
            if k % self.be == 0:
                g[v] = k // self.be
            else:
                within[v] = k
        return g, off_f.c // self.be, Idx(off_f.c % self.be, within, off_f.axes, off_f.sizes)

    # ---------------------------------------------------------------- what allocate.py asks
    def bytes_range(self):
        return self.bmin, self.bmin + self.cols * self.dsz

    def blocks_of(self, a):
        """The blocks access a touches: [constant linear index] or None (depends on a loop variable)."""
        if self.identity:
            return [0]
        g, b, _ = self._split(a.view.off_f)
        return None if g else [b]

    def rect(self, b):
        """(partition range, byte range) of block b; b None: every block."""
        if b is None:
            return (self.pmin, self.pmin + self.rows), self.bytes_range()
        p, by = self.table[b]
        return (p, p + self.P), (by, by + self.fdim)

    def offsets(self, v, env):
        s = self.s
        if self.identity:
            return 0, v, 0
        g, b0, within = self._split(v.off_f)
        span = 0
        for st, n, part in v.dims:
            if not part and n > 1 and st >= self.be:
                span = 1
        if span:
            raise KernelError(f"{self._name()}: one access across several blocks of a tile placed block by block",
                              s.where)
        if g:
            idx = list(_unlin(self.bshape, b0))
            for var, k in g.items():
                L = self.alloc.trace.loops[var]
                d, c = self._dim_of(k)
                idx[d] += c * (L.start + L.step * env[var][1])
            # The index as far as the trip's rotating buffer knows it: congruent to the trip's modulo each dim's
            # modulus (mod_alloc reduces it in _place; an allocation function is asked for an index in range).
            p, by = self._place(tuple(i % n for i, n in zip(idx, self.mod)) if self.spec.kind == "func" else tuple(idx))
        else:
            p, by = self.table[b0]
        off = Idx(within.c + (by - self.bmin) // self.dsz, within.loop, within.axes, within.sizes)
        return 0, View(s, v.off_p, off, v.dims, v.bir_dtype), p - self.pmin

    def emit(self, b):
        u = self.unit
        if self.s.buffer == "psum":
            u.handle = _L.rotating_psum(b, u.name, self.rows, self.cols, self.s.dtype, 1)
            b.place(u.handle.t.id, self.bmin % BANK, self.pmin, self.bmin // BANK)
        else:
            u.handle = _L.rotating_sbuf(b, u.name, self.rows, self.cols, self.s.dtype, 1)
            b.place(u.handle.t.id, self.bmin, self.pmin, 0)


def _check_ranges(e):
    s = e.s
    sbuf, arch = e.alloc.sbuf_cap, e.alloc.arch
    cap = PSUM_BYTES if s.buffer == "psum" else sbuf
    legacy = e.spec.kind in ("mod", "func")
    for k, (p, by) in enumerate(e.table):
        what = f"{e._name()}" + (f", block {_unlin(e.bshape, k)}" if not e.identity else "")
        if p < 0 or p + e.P > 128:
            raise KernelError(f"{what}: partitions [{p}, {p + e.P}) are outside the 128 partitions", s.where)
        if by < 0 or by + e.fdim > cap:
            mem = "PSUM's 16384 bytes (8 banks of 2 KiB)" if s.buffer == "psum" else \
                f"the {cap} usable SBUF bytes of a partition on {arch} (reference neuron-arch.md 1.4)"
            raise KernelError(f"{what}: bytes [{by}, {by + e.fdim}) are outside {mem}", s.where)
        if legacy and s.buffer == "sbuf":
            ok = (0,) if e.P > 64 else (0, 64) if e.P > 32 else (0, 32, 64, 96)
            if p not in ok:
                raise KernelError(f"{what}: a tile of {e.P} partitions starts at partition {p}; the ISA allows "
                                  f"{', '.join(map(str, ok))}", s.where)
        if legacy and s.buffer == "psum" and by // BANK != (by + e.fdim - 1) // BANK:
            raise KernelError(f"{what}: bytes [{by}, {by + e.fdim}) cross a PSUM bank boundary (a PSUM tile lies in "
                              "one 2 KiB bank)", s.where)


def check_explicit(alloc):
    """Range checks, and no two explicitly placed blocks overlapping in memory while both are live."""
    recs = []
    scan = alloc.scan
    for u in alloc.units:
        e = u.explicit
        if e is None:
            continue
        _check_ranges(e)
        per = {}
        for a in scan.accesses.get(u.storage.id, []):
            blocks = e.blocks_of(a)
            trips = _trip_blocks(e, a, scan) if blocks is None else None
            if trips is None:
                lo, hi = scan.item_range(u.block, a.item_in(u.block))
                # None: every block, over the whole scope
                trips = [(b, (), lo, hi) for b in (blocks if blocks is not None else [None])]
            for b, binding, lo, hi in trips:
                r = per.get((b, binding))
                per[(b, binding)] = (min(r[0], lo), max(r[1], hi)) if r else (lo, hi)
        for (b, binding), (lo, hi) in per.items():
            (p0, p1), (b0, b1) = e.rect(b)
            recs.append((lo, hi, u.mem, p0, p1, b0, b1, u, b, dict(binding)))
    recs.sort(key=lambda r: r[0])
    active = []
    for r in recs:
        active = [x for x in active if x[1] >= r[0]]
        for x in active:
            if x[2] != r[2] or x[3] >= r[4] or r[3] >= x[4] or x[5] >= r[6] or r[5] >= x[6]:
                continue
            if x[7] is r[7] and (x[8] == r[8] or x[8] is None or r[8] is None):
                continue
            if any(r[9].get(v, t) != t for v, t in x[9].items()):
                continue  # different trips of a loop both index: the blocks its trips rotate over, in turn
            raise KernelError(_overlap(alloc, x, r), r[7].storage.where)
        active.append(r)


MAX_TRIP_BLOCKS = 4096  # trips enumerated per access of a block rotated by loop variables (beyond: the whole scope)


def _trip_blocks(e, a, scan):
    """(block, trip binding, lo, hi) per trip of the loops an access's block index depends on: the block those trips
    take, live over the item of the innermost of those loops' body that holds the access (within one of its trips;
    a loop the block does not depend on, inside it, is held whole). NKI traces a loop body once, so a tile rotating
    over blocks by loop variables (mod_alloc, an allocation function) is checked trip by trip here rather than by
    unrolling the kernel's Python."""
    g, b0, _ = e._split(a.view.off_f)
    loops = [e.alloc.trace.loops[v] for v in sorted(g)]
    inner = next((b for b, _ in reversed(a.path) if b.loop is not None and b.loop.var in g), None)
    dims = {v: e._dim_of(k) for v, k in g.items()}
    if inner is None or None in dims.values() or any(L.trips is None for L in loops) or \
            math.prod(L.trips for L in loops) > MAX_TRIP_BLOCKS:
        return None  # trips not known (a dynamic loop) or too many: every block, over the tile's whole scope
    lo, hi = scan.item_range(inner, a.item_in(inner))
    base = _unlin(e.bshape, b0)
    out = []
    for trips in itertools.product(*(range(L.trips) for L in loops)):
        idx = list(base)
        for L, t in zip(loops, trips):
            d, c = dims[L.var]
            idx[d] += c * (L.start + L.step * t)
        if any(i < 0 or i >= n for i, n in zip(idx, e.bshape)):
            continue  # a trip outside the tile (masked away)
        out.append((_lin(e.bshape, idx), tuple((L.var, t) for L, t in zip(loops, trips)), lo, hi))
    return out


def _overlap(alloc, x, r):
    def one(rec):
        u, b = rec[7], rec[8]
        e = u.explicit
        blk = f" block {_unlin(e.bshape, b)}" if b is not None and not e.identity else ""
        s = u.storage  # shape and dtype: a dtype other than the one a placement was computed for moves its end
        return (f"{s.name}{blk} {list(s.shape)} {s.dtype} ({_where(s)}, {e.spec!r}: partitions [{rec[3]}, {rec[4]}), "
                f"bytes [{rec[5]}, {rec[6]}))")
    t = max(x[0], r[0])
    w = alloc.scan.where_of(t)
    at = f"{w[0]}:{w[1]}" if w else f"position {t}"
    return (f"{x[2].upper()} placement conflict: {one(x)} and {one(r)} overlap in memory and are both live at {at}; "
            "move one, or give the tensor more physical tiles")


_ALLOC_ARGS = ("idx", "pdim_size", "fdim_size")


def _call_alloc(func, idx, pdim_size, fdim_size):
    """An allocation function of sbuf.alloc / psum.alloc called for one block. Public kernels write it as
    f(idx, pdim_size, fdim_size) and may bind leading parameters by keyword (functools.partial(f, bank_map=...)),
    which leaves the three as keyword-only: a function that takes all three names gets them by name, any other
    positionally."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        params = {}
    if all(n in params and params[n].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
           for n in _ALLOC_ARGS):
        return func(idx=idx, pdim_size=pdim_size, fdim_size=fdim_size)
    return func(idx, pdim_size, fdim_size)
