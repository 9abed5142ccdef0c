"""nki.language: element-wise math -- the binary operators (TensorTensor / TensorScalarPtr on VectorE), the
activation functions (one Activation on ScalarE), negation, rounding, and nl.where (Select)."""
import builtins as _b  # NKI's nl.abs below shadows Python's
import math

from . import dtypes, registry
from .errors import KernelError, Unsupported, source_location
from .nl_common import _bir, _emit, _imm, _is_column, _is_num, _mask, _new_tile, _same_shape, _tile
from .tracer import View

_api = registry.api("nki.language")


# ---------------------------------------------------------------------------------------------------- element-wise
def _binary(alu, x, y, dtype, mask, what):
    """x op y: TensorTensor for two tiles of one shape; TensorScalarPtr when one side is a number or a [P, 1]
    per-partition column (reverse0 when the scalar is the left operand), as the NKI ISA pages assign them (reference
    neuron-arch.md 3.3: tensor_tensor, tensor_scalar on VectorE)."""
    if _is_num(x) and _is_num(y):
        raise KernelError(f"{what}: both operands are numbers; one must be a tile")
    if _is_num(x) or _is_num(y):
        t, s, rev = (y, x, True) if _is_num(x) else (x, y, False)
        t = _tile(t, what, "x" if not rev else "y")
        (t,) = _mask([t], mask, what)
        out = _new_tile(t.shape, _bir(dtype, t.bir_dtype if dtypes.is_float(t.bir_dtype) or
                                      float(s).is_integer() else "float32"))
        out.storage.__dict__["temp"] = True
        f = {"op0": alu}
        if rev:
            f["reverse0"] = True
        _emit("TensorScalarPtr", [t, _imm(s)], [out], what, f)
        return out
    x, y = _tile(x, what, "x"), _tile(y, what, "y")
    x, y = _mask([x, y], mask, what)
    bir = _bir(dtype, dtypes.promote(x.bir_dtype, y.bir_dtype))
    if tuple(x.shape) == tuple(y.shape):
        if x.storage.buffer == "psum" and y.storage.buffer == "psum":
            raise KernelError(f"{what}: both operands ({x.name}, {y.name}) are in PSUM; tensor_tensor reads at most "
                              "one PSUM operand (NKI nki.isa.tensor_tensor)")
        out = _new_tile(x.shape, bir)
        out.storage.__dict__["temp"] = True
        _emit("TensorTensor", [x, y], [out], what, {"op": alu})
        return out
    if x.shape[0] == y.shape[0] and (_is_column(y) or _is_column(x)):
        t, col, rev = (x, y, False) if _is_column(y) else (y, x, True)
        out = _new_tile(t.shape, bir)
        out.storage.__dict__["temp"] = True
        f = {"op0": alu}
        if rev:
            f["reverse0"] = True
        _emit("TensorScalarPtr", [t, col], [out], what, f)
        return out
    # Free-dim broadcasting (numpy rules over the free dims; the partition dims must agree).
    shape = _broadcast_shape(x, y, what)
    xb, yb = _broadcast_view(x, shape, what), _broadcast_view(y, shape, what)
    out = _new_tile(shape, bir)
    out.storage.__dict__["temp"] = True
    _emit("TensorTensor", [xb, yb], [out], what, {"op": alu})
    return out


def _broadcast_shape(x, y, what):
    a, b = list(x.shape), list(y.shape)
    n = _b.max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    out = []
    for i, (p, q) in enumerate(zip(a, b)):
        if p != q and 1 not in (p, q):
            raise KernelError(f"{what}: shape mismatch: {x.name} {list(x.shape)} and {y.name} {list(y.shape)} do not "
                              "broadcast")
        out.append(_b.max(p, q))
    if a[0] != b[0]:
        raise KernelError(f"{what}: {x.name} {list(x.shape)} and {y.name} {list(y.shape)} differ in the partition "
                          "dim; broadcast across partitions with nl.broadcast_to")
    return out


def _broadcast_view(v, shape, what):
    dims = list(v.dims)
    while len(dims) < len(shape):
        dims.insert(1, (0, 1, False))
    out = []
    for (step, num, part), n in zip(dims, shape):
        out.append((step, num, part) if num == n else (0, n, part))
    return v.like(v.off_p, v.off_f, out)


# One definition per NKI function (public NKI docs, nki.language element-wise pages); the ALU op names are BIR's
# (isa/tables/alu_ops.def).
@_api
def add(x, y, *, dtype=None, mask=None, **kw):
    return _binary("add", x, y, dtype, mask, "nl.add")


@_api
def subtract(x, y, *, dtype=None, mask=None, **kw):
    return _binary("subtract", x, y, dtype, mask, "nl.subtract")


@_api
def multiply(x, y, *, dtype=None, mask=None, **kw):
    return _binary("mult", x, y, dtype, mask, "nl.multiply")


@_api
def divide(x, y, *, dtype=None, mask=None, **kw):
    return _binary("divide", x, y, dtype, mask, "nl.divide")


@_api
def maximum(x, y, *, dtype=None, mask=None, **kw):
    return _binary("max", x, y, dtype, mask, "nl.maximum")


@_api
def minimum(x, y, *, dtype=None, mask=None, **kw):
    return _binary("min", x, y, dtype, mask, "nl.minimum")


@_api
def power(x, y, *, dtype=None, mask=None, **kw):
    return _binary("pow", x, y, dtype, mask, "nl.power")


@_api
def equal(x, y, *, dtype=None, mask=None, **kw):
    return _binary("is_equal", x, y, dtype, mask, "nl.equal")


@_api
def not_equal(x, y, *, dtype=None, mask=None, **kw):
    return _binary("not_equal", x, y, dtype, mask, "nl.not_equal")


@_api
def greater(x, y, *, dtype=None, mask=None, **kw):
    return _binary("is_gt", x, y, dtype, mask, "nl.greater")


@_api
def greater_equal(x, y, *, dtype=None, mask=None, **kw):
    return _binary("is_ge", x, y, dtype, mask, "nl.greater_equal")


@_api
def less(x, y, *, dtype=None, mask=None, **kw):
    return _binary("is_lt", x, y, dtype, mask, "nl.less")


@_api
def less_equal(x, y, *, dtype=None, mask=None, **kw):
    return _binary("is_le", x, y, dtype, mask, "nl.less_equal")


@_api
def logical_and(x, y, *, dtype=None, mask=None, **kw):
    return _binary("logical_and", x, y, dtype, mask, "nl.logical_and")


@_api
def logical_or(x, y, *, dtype=None, mask=None, **kw):
    return _binary("logical_or", x, y, dtype, mask, "nl.logical_or")


@_api
def logical_xor(x, y, *, dtype=None, mask=None, **kw):
    return _binary("logical_xor", x, y, dtype, mask, "nl.logical_xor")


@_api
def bitwise_and(x, y, *, dtype=None, mask=None, **kw):
    return _binary("bitwise_and", x, y, dtype, mask, "nl.bitwise_and")


@_api
def bitwise_or(x, y, *, dtype=None, mask=None, **kw):
    return _binary("bitwise_or", x, y, dtype, mask, "nl.bitwise_or")


@_api
def bitwise_xor(x, y, *, dtype=None, mask=None, **kw):
    return _binary("bitwise_xor", x, y, dtype, mask, "nl.bitwise_xor")


@_api
def left_shift(x, y, *, dtype=None, mask=None, **kw):
    return _binary("logical_shift_left", x, y, dtype, mask, "nl.left_shift")


@_api
def right_shift(x, y, *, dtype=None, mask=None, **kw):
    return _binary("logical_shift_right", x, y, dtype, mask, "nl.right_shift")


@_api
def abs_max(x, y, *, dtype=None, mask=None, **kw):
    """x where |x| > |y|, else y (the signed value; a tie gives y): the ALU's abs_max (public NKI docs,
    nki.language.abs_max)."""
    return _binary("abs_max", x, y, dtype, mask, "nl.abs_max")


@_api
def abs_min(x, y, *, dtype=None, mask=None, **kw):
    """x where |x| < |y|, else y (the signed value; a tie gives y): the ALU's abs_min."""
    return _binary("abs_min", x, y, dtype, mask, "nl.abs_min")


@_api
def fmod(x, y, *, dtype=None, mask=None, **kw):
    """The remainder of x / y with the sign of x (numpy.fmod): the ALU's mod, C fmodf (engines/alu_kernels.hpp)."""
    return _binary("mod", x, y, dtype, mask, "nl.fmod")


@_api
def mod(x, y, *, dtype=None, mask=None, **kw):
    """The remainder of x / y with the sign of y (Python's x % y, numpy.mod): r = fmod(x, y), then r + y where r and
    y have opposite signs (r * y < 0): five VectorE instructions."""
    what = "nl.mod"
    tile = _tile(y if _is_num(x) else x, what, "y" if _is_num(x) else "x")
    r = _binary("mod", x, y, "float32", mask, what)
    wrong = _binary("is_lt", _binary("mult", r, y, "float32", None, what), 0.0, "float32", None, what)
    fix = _binary("mult", wrong, y, "float32", None, what)
    return _binary("add", r, fix, _bir(dtype, tile.bir_dtype), None, what)


@_api
def trunc(x, *, dtype=None, mask=None, **kw):
    """x rounded toward zero: x - fmod(x, 1) (two VectorE instructions; the ALU's mod keeps x's sign)."""
    x = _tile(x, "nl.trunc", "x")
    (x,) = _mask([x], mask, "nl.trunc")
    frac = _binary("mod", x, 1.0, "float32", None, "nl.trunc")
    return _binary("subtract", x, frac, _bir(dtype, x.bir_dtype), None, "nl.trunc")


def _activation(func, x, dtype, mask, what, bias=None, scale=1.0):
    """f(x): one Activation on ScalarE (NKI: transcendental functions run on the Scalar Engine; reference
    neuron-arch.md 3.5, the activation function table)."""
    x = _tile(x, what, "x")
    (x,) = _mask([x], mask, what)
    out = _new_tile(x.shape, _bir(dtype, x.bir_dtype if dtypes.is_float(x.bir_dtype) else "float32"))
    out.storage.__dict__["temp"] = True
    ins = [x, _imm(scale)]
    if bias is not None:
        ins.append(_imm(bias) if _is_num(bias) else _tile(bias, what, "bias"))
    _emit("Activation", ins, [out], what, {"func": func})
    return out


@_api
def exp(x, *, dtype=None, mask=None, **kw):
    return _activation("Exp", x, dtype, mask, "nl.exp")


@_api
def log(x, *, dtype=None, mask=None, **kw):
    return _activation("Ln", x, dtype, mask, "nl.log")


@_api
def tanh(x, *, dtype=None, mask=None, **kw):
    return _activation("Tanh", x, dtype, mask, "nl.tanh")


@_api
def sigmoid(x, *, dtype=None, mask=None, **kw):
    return _activation("Sigmoid", x, dtype, mask, "nl.sigmoid")


@_api
def relu(x, *, dtype=None, mask=None, **kw):
    return _activation("Relu", x, dtype, mask, "nl.relu")


@_api
def gelu(x, *, dtype=None, mask=None, **kw):
    return _activation("Gelu", x, dtype, mask, "nl.gelu")


@_api
def gelu_apprx_tanh(x, *, dtype=None, mask=None, **kw):
    return _activation("Gelu_apprx_tanh", x, dtype, mask, "nl.gelu_apprx_tanh")


@_api
def silu(x, *, dtype=None, mask=None, **kw):
    return _activation("Silu", x, dtype, mask, "nl.silu")


@_api
def softplus(x, *, dtype=None, mask=None, **kw):
    return _activation("Softplus", x, dtype, mask, "nl.softplus")


@_api
def mish(x, *, dtype=None, mask=None, **kw):
    return _activation("Mish", x, dtype, mask, "nl.mish")


@_api
def gelu_apprx_sigmoid(x, *, dtype=None, mask=None, **kw):
    return _activation("Gelu_apprx_sigmoid", x, dtype, mask, "nl.gelu_apprx_sigmoid")


@_api
def gelu_dx(x, *, dtype=None, mask=None, **kw):
    return _activation("Derivative_Gelu", x, dtype, mask, "nl.gelu_dx")


@_api
def gelu_apprx_sigmoid_dx(x, *, dtype=None, mask=None, **kw):
    return _activation("Derivative_Gelu_apprx_sigmoid", x, dtype, mask, "nl.gelu_apprx_sigmoid_dx")


@_api
def silu_dx(x, *, dtype=None, mask=None, **kw):
    return _activation("Derivative_silu", x, dtype, mask, "nl.silu_dx")


@_api
def erf_dx(x, *, dtype=None, mask=None, **kw):
    return _activation("Derivative_Erf", x, dtype, mask, "nl.erf_dx")


@_api
def sqrt(x, *, dtype=None, mask=None, **kw):
    return _activation("Sqrt", x, dtype, mask, "nl.sqrt")


@_api
def rsqrt(x, *, dtype=None, mask=None, **kw):
    return _activation("Rsqrt", x, dtype, mask, "nl.rsqrt")


@_api
def erf(x, *, dtype=None, mask=None, **kw):
    return _activation("Erf", x, dtype, mask, "nl.erf")


@_api
def sin(x, *, dtype=None, mask=None, **kw):
    return _activation("Sin", x, dtype, mask, "nl.sin")


@_api
def cos(x, *, dtype=None, mask=None, **kw):
    """cos(x) = sin(x + pi/2): ScalarE has no cosine (reference neuron-arch.md 3.5 lists sin only); the bias adds
    pi/2 before the Sin."""
    return _activation("Sin", x, dtype, mask, "nl.cos", bias=math.pi / 2)


@_api
def tan(x, *, dtype=None, mask=None, **kw):
    """tan(x) = sin(x) / sin(x + pi/2): ScalarE has no tangent (reference neuron-arch.md 3.5); two Sin activations
    and a VectorE divide."""
    s = _activation("Sin", x, "float32", mask, "nl.tan")
    c = _activation("Sin", x, "float32", mask, "nl.tan", bias=math.pi / 2)
    return _binary("divide", s, c, _bir(dtype, _tile(x, "nl.tan", "x").bir_dtype), None, "nl.tan")


@_api
def arctan(x, *, dtype=None, mask=None, **kw):
    return _activation("Arctan", x, dtype, mask, "nl.arctan")


@_api
def sign(x, *, dtype=None, mask=None, **kw):
    return _activation("Sign", x, dtype, mask, "nl.sign")


@_api
def square(x, *, dtype=None, mask=None, **kw):
    return _activation("Square", x, dtype, mask, "nl.square")


@_api
def abs(x, *, dtype=None, mask=None, **kw):  # noqa: A001 - NKI's name
    return _activation("Abs", x, dtype, mask, "nl.abs")


@_api
def reciprocal(x, *, dtype=None, mask=None, **kw):
    """1/x: the Reciprocal instruction (VectorE; NKI nki.isa.reciprocal)."""
    x = _tile(x, "nl.reciprocal", "x")
    (x,) = _mask([x], mask, "nl.reciprocal")
    out = _new_tile(x.shape, _bir(dtype, x.bir_dtype))
    out.storage.__dict__["temp"] = True
    _emit("Reciprocal", [x], [out], "nl.reciprocal")
    return out


@_api
def negative(x, *, dtype=None, mask=None, **kw):
    """-x: TensorScalarPtr multiply by -1 (VectorE)."""
    return _binary("mult", x, -1.0, dtype, mask, "nl.negative")


@_api
def invert(x, *, dtype=None, mask=None, **kw):
    """~x (bitwise not, integer tiles): TensorScalarPtr bitwise_xor with all ones."""
    return _binary("bitwise_xor", x, -1, dtype, mask, "nl.invert")


bitwise_not = registry.register("nki.language", "bitwise_not", invert)


@_api
def logical_not(x, *, dtype=None, mask=None, **kw):
    """not x: (x == 0), TensorScalarPtr is_equal 0."""
    return _binary("is_equal", x, 0.0, dtype, mask, "nl.logical_not")


def _rounding(x, dtype, mask, what, ceil_):
    """No instruction rounds to an integer: t = x - mod(x, 1) truncates (the ALU's mod is C fmod, the remainder with
    x's sign, engines/alu_kernels.hpp), then floor = t - (x < t) and ceil = t + (x > t): four VectorE instructions."""
    x = _tile(x, what, "x")
    (x,) = _mask([x], mask, what)
    frac = _binary("mod", x, 1.0, "float32", None, what)
    t = _binary("subtract", x, frac, "float32", None, what)
    step = _binary("is_gt" if ceil_ else "is_lt", x, t, "float32", None, what)
    return _binary("add" if ceil_ else "subtract", t, step, _bir(dtype, x.bir_dtype), None, what)


@_api
def floor(x, *, dtype=None, mask=None, **kw):
    return _rounding(x, dtype, mask, "nl.floor", False)


@_api
def ceil(x, *, dtype=None, mask=None, **kw):
    return _rounding(x, dtype, mask, "nl.ceil", True)


class Operator:
    """An operator NKI names as a value, not a call (nl.bypass, nl.average, nl.prelu): the op= of nki.isa instructions
    (reference neuron-arch.md 3.4, 3.5). Calling one raises Unsupported."""

    def __init__(self, name, what):
        self.name, self.what = name, what

    def __call__(self, *args, **kwargs):
        raise Unsupported(f"nl.{self.name} is {self.what}: give it as the op of an nki.isa instruction, it is no call",
                          source_location())

    def __repr__(self):
        return f"nl.{self.name}"


bypass = registry.value("nki.language", "bypass", Operator("bypass", "the ALU's pass-through operator"))
average = registry.value("nki.language", "average", Operator("average", "the ALU's averaging reduction"))
prelu = registry.value("nki.language", "prelu", Operator("prelu", "the parametric-ReLU activation function"))


# ---------------------------------------------------------------------------------------------------- selection
@_api
def where(condition, x, y, *, dtype=None, mask=None, **kw):
    """nl.where: condition ? x : y (Select on VectorE; x / y a tile of the shape or a number)."""
    c = _tile(condition, "nl.where", "condition")
    ins = [c]
    for v, arg in ((x, "x"), (y, "y")):
        if _is_num(v):
            ins.append(_imm(v))
        else:
            v = _tile(v, "nl.where", arg)
            _same_shape(c, v, "nl.where", "condition", arg)
            ins.append(v)
    ins = _mask(ins, mask, "nl.where")
    bir = _bir(dtype, next((v.bir_dtype for v in ins[1:] if isinstance(v, View)), "float32"))
    out = _new_tile(c.shape, bir)
    out.storage.__dict__["temp"] = True
    _emit("Select", ins, [out], "nl.where")
    return out
