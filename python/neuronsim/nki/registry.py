"""The NKI API registry: one entry per public name of nki.language, nki.isa and nki.collectives -- the name, its
public module, the Python function a kernel calls, and its support status -- made where the function is defined (the
`_api` decorator of the API modules), as JAX declares each primitive once (DESIGN.md 8).

The traced program (tracer.py) calls the API through it without importing the API modules: a View's operators look
up nki.language's functions here (t + u is nl.add), and the two tile statements that are no NKI call, t[...] = v and
t += v, are registered by name (statement()). The API coverage table iterates entries().

It imports nothing of the front end: it sits at the bottom with symbolic.py (tests/python/test_nki_layers.py).
"""


class Entry:
    """One public name: module ("nki.language"), name ("add"), fn (what a kernel calls) and status ("lowered": the
    front end lowers the call; the coverage table may give others)."""
    __slots__ = ("module", "name", "fn", "status")

    def __init__(self, module, name, fn, status):
        self.module, self.name, self.fn, self.status = module, name, fn, status

    def __repr__(self):
        return f"Entry({self.module}.{self.name}, {self.status})"


_ENTRIES = {}  # (module, name) -> Entry, in the order registered
_STATEMENTS = {}  # "assign" (t[...] = v), "accumulate" (t += v) -> the function that records it


def register(module, name, fn, status="lowered"):
    """Registers fn as module.name and returns fn. A name registered twice with another function is a mistake of
    ours (two definitions of one NKI call): RuntimeError."""
    old = _ENTRIES.get((module, name))
    if old is not None and old.fn is not fn:
        raise RuntimeError(f"{module}.{name} is defined twice ({old.fn.__module__} and {fn.__module__})")
    _ENTRIES[(module, name)] = Entry(module, name, fn, status)
    return fn


def api(module, status="lowered"):
    """The decorator that registers an API module's public functions under their own names:
    `_api = registry.api("nki.language")`, then `@_api def add(x, y, ...)`. status="refused" marks a name whose
    function raises Unsupported with the reason (the hardware behaviour is not documented enough to lower it)."""
    def decorate(fn):
        return register(module, fn.__name__, fn, status)
    return decorate


def function(module, name):
    """The function registered as module.name (KeyError naming it when none is)."""
    entry = _ENTRIES.get((module, name))
    if entry is None:
        raise KeyError(f"{module}.{name} is not registered (is its API module imported?)")
    return entry.fn


def entries(module=None):
    """Every registered Entry (module's only, when given), in the order registered."""
    return [e for e in _ENTRIES.values() if module is None or e.module == module]


def define_statement(name, fn):
    """Registers what the tracer's tile statement `name` ("assign", "accumulate") runs; returns fn."""
    _STATEMENTS[name] = fn
    return fn


def statement(name):
    return _STATEMENTS[name]
