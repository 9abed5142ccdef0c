"""A sweep's rows: the columns (COLUMNS, documented in docs/sweeps.md) and run_task, the work of one task on a Dask
worker -- one kernel on one architecture, neuronsim.run, its stats as a row (an error row when the run fails)."""
import socket
import time

from . import _core
from ._errors import one_line as _one_line

ENGINES = ("PE", "ACT", "POOL", "DVE", "SP")

# The columns of a row, in the order the CSV and each JSON line give them. docs/sweeps.md lists them (a test holds
# the two together). The type says how a CSV cell reads back; an empty cell (JSON null) is "no value".
COLUMNS = [
    ("kernel", str, "the kernel as named: the path (or FILE.py::FUNCTION) as given (a folder's kernels: "
                    "FOLDER/NAME), or LABEL of LABEL=PATH"),
    ("path", str, "its absolute path, which the workers read (an NKI kernel: the file's, then ::FUNCTION)"),
    ("group", str, "NAME of a kernel named NAME@VARIANT, else the folder it was found in, else (an NKI kernel) its "
                   "function, else its own name"),
    ("variant", str, "VARIANT of NAME@VARIANT, else its name in that folder, else (an NKI kernel) its file's name; "
                     "empty for a kernel on its own"),
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
    # An NKI kernel's failure names what the tracer raised (KernelError, Unsupported, the kernel's own exception).
    row.update(status="error", exit_code=exit_code, error_type=getattr(exc, "kind", None) or type(exc).__name__,
               error=_one_line(exc))
    return row


def run_task(kernel, arch, timing_only, inputs=None, cores=None, lnc=None, nki=None):
    """Runs one kernel on one architecture (neuronsim.run; an NKI kernel traced first, sweep_nki.run_nki, called
    with `nki`) and returns its row; a failing run gives an error row. cores / lnc None: the kernel's own
    (run.json, else what it names), as `neuronsim run`."""
    mode = "timing" if timing_only else "numeric"
    start = time.perf_counter()
    try:
        if kernel.nki_target:
            from .sweep_nki import run_nki

            r = run_nki(kernel, arch, timing_only, nki, cores, lnc)
        else:
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
