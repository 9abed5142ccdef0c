"""nki.language (nl) on the neuronsim tracer: each function records the BIR instruction(s) NKI lowers it to.

Every function is a small definition of its own (a second engineer may add functions beside these): it checks its
operands in the kernel's terms (KernelError naming the kernel's file:line and the tensor) and emits through
_emit / _new_tile (nl_common.py). The engine an instruction runs on is the simulator's rule for its BIR type
(engine_policy.cpp, from the NKI ISA pages) unless the NKI call names one. Public NKI docs, nki.language pages, are
the source of each signature; docs/nki-lowering.md lists what each lowers to.

This module is the public namespace: the definitions live by topic, each registered under nki.language
(registry.py) --
    nl_create.py  memory names, nl.tile_size, nl.par_dim, tensor creation (ndarray, zeros, full...), reshape
    nl_loops.py   loops, index expressions (arange, ds, mgrid), launch grids (nc, program_id...)
    nl_dma.py     load, store, copy, broadcast_to, the shared identity, device_print
    nl_math.py    element-wise operators and activation functions, where
    nl_reduce.py  sum, max, min, prod, mean, all, any
    nl_norm.py    softmax, var, rms_norm (composites of the above)
    nl_random.py  rand, dropout (random_seed refused)
    nl_matmul.py  matmul, transpose
and nl_assign.py holds the tile statements t[...] = v and t += v.
"""
from . import nl_assign  # noqa: F401 - registers the tile statements the tracer's View runs
from .dtypes import (bfloat16, bool_, float8_e4m3, float8_e4m3fn, float8_e5m2, float16, float32, int8, int16,  # noqa: F401
                     int32, tfloat32, uint8, uint16, uint32)
from .dtypes import float4_e2m1fn_x4, float8_e4m3fn_x4, float8_e5m2_x4, float8_e8m0fnu  # noqa: F401 - MX
from .errors import Unsupported, source_location
from .nl_create import (empty_like, full, full_like, hbm, ndarray, ones, ones_like, par_dim, private_hbm,  # noqa: F401
                        psum, reshape, sbuf, shared_constant, shared_hbm, tile_size, zeros, zeros_like)
from .nl_dma import (broadcast_to, copy, device_print, load, load_transpose2d, shared_identity_matrix,  # noqa: F401
                     store)
from .nl_loops import (affine_range, arange, ds, fori_loop, mgrid, nc, num_programs, program_id,  # noqa: F401
                       program_ndim, sequential_range, static_range)
from .nl_math import abs_max, abs_min, fmod, mod, tan, trunc  # noqa: F401
from .nl_math import (abs, add, arctan, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, ceil, cos,  # noqa: F401
                      divide, equal, erf, exp, floor, gelu, gelu_apprx_tanh, greater, greater_equal, invert,
                      left_shift, less, less_equal, log, logical_and, logical_not, logical_or, logical_xor,
                      maximum, minimum, mish, multiply, negative, not_equal, power, reciprocal, relu, right_shift,
                      rsqrt, sigmoid, sign, silu, sin, softplus, sqrt, square, subtract, tanh, where)
from .nl_dma import gather_flattened, static_cast  # noqa: F401
from .nl_matmul import matmul, transpose  # noqa: F401
from .nl_norm import rms_norm, softmax, var  # noqa: F401
from .nl_random import dropout, rand, random_seed  # noqa: F401
from .nl_reduce import all, any, max, mean, min, prod, sum  # noqa: F401


def __getattr__(name):
    """Every nki.language name not defined above: Unsupported naming the call and the kernel's line."""
    if name.startswith("__"):
        raise AttributeError(name)
    raise Unsupported(f"nl.{name} is not lowered by neuronsim's NKI front end (docs/nki-lowering.md lists what is)",
                      source_location())
