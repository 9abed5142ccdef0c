"""nki.isa: OCP MX (microscaling) -- quantize_mx on VectorE (BIR QuantizeMx) and nc_matmul_mx on PE (BIR MatmultMx),
the simulator's MX kernels (engines/ops/mx.cpp). Public NKI docs, nki.isa.quantize_mx / nc_matmul_mx pages.

Layout (both pages): a block of 32 values is 8 partitions x 4 consecutive free elements; the 4 elements are one x4
container of the quantized tile, so a [P, 4C] source quantizes to [P, C] x4 data and one E8M0 scale per block.
The scale tile holds the [P/8, C] block grid directly when P <= 32, else it is a [P, C] tile in which grid row i
lives in partition (i % 4) + 32 * (i // 4): the scales of a 32-partition quadrant stay in that quadrant (the layout
of the nki-samples MX tutorial; reference neuronx-cc/bir/sim-matmul-mx.md 6.4)."""
from . import dtypes, registry
from .errors import KernelError
from .isa import _out
from .isa_common import out_tile
from .nl_assign import _matmul_into
from .nl_common import _emit, _tile
from .nl_matmul import pe_tiling

_api = registry.api("nki.isa")

_SCALE_DTYPES = ("uint8", "float8_e8m0fnu")


def _elements(v):
    n = 1
    for d in v.shape[1:]:
        n *= d
    return n


def _scales(s, parts, containers, what, arg):
    """The scale tile of MX data of `parts` partitions and `containers` x4 elements per partition."""
    s = _tile(s, what, arg)
    if s.bir_dtype not in _SCALE_DTYPES:
        raise KernelError(f"{what}: {arg} {s.name} is {s.bir_dtype}; MX scales are float8_e8m0fnu or uint8")
    if s.storage.buffer != "sbuf":
        raise KernelError(f"{what}: {arg} {s.name} must be in SBUF")
    grid = (parts // 8, containers)
    spread = (parts, containers) if parts > 32 else None
    got = (s.shape[0], _elements(s))
    if got != grid and got != spread:
        want = f"[{grid[0]}, {grid[1]}]" + (f" or [{parts}, {containers}] (spread over the quadrants)"
                                             if spread else "")
        raise KernelError(f"{what}: {arg} {s.name} is {list(s.shape)}; the scales of [{parts}, {containers}] x4 data "
                          f"are {want}")
    return s


def _mx_data(v, what, arg):
    v = _tile(v, what, arg)
    if v.bir_dtype not in dtypes.MX_X4:
        raise KernelError(f"{what}: {arg} {v.name} is {v.bir_dtype}; MX data are float8_e4m3fn_x4, float8_e5m2_x4 "
                          "or float4_e2m1fn_x4")
    if v.storage.buffer != "sbuf":
        raise KernelError(f"{what}: {arg} {v.name} must be in SBUF")
    if v.shape[0] % 32 or v.shape[0] > 128:
        raise KernelError(f"{what}: {arg} {v.name} has {v.shape[0]} partitions; MX tiles take a multiple of 32, at "
                          "most 128")
    return v


@_api
def quantize_mx(dst=None, src=None, dst_scale=None, *, name=None, **kw):
    """dst (x4 fp8) and dst_scale (E8M0) = src (bf16 / fp16) quantized per 8 x 4 block with NKI's scale rule: X =
    2^(floor(log2 max|v|) - (Emax - 1)), Emax 8 (e4m3fn) or 15 (e5m2), an all-zero block 2^-127; each value v / X
    rounded to nearest even, saturating (one QuantizeMx with nki_scale_rule; engines/ops/mx.cpp)."""
    what = "nisa.quantize_mx"
    if dst is None or src is None or dst_scale is None:
        raise KernelError(f"{what} takes dst, src and dst_scale tiles")
    x = _tile(src, what, "src")
    if x.bir_dtype not in ("bfloat16", "float16"):
        raise KernelError(f"{what}: src {x.name} is {x.bir_dtype}; quantize_mx reads float16 or bfloat16")
    if x.storage.buffer != "sbuf":
        raise KernelError(f"{what}: src {x.name} must be in SBUF")
    P, F = x.shape[0], _elements(x)
    if P % 32 or P > 128 or F % 4:
        raise KernelError(f"{what}: src {x.name} is {list(x.shape)}; it takes a multiple of 32 partitions (at most "
                          "128) and a multiple of 4 elements per partition")
    d = _mx_data(dst, what, "dst")
    if d.bir_dtype == "float4_e2m1fn_x4":
        raise KernelError(f"{what}: dst {d.name}: quantize_mx writes float8_e5m2_x4 or float8_e4m3fn_x4, not fp4")
    out_tile(d, (P, F // 4), d.bir_dtype, what)
    s = _scales(dst_scale, P, F // 4, what, "dst_scale")
    _emit("QuantizeMx", [x], [d, s], what, {"nki_scale_rule": True})
    return d


@_api
def nc_matmul_mx(dst=None, stationary=None, moving=None, stationary_scale=None, moving_scale=None,
                 tile_position=None, tile_size=None, accumulate=None, *, name=None, **kw):
    """dst [M, N] (PSUM, fp32 or bf16) = st^T @ mv of the dequantized MX tiles: stationary [K, M] and moving [K, N]
    x4 (4K contraction rows: row 4p + r is lane r of partition p's containers), each value times its block's
    2^(scale - 127). One MatmultMx (engines/ops/mx.cpp); accumulate as nc_matmul's (an accumulation group in dst)."""
    what = "nisa.nc_matmul_mx"
    if dst is None:
        raise KernelError(f"{what} writes a dst PSUM tile (dst=...)")
    st, mv = _mx_data(stationary, what, "stationary"), _mx_data(moving, what, "moving")
    if len(st.shape) != 2 or len(mv.shape) != 2 or st.shape[0] != mv.shape[0]:
        raise KernelError(f"{what}: stationary {list(st.shape)} and moving {list(mv.shape)} are 2-D tiles of one "
                          "partition count")
    K, M = st.shape
    N = mv.shape[1]
    if M % 2 or M > 128:
        raise KernelError(f"{what}: the stationary free size {M} must be even and at most 128")
    d = _tile(dst, what, "dst")
    if d.storage.buffer != "psum" or d.bir_dtype not in ("float32", "bfloat16"):
        raise KernelError(f"{what}: dst {d.name} must be a float32 or bfloat16 PSUM tile")
    limit = 4096 if d.bir_dtype == "float32" else 8192
    if N > limit:
        raise KernelError(f"{what}: the moving free size {N} exceeds {limit} ({d.bir_dtype} dst, the whole PSUM)")
    sts = _scales(stationary_scale, K, M, what, "stationary_scale")
    mvs = _scales(moving_scale, K, N, what, "moving_scale")
    fields = {"start_tensor_calc": True}
    fields.update(pe_tiling(tile_position, tile_size, K, M, what, row_only=True))
    res = _out((M, N), d.bir_dtype, "psum")
    op = _emit("MatmultMx", [st, mv, sts, mvs], [res], what, fields)
    return _matmul_into(d, res, op, accumulate, what)
