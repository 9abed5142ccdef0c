"""nki.language: matrix multiplication and transposes on the tensor engine (nl.matmul, nl.transpose), and the PE /
VectorE transposes and the matmul that nki.isa's calls share."""
import math

from . import registry
from .clips import clipped
from .errors import KernelError, Unsupported
from .nl_common import _bir, _emit, _mask, _new_tile, _tile
from .nl_dma import tensor_copy_to

_api = registry.api("nki.language")


# ---------------------------------------------------------------------------------------------------- matmul
def _pe_transpose(x, what):
    """x [P, F] -> PSUM [F, P]: a PE transpose (Matmult is_transpose, the identity matmul of NKI nc_transpose;
    reference neuron-arch.md 3.3), output dtype = input dtype."""
    if x.shape[0] > 128 or len(x.shape) != 2 or x.shape[1] > 128:
        raise KernelError(f"{what}: a PE transpose takes a 2-D tile of at most [128, 128], {x.name} is "
                          f"{list(x.shape)}")
    out = _new_tile((x.shape[1], x.shape[0]), x.bir_dtype, "psum")
    out.storage.__dict__["temp"] = True
    _emit("Matmult", [x], [out], what, {"is_transpose": True})
    return out


def _dve_transpose(x, what):
    """x [P, F] -> [F, P] on VectorE (NKI nc_transpose on the vector engine), output dtype = input dtype
    (StreamTranspose does not cast) in x's own buffer (SBUF or PSUM). One StreamTranspose swaps a block of up to
    32 x 32 (reference neuronx-cc/bir/sim-elementwise-datamove.md 5.3; NKI docs: the vector engine transposes
    "[32, 32] or smaller"): a larger tile, up to [128, 128], is one StreamTranspose per 32 x 32 block, block (i, j)
    of x written as block (j, i) of the result (INFERRED: how the compiler splits it is not documented; the blocks
    are independent, so any order gives these values)."""
    if len(x.shape) != 2 or x.shape[0] > 128 or x.shape[1] > 128:
        raise KernelError(f"{what}: a vector-engine transpose takes a 2-D tile of at most [128, 128] (32 x 32 "
                          f"blocks), {x.name} is {list(x.shape)}")
    P, F = int(x.shape[0]), int(x.shape[1])
    out = _new_tile((x.shape[1], x.shape[0]), x.bir_dtype, x.storage.buffer)
    out.storage.__dict__["temp"] = True
    if P <= 32 and F <= 32:
        _emit("StreamTranspose", [x], [out], what, {}, engine="DVE")
        return out
    if any(clipped(n) for _, n, _ in x.dims):
        raise Unsupported(f"{what}: a mask= on a vector-engine transpose larger than 32 x 32")
    (ps, _, _), (fs, _, _) = x.dims
    (ops, _, _), (ofs, _, _) = out.dims
    for i in range(0, P, 32):
        for j in range(0, F, 32):
            p, f = min(32, P - i), min(32, F - j)
            src = x.like(x.off_p + i * ps, x.off_f + j * fs, [(ps, p, True), (fs, f, False)])
            dst = out.like(out.off_p + j * ops, out.off_f + i * ofs, [(ops, f, True), (ofs, p, False)])
            _emit("StreamTranspose", [src], [dst], what, {}, engine="DVE")
    return out


def matmul_op(stationary, moving, what, dtype="float32"):
    """out[M, N] = stationary[K, M]^T @ moving[K, N] in PSUM (fp32): one Matmult on PE (NKI nki.isa.nc_matmul). A
    moving operand of several free dims [K, a, b, ...] streams them in order (N = a * b * ...; a convolution's
    [C_in, K0, K1, N] window), and the result has them: [M, a, b, ...]."""
    st, mv = _tile(stationary, what, "stationary"), _tile(moving, what, "moving")
    for v, arg in ((st, "stationary"), (mv, "moving")):
        if v.storage.buffer != "sbuf":
            raise KernelError(f"{what}: the {arg} operand {v.name} is in {v.storage.buffer.upper()}; the PE array "
                              "reads SBUF (copy PSUM results to SBUF first)")
        if len(v.shape) != 2 and (arg == "stationary" or len(v.shape) < 2):
            raise KernelError(f"{what}: the {arg} operand {v.name} must be 2-D, it is {list(v.shape)}")
    K, M = st.shape
    K2, N = mv.shape[0], math.prod(mv.shape[1:])
    if K != K2:
        raise KernelError(f"{what}: shape mismatch: the contraction (partition) dims differ: stationary {st.name} "
                          f"{list(st.shape)}, moving {mv.name} {list(mv.shape)}")
    if M > 128 or N > 512:
        raise KernelError(f"{what}: stationary free size {M} (max 128) / moving free size {N} (max 512) "
                          "(nl.tile_size.gemm_stationary_fmax, gemm_moving_fmax)")
    out = _new_tile((M,) + tuple(mv.shape[1:]), _bir(dtype), "psum")
    out.storage.__dict__["temp"] = True
    _emit("Matmult", [st, mv], [out], what, {"start_tensor_calc": True})
    return out


def pe_tiling(tile_position, tile_size, rows, cols, what, row_only=False):
    """The fields of NKI's PE tiling mode (public NKI docs, nki.isa.nc_matmul "Tiling mode"): tile_size (row_size,
    column_size) and tile_position (start_row, start_column), both or neither; sizes 32, 64 or 128, a start a
    multiple of its size, the stationary's partitions (rows) and free size (cols) within the tile. row_only (the
    MX matmul): column_size 128 and start_column 0. The simulator keeps them as read, not modelled: a tile of the
    array computes the same product (isa/tables/inst_fields.def)."""
    if not tile_position and not tile_size:
        return {}
    if not tile_position or not tile_size or len(tile_position) != 2 or len(tile_size) != 2:
        raise KernelError(f"{what}: tile_position and tile_size are set together, each a pair (public NKI docs, "
                          f"Tiling mode), got tile_position={tile_position!r} tile_size={tile_size!r}")
    try:
        pos, size = [int(v) for v in tile_position], [int(v) for v in tile_size]
    except TypeError:
        raise KernelError(f"{what}: tile_position / tile_size of loop variables are not lowered; give integers")
    for i, (p, n, name) in enumerate(zip(pos, size, ("row", "column"))):
        if n not in (32, 64, 128) or p % n or not 0 <= p < 128:
            raise KernelError(f"{what}: tile_size {name} {n} (32, 64 or 128) and tile_position {name} {p} (a multiple "
                              "of it, below 128)")
    if row_only and (size[1] != 128 or pos[1] != 0):
        raise KernelError(f"{what}: only row tiling: tile_size column 128 and tile_position column 0, got "
                          f"{tile_size!r} / {tile_position!r}")
    if rows > size[0] or cols > size[1]:
        raise KernelError(f"{what}: the stationary tile [{rows}, {cols}] exceeds tile_size {tuple(size)}")
    return {"tile_position": pos, "tile_size": size}


@_api
def matmul(x, y, *, transpose_x=False, mask=None, **kw):
    """nl.matmul: x @ y (x [M, K]) or x.T @ y (transpose_x=True, x [K, M]) into a PSUM tile (fp32). Without
    transpose_x, x is transposed on PE first and copied back to SBUF, as the compiler does -- once before
    the loops x does not change in (hoist.py)."""
    x, y = _tile(x, "nl.matmul", "x"), _tile(y, "nl.matmul", "y")
    x, y = _mask([x, y], mask, "nl.matmul")
    # The PE array reads SBUF: an operand in PSUM (an nl.transpose or nl.matmul result) is copied out first, as the
    # compiler does (nisa.nc_matmul likewise).
    if x.storage.buffer == "psum":
        x = tensor_copy_to(x, x.bir_dtype, "nl.matmul")
    if y.storage.buffer == "psum":
        y = tensor_copy_to(y, y.bir_dtype, "nl.matmul")
    if not transpose_x:
        if x.storage.buffer != "sbuf":
            raise KernelError(f"nl.matmul: x {x.name} must be in SBUF")
        xt = _pe_transpose(x, "nl.matmul")
        x = tensor_copy_to(xt, x.bir_dtype, "nl.matmul")
        # A group the lowering emits once before the loops x does not change in (hoist.py), as a compiler hoists it.
        transpose_op = xt.storage.__dict__["producer"]
        transpose_op.extra["hoist"] = (transpose_op, x.storage.__dict__["producer"])
    return matmul_op(x, y, "nl.matmul")


@_api
def transpose(x, *, dtype=None, mask=None, **kw):
    """nl.transpose: a 2-D tile transposed on PE into PSUM."""
    x = _tile(x, "nl.transpose", "x")
    (x,) = _mask([x], mask, "nl.transpose")
    if x.storage.buffer != "sbuf":
        raise KernelError(f"nl.transpose: x {x.name} must be in SBUF (the PE array reads SBUF)")
    out = _pe_transpose(x, "nl.transpose")
    if dtype is not None and _bir(dtype) != x.bir_dtype:
        return tensor_copy_to(out, _bir(dtype), "nl.transpose")
    return out
