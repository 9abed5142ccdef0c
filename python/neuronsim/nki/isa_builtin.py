"""nki.isa: the older namespace's calls into compiler-provided kernels -- builtin_custom_op, attention_kernel,
attention_kernel_cache -- refused, each with its reason: what they compute is a compiled library or kernel, not an
instruction the public pages define."""
from . import registry
from .errors import Unsupported, source_location

_refused = registry.api("nki.isa", status="refused")


@_refused
def builtin_custom_op(function_name=None, lib_file_name=None, ulib_to_ucode_version=None, ulib_to_isa_version=None,
                      srcs=None, dsts=None, **kw):
    raise Unsupported(f"nisa.builtin_custom_op ({function_name!r} of {lib_file_name!r}) is refused: it runs a compiled "
                      "GpSimd custom-op library whose code neuronsim cannot execute (a BIR CustomOp reaches one only "
                      "through `neuronsim run --kernel-sim`)", source_location())


@_refused
def attention_kernel(kernel_name=None, *args, **kw):
    raise Unsupported("nisa.attention_kernel is refused: a compiler-provided attention kernel whose computation the "
                      "public pages do not define (it left the reference after NKI 2.26); write the attention in NKI "
                      "calls", source_location())


@_refused
def attention_kernel_cache(kernel_name=None, *args, **kw):
    raise Unsupported("nisa.attention_kernel_cache is refused: a compiler-provided attention kernel whose computation "
                      "the public pages do not define (it left the reference after NKI 2.26)", source_location())
