"""nki.compiler: directives to the Neuron compiler's passes. They do not change what a kernel computes, and
neuronsim's lowering has no such passes: each is accepted and has no effect."""
from . import registry

__neuronsim__ = True


def skip_middle_end_transformations(fn):
    return fn


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
    return fn if fn is not None else (lambda f: f)


class _Allocation:
    """An explicit placement (nki.compiler.sbuf.mod_alloc(...), psum.mod_alloc(...)), given as a tile's buffer=: the
    tile goes to that memory, placed by neuronsim's own allocation (docs/nki-lowering.md 2), with a warning."""

    def __init__(self, buffer, *args, **kw):
        self.name = buffer
        self.args, self.kw = args, kw

    def __call__(self, *args, **kw):
        return self


class _Memory:
    """nki.compiler.sbuf / .psum: alloc, mod_alloc and auto_alloc each give an _Allocation (any other name too)."""

    def __init__(self, buffer):
        self._buffer = buffer
        self.alloc = self.mod_alloc = self.auto_alloc = self._allocation

    def _allocation(self, *a, **k):
        return _Allocation(self._buffer, *a, **k)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._allocation


sbuf = _Memory("sbuf")
psum = _Memory("psum")


def allocation_scope(fn=None, **kw):
    """A scope for the allocator (`with nki.compiler.allocation_scope():`): neuronsim allocates on its own."""
    return no_reorder() if fn is None else fn


def multi_buffer(factor=2):
    """A buffering hint to the compiler's allocator; neuronsim allocates on its own."""
    return lambda f: f


_M = "nki.compiler"
for _name in ("skip_middle_end_transformations", "no_reorder", "enable_stack_allocator", "force_auto_alloc",
              "allocation_scope", "multi_buffer", "sbuf", "psum"):
    registry.value(_M, _name, globals()[_name])
registry.value("nki.language", "no_reorder", no_reorder)  # the current API has it in nki.language
for _mem in ("sbuf", "psum"):
    for _name in ("alloc", "mod_alloc", "auto_alloc"):
        registry.value(f"{_M}.{_mem}", _name, getattr(globals()[_mem], _name))
