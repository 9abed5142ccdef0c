"""nki.language (nl) on the neuronsim tracer: each function records the BIR instruction(s) NKI lowers it to.

Every function is a small definition of its own (a second engineer may add functions beside these): it checks its
operands in the kernel's terms (KernelError naming the kernel's file:line and the tensor) and emits through
_emit / _new_tile (nl_common.py). The engine an instruction runs on is the simulator's rule for its BIR type
(engine_policy.cpp, from the NKI ISA pages) unless the NKI call names one. Public NKI docs, nki.language pages, are
the source of each signature; docs/nki-lowering.md lists what each lowers to, docs/nki-api.md every name of the
reference and what neuronsim does with it.

This module is the public namespace: the definitions live by topic, each registered under nki.language
(registry.py) --
    nl_values.py  dtypes, memory regions, NKIObject / NkiTensor, fp32 / bfp16 / finfo, static_cast
    nl_create.py  nl.tile_size, nl.par_dim, tensor creation (ndarray, zeros, full...), reshape
    nl_loops.py   loops (dynamic ones too: dynamic_range, while_loop), index expressions (arange, ds, mgrid),
                  launch grids (nc, program_id...)
    nl_views.py   the access-pattern API of tensors (t.ap, t.view(dtype), t.get_pattern, the view primitives),
                  reshape
    nl_dma.py     load, store, copy, broadcast_to, the shared identity, device_print
    nl_math.py    element-wise operators and activation functions, where; bypass / average / prelu
    nl_reduce.py  sum, max, min, prod, mean, all, any
    nl_norm.py    softmax, var, rms_norm (composites of the above)
    nl_random.py  rand, dropout (random_seed refused)
    nl_matmul.py  matmul, transpose
    nl_atomic.py  atomic_rmw (a gather / add / scatter, repeated indices summed on PE first)
    nl_collective.py  the legacy all_reduce over launch-grid axes (an nl.nc(n) axis's cores)
    nl_indirect.py  NkiTensor.indirect (tensor indirection: per-column copies at run-time offsets)
and nl_assign.py holds the tile statements t[...] = v and t += v. A documented name defined nowhere is a refusal
(refusals.py): a value, raising Unsupported when called. The submodule nki.language.constants is nl_constants.py.
"""
import sys

from . import nl_assign, nl_indirect, nl_views  # noqa: F401 - register the tile statements and view methods the tracer's View runs
from . import nl_constants as constants
from . import registry
from .nl_create import (empty_like, full, full_like, ndarray, ones, ones_like, par_dim, reshape,  # noqa: F401
                        shared_constant, tile_size, zeros, zeros_like)
from .nl_dma import (broadcast_to, copy, device_print, load, load_transpose2d, shared_identity_matrix,  # noqa: F401
                     store)
from .nl_loops import (affine_range, arange, ds, dynamic_range, fori_loop, mgrid, nc, num_programs,  # noqa: F401
                       program_id, program_ndim, sequential_range, spmd_dim, static_range, while_loop)
from .nl_math import (abs, add, arctan, average, bitwise_and, bitwise_not, bitwise_or, bitwise_xor,  # noqa: F401
                      bypass, ceil, cos, divide, equal, erf, erf_dx, exp, floor, gelu, gelu_apprx_sigmoid,
                      gelu_apprx_sigmoid_dx, gelu_apprx_tanh, gelu_dx, greater, greater_equal, invert, left_shift,
                      less, less_equal, log, logical_and, logical_not, logical_or, logical_xor, maximum, minimum,
                      mish, multiply, negative, not_equal, power, prelu, reciprocal, relu, right_shift, rsqrt,
                      sigmoid, sign, silu, silu_dx, sin, softplus, sqrt, square, subtract, tanh, where)
from .nl_math import abs_max, abs_min, fmod, mod, tan, trunc  # noqa: F401
from .nl_dma import gather_flattened  # noqa: F401
from .nl_matmul import matmul, transpose  # noqa: F401
from .nl_atomic import atomic_rmw  # noqa: F401
from .nl_collective import all_reduce  # noqa: F401
from .nl_norm import rms_norm, softmax, var  # noqa: F401
from .nl_random import dropout, rand  # noqa: F401
from .nl_reduce import all, any, loop_reduce, max, mean, min, prod, sum  # noqa: F401
from .nl_values import (DType, MemoryRegion, NKIObject, NkiTensor, bfp16, finfo, fp32, hbm, is_hbm,  # noqa: F401
                        is_on_chip, is_psum, is_sbuf, private_hbm, psum, sbuf, shared_hbm, static_cast)
from .dtypes import (bfloat16, bool_, float4_e2m1fn_x4, float8_e4m3, float8_e4m3fn, float8_e4m3fn_x4,  # noqa: F401
                     float8_e5m2, float8_e5m2_x4, float8_e8m0fnu, float16, float32, int8, int16, int32, tfloat32,
                     uint8, uint16, uint32)
from . import refusals  # noqa: F401,E402 - the documented names not defined above

__neuronsim__ = True
# nki.language is a package as NKI's is: `import nki.language.constants` finds the submodule registered here.
__path__ = []
sys.modules[__name__ + ".constants"] = constants


def __getattr__(name):
    """A documented nki.language name not defined above: its registered value (a refusal raises Unsupported when
    called); any other name: Unsupported naming it and the kernel's line."""
    return registry.module_getattr("nki.language", name)
