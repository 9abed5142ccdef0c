"""A worker dies in the middle of a sweep (docs/sweeps.md, "On a cluster"): the sweep still completes, with every
row present once and right. A real dask-scheduler and two dask-worker processes without nannies (so a killed worker
stays dead) run every workload at full size (neuronsim_workload_gen; timing-only runs of up to a few tenths of a
second) on three architectures; when rows have started to arrive, one worker is stopped, the task it holds is
noted, and it is killed."""
import json
import os
import re
import signal
import subprocess
import time

import pytest
import neuronsim
from conftest import BUILD, CLI, SANITIZED
from neuronsim import sweeps
from sweep_support import rows_in

# Under the sanitizers (build-asan) the sweeps are not run: they add only Python around neuronsim.run, which the
# rest of the suite runs there, and Dask's processes under the ASan runtime would add minutes, nothing it could find.
pytestmark = pytest.mark.skipif(SANITIZED, reason="sweeps are pure Python over neuronsim.run (checked under ASan by "
                                                  "the rest of the suite)")

ARCHS = ["trn1", "trn2", "trn3"]


def test_a_worker_killed_mid_sweep(tmp, killable_cluster):
    subprocess.run([str(BUILD / "neuronsim_workload_gen"), "all", "--size", "full", "--bir-only", "-o",
                    str(tmp / "full")], check=True, stdout=subprocess.DEVNULL)
    kernels = sweeps.kernels_of(str(tmp / "full"))
    n = len(kernels) * len(ARCHS)
    cluster = killable_cluster
    address, client, workers = cluster.address, cluster.client, cluster.workers
    victim, survivor = cluster.by_name["w0"], cluster.by_name["w1"]
    out = tmp / "r.csv"
    sweep = subprocess.Popen([str(CLI), "sweep", str(tmp / "full"), "--arch", ",".join(ARCHS), "--scheduler",
                              address, "--workers", "2", "-o", str(out)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    cluster.procs.append(sweep)
    deadline = time.monotonic() + 120
    while rows_in(out) < 1 and sweep.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sweep.poll() is None and rows_in(out) < n, "the sweep ended before a worker could be killed"
    # Stopped, the victim can finish nothing more; what the scheduler still sees on it is lost with it.
    os.kill(workers[0].pid, signal.SIGSTOP)
    time.sleep(0.5)
    held = client.processing()[victim]
    assert held, "the stopped worker held no task"
    written_before = rows_in(out)
    os.kill(workers[0].pid, signal.SIGKILL)
    workers[0].wait()

    stdout, stderr = sweep.communicate(timeout=300)
    assert sweep.returncode == 0, stderr
    assert f"sweep: {n} tasks (0 resumed, {n} run on {address} (2 workers when it started)): {n} ok, 0 mismatch, " \
           "0 error;" in stdout
    assert written_before < n

    rows = sweeps.read_results(out)
    assert [json.loads(line) for line in (tmp / "r.jsonl").read_text().splitlines()] == rows
    keys = [(r["kernel"], r["arch"]) for r in rows]
    assert sorted(keys) == sorted((k.name, a) for k in kernels for a in ARCHS)  # each once: none lost, none twice
    # The tasks the victim held were run again, on the survivor; after the kill nothing came from the victim.
    lost = {re.fullmatch(r"sweep (.+) (trn\d) timing [0-9a-f]+", key).groups() for key in held}
    assert lost <= set(keys)
    for r in rows:
        if (r["kernel"], r["arch"]) in lost:
            assert r["worker"] == survivor
    assert all(r["worker"] == survivor for r in rows[written_before:])
    # And they say what a serial run says.
    for r in rows:
        stats = neuronsim.run(r["path"], arch=r["arch"], timing_only=True).stats
        assert (r["status"], r["total_ns"], r["dve_busy_ns"], r["pe_busy_ns"], r["dma_busy_ns"]) == \
               ("ok", stats["total_ns"], stats["engines"]["DVE"]["busy_ns"], stats["engines"]["PE"]["busy_ns"],
                stats["dma"]["busy_ns"])
