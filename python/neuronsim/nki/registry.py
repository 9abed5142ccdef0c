"""The NKI API registry: one entry per public name of nki.language, nki.isa, nki.collectives, nki.compiler,
nki.typing and nki itself -- the name, its public module, the Python object a kernel reaches by that name, its support
status and the test that checks it -- made where the object is defined (the `_api` decorator of the API modules,
value() for dtypes, enums and constants), as JAX declares each primitive once (DESIGN.md 8).

Statuses:
- "lowered": a call the front end lowers to BIR instructions;
- "value": a dtype, enum, constant or class that behaves as NKI's (storable, hashable, comparable);
- "refused": a documented name the front end does not serve yet. It is still an ordinary value (a kernel may store
  it in a table at import time); calling it raises Unsupported naming it and `reason`. A definition registered later
  under the same name replaces a refusal (the helper that lowers it flips it by defining it).
checked_by() names the test that checks an entry against numpy or the documented example (the coverage table,
docs/nki-api.md, prints it; tests/python/test_nki_api_coverage.py holds the two together).

The traced program (tracer.py) calls the API through it without importing the API modules: a View's operators look
up nki.language's functions here (t + u is nl.add), and the two tile statements that are no NKI call, t[...] = v and
t += v, are registered by name (statement()). It imports only errors, of its own layer (tests/python/
test_nki_layers.py).
"""
import functools
import types

from .errors import UnknownName, Unsupported, source_location

# The spelling of a module in messages, as kernels import it.
SHORT = {"nki.language": "nl", "nki.isa": "nisa"}


class Entry:
    """One public name: module ("nki.language"), name ("add"; "tile_size.pmax" for a member), fn (what a kernel
    reaches), status ("lowered", "value", "refused"), test ("test_file.py::test_name", who checks it) and reason (why
    it is refused)."""
    __slots__ = ("module", "name", "fn", "status", "test", "reason", "note")

    def __init__(self, module, name, fn, status, reason=None):
        self.module, self.name, self.fn, self.status = module, name, fn, status
        self.test, self.reason, self.note = None, reason, None

    @property
    def supported(self):
        return self.status in ("lowered", "value")

    def __repr__(self):
        return f"Entry({self.module}.{self.name}, {self.status})"


_ENTRIES = {}  # (module, name) -> Entry, in the order registered
_STATEMENTS = {}  # "assign" (t[...] = v), "accumulate" (t += v) -> the function that records it


def register(module, name, fn, status="lowered"):
    """Registers fn as module.name and returns fn. A name registered twice with another object is a mistake of ours
    (two definitions of one NKI name): RuntimeError -- unless the first was a refusal, which the definition
    replaces."""
    old = _ENTRIES.get((module, name))
    if old is not None and old.fn is not fn and old.status != "refused":
        raise RuntimeError(f"{module}.{name} is defined twice ({_origin(old.fn)} and {_origin(fn)})")
    if old is not None and old.fn is fn:
        return fn
    _ENTRIES[(module, name)] = Entry(module, name, fn, status)
    return fn


def _origin(obj):
    return getattr(obj, "__module__", None) or type(obj).__module__


def api(module):
    """The decorator that registers an API module's public functions under their own names:
    `_api = registry.api("nki.language")`, then `@_api def add(x, y, ...)`. A function is registered as a call
    through the call hook (define_call_hook: the state one NKI call's instructions share, its mask=); a class as it
    is."""
    def decorate(fn):
        if not isinstance(fn, types.FunctionType):
            return register(module, fn.__name__, fn)

        @functools.wraps(fn)
        def call(*args, **kw):
            return fn(*args, **kw) if _CALL_HOOK[0] is None else _CALL_HOOK[0](fn, args, kw)
        return register(module, fn.__name__, call)
    return decorate


_CALL_HOOK = [None]


def define_call_hook(hook):
    """hook(fn, args, kwargs) runs every registered API function (nl_common.api_call)."""
    _CALL_HOOK[0] = hook
    return hook


def value(module, name, obj):
    """Registers obj, a dtype, enum, constant or class NKI documents, as module.name; returns obj."""
    return register(module, name, obj, "value")


def refuse(module, name, reason):
    """module.name as a refused value: a function that raises Unsupported naming it and the reason when called. A name
    already defined keeps its definition (returned)."""
    old = _ENTRIES.get((module, name))
    if old is not None:
        return old.fn
    shown = f"{SHORT.get(module, module)}.{name}"

    def refused(*args, **kwargs):
        raise Unsupported(f"{shown} is not lowered by neuronsim's NKI front end: {reason} (docs/nki-api.md)",
                          source_location())
    refused.__name__ = refused.__qualname__ = name
    refused.__module__ = module
    refused.__doc__ = f"{shown}: refused -- {reason}"
    _ENTRIES[(module, name)] = Entry(module, name, refused, "refused", reason)
    return refused


def refuse_all(module, reasons):
    """refuse() for each name of {name: reason}."""
    for name, reason in reasons.items():
        refuse(module, name, reason)


def checked_by(test, module, names, note=None):
    """Records that `test` ("test_file.py::test_name") checks each of names (a list, or one string of names
    separated by spaces) of module against numpy or NKI's documented example; note: what a reader of the coverage
    table should know (an option that changes nothing here)."""
    for name in names.split() if isinstance(names, str) else names:
        entry = _ENTRIES.get((module, name))
        if entry is None:
            raise KeyError(f"checked_by: {module}.{name} is not registered")
        if entry.status == "refused":
            raise RuntimeError(f"checked_by: {module}.{name} is refused; a test cannot check it")
        entry.test, entry.note = test, note


def function(module, name):
    """The object registered as module.name (KeyError naming it when none is)."""
    entry = _ENTRIES.get((module, name))
    if entry is None:
        raise KeyError(f"{module}.{name} is not registered (is its API module imported?)")
    return entry.fn


def lookup(module, name):
    """The Entry of module.name, or None."""
    return _ENTRIES.get((module, name))


def entries(module=None):
    """Every registered Entry (module's only, when given), in the order registered."""
    return [e for e in _ENTRIES.values() if module is None or e.module == module]


def module_getattr(module, name):
    """What a public module's __getattr__ gives for a name it does not define: the registered object (a refusal of a
    documented name is an ordinary value; Unsupported comes when it is called), else Unsupported naming it."""
    if name.startswith("__"):
        raise AttributeError(name)
    entry = _ENTRIES.get((module, name))
    if entry is not None:
        return entry.fn
    raise UnknownName(f"{SHORT.get(module, module)}.{name} is not a name of the NKI API reference (docs/nki-api.md "
                      "lists every name and what neuronsim does with it)", source_location())


def define_statement(name, fn):
    """Registers what the tracer's tile statement `name` ("assign", "accumulate") runs; returns fn."""
    _STATEMENTS[name] = fn
    return fn


def statement(name):
    return _STATEMENTS[name]
