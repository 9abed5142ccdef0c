"""neuronsim.nki.install(): the NKI module names a kernel file imports, served by neuronsim.nki when no real package of
that name is importable (a machine with the Neuron SDK keeps its own)."""
import importlib.util
import sys
import types

# name -> the neuronsim module that stands in for it ("" for a bare package holding `nki`)
_NAMES = {
    "neuronxcc": "",
    "neuronxcc.nki": "neuronsim.nki.legacy",  # neuronsim.nki with the legacy .isa
    "neuronxcc.nki.language": "neuronsim.nki.language",
    "neuronxcc.nki.language.constants": "neuronsim.nki.nl_constants",
    "neuronxcc.nki.isa": "neuronsim.nki.isa_legacy",  # nki.isa's names with the legacy dge_mode
    "neuronxcc.nki.isa.constants": "neuronsim.nki.isa_constants",
    "neuronxcc.nki.typing": "neuronsim.nki.typing",
    "neuronxcc.nki.compiler": "neuronsim.nki.compiler",
    "neuronxcc.nki.collectives": "neuronsim.nki.collectives",
    "nki": "neuronsim.nki",
    "nki.language": "neuronsim.nki.language",
    "nki.language.constants": "neuronsim.nki.nl_constants",
    "nki.isa": "neuronsim.nki.isa",
    "nki.isa.constants": "neuronsim.nki.isa_constants",
    "nki.typing": "neuronsim.nki.typing",
    "nki.compiler": "neuronsim.nki.compiler",
    "nki.collectives": "neuronsim.nki.collectives",
}


def _importable(name):
    """Whether a real package of that name is importable: a module or a package with its __init__.py. A folder
    without one (a namespace package: a folder of kernels named nki/ on sys.path) is no NKI package."""
    if name in sys.modules:
        return getattr(sys.modules[name], "__neuronsim__", False) is False and \
            getattr(sys.modules[name], "__file__", None) is not None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin not in (None, "namespace")


def install(verbose=False):
    """Registers neuronxcc, neuronxcc.nki, neuronxcc.nki.language / .isa (and their .constants) / .typing /
    .compiler / .collectives, and the same names under nki, as neuronsim.nki's modules, each only when no real
    package of that name is importable. Returns {name: "neuronsim" | "real"}, what it did for each; verbose=True also prints it (stderr)."""
    import importlib
    done = {}
    for name, target in _NAMES.items():
        root = name.split(".")[0]
        # A root package decides for its names: a real neuronxcc (or nki) keeps all of them; once the root is
        # ours, its submodules resolve inside neuronsim.nki and are ours too.
        if done.get(root) == "real" or (name == root and _importable(name)):
            done[name] = "real"
            continue
        if target:
            mod = importlib.import_module(target)
        else:
            mod = types.ModuleType(name, "neuronsim's stand-in for the Neuron compiler package (neuronsim.nki)")
            mod.__path__ = []
            mod.__neuronsim__ = True
        sys.modules[name] = mod
        parent, _, leaf = name.rpartition(".")
        if parent and parent in sys.modules:
            setattr(sys.modules[parent], leaf, mod)
        done[name] = "neuronsim"
    if verbose:
        ours = [n for n, w in done.items() if w == "neuronsim"]
        real = [n for n, w in done.items() if w == "real"]
        if ours:
            sys.stderr.write("neuronsim.nki: serving " + ", ".join(ours) + "\n")
        if real:
            sys.stderr.write("neuronsim.nki: a real package is importable for " + ", ".join(real) +
                             " (left as it is)\n")
    return done
