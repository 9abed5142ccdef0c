"""nki.isa: selection and search -- max8, nc_find_index8, nc_match_replace8 (the DVE top-8 set: BIR Max, MaxIndex,
MatchReplace / MaxIndexAndMatchReplace), range_select (RangeSelect), select_reduce and tensor_copy_predicated
(CopyPredicated), sequence_bounds (GetSequenceBounds), nonzero_with_count (NonzeroWithCount); topk is refused
(refusals.py). Public NKI docs, the nki.isa page of each; semantics in engines/ops/search.cpp and select.cpp.

Each call takes both of NKI's forms: the current namespace's (dst first, written) and the older one's (keywords,
the result returned in a new tile)."""
from . import registry
from .errors import KernelError
from .isa_common import acc_cmd, alu, column, out_tile, reduce_res_tile, same_elements
from .nl_common import _bir, _emit, _imm, _is_num, _mask, _new_tile, _tile
from .tracer import View

_api = registry.api("nki.isa")

FP32_MIN = -3.4028234663852886e38  # the fill range_select takes (public NKI docs: on_false_value must be FP32_MIN)


def _per_partition(v):
    n = 1
    for d in v.shape[1:]:
        n *= d
    return n


def _temp(shape, bir):
    t = _new_tile(tuple(shape), bir)
    t.storage.__dict__["temp"] = True
    return t


@_api
def max8(dst=None, src=None, *, mask=None, dtype=None, name=None, **kw):
    """The 8 largest values of each partition in descending order, [P, 8] (one Max on VectorE)."""
    what = "nisa.max8"
    x = _tile(src, what, "src")
    (x,) = _mask([x], mask, what)
    if not 8 <= _per_partition(x) <= 16384:
        raise KernelError(f"{what}: src {x.name} has {_per_partition(x)} elements per partition (8 to 16384)")
    out = out_tile(dst, (x.shape[0], 8), _bir(dtype, x.bir_dtype), what)
    _emit("Max", [x], [out], what)
    return out


def _data_and_eight_vals(data, vals, mask, what):
    """data (masked) and the 8 values per partition that nc_find_index8 / nc_match_replace8 look for."""
    x, v = _tile(data, what, "data"), _tile(vals, what, "vals")
    (x,) = _mask([x], mask, what)
    if v.shape[0] != x.shape[0] or _per_partition(v) != 8:
        raise KernelError(f"{what}: vals {v.name} {list(v.shape)} must hold 8 values for each of data's "
                          f"{x.shape[0]} partitions")
    return x, v


@_api
def nc_find_index8(dst=None, data=None, vals=None, *, mask=None, dtype=None, name=None, **kw):
    """The index of the first occurrence of each of the 8 vals in each partition of data, [P, 8] uint32 (or uint16);
    all ones where a value is absent (one MaxIndex on VectorE)."""
    what = "nisa.nc_find_index8"
    x, v = _data_and_eight_vals(data, vals, mask, what)
    out = out_tile(dst, (x.shape[0], 8), _bir(dtype, "uint32"), what)
    if out.bir_dtype not in ("uint32", "uint16"):
        raise KernelError(f"{what}: the indices are uint32 or uint16, not {out.bir_dtype}")
    _emit("MaxIndex", [v, x], [out], what)
    return out


@_api
def nc_match_replace8(dst=None, data=None, vals=None, imm=None, dst_idx=None, *, mask=None, dtype=None, name=None,
                      **kw):
    """data with the first occurrence of each of the 8 vals replaced by imm (vals walked from 7 down to 0); dst_idx,
    when given, receives the matches' indices (MatchReplace, or MaxIndexAndMatchReplace with dst_idx)."""
    what = "nisa.nc_match_replace8"
    x, v = _data_and_eight_vals(data, vals, mask, what)
    if not _is_num(imm):
        raise KernelError(f"{what}: imm must be a number, got {imm!r}")
    out = out_tile(dst, x.shape, _bir(dtype, x.bir_dtype), what)
    outs = [out]
    if dst_idx is not None:
        idx = _tile(dst_idx, what, "dst_idx")
        if idx.shape[0] != x.shape[0] or _per_partition(idx) != 8:
            raise KernelError(f"{what}: dst_idx {idx.name} {list(idx.shape)} must hold 8 indices per partition")
        outs.append(idx)
    _emit("MaxIndexAndMatchReplace" if dst_idx is not None else "MatchReplace", [v, x], outs, what,
          {"imm_value": float(imm)})
    return out


_COMPARE = ("is_equal", "is_lt", "is_le", "is_gt", "is_ge")


@_api
def range_select(dst=None, on_true_tile=None, comp_op0=None, comp_op1=None, bound0=None, bound1=None,
                 reduce_cmd=None, reduce_res=None, reduce_op=None, range_start=0, on_false_value=FP32_MIN, *,
                 mask=None, dtype=None, name=None, **kw):
    """Element (p, j) kept where comp_op0(j + range_start, bound0[p]) and comp_op1(j + range_start, bound1[p])
    hold (compared in fp32), else on_false_value; the rows' max folds into the DVE registers under reduce_cmd
    (default reset_reduce in the dst= form, idle in the returning form, as each namespace documents); reduce_res
    receives them (one RangeSelect on VectorE)."""
    what = "nisa.range_select"
    x = _tile(on_true_tile, what, "on_true_tile")
    (x,) = _mask([x], mask, what)
    P = x.shape[0]
    ops = (alu(comp_op0, what), alu(comp_op1, what))
    for o in ops:
        if o not in _COMPARE:
            raise KernelError(f"{what}: comparison {o} is not equal, less, less_equal, greater or greater_equal")
    if reduce_op is not None and alu(reduce_op, what) != "max":
        raise KernelError(f"{what}: reduce_op must be maximum (public NKI docs)")
    if float(on_false_value) != FP32_MIN:
        raise KernelError(f"{what}: on_false_value must be FP32_MIN (-3.4028235e+38, public NKI docs: a hardware "
                          f"constraint), got {on_false_value}")
    if not isinstance(range_start, int) or range_start < 0:
        raise KernelError(f"{what}: range_start must be a compile-time integer >= 0, got {range_start!r}")
    cmd = acc_cmd(reduce_cmd, what, "ZeroAccumulate" if dst is not None else "Idle")
    if cmd == "LoadAccumulate":
        raise KernelError(f"{what}: reduce_cmd load_reduce has no value to load here")
    out = out_tile(dst, x.shape, _bir(dtype, x.bir_dtype), what)
    outs = [out]
    r = reduce_res_tile(reduce_res, P, what)
    if r is not None:
        outs.append(r)
    _emit("RangeSelect", [x, column(bound0, P, what, "bound0"), column(bound1, P, what, "bound1")], outs, what,
          {"compare_op0": ops[0], "compare_op1": ops[1], "base": int(range_start), "fill_value": FP32_MIN,
           "reduce_op": "max", "reduce_cmd": cmd})
    return out


def _predicated_copy(d, src, pred, reverse_pred, what):
    """CopyPredicated of src into d where pred is nonzero (zero with reverse_pred); src converted to d's dtype
    first when it differs (CopyPredicated copies bits)."""
    if src.bir_dtype != d.bir_dtype:
        cast = _temp(src.shape, d.bir_dtype)
        _emit("TensorCopy", [src], [cast], what)
        src = cast
    _emit("CopyPredicated", [src, pred], [d], what, {"reverse_pred": True} if reverse_pred else {})


def _predicate(p, x, what):
    p = _tile(p, what, "predicate")
    same_elements(p, x, what, "predicate", "on_true" if "select" in what else "src")
    if p.bir_dtype not in ("uint8", "int8", "uint16", "int16", "uint32", "int32"):
        raise KernelError(f"{what}: predicate {p.name} is {p.bir_dtype}; it is an integer tile")
    if p.storage.buffer == "psum" and x.storage.buffer == "psum":
        raise KernelError(f"{what}: predicate and the source cannot both be in PSUM")
    return p


@_api
def select_reduce(dst=None, predicate=None, on_true=None, on_false=None, reduce_res=None, reduce_cmd=None,
                  reduce_op=None, reverse_pred=False, *, mask=None, dtype=None, name=None, **kw):
    """dst = where(predicate, on_true, on_false) (on_false a number or [P, 1]); with reduce_cmd the rows' max folds
    into the DVE registers and reduce_res receives them. Three VectorE instructions: the fill (Memset, or a
    TensorCopy of the [P, 1] column along the free dim), CopyPredicated of on_true, and a TensorScalarPtr that
    folds dst's rows (dst + 0, in place) into the registers."""
    what = "nisa.select_reduce"
    if dst is None:
        raise KernelError(f"{what} writes a dst tile (dst=...)")
    x = _tile(on_true, what, "on_true")
    d = _tile(dst, what, "dst")
    same_elements(d, x, what, "dst", "on_true")
    p = _predicate(predicate, x, what)
    P = x.shape[0]
    if reduce_op is not None and alu(reduce_op, what) != "max":
        raise KernelError(f"{what}: reduce_op must be maximum (public NKI docs)")
    cmd = acc_cmd(reduce_cmd, what)
    if cmd in ("Zero", "LoadAccumulate"):
        raise KernelError(f"{what}: reduce_cmd is idle, reset_reduce or reduce")
    if reduce_res is not None and cmd == "Idle":
        raise KernelError(f"{what}: reduce_res needs a reduce_cmd (reset_reduce or reduce); with idle no reduction "
                          "is performed (public NKI docs)")
    f = column(on_false, P, what, "on_false")
    if isinstance(f, View):
        col = View(f.storage, f.off_p, f.off_f, [f.dims[0]] + [(0, n, False) for n in d.shape[1:]], f.bir_dtype)
        _emit("TensorCopy", [col], [d], what)
    else:
        _emit("Memset", [], [d], what, {"mode": "Const", "constant": f[1]})
    _predicated_copy(d, x, p, reverse_pred, what)
    if cmd != "Idle":
        outs = [d]
        r = reduce_res_tile(reduce_res, P, what)
        if r is not None:
            outs.append(r)
        _emit("TensorScalarPtr", [d, _imm(0.0)], outs, what, {"op0": "add", "op1": "max", "acc": cmd})
    return d


@_api
def tensor_copy_predicated(dst=None, src=None, predicate=None, reverse_pred=False, *, mask=None, dtype=None,
                           name=None, **kw):
    """dst = src where predicate is nonzero (zero with reverse_pred); dst keeps its values elsewhere. src a tile of
    dst's dtype or a number (one CopyPredicated on VectorE; a number is first set in a tile by a Memset)."""
    what = "nisa.tensor_copy_predicated"
    if dst is None:
        raise KernelError(f"{what} writes a dst tile (dst=...)")
    d = _tile(dst, what, "dst")
    if _is_num(src):
        s = _temp(d.shape, d.bir_dtype)
        _emit("Memset", [], [s], what, {"mode": "Const", "constant": float(src)})
    else:
        s = _tile(src, what, "src")
        same_elements(d, s, what, "dst", "src")
        if s.bir_dtype != d.bir_dtype:
            raise KernelError(f"{what}: src {s.name} is {s.bir_dtype}, dst {d.name} {d.bir_dtype}; they share a "
                              "dtype (public NKI docs)")
    p = _predicate(predicate, s, what)
    d, s, p = _mask([d, s, p], mask, what)
    _emit("CopyPredicated", [s, p], [d], what, {"reverse_pred": True} if reverse_pred else {})
    return d


@_api
def sequence_bounds(dst=None, segment_ids=None, *, dtype=None, name=None, **kw):
    """For segment ids [1, n]: [1, 2, n], each element's segment start and end (exclusive); id 0 is padding (start
    n, end -1). One GetSequenceBounds on GpSimd; the output dtype is segment_ids' (float32 or int32)."""
    what = "nisa.sequence_bounds"
    s = _tile(segment_ids, what, "segment_ids")
    if s.shape[0] != 1:
        raise KernelError(f"{what}: segment_ids {s.name} {list(s.shape)} must have one partition")
    if s.bir_dtype not in ("float32", "int32"):
        raise KernelError(f"{what}: segment_ids {s.name} is {s.bir_dtype}; it is float32 or int32")
    n = _per_partition(s)
    out = out_tile(dst, (1, 2, n), _bir(dtype, s.bir_dtype), what)
    _emit("GetSequenceBounds", [s], [out], what)
    return out


def _every_16th(v):
    """v's partitions 0, 16, 32, ...: the partition dim's step times 16."""
    step, num, part = v.dims[0]
    return View(v.storage, v.off_p, v.off_f, [(step * 16, (num + 15) // 16, part)] + list(v.dims[1:]), v.bir_dtype)


@_api
def nonzero_with_count(dst=None, src=None, index_offset=0, padding_val=-1, *, name=None, **kw):
    """For partitions 0, 16, ..., 112 of src [P, T]: the indices (+ index_offset) of its nonzero elements, then
    padding_val, then their count, in dst [P, T + 1] (int32); dst's other partitions are left as they are (public
    NKI docs: each GpSimd core reads and writes its 0-th partition). One NonzeroWithCount on GpSimd over the
    every-16th-partition views."""
    what = "nisa.nonzero_with_count"
    if dst is None:
        raise KernelError(f"{what} writes a dst tile (dst=...)")
    x, d = _tile(src, what, "src"), _tile(dst, what, "dst")
    if x.bir_dtype not in ("float32", "int32") or d.bir_dtype != "int32":
        raise KernelError(f"{what}: src is float32 or int32 ({x.bir_dtype}) and dst int32 ({d.bir_dtype})")
    if x.storage.buffer != "sbuf" or d.storage.buffer != "sbuf":
        raise KernelError(f"{what}: src and dst must be in SBUF (GpSimd cannot access PSUM)")
    if d.shape[0] != x.shape[0] or _per_partition(d) != _per_partition(x) + 1:
        raise KernelError(f"{what}: dst {d.name} {list(d.shape)} must have src's partitions and one more element "
                          f"than src {x.name} {list(x.shape)}")
    for v, arg in ((index_offset, "index_offset"), (padding_val, "padding_val")):
        if not isinstance(v, int) or isinstance(v, bool) or not -2 ** 24 <= v <= 2 ** 24:
            raise KernelError(f"{what}: {arg} must be an integer (within 2^24), got {v!r}")
    _emit("NonzeroWithCount", [_every_16th(x), _imm(index_offset), _imm(padding_val)], [_every_16th(d)], what)
    return d
