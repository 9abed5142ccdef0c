"""nki.isa: DMAs -- dma_copy (Load, Save, DMACopy, or through a gather / scatter view IndirectLoad / IndirectSave,
nl_dma._dma) and dma_transpose (a DMACopy in Transpose mode, nl_dma.transpose_dma). Public NKI docs, the nki.isa page
of each; how they are timed: docs/timing-model.md 2 and 6."""
from . import isa_constants as _c
from . import nl_dma, registry
from .errors import KernelError, Unsupported, source_location
from .isa import _dst_form, _views
from .nl_common import _mask
from .nl_dma import _dma
from .tracer import View

_api = registry.api("nki.isa")


@_api
@_dst_form(lambda a: _views(a, 0, 1))
def dma_transpose(src, *, axes=None, mask=None, dtype=None, **kw):
    """src (HBM or SBUF, 2-4 dims) transposed by DMA into SBUF: [A, B] -> [B, A], [A, B, C] -> [C, B, A],
    [A, B, C, D] -> [D, B, C, A] (NKI nki.isa.dma_transpose; one DMACopy in Transpose mode, nl_dma.transpose_dma).
    The dst= form writes dst; the gather form (indices, software DGE) is not lowered."""
    what = "nisa.dma_transpose"
    if not isinstance(src, View):
        raise KernelError(f"{what}: src must be a tensor, got {src!r}")
    n = len(src.shape)
    if axes is not None and tuple(axes) != nl_dma.TRANSPOSE_AXES.get(n):
        raise Unsupported(f"{what}: axes={tuple(axes)} on a {n}-D source (NKI transposes {n}-D tiles by "
                          f"{nl_dma.TRANSPOSE_AXES.get(n)})")
    (src,) = _mask([src], mask, what)
    return nl_dma.transpose_dma(src, what, dtype)


@_api
def dma_copy(dst, src, priority=None, oob_mode=None, dge_mode=None, engine=None, *, mask=None, dst_rmw_op=None,
             **kw):
    """One DMA: HBM -> SBUF (Load), SBUF -> HBM (Save), or between two SBUF or two HBM tensors (DMACopy); a gather /
    scatter view (.ap(vector_offset=)) makes it an IndirectLoad / IndirectSave (nl_dma._dma). dst, src positional
    (the current reference's order) or as keywords (the legacy dst=, src=). The descriptor-generation mode (dge_mode)
    and the queue's priority are the simulator's choice (reference neuron-arch.md 2.4). oob_mode: a static access out
    of bounds is refused when the kernel is traced; a run-time one (scalar_offset) stops the run; an index of a gather
    / scatter past the tensor stops it too, or is skipped with oob_mode.skip (public NKI docs, nki.isa.dma_copy)."""
    if dst_rmw_op is not None:
        raise Unsupported("nisa.dma_copy: dst_rmw_op= (a DMA that combines into its destination) is not lowered",
                          source_location())
    if not isinstance(dst, View) or not isinstance(src, View):
        raise KernelError("nisa.dma_copy copies a tensor to a tensor (dst=, src=)")
    if dst.storage.buffer == "psum" or src.storage.buffer == "psum":
        raise KernelError("nisa.dma_copy: DMAs move HBM and SBUF, not PSUM")
    dst, src = _mask([dst, src], mask, "nisa.dma_copy")
    skip = getattr(oob_mode, "name", oob_mode) == "skip"  # nki.isa.oob_mode.skip (or its name)
    op = _dma(src, dst, "nisa.dma_copy", oob_skip=skip)
    # engine=: the engine whose sequencer triggers it, on that engine's queue (every sequencer triggers DMAs:
    # reference neuron-arch.md 1.1); unknown or dma leaves it where the lowering puts it (docs/timing-model.md 6).
    if engine is not None and not isinstance(engine, _c.engine):
        raise KernelError(f"nisa.dma_copy: engine={engine!r} is not an engine of nisa.engine")
    if engine is not None and engine.bir not in (None, "DMA"):
        op.engine = engine.bir
