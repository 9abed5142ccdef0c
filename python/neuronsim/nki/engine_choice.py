"""Which engine an instruction runs on, as NKI documents it: the engine of an instruction the kernel leaves to the
compiler (engine=None or nisa.unknown_engine), and the engines a kernel may name. A pass over the finished trace
(api._trace_once, after hoist.py, before bcast_pe.py), so it sees each operand's final buffer and each result's final
dtype, whichever form (nl.add, nisa.tensor_tensor with or without dst=) made the instruction.

tensor_tensor (public NKI docs, nki.isa.tensor_tensor, current namespace; reference neuron-arch.md 3.3 "tensor_tensor
(DVE; POOL for power and int32)"):
- op power runs on GpSimd, which cannot read or write PSUM: a power with a PSUM operand is refused by name;
- add / subtract / multiply whose inputs and output are all int32 or uint32 default to GpSimd (native integer
  arithmetic), falling back to the Vector Engine when any operand is in PSUM;
- everything else stays on the Vector Engine (the instruction's own engine).
An engine the kernel names is kept as written. No other instruction has a documented rule: NKI's tensor_scalar passes
an unknown engine on to the compiler, whose choice is not documented (docs/modelled.md), so it stays on VectorE.

nisa.tensor_scalar on an engine the kernel names (reference neuron-arch.md 3.3 and 3.4, from the ISA pages and the
"Supported Math Operators" table of Neuron 2.26): bit-vector operators run on the Vector Engine only, and on trn1 /
trn2 so do comparison and logical operators, max, min and subtract; GpSimd runs tensor_scalar for rsqrt only; the
Scalar Engine adds and multiplies from NeuronCore-v3 (trn2) on, and on trn2 takes (multiply, add), (multiply, none)
and (add, none) only. Anything else is refused by name, as NKI's checks refuse it."""
import functools

from .. import _core
from .errors import KernelError
from .tracer import Loop, View

_INTS = ("int32", "uint32")
# "32-bit integer Add and Multiply are only supported on GpSIMD Engine" (reference neuron-arch.md 3.1); subtract, an add
# of the negation, with them (INFERRED: the tensor_tensor page says all-int32 arithmetic defaults to GpSimd).
_INT_ARITH = ("add", "subtract", "mult")
_ACT_PAIRS_TRN2 = (("mult", "add"), ("mult", None), ("add", None))  # core generation 3
# The operators the operator table runs on the Vector Engine only (besides the bit-vector ones, from the ALU table).
_VECTOR_ONLY = frozenset(("subtract", "max", "min", "is_equal", "not_equal", "is_gt", "is_ge", "is_lt", "is_le",
                          "logical_and", "logical_or", "logical_xor"))


def place_default_engines(trace):
    _walk(trace.root, trace.core_gen)


def _walk(block, core_gen):
    for item in block.items:
        if isinstance(item, Loop):
            _walk(item.body, core_gen)
        elif item.type == "TensorTensor" and item.engine in (None, "unknown"):
            item.engine = tensor_tensor_engine(item)
        elif item.what == "nisa.tensor_scalar" and item.engine in ("Pool", "Activation"):
            _check_tensor_scalar(item, core_gen)


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


@functools.lru_cache(maxsize=None)
def _bitvec_ops():
    """The bit-vector ALU ops, from the ISA's one ALU table (include/neuronsim/isa/tables/alu_ops.def)."""
    return frozenset(a["name"] for a in _core.isa()["alu_ops"] if a["bitvec"])


def _check_tensor_scalar(op, core_gen):
    ops = (op.fields.get("op0"), op.fields.get("op1"))
    engine = {"Pool": "the GpSimd Engine", "Activation": "the Scalar Engine"}[op.engine]
    said = f"{op.what}: op0={ops[0]}, op1={ops[1]} on {engine}: "
    # The operator table is of NeuronCore-v2 and -v3 (Neuron 2.26); what v4's engines take beyond it is not listed,
    # so on trn3 only the bit-vector rule (the tensor_scalar page's, current) refuses.
    if any(o in _bitvec_ops() or (o in _VECTOR_ONLY and core_gen <= 3) for o in ops):
        raise KernelError(said + "bit-vector, comparison and logical operators, max, min and subtract run on the "
                          "Vector Engine only (NKI's Supported Math Operators)", op.where)
    if op.engine == "Pool" and ops != ("rsqrt", None):
        raise KernelError(said + "GpSimd runs tensor_scalar for rsqrt only (NKI nki.isa.tensor_scalar)", op.where)
    if op.engine == "Activation" and core_gen < 3 and any(o in ("add", "mult") for o in ops):
        raise KernelError(said + "the Scalar Engine adds and multiplies from NeuronCore-v3 (trn2) on; this kernel is "
                          "traced for trn1 (NKI's Supported Math Operators)", op.where)
    if op.engine == "Activation" and core_gen == 3 and ops not in _ACT_PAIRS_TRN2:
        raise KernelError(said + "on trn2 the Scalar Engine takes (multiply, add), (multiply, none) or (add, none) "
                          "only (NKI nki.isa.tensor_scalar)", op.where)
