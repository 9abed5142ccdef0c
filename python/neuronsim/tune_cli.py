"""`neuronsim tune` (the C++ command runs `python3 -m neuronsim tune ...`): the command line over tune.py."""
import argparse
import logging
import os
import sys
import time

from . import _core, kernel_args
from ._errors import command_exit, stdout_failed
from ._errors import error as _error
from .tune import DEFAULT_ATOL, DEFAULT_RTOL, STATUSES, format_ranking, run
from .tune_work import COLUMNS, Spec, literal

HELP_EPILOG = """\
Every combination of the --param values is a candidate (the grid, in a stable order: the parameters in the order
given, the last varying fastest); --sample N --seed S takes N of them at random instead. Each candidate is traced,
lowered and timed as `neuronsim nki FILE.py::FUNCTION --timing-only --kwarg NAME=VALUE...` times it (its total_ns
is what that command reports). With --reference FILE.py::FUNCTION (a numpy function of the same inputs, returning
the outputs; it gets the tensors by name and the keywords it takes) each candidate also runs numerically on the
--input arrays (or generated ones of the --shape shapes, seeded by --seed as `neuronsim nki --seed`) and its outputs
are compared with the reference's (|got - want| <= atol + rtol * |want|).

Statuses: ok; wrong (outputs outside the tolerance: the worst element named); refused (the front end's KernelError /
Unsupported, or the simulator refusing the program, with its message: e.g. an SBUF overflow at that tile size);
error (an exception in the kernel's own code, with its file:line). One bad candidate never stops the others.

stdout: the ranking, best first: the parameters, total_ns, the speed-up against the slowest ok candidate and against
the grid's first candidate, the status, the verdict of its run (or why it is not ok).

--out DIR (default neuronsim-tune/): DIR/results.csv (and results.jsonl), one row per candidate in grid order,
appended as candidates finish, columns: one per parameter (its value as a Python literal), {columns};
DIR/tune.json records what the rows were measured on. An existing DIR/results.csv is refused unless --resume, which
reuses its rows when they were measured on the same kernel file contents, inputs and arch (otherwise exit 3,
saying what differs, the files left as they were).

Runs on Dask as `neuronsim sweep`: a local cluster of --workers processes by default (one per core), or the workers
of --scheduler tcp://HOST:PORT (each needs the neuronsim package and the kernel file at the same path); a killed
worker's candidates are rerun elsewhere.

exit codes: 0 at least one candidate ok, 1 none is, 2 usage (a --param without values, an unknown option), 3
invalid input (a --param or --kwarg naming a keyword the function does not take, a kernel file that does not
import), 130 interrupted (the rows so far stay in DIR; --resume continues)
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _error("UsageError", f"{message} (try neuronsim tune --help)", "tune")


def _usage(message):
    return _error("UsageError", message, "tune")


def split_values(text):
    """V1,V2,... -> the literals: commas inside brackets or quotes do not split ("(128,512),(64,1024)")."""
    out, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(text):
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def parse_param(text):
    """--param NAME=V1,V2,... -> (NAME, [values])."""
    name, eq, values = text.partition("=")
    if not eq or not name.isidentifier():
        raise _usage(f"--param takes NAME=V1,V2,... (e.g. TN=64,128,256), got '{text}'")
    if not values.strip():
        raise _usage(f"--param {name} has no values (NAME=V1,V2,...)")
    vals = []
    for v in split_values(values):
        if not v.strip():
            raise _usage(f"--param {name}: an empty value in '{values}'")
        try:
            vals.append(literal(v.strip()))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise _usage(f"--param {name}: '{v}' is not a Python literal (an int, float, bool, None, tuple, or a "
                         "string in quotes: NAME=\"'a','b'\")") from None
    return name, vals


def main(argv=None):
    """`neuronsim tune`. Returns the exit code."""
    logging.getLogger("distributed").setLevel(logging.ERROR)
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    names = ", ".join(n for n, _, _ in COLUMNS)
    p = _Parser(prog="neuronsim tune", allow_abbrev=False,
                description="Searches an NKI kernel's keyword parameters on the simulator: every candidate traced, "
                "lowered, timed and (with --reference) checked, on Dask; a ranking on stdout, a row per candidate "
                "in DIR/results.csv.",
                epilog=HELP_EPILOG.format(columns=names), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kernel", metavar="FILE.py::FUNCTION")
    p.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2,...", help="a keyword of the "
                   "function and its values, Python literals separated by commas outside brackets (repeatable)")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=DIMS[:DTYPE]", help="a tensor parameter "
                   "by shape (as neuronsim nki)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=X.npy", help="a tensor parameter's data")
    p.add_argument("--kwarg", action="append", default=[], metavar="NAME=VALUE", help="a fixed keyword argument "
                   "(a Python literal)")
    p.add_argument("--grid", metavar="DIMS", help="the launch grid (as neuronsim nki)")
    p.add_argument("--arch", default=None, metavar="NAME|FILE.json", help="the architecture (default: the "
                   "kernel's, else trn1)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an architecture parameter "
                   "(repeatable; neuronsim arch --keys)")
    p.add_argument("--reference", metavar="FILE.py::FUNCTION", help="a numpy function of the same inputs returning "
                   "the outputs: every candidate is also run numerically and compared")
    p.add_argument("--rtol", type=float, default=None, help=f"relative tolerance (default {DEFAULT_RTOL:g}, as run)")
    p.add_argument("--atol", type=float, default=None, help=f"absolute tolerance (default {DEFAULT_ATOL:g}, as run)")
    p.add_argument("--seed", type=int, default=0, help="seed of --sample and of generated inputs (default 0)")
    p.add_argument("--sample", type=int, metavar="N", help="N candidates drawn at random instead of the grid")
    p.add_argument("--out", default="neuronsim-tune", metavar="DIR", help="the results folder (default "
                   "neuronsim-tune/)")
    p.add_argument("--resume", action="store_true", help="reuse the rows in DIR/results.csv, run the missing ones")
    p.add_argument("--report", metavar="FILE.html", help="one self-contained page: every candidate's time, the "
                   "best one's profile")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask scheduler's workers")
    p.add_argument("--workers", type=int, metavar="N", help="local: worker processes (default: one per core); "
                   "with --scheduler: wait for N workers")
    p.add_argument("--max-instructions", type=int, metavar="N", help="bounds each candidate's trace and run "
                   "(as neuronsim nki)")
    a = None
    try:
        a = p.parse_args(argv)
        params = {}
        for text in a.param:
            name, vals = parse_param(text)
            if name in params:
                raise _usage(f"--param {name} given twice")
            params[name] = vals
        if not params:
            raise _usage("tune needs at least one --param NAME=V1,V2,...")
        if a.sample is not None and a.sample < 1:
            raise _usage(f"--sample takes a positive number, got {a.sample}")
        if a.seed < 0:
            raise _usage(f"--seed takes a whole number >= 0, got {a.seed}")
        for v, what in ((a.rtol, "--rtol"), (a.atol, "--atol")):
            if v is not None and not (v >= 0 and v != float("inf")):
                raise _usage(f"{what} takes a finite number >= 0, got {v}")
        if a.max_instructions is not None and a.max_instructions < 1:
            raise _usage(f"--max-instructions takes a positive number, got {a.max_instructions}")
        if a.reference is None and (a.rtol is not None or a.atol is not None):
            raise _usage("--rtol / --atol need --reference")
        fixed, shapes, inputs, grid = kernel_args.parse_options(a.kwarg, a.shape, a.input, a.grid, "tune")
        arch = a.arch
        if a.set:
            from .sweep_kernels import _with_sets

            arch = _with_sets(arch or "trn1", a.set)
        elif arch is not None:
            _core.arch_params(arch)  # an unknown arch is refused before anything runs
        if a.report:
            _core.check_output_paths([a.report], [a.kernel.rpartition("::")[0]])
        kernel_ref, kernel = kernel_args.load_kernel(a.kernel, "tune")
        from .tune import check_keywords

        check_keywords(kernel, list(fixed), "--kwarg", a.kernel)
        check_keywords(kernel, list(params), "--param", a.kernel)
        tensors = kernel_args.tensors_of(kernel, a.kernel, inputs, shapes, "tune")
        for name in fixed:
            if name in tensors:
                raise _usage(f"parameter '{name}' given both by --kwarg and by --input / --shape")
        kernel_args.check_required(kernel, tensors, fixed, params, "tune")
        ref = None
        if a.reference:
            ref, _ = kernel_args.load_kernel(a.reference, "tune")
        spec = Spec(kernel_ref, list(params), tensors, fixed, grid, arch, ref,
                    DEFAULT_RTOL if a.rtol is None else a.rtol, DEFAULT_ATOL if a.atol is None else a.atol, a.seed,
                    a.max_instructions)
        start = time.perf_counter()
        rows, info = run(spec, kernel, params, sample=a.sample, seed=a.seed, out=a.out, resume=a.resume,
                         client=a.scheduler, workers=a.workers)
        elapsed = time.perf_counter() - start
        if a.report:
            from .tune_report import write_report

            write_report(a.report, spec, rows, list(params))
    except (KeyboardInterrupt, Exception) as e:
        code = command_exit(e, "tune", os.path.join(a.out, "results.csv") if a else None)
        if code is None:
            raise
        return code
    counts = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
    try:
        sys.stdout.write(format_ranking(rows, list(params)))
        ran = len(rows) - info["resumed"]
        print(f"tune: {len(rows)} candidate{'s' if len(rows) != 1 else ''} ({info['resumed']} resumed, {ran} run"
              + (f" on {info['where']}" if info["where"] else "") + "): "
              + ", ".join(f"{counts[s]} {s}" for s in STATUSES) + f"; {elapsed:.1f} s")
        print(f"results: {info['files'][0]}" + (f"; report: {a.report}" if a.report else ""))
        sys.stdout.flush()
    except OSError as e:
        return stdout_failed(e, f"the rows are in {info['files'][0]}")
    return 0 if counts["ok"] else 1
