"""The NKI front end (python/neuronsim/nki) in layers (DESIGN.md 8; docs/nki-lowering.md): every module imports only
modules of its own layer or below -- module-level and function-level imports alike -- and no two modules import each
other, directly or round a circle. The API registry holds every public nki.language / nki.isa / nki.collectives
function, under its module."""
import ast
import inspect

import pytest

import neuronsim.nki.collectives as collectives
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl
from conftest import ROOT
from neuronsim.nki import registry

PACKAGE = ROOT / "python" / "neuronsim" / "nki"

# Bottom to top. A module may import its own layer and those before it.
LAYERS = [
    ("base", ["errors", "dtypes", "registry"]),  # errors in the kernel's terms, dtype names, the API registry
    ("symbolic", ["symbolic"]),  # index expressions (Idx, Pred, arange, mgrid, ds), shape markers
    ("trace", ["clips", "loop_plan", "tracer", "trace_loops", "dynamic", "shards"]),  # the traced program: Trace,
    # Storage, View, Loop, Op; the loop iterators; masks' clips, loop plans; registers, dynamic loops; the shards' parts
    ("api", ["isa_constants", "nl_mask", "nl_common", "nl_views", "nl_create", "nl_loops", "nl_dma", "nl_math",
             "nl_reduce", "nl_matmul", "nl_assign", "nl_values", "nl_constants", "nl_norm", "nl_random", "refusals",
             "nl_atomic", "nl_indirect", "nl_collective",
             "language", "isa_registers", "isa", "isa_multicore", "isa_legacy", "isa_common", "isa_mx",
             "isa_accum", "isa_select", "isa_move", "isa_dma", "isa_random", "collectives", "compiler", "typing",
             "checked"]),  # the nl / nisa / ... definitions, the names refused and tested
    ("emit", ["hoist", "engine_choice", "bcast_pe", "alloc_scan", "alloc_ops", "alloc_explicit", "alloc_nest",
              "budgets", "allocate", "emit_bir", "emit_dynamic"]),  # kernel to BIR: the trace through the builder,
    # SBUF / PSUM placed by the allocator
    ("user", ["api", "cli", "install", "legacy", "coverage", "__init__"]),  # jit, simulate...; `neuronsim nki`;
    # the legacy package view; the coverage table
]
LAYER_OF = {m: (i, name) for i, (name, mods) in enumerate(LAYERS) for m in mods}


def nki_imports(path):
    """(line, imported nki module) for every import statement of the file, at any depth (a function's too)."""
    package = ["neuronsim", "nki"]  # every module's package, __init__'s too
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                base = base + node.module.split(".") if node.module else base
            else:
                base = node.module.split(".")
            # `from . import x` names a module x; `from .m import x` names module m.
            names = [".".join(base + [a.name]) for a in node.names] if not node.module else [".".join(base)]
        else:
            continue
        for n in names:
            parts = n.split(".")
            if parts[:2] == ["neuronsim", "nki"] and len(parts) > 2:
                out.append((node.lineno, parts[2]))
    return out


def test_every_module_has_a_layer():
    modules = sorted(p.stem for p in PACKAGE.glob("*.py"))
    missing = [m for m in modules if m not in LAYER_OF]
    assert not missing, f"modules of python/neuronsim/nki without a layer in LAYERS: {missing}"
    gone = [m for m in LAYER_OF if m not in modules]
    assert not gone, f"LAYERS names modules that are not there: {gone}"


def test_no_module_imports_a_layer_above_its_own():
    wrong = []
    for path in sorted(PACKAGE.glob("*.py")):
        level, name = LAYER_OF[path.stem]
        for line, target in nki_imports(path):
            if target not in LAYER_OF:
                continue  # not a module (checked by test_every_module_has_a_layer)
            t_level, t_name = LAYER_OF[target]
            if t_level > level:
                wrong.append(f"{path.name}:{line} ({name}) imports {target} ({t_name})")
    assert not wrong, "imports against the layers:\n  " + "\n  ".join(wrong)


def test_no_import_circle():
    graph = {p.stem: {t for _, t in nki_imports(p) if t in LAYER_OF and t != p.stem} for p in PACKAGE.glob("*.py")}
    state = {}  # module -> "open" while on the path, "done" after

    def visit(m, path):
        state[m] = "open"
        for t in sorted(graph[m]):
            if state.get(t) == "open":
                circle = path[path.index(t):] + [t]
                pytest.fail("an import circle: " + " -> ".join(circle))
            if t not in state:
                visit(t, path + [t])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


def test_the_checker_sees_what_it_must(tmp):
    """nki_imports reads every form: relative (module and names), absolute, and imports inside functions."""
    f = tmp / "probe.py"
    f.write_text("from . import dtypes, registry\nfrom .tracer import View\nimport neuronsim.nki.api\n"
                 "from .. import _core\n\n\ndef g():\n    from . import language\n    from .nl_math import add\n")
    assert nki_imports(f) == [(1, "dtypes"), (1, "registry"), (2, "tracer"), (3, "api"), (8, "language"),
                              (9, "nl_math")]


def public_functions(module):
    """The functions (not classes) a kernel reaches as module.NAME that the API layer defines."""
    return {n: f for n, f in vars(module).items() if not n.startswith("_") and inspect.isfunction(f) and
            LAYER_OF.get(f.__module__.rpartition(".")[2], (0, ""))[1] == "api"}


@pytest.mark.parametrize("module, public", [(nl, "nki.language"), (nisa, "nki.isa"),
                                            (collectives, "nki.collectives")])
def test_the_registry_holds_every_public_function(module, public):
    entries = {e.name: e for e in registry.entries(public)}
    assert all(e.module == public for e in entries.values())
    missing = sorted(set(public_functions(module)) - set(entries))
    assert not missing, f"{public} functions not registered (no @_api): {missing}"
    for name, e in entries.items():
        if "." in name:
            continue  # a member of a class (tile_size.pmax), reached through its class
        assert getattr(module, name) is e.fn, f"{public}.{name} is not the registered object"
        assert e.status in ("lowered", "value", "refused")
        assert (e.status == "refused") == (e.reason is not None)


def test_registry_entries_by_name():
    names = {(e.module, e.name) for e in registry.entries()}
    # a few hand-picked ones, one per topic module and public module
    for want in [("nki.language", "ndarray"), ("nki.language", "affine_range"), ("nki.language", "arange"),
                 ("nki.language", "load"), ("nki.language", "add"), ("nki.language", "bitwise_not"),
                 ("nki.language", "sum"), ("nki.language", "matmul"), ("nki.isa", "nc_matmul"),
                 ("nki.language", "nc"), ("nki.isa", "reciprocal"), ("nki.collectives", "all_reduce"),
                 ("nki.collectives", "ReplicaGroup")]:
        assert want in names
    assert registry.function("nki.language", "add") is nl.add
    assert registry.function("nki.isa", "reciprocal") is nisa.reciprocal
    assert registry.function("nki.language", "reciprocal") is nl.reciprocal is not nisa.reciprocal
    with pytest.raises(KeyError, match="nki.language.no_such_call is not registered"):
        registry.function("nki.language", "no_such_call")
    with pytest.raises(RuntimeError, match="nki.language.add is defined twice"):
        registry.register("nki.language", "add", lambda x, y: None)
