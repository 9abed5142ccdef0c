"""Which kernels and architectures a sweep runs: its arguments (paths, folders of kernels, LABEL=PATH; arch names,
files and settings) -> KernelSpecs and checked arch names (docs/sweeps.md; `neuronsim sweep --help` states the folder
rule)."""
import os
import pathlib

from . import _core
from ._errors import error as _error
from .kernel_args import names_nki

ARCHS = ("trn1", "trn2", "trn3")


class KernelSpec:
    """One kernel of a sweep: how rows name it, where it is, its group and variant (for ranking)."""

    def __init__(self, name, path, group, variant, nki_target=None):
        self.name, self.path, self.group, self.variant = name, path, group, variant
        # An NKI entry: FILE.py::FUNCTION as given (sweep_nki.py); its file's absolute path and its own arch are
        # set when the sweep checks it.
        self.nki_target, self.nki_path, self.own_arch = nki_target, None, None

    def __repr__(self):
        return f"KernelSpec({self.name!r}, {self.path!r}, group={self.group!r}, variant={self.variant!r})"


def _bir_entries(p):
    """The *.bir.json entries of folder p, whatever they are (a FIFO or a folder of that name counts: it is a kernel
    that cannot be read, and becomes an error row, never a reason to read the folder another way)."""
    return sorted(c for c in p.iterdir() if c.name.endswith(".bir.json") and len(c.name) > len(".bir.json"))


def _folder_kind(p):
    """What folder p is, by the rule --help states: "bundle" (it holds a manifest.json or cores.json), "workload"
    (exactly one *.bir.json entry and no kernel subfolder), "kernels" (a folder of kernels: no *.bir.json entry, or
    several). One *.bir.json entry beside kernel subfolders is ambiguous: InvalidInput naming the folder."""
    if (p / "manifest.json").exists() or (p / "cores.json").exists():
        return "bundle"
    birs = _bir_entries(p)
    if len(birs) != 1:
        return "kernels"
    subs = [c.name for c in sorted(p.iterdir()) if c.is_dir() and not c.name.endswith(".bir.json") and
            _folder_kind_quiet(c) in ("bundle", "workload")]
    if subs:
        raise _error("InvalidInput", f"{p} is ambiguous: it holds one kernel file ({birs[0].name}) and kernel folders "
                                     f"({', '.join(subs)}); a folder is one workload or a folder of kernels, not both "
                                     "(name the kernels one by one, or move the file)")
    return "workload"


def _folder_kind_quiet(p):
    try:
        return _folder_kind(p)
    except _core.Error:
        return "ambiguous"
    except OSError:
        return "unreadable"


def _is_kernel(p):
    """A kernel on its own: anything that is not a folder (a BIR JSON file; a FIFO or device gives an error row when
    it runs), a workload folder or a bundle-stream folder."""
    return not p.is_dir() or _folder_kind(p) in ("bundle", "workload")


def _short_name(p):
    name = p.name
    for suffix in (".bir.json", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _split_variant(name):
    group, _, variant = name.partition("@")
    return (group, variant) if variant and group else (None, None)


def kernels_of(kernels):
    """The KernelSpecs a sweep runs, in order. `kernels`: one argument or a list of them, each a kernel path, a folder
    of kernels (its *.bir.json files and kernel folders, sorted by name), or LABEL=PATH; or a dict {label: path}.
    Raises InvalidInput for a path that is not there or a folder without kernels, UsageError for a name given
    twice."""
    if isinstance(kernels, (str, os.PathLike)):
        kernels = [kernels]
    if isinstance(kernels, dict):
        for label, path in kernels.items():
            if not isinstance(label, str) or not isinstance(path, (str, os.PathLike)):
                raise TypeError(f"kernels as a dict maps labels (str) to paths (str or os.PathLike), got "
                                f"{type(label).__name__} -> {type(path).__name__}")
        pairs = [(label, os.fspath(path)) for label, path in kernels.items()]
    elif isinstance(kernels, (list, tuple)):
        pairs = []
        for arg in kernels:
            if not isinstance(arg, (str, os.PathLike)):
                raise TypeError(f"kernels holds paths (str or os.PathLike) or LABEL=PATH, got {type(arg).__name__} "
                                f"{arg!r}")
            arg = os.fspath(arg)
            label, eq, path = arg.partition("=")
            if eq and label and "/" not in label and not os.path.exists(arg):
                pairs.append((label, path))
            else:
                pairs.append((None, arg))
    else:
        raise TypeError(f"kernels must be a path, a list of paths (or LABEL=PATH) or a dict {{label: path}}, got "
                        f"{type(kernels).__name__}")
    out = []
    for label, arg in pairs:
        if arg == "":
            # An empty path is not "the current folder": that would run whatever happens to be there.
            raise _error("UsageError", f"kernel {label + '=' if label is not None else ''}'' has an empty path")
        if names_nki(arg):
            # An NKI kernel file's function: group FUNCTION, variant the file's name, so that a.py::k and b.py::k
            # are variants of k (as `neuronsim compare` takes them); LABEL=FILE.py::FUNCTION as any label.
            file, _, func = arg.rpartition("::")
            if not os.path.isfile(file):
                raise _error("InvalidInput", f"no such kernel file: {file} (of {arg})")
            if label is not None:
                group, variant = _split_variant(label)
                group = group or label
            else:
                group, variant = func, os.path.splitext(os.path.basename(file))[0]
            out.append(KernelSpec(label if label is not None else arg, os.path.abspath(file) + "::" + func, group,
                                  variant, nki_target=arg))
            continue
        p = pathlib.Path(arg)
        if not p.exists() and not p.is_symlink():
            raise _error("InvalidInput", f"no such kernel or folder: {arg}")
        if label is not None or _is_kernel(p):
            name = label if label is not None else arg
            own = label if label is not None else _short_name(p)
            group, variant = _split_variant(own)
            out.append(KernelSpec(name, str(p.resolve()), group or own, variant))
            continue
        # A folder of kernels: each *.bir.json entry (whatever it is: one that is not a regular file becomes an error
        # row) and each subfolder that is a kernel.
        members = sorted(set(_bir_entries(p)) |
                         {c for c in p.iterdir() if c.is_dir() and not c.name.endswith(".bir.json") and
                          _folder_kind_quiet(c) in ("bundle", "workload", "ambiguous")})
        if not members:
            raise _error("InvalidInput", f"{arg} holds no kernel (a *.bir.json file, a workload folder with one, or "
                                         "a bundle folder with manifest.json)")
        folder = p.resolve().name
        for c in members:
            group, variant = _split_variant(_short_name(c))
            out.append(KernelSpec(os.path.join(arg, c.name), str(c.resolve()), group or folder,
                              variant or _short_name(c)))
    seen = set()
    for k in out:
        if k.name in seen:
            raise _error("UsageError", f"kernel {k.name} is named twice")
        seen.add(k.name)
    return out


def _split_archs(text):
    """"trn1,trn2+{a=1,b=2}" -> ["trn1", "trn2+{a=1,b=2}"]: commas inside braces belong to the settings."""
    out, depth, cur = [], 0, ""
    for c in text:
        depth += c == "{"
        depth -= c == "}"
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    return out + [cur]


def _sets_of(sets):
    """set= ({key: value}) or --set (["KEY=VALUE", ...]) as the list of "KEY=VALUE"."""
    if sets is None:
        return []
    if isinstance(sets, dict):
        return [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in sets.items()]
    if isinstance(sets, (list, tuple)) and all(isinstance(x, str) for x in sets):
        return list(sets)
    raise TypeError(f"set must be a dict {{parameter: value}} or None, got {type(sets).__name__}")


def _with_sets(a, sets):
    """An arch with `sets` over it, checked (refused naming the file, the key and the value) and named as runs
    name it ("trn2+{dma_latency_ns=425}")."""
    if sets:
        settings = ",".join(sets)
        a = a[:-1] + "," + settings + "}" if "+{" in a else a + "+{" + settings + "}"
    return _core.arch_params(a)["name"]


def archs_of(archs, sets=None):
    """("trn1", "trn2") or "trn1,trn2" -> the list, each checked, duplicates dropped. An arch may carry settings,
    "trn2+{dma_latency_ns=425}" (as --set); `sets` ({key: value} or ["KEY=VALUE", ...], `--set`) go over every arch.
    None: each kernel's own (its folder's run.json, else trn1), as `neuronsim run` without --arch; returns None
    then."""
    sets = _sets_of(sets)
    if sets:
        _with_sets("trn1", sets)  # refused now, whatever archs the kernels turn out to have
    if archs is None:
        return None
    if isinstance(archs, str):
        archs = _split_archs(archs)
    if not isinstance(archs, (list, tuple)):
        raise TypeError(f"archs must be a str (\"trn1,trn2\"), a list of them or None, got {type(archs).__name__}")
    out = []
    for a in archs:
        if not isinstance(a, (str, os.PathLike)):
            raise TypeError(f"archs holds architecture names or files (str), got {type(a).__name__} {a!r}")
        a = os.fspath(a)
        base, brace, rest = a.partition("+{")
        if "/" in base or base.endswith(".json"):
            base = os.path.abspath(base)  # the workers read it at the same absolute path, as the kernels
        elif base not in ARCHS:
            raise _error("UsageError", f"arch {a!r} is not one of {', '.join(ARCHS)} (or an architecture "
                                       f"FILE.json){_core.did_you_mean(base, list(ARCHS))}")
        a = _with_sets(base + brace + rest, sets)
        if a not in out:
            out.append(a)
    if not out:
        raise _error("UsageError", "no architecture given")
    return out
