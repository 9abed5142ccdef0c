"""`neuronsim sweep` (the C++ command runs `python3 -m neuronsim sweep ...`): the command line over neuronsim.sweep."""
import argparse
import logging
import sys
import time

from . import kernel_args
from ._errors import command_exit, stdout_failed
from ._errors import error as _error
from .dask_runner import results_paths
from .sweep_nki import NkiArgs
from .sweep_rank import _plain_table, format_ranking, rank
from .sweep_rows import COLUMN_NAMES
from .sweeps import _sweep

HELP_EPILOG = """\
KERNEL_OR_DIR: a BIR JSON file, a workload folder, a bundle folder, a folder of kernels, an NKI kernel
FILE.py::FUNCTION (traced on each arch as `neuronsim nki` traces it, called with --shape / --input / --kwarg /
--grid; group FUNCTION, variant the file's name), or LABEL=PATH to name a kernel LABEL (an empty PATH is refused).
A folder is
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
    p.add_argument("--shape", action="append", default=[], metavar="NAME=DIMS[:DTYPE]", help="NKI kernels: a tensor "
                   "parameter by shape (as neuronsim nki and tune)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=X.npy", help="NKI kernels: a tensor "
                   "parameter's data")
    p.add_argument("--kwarg", action="append", default=[], metavar="NAME=VALUE", help="NKI kernels: a keyword "
                   "argument (a Python literal)")
    p.add_argument("--grid", metavar="DIMS", help="NKI kernels: the launch grid (as neuronsim nki)")
    a = None
    try:
        a = p.parse_args(argv)
        if a.rank_by:
            rank([], a.rank_by)  # checks the column before anything runs
        fixed, shapes, inputs, grid = kernel_args.parse_options(a.kwarg, a.shape, a.input, a.grid, "sweep")
        nki = NkiArgs(kernel_args.tensors_of(None, None, inputs, shapes, "sweep"), fixed, grid)
        start = time.perf_counter()
        rows, info = _sweep(a.kernels, a.arch, not a.numeric, a.inputs, a.scheduler, a.out, a.resume, a.workers,
                            None, None, a.cores, a.lnc, a.set, nki)
        elapsed = time.perf_counter() - start
    except (KeyboardInterrupt, Exception) as e:
        code = command_exit(e, "sweep", results_paths(a.out)[0] if a and a.out else None)
        if code is None:
            raise
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
        return stdout_failed(e, "the sweep's rows are in its results files, if any")
    return 0 if counts["ok"] == len(rows) else 1
