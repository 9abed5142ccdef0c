"""The NKI API coverage table (docs/nki-api.md), generated from the registry (registry.py) and the list of the
reference's names (tests/python/data/nki_api_reference.json), so that the table and the code cannot disagree:

    python3 -m neuronsim.nki.coverage tests/python/data/nki_api_reference.json > docs/nki-api.md

Each name of the reference is resolved to its registry entry: module.name itself, or for a member "Class.member"
the entry of Class when the member is there (an explicit entry "Class.member" wins, e.g. a refused one). A row says
supported (and the test that checks it) or refused (and why). tests/python/test_nki_api_coverage.py fails when a
name has no entry, when docs/nki-api.md differs from table(), and when a supported name has no test or fails when
used."""
import inspect
import json
import sys

from . import collectives, compiler, isa, language, registry, typing  # noqa: F401 - every API module registers
from . import checked  # noqa: F401 - the tests that check the names (after every module has registered)
# (the package, imported first, registers the nki module's own names: jit, simulate...)

PUBLIC = {"nki": "nki", "nki.language": "nl", "nki.isa": "nisa", "nki.collectives": "nki.collectives",
          "nki.compiler": "nki.compiler", "nki.compiler.sbuf": "nki.compiler.sbuf",
          "nki.compiler.psum": "nki.compiler.psum", "nki.typing": "nt", "nki.kernels": "nki.kernels"}


def load(path):
    with open(path) as f:
        return json.load(f)["names"]


def resolve(module, name):
    """The Entry that serves module.name, or None: the name's own entry, else (for "Class.member") the entry of Class
    when it is supported and has the member."""
    e = registry.lookup(module, name)
    if e is not None or "." not in name:
        return e
    owner, _, member = name.rpartition(".")
    o = resolve(module, owner)
    if o is None or not o.supported:
        return None
    try:
        inspect.getattr_static(o.fn, member)
    except AttributeError:
        return None
    return o


def rows(reference):
    """[(module, name, kind, generations, entry or None)], one per (module, name), in the reference's order."""
    merged = {}
    for r in reference:
        key = (r["module"], r["name"])
        if key not in merged:
            merged[key] = [r["module"], r["name"], r["kind"], []]
        merged[key][3].append(r["generation"])
    return [(m, n, k, g, resolve(m, n)) for m, n, k, g in merged.values()]


def _cell(e):
    if e is None:
        return "MISSING", "no registry entry"
    if e.status == "refused":
        return "refused", e.reason
    return "supported", (e.test or "NO TEST NAMED") + (f"; {e.note}" if e.note else "")


def table(reference):
    """docs/nki-api.md, the text."""
    out = ["# The NKI API, name by name", "",
           "Every public name of the NKI API reference, for both generations neuronsim's front end serves: the current",
           "`nki` and the legacy `neuronxcc.nki` (the list: tests/python/data/nki_api_reference.json, from the AWS",
           "Neuron SDK documentation, SDK 2.20-2.26 and 2.27-2.32). *supported*: it works as NKI documents it, and the",
           "named test checks it (against numpy, or the documented value / example); *refused*: using it raises",
           "`neuronsim.nki.Unsupported` naming it and the reason given here. A refused name is still a value: a kernel",
           "may import it, store it in a table and compare it; only calling it (or reading a refused attribute)",
           "raises. Methods and attributes of a class are listed as `Class.member`, options of `nki.jit` as",
           "`jit:option`. Generated from the registry (python/neuronsim/nki/registry.py) by `python3 -m",
           "neuronsim.nki.coverage tests/python/data/nki_api_reference.json > docs/nki-api.md`; do not edit by hand",
           "(tests/python/test_nki_api_coverage.py checks it is current).", ""]
    all_rows = rows(reference)
    modules = []
    for m, *_ in all_rows:
        if m not in modules:
            modules.append(m)
    out += ["| module | names | supported | refused |", "|---|---|---|---|"]
    for m in modules:
        mr = [r for r in all_rows if r[0] == m]
        sup = sum(1 for r in mr if r[4] is not None and r[4].supported)
        ref = sum(1 for r in mr if r[4] is not None and not r[4].supported)
        out.append(f"| {m} | {len(mr)} | {sup} | {ref} |")
    out.append("")
    for m in modules:
        out += [f"## {m}" + (f" ({PUBLIC[m]})" if PUBLIC.get(m, m) != m else ""), "",
                "| name | kind | current | legacy | status | checked by / reason |", "|---|---|---|---|---|---|"]
        for mod, name, kind, gens, e in sorted((r for r in all_rows if r[0] == m), key=lambda r: r[1].lower()):
            status, why = _cell(e)
            why = why.replace("|", "\\|")
            cur = "yes" if "current" in gens else ""
            leg = "yes" if "legacy" in gens else ""
            out.append(f"| `{name}` | {kind} | {cur} | {leg} | {status} | {why} |")
        out.append("")
    known = {(r[0], r[1]) for r in all_rows}
    extra = [e for e in registry.entries() if (e.module, e.name) not in known and e.module in PUBLIC]
    if extra:
        out += ["## Served beyond the reference", "",
                "Names neuronsim's front end serves that the reference pages do not list (submodules and names public",
                "kernels use).", "", "| module | name | status | checked by / reason |", "|---|---|---|---|"]
        for e in sorted(extra, key=lambda e: (e.module, e.name.lower())):
            status, why = _cell(e)
            out.append(f"| {e.module} | `{e.name}` | {status} | {why.replace('|', chr(92) + '|')} |")
        out.append("")
    return "\n".join(out)


def main(argv):
    if len(argv) != 1:
        sys.stderr.write("usage: python3 -m neuronsim.nki.coverage REFERENCE.json > docs/nki-api.md\n")
        return 2
    sys.stdout.write(table(load(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
