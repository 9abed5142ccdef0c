"""The engine of an instruction the kernel leaves to the compiler (engine=None or nisa.unknown_engine), where NKI
documents the choice. A pass over the finished trace (api._trace_once, after hoist.py, before bcast_pe.py), so it
sees each operand's final buffer and each result's final dtype, whichever form (nl.add, nisa.tensor_tensor with or
without dst=) made the instruction.

tensor_tensor (public NKI docs, nki.isa.tensor_tensor, current namespace; reference neuron-arch.md 3.3 "tensor_tensor
(DVE; POOL for power and int32)"):
- op power runs on GpSimd, which cannot read or write PSUM: a power with a PSUM operand is refused by name;
- add / subtract / multiply whose inputs and output are all int32 or uint32 default to GpSimd (native integer
  arithmetic), falling back to the Vector Engine when any operand is in PSUM;
- everything else stays on the Vector Engine (the instruction's own engine).
An engine the kernel names is kept as written. No other instruction has a documented rule: NKI's tensor_scalar passes
an unknown engine on to the compiler, whose choice is not documented (docs/modelled.md), so it stays on VectorE."""
from .errors import KernelError
from .tracer import Loop, View

_INTS = ("int32", "uint32")
_INT_ARITH = ("add", "subtract", "mult")


def place_default_engines(trace):
    _walk(trace.root)


def _walk(block):
    for item in block.items:
        if isinstance(item, Loop):
            _walk(item.body)
        elif item.type == "TensorTensor" and item.engine in (None, "unknown"):
            item.engine = tensor_tensor_engine(item)


def tensor_tensor_engine(op):
    """The engine NKI gives an instruction of nisa.tensor_tensor left to the compiler (None: its own, VectorE)."""
    views = [v for v in list(op.ins) + list(op.outs) if isinstance(v, View)]
    in_psum = [v for v in views if v.storage.buffer == "psum"]
    alu = op.fields.get("op")
    if alu == "pow":
        if in_psum:
            raise KernelError(f"{op.what}: power runs on the GpSimd Engine, which cannot access PSUM; "
                              f"{in_psum[0].name} is in PSUM (NKI nki.isa.tensor_tensor)", op.where)
        return "Pool"
    if alu in _INT_ARITH and not in_psum and all(v.bir_dtype in _INTS for v in views):
        return "Pool"
    return None
