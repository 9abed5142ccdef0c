"""Run-time values of a traced kernel: virtual registers and the loops they drive.

- Register: NKI's nisa.VirtualRegister, a 32-bit integer an engine sequencer holds (public NKI docs,
  nki.isa.register_alloc: each engine has registers of its own and the compiler places a virtual register on the
  engines that use it; emit_bir.py does the placing). Its value exists only on the device: Python control flow on it
  is refused, except `while reg:` (below).
- DynamicLoop: a loop whose trip count is known at run time -- kind "dynamic", nl.dynamic_range / nl.fori_loop with a
  register bound (a BIR DynamicForLoop, its variable a read-only Register) -- or kind "while", nl.while_loop and
  `while reg:` (a DoWhile under a guard: a true while, the body skipped when the condition starts at 0; public NKI
  docs, nki.language.while_loop).
- register_op: records a register instruction (RegisterMove, RegisterAlu, TensorLoad, TensorSave).

The trace layer (tests/python/test_nki_layers.py): it imports tracer and below.
"""
import linecache

from .errors import KernelError, Unsupported, source_location
from .tracer import Block, Loop, Op, current


class Register:
    """A virtual register of the traced kernel (NKI's VirtualRegister). name is its BIR register name; loop, the
    DynamicLoop whose variable it is (read-only); shadow, whether a register instruction reads that variable (the loop
    then keeps it in the register as well: emit_bir.py)."""

    def __init__(self, trace, loop=None, name=None):
        self.id = len(trace.registers)
        trace.registers.append(self)
        self.name = name or f"reg{self.id}"
        self.loop = loop
        self.shadow = False
        self._while = None  # the `while reg:` loop this register's truth value opened, until it closes

    def __repr__(self):
        what = f"loop variable of line {self.loop.where[1]}" if self.loop is not None and self.loop.where else ""
        return f"<register {self.name}{' ' + what if what else ''}>"

    def __bool__(self):
        """`while reg:` (NKI's bare while on a register, deprecated for nl.while_loop): the first test opens a loop
        whose body the statements below trace once; the test after the body, from the same line, closes it."""
        tr = current("the truth value of a register")
        where = source_location()
        L = self._while
        if L is not None and tr.stack[-1] is L.body and L.where == where:
            tr.stack.pop()
            self._while = None
            return False
        text = linecache.getline(where[0], where[1]).lstrip() if where else ""
        if not text.startswith("while") or self.loop is not None:
            raise Unsupported("a register used as a Python truth value (if, and/or, bool()): its value exists only "
                              "on the device; loop on it with `while reg:`, nl.while_loop or nl.dynamic_range", where)
        L = DynamicLoop(tr, "while", None, None, 1, where)
        L.cond = self
        tr.stack[-1].items.append(L)
        tr.stack.append(L.body)
        self._while = L
        return True

    def __index__(self):
        raise Unsupported("a register used as a Python integer (a shape, a slice, range()): its value exists only on "
                          "the device; use it as .ap(scalar_offset=) or a loop bound", source_location())

    __int__ = __index__

    def _arith(self, *_):
        raise Unsupported("Python arithmetic on a register: NKI offers register_move / register_load / "
                          "register_store (public NKI docs, nki.isa.VirtualRegister); compute in a tile and "
                          "register_load it", source_location())

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __floordiv__ = __mod__ = __neg__ = _arith
    __lt__ = __le__ = __gt__ = __ge__ = _arith
    __hash__ = object.__hash__


def mark_shadow(reg):
    """A register instruction reads loop variable reg: the loop keeps its value in the register too (and an outer
    loop variable its start comes from)."""
    while reg is not None and reg.loop is not None and not reg.shadow:
        reg.shadow = True
        start = reg.loop.start
        reg = start if isinstance(start, Register) else None


class DynamicLoop(Loop):
    """A loop whose trips are known at run time: kind "dynamic" (start / stop an int or a Register, step a positive
    int; reg, its variable) or "while" (cond, the register tested before the first trip and after each; param, for
    nl.while_loop, the register the body receives)."""

    def __init__(self, trace, kind, start, stop, step, where):  # noqa: super().__init__ counts static trips
        self.trace = trace
        self.var = len(trace.loops)
        self.kind, self.start, self.stop, self.step, self.where = kind, start, stop, step, where
        self.trips = None
        self.body = Block(self)
        self.parent = trace.stack[-1].loop
        trace.loops.append(self)
        self.reg = Register(trace, loop=self, name=f"i{self.var}") if kind == "dynamic" else None
        self.cond = None
        self.param = None


def _bound(x, what):
    if isinstance(x, Register):
        return x
    try:
        return int(x)
    except (TypeError, ValueError):
        raise KernelError(f"{what}: a bound is an integer or a register (nisa.register_alloc), got {x!r}")


def dynamic_range(what, start, stop, step):
    """The iterator of nl.dynamic_range / a register-bounded nl.fori_loop: the body is traced once, its variable a
    Register (a BIR DynamicForLoop, never unrolled: public NKI docs, "NKI Dynamic Loops")."""
    tr = current(what)
    where = source_location()
    if isinstance(step, Register) or not isinstance(step, int) or isinstance(step, bool) or step <= 0:
        raise KernelError(f"{what}: the step is a positive compile-time integer (the hardware loop encodes it as an "
                          f"immediate; public NKI docs, nki.language.dynamic_range), got {step!r}", where)
    start, stop = _bound(start, what), _bound(stop, what)
    return _dynamic_gen(tr, start, stop, step, where)


def _dynamic_gen(tr, start, stop, step, where):
    L = DynamicLoop(tr, "dynamic", start, stop, step, where)
    tr.stack[-1].items.append(L)
    tr.stack.append(L.body)
    try:
        yield L.reg
    except GeneratorExit:
        tr.broken = where
        if tr.stack and tr.stack[-1] is L.body:
            tr.stack.pop()
        raise
    tr.stack.pop()


def register_op(type_, ins, outs, what, fields=None, where=None):
    """Records a register instruction: ins / outs are Registers, tiles (View) or ("imm", value)."""
    for r in outs:
        if isinstance(r, Register) and r.loop is not None:
            raise KernelError(f"{what}: writes the variable of the dynamic loop of line {r.loop.where[1]}; a loop "
                              "variable is read-only (public NKI docs, NKI migration guide)", where)
    for r in ins:
        if isinstance(r, Register) and r.loop is not None:
            mark_shadow(r)
    tr = current(what)
    op = Op(type_, list(ins), list(outs), dict(fields or {}), None, where or source_location(), what,
            kind="register")
    tr.emit(op)
    return op


def open_loops(trace):
    """The `while reg:` loops left open (a break or return inside one): (line,) of the innermost, else None."""
    for block in reversed(trace.stack[1:]):
        L = block.loop
        if isinstance(L, DynamicLoop) and L.kind == "while":
            return L.where
    return None
