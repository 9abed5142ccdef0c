"""The run-time half of emitting a trace (emit_bir.py calls it): virtual registers placed on engines, register
instructions, run-time starts, and dynamic loops. docs/nki-lowering.md 4 states the rules:

- Registers. Each engine sequencer has registers of its own, and a virtual register lives on the engines that read it
  (public NKI docs, nki.isa.register_alloc: the compiler places virtual registers on the engine sequencers). A
  register read by an access (.ap(scalar_offset=reg)) lives on the engine of that instruction (SP, which triggers the
  front end's DMAs, for a DMA); one read by a register instruction, on that instruction's engines; one read only by a
  loop bound or a while condition (read when the loop starts, from any engine), on SP. Every instruction that writes
  a register is emitted once on each engine it lives on, in program order, so that every copy holds the same value
  wherever it is read.
- A [1, 1] tile given as scalar_offset is read into a register of the consuming instruction's engine (TensorLoad)
  just before it; a dynamic loop's variable is the BIR loop variable of its DynamicForLoop (and, when a register
  instruction reads it, also a register the loop sets before its first trip and steps at the end of each).
- Loops: nl.dynamic_range / a register-bounded fori_loop is a DynamicForLoop (one buffer per tile: "Tensors allocated
  inside the loop body are allocated once and reused", public NKI docs "NKI Dynamic Loops"; allocate.py allocates a
  tile declared outside a dynamic loop and touched in it whole, never block by block); nl.while_loop and
  `while reg:` are a DoWhile on the condition register inside a DynamicForLoop of (cond != 0) trips (RegisterAlu
  not_equal): the body is skipped when the condition starts at 0, as NKI's while is.
"""
from .. import _core
from .dynamic import DynamicLoop, Register
from .tracer import Loop, View

_B = _core.builder
ENGINES = ("SP", "Activation", "Pool", "DVE", "PE")  # the order register copies are emitted in


def engine_of(op):
    """The engine an instruction runs on: the one it names, GpSimd for a store (lowering.store triggers it there),
    SP for the front end's other DMAs, else the simulator's rule for its BIR type (engines/ops/engine_policy.cpp)."""
    if op.engine:
        return op.engine
    if op.kind == "store" and op.type == "Save":
        return "Pool"
    if op.kind in ("load", "store", "dma"):
        return "SP"
    return _B.default_engine(op.type)


def _walk_ops(block, fn):
    for item in block.items:
        if isinstance(item, Loop):
            _walk_ops(item.body, fn)
        elif not item.extra.get("dropped"):  # a loop-start marker, a call whose mask holds nowhere: no instruction
            fn(item)


def tile_terms(op):
    """The [1, 1] tiles the op's operands take their run-time offsets from (each read into a register first)."""
    out = []
    for v in op.ins + op.outs:
        if isinstance(v, View) and v.dyn is not None:
            out.extend(src for src, _ in v.dyn.terms if isinstance(src, View))
    return out


class Registers:
    """Where every virtual register lives (engines) and the register names of tile offsets."""

    def __init__(self, trace):
        self.engines = {}  # Register -> set of engine names
        reg_ops = []

        def visit(op):
            if op.kind == "register":
                reg_ops.append(op)
                return
            for v in op.ins + op.outs:
                if isinstance(v, View) and v.dyn is not None:
                    for src, _ in v.dyn.terms:
                        if isinstance(src, Register) and src.loop is None:
                            self.engines.setdefault(src, set()).add(engine_of(op))
        _walk_ops(trace.root, visit)
        changed = True
        while changed:  # a register instruction's operands live where it runs
            changed = False
            for op in reg_ops:
                where = self.op_engines(op)
                for r in op.ins:
                    if isinstance(r, Register) and not where <= self.engines.get(r, set()):
                        self.engines.setdefault(r, set()).update(where)
                        changed = True

    def of(self, reg):
        return sorted(self.engines.get(reg) or {"SP"}, key=ENGINES.index)

    def op_engines(self, op):
        """The engines a register instruction is emitted on: those of the register it writes (SP for TensorSave)."""
        dst = op.outs[0]
        return set(self.of(dst)) if isinstance(dst, Register) else {"SP"}


def arg(x):
    """A register instruction's operand that is no tile: a register, or ("imm", value[, dtype])."""
    if isinstance(x, Register):
        return _B.Builder.reg(x.name)
    return _B.Builder.imm(x[1], x[2] if len(x) > 2 else "float32")


def register_op(ctx, op, env):
    """A register instruction, once on each engine its destination lives on."""
    engines = sorted(ctx.regs.op_engines(op), key=ENGINES.index)
    for e in engines:
        ins = [ctx.arg(x, env, op.where) if isinstance(x, View) else arg(x) for x in op.ins]
        outs = [ctx.arg(x, env, op.where) if isinstance(x, View) else arg(x) for x in op.outs]
        r = ctx.b.add(op.type, ins, outs)
        for k, v in op.fields.items():
            r.set(k, v)
        r.engine(e)
        if op.where:
            r.source(op.where[0], op.where[1])


def load_tile_offsets(ctx, op, env):
    """TensorLoad of each [1, 1] tile the op's operands offset by, on the op's engine, into registers off<k>; returns
    {id(tile view): register name}."""
    names = {}
    for src in tile_terms(op):
        if id(src) in names:
            continue
        name = f"off{len(names)}"
        names[id(src)] = name
        r = ctx.b.add("TensorLoad", [ctx.arg(src, env, op.where)], [_B.Builder.reg(name)])
        r.engine(engine_of(op))
        if op.where:
            r.source(op.where[0], op.where[1])
    return names


def run_time_start(v, env, names):
    """The run-time part of view v's start, an Aff of registers and loop variables."""
    a = _B.Aff(0)
    for src, coef in v.dyn.terms:
        if isinstance(src, View):
            term = _B.Aff.reg(names[id(src)])
        elif src.loop is not None:
            term = env[src.loop.var][0]
        else:
            term = _B.Aff.reg(src.name)
        a = a + term * coef
    return a


def _bound(x, env):
    if isinstance(x, Register):
        return env[x.loop.var][0] if x.loop is not None else _B.Aff.reg(x.name)
    return _B.Aff(int(x))


def _move(ctx, dst, src, engines, where, op="RegisterMove", fields=None):
    for e in engines:
        r = ctx.b.add(op, src, [_B.Builder.reg(dst)])
        for k, v in (fields or {}).items():
            r.set(k, v)
        r.engine(e)
        if where:
            r.source(where[0], where[1])


def loop(ctx, L, env):
    """A DynamicLoop: DynamicForLoop, or the guarded DoWhile of a while loop."""
    ctx.loop_names += 1
    line = L.where[1] if L.where else 0
    if L.kind == "while":
        cond = L.cond
        guard = f"{cond.name}_nz{L.var}"
        engine = ctx.regs.of(cond)[:1]
        _move(ctx, guard, [arg(cond), _B.Builder.imm(0, "int32")], engine, L.where, "RegisterAlu",
              {"op": "not_equal"})

        def body(var):
            e = dict(env)
            e[L.var] = (var, 0)
            ctx.b.do_while(cond.name, lambda: ctx.block(L.body, e))
        ctx.b.dynamic_loop(f"w{line}_{ctx.loop_names}", _B.Aff(0), _B.Aff.reg(guard), 1, body)
        return
    engines = ctx.regs.of(L.reg)
    if L.reg.shadow:  # a register instruction reads the variable: it is kept in register L.reg.name too
        _move(ctx, L.reg.name, [arg(L.start) if isinstance(L.start, Register) else
                                _B.Builder.imm(int(L.start), "int32")], engines, L.where)

    def body(var):
        e = dict(env)
        e[L.var] = (var, 0)
        ctx.block(L.body, e)
        if L.reg.shadow:
            _move(ctx, L.reg.name, [_B.Builder.reg(L.reg.name), _B.Builder.imm(L.step, "int32")], engines, L.where,
                  "RegisterAlu", {"op": "add"})
    ctx.b.dynamic_loop(f"d{line}_{ctx.loop_names}", _bound(L.start, env), _bound(L.stop, env), L.step, body)


def is_dynamic(L):
    return isinstance(L, DynamicLoop)


def run_time_sources(op):
    """The registers and tiles an op's operands read their run-time starts from (ids), for the loads that may run
    ahead of their trip (emit_bir.py): such a load runs ahead only when its loop writes none of them."""
    out = set()
    for v in op.ins + op.outs:
        if isinstance(v, View) and v.dyn is not None:
            for src, _ in v.dyn.terms:
                out.add(id(src.storage) if isinstance(src, View) else id(src))
    return out


def writes_of(op):
    """What an op writes, as run_time_sources names it: registers and storages."""
    return {id(v.storage) if isinstance(v, View) else id(v) for v in op.outs}
