"""A worker dies in the middle of a tune (docs/tuning.md, "On a cluster"): every candidate still ends as one row, run
again on the surviving worker. A real dask-scheduler and two dask-worker processes without nannies (a killed worker
stays dead) run `neuronsim tune --scheduler`; each candidate sleeps while it is traced (the test kernel's SLEEP), so
that when rows have started to arrive the stopped worker still holds one, which is noted before it is killed."""
import csv
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import CLI, ROOT, SANITIZED
from sweep_support import rows_in

pytestmark = pytest.mark.skipif(SANITIZED, reason="the tuner is pure Python over neuronsim.run")

KERNEL = ROOT / "tests" / "python" / "nki_kernels" / "tune_scale.py"


def test_a_worker_killed_mid_tune(tmp, killable_cluster):
    cluster = killable_cluster
    address, client, workers, victim = cluster.address, cluster.client, cluster.workers, cluster.by_name["w0"]
    out = tmp / "t"
    tiles = [16, 32, 64, 128, 256, 512]
    tune = subprocess.Popen([str(CLI), "tune", f"{KERNEL}::scale", "--shape", "x=128x512", "--kwarg", "SLEEP=1.0",
                             "--param", "TILE=" + ",".join(map(str, tiles)), "--scheduler", address, "--workers",
                             "2", "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cluster.procs.append(tune)
    deadline = time.monotonic() + 120
    while rows_in(out / "results.csv") < 1 and tune.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert tune.poll() is None and rows_in(out / "results.csv") < len(tiles), "the tune ended too soon"
    os.kill(workers[0].pid, signal.SIGSTOP)
    time.sleep(0.3)
    held = client.processing()[victim]
    assert held, "the stopped worker held no candidate"
    os.kill(workers[0].pid, signal.SIGKILL)
    workers[0].wait()
    stdout, stderr = tune.communicate(timeout=300)
    assert tune.returncode == 0, stderr
    assert f"tune: {len(tiles)} candidates (0 resumed, {len(tiles)} run on {address}" in stdout
    assert f"{len(tiles)} ok, 0 wrong, 0 refused, 0 error" in stdout
    with open(out / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["TILE"]) for r in rows] == tiles and all(r["status"] == "ok" for r in rows)
    lost = {int(re.fullmatch(r"tune scale (\d+) [0-9a-f]+", key).group(1)) for key in held}
    assert lost and lost <= set(tiles)
