"""Sweeps: one simulation per (kernel, architecture), run on a Dask cluster (project issue 19; docs/sweeps.md).

    import neuronsim
    rows = neuronsim.sweep(["workloads/softmax", "workloads/rmsnorm"], ("trn1", "trn2"), out="results.csv")
    rows[0]["total_ns"], rows[0]["bottleneck"]

From the shell, `neuronsim sweep KERNEL_OR_DIR... --arch trn1,trn2 -o results.csv` runs sweep_cli.main().

A sweep is its tasks, one per (kernel, arch), handed to the generic Dask runner (dask_runner.run_tasks: a local
cluster or a scheduler's workers, one row per task also when its run fails or its worker dies, rows appended to
<out>.csv / <out>.jsonl as they arrive, resume by keys). What is the sweep's own lives beside it:
    sweep_kernels.py  which kernels and architectures the arguments name (kernels_of, archs_of)
    sweep_rows.py     the columns of a row and run_task, one kernel on one arch on a worker
    sweep_rank.py     rank, best, format_ranking
    sweep_cli.py      `neuronsim sweep`
This module re-exports their public names (neuronsim.sweeps.rank, read_results...).
"""
import os

from . import _core
from ._errors import error as _error
from .dask_runner import (WORKER_BYTES, WORKERS_TIMEOUT_S, Results, local_worker_limit, read_rows,  # noqa: F401
                          results_paths, run_tasks)
from .sweep_kernels import ARCHS, KernelSpec, _sets_of, _with_sets, archs_of, kernels_of  # noqa: F401
from .sweep_rank import best, format_ranking, rank  # noqa: F401
from .sweep_rows import (COLUMN_NAMES, COLUMNS, ENGINES, NUMERIC_COLUMNS, _failed_row, run_task,  # noqa: F401
                         task_key)


def read_results(path):
    """The rows of a sweep's results CSV, typed as COLUMNS says. A last line without its newline (a write cut short)
    is left out."""
    return read_rows(path, COLUMNS)


def sweep(kernels, archs=None, *, timing_only=True, inputs=None, client=None, out=None, resume=False,
          workers=None, progress=None, on_row=None, cores=None, lnc=None, set=None, nki_args=None, grid=None):
    """Runs every kernel on every architecture, one Dask task each, and returns the rows (dicts keyed by
    COLUMN_NAMES) in order: kernels as given (a folder's in name order), each on `archs` in order.

    kernels      a kernel path (BIR JSON, workload folder, bundle folder), an NKI kernel FILE.py::FUNCTION, a folder
                 of kernels, LABEL=PATH, or a list of those; or a dict {label: path}. Labels NAME@VARIANT (or kernels found in one folder) make
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
    nki_args     what the NKI kernels (FILE.py::FUNCTION) are called with, as neuronsim.nki.tune takes its fixed
                 arguments: {name: numpy array | nki.tensor(shape, dtype) | a keyword's value}; each is traced on
                 each arch as `neuronsim nki --timing-only` traces it (numeric runs: on the arrays, generated data
                 for the shapes)
    grid         the NKI kernels' launch grid, as kernel[grid] (a tuple; nl.nc(2) for two cores)

    A run that fails gives a row with status "error", its message and the CLI's exit code; the sweep goes on.

    Example:
        >>> rows = neuronsim.sweep("workloads/kernel1", ["trn1", "trn2", "trn2+{dma_latency_ns=425}"])
        >>> [(r["arch"], r["total_ns"]) for r in rows]"""
    from .sweep_nki import nki_args_of

    return _sweep(kernels, archs, timing_only, inputs, client, out, resume, workers, progress, on_row, cores, lnc,
                  set, nki_args_of(nki_args, grid))[0]


def _optional_count(v, name):
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{name} must be an int or None, got {type(v).__name__} {v!r}")
    if v < 1:
        raise _error("UsageError", f"{name} must be at least 1, got {v}")
    return v


def _kernel_arch(k):
    """A kernel's own architecture when the sweep names none: an NKI kernel's (sweep_nki.check_kernel), else its
    folder's run.json's, else trn1. A run.json that does not read gives trn1 here, and the run's error row says
    why."""
    if k.nki_target:
        return k.own_arch
    try:
        return _core.run_config(k.path).get("arch", "trn1")
    except _core.Error:
        return "trn1"


def _sweep(kernels, archs, timing_only, inputs, client, out, resume, workers, progress, on_row, cores=None,
           lnc=None, sets=None, nki=None):
    """sweep(), and what the command line says of it: {"tasks", "resumed", "where", "files"}. nki: the NKI kernels'
    arguments (sweep_nki.NkiArgs)."""
    from .sweep_nki import NkiArgs, check_kernel, nki_reads

    ks = kernels_of(kernels)
    nki = nki or NkiArgs()
    if nki.given() and not any(k.nki_target for k in ks):
        raise _error("UsageError", "--shape / --input / --kwarg / --grid (nki_args, grid) are for NKI kernels "
                                   "(FILE.py::FUNCTION), and no kernel of the sweep is one")
    for k in ks:
        if k.nki_target:
            check_kernel(k, nki)
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
    tasks = [(k, a, timing_only, inputs, cores, lnc, nki if k.nki_target else None) for k in ks
             for a in (arch_list if arch_list is not None else [_with_sets(_kernel_arch(k), sets)])]
    return run_tasks(tasks, [(k.name, a, mode) for k, a, *_ in tasks], run_task, columns=COLUMNS,
                     row_key=lambda r: (r["kernel"], r["arch"], r["mode"]),
                     failed_row=lambda task, e: _failed_row(task[0], task[1], mode, e),
                     task_name=lambda task, token: task_key(task[0], task[1], mode, token),
                     out=out, resume=resume, client=client, workers=workers, progress=progress, on_row=on_row,
                     reads=[k.path for k in ks if os.path.isfile(k.path)] + _input_files(inputs) +
                     nki_reads(ks, nki))


def _input_files(inputs):
    """The .npy files `inputs` names (a folder's, or a dict's paths), which no results file may replace."""
    if isinstance(inputs, (str, os.PathLike)):
        return [os.path.join(inputs, f) for f in sorted(os.listdir(inputs))] if os.path.isdir(inputs) else []
    if isinstance(inputs, dict):
        return [os.fspath(v) for v in inputs.values() if isinstance(v, (str, os.PathLike))]
    return []
