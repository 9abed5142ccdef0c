"""A generic Dask runner: a list of tasks -> one row per task, on a local cluster or on a scheduler's workers.
neuronsim.sweep (sweeps.py) runs through it; any other batch of simulations (a tuner's candidates) is meant to as well:

    rows, info = run_tasks(tasks, keys, work, columns=COLUMNS, row_key=..., failed_row=..., task_name=...,
                           out="results.csv", resume=True)

- tasks: one tuple of arguments per task; work(*task) runs on a worker and returns the task's row, a dict over
  `columns` ([(name, type, description)]: the order of the CSV and of each JSON line, and how a cell reads back);
- keys: one hashable per task, equal to row_key(row) of its row: what resume matches the rows already written to;
- failed_row(task, exc): the row of a task that did not run to its end (every worker that took it died, an import
  failed), so that every task ends as a row;
- task_name(task, token): its Dask key (the dashboard shows it), `token` different for every run.

Without a client, a dask.distributed.LocalCluster sized to the machine runs the tasks: one worker process per core,
one thread each (the simulator's SystemC kernel is one per process: threads of one process take turns on it). Given
a scheduler's address, the tasks run on whatever workers that scheduler has; each needs the neuronsim package
importable and the files the work reads at the same absolute paths.

Rows are appended to <out>.csv and <out>.jsonl as tasks finish, so an interrupted run keeps what it has, and
resume=True runs only the tasks whose rows are missing. Dask is imported only when tasks run. `what` ("sweep") leads
every error message.
"""
import contextlib
import csv
import io
import json
import logging
import os
import pathlib
import sys
import threading
import types
import uuid

from . import _core
from ._errors import error as _error
from ._errors import one_line as _one_line


# ---- Results files

def _csv_line(row, names):
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(["" if row[c] is None else row[c] for c in names])
    return buf.getvalue()


def _json_line(row, names):
    return json.dumps({c: row[c] for c in names}) + "\n"


def results_paths(out):
    """out "results", "results.csv" or "results.jsonl" -> (results.csv, results.jsonl)."""
    base = os.fspath(out)
    for suffix in (".csv", ".jsonl"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return pathlib.Path(base + ".csv"), pathlib.Path(base + ".jsonl")


def read_rows(path, columns, what="sweep"):
    """The rows of a results CSV, typed as `columns` says ([(name, type, description)]). A last line without its
    newline (a write cut short) is left out."""
    names = [name for name, _, _ in columns]
    types_ = {name: kind for name, kind, _ in columns}
    text = pathlib.Path(path).read_text()
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    lines = list(csv.reader(io.StringIO(text)))
    if not lines or lines[0] != names:
        first = ",".join(names[:3])
        raise _error("UsageError", f"{path} does not start with the columns this version writes ({first},...): not a "
                                   f"{what}'s results, or another version's (start a new file)", what)
    rows = []
    for n, cells in enumerate(lines[1:], start=2):
        if len(cells) != len(names):
            raise _error("InvalidInput", f"{path} line {n}: {len(cells)} fields, expected {len(names)}", what)
        try:
            rows.append({c: (types_[c](v) if v != "" else None) for c, v in zip(names, cells)})
        except ValueError as e:
            raise _error("InvalidInput", f"{path} line {n}: {e}", what) from None
    return rows


class Results:
    """The rows of a run, appended to the CSV and JSON-lines files as they arrive (when there are files), in the
    order of `columns`. Making one checks the files and reads the rows to resume; nothing is written until start(),
    which run_tasks calls once its cluster answers (an unreachable scheduler leaves no file behind to block the
    rerun)."""

    def __init__(self, out, resume, columns, what="sweep", reads=()):
        self.rows = []
        self.files = None
        self.handles = []
        self.columns, self.names, self.what = columns, [name for name, _, _ in columns], what
        if out is None:
            if resume:
                raise _error("UsageError", "resume needs the results files (out / -o)", what)
            return
        if not isinstance(out, (str, os.PathLike)):
            raise TypeError(f"out must be a path (str or os.PathLike) or None, got {type(out).__name__}")
        if os.fspath(out) == "":
            raise _error("UsageError", "out needs a path, got an empty one", what)
        self.files = results_paths(out)
        csv_path, json_path = self.files
        # The rule of every output neuronsim writes (isa/file_output.hpp): a regular file (replaced whole, then
        # appended to) or a character device (written in place); a FIFO, socket or directory is refused now.
        self.kinds = [_core.output_kind(str(p)) for p in self.files]
        if resume and csv_path.exists() and self.kinds[0] == "regular":
            self.rows = read_rows(csv_path, columns, what)
        elif not resume:
            for p, kind in zip(self.files, self.kinds):
                if kind == "regular":
                    raise _error("UsageError", f"{p} exists: --resume (resume=True) continues that {what}; remove it "
                                               "to start over", what)
        for p in self.files:
            if not p.parent.is_dir():
                raise _error("InvalidInput", f"{p}: its folder {p.parent} does not exist", what)
        # Nor may they replace a file the runs read (a kernel): the C++ rule of every writer.
        _core.check_output_paths([str(p) for p in self.files], [os.fspath(r) for r in reads])

    def start(self):
        """Both files are (re)written whole once, from the rows kept: a line cut short by an interruption goes, and
        the JSON lines follow the CSV. Then rows are only appended."""
        if self.files is None or self.handles:
            return
        csv_path, json_path = self.files
        names = self.names
        for path, kind, text in ((csv_path, self.kinds[0], _csv_line(dict(zip(names, names)), names) +
                                  "".join(_csv_line(r, names) for r in self.rows)),
                                 (json_path, self.kinds[1], "".join(_json_line(r, names) for r in self.rows))):
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
                raise _error("InvalidInput", f"{path}: cannot write ({e.strerror})", self.what) from None

    def add(self, row):
        if self.files:
            self.start()  # the rows kept so far (resume), before this one
        self.rows.append(row)
        if self.files:
            for f, path, line in zip(self.handles, self.files,
                                     (_csv_line(row, self.names), _json_line(row, self.names))):
                try:
                    f.write(line)
                    f.flush()
                except OSError as e:
                    raise _error("InvalidInput", f"{path}: write failed ({e.strerror}): the rows so far are kept",
                                 self.what) from None

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


class Cluster:
    """A client for the run: the caller's, one connected to a scheduler address, or one on a new LocalCluster.
    Closes what it opened."""

    def __init__(self, client, workers, what="sweep"):
        from distributed import Client, LocalCluster

        self.cluster = None
        self.own = not hasattr(client, "submit")
        if client is None:
            import multiprocessing

            # A worker that Dask restarts (after a crash) runs the caller's script again (see _bare_main): one
            # without `if __name__ == "__main__":` would call sweep() again there. Refuse instead of recursing.
            if getattr(multiprocessing.current_process(), "_inheriting", False):  # multiprocessing's own test
                raise _error("UsageError", f"{what}() ran again while a local Dask worker imported the script that "
                                           "calls it: put the call under `if __name__ == \"__main__\":`", what)
            n = workers or len(os.sched_getaffinity(0))
            limit, why = local_worker_limit()
            if n > limit:
                raise _error("UsageError", f"workers {n}: this machine holds at most {limit} local worker processes "
                                           f"({why}); give a scheduler for more", what)
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
                raise _error("UsageError", f"cannot reach the scheduler at {client}: {_one_line(e)}", what) from None
        else:
            self.client = client
        if workers:
            try:
                self.client.wait_for_workers(workers, timeout=WORKERS_TIMEOUT_S)
            except (TimeoutError, OSError) as e:
                n = len(self.client.scheduler_info()["workers"])
                self.close()
                raise _error("UsageError", f"only {n} of the {workers} workers asked for joined {client} within "
                                           f"{WORKERS_TIMEOUT_S} s ({type(e).__name__})", what) from None
        n = len(self.client.scheduler_info()["workers"])
        self.where = f"{self.client.scheduler.address} ({n} worker{'s' if n != 1 else ''} when it started)"

    def close(self):
        if self.own:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _progress_bar(client, futures):
    """Dask's text progress bar on stdout, drawn from its own thread while run_tasks collects rows."""
    from distributed.diagnostics.progressbar import TextProgressBar

    t = threading.Thread(target=TextProgressBar, args=(futures,), kwargs={"scheduler": client.scheduler.address},
                         daemon=True)
    t.start()
    return t


# ---- The run

def run_tasks(tasks, keys, work, *, columns, row_key, failed_row, task_name, out=None, resume=False, client=None,
              workers=None, progress=None, on_row=None, what="sweep", reads=()):
    """Runs work(*task) for every task of `tasks` on Dask and returns (rows, info): the rows in the order of tasks,
    and {"tasks": how many, "resumed": how many rows came from the files, "where": the cluster (None when nothing
    ran), "files": (csv, jsonl) or None}. The module's docstring says what each argument is; client, workers, out,
    resume, progress and on_row are as neuronsim.sweep() describes them; reads: the files the tasks read, which
    the results files may not replace."""
    results = Results(out, resume, columns, what, reads)
    try:
        done = {row_key(r) for r in results.rows}
        todo = [task for task, key in zip(tasks, keys) if key not in done]
        info = {"tasks": len(tasks), "resumed": len(tasks) - len(todo), "where": None, "files": results.files}
        if todo:
            info["where"] = _run(todo, work, failed_row, task_name, client, workers, progress, results, on_row, what)
        by_key = {row_key(r): r for r in results.rows}
        return [by_key[key] for key in keys], info
    finally:
        results.close()


def _run(todo, work, failed_row, task_name, client, workers, progress, results, on_row, what):
    try:
        from distributed import as_completed
    except ImportError:
        raise _error("UsageError", f"{what}s need Dask: apt install python3-distributed (Debian), or pip install "
                                   "distributed", what) from None
    cluster = Cluster(client, workers, what)
    bar = None
    try:
        results.start()  # the cluster answered: now the results files are written
        token = uuid.uuid4().hex[:12]
        futures = {cluster.client.submit(work, *task, key=task_name(task, token), pure=False): task for task in todo}
        if progress or (progress is None and sys.stdout.isatty()):
            bar = _progress_bar(cluster.client, list(futures))
        for f in as_completed(futures, loop=cluster.client.loop):
            task = futures[f]
            try:
                row = f.result()
            except Exception as e:  # the task did not run to its end: a worker lost too often, an import failed
                row = failed_row(task, e)
            results.add(row)
            if on_row:
                on_row(row)
        if bar is not None:  # it draws 100% and clears its line once the scheduler reports every key done
            bar.join(timeout=5)
        return cluster.where
    finally:
        cluster.close()
