"""The NKI API coverage table (docs/nki-api.md) against the reference's names (tests/python/data/
nki_api_reference.json, both generations) and the registry: every name has an entry, supported or refused with a
reason; the committed table is the one the registry generates; a supported name names a test that exists and uses it;
a refused name is a value that raises Unsupported, naming itself, only when called."""
import ast
import functools
import json
import pathlib
import re

import pytest

import neuronsim.nki as nki
from conftest import ROOT
from neuronsim.nki import coverage, registry

HERE = pathlib.Path(__file__).resolve().parent
REFERENCE = HERE / "data" / "nki_api_reference.json"
NAMES = json.loads(REFERENCE.read_text())["names"]
ROWS = coverage.rows(NAMES)


def test_the_reference_list_holds_both_generations_and_only_facts():
    gens = {(r["generation"], r["module"]) for r in NAMES}
    for module in ("nki", "nki.language", "nki.isa"):
        assert ("current", module) in gens and ("legacy", module) in gens
    assert all(set(r) <= {"generation", "module", "name", "kind", "members", "value", "latest"} for r in NAMES)
    assert len(NAMES) > 450


def test_every_reference_name_has_an_entry_supported_with_a_test_or_refused_with_a_reason():
    missing = [f"{m}.{n}" for m, n, _, _, e in ROWS if e is None]
    assert not missing, f"reference names without a registry entry: {missing}"
    untested = [f"{m}.{n}" for m, n, _, _, e in ROWS if e.supported and not e.test]
    assert not untested, f"supported names no test checks (add them to python/neuronsim/nki/checked.py): {untested}"
    unexplained = [f"{m}.{n}" for m, n, _, _, e in ROWS if not e.supported and not e.reason]
    assert not unexplained, f"refused names without a reason: {unexplained}"


def test_the_committed_table_is_the_generated_one():
    want = coverage.table(NAMES)
    got = (ROOT / "docs" / "nki-api.md").read_text()
    assert got == want, ("docs/nki-api.md is not what the registry generates: run `PYTHONPATH=build/python python3 -m "
                         "neuronsim.nki.coverage tests/python/data/nki_api_reference.json > docs/nki-api.md`")


@functools.lru_cache(maxsize=None)
def _functions(path):
    """The file's text and {function name: its source with its decorators}."""
    src = path.read_text()
    return src, {n.name: "".join(ast.get_source_segment(src, d) + "\n" for d in n.decorator_list) +
                 ast.get_source_segment(src, n) for n in ast.parse(src).body if isinstance(n, ast.FunctionDef)}


TESTED = sorted({(e.test, m, n) for m, n, _, _, e in ROWS if e is not None and e.supported and e.test} |
                {(e.test, e.module, e.name) for e in registry.entries() if e.supported and e.test})


@pytest.mark.parametrize("test, module, name", TESTED, ids=[f"{m}.{n}" for _, m, n in TESTED])
def test_the_named_test_exists_and_uses_the_name(test, module, name):
    """The test exists in its file; its source (or the file's tables it is parametrized over) uses the name. Running
    the suite runs that test: a supported name that stops working fails there."""
    file, _, func = test.partition("::")
    src, funcs = _functions(HERE / file)
    assert func in funcs, f"{test} (named for {module}.{name}) does not exist"
    word = name.split(":")[-1].split(".")[-1].split("[")[0]
    body = funcs[func]
    uses = re.search(rf"\b{re.escape(word)}\b", body) or (
        "parametrize" in body and re.search(rf"\b{re.escape(word)}\b", src))
    assert uses, f"{test} does not use {word} ({module}.{name})"


REFUSED = [e for e in registry.entries() if e.status == "refused" and callable(e.fn) and "." not in e.name and
           ":" not in e.name]


@pytest.mark.parametrize("entry", REFUSED, ids=[f"{e.module}.{e.name}" for e in REFUSED])
def test_a_refused_name_is_a_value_that_raises_only_when_called(entry):
    hash(entry.fn)
    assert {entry.fn: 1}[entry.fn] == 1
    with pytest.raises(nki.Unsupported, match=re.escape(entry.name) + " is not lowered"):
        entry.fn()


def test_documented_names_never_raise_on_access():
    nki.install()
    import importlib
    for m, n, kind, gens, e in ROWS:
        if "." in n or ":" in n or m in ("nki.kernels",):
            continue
        for g in gens:
            obj = importlib.import_module("nki" if g == "current" else "neuronxcc.nki")
            for part in m.split(".")[1:] + [n]:  # nki.compiler.psum.alloc: attributes from the package down
                obj = getattr(obj, part)  # never raises: a refused function raises only when called
