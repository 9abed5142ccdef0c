"""The tuner: an NKI kernel's keyword parameters searched on the simulator, every candidate traced, lowered, timed and
optionally checked against a numpy reference, on Dask (docs/tuning.md; `neuronsim tune`, tune_cli.py;
neuronsim.nki.tune).

    rows = neuronsim.nki.tune(kernel, tensor((128, 512)), params={"TN": [64, 128, 256]}, out="neuronsim-tune")

The candidates are the grid of the parameters' values (itertools.product in the order the parameters are given: the
last varies fastest), or `sample` of them drawn with `seed`. They run through the sweep's Dask runner
(dask_runner.run_tasks: a local cluster or a scheduler's workers, a killed worker's tasks rerun, rows appended to
DIR/results.csv and DIR/results.jsonl as they arrive, resume by the parameters' values); each candidate's work is
tune_work.run_candidate. DIR/tune.json records what the rows were measured on (the kernel file's contents, the
inputs, the arch, the fixed keywords, the reference, the tolerances), and resume refuses rows measured on anything
else.
"""
import hashlib
import inspect
import itertools
import json
import os
import random

import numpy as np

from ._errors import error as _error
from .dask_runner import results_paths, run_tasks
from .tune_work import COLUMNS, STATUSES, FunctionRef, Spec, file_sha256, literal, run_candidate

# run's default tolerance (--rtol / --atol, include/neuronsim/sim/run_settings.hpp kDefaultRtol / kDefaultAtol).
DEFAULT_RTOL, DEFAULT_ATOL = 1e-5, 1e-6
STATUS_ORDER = {s: i for i, s in enumerate(STATUSES)}


def _err(kind, message):
    return _error(kind, message, "tune")


def columns_of(params):
    """The CSV's columns: one per parameter (its value as a Python literal), then tune_work.COLUMNS."""
    return [(p, str, f"the value of parameter {p}, as a Python literal") for p in params] + COLUMNS


def candidates(params, sample=None, seed=0):
    """The candidates' values in grid order (itertools.product over params' values, params in the order given), or
    `sample` of them drawn at random with `seed`, kept in grid order."""
    grid = list(itertools.product(*params.values()))
    if sample is None or sample >= len(grid):
        return grid
    picked = sorted(random.Random(seed).sample(range(len(grid)), sample))
    return [grid[i] for i in picked]


def _check_params(params):
    if not isinstance(params, dict) or not params:
        raise _err("UsageError", "params needs at least one parameter: {\"NAME\": [values]}")
    out = {}
    for name, values in params.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise _err("UsageError", f"a parameter is a keyword name, got {name!r}")
        values = list(values) if isinstance(values, (list, tuple, range)) else None
        if not values:
            raise _err("UsageError", f"parameter {name} has no values")
        reprs = [repr(v) for v in values]
        for v, r in zip(values, reprs):
            try:
                if literal(r) != v:
                    raise ValueError
            except (ValueError, SyntaxError):
                raise _err("UsageError", f"parameter {name}: {v!r} is not a Python literal (int, float, str, bool, "
                                         "None, tuple)") from None
        if len(set(reprs)) != len(reprs):
            raise _err("UsageError", f"parameter {name} lists a value twice")
        out[name] = values
    return out


def _fingerprint(spec, kernel_fn, tensors):
    """What the rows are measured on, as recorded in DIR/tune.json: a resume with anything different is refused."""
    def file_of(ref):
        if ref.path:
            return {"file": ref.path, "sha256": file_sha256(ref.path), "function": ref.name}
        try:
            src = inspect.getsource(getattr(kernel_fn, "fn", kernel_fn) if ref is spec.kernel else ref.get())
        except (OSError, TypeError):
            src = ""
        return {"function": ref.name, "source_sha256": hashlib.sha256(src.encode()).hexdigest()}

    ins = {}
    for name, t in tensors.items():
        if t[0] == "array":
            a = np.ascontiguousarray(getattr(t[1], "bits", t[1]))
            ins[name] = {"array": list(a.shape), "dtype": str(a.dtype),
                         "sha256": hashlib.sha256(a.tobytes()).hexdigest()}
        elif t[0] == "file":
            ins[name] = {"file": t[1], "sha256": file_sha256(t[1]), "dtype": str(t[2]) if t[2] else None}
        else:
            ins[name] = {"shape": list(t[1]), "dtype": str(t[2])}
    from .nki.api import _placement

    # The arch the candidates run on: the one given, else the kernel's own (@nki.jit(platform_target=...), trn2 for
    # an nl.nc grid, trn1), as `neuronsim nki` picks it.
    arch = _placement(kernel_fn[spec.grid] if spec.grid else kernel_fn, spec.arch)["arch"]
    return {"kernel": file_of(spec.kernel), "inputs": ins, "arch": arch,
            "fixed": {k: repr(v) for k, v in sorted(spec.fixed.items())},
            "grid": repr(spec.grid) if spec.grid else None,
            "reference": file_of(spec.reference) if spec.reference else None,
            "rtol": spec.rtol, "atol": spec.atol, "seed": spec.seed, "max_instructions": spec.max_instructions}


_WHAT = {"kernel": "the kernel file's contents differ", "inputs": "the inputs differ", "arch": "the arch differs",
         "fixed": "the fixed keyword arguments (--kwarg) differ", "grid": "the launch grid differs",
         "reference": "the reference differs", "rtol": "--rtol differs", "atol": "--atol differs",
         "seed": "--seed differs", "max_instructions": "--max-instructions differs"}


def _resume_check(folder, fp):
    """resume: DIR/tune.json must say the rows were measured on what this run measures; InvalidInput (exit 3) naming
    what differs otherwise, before anything is written."""
    path = os.path.join(folder, "tune.json")
    csv_path = os.path.join(folder, "results.csv")
    if not os.path.exists(csv_path):
        return
    try:
        with open(path) as f:
            old = json.load(f)
    except FileNotFoundError:
        raise _err("InvalidInput", f"--resume: {path} is missing, so the rows of {csv_path} cannot be told to be of "
                                   "this kernel and inputs; remove the folder (or give another --out) to start over")
    except (OSError, ValueError) as e:
        raise _err("InvalidInput", f"--resume: {path} does not read ({e})")
    for key in _WHAT:
        if old.get(key) != fp.get(key):
            detail = ""
            if key == "kernel" and old.get(key, {}).get("file") == fp[key].get("file"):
                detail = f" ({fp[key].get('file')} changed since the rows were measured)"
            elif key in ("arch", "seed", "rtol", "atol"):
                detail = f" ({old.get(key)!r} then, {fp.get(key)!r} now)"
            raise _err("InvalidInput", f"--resume: {_WHAT[key]} from what the rows of {csv_path} were measured on"
                                       f"{detail}; those rows are left as they are (remove the folder, or give another "
                                       "--out, to start over)")


def _write_fingerprint(folder, fp):
    tmp = os.path.join(folder, "tune.json.tmp")
    with open(tmp, "w") as f:
        json.dump(fp, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, os.path.join(folder, "tune.json"))


def check_keywords(kernel_fn, names, option, label):
    """Every name is a keyword the kernel function takes: else InvalidInput (exit 3) naming it and its parameters."""
    from .kernel_args import check_keywords as check

    check(kernel_fn, names, option, label, "tune")


def run(spec, kernel_fn, params, *, sample=None, seed=0, out=None, resume=False, client=None, workers=None,
        progress=None, on_row=None, tensors=None):
    """Runs the candidates; returns (rows in grid order, with parameter values as Python values; info as
    run_tasks's, plus "candidates")."""
    params = _check_params(params)
    check_keywords(kernel_fn, list(params), "--param", spec.kernel.label)
    clash = [p for p in params if p in spec.fixed or p in spec.tensors]
    if clash:
        raise _err("UsageError", f"{clash[0]} is both a tuned parameter and a fixed argument")
    spec.params = list(params)
    cands = candidates(params, sample, seed)
    folder = None
    reads = [r.path for r in (spec.kernel, spec.reference) if r is not None and r.path]
    reads += [t[1] for t in spec.tensors.values() if t[0] == "file"]
    if out is not None:
        folder = os.fspath(out)
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise _err("InvalidInput", f"--out {folder}: not a folder")
        fp = _fingerprint(spec, kernel_fn, spec.tensors)
        csv_path = results_paths(os.path.join(folder, "results.csv"))[0]
        if resume:
            _resume_check(folder, fp)
        elif csv_path.exists():
            raise _err("UsageError", f"{csv_path} exists: --resume (resume=True) continues that tune; remove it or "
                                     "give another --out to start over")
        os.makedirs(folder, exist_ok=True)
        _write_fingerprint(folder, fp)
    names = spec.params
    rows, info = run_tasks(
        [(spec, c) for c in cands], [tuple(repr(v) for v in c) for c in cands], run_candidate,
        columns=columns_of(names), row_key=lambda r: tuple(r[p] for p in names),
        failed_row=lambda task, e: _failed_row(names, task[1], e),
        task_name=lambda task, token: f"tune {spec.kernel.name} {' '.join(map(repr, task[1]))} {token}",
        out=os.path.join(folder, "results.csv") if folder else None, resume=resume, client=client, workers=workers,
        progress=progress, on_row=on_row, what="tune", reads=reads)
    info["candidates"] = len(cands)
    if folder:
        _in_grid_order(info["files"], rows, columns_of(names), names)
    return [_typed(r, names) for r in rows], info


def _in_grid_order(files, rows, columns, names):
    """The results files rewritten with the rows in grid order (they were appended as candidates finished); rows of
    an earlier run's candidates outside this grid stay, after them."""
    from .dask_runner import _csv_line, _json_line, read_rows

    csv_path, json_path = files
    keys = {tuple(r[p] for p in names) for r in rows}
    kept = [r for r in read_rows(csv_path, columns, "tune") if tuple(r[p] for p in names) not in keys]
    every = list(rows) + kept
    cols = [c for c, _, _ in columns]
    for path, text in ((csv_path, _csv_line(dict(zip(cols, cols)), cols) + "".join(_csv_line(r, cols) for r in every)),
                       (json_path, "".join(_json_line(r, cols) for r in every))):
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, path)


def _failed_row(names, values, exc):
    """A candidate that did not run to its end (every worker that took it died, an import failed): an error row."""
    from ._errors import one_line

    row = {p: repr(v) for p, v in zip(names, values)}
    row.update(total_ns=None, status="error", max_abs_err=None, verdict=None,
               message=f"{type(exc).__name__}: {one_line(exc)}")
    return row


def _typed(row, names):
    out = dict(row)
    for p in names:
        out[p] = literal(row[p])
    return out


def rank(rows):
    """The rows best first: ok by time, then wrong by time, then refused and error in grid order."""
    order = {id(r): i for i, r in enumerate(rows)}
    return sorted(rows, key=lambda r: (STATUS_ORDER.get(r["status"], 9),
                                       r["total_ns"] if r["status"] in ("ok", "wrong") and r["total_ns"] is not None
                                       else 0.0, order[id(r)]))


def speedups(rows):
    """(slowest ok candidate's total_ns or None, the first candidate's total_ns or None): the ranking's baselines."""
    ok = [r["total_ns"] for r in rows if r["status"] == "ok" and r["total_ns"]]
    first = rows[0]["total_ns"] if rows and rows[0]["total_ns"] else None
    return (max(ok) if ok else None), first


def format_ranking(rows, names):
    """The ranking as the command prints it: best first, a column per parameter, the time, the speed-ups against the
    slowest ok candidate and the grid's first candidate, the status and the verdict (or the message)."""
    slowest, first = speedups(rows)
    header = ["#"] + list(names) + ["total_ns", "vs slowest", "vs first", "status", "verdict / message"]
    table = []
    for i, r in enumerate(rank(rows), start=1):
        t = r["total_ns"]
        timed = t is not None and r["status"] in ("ok", "wrong")
        table.append([str(i)] + [repr(r[p]) for p in names] +
                     [f"{t:.1f}" if timed else "-",
                      f"{slowest / t:.2f}x" if timed and slowest else "-",
                      f"{first / t:.2f}x" if timed and first else "-",
                      r["status"],
                      (r["verdict"] or "") if r["status"] == "ok" else (r["message"] or "")])
    widths = [max(len(row[i]) for row in [header] + table) for i in range(len(header) - 1)]
    lines = []
    for row in [header] + table:
        cells = [c.rjust(w) if c[:1].isdigit() or c[:1] in "-(" else c.ljust(w) for c, w in zip(row, widths)]
        lines.append("  ".join(cells + [row[-1]]).rstrip())
    return "\n".join(lines) + "\n"


def _tensor_entry(x):
    """A kernel argument that is a tensor, as Spec.tensors holds it, else None."""
    from .nki.api import TensorSpec, TypedArray
    from .nki import typing as nki_typing

    if isinstance(x, (np.ndarray, TypedArray)):
        return ("array", x)
    if isinstance(x, (TensorSpec, nki_typing.Placeholder)):
        return ("shape", tuple(x.shape), x.dtype)
    return None


def tune(kernel, *arrays_or_tensors, params, arch="trn1", reference=None, client=None, out=None, resume=False,
         sample=None, seed=0, rtol=None, atol=None, workers=None, progress=None, report=None, **fixed_kwargs):
    """neuronsim.nki.tune: every candidate of `params` ({name: [values]}, the grid) traced, lowered and timed, and
    with `reference` (a numpy function of the same inputs returning the outputs) run on the inputs given (or
    generated ones of the given shapes, `seed`) and compared (rtol / atol, defaults as run's). Returns the rows
    (dicts keyed as DIR/results.csv: one key per parameter, total_ns, status, max_abs_err, verdict, message), best
    first. docs/tuning.md.

    kernel             a @nki.jit kernel or a plain function (a module-level function of a file is loaded from that
                       file on the workers; one of the calling script is sent by value)
    arrays_or_tensors  the kernel's tensor arguments, in order: numpy arrays, or nki.tensor(shape, dtype)
    params             {name: [values]}: keywords of the kernel function, values Python literals
    arch               the architecture ("trn1", "trn2", "trn3", an arch file, "trn2+{dma_latency_ns=425}")
    client             a dask.distributed.Client or a scheduler address; None: a local cluster of `workers`
    out                a folder: results.csv / results.jsonl appended as candidates finish, tune.json (what they were
                       measured on); resume=True keeps its rows when they were measured on the same kernel file,
                       inputs and arch (else InvalidInput, the files left as they are)
    sample, seed       `sample` candidates drawn at random with `seed` instead of the whole grid; `seed` also seeds
                       generated inputs
    report             a path: one self-contained HTML page (every candidate's time, the best one's profile)
    fixed_kwargs       the kernel's other arguments: fixed keywords, or tensors by name

    Example:
        >>> rows = nki.tune(matmul, nki.tensor((128, 128), nl.bfloat16), nki.tensor((128, 256), nl.bfloat16),
        ...                 params={"TN": [64, 128]})
        >>> rows[0]["TN"], rows[0]["total_ns"]"""
    from .nki.api import _as_kernel

    k = _as_kernel(kernel)
    sig = inspect.signature(k.fn)
    try:
        bound = sig.bind_partial(*arrays_or_tensors)
    except TypeError as e:
        raise _err("UsageError", f"{k.fn.__name__}: {e}") from None
    tensors, fixed = {}, {}
    for name, v in list(bound.arguments.items()) + list(fixed_kwargs.items()):
        entry = _tensor_entry(v)
        if entry is not None:
            tensors[name] = entry
        else:
            fixed[name] = v
    check_keywords(k, [n for n in fixed_kwargs if n not in bound.arguments], "keyword", k.label)
    ref = FunctionRef.of(reference) if reference is not None else None
    spec = Spec(FunctionRef.of(kernel), list(params or {}), tensors, fixed, k.grid, arch, ref,
                DEFAULT_RTOL if rtol is None else float(rtol), DEFAULT_ATOL if atol is None else float(atol),
                int(seed), None)
    rows, _ = run(spec, k, params, sample=sample, seed=seed, out=out, resume=resume, client=client, workers=workers,
                  progress=progress)
    ranked = rank(rows)
    if report is not None:
        from .tune_report import write_report

        write_report(report, spec, rows, list(params))
    return ranked
