"""Sweeps: one simulation per (kernel, architecture), run on a Dask cluster (project issue 19; README "Sweeps").

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
(--resume) runs only the tasks whose rows are missing. Dask is imported only when a sweep runs.
"""
import argparse
import contextlib
import csv
import io
import json
import logging
import os
import pathlib
import socket
import sys
import threading
import time
import types
import uuid

from . import _core

ARCHS = ("trn1", "trn2", "trn3")
ENGINES = ("PE", "ACT", "POOL", "DVE", "SP")

# The columns of a row, in the order the CSV and each JSON line give them. README "Sweeps" lists them (a test holds
# the two together). The type says how a CSV cell reads back; an empty cell (JSON null) is "no value".
COLUMNS = [
    ("kernel", str, "the kernel as named: the path as given (a folder's kernels: FOLDER/NAME), or LABEL of "
                    "LABEL=PATH"),
    ("path", str, "its absolute path, which the workers read"),
    ("group", str, "NAME of a kernel named NAME@VARIANT, else the folder it was found in, else its own name"),
    ("variant", str, "VARIANT of NAME@VARIANT, else its name in that folder; empty for a kernel on its own"),
    ("arch", str, "trn1, trn2 or trn3, or the absolute path of an architecture file; with settings (--set) as "
                  "trn2+{dma_fixed_ns=650}"),
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


def _error(kind, message):
    """A neuronsim error of class `kind` (InvalidInput, UsageError) as the C++ side raises them."""
    cls = getattr(_core, kind)
    e = cls("sweep: " + message)
    e.exit_code = {"InvalidInput": 3, "UsageError": 2}[kind]
    e.file = e.inst_index = e.inst_name = e.field = None
    return e


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
    name it ("trn2+{dma_fixed_ns=650}")."""
    if sets:
        settings = ",".join(sets)
        a = a[:-1] + "," + settings + "}" if "+{" in a else a + "+{" + settings + "}"
    return _core.arch_params(a)["name"]


def archs_of(archs, sets=None):
    """("trn1", "trn2") or "trn1,trn2" -> the list, each checked, duplicates dropped. An arch may carry settings,
    "trn2+{dma_fixed_ns=650}" (as --set); `sets` ({key: value} or ["KEY=VALUE", ...], `--set`) go over every arch.
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


def _one_line(text):
    return " ".join(str(text).split())


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


# ---- Results files

def _csv_line(row):
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(["" if row[c] is None else row[c] for c in COLUMN_NAMES])
    return buf.getvalue()


def _json_line(row):
    return json.dumps({c: row[c] for c in COLUMN_NAMES}) + "\n"


def results_paths(out):
    """out "results", "results.csv" or "results.jsonl" -> (results.csv, results.jsonl)."""
    base = os.fspath(out)
    for suffix in (".csv", ".jsonl"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return pathlib.Path(base + ".csv"), pathlib.Path(base + ".jsonl")


def read_results(path):
    """The rows of a results CSV, typed as COLUMNS says. A last line without its newline (a write cut short) is
    left out."""
    text = pathlib.Path(path).read_text()
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    lines = list(csv.reader(io.StringIO(text)))
    if not lines or lines[0] != COLUMN_NAMES:
        first = ",".join(COLUMN_NAMES[:3])
        raise _error("UsageError", f"{path} does not start with the columns this version writes ({first},...): not a "
                                   "sweep's results, or another version's (start a new file)")
    rows = []
    for n, cells in enumerate(lines[1:], start=2):
        if len(cells) != len(COLUMN_NAMES):
            raise _error("InvalidInput", f"{path} line {n}: {len(cells)} fields, expected {len(COLUMN_NAMES)}")
        try:
            rows.append({c: (_TYPES[c](v) if v != "" else None) for c, v in zip(COLUMN_NAMES, cells)})
        except ValueError as e:
            raise _error("InvalidInput", f"{path} line {n}: {e}") from None
    return rows


class _Results:
    """The rows of a sweep, appended to the CSV and JSON-lines files as they arrive (when there are files). Making
    one checks the files and reads the rows to resume; nothing is written until start(), which the sweep calls once
    its cluster answers (an unreachable scheduler leaves no file behind to block the rerun)."""

    def __init__(self, out, resume):
        self.rows = []
        self.files = None
        self.handles = []
        if out is None:
            if resume:
                raise _error("UsageError", "resume needs the results files (out / -o)")
            return
        if not isinstance(out, (str, os.PathLike)):
            raise TypeError(f"out must be a path (str or os.PathLike) or None, got {type(out).__name__}")
        if os.fspath(out) == "":
            raise _error("UsageError", "out needs a path, got an empty one")
        self.files = results_paths(out)
        csv_path, json_path = self.files
        # The rule of every output neuronsim writes (isa/file_output.hpp): a regular file (replaced whole, then
        # appended to) or a character device (written in place); a FIFO, socket or directory is refused now.
        self.kinds = [_core.output_kind(str(p)) for p in self.files]
        if resume and csv_path.exists() and self.kinds[0] == "regular":
            self.rows = read_results(csv_path)
        elif not resume:
            for p, kind in zip(self.files, self.kinds):
                if kind == "regular":
                    raise _error("UsageError", f"{p} exists: --resume (resume=True) continues that sweep; remove it to "
                                               "start over")
        for p in self.files:
            if not p.parent.is_dir():
                raise _error("InvalidInput", f"{p}: its folder {p.parent} does not exist")

    def start(self):
        """Both files are (re)written whole once, from the rows kept: a line cut short by an interruption goes, and
        the JSON lines follow the CSV. Then rows are only appended."""
        if self.files is None or self.handles:
            return
        csv_path, json_path = self.files
        for path, kind, text in ((csv_path, self.kinds[0], _csv_line(dict(zip(COLUMN_NAMES, COLUMN_NAMES))) +
                                  "".join(map(_csv_line, self.rows))),
                                 (json_path, self.kinds[1], "".join(map(_json_line, self.rows)))):
            try:
                if kind == "device":
                    f = open(path, "a")
                    f.write(text)
                    f.flush()
                    self.handles.append(f)
                    continue
                tmp = path.with_name(path.name + ".tmp")
                tmp.write_text(text)
                os.replace(tmp, path)
                self.handles.append(open(path, "a"))
            except OSError as e:
                self.close()
                raise _error("InvalidInput", f"{path}: cannot write ({e.strerror})") from None

    def done(self):
        return {(r["kernel"], r["arch"], r["mode"]) for r in self.rows}

    def add(self, row):
        if self.files:
            self.start()  # the rows kept so far (resume), before this one
        self.rows.append(row)
        if self.files:
            for f, path, line in zip(self.handles, self.files, (_csv_line(row), _json_line(row))):
                try:
                    f.write(line)
                    f.flush()
                except OSError as e:
                    raise _error("InvalidInput", f"{path}: write failed ({e.strerror}): the rows so far are kept") from None

    def close(self):
        for f in self.handles:
            try:
                f.close()
            except OSError:
                pass
        self.handles = []


# ---- The cluster

@contextlib.contextmanager
def _bare_main():
    """Local workers are spawned processes, and multiprocessing runs the parent's main script (or -m module) again
    in each, as __mp_main__, unless __main__ names none. The workers need only neuronsim, so while the cluster
    starts them __main__ is a bare module: a calling script needs no `if __name__ == "__main__":` guard, and
    workers start sooner."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


# How long --workers N (with a scheduler) waits for the N workers to join before giving up, s.
WORKERS_TIMEOUT_S = 120
# What one local worker process holds: the interpreter, Dask, numpy and the simulator (~150 MB measured with
# `ps -o rss` on a worker of this machine's local cluster), and one simulation's memory; a machine's share per
# worker below it would swap.
WORKER_BYTES = 300 * 2**20


def local_worker_limit():
    """The most local worker processes this machine holds, and why: four per core (a worker waits on its
    simulation, never on I/O, so more only queue) and one per WORKER_BYTES of available memory."""
    cores = len(os.sched_getaffinity(0))
    avail = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
    except OSError:
        pass
    by_cores = 4 * cores
    if avail is None:
        return by_cores, f"{cores} cores, 4 per core"
    by_memory = max(1, avail // WORKER_BYTES)
    if by_memory < by_cores:
        return by_memory, f"{avail / 2**30:.1f} GiB available, {WORKER_BYTES // 2**20} MB per worker"
    return by_cores, f"{cores} cores, 4 per core"


class _Cluster:
    """A client for the sweep: the caller's, one connected to a scheduler address, or one on a new LocalCluster.
    Closes what it opened."""

    def __init__(self, client, workers):
        from distributed import Client, LocalCluster

        self.cluster = None
        self.own = not hasattr(client, "submit")
        if client is None:
            import multiprocessing

            # A worker that Dask restarts (after a crash) runs the caller's script again (see _bare_main): one
            # without `if __name__ == "__main__":` would call sweep() again there. Refuse instead of recursing.
            if getattr(multiprocessing.current_process(), "_inheriting", False):  # multiprocessing's own test
                raise _error("UsageError", "sweep() ran again while a local Dask worker imported the script that "
                                           "calls it: put the call under `if __name__ == \"__main__\":`")
            n = workers or len(os.sched_getaffinity(0))
            limit, why = local_worker_limit()
            if n > limit:
                raise _error("UsageError", f"workers {n}: this machine holds at most {limit} local worker processes "
                                           f"({why}); give a scheduler for more")
            with _bare_main():
                # No dashboard; the scheduler's HTTP endpoints (health, metrics) on a free port, not 8787.
                self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                            dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"},
                                            silence_logs=logging.ERROR)
            self.client = Client(self.cluster, set_as_default=False)
            self.where = f"a local cluster of {n} worker{'s' if n > 1 else ''}"
            return
        if self.own:
            try:
                self.client = Client(str(client), set_as_default=False, timeout="20s")
            except (OSError, ValueError, TypeError) as e:
                raise _error("UsageError", f"cannot reach the scheduler at {client}: {_one_line(e)}") from None
        else:
            self.client = client
        if workers:
            try:
                self.client.wait_for_workers(workers, timeout=WORKERS_TIMEOUT_S)
            except (TimeoutError, OSError) as e:
                n = len(self.client.scheduler_info()["workers"])
                self.close()
                raise _error("UsageError", f"only {n} of the {workers} workers asked for joined {client} within "
                                           f"{WORKERS_TIMEOUT_S} s ({type(e).__name__})") from None
        n = len(self.client.scheduler_info()["workers"])
        self.where = f"{self.client.scheduler.address} ({n} worker{'s' if n != 1 else ''} when it started)"

    def close(self):
        if self.own:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _progress_bar(client, futures):
    """Dask's text progress bar on stdout, drawn from its own thread while the sweep collects rows."""
    from distributed.diagnostics.progressbar import TextProgressBar

    t = threading.Thread(target=TextProgressBar, args=(futures,), kwargs={"scheduler": client.scheduler.address},
                         daemon=True)
    t.start()
    return t


def sweep(kernels, archs=None, *, timing_only=True, inputs=None, client=None, out=None, resume=False,
          workers=None, progress=None, on_row=None, cores=None, lnc=None, set=None):
    """Runs every kernel on every architecture, one Dask task each, and returns the rows (dicts keyed by
    COLUMN_NAMES) in order: kernels as given (a folder's in name order), each on `archs` in order.

    kernels      a kernel path (BIR JSON, workload folder, bundle folder), a folder of kernels, LABEL=PATH, or a
                 list of those; or a dict {label: path}. Labels NAME@VARIANT (or kernels found in one folder) make
                 groups for rank() and best(). Every kernel given or found is a row: one that cannot be read (a
                 *.bir.json that is a FIFO, a bad run.json) is an error row.
    archs        architectures, ("trn1", "trn2") or "trn1,trn2"; None: each kernel's own (its folder's run.json,
                 else trn1), as `neuronsim run` without --arch; one may carry settings, "trn2+{dma_fixed_ns=650}"
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
        >>> rows = neuronsim.sweep("workloads/kernel1", ["trn1", "trn2", "trn2+{dma_fixed_ns=650}"])
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
    tasks = [(k, a) for k in ks
             for a in (arch_list if arch_list is not None else [_with_sets(_kernel_arch(k), sets)])]
    results = _Results(out, resume)
    try:
        done = results.done()
        todo = [(k, a) for k, a in tasks if (k.name, a, mode) not in done]
        info = {"tasks": len(tasks), "resumed": len(tasks) - len(todo), "where": None, "files": results.files}
        if todo:
            info["where"] = _run(todo, mode, timing_only, inputs, client, workers, progress, results, on_row, cores,
                                 lnc)
        by_key = {(r["kernel"], r["arch"], r["mode"]): r for r in results.rows}
        return [by_key[(k.name, a, mode)] for k, a in tasks], info
    finally:
        results.close()


def _run(todo, mode, timing_only, inputs, client, workers, progress, results, on_row, cores, lnc):
    try:
        from distributed import as_completed
    except ImportError:
        raise _error("UsageError", "sweeps need Dask: apt install python3-distributed (Debian), or pip install "
                                   "distributed") from None
    cluster = _Cluster(client, workers)
    bar = None
    try:
        results.start()  # the cluster answered: now the results files are written
        token = uuid.uuid4().hex[:12]
        futures = {cluster.client.submit(run_task, k, a, timing_only, inputs, cores, lnc,
                                         key=task_key(k, a, mode, token), pure=False): (k, a) for k, a in todo}
        if progress or (progress is None and sys.stdout.isatty()):
            bar = _progress_bar(cluster.client, list(futures))
        for f in as_completed(futures, loop=cluster.client.loop):
            k, a = futures[f]
            try:
                row = f.result()
            except Exception as e:  # the task did not run to its end: a worker lost too often, an import failed
                row = _failed_row(k, a, mode, e)
            results.add(row)
            if on_row:
                on_row(row)
        if bar is not None:  # it draws 100% and clears its line once the scheduler reports every key done
            bar.join(timeout=5)
        return cluster.where
    finally:
        cluster.close()


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

-o results.csv appends one row per task to results.csv and results.jsonl as tasks finish (columns: README
"Sweeps"); existing files are refused unless --resume, which keeps their rows and runs only the missing tasks. A
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
                   "trn2+{dma_fixed_ns=650}")
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
