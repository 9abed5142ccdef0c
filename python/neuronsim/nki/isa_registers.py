"""nki.isa: virtual registers (public NKI docs, nki.isa.register_alloc / register_move / register_load /
register_store, nki.isa.VirtualRegister). Each call records one register instruction (dynamic.register_op):

    register_alloc(x)        a new Register; with x, RegisterMove reg <- x
    register_move(dst, src)  RegisterMove dst <- src (an integer or a register)
    register_load(dst, src)  TensorLoad dst <- the element of src (a one-element SBUF or HBM tensor)
    register_store(dst, src) TensorSave dst <- src (a register or an integer), dst a one-element tensor

emit_bir.py places each on the engines whose instructions read the register (docs/nki-lowering.md 4)."""
import math

from . import registry
from .dynamic import Register, register_op
from .errors import KernelError
from .tracer import View, current

_api = registry.api("nki.isa")
VirtualRegister = registry.register("nki.isa", "VirtualRegister", Register)


def _reg(x, what, arg):
    if not isinstance(x, Register):
        raise KernelError(f"{what}: {arg} is a register (nisa.register_alloc), got {x!r}")
    return x


def _int_or_reg(x, what, arg):
    if isinstance(x, Register):
        return x
    if isinstance(x, int) and not isinstance(x, bool) or type(x).__name__ in ("int32", "int64"):
        if not -2 ** 31 <= int(x) < 2 ** 32:
            raise KernelError(f"{what}: {arg} {x} does not fit a 32-bit register")
        return ("imm", int(x), "int32")
    raise KernelError(f"{what}: {arg} is a compile-time integer or a register, got {x!r}")


def _scalar_tensor(x, what, arg):
    if not isinstance(x, View) or math.prod(x.shape) != 1 or x.storage.buffer == "psum":
        raise KernelError(f"{what}: {arg} is an SBUF or HBM tensor of one element (shape [1] or [1, 1]), got "
                          f"{getattr(x, 'name', x)!r} {list(getattr(x, 'shape', ()))}")
    return x


@_api
def register_alloc(x=None):
    """A new virtual register; register_alloc(v) also sets it to the integer v."""
    r = Register(current("nisa.register_alloc"))
    if x is not None:
        register_move(r, x)
    return r


@_api
def register_move(dst, src):
    what = "nisa.register_move"
    register_op("RegisterMove", [_int_or_reg(src, what, "src")], [_reg(dst, what, "dst")], what)


@_api
def register_load(dst, src):
    what = "nisa.register_load"
    t = _scalar_tensor(src, what, "src")
    t.storage.__dict__["uses"] = t.storage.__dict__.get("uses", 0) + 1
    register_op("TensorLoad", [t], [_reg(dst, what, "dst")], what)


@_api
def register_store(dst, src):
    what = "nisa.register_store"
    t = _scalar_tensor(dst, what, "dst")
    s = t.storage
    s.written = True
    s.zero_op = None
    s.__dict__["computed"] = True
    if s.buffer == "hbm" and s.kind == "input":
        s.kind = "output"  # an argument the kernel writes is one of its results
    register_op("TensorSave", [_int_or_reg(src, what, "src")], [t], what)
