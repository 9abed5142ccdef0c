"""nki.compiler: directives to the Neuron compiler's passes. They do not change what a kernel computes, and
neuronsim's lowering has no such passes: each is accepted and has no effect."""
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
    def __init__(self, buffer):
        self._buffer = buffer

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *a, **k: _Allocation(self._buffer, *a, **k)


sbuf = _Memory("sbuf")
psum = _Memory("psum")
