"""nki.isa: the calls that fold into an engine's accumulator registers besides activation and tensor_scalar_reduce
(isa.py) -- activate2 on ScalarE, exponential and tensor_scalar_cumulative on VectorE. Public NKI docs, the
nki.isa pages of each; the registers are the simulator's per-engine accumulator (engines/ops/accumulator.cpp):
ScalarE's shared by activation / activate2, VectorE's by tensor_scalar_reduce, tensor_scalar_cumulative,
exponential, range_select and select_reduce (reference neuron-arch.md 3.2)."""
from . import registry
from .errors import KernelError
from .isa import _act
from .isa_common import acc_cmd, alu, column, out_tile, reduce_res_tile, same_elements
from .nl_common import _emit, _is_num, _tile

_api = registry.api("nki.isa")

# activate2's tensor-scalar stage: the (op0, op1) pairs of the public nki.isa.activate2 page.
_ACT2_PAIRS = {("mult", "add"), ("mult", "subtract"), ("mult", "bypass"), ("add", "bypass"),
               ("subtract", "bypass"), ("bypass", "bypass")}
_ACT2_REDUCE = ("add", "max", "min", "abs_max", "abs_min")


def _reduce_outs(out, reduce_res, parts, what):
    outs = [out]
    r = reduce_res_tile(reduce_res, parts, what)
    if r is not None:
        outs.append(r)
    return outs


def _dst_and_source(dst, src, what, src_arg):
    """The destination and source tiles of a dst-first call, with the same element count each (KernelError naming
    the call and the argument otherwise)."""
    if dst is None or src is None:
        raise KernelError(f"{what} takes dst and {src_arg} tiles")
    x = _tile(src, what, src_arg)
    d = _tile(dst, what, "dst")
    same_elements(d, x, what, "dst", src_arg)
    return d, x


@_api
def activate2(dst=None, op=None, data=None, imm0=None, imm1=None, op0=None, op1=None, relu_param=0.0,
              reverse0=False, reverse1=False, reduce_op=None, reduce_res=None, reduce_cmd=None, *, name=None, **kw):
    """dst = op((data op0 imm0) op1 imm1; relu_param) on ScalarE, the registers folded with reduce_op under
    reduce_cmd (one Activation with is_activate2: ins data, imm0, imm1, relu_param; engines/ops/activation.cpp)."""
    what = "nisa.activate2"
    d, x = _dst_and_source(dst, data, what, "data")
    P = x.shape[0]
    pair = (alu(op0, what, allow_bypass=True), alu(op1, what, allow_bypass=True))
    if pair not in _ACT2_PAIRS:
        raise KernelError(f"{what}: (op0, op1) = {pair} is not one of the page's pairs (multiply, add), (multiply, "
                          "subtract), (multiply, bypass), (add, bypass), (subtract, bypass), (bypass, bypass)")
    if reverse0 and pair[0] == "bypass" or reverse1 and pair[1] == "bypass":
        raise KernelError(f"{what}: reverse0 / reverse1 need op0 / op1 to be set")
    ins = [x, column(0.0 if imm0 is None else imm0, P, what, "imm0"), column(0.0 if imm1 is None else imm1, P, what,
                                                                          "imm1"),
           column(relu_param, P, what, "relu_param")]
    fields = {"func": _act(op, what), "is_activate2": True, "op0": pair[0], "op1": pair[1]}
    if reverse0:
        fields["reverse0"] = True
    if reverse1:
        fields["reverse1"] = True
    cmd = acc_cmd(reduce_cmd, what)
    if cmd == "LoadAccumulate":
        raise KernelError(f"{what}: reduce_cmd load_reduce is not one of activate2's (idle, reset, reduce, "
                          "reset_reduce)")
    if cmd != "Idle" or reduce_res is not None:
        rop = "add" if reduce_op is None else alu(reduce_op, what)
        if rop not in _ACT2_REDUCE:
            raise KernelError(f"{what}: reduce_op {rop} is not add, maximum, minimum, abs_max or abs_min")
        fields["reduce_op"] = rop
        if cmd != "Idle":
            fields["acc"] = cmd
    _emit("Activation", ins, _reduce_outs(d, reduce_res, P, what), what, fields)
    return d


@_api
def exponential(dst=None, src=None, max_value=0.0, reduce_res=None, reduce_cmd=None, reduce_init=0.0, *, name=None,
                **kw):
    """dst = exp(src - max_value) on VectorE; reduce_cmd folds the row sums into the DVE registers (reset_reduce,
    reduce, load_reduce from reduce_init; idle leaves them), reduce_res receives them (one Exponential on DVE:
    engines/ops/activation.cpp exec_exponential)."""
    what = "nisa.exponential"
    d, x = _dst_and_source(dst, src, what, "src")
    P = x.shape[0]
    cmd = acc_cmd(reduce_cmd, what)
    if cmd == "Zero":
        raise KernelError(f"{what}: reduce_cmd reset is not one of exponential's (idle, reset_reduce, reduce, "
                          "load_reduce)")
    ins = [x, column(max_value, P, what, "max_value")]
    if cmd == "LoadAccumulate":
        ins.append(column(reduce_init, P, what, "reduce_init"))
    elif not (_is_num(reduce_init) and float(reduce_init) == 0.0):
        raise KernelError(f"{what}: reduce_init is only given with reduce_cmd load_reduce")
    if reduce_res is not None and cmd == "Idle":
        raise KernelError(f"{what}: reduce_res with reduce_cmd idle reads registers in an unknown state (public "
                          "NKI docs: idle leaves the accumulator state unknown); give a reduce_cmd")
    _emit("Exponential", ins, _reduce_outs(d, reduce_res, P, what), what, {"reduce_cmd": cmd}, engine="DVE")
    return d


@_api
def tensor_scalar_cumulative(dst=None, src=None, op0=None, op1=None, imm0=None, imm1=None, reduce_cmd=None, *,
                             name=None, **kw):
    """Per partition along the free elements: reg = op1(op0(src[i], imm0), reg); dst[i] = reg, reg seeded by
    reduce_cmd (reset_reduce: op1's identity; reduce: the DVE registers; load_reduce: imm1) and left in the
    registers (one TensorScalarCache, mode Cumulative: engines/ops/tensor_scalar_cache.cpp)."""
    what = "nisa.tensor_scalar_cumulative"
    d, x = _dst_and_source(dst, src, what, "src")
    P = x.shape[0]
    for v, arg in ((x, "src"), (d, "dst")):
        if v.bir_dtype in ("int32", "uint32"):
            raise KernelError(f"{what}: {arg} {v.name} is {v.bir_dtype}; 32-bit integers are not supported (public "
                              "NKI docs)")
    o0, o1 = alu(op0, what), alu(op1, what)
    if o1 not in ("add", "subtract", "mult", "max", "min"):
        raise KernelError(f"{what}: op1 {o1} is not add, subtract, multiply, maximum or minimum")
    cmd = acc_cmd(reduce_cmd, what, "ZeroAccumulate")
    if cmd in ("Idle", "Zero"):
        raise KernelError(f"{what}: reduce_cmd is reset_reduce, reduce or load_reduce")
    ins = [x, column(imm0, P, what, "imm0")]
    if cmd == "LoadAccumulate":
        if imm1 is None:
            raise KernelError(f"{what}: reduce_cmd load_reduce loads imm1; give it")
        ins.append(column(imm1, P, what, "imm1"))
    _emit("TensorScalarCache", ins, [d], what, {"mode": "Cumulative", "op0": o0, "op1": o1, "acc": cmd})
    return d
