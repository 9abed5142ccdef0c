"""nki.isa (nisa) on the neuronsim tracer: one BIR instruction per call, on the engine the NKI ISA page gives (or the
one the call names). Each function is a small definition of its own; public NKI docs, nki.isa pages, are the source
of each signature and operand order (summarised in reference neuron-arch.md 3)."""
import functools
import inspect
import sys

import numpy as np

from . import dtypes, nl_dma, nl_matmul, registry
from . import isa_constants as _c
from . import language as nl
from .errors import KernelError, Unsupported, source_location
from .nl_assign import _assign, _matmul_into
from .nl_common import _bir, _emit, _fresh, _imm, _is_num, _mask, _new_tile, _same_shape, _tile
from .isa_multicore import core_barrier, sendrecv  # noqa: F401 - nki.isa names, defined beside each other
from .nl_math import _broadcast_view
from .nl_matmul import _dve_transpose, _pe_transpose
from .isa_registers import (VirtualRegister, register_alloc, register_load, register_move,  # noqa: F401
                            register_store)
from .nl_reduce import _reduce
from .symbolic import Idx, NeedsUnroll, Pred
from .tracer import View, current

_api = registry.api("nki.isa")

# The enums (isa_constants.py, also served as the submodule nki.isa.constants) and the legacy engine constants, which
# the current reference keeps as deprecated aliases of engine's members.
engine, reduce_cmd, dge_mode, oob_mode = _c.engine, _c.reduce_cmd, _c.dge_mode, _c.oob_mode
matmul_perf_mode, nc_version, dma_engine = _c.matmul_perf_mode, _c.nc_version, _c.dma_engine
tensor_engine, vector_engine, scalar_engine = engine.tensor, engine.vector, engine.scalar
gpsimd_engine, unknown_engine, sync_engine = engine.gpsimd, engine.unknown, engine.sync
for _n, _v in dict(_c.ENUMS, tensor_engine=tensor_engine, vector_engine=vector_engine, scalar_engine=scalar_engine,
                   gpsimd_engine=gpsimd_engine, unknown_engine=unknown_engine).items():
    registry.value("nki.isa", _n, _v)
# nki.isa is a package as NKI's is: `import nki.isa.constants` finds the submodule registered here.
constants = _c
__path__ = []
sys.modules[__name__ + ".constants"] = _c


# The op= arguments NKI takes (nl functions, or numpy's) -> BIR ALU op names (isa/tables/alu_ops.def).
_ALU = {
    nl.add: "add", nl.subtract: "subtract", nl.multiply: "mult", nl.divide: "divide", nl.maximum: "max",
    nl.minimum: "min", nl.power: "pow", nl.equal: "is_equal", nl.not_equal: "not_equal", nl.greater: "is_gt",
    nl.greater_equal: "is_ge", nl.less: "is_lt", nl.less_equal: "is_le", nl.logical_and: "logical_and",
    nl.logical_or: "logical_or", nl.logical_xor: "logical_xor", nl.bitwise_and: "bitwise_and",
    nl.bitwise_or: "bitwise_or", nl.bitwise_xor: "bitwise_xor", nl.left_shift: "logical_shift_left",
    nl.right_shift: "logical_shift_right", nl.rsqrt: "rsqrt", nl.abs: "abs", nl.abs_max: "abs_max",
    nl.abs_min: "abs_min", nl.fmod: "mod",
    np.add: "add", np.subtract: "subtract", np.multiply: "mult", np.divide: "divide", np.maximum: "max",
    np.minimum: "min", np.power: "pow", np.equal: "is_equal", np.not_equal: "not_equal", np.greater: "is_gt",
    np.greater_equal: "is_ge", np.less: "is_lt", np.less_equal: "is_le", np.logical_and: "logical_and",
    np.logical_or: "logical_or", np.logical_xor: "logical_xor", np.bitwise_and: "bitwise_and",
    np.bitwise_or: "bitwise_or", np.bitwise_xor: "bitwise_xor", np.left_shift: "logical_shift_left",
    np.right_shift: "logical_shift_right", np.abs: "abs", np.mod: "mod",
    nl.max: "max", nl.min: "min", nl.sum: "add", nl.prod: "mult", np.max: "max", np.min: "min", np.sum: "add",
    np.prod: "mult", nl.bypass: "bypass", nl.average: "average",
}
# The activation functions (reference neuron-arch.md 3.5) -> BIR ActivationFunctionType names.
_ACT = {
    nl.exp: "Exp", nl.log: "Ln", nl.tanh: "Tanh", nl.sigmoid: "Sigmoid", nl.relu: "Relu", nl.gelu: "Gelu",
    nl.gelu_apprx_tanh: "Gelu_apprx_tanh", nl.silu: "Silu", nl.softplus: "Softplus", nl.mish: "Mish",
    nl.sqrt: "Sqrt", nl.rsqrt: "Rsqrt", nl.erf: "Erf", nl.sin: "Sin", nl.arctan: "Arctan", nl.sign: "Sign",
    nl.square: "Square", nl.abs: "Abs", nl.copy: "Identity", nl.reciprocal: "Reciprocal",
    nl.gelu_apprx_sigmoid: "Gelu_apprx_sigmoid", nl.gelu_dx: "Derivative_Gelu", nl.erf_dx: "Derivative_Erf",
    nl.silu_dx: "Derivative_silu", nl.gelu_apprx_sigmoid_dx: "Derivative_Gelu_apprx_sigmoid", nl.prelu: "Prelu",
    np.exp: "Exp", np.log: "Ln", np.tanh: "Tanh", np.sqrt: "Sqrt", np.sin: "Sin", np.arctan: "Arctan",
    np.sign: "Sign", np.square: "Square", np.abs: "Abs", np.reciprocal: "Reciprocal",
}
_CMP = {">=": "is_ge", ">": "is_gt", "<=": "is_le", "<": "is_lt", "==": "is_equal", "!=": "not_equal"}


def _alu(op, what):
    if isinstance(op, str):
        return op
    try:
        return _ALU[op]
    except (KeyError, TypeError):
        raise Unsupported(f"{what}: op={getattr(op, '__name__', op)!r} is not an ALU operator neuronsim lowers",
                          source_location())


def _act(op, what):
    try:
        return _ACT[op]
    except (KeyError, TypeError):
        raise Unsupported(f"{what}: op={getattr(op, '__name__', op)!r} is not an activation function neuronsim "
                          "lowers", source_location())


# nki.isa.reduce_cmd by NKI name and ordinal (public NKI docs, nki.isa.reduce_cmd: idle 0, reset 1, reduce 2,
# reset_reduce 3, load_reduce 4) -> BIR EngineAccumulationType (reference neuron-arch.md 3.2; accumulator.cpp).
_CMD = {"idle": "Idle", "reset": "Zero", "reduce": "Accumulate", "reset_reduce": "ZeroAccumulate",
        "load_reduce": "LoadAccumulate"}
_CMD_BY_ORDINAL = ["Idle", "Zero", "Accumulate", "ZeroAccumulate", "LoadAccumulate"]


def _acc_cmd(x, what, default="Idle"):
    """A reduce_cmd as a BIR EngineAccumulationType name: reduce_cmd's members, their NKI names or ordinals, or the
    BIR names themselves; None is `default`."""
    if x is None:
        return default
    if isinstance(x, str) and x in _CMD_BY_ORDINAL:
        return x
    if isinstance(x, str) and x in _CMD:
        return _CMD[x]
    name = getattr(x, "name", None)
    if isinstance(name, str) and name in _CMD:
        return _CMD[name]
    value = getattr(x, "value", x)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(_CMD_BY_ORDINAL):
        return _CMD_BY_ORDINAL[value]
    if isinstance(value, str) and value is not x:
        return _acc_cmd(value, what, default)
    raise KernelError(f"{what}: reduce_cmd={x!r} is not a nisa.reduce_cmd (idle, reset, reduce, reset_reduce, "
                      "load_reduce)")


def _scalar(x, what, arg):
    return _imm(x) if _is_num(x) else _tile(x, what, arg)


def _out(shape, bir, buffer="sbuf"):
    t = _new_tile(shape, bir, buffer)
    t.storage.__dict__["temp"] = True
    return t


# ---------------------------------------------------------------------------------------------------- the dst= form
# NKI's newer namespace (`import nki.isa`, NKI 0.7) passes the destination first: nisa.tensor_copy(dst=t, src=x) or
# nisa.tensor_copy(t, x) where neuronxcc.nki.isa returned t = nisa.tensor_copy(x). Both forms are served by one
# definition: the dst= form computes the result as the returning form does and writes it into dst (the instruction
# writes dst directly: nl_assign._assign). Each function says how a positional call of the dst= form looks; after
# dst, its parameters are positional in the current reference's order (the legacy order is the same prefix, with
# some made keyword-only there).
def _dst_form(is_dst_call):
    def wrap(fn):
        first = next(iter(inspect.signature(fn).parameters))

        @functools.wraps(fn)
        def call(*args, **kw):
            if "dst" in kw:
                dst, rest = kw.pop("dst"), args
            elif is_dst_call(args) or (args and first in kw):  # nisa.tensor_tensor(t, data1=a, data2=b, ...)
                dst, rest = args[0], args[1:]
            else:
                return fn(*args, **kw)
            if not isinstance(dst, View):
                raise KernelError(f"nisa.{fn.__name__}: dst must be a tile, got {dst!r}")
            _assign(dst, fn(*rest, **kw))
            return dst
        return call
    return wrap


def _views(args, *positions):
    return all(len(args) > i and isinstance(args[i], View) for i in positions)



# nki.isa.matmul_perf_mode -> BIR MatmultPerfMode (public NKI docs: none, double_row; the SDK's nc_matmul example
# test spells double_row "double_row_gen3", the legacy string).
_PERF = {"none": None, "double_row": "DoubleRow", "double_row_gen3": "DoubleRow"}


def _perf_mode(mode, what):
    name = mode if isinstance(mode, str) or mode is None else getattr(mode, "value", getattr(mode, "name", mode))
    if name is None or name in _PERF:
        return _PERF.get(name)
    raise KernelError(f"{what}: perf_mode={mode!r} is not a nisa.matmul_perf_mode (none, double_row)")


def _double_row(st, mv, what):
    """perf_mode double_row (public NKI docs, nc_matmul "Layout"): stationary [K, 2, M] and moving [K, 2, N] hold the
    2K contraction rows (row 2p + r in [p, r, :]); out [M, N]. The simulator's DoubleRow reads logical row 2p + r
    as element (p, 2m + r) of the stationary and as half r of the moving's partition (engines/ops/matmult.cpp), so
    the stationary's view walks m before r."""
    for v, arg in ((st, "stationary"), (mv, "moving")):
        if len(v.shape) != 3 or v.shape[1] != 2 or not dtypes.is_float(v.bir_dtype) or dtypes.size(v.bir_dtype) != 1:
            raise KernelError(f"{what}: perf_mode double_row takes fp8 [K, 2, free] operands; {arg} {v.name} is "
                              f"{list(v.shape)} {v.bir_dtype}")
    if st.shape[0] != mv.shape[0] or st.shape[2] > 128 or mv.shape[2] > 512:
        raise KernelError(f"{what}: double_row operands stationary {list(st.shape)} / moving {list(mv.shape)}: one K, "
                          "free sizes at most 128 / 512")
    stv = View(st.storage, st.off_p, st.off_f, [st.dims[0], st.dims[2], st.dims[1]], st.bir_dtype)
    out = _out((st.shape[2], mv.shape[2]), "float32", "psum")
    _emit("Matmult", [stv, mv], [out], what, {"start_tensor_calc": True, "perf_mode": "DoubleRow"})
    return out


@_api
def nc_matmul(*args, accumulate=None, mask=None, is_stationary_onezero=False, is_moving_onezero=False,
              is_transpose=False, tile_position=(), tile_size=(), perf_mode=None, **kw):
    """PSUM [M, N] = stationary[K, M].T @ moving[K, N] (PE). nc_matmul(stationary, moving) returns a new PSUM tile
    (accumulate into one with psum_tile += ...); nc_matmul(dst, stationary, moving, accumulate=None) writes dst, a
    PSUM tile, in an accumulation group (nl_assign._matmul_into). The options of the public nki.isa.nc_matmul page
    become the Matmult's fields: is_stationary_onezero / is_moving_onezero (is_weight_onezero / is_fmap_onezero),
    is_transpose, tile_position / tile_size (PE tiling: checked, kept), perf_mode double_row (DoubleRow)."""
    dst = kw.pop("dst", None)
    if dst is None and len(args) >= 3:
        dst, args = args[0], args[1:]
    names = ("stationary", "moving")
    ops = dict(zip(names, args))
    # the current reference's order after moving (is_transpose, perf_mode...: as keywords, NKI's defaults)
    for n, v in zip(("is_stationary_onezero", "is_moving_onezero", "is_transpose", "accumulate", "tile_position",
                     "tile_size", "perf_mode"), args[2:]):
        kw[n] = v
    accumulate = kw.pop("accumulate", accumulate)
    is_stationary_onezero = kw.pop("is_stationary_onezero", is_stationary_onezero)
    is_moving_onezero = kw.pop("is_moving_onezero", is_moving_onezero)
    is_transpose = kw.pop("is_transpose", is_transpose)
    tile_position = kw.pop("tile_position", tile_position)
    tile_size = kw.pop("tile_size", tile_size)
    perf_mode = kw.pop("perf_mode", perf_mode)
    for n in names:
        if n in kw:
            ops[n] = kw.pop(n)
    if set(ops) != set(names):
        raise KernelError("nisa.nc_matmul takes stationary and moving tiles")
    st, mv = _mask([ops["stationary"], ops["moving"]], mask, "nisa.nc_matmul")
    # The PE array reads SBUF: an operand in PSUM (a PE transpose's result) is copied out first, as for nl.matmul
    # (INFERRED: NKI's page asks for SBUF operands, but public kernels that ran on silicon, the attention backward
    # among them, pass nc_transpose's PSUM result, so the compiler copies it).
    st, mv = (nl_dma.tensor_copy_to(v, v.bir_dtype, "nisa.nc_matmul") if isinstance(v, View) and
              v.storage.buffer == "psum" else v for v in (st, mv))
    perf = _perf_mode(perf_mode, "nisa.nc_matmul")
    if perf:
        st, mv = _tile(st, "nisa.nc_matmul", "stationary"), _tile(mv, "nisa.nc_matmul", "moving")
        if tile_position or tile_size:
            raise KernelError("nisa.nc_matmul: perf_mode double_row with tiling mode is not lowered")
        res = _double_row(st, mv, "nisa.nc_matmul")
    else:
        res = nl_matmul.matmul_op(st, mv, "nisa.nc_matmul")
        tiling = nl_matmul.pe_tiling(tile_position, tile_size, st.shape[0], st.shape[1], "nisa.nc_matmul")
        res.storage.__dict__["producer"].fields.update(tiling)
    fields = res.storage.__dict__["producer"].fields
    for flag, key in ((is_stationary_onezero, "is_weight_onezero"), (is_moving_onezero, "is_fmap_onezero"),
                      (is_transpose, "is_transpose")):
        if flag:
            fields[key] = True
    if dst is None:
        return res
    if not isinstance(dst, View):
        raise KernelError(f"nisa.nc_matmul: dst must be a PSUM tile, got {dst!r}")
    p = _fresh(res)
    return _matmul_into(dst, res, p, accumulate, "nisa.nc_matmul")


@_api
@_dst_form(lambda a: _views(a, 0, 1))
def nc_transpose(data, engine=None, *, mask=None, dtype=None, **kw):
    """data [P, F] -> [F, P]. On PE (the default): an identity matmul into PSUM, up to 128 x 128. With
    engine=nisa.vector_engine: one StreamTranspose on VectorE, up to 32 x 32, SBUF or PSUM in and out (public NKI
    docs, nki.isa.nc_transpose; the 32 x 32 block swap of reference neuronx-cc/bir/sim-elementwise-datamove.md 5.3).
    Without engine= the PE form is taken at every size (NKI leaves the choice to the compiler)."""
    x = _tile(data, "nisa.nc_transpose", "data")
    (x,) = _mask([x], mask, "nisa.nc_transpose")
    if engine == vector_engine:
        out = _dve_transpose(x, "nisa.nc_transpose")
    elif engine not in (None, tensor_engine, unknown_engine):
        raise KernelError("nisa.nc_transpose: engine must be the tensor or the vector engine, got "
                          f"{engine!r}")
    else:
        out = _pe_transpose(x, "nisa.nc_transpose")
    return out if dtype is None or _bir(dtype) == x.bir_dtype else nl_dma.tensor_copy_to(out, _bir(dtype),
                                                                                            "nisa.nc_transpose")


def _activation(op, data, bias, scale, reduce_op, reduce_res, rcmd, dtype, mask, what):
    x = _tile(data, what, "data")
    (x,) = _mask([x], mask, what)
    func = _act(op, what)
    if func == "Prelu":
        raise Unsupported(f"{what}: nl.prelu takes its slope from nisa.activate2's relu_param; nisa.activation has "
                          "none", source_location())
    out = _out(x.shape, _bir(dtype, x.bir_dtype if dtypes.is_float(x.bir_dtype) else "float32"))
    ins = [x, _scalar(scale, what, "scale")]
    if bias is not None:
        ins.append(_scalar(bias, what, "bias"))
    fields = {"func": func}
    outs = [out]
    cmd = _acc_cmd(rcmd, what)
    if cmd == "LoadAccumulate":
        raise KernelError(f"{what}: reduce_cmd load_reduce is not one of activation's (idle, reset, reduce, "
                          "reset_reduce)")
    if reduce_res is not None or cmd != "Idle":
        if reduce_op is not None and _alu(reduce_op, what) != "add":
            raise KernelError(f"{what}: reduce_op must be add on ScalarE (reference neuron-arch.md 3.2)")
        # The registers are folded under cmd; reduce_res reads them afterwards -- with idle, their value as earlier
        # calls left it (public NKI docs, nki.isa.activation: "reduce_res = reduce_regs").
        if cmd != "Idle":
            fields["acc"] = cmd
        if reduce_res is not None:
            r = _tile(reduce_res, what, "reduce_res")
            if r.shape[0] != x.shape[0] or any(n != 1 for n in r.shape[1:]):
                raise KernelError(f"{what}: reduce_res {r.name} must be [{x.shape[0]}, 1], it is {list(r.shape)}")
            if len(ins) < 3:
                ins.append(_imm(0.0))
            outs.append(r)
    _emit("Activation", ins, outs, what, fields)
    return out


@_api
@_dst_form(lambda a: _views(a, 0))
def activation(op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=None, *, dtype=None,
               mask=None, **kw):
    """op(data * scale + bias) on ScalarE. reduce_cmd drives the ACT registers with the row sums (reset, reduce,
    reset_reduce; idle leaves them); reduce_res, when given, receives the registers after this instruction."""
    return _activation(op, data, bias, scale, reduce_op, reduce_res, reduce_cmd, dtype, mask, "nisa.activation")


@_api
@_dst_form(lambda a: _views(a, 0))
def activation_reduce(op, data, reduce_op, reduce_res, bias=None, scale=1.0, *, dtype=None, mask=None, **kw):
    """op(data * scale + bias) on ScalarE, and its row reduction (add) into reduce_res."""
    return _activation(op, data, bias, scale, reduce_op, reduce_res, reduce_cmd.reset_reduce, dtype, mask,
                       "nisa.activation_reduce")


@_api
@_dst_form(lambda a: _views(a, 0, 1, 2))
def tensor_tensor(data1, data2, op, engine=None, *, dtype=None, mask=None, **kw):
    """data1 op data2, element-wise (VectorE; GpSimd when engine= says so)."""
    x, y = _tile(data1, "nisa.tensor_tensor", "data1"), _tile(data2, "nisa.tensor_tensor", "data2")
    x, y = _mask([x, y], mask, "nisa.tensor_tensor")
    x, y = _per_partition_broadcast(x, y), _per_partition_broadcast(y, x)
    _same_shape(x, y, "nisa.tensor_tensor", "data1", "data2")
    if x.storage.buffer == "psum" and y.storage.buffer == "psum":
        raise KernelError("nisa.tensor_tensor: data1 and data2 cannot both be in PSUM (NKI nki.isa.tensor_tensor)")
    out = _out(x.shape, _bir(dtype, dtypes.promote(x.bir_dtype, y.bir_dtype)))
    _emit("TensorTensor", [x, y], [out], "nisa.tensor_tensor", {"op": _alu(op, "nisa.tensor_tensor")}, engine)
    return out


def _per_partition_broadcast(v, other):
    """A [P, 1] operand of a [P, ...] one read along the other's free dims (a step-0 access pattern), as the compiler
    takes nisa.tensor_tensor(data1 [P, N], data2 [P, 1]): one value per partition, as tensor_scalar's operand."""
    if v.shape == other.shape or len(v.shape) < 2 or v.shape[0] != other.shape[0] or \
            any(n != 1 for n in v.shape[1:]):
        return v
    return _broadcast_view(v, other.shape, "nisa.tensor_tensor")


@_api
@_dst_form(lambda a: _views(a, 0, 1))
def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, engine=None, *,
                  dtype=None, mask=None, **kw):
    """(data op0 operand0) op1 operand1; each operand a number or a [P, 1] tile (VectorE by default)."""
    what = "nisa.tensor_scalar"
    x = _tile(data, what, "data")
    (x,) = _mask([x], mask, what)
    ins = [x, _scalar(operand0, what, "operand0")]
    fields = {"op0": _alu(op0, what)}
    if reverse0:
        fields["reverse0"] = True
    if op1 is not None:
        ins.append(_scalar(operand1, what, "operand1"))
        fields["op1"] = _alu(op1, what)
        if reverse1:
            fields["reverse1"] = True
    for v in ins[1:]:
        if isinstance(v, View) and (v.shape[0] != x.shape[0] or any(n != 1 for n in v.shape[1:])):
            raise KernelError(f"{what}: scalar operand {v.name} must be [{x.shape[0]}, 1], it is {list(v.shape)}")
    out = _out(x.shape, _bir(dtype, x.bir_dtype))
    _emit("TensorScalarPtr", ins, [out], what, fields, engine)
    return out


@_api
@_dst_form(lambda a: _views(a, 0, 1))
def scalar_tensor_tensor(data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, *, dtype=None, mask=None,
                         **kw):
    """(data op0 operand0) op1 operand1, operand0 a number or [P, 1], operand1 a full tile (VectorE; TensorScalarPtr
    is_scalar_tensor_tensor)."""
    what = "nisa.scalar_tensor_tensor"
    x, t1 = _tile(data, what, "data"), _tile(operand1, what, "operand1")
    _same_shape(x, t1, what, "data", "operand1")
    if x.storage.buffer == "psum" and t1.storage.buffer == "psum":
        raise KernelError(f"{what}: data and operand1 cannot both be in PSUM (NKI nki.isa.scalar_tensor_tensor)")
    fields = {"is_scalar_tensor_tensor": True, "op0": _alu(op0, what), "op1": _alu(op1, what)}
    if reverse0:
        fields["reverse0"] = True
    if reverse1:
        fields["reverse1"] = True
    out = _out(x.shape, _bir(dtype, x.bir_dtype))
    _emit("TensorScalarPtr", [x, _scalar(operand0, what, "operand0"), t1], [out], what, fields)
    return out


@_api
@_dst_form(lambda a: _views(a, 0, 1))
def tensor_scalar_reduce(data, op0, operand0, reduce_op, reduce_res=None, reverse0=False, reduce_cmd=None,
                         reduce_init=None, reduce_res_negate=False, *, dtype=None, mask=None, **kw):
    """data op0 operand0, and its row reduction with reduce_op into the DVE registers (VectorE; TensorScalarPtr
    with the accumulator: acc the reduce_cmd (default reset_reduce), op1 the reduce op, ins[2] reduce_init with
    load_reduce, outs[1] reduce_res [P, 1] when given (negated with reduce_res_negate), engines/ops/
    tensor_scalar.cpp)."""
    what = "nisa.tensor_scalar_reduce"
    x = _tile(data, what, "data")
    cmd = _acc_cmd(reduce_cmd, what, "ZeroAccumulate")
    if cmd in ("Idle", "Zero"):
        raise KernelError(f"{what}: reduce_cmd is reset_reduce, reduce or load_reduce (public NKI docs)")
    if (cmd == "LoadAccumulate") != (reduce_init is not None):
        raise KernelError(f"{what}: reduce_init is given exactly when reduce_cmd is load_reduce")
    fields = {"op0": _alu(op0, what), "op1": _alu(reduce_op, what), "acc": cmd}
    if reverse0:
        fields["reverse0"] = True
    if reduce_res_negate:
        fields["negate_second_output"] = True
    ins = [x, _scalar(operand0, what, "operand0")]
    if reduce_init is not None:
        ins.append(_scalar(reduce_init, what, "reduce_init"))
    out = _out(x.shape, _bir(dtype, x.bir_dtype))
    outs = [out]
    if reduce_res is not None:
        r = _tile(reduce_res, what, "reduce_res")
        if r.shape[0] != x.shape[0] or any(n != 1 for n in r.shape[1:]):
            raise KernelError(f"{what}: reduce_res {r.name} must be [{x.shape[0]}, 1], it is {list(r.shape)}")
        outs.append(r)
    _emit("TensorScalarPtr", ins, outs, what, fields)
    return out


@_api
@_dst_form(lambda a: _views(a, 0))
def tensor_reduce(op, data, axis, negate=False, keepdims=False, *, dtype=None, mask=None, **kw):
    """A reduction of the trailing free axes (VectorE); negate multiplies the result by -1."""
    return _reduce(_alu(op, "nisa.tensor_reduce"), data, axis, dtype, mask, keepdims, "nisa.tensor_reduce",
                      negate)


@_api
@_dst_form(lambda a: _views(a, 0, 1))
def tensor_copy(src, engine=None, *, dtype=None, mask=None, **kw):
    x = _tile(src, "nisa.tensor_copy", "src")
    (x,) = _mask([x], mask, "nisa.tensor_copy")
    return nl_dma.tensor_copy_to(x, _bir(dtype, x.bir_dtype), "nisa.tensor_copy", engine)


@_api
@_dst_form(lambda a: len(a) >= 6 and not isinstance(a[5], bool))  # legacy: a[5] is reverse0, current: op1
def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, *, dtype=None, mask=None,
                       **kw):
    """r[i] = op1(op0(data0[i], r[i-1]), data1[i]) along the free axis, r[-1] = initial (VectorE; reference
    neuron-arch.md 3.1)."""
    what = "nisa.tensor_tensor_scan"
    x, y = _tile(data0, what, "data0"), _tile(data1, what, "data1")
    x, y = _mask([x, y], mask, what)
    _same_shape(x, y, what, "data0", "data1")
    fields = {"is_tensor_tensor_scan": True, "op0": _alu(op0, what), "op1": _alu(op1, what)}
    if reverse0:
        fields["reverse0"] = True
    if reverse1:
        fields["reverse1"] = True
    out = _out(x.shape, _bir(dtype, dtypes.promote(x.bir_dtype, y.bir_dtype)))
    _emit("TensorScalarPtr", [x, y, _scalar(initial, what, "initial")], [out], what, fields)
    return out


def _pattern_fields(pattern, channel_multiplier, offset, dst, what):
    """The fields of Iota / TensorScalarAffineSelect from the current reference's operands: offset + partition *
    channel_multiplier + sum of step * index over pattern's [step, num] pairs, one per free dim of dst."""
    if not isinstance(pattern, (list, tuple)) or not all(isinstance(d, (list, tuple)) and len(d) == 2
                                                         for d in pattern):
        raise KernelError(f"{what}: pattern is a list of [step, num] pairs, got {pattern!r}")
    pattern = [[int(st), int(n)] for st, n in pattern]
    free = [n for n in dst.shape[1:] if n != 1] or [1]
    if [n for _, n in pattern if n != 1] != [n for n in free if n != 1]:
        raise KernelError(f"{what}: pattern {pattern} does not walk the free dims of {dst.name} {list(dst.shape)}")
    return {"base": int(offset), "channel_multiplier": int(channel_multiplier), "pattern": pattern}


@_api
def iota(*args, mask=None, **kw):
    """Index values as a tile (GpSimd Iota: base + partition * channel_multiplier + the free dims' steps,
    engines/ops/iota.cpp). Current reference: iota(dst, pattern, offset=0, channel_multiplier=0) writes dst;
    legacy: iota(expr, dtype) returns a new tile of an index expression's values (nl.arange / nl.mgrid arithmetic)."""
    dst = kw.pop("dst", None)
    if dst is None and args and isinstance(args[0], View):
        dst, args = args[0], args[1:]
    if dst is None:
        return _iota_expr(*args, mask=mask, **kw)
    if "expr" in kw or (args and isinstance(args[0], Idx)):  # neuronsim's earlier dst form: iota(dst, expr, dtype)
        _assign(dst, _iota_expr(*args, mask=mask, **kw))
        return dst
    params = dict(zip(("pattern", "offset", "channel_multiplier"), args), **kw)
    t = _tile(dst, "nisa.iota", "dst")
    f = _pattern_fields(params.get("pattern"), params.get("channel_multiplier", 0), params.get("offset", 0), t,
                        "nisa.iota")
    _emit("Iota", [], [t], "nisa.iota", f)
    return dst


def _iota_expr(expr, dtype, *, mask=None, **kw):
    e = Idx.of(expr)
    if e.loop:  # the Iota's base is an immediate: one per trip (docs/nki-lowering.md 1)
        raise NeedsUnroll("nisa.iota of an expression with a loop variable (the instruction's base is an immediate)")
    shape = e.shape or (1,)
    n = len(shape)
    cm = e.axes.get(-n, 0) if n > 1 else 0
    pattern = [[e.axes.get(p - n, 0), shape[p]] for p in range(1, n)] or [[0, 1]]
    if n == 1:
        shape, pattern, cm = (shape[0], 1), [[0, 1]], e.axes.get(-1, 0)
    out = _out(shape, _bir(dtype))
    _emit("Iota", [], [out], "nisa.iota", {"base": int(e.c), "channel_multiplier": int(cm), "pattern": pattern})
    return out


@_api
def memset(shape=None, value=None, dtype=None, *, dst=None, mask=None, engine=None, **kw):
    """A constant fill: memset(shape, value, dtype) returns a new tile; memset(dst, value, engine=unknown) (the current
    reference; dst= as a keyword too) fills dst."""
    if dst is None and isinstance(shape, View):
        dst, shape = shape, None
        if dtype is not None:  # the current form's third parameter is the engine
            engine, dtype = dtype, None
    if dst is not None:
        _emit("Memset", [], [dst], "nisa.memset", {"mode": "Const", "constant": float(value)}, engine)
        return dst
    out = _out(tuple(shape), _bir(dtype))
    _emit("Memset", [], [out], "nisa.memset", {"mode": "Const", "constant": float(value)}, engine)
    return out


@_api
@_dst_form(lambda a: _views(a, 0, 1))
def bn_stats(data, *, dtype=None, mask=None, **kw):
    """Per-partition mean/variance statistics of up to 512 elements: [P, 6] (VectorE)."""
    x = _tile(data, "nisa.bn_stats", "data")
    (x,) = _mask([x], mask, "nisa.bn_stats")
    if len(x.shape) != 2 or x.shape[1] > 512:
        raise KernelError(f"nisa.bn_stats takes [P, N <= 512] (nl.tile_size.bn_stats_fmax), {x.name} is "
                          f"{list(x.shape)}")
    out = _out((x.shape[0], 6), _bir(dtype, "float32"))
    _emit("BNStats", [x], [out], "nisa.bn_stats")
    return out


@_api
@_dst_form(lambda a: _views(a, 0, 1))
def bn_aggr(data, *, dtype=None, mask=None, **kw):
    """(mean, variance) per partition from bn_stats results [P, 6k]: [P, 2] (VectorE)."""
    x = _tile(data, "nisa.bn_aggr", "data")
    if x.shape[-1] % 6 and x.shape[-1] % 3:
        raise KernelError(f"nisa.bn_aggr reads bn_stats triples, {x.name} is {list(x.shape)}")
    out = _out((x.shape[0], 2), _bir(dtype, "float32"))
    _emit("BNStatsAggregate", [x], [out], "nisa.bn_aggr")
    return out


@_api
@_dst_form(lambda a: _views(a, 0, 1))
def reciprocal(data, engine=None, *, dtype=None, mask=None, **kw):
    """1/x on VectorE (Reciprocal, max(MIN_II, 8N)), or with engine=nisa.scalar_engine on ScalarE (the Reciprocal
    activation, max(MIN_II, N)): public NKI docs, nki.isa.reciprocal. An unknown engine stays on VectorE (the
    compiler's choice for it is not documented)."""
    name = getattr(engine, "name", engine)
    if name == "scalar":
        return _activation(nl.reciprocal, data, None, 1.0, None, None, None, dtype, mask, "nisa.reciprocal")
    if name not in (None, "unknown", "vector"):
        raise KernelError(f"nisa.reciprocal: engine={engine!r}: it runs on the Scalar or the Vector Engine")
    return nl.reciprocal(data, dtype=dtype, mask=mask)


_CMP_OP = {nl.equal: "is_equal", nl.not_equal: "not_equal", nl.greater: "is_gt", nl.greater_equal: "is_ge",
           nl.less: "is_lt", nl.less_equal: "is_le", np.equal: "is_equal", np.not_equal: "not_equal",
           np.greater: "is_gt", np.greater_equal: "is_ge", np.less: "is_lt", np.less_equal: "is_le"}


@_api
def affine_select(*args, **kw):
    """Keeps on_true_tile where an affine comparison of the element's (partition, free) indices holds, else
    on_false_value (GpSimd; TensorScalarAffineSelect). Current reference: affine_select(dst, pattern,
    channel_multiplier, on_true_tile, on_false_value, cmp_op=nl.equal, offset=0): the element keeps its value where
    (offset + p * channel_multiplier + sum of step * index over pattern) cmp_op 0; legacy: affine_select(pred,
    on_true_tile, on_false_value) returns the tile, pred e.g. (i_p - i_f >= 0) with i_p, i_f from nl.mgrid."""
    dst = kw.pop("dst", None)
    if dst is None and args and isinstance(args[0], View):
        dst, args = args[0], args[1:]
    if dst is None or "pred" in kw or (args and isinstance(args[0], Pred)):
        out = _affine_select_pred(*args, **kw)
        if dst is None:
            return out
        _assign(dst, out)
        return dst
    what = "nisa.affine_select"
    p = dict(zip(("pattern", "channel_multiplier", "on_true_tile", "on_false_value", "cmp_op", "offset"), args), **kw)
    x = _tile(p.get("on_true_tile"), what, "on_true_tile")
    d = _tile(dst, what, "dst")
    _same_shape(d, x, what, "dst", "on_true_tile")
    cmp_op = p.get("cmp_op", nl.equal)
    if cmp_op not in _CMP_OP:
        raise KernelError(f"{what}: cmp_op is a comparison (nl.equal, nl.greater_equal...), got {cmp_op!r}")
    f = _pattern_fields(p.get("pattern"), p.get("channel_multiplier", 0), p.get("offset", 0), d, what)
    f.update(compare_op=_CMP_OP[cmp_op], fill_value=float(p["on_false_value"]))
    _emit("TensorScalarAffineSelect", [x], [d], what, f)
    return dst


def _affine_select_pred(pred, on_true_tile, on_false_value, *, dtype=None, mask=None, **kw):
    what = "nisa.affine_select"
    if not isinstance(pred, Pred) or len(pred.terms) != 1:
        raise KernelError(f"{what}: pred is one comparison of an affine index expression with a constant")
    e, op = pred.terms[0]
    if e.loop:  # the select's base is an immediate: one per trip (docs/nki-lowering.md 1)
        raise NeedsUnroll(f"{what} of a predicate with a loop variable (the instruction's base is an immediate)")
    x = _tile(on_true_tile, what, "on_true_tile")
    n = len(x.shape)
    cm = e.axes.get(-n, 0)
    pattern = [[e.axes.get(p - n, 0), x.shape[p]] for p in range(1, n)]
    out = _out(x.shape, _bir(dtype, x.bir_dtype))
    _emit("TensorScalarAffineSelect", [x], [out], what,
          {"base": int(e.c), "channel_multiplier": int(cm), "pattern": pattern, "compare_op": _CMP[op],
           "fill_value": float(on_false_value)})
    return out


@_api
@_dst_form(lambda a: len(a) >= 4)
def select(pred, on_true, on_false, *, dtype=None, mask=None, **kw):
    """pred ? on_true : on_false (VectorE Select)."""
    return nl.where(pred, on_true, on_false, dtype=dtype, mask=mask)


# ---------------------------------------------------------------------------------------------------- values
@_api
def get_nc_version():
    """The NeuronCore generation of the architecture the kernel is traced for (nc_version: trn1 gen2, trn2 gen3,
    trn3 gen4; the arch file's core_gen): what the kernel runs on in this simulation."""
    return nc_version(current("nisa.get_nc_version").core_gen)


class fp32:
    """Legacy nisa.fp32 / nl.fp32: fp32.min, the most negative fp32 value (bit pattern 0xff7fffff)."""
    min = float(np.finfo(np.float32).min)


registry.value("nki.isa", "fp32", fp32)
# nki.isa.NkiValidationError: raised when a kernel breaks a hardware constraint -- the front end's KernelError.
NkiValidationError = registry.value("nki.isa", "NkiValidationError", KernelError)
registry.value("nki.isa", "NKIObject", nl.NKIObject)  # a re-export in the reference's stub


def __getattr__(name):
    """A documented nki.isa name not defined here: its registered value (the topic modules isa_<topic>.py import this
    module, so it cannot import them: their calls are reached through the registry too; a refusal raises
    Unsupported when called); any other name: Unsupported naming it and the kernel's line."""
    return registry.module_getattr("nki.isa", name)
