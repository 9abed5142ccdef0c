"""mask= on an NKI call (NKI docs, "NKI API Masking"): "an execution predicate known at compile-time, which informs
the compiler to skip generating the instruction or generate the instruction with a smaller input tile shape".

A mask is a comparison (or several joined by `&`) of affine expressions of nl.arange / nl.mgrid indices, loop
variables and program ids, in either orientation; a Python bool is a constant mask. Each comparison, over the
trace's current loop ranges (docs/nki-lowering.md "Masks"):
- holds everywhere: nothing to do (a tail mask the shapes never need);
- holds nowhere: the call's instructions are dropped;
- depends on a loop variable: the loop is cut where it changes (loop_plan.py) and the kernel traced again; on each
  segment it then holds everywhere, nowhere, or -- a peeled trip, its loop variable a number -- is static;
- static, on one axis: the operands' dims at that axis's position (counted from the last, numpy's broadcasting) cover
  only the interval where it holds (clips.Clipped): the instruction is emitted over that interval;
- static, on two axes (`i_p >= i_f`): the instruction is emitted once per piece, a rectangle of the valid set
  (clips.PairClip).
Index range checks the views carry (clips.Check) are then made over the dims as clipped: the mask is applied before
the indices are checked, so `x[i * 128 + i_p, i_f]` past the end of x on its tail trip is in range under
mask=(i * 128 + i_p < n), and masked-out elements are neither read nor written.
"""
from .clips import Clipped, PairClip, clipped, holds, true_intervals
from .errors import KernelError, Unsupported
from .loop_plan import cuts_for_mask
from .symbolic import SHARD, NeedsUnroll
from .tracer import View, bounds, current


def _terms(mask, what):
    """The comparisons of mask as [(e, op)] meaning `e op 0`; None for a constant False."""
    if mask is None or mask is True:
        return []
    if mask is False or type(mask).__name__ == "bool_":
        return [] if bool(mask) else None
    if not hasattr(mask, "terms"):
        raise KernelError(f"{what}: mask= takes a comparison of index expressions (or a bool), got {mask!r}")
    return list(mask.terms)


def _uniform(e, op):
    """True when `e op 0` holds for every value e takes, False when for none, None otherwise."""
    lo, hi = bounds(e)
    if op in ("==", "!="):
        if lo == hi:
            return holds(lo, op)
        return (op == "!=") if not lo <= 0 <= hi else None
    if holds(lo, op) and holds(hi, op):
        return True
    if not holds(lo, op) and not holds(hi, op):
        return False
    return None


def apply(views, mask, what):
    """The views as the masked call's instruction(s) see them (see the module's docstring); the call's state
    (tr.call, nl_common.api_call) says when its instructions are dropped or the kernel is traced again."""
    tr = current(what)
    terms = _terms(mask, what)
    if terms is None:
        tr.call["drop"] = True
        terms = []
    intervals, pairs = {}, []
    for e, op in terms:
        u = _uniform(e, op)
        if u is True:
            continue
        if u is False:
            tr.call["drop"] = True
            continue
        if SHARD in e.loop:
            raise Unsupported(f"{what}: a mask= on nl.program_id along an nl.nc launch-grid axis (the cores share "
                              "one program; use the shard id in an index instead)")
        if e.loop:
            loop = min((tr.loops[v] for v in e.loop), key=_depth)
            if loop.split:
                raise NeedsUnroll(f"{what}: a mask= on a loop split for // or %")
            tr.request(loop.key, cuts_for_mask(e, op, loop, tr.var_range, what))
            tr.call["unresolved"] = True
            continue
        axes = sorted(e.axes.items())
        if len(axes) == 1:
            (pos, c), = axes
            ivs = true_intervals(c, e.c, op, e.sizes.get(pos, 1))
            if len(ivs) != 1:
                pairs.append((PairClip(c, 0, e.c, op, e.sizes.get(pos, 1), 1), pos, None))
                continue
            lo, hi = intervals.get(pos, (0, 1 << 62))
            intervals[pos] = (max(lo, ivs[0][0]), min(hi, ivs[0][1]))
        elif len(axes) == 2:
            (pa, ca), (pb, cb) = axes
            pairs.append((PairClip(ca, cb, e.c, op, e.sizes.get(pa, 1), e.sizes.get(pb, 1)), pa, pb))
        else:
            raise Unsupported(f"{what}: a mask= comparison over {len(axes)} index axes at once (one or two are "
                              "lowered; join single comparisons with &)")
    if any(hi <= lo for lo, hi in intervals.values()) or any(not p.pieces for p, _, _ in pairs):
        tr.call["drop"] = True
    if tr.call.get("drop") or tr.call.get("unresolved"):
        return [_plain(v) for v in views]  # nothing runs (or the trace is redone): no index is checked
    if intervals or pairs:
        tr.call["clips"] = (intervals, pairs)  # for the call's other operands too (clip_operand)
    return [clip_view(v, intervals, pairs, bool(terms)) if isinstance(v, View) else v for v in views]


def clip_view(v, intervals, pairs, masked=True):
    """v with the dims at the clipped positions (counted from its last dim; dims of size 1 are not clipped) narrowed,
    and its index range checks made over them."""
    dims = list(v.dims)
    for pos, (lo, hi) in intervals.items():
        d = len(dims) + pos
        if d >= 0 and dims[d][1] != 1:
            dims[d] = _narrow(dims[d], lo, hi)
    for pair, pa, pb in pairs:
        for pos, role in ((pa, "a"), (pb, "b")):
            d = len(dims) + pos if pos is not None else -1
            if pos is not None and d >= 0 and dims[d][1] != 1:
                st, n, part = dims[d]
                n = n if clipped(n) else Clipped(n)
                dims[d] = (st, n.paired(pair, role), part)
    for c in v.oob:
        c.verify(dims, bounds, masked=masked)
    return View(v.storage, v.off_p, v.off_f, dims, v.bir_dtype, v.dyn)


def clip_operand(v, call):
    """An operand of a masked call's instruction that the call did not pass through its mask (a per-partition
    scalar, an initial value, a reduction's destination): clipped at the same positions, unless it is already."""
    clips = call.get("clips")
    if clips is None or not isinstance(v, View) or any(clipped(n) for _, n, _ in v.dims):
        return v
    return clip_view(v, *clips)


def _narrow(dim, lo, hi):
    st, n, part = dim
    n = n if clipped(n) else Clipped(n)
    return st, n.narrowed(lo, hi), part


def _depth(loop):
    d = 0
    while loop.parent is not None:
        loop, d = loop.parent, d + 1
    return d


def _plain(v):
    return View(v.storage, v.off_p, v.off_f, v.dims, v.bir_dtype, v.dyn) if isinstance(v, View) and v.oob else v


def plain_result(x):
    """A call's result as the kernel holds it: whole tiles, without the dims its own mask clipped (the next call
    sees the tile, as in NKI; the instructions that wrote it keep their clipped views)."""
    if isinstance(x, View) and any(clipped(n) for _, n, _ in x.dims):
        return View(x.storage, x.off_p, x.off_f, [(s, int(n), p) for s, n, p in x.dims], x.bir_dtype, x.dyn)
    if isinstance(x, tuple):
        return tuple(plain_result(e) for e in x)
    return x


def carry_clips(dst, src):
    """dst with the clipped dims of src (the view a masked instruction wrote, now to write dst instead: t[...] =
    masked result), matched one to one, or over the dims of size > 1 when the shapes differ only in those of 1."""
    if not any(clipped(n) for _, n, _ in src.dims):
        return dst
    dims = list(dst.dims)
    if len(dims) == len(src.dims):
        pairs = list(range(len(dims)))
        pairs = list(zip(pairs, pairs))
    else:
        a = [i for i, (_, n, _) in enumerate(dims) if n != 1]
        b = [i for i, (_, n, _) in enumerate(src.dims) if n != 1]
        pairs = list(zip(a, b)) if len(a) == len(b) else []
    for i, j in pairs:
        n = src.dims[j][1]
        if clipped(n) and int(n) == int(dims[i][1]):
            dims[i] = (dims[i][0], n, dims[i][2])
    return View(dst.storage, dst.off_p, dst.off_f, dims, dst.bir_dtype, dst.dyn, dst.oob)
