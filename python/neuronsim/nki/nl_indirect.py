"""NkiTensor.indirect (public NKI docs, nki.language NkiTensor, "Tensor Indirection", NeuronCore-v4 and later):
t.indirect(index, num_elem) is a [P, num_elem] view of the on-chip tensor t whose column i is t[:, off_i], the
offsets a tile of free-dim offsets holds in a snake order across partition groups: off_i = index[i % G, i // G],
G = 16 for an instruction on the vector, scalar or gpsimd engine and 32 on the tensor engine. An instruction that
reads the view gathers those columns, one that writes it scatters them.

The group size depends on the instruction the view is handed to, so the view only records what it stands for
(Indirection, a run-time part of its start) and nl_common._emit lowers it when that instruction is recorded: per
column i, a TensorCopy whose source (gather) or destination (scatter) sits at the run-time offset index[i % G, i // G]
(a [1, 1] tile read into a register when the copy runs: the .ap(scalar_offset=) machinery, emit_dynamic.py), through
a temporary [P, num_elem] tile the instruction itself reads or writes."""
from .. import _core
from . import registry
from .errors import KernelError, Unsupported
from .isa_constants import bir_of
from .nl_common import _emit, _new_tile
from .tracer import Indirect, View, current

_GROUP = {"DVE": 16, "Activation": 16, "Pool": 16, "PE": 32}  # the page's G per engine
_GENS = {2: "trn1 (NeuronCore-v2)", 3: "trn2 (NeuronCore-v3)"}


class Indirection(Indirect):
    """The run-time part of a tensor-indirection view: base, the [P, F] view it indexes; table, the SBUF tile of
    offsets; num, the columns; made, the view's own placement as made (_key), to tell a later slice of it."""
    __slots__ = ("base", "table", "num", "made")

    def __init__(self, base, table, num):
        super().__init__()
        self.base, self.table, self.num, self.made = base, table, num, None


def engine_of(type_, engine, kind):
    """The engine a compute instruction runs on: the one it names, else the simulator's rule for its BIR type
    (engines/ops/engine_policy.cpp); None for a DMA."""
    if kind not in ("compute", "zero"):
        return None
    return bir_of(engine) or _core.builder.default_engine(type_)


def _key(v):
    """The placement of view v, compared structurally (an Idx compared with == is a predicate)."""
    def idx(i):
        return i.c, tuple(sorted(i.loop.items())), tuple(sorted(i.axes.items()))
    return idx(v.off_p), idx(v.off_f), tuple(v.dims), v.bir_dtype


def indirect(v, index, num_elem=None):
    """NkiTensor.indirect: the view, on a NeuronCore-v4 or later; the instruction it is handed to checks that the
    offsets it reads lie in index (lower: the group size is that instruction's engine's)."""
    what = f"{v.name}.indirect"
    tr = current(what)
    if tr.core_gen < 4:
        raise Unsupported(f"{what}: tensor indirection is a NeuronCore-v4 (trn3) feature; the kernel is traced for "
                          f"{_GENS.get(tr.core_gen, tr.arch)} (simulate(..., arch='trn3'))")
    if not isinstance(v, View) or not v.storage.onchip or len(v.dims) != 2 or not v.dims[0][2] or v.dims[1][2]:
        raise KernelError(f"{what}: the tensor is an on-chip [partitions, free] tile, got "
                          f"{getattr(v, 'buffer', '?').upper()} {list(getattr(v, 'shape', ()))}")
    if v.dyn is not None:
        raise KernelError(f"{what}: {v.name} already has a run-time offset; an indirect view is not indirected again "
                          "(NKI NkiTensor.is_indirect)")
    if not isinstance(index, View) or index.storage.buffer != "sbuf" or len(index.shape) != 2:
        raise KernelError(f"{what}: index is a 2-D SBUF tile of free-dim offsets, got {index!r}")
    if not index.bir_dtype.startswith(("int", "uint")):
        raise KernelError(f"{what}: index {index.name} holds integer offsets, it is {index.bir_dtype}")
    P, K = index.shape
    if P != v.shape[0]:
        raise KernelError(f"{what}: index {index.name} {[P, K]} must have the {v.shape[0]} partitions of {v.name}")
    num = P * K if num_elem is None else num_elem
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise KernelError(f"{what}: num_elem is a positive int, got {num_elem!r}")
    d = Indirection(v, index, num)
    out = View(v.storage, v.off_p, v.off_f, [v.dims[0], (0, num, False)], v.bir_dtype, d)
    d.made = _key(out)
    return out


def _columns(v, what):
    """The Indirection of view v, checked to be the view .indirect made (not a slice of it)."""
    d = v.dyn
    if _key(v) != d.made:
        raise Unsupported(f"{what}: a slice or another dtype of a tensor-indirection view ({v.name}.indirect(...)) "
                          "is not lowered; pass the view whole")
    return d


def _column(d, i, group):
    """Column i of the base at its run-time offset index[i % G, i // G]."""
    b = d.base
    off = d.table[i % group:i % group + 1, i // group:i // group + 1]
    off.storage.__dict__["uses"] = off.storage.__dict__.get("uses", 0) + 1  # read when the copy runs
    return View(b.storage, b.off_p, b.off_f, [b.dims[0], (1, 1, False)], b.bir_dtype,
                Indirect(terms=[(off, b.dims[1][0])]))


def lower(type_, ins, outs, what, fields, engine, kind, where):
    """_emit of an instruction some operand of which is a tensor-indirection view: the gathers into temporaries,
    the instruction on them, then the scatters."""
    if current(what).call.get("clips"):
        raise Unsupported(f"{what}: mask= with a tensor-indirection operand is not lowered")
    eng = engine_of(type_, engine, kind)
    group = _GROUP.get(eng)
    if group is None:
        raise Unsupported(f"{what}: a tensor-indirection operand on {eng or kind}: the NKI page gives the offset "
                          "order for instructions of the vector, scalar, gpsimd and tensor engines only")
    if type_ == "Matmult" and any(isinstance(v, View) and isinstance(v.dyn, Indirection) for v in outs):
        raise Unsupported(f"{what}: a tensor-indirection view as a matmul's PSUM destination (its accumulation "
                          "group) is not lowered; scatter the result with a copy")
    copy_engine = eng if eng != "PE" else None
    for v in list(ins) + list(outs):
        if isinstance(v, View) and isinstance(v.dyn, Indirection):
            d = _columns(v, what)
            P, K = d.table.shape
            last = (min(d.num - 1, group - 1), (d.num - 1) // group)
            if last[0] >= P or last[1] >= K:
                raise KernelError(f"{what}: {d.num} offsets in groups of {group} (the {eng} engine's) read "
                                  f"index[{last[0]}, {last[1]}], past {d.table.name} {[P, K]}")

    def temp(v):
        d = _columns(v, what)
        t = _new_tile((v.shape[0], d.num), v.bir_dtype, v.storage.buffer, where=where)
        return d, t

    new_ins = []
    for v in ins:
        if isinstance(v, View) and isinstance(v.dyn, Indirection):
            d, t = temp(v)
            t.storage.__dict__["temp"] = True
            for i in range(d.num):
                _emit("TensorCopy", [_column(d, i, group)], [t[:, i:i + 1]], what, engine=copy_engine, where=where)
            v = t
        new_ins.append(v)
    scatters, new_outs = [], []
    for v in outs:
        if isinstance(v, View) and isinstance(v.dyn, Indirection):
            d, t = temp(v)
            scatters.append((d, t))
            v = t
        new_outs.append(v)
    op = _emit(type_, new_ins, new_outs, what, fields, engine, kind, where)
    for d, t in scatters:
        for i in range(d.num):
            _emit("TensorCopy", [t[:, i:i + 1]], [_column(d, i, group)], what, engine=copy_engine, where=where)
    return op


registry.define_statement("view.indirect", indirect)
registry.define_statement("indirection", lower)
registry.value("nki.language", "NkiTensor.indirect", View.indirect)
