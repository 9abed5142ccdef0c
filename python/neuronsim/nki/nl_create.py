"""nki.language: the memory names (nl.sbuf, nl.psum, nl.hbm...), nl.tile_size and nl.par_dim, and the calls that create
tensors: nl.ndarray, nl.zeros / ones / full and their _like forms (a Memset), nl.shared_constant, and nl.reshape of
a contiguous view (nl_views.py)."""
from . import dtypes, registry
from .compiler import Placement
from .errors import KernelError, Unsupported
from .nl_common import _bir, _emit, _new_tile
from .nl_views import reshape_view
from .symbolic import ParDim
from .tracer import View, new_storage

_api = registry.api("nki.language")


# ---------------------------------------------------------------------------------------------------- constants
sbuf, psum, hbm, shared_hbm, private_hbm = "sbuf", "psum", "hbm", "shared_hbm", "private_hbm"


class _TileSize:
    """nl.tile_size: the hardware tile maxima, with the values the NKI docs state (nki.language.tile_size page;
    tiling-overview page, Tile-Size Constraints 1-3: pmax == 128, psum_bank_fmax == 512, gemm_stationary_fmax ==
    128, gemm_moving_fmax == 512; nki.isa.bn_stats page: 512; legacy programming-model page: psum_fmax == 512). A
    PSUM bank holds 2 KiB per partition (512 fp32; reference neuron-arch.md 1.4), 8 banks. The SBUF sizes are
    trn1's (arch trn1.json sbuf_bytes_per_partition; the usable part is the lowering's budget). The documentation
    gives no number for the address alignments: reading one raises Unsupported saying so."""
    pmax = 128
    psum_fmax = 512  # deprecated alias of psum_bank_fmax
    psum_bank_fmax = 512
    psum_bank_fmax_bytes = 2048
    psum_num_banks = 8
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    total_available_sbuf_size = 180224  # usable bytes per partition (deprecated name of sbuf_fmax_bytes)
    sbuf_fmax_bytes = 180224
    sbuf_fmax = 180224 // 4
    sbuf_size_bytes = 128 * 196608  # all partitions, 24 MiB (reference neuron-arch.md 1.4)

    @property
    def psum_min_align(self):
        raise Unsupported("nl.tile_size.psum_min_align: the NKI documentation gives no value for PSUM's address "
                          "alignment")

    @property
    def sbuf_min_align(self):
        raise Unsupported("nl.tile_size.sbuf_min_align: the NKI documentation gives no value for SBUF's address "
                          "alignment")


tile_size = _TileSize()
registry.value("nki.language", "tile_size", tile_size)
registry.value("nki.language", "_TileSize", _TileSize)


@_api
def par_dim(n):
    """nl.par_dim(n): marks the partition dim of a shape (NKI's (blocks, par_dim(P), free) tiles); without it the
    first dim of an SBUF/PSUM tile is its partition dim."""
    return ParDim(int(n))


# ---------------------------------------------------------------------------------------------------- creation
def _create(shape, dtype, buffer, what, name=None, address=None):
    """A new tile; an explicit placement (buffer=nki.compiler.sbuf.mod_alloc(...) and the like, or address=) is kept
    on its storage for the allocator (allocate.py), which places the tile there."""
    if buffer is None:
        buffer = sbuf
    spec = None
    if isinstance(buffer, str):
        b = str(buffer)  # nl.sbuf (a MemoryRegion, a str): "sbuf"
    else:
        b = getattr(buffer, "name", None)
        if b not in (sbuf, psum):
            raise Unsupported(f"{what}: buffer={buffer!r}: the front end places tensors in nl.sbuf, nl.psum, nl.hbm, "
                              "nl.shared_hbm, nl.private_hbm or an nki.compiler allocation")
        if getattr(buffer, "kind", "auto") != "auto":
            spec = buffer
    if address is not None:
        if b not in (sbuf, psum):
            raise KernelError(f"{what}: address= places an SBUF or PSUM tensor, this one is in {b}")
        if spec is not None:
            raise KernelError(f"{what}: both address= and buffer={spec!r} place the tensor: give one")
        try:
            part, byte = (int(x) for x in address)
        except (TypeError, ValueError):
            raise KernelError(f"{what}: address= takes (partition, byte offset), got {address!r}")
        spec = Placement(b, "address", partition=part, byte=byte)
    t = _new_tile(tuple(shape), _bir(dtype), b, name=name)
    if spec is not None:
        t.storage.__dict__["placement"] = spec
    return t


@_api
def ndarray(shape, dtype, *, buffer=None, name="", address=None, **kw):
    """nl.ndarray: a tensor of the given shape in buffer (default SBUF); its values are not set. address=(partition,
    byte) places an SBUF / PSUM tensor there (the current NKI's explicit placement)."""
    return _create(shape, dtype, buffer, "nl.ndarray", name or None, address)


@_api
def empty_like(a, dtype=None, *, buffer=None, name="", **kw):
    return _create(a.shape, dtype if dtype is not None else a.dtype, buffer or a.buffer, "nl.empty_like",
                   name or None)


def _filled(shape, dtype, buffer, value, what, name=None):
    t = _create(shape, dtype, buffer, what, name)
    t.storage.__dict__["temp"] = False
    if t.storage.buffer == "hbm":
        raise Unsupported(f"{what} in HBM: create the tile in SBUF and nl.store it")
    op = _emit("Memset", [], [t], what, {"mode": "Const", "constant": float(value)}, kind="zero")
    if t.storage.buffer == "psum" and value == 0:
        t.storage.zero_op = op  # nl.zeros in PSUM: a matmul accumulation group may take its place (emit_bir.py)
    return t


@_api
def zeros(shape, dtype, *, buffer=None, name="", **kw):
    return _filled(shape, dtype, buffer, 0.0, "nl.zeros", name or None)


@_api
def ones(shape, dtype, *, buffer=None, name="", **kw):
    return _filled(shape, dtype, buffer, 1.0, "nl.ones", name or None)


@_api
def full(shape, fill_value, dtype, *, buffer=None, name="", **kw):
    return _filled(shape, dtype, buffer, fill_value, "nl.full", name or None)


@_api
def zeros_like(a, dtype=None, *, buffer=None, name="", **kw):
    return _filled(a.shape, dtype if dtype is not None else a.dtype, buffer or a.buffer, 0.0, "nl.zeros_like",
                   name or None)


@_api
def ones_like(a, dtype=None, *, buffer=None, name="", **kw):
    return _filled(a.shape, dtype if dtype is not None else a.dtype, buffer or a.buffer, 1.0, "nl.ones_like",
                   name or None)


@_api
def full_like(a, fill_value, dtype=None, *, buffer=None, name="", **kw):
    return _filled(a.shape, dtype if dtype is not None else a.dtype, buffer or a.buffer, fill_value, "nl.full_like",
                   name or None)


@_api
def shared_constant(constant, dtype=None, **kw):
    """An HBM tensor holding constant data the kernel carries (nl.shared_constant): an input of the BIR whose data
    neuronsim.nki.simulate / benchmark and `neuronsim nki` supply with the run (docs/nki-lowering.md 2)."""
    import os
    import numpy as np
    if isinstance(constant, (str, os.PathLike)):  # "a numpy array or a file path to a .npy file" (the NKI page)
        path = os.fspath(constant)
        try:
            constant = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise KernelError(f"nl.shared_constant: cannot read the .npy file {path!r}: {e}") from None
        if not isinstance(constant, np.ndarray):
            raise KernelError(f"nl.shared_constant: {path!r} holds several arrays (.npz); give one .npy array")
    data = np.asarray(constant)
    bir = _bir(dtype, dtypes.bir_name(data.dtype) or "float32")
    v = new_storage(data.shape, bir, "hbm", kind="const").view()
    v.storage.__dict__["data"] = data
    return v


@_api
def reshape(x, shape):
    """Reshape of a contiguous view (nl_views.reshape_view: an HBM tensor or a slice of one, a tile's free dims)."""
    if not isinstance(x, View):
        raise KernelError(f"reshape of {x!r}: a tensor or tile is reshaped")
    return reshape_view(x, shape)
