#!/usr/bin/python3
"""The sweep's speed-up (project issue 19, docs/sweeps.md): the same (kernel, arch) runs one after the other and as
a sweep on a local Dask cluster.

    PYTHONPATH=build/python /usr/bin/python3 bench/sweep_vs_serial.py BUILD_DIR [REPS]     (default REPS = 5)

Two sets of 12 kernels x trn1, trn2, trn3 (36 runs), all timing-only: the workloads as checked in (small sizes,
milliseconds each), and at full size (neuronsim_workload_gen --size full --bir-only, plus kernel1; up to ~0.3 s
each). For each set, the median over REPS repetitions (each times the four in turn) of:
  serial CLI       36 x `neuronsim run K --arch A --timing-only`, one after the other
  serial Python    36 x neuronsim.run in this process
  sweep (CLI)      `neuronsim sweep ... -o F`: starts a LocalCluster (one worker process per core), runs, stops it
  sweep (warm)     neuronsim.sweep(..., client=) on a LocalCluster already running
Prints a markdown table with the speed-ups: serial CLI / sweep, serial Python / warm sweep.
"""
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from distributed import Client, LocalCluster

import neuronsim

ARCHS = ["trn1", "trn2", "trn3"]


def timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def measure(build, folder, client, work, reps):
    """(serial CLI, serial Python, sweep CLI, sweep warm) median seconds for every kernel of `folder` x ARCHS."""
    cli = str(build / "neuronsim")
    kernels = [k.path for k in neuronsim.sweeps.kernels_of(folder)]
    runs = [(k, a) for k in kernels for a in ARCHS]

    def serial_cli():
        for k, a in runs:
            subprocess.run([cli, "run", k, "--arch", a, "--timing-only"], check=True, stdout=subprocess.DEVNULL)

    def serial_python():
        for k, a in runs:
            neuronsim.run(k, arch=a, timing_only=True)

    def sweep_cli():
        out = work / "results"
        for p in neuronsim.sweeps.results_paths(out):
            p.unlink(missing_ok=True)
        subprocess.run([cli, "sweep", folder, "--arch", ",".join(ARCHS), "-o", str(out)], check=True,
                       stdout=subprocess.DEVNULL, env=dict(os.environ, DASK_TEMPORARY_DIRECTORY=str(work)))

    def sweep_warm():
        rows = neuronsim.sweep(folder, ARCHS, client=client)
        assert all(r["status"] == "ok" for r in rows)

    neuronsim.run(kernels[0], timing_only=True)  # elaborates this process's SystemC core
    sweep_warm()  # every worker imports neuronsim
    # Each repetition times the four one after the other, so that each sees much the same load from other jobs.
    times = [[timed(f) for f in (serial_cli, serial_python, sweep_cli, sweep_warm)] for _ in range(reps)]
    return len(runs), [statistics.median(t[i] for t in times) for i in range(4)]


def main():
    build = pathlib.Path(sys.argv[1]).resolve()
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    root = pathlib.Path(__file__).resolve().parents[1]
    work = pathlib.Path(tempfile.mkdtemp(prefix="neuronsim-bench-sweep-"))
    cluster = client = None
    try:
        subprocess.run([str(build / "neuronsim_workload_gen"), "all", "--size", "full", "--bir-only", "-o",
                        str(work / "full")], check=True, stdout=subprocess.DEVNULL)
        shutil.copytree(root / "workloads/kernel1", work / "full/kernel1")
        n = len(os.sched_getaffinity(0))
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                               scheduler_kwargs={"dashboard_address": ":0"}, local_directory=str(work))
        client = Client(cluster, set_as_default=False)
        print(f"{n} local workers, median of {reps}")
        print("| kernels | runs | serial CLI (s) | serial Python (s) | sweep, CLI with cluster start (s) | sweep, warm "
              "cluster (s) | serial CLI / sweep (cold, warm) | serial Python / sweep (warm) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for label, folder in (("workloads/ (small)", str(root / "workloads")), ("full size", str(work / "full"))):
            runs, t = measure(build, folder, client, work, reps)
            print(f"| {label} | {runs} | {t[0]:.2f} | {t[1]:.2f} | {t[2]:.2f} | {t[3]:.2f} | "
                  f"{t[0] / t[2]:.2f}x, {t[0] / t[3]:.2f}x | {t[1] / t[3]:.2f}x |", flush=True)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
        shutil.rmtree(work, ignore_errors=True)


# Dask's local workers are spawned processes that import this script again: only the real run measures.
if __name__ == "__main__":
    main()
