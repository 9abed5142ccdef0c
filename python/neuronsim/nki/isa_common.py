"""What the nki.isa topic modules (isa_<topic>.py) share beyond isa.py's own helpers: the destination of a call in
both of NKI's forms (the current namespace's dst= tile, the older one's returned tile), accumulator commands and ALU
ops however a kernel spells them, and per-partition scalar operands. It defines no NKI name."""
from . import isa
from .errors import KernelError
from .nl_common import _bir, _imm, _is_num, _tile
from .tracer import View


def acc_cmd(x, what, default="Idle"):
    """A reduce_cmd as a BIR EngineAccumulationType name (isa._acc_cmd)."""
    return isa._acc_cmd(x, what, default)


def engine_name(e, what, allowed):
    """An engine= argument (nisa.engine.vector, nisa.vector_engine, ...) as a BIR engine name, one of `allowed`
    (BIR names); None and the unknown engine give None (the instruction's own engine)."""
    if e is None or e is isa.unknown_engine:
        return None
    name = e if isinstance(e, str) else getattr(e, "name", None)
    bir = {"vector": "DVE", "gpsimd": "Pool", "scalar": "Activation", "tensor": "PE", "sync": "SP",
           "unknown": None}.get(name, name)
    if bir is not None and bir not in allowed:
        raise KernelError(f"{what}: engine={e!r}: this call runs on " + " or ".join(allowed))
    return bir


def alu(op, what, allow_bypass=False):
    """An op= argument as a BIR ALU op name (isa._alu); None and nl.bypass are `bypass` where allowed."""
    if op is None or getattr(op, "__name__", None) == "bypass" or op == "bypass":
        if allow_bypass:
            return "bypass"
        raise KernelError(f"{what}: an ALU operator is required here, got {op!r}")
    return isa._alu(op, what)


def out_tile(dst, shape, bir, what, arg="dst", buffer="sbuf"):
    """The tile an instruction writes: dst (the current namespace's form: a tile of that many elements per
    partition, any dtype) or, without one, a new tile of shape and dtype bir (the older namespace's returned
    tile)."""
    if dst is None:
        return isa._out(tuple(shape), bir, buffer)
    d = _tile(dst, what, arg)
    want = 1
    for n in shape[1:]:
        want *= n
    have = 1
    for n in d.shape[1:]:
        have *= n
    if d.shape[0] != shape[0] or have != want:
        raise KernelError(f"{what}: {arg} {d.name} is {list(d.shape)}; the result is {list(shape)}")
    return d


def column(x, parts, what, arg):
    """A per-partition scalar operand: a number (an fp32 immediate) or a [parts, 1] tile."""
    if _is_num(x):
        return _imm(x)
    v = _tile(x, what, arg)
    if v.shape[0] != parts or any(n != 1 for n in v.shape[1:]):
        raise KernelError(f"{what}: {arg} {v.name} must be a number or a [{parts}, 1] tile, it is {list(v.shape)}")
    return v


def reduce_res_tile(x, parts, what, arg="reduce_res"):
    """A [parts, 1] tile receiving the accumulator registers, or None."""
    if x is None:
        return None
    v = _tile(x, what, arg)
    if v.shape[0] != parts or any(n != 1 for n in v.shape[1:]):
        raise KernelError(f"{what}: {arg} {v.name} must be [{parts}, 1], it is {list(v.shape)}")
    return v


def same_elements(a, b, what, an, bn):
    """a and b have the same partitions and elements per partition (shapes may differ in their free dims)."""
    ea = 1
    for n in a.shape[1:]:
        ea *= n
    eb = 1
    for n in b.shape[1:]:
        eb *= n
    if a.shape[0] != b.shape[0] or ea != eb:
        raise KernelError(f"{what}: {an} {a.name} {list(a.shape)} and {bn} {b.name} {list(b.shape)} differ in "
                          "partitions or elements per partition")


def is_view(x):
    return isinstance(x, View)


def bir_of(dtype, default):
    return _bir(dtype, default)
