"""nki.compiler: directives to the Neuron compiler's passes, and the explicit allocations of SBUF / PSUM tiles.

- skip_middle_end_transformations, no_reorder: change no value; neuronsim's lowering has no such passes (accepted
  without effect).
- Explicit allocation (legacy NKI, "NKI Direct Allocation Developer Guide"): a tile's buffer= given as
  nki.compiler.sbuf.mod_alloc(base_addr=, base_partition=, num_par_tiles=, num_free_tiles=), sbuf.alloc(func),
  psum.mod_alloc(base_bank=, base_addr=0, base_partition=0, num_bank_tiles=, ...), psum.alloc(func) -- or, in the
  current NKI, nl.ndarray(..., address=(partition, byte)). The tile is placed there, as written (allocate.py;
  docs/nki-lowering.md 2); sbuf / psum / auto_alloc() leave it to the allocator.
- force_auto_alloc: the kernel's explicit allocations are ignored and every tile placed by the allocator, as the
  decorator's documentation says; enable_stack_allocator allocates automatically (a stack discipline is one way
  the compiler may place tiles; neuronsim's allocator places them by liveness).
"""
import functools

from . import registry

__neuronsim__ = True


def skip_middle_end_transformations(fn=None, **kw):
    return fn if fn is not None else (lambda f: f)


class no_reorder:
    """`with nki.compiler.no_reorder():` keeps the compiler from reordering the block's instructions; neuronsim emits
    them in program order anyway."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def enable_stack_allocator(fn=None, **kw):
    return fn if fn is not None else (lambda f: f)


def force_auto_alloc(fn=None, **kw):
    """Ignore the kernel's explicit allocations (buffer=nki.compiler.sbuf.mod_alloc(...), address=): every tile is
    placed by the allocator. The kernel, while it is traced, marks its trace (allocate.py reads the mark)."""
    def mark(f):
        inner = getattr(f, "fn", None)
        target = inner if callable(inner) else f

        @functools.wraps(target)
        def traced(*args, **kwargs):
            from .tracer import current
            current("nki.compiler.force_auto_alloc").__dict__["force_auto_alloc"] = True
            return target(*args, **kwargs)
        if target is f:
            return traced
        f.fn = traced
        return f
    return mark(fn) if fn is not None else mark


class Placement:
    """An explicit placement of a tile (its buffer= argument, or nl.ndarray's address=). kind: "mod" (modulo
    allocation over the tile's blocks), "func" (a function of the block index), "address" (the whole tensor at one
    place), "auto" (the allocator decides). Fields as the NKI reference names them."""

    def __init__(self, buffer, kind, **fields):
        self.name = buffer  # "sbuf" / "psum": the memory, as a buffer= string would name it
        self.kind = kind
        self.fields = fields

    def __repr__(self):
        if self.kind == "address":
            return f"address=({self.fields['partition']}, {self.fields['byte']})"
        args = ", ".join(f"{k}={v!r}" for k, v in self.fields.items() if not callable(v))
        name = {"mod": "mod_alloc", "func": "alloc", "auto": "auto_alloc"}[self.kind]
        return f"nki.compiler.{self.name}.{name}({args})"


def _tuple(x, what):
    if x is None:
        return ()
    if isinstance(x, int):
        return (x,)
    try:
        return tuple(int(v) for v in x)
    except (TypeError, ValueError):
        raise TypeError(f"{what} takes a tuple of integers, got {x!r}")


class _Memory:
    """nki.compiler.sbuf / nki.compiler.psum: as a buffer= value the memory itself (automatic allocation), and the
    namespace of its allocators."""

    def __init__(self, buffer):
        self.name = buffer

    def auto_alloc(self):
        return Placement(self.name, "auto")

    def alloc(self, func):
        if not callable(func):
            raise TypeError(f"nki.compiler.{self.name}.alloc takes a function of (block index, partitions, bytes)")
        return Placement(self.name, "func", func=func)

    def mod_alloc(self, *, base_addr=0, base_partition=0, num_par_tiles=(), num_free_tiles=(), base_bank=None,
                  num_bank_tiles=()):
        what = f"nki.compiler.{self.name}.mod_alloc"
        if self.name == "psum":
            if base_bank is None:
                raise TypeError(f"{what} needs base_bank=")
            return Placement("psum", "mod", base_bank=int(base_bank), base_addr=int(base_addr),
                             base_partition=int(base_partition), num_bank_tiles=_tuple(num_bank_tiles, what),
                             num_par_tiles=_tuple(num_par_tiles, what), num_free_tiles=_tuple(num_free_tiles, what))
        if base_bank is not None or num_bank_tiles:
            raise TypeError(f"{what}: base_bank / num_bank_tiles are PSUM's (nki.compiler.psum.mod_alloc)")
        return Placement("sbuf", "mod", base_addr=int(base_addr), base_partition=int(base_partition),
                         num_par_tiles=_tuple(num_par_tiles, what), num_free_tiles=_tuple(num_free_tiles, what))

    def __repr__(self):
        return f"nki.compiler.{self.name}"


sbuf = _Memory("sbuf")
psum = _Memory("psum")


def allocation_scope(fn=None, **kw):
    """A scope for the allocator (`with nki.compiler.allocation_scope():`): neuronsim's allocator places tiles by
    liveness over the whole kernel."""
    return no_reorder() if fn is None else fn


def multi_buffer(factor=2):
    """A buffering hint to the compiler's allocator; neuronsim's allocator chooses each loop's buffers by the
    lowering library's rule (docs/nki-lowering.md 2)."""
    return lambda f: f


_M = "nki.compiler"
for _name in ("skip_middle_end_transformations", "no_reorder", "enable_stack_allocator", "force_auto_alloc",
              "allocation_scope", "multi_buffer", "sbuf", "psum"):
    registry.value(_M, _name, globals()[_name])
registry.value("nki.language", "no_reorder", no_reorder)  # the current API has it in nki.language
for _mem in ("sbuf", "psum"):
    for _name in ("alloc", "mod_alloc", "auto_alloc"):
        registry.value(f"{_M}.{_mem}", _name, getattr(globals()[_mem], _name))
