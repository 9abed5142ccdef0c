"""Sweeps: one simulation per (kernel, architecture), run on a Dask cluster (project issue 19; docs/sweeps.md).

    import neuronsim
    rows = neuronsim.sweep(["workloads/softmax", "workloads/rmsnorm"], ("trn1", "trn2"), out="results.csv")
    rows[0]["total_ns"], rows[0]["bottleneck"]

From the shell, `neuronsim sweep KERNEL_OR_DIR... --arch trn1,trn2 -o results.csv` runs main() below.

Without a client, a dask.distributed.LocalCluster sized to the machine runs the tasks: one worker process per core,
one thread each (the simulator's SystemC kernel is one per process: threads of one process take turns on it). Given
a scheduler's address, the sweep runs on whatever workers that scheduler has; each needs the neuronsim package
importable and the kernels readable at the same absolute paths.

Every task ends as a row, also when its run fails (its error and the CLI's exit code are in the row). Rows are
appended to <out>.csv and <out>.jsonl as tasks finish, so an interrupted sweep keeps what it has, and resume=True
(--resume) runs only the tasks whose rows are missing. Dask is imported only when a sweep runs. The cluster, the
results files and resuming are the generic Dask runner's (dask_runner.run_tasks); this module makes the tasks.
"""
import argparse
import logging
import os
import pathlib
import socket
import sys
import time

from . import _core
from ._errors import error as _error
from ._errors import one_line as _one_line
from .dask_runner import (WORKER_BYTES, WORKERS_TIMEOUT_S, local_worker_limit, read_rows,  # noqa: F401
                          results_paths, run_tasks)

ARCHS = ("trn1", "trn2", "trn3")
ENGINES = ("PE", "ACT", "POOL", "DVE", "SP")

# The columns of a row, in the order the CSV and each JSON line give them. docs/sweeps.md lists them (a test holds
# the two together). The type says how a CSV cell reads back; an empty cell (JSON null) is "no value".
COLUMNS = [
    ("kernel", str, "the kernel as named: the path as given (a folder's kernels: FOLDER/NAME), or LABEL of "
                    "LABEL=PATH"),
    ("path", str, "its absolute path, which the workers read"),
    ("group", str, "NAME of a kernel named NAME@VARIANT, else the folder it was found in, else its own name"),
    ("variant", str, "VARIANT of NAME@VARIANT, else its name in that folder; empty for a kernel on its own"),
    ("arch", str, "trn1, trn2 or trn3, or the absolute path of an architecture file; with settings (--set) as "
                  "trn2+{dma_latency_ns=425}"),
    ("mode", str, "timing (a timing-only run) or numeric"),
    ("status", str, "ok; mismatch (outputs outside the expected values' tolerance); error"),
    ("exit_code", int, "what `neuronsim run` exits with for this run: 0 ok, 1 mismatch, 2 usage, 3 invalid input, "
                       "4 simulation error (also: the task could not run on a worker)"),
    ("error_type", str, "InvalidInput, SimulationError, UsageError, or the class of another failure (KilledWorker: "
                        "every worker that took the task died)"),
    ("error", str, "the error's one-line message (the CLI's)"),
    ("total_ns", float, "simulated time of the run, ns (`neuronsim run --stats`: total_ns)"),
    ("dynamic_instructions", int, "instructions executed (loops unrolled)"),
    ("bottleneck", str, "the engine holding the critical path longest (DMA queues counted together)"),
] + [(f"{e.lower()}_{what}", float, f"{e} {text}") for e in ENGINES
     for what, text in (("busy_ns", "busy time, ns"), ("util", "utilization: busy / total_ns"))] + [
    ("dma_busy_ns", float, "busy time summed over the DMA queues, ns"),
    ("dma_util", float, "mean utilization of the DMA queues"),
    ("expect", str, "numeric runs: pass or fail against the expected outputs (a workload's expected/); empty when "
                    "nothing was compared"),
    ("mismatches", int, "numeric runs: outputs outside the tolerance"),
    ("first_mismatch", str, "the first of them, as the CLI's MISMATCH line"),
    ("unwritten", int, "numeric runs: output elements no instruction wrote, summed over the outputs (0: none)"),
    ("wall_s", float, "wall time of the run on its worker, s"),
    ("worker", str, "the Dask worker that ran it"),
]
COLUMN_NAMES = [name for name, _, _ in COLUMNS]
_TYPES = {name: kind for name, kind, _ in COLUMNS}
NUMERIC_COLUMNS = [name for name, kind, _ in COLUMNS if kind in (int, float)]


# ---- Which kernels: arguments -> tasks

class KernelSpec:
    """One kernel of a sweep: how rows name it, where it is, its group and variant (for ranking)."""

    def __init__(self, name, path, group, variant):
        self.name, self.path, self.group, self.variant = name, path, group, variant

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


# ---- One task, on a worker

def _worker_name():
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return socket.gethostname()


def _empty_row(kernel, arch, mode):
    row = dict.fromkeys(COLUMN_NAMES)
    row.update(kernel=kernel.name, path=kernel.path, group=kernel.group, variant=kernel.variant, arch=arch, mode=mode)
    return row


def _failed_row(kernel, arch, mode, exc, exit_code=4):
    row = _empty_row(kernel, arch, mode)
    row.update(status="error", exit_code=exit_code, error_type=type(exc).__name__, error=_one_line(exc))
    return row


def run_task(kernel, arch, timing_only, inputs=None, cores=None, lnc=None):
    """Runs one kernel on one architecture (neuronsim.run) and returns its row; a failing run gives an error row.
    cores / lnc None: the kernel's own (run.json, else what it names), as `neuronsim run`."""
    mode = "timing" if timing_only else "numeric"
    start = time.perf_counter()
    try:
        r = _core.run(kernel.path, inputs, arch=arch, timing_only=timing_only, cores=cores, lnc=lnc)
    except _core.Error as e:
        row = _failed_row(kernel, arch, mode, e, e.exit_code)
    except Exception as e:  # the CLI's "internal error" (exit 4)
        row = _failed_row(kernel, arch, mode, e)
    else:
        row = _empty_row(kernel, arch, mode)
        s = r.stats
        # The run's totals (the device's for several cores; the document's top level is core 0's then).
        row.update(total_ns=r.total_ns, dynamic_instructions=r.dynamic_instructions, bottleneck=s.get("bottleneck"))
        for e in ENGINES:
            stats = s["engines"].get(e, {"busy_ns": 0.0, "utilization": 0.0})
            row[f"{e.lower()}_busy_ns"] = stats["busy_ns"]
            row[f"{e.lower()}_util"] = stats["utilization"]
        queues = s["dma"].get("queues", [])
        row["dma_busy_ns"] = s["dma"]["busy_ns"]
        row["dma_util"] = sum(q["utilization"] for q in queues) / len(queues) if queues else 0.0
        if not timing_only:
            row["unwritten"] = sum(r.unwritten.values())
        if r.mismatches is None:
            row.update(status="ok", exit_code=0)
        else:
            bad = len(r.mismatches)
            row.update(status="mismatch" if bad else "ok", exit_code=1 if bad else 0, expect="fail" if bad else "pass",
                       mismatches=bad, first_mismatch=str(r.mismatches[0]) if bad else None)
    row["wall_s"] = time.perf_counter() - start
    row["worker"] = _worker_name()
    return row


def task_key(kernel, arch, mode, token):
    """The Dask key of a task (the dashboard and the scheduler show it): `sweep KERNEL ARCH MODE TOKEN`, TOKEN
    different for every sweep (Dask takes equal keys for the same work)."""
    return f"sweep {kernel.name} {arch} {mode} {token}"


def read_results(path):
    """The rows of a results CSV, typed as COLUMNS says. A last line without its newline (a write cut short) is
    left out."""
    return read_rows(path, COLUMNS)


def sweep(kernels, archs=None, *, timing_only=True, inputs=None, client=None, out=None, resume=False,
          workers=None, progress=None, on_row=None, cores=None, lnc=None, set=None):
    """Runs every kernel on every architecture, one Dask task each, and returns the rows (dicts keyed by
    COLUMN_NAMES) in order: kernels as given (a folder's in name order), each on `archs` in order.

    kernels      a kernel path (BIR JSON, workload folder, bundle folder), a folder of kernels, LABEL=PATH, or a
                 list of those; or a dict {label: path}. Labels NAME@VARIANT (or kernels found in one folder) make
                 groups for rank() and best(). Every kernel given or found is a row: one that cannot be read (a
                 *.bir.json that is a FIFO, a bad run.json) is an error row.
    archs        architectures, ("trn1", "trn2") or "trn1,trn2"; None: each kernel's own (its folder's run.json,
                 else trn1), as `neuronsim run` without --arch; one may carry settings, "trn2+{dma_latency_ns=425}"
    set          {parameter: value} set over every arch (as --set KEY=VALUE; `neuronsim arch --keys`)
    timing_only  True: the timeline only (no numerics); False: numeric runs, compared with the workload's
                 expected/ when it has one (columns expect, mismatches)
    inputs       numeric runs: one folder of <name>.npy, or {name: array or .npy path}, for every kernel; None: each
                 kernel's own (a workload's inputs/, else generated)
    client       a dask.distributed.Client, or a scheduler address "tcp://HOST:PORT"; None: a LocalCluster of
                 `workers` processes (default one per core), closed afterwards
    out          "results" or "results.csv": rows are appended to results.csv and results.jsonl as tasks finish
                 (written once the cluster answers); existing files are refused unless resume
    resume       keep the rows already in the files and run only the missing tasks
    workers      the local cluster's worker processes (default one per core; at most what the machine holds:
                 local_worker_limit()); with a client or a scheduler address: wait until that many workers are
                 connected (WORKERS_TIMEOUT_S at most)
    progress     Dask's progress bar on stdout; None: when stdout is a terminal
    on_row       called with each new row as it arrives
    cores, lnc   every run's NeuronCores and cores per logical core (as `neuronsim run --cores / --lnc`); None:
                 each kernel's own (run.json, else what it names)

    A run that fails gives a row with status "error", its message and the CLI's exit code; the sweep goes on.

    Example:
        >>> rows = neuronsim.sweep("workloads/kernel1", ["trn1", "trn2", "trn2+{dma_latency_ns=425}"])
        >>> [(r["arch"], r["total_ns"]) for r in rows]"""
    return _sweep(kernels, archs, timing_only, inputs, client, out, resume, workers, progress, on_row, cores, lnc,
                  set)[0]


def _optional_count(v, name):
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{name} must be an int or None, got {type(v).__name__} {v!r}")
    if v < 1:
        raise _error("UsageError", f"{name} must be at least 1, got {v}")
    return v


def _kernel_arch(k):
    """A kernel's own architecture when the sweep names none: its folder's run.json's, else trn1. A run.json that
    does not read gives trn1 here, and the run's error row says why."""
    try:
        return _core.run_config(k.path).get("arch", "trn1")
    except _core.Error:
        return "trn1"


def _sweep(kernels, archs, timing_only, inputs, client, out, resume, workers, progress, on_row, cores=None,
           lnc=None, sets=None):
    """sweep(), and what the command line says of it: {"tasks", "resumed", "where", "files"}."""
    ks = kernels_of(kernels)
    arch_list = archs_of(archs, sets)
    sets = _sets_of(sets)
    if not isinstance(timing_only, bool):
        raise TypeError(f"timing_only must be True or False, got {type(timing_only).__name__} {timing_only!r}")
    if not isinstance(resume, bool):
        raise TypeError(f"resume must be True or False, got {type(resume).__name__} {resume!r}")
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None, got {type(progress).__name__} {progress!r}")
    if on_row is not None and not callable(on_row):
        raise TypeError(f"on_row must be a function or None, got {type(on_row).__name__}")
    if inputs is not None and not isinstance(inputs, (str, os.PathLike, dict)):
        raise TypeError(f"inputs must be a folder (str or os.PathLike), a dict {{name: array or .npy path}} or None, "
                        f"got {type(inputs).__name__}")
    if client is not None and not isinstance(client, str) and not hasattr(client, "submit"):
        raise TypeError(f"client must be a dask.distributed.Client, a scheduler address (str) or None, got "
                        f"{type(client).__name__}")
    workers = _optional_count(workers, "workers")
    cores, lnc = _optional_count(cores, "cores"), _optional_count(lnc, "lnc")
    mode = "timing" if timing_only else "numeric"
    if isinstance(inputs, (str, os.PathLike)):
        if os.fspath(inputs) == "":
            raise _error("UsageError", "inputs needs a path, got an empty one")
        inputs = os.path.abspath(inputs)
    tasks = [(k, a, timing_only, inputs, cores, lnc) for k in ks
             for a in (arch_list if arch_list is not None else [_with_sets(_kernel_arch(k), sets)])]
    return run_tasks(tasks, [(k.name, a, mode) for k, a, *_ in tasks], run_task, columns=COLUMNS,
                     row_key=lambda r: (r["kernel"], r["arch"], r["mode"]),
                     failed_row=lambda task, e: _failed_row(task[0], task[1], mode, e),
                     task_name=lambda task, token: task_key(task[0], task[1], mode, token),
                     out=out, resume=resume, client=client, workers=workers, progress=progress, on_row=on_row)


# ---- Ranking

def rank(rows, by="total_ns"):
    """The rows with a value in column `by` sorted by it (ascending; "-COLUMN" descending) within each arch (archs
    in order of appearance), then the rows without one (failed runs) in their order."""
    column, descending = (by[1:], True) if by.startswith("-") else (by, False)
    if column not in NUMERIC_COLUMNS:
        raise _error("UsageError", f"cannot rank by {by!r}: one of {', '.join(NUMERIC_COLUMNS)} (- before it: "
                                   f"descending){_core.did_you_mean(column, NUMERIC_COLUMNS)}")
    archs = list(dict.fromkeys(r["arch"] for r in rows))
    ranked = [r for r in rows if r[column] is not None and r["status"] != "error"]
    ranked.sort(key=lambda r: (archs.index(r["arch"]), -r[column] if descending else r[column]))
    return ranked + [r for r in rows if r[column] is None or r["status"] == "error"]


def best(rows, by="total_ns"):
    """For each group with two or more ranked variants on an arch: (group, arch, best row, runner-up row), in
    order of first appearance."""
    column = by.lstrip("-")
    ranked = [r for r in rank(rows, by) if r[column] is not None and r["status"] != "error"]
    groups = {}
    for r in ranked:
        groups.setdefault((r["group"], r["arch"]), []).append(r)
    return [(g, a, rs[0], rs[1]) for (g, a), rs in groups.items() if len(rs) > 1]


def _cell(column, value):
    if value is None:
        return "-"
    if column.endswith("_util"):
        return f"{100 * value:.1f}%"
    if column == "wall_s":
        return f"{value:.3f}"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def format_ranking(rows, by="total_ns"):
    """The table --rank-by prints: rank within its arch, kernel, arch, the column, bottleneck, status; then the
    best variant of each group."""
    column = by.lstrip("-")
    ordered = rank(rows, by)
    shown = [(str(i), r) for i, r in _numbered(ordered, column)]
    header = ["rank", "kernel", "arch", column, "bottleneck", "status"]
    table = [header] + [[n, r["kernel"], r["arch"], _cell(column, r[column]), r["bottleneck"] or "-",
                         r["status"] if r["status"] != "error" else f"error ({r['error_type']})"]
                        for n, r in shown]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    right = {0, 3}
    lines = ["  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths))).rstrip()
             for line in table]
    winners = best(rows, by)
    if winners:
        lines.append("")
        lines.append(f"best variant per group ({'highest' if by.startswith('-') else 'lowest'} {column}):")
        for g, a, first, second in winners:
            ratio = (second[column] / first[column]) if first[column] else float("inf")
            if by.startswith("-"):
                ratio = 1 / ratio if ratio else float("inf")
            lines.append(f"  {g} {a}: {first['variant']} {_cell(column, first[column])} "
                         f"(next {second['variant']} {_cell(column, second[column])}, {ratio:.2f}x)")
    return "\n".join(lines) + "\n"


def _numbered(ordered, column):
    counts = {}
    for r in ordered:
        if r[column] is None or r["status"] == "error":
            yield "-", r
            continue
        counts[r["arch"]] = counts.get(r["arch"], 0) + 1
        yield counts[r["arch"]], r


# ---- The command line

HELP_EPILOG = """\
KERNEL_OR_DIR: a BIR JSON file, a workload folder, a bundle folder, a folder of kernels, or LABEL=PATH to name a
kernel LABEL (an empty PATH is refused). A folder is
  - a bundle folder when it holds manifest.json or cores.json;
  - one workload when it holds exactly one *.bir.json entry and no subfolder that is a kernel;
  - a folder of kernels otherwise: each *.bir.json entry in it and each subfolder that is a workload or bundle
    folder is one kernel, by name; they form one group, named after the folder.
A folder with one *.bir.json entry beside kernel subfolders is refused as ambiguous. A *.bir.json entry that is not
a regular file (a FIFO, a folder) is still a kernel: its row is an error, never a reason to drop it. Kernels named
NAME@VARIANT (LABEL or file/folder name) form group NAME.

One task per (kernel, arch), each one `neuronsim run --timing-only` (with --numeric: a full run, compared with the
workload's expected/), on --arch or each kernel's own (its run.json's, else trn1), on --cores / --lnc or each
kernel's own (run.json, else what it names). Without --scheduler a Dask LocalCluster runs them: --workers
processes (default one per core, at most four per core and one per 300 MB of available memory), one thread each. With --scheduler tcp://HOST:PORT they run on that scheduler's workers (started with
`dask-scheduler` and `dask-worker tcp://HOST:PORT --nthreads 1`; each needs the neuronsim package importable and
the kernels at the same paths; --workers N waits for N of them, 120 s at most). The results files are written
once the cluster answers.

-o results.csv appends one row per task to results.csv and results.jsonl as tasks finish (columns: docs/sweeps.md); existing files are refused unless --resume, which keeps their rows and runs only the missing tasks. A
failed run is a row with status error, its message and the exit code `neuronsim run` gives. Dask's progress bar
shows when stdout is a terminal. Without -o or --rank-by the rows are printed as a table in task order.

columns, in order: {columns}

exit codes: 0 every row ok, 1 some row mismatch or error, 2 usage, 3 a kernel argument names nothing, 130
interrupted (the rows written so far stay; --resume continues)
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _error("UsageError", f"{message} (try neuronsim sweep --help)")


def main(argv=None):
    """`neuronsim sweep` (the C++ command runs `python3 -m neuronsim sweep ...`). Returns the exit code."""
    # A command's output is its own: Dask's warnings (a slow event loop, a worker restarted) and asyncio's notes on
    # connections dropped while a client closes after Ctrl-C stay out of it; errors that matter reach the rows.
    logging.getLogger("distributed").setLevel(logging.ERROR)
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    p = _Parser(prog="neuronsim sweep", description="Runs many kernels on many architectures on Dask, one task "
                "per (kernel, arch), and collects one row of results per task.",
                epilog=HELP_EPILOG.format(columns=", ".join(COLUMN_NAMES)),
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kernels", nargs="+", metavar="KERNEL_OR_DIR")
    p.add_argument("--arch", default=None, metavar="trn1,trn2,trn3", help="architectures, comma-separated "
                   "(default: each kernel's run.json, else trn1); a name ending in .json or holding a '/' is an "
                   "architecture file")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an architecture parameter set "
                   "over every arch (repeatable; `neuronsim arch --keys`); an arch may also carry its own, "
                   "trn2+{dma_latency_ns=425}")
    p.add_argument("--cores", type=int, metavar="N", help="every run on N NeuronCores (default: each kernel's own)")
    p.add_argument("--lnc", type=int, metavar="L", help="physical cores per logical core (default: each kernel's)")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask scheduler's workers")
    p.add_argument("--workers", type=int, metavar="N", help="local: worker processes (default: one per core); with "
                   "--scheduler: wait for N workers")
    p.add_argument("-o", "--out", metavar="RESULTS.csv", help="write RESULTS.csv and RESULTS.jsonl")
    p.add_argument("--resume", action="store_true", help="keep the rows in RESULTS.csv, run the missing tasks")
    p.add_argument("--rank-by", metavar="COLUMN", help="print the rows sorted by COLUMN within each arch (e.g. "
                   "total_ns; -COLUMN: descending) and the best variant per group")
    p.add_argument("--numeric", action="store_true", help="full runs (outputs computed, compared with the "
                   "workload's expected/) instead of timing-only")
    p.add_argument("--inputs", metavar="DIR", help="numeric runs: DIR/<name>.npy for every kernel")
    a = None
    try:
        a = p.parse_args(argv)
        if a.rank_by:
            rank([], a.rank_by)  # checks the column before anything runs
        start = time.perf_counter()
        rows, info = _sweep(a.kernels, a.arch, not a.numeric, a.inputs, a.scheduler, a.out, a.resume, a.workers,
                            None, None, a.cores, a.lnc, a.set)
        elapsed = time.perf_counter() - start
    except KeyboardInterrupt:
        where = f"; the rows so far are in {results_paths(a.out)[0]} (--resume continues)" if a and a.out else ""
        sys.stderr.write(f"neuronsim: sweep interrupted{where}\n")
        return 130
    except Exception as e:
        code = getattr(e, "exit_code", None)
        if code is None:
            raise
        sys.stderr.write(f"neuronsim: {_one_line(e)}\n")
        return code
    counts = {s: sum(r["status"] == s for r in rows) for s in ("ok", "mismatch", "error")}
    try:
        if a.rank_by:
            sys.stdout.write(format_ranking(rows, a.rank_by))
        elif not a.out:
            sys.stdout.write(_plain_table(rows))
        ran = info["tasks"] - info["resumed"]
        print(f"sweep: {info['tasks']} task{'s' if info['tasks'] != 1 else ''} ({info['resumed']} resumed, {ran} run"
              + (f" on {info['where']}" if info["where"] else "") + f"): {counts['ok']} ok, {counts['mismatch']} "
              f"mismatch, {counts['error']} error; {elapsed:.1f} s")
        if info["files"]:
            print(f"results: {info['files'][0]}, {info['files'][1]}")
        sys.stdout.flush()
    except OSError as e:
        # stdout is an output like the results files: a write error there is the command's error (exit 3), and
        # Python's own report at exit is silenced (stdout is replaced by a sink).
        sys.stdout = open(os.devnull, "w")
        sys.stderr.write(f"neuronsim: stdout: write failed: {e.strerror or e} (the sweep's rows are in its results "
                         "files, if any)\n")
        return 3
    return 0 if counts["ok"] == len(rows) else 1


def _plain_table(rows):
    header = ["kernel", "arch", "status", "total_ns", "bottleneck", "error"]
    table = [header] + [[r["kernel"], r["arch"], r["status"], _cell("total_ns", r["total_ns"]), r["bottleneck"] or "-",
                         r["error"] or ""] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    return "".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() + "\n" for line in table)
