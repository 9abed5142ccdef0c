"""Sweeps on a real Dask cluster: a dask-scheduler and two dask-worker processes on localhost, started with the
README's commands ("Sweeps", "On a cluster") on a free port. Every workload on three architectures gives exactly
what the serial CLI gives; failures and mismatches are rows with the CLI's messages; --resume runs only what is
missing; the progress bar shows on a terminal only."""
import json
import os
import pathlib
import pty
import re
import shutil
import signal
import subprocess
import tempfile
import time

import numpy as np
import pytest
from distributed import Client

import neuronsim
from conftest import BUILD, CLI, ROOT, SANITIZED, WORKLOADS, cli, cli_error
from neuronsim import sweeps
from sweep_support import free_port, in_readme_folder, readme_cluster_commands, run_sh, start, stop, wait_for_port

# Under the sanitizers (build-asan) the sweeps are not run: they add only Python around neuronsim.run, which the
# rest of the suite runs there, and Dask's processes under the ASan runtime would add minutes, nothing it could find.
pytestmark = pytest.mark.skipif(SANITIZED, reason="sweeps are pure Python over neuronsim.run (checked under ASan by "
                                                  "the rest of the suite)")

ARCHS = ["trn1", "trn2", "trn3"]


@pytest.fixture(scope="module")
def cluster():
    """(scheduler address, the README's sweep line for it). The scheduler and the two workers are stopped after
    the module's tests, also when one fails."""
    port = free_port()
    scheduler_line, workers_line, sweep_line = readme_cluster_commands(port)
    logdir = pathlib.Path(tempfile.mkdtemp(prefix="neuronsim-pytest-cluster-"))
    procs = []
    log = open(logdir / "cluster.log", "w")
    try:
        procs.append(start(scheduler_line, log))
        wait_for_port(port, procs[0], logdir / "cluster.log")
        procs.append(start(workers_line, log))
        address = f"tcp://127.0.0.1:{port}"
        with Client(address, timeout="60s", set_as_default=False) as c:
            c.wait_for_workers(2, timeout=120)
            assert len(c.scheduler_info()["workers"]) == 2
        yield address, sweep_line
    finally:
        stop(procs)
        log.close()
        shutil.rmtree(logdir, ignore_errors=True)


def serial_stats(kernel, arch, tmp):
    """`neuronsim run KERNEL --arch A --timing-only --stats` read back."""
    cli("run", kernel, "--arch", arch, "--timing-only", "--stats", tmp / "s.json")
    return json.loads((tmp / "s.json").read_text())


def same_as_cli(row, stats):
    """A row says what the CLI's --stats says, exactly (floats compared bit for bit)."""
    assert row["total_ns"] == stats["total_ns"]
    assert row["dynamic_instructions"] == stats["dynamic_instructions"]
    assert row["bottleneck"] == stats["bottleneck"]
    for e in sweeps.ENGINES:
        assert row[f"{e.lower()}_busy_ns"] == stats["engines"][e]["busy_ns"], e
        assert row[f"{e.lower()}_util"] == stats["engines"][e]["utilization"], e
    queues = stats["dma"]["queues"]
    assert row["dma_busy_ns"] == stats["dma"]["busy_ns"]
    assert row["dma_util"] == sum(q["utilization"] for q in queues) / len(queues)
    assert (row["status"], row["exit_code"], row["error"], row["mode"]) == ("ok", 0, None, "timing")


def test_every_workload_on_three_archs_equals_the_serial_cli(cluster, tmp):
    """The README's cluster sweep, run as written: 12 workloads x 3 archs, each row exactly the CLI's."""
    _, sweep_line = cluster
    in_readme_folder(tmp)
    r = run_sh(sweep_line, tmp)
    assert r.returncode == 0, r.stderr
    n = 3 * len(WORKLOADS)
    assert f"sweep: {n} tasks (0 resumed, {n} run on {cluster[0]} (2 workers when it started)): {n} ok" in r.stdout
    rows = sweeps.read_results(tmp / "all.csv")
    assert [json.loads(line) for line in (tmp / "all.jsonl").read_text().splitlines()] == rows
    assert sorted((x["kernel"], x["arch"]) for x in rows) == sorted(
        (f"workloads/{w}", a) for w in WORKLOADS for a in ARCHS)  # each once
    assert len({x["worker"] for x in rows}) == 2  # both workers ran some
    (tmp / "serial").mkdir()
    for x in rows:
        assert x["path"] == str(ROOT / x["kernel"])
        same_as_cli(x, serial_stats(x["kernel"], x["arch"], tmp / "serial"))

    # The Python form on the same scheduler gives the same rows, in task order.
    again = neuronsim.sweep(str(ROOT / "workloads"), ARCHS, client=cluster[0])
    assert [(x["kernel"], x["arch"]) for x in again] == [(str(ROOT / "workloads" / w), a) for w in WORKLOADS
                                                          for a in ARCHS]
    by_key = {(x["path"], x["arch"]): x for x in rows}
    skip = {"kernel", "wall_s", "worker"}
    for x in again:
        assert {k: v for k, v in x.items() if k not in skip} == \
               {k: v for k, v in by_key[(x["path"], x["arch"])].items() if k not in skip}


def test_failed_runs_are_rows_with_the_cli_message_and_exit_code(cluster, tmp):
    bad = [ROOT / "tests/cli/bad_inputs/ap_outside_tensor.bir.json", ROOT / "tests/cli/bad_inputs/bundle_deadlock"]
    kernels = [str(ROOT / "workloads/kernel1")] + [str(p) for p in bad]
    rows = neuronsim.sweep(kernels, client=cluster[0], out=tmp / "r.csv")
    assert rows[0]["status"] == "ok"
    for r, path, cls in zip(rows[1:], bad, ["InvalidInput", "SimulationError"]):
        code, message = cli_error("run", path, "--timing-only")
        assert (r["status"], r["exit_code"], r["error_type"], r["error"]) == ("error", code, cls, message)
        assert r["total_ns"] is None and r["bottleneck"] is None
    assert [x["exit_code"] for x in rows] == [0, 3, 4]
    written = sweeps.read_results(tmp / "r.csv")  # in the order the runs finished
    assert sorted(written, key=lambda x: x["kernel"]) == sorted(rows, key=lambda x: x["kernel"])
    # The command goes on past them too, and says so in its exit code.
    r = subprocess.run([str(CLI), "sweep", *kernels, "--scheduler", cluster[0]], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1 and "3 tasks (0 resumed, 3 run" in r.stdout and ": 1 ok, 0 mismatch, 2 error;" in r.stdout


def test_numeric_runs_report_the_comparison(cluster, tmp):
    """kernel1 computes b = a - 1 and its expected/ holds that of its inputs/: other inputs make it a mismatch,
    reported with the CLI's MISMATCH line."""
    (tmp / "in").mkdir()
    np.save(tmp / "in/a.npy", np.full((10, 10), 5, np.float32))
    kernel = str(ROOT / "workloads/kernel1")
    seen = []
    with Client(cluster[0], set_as_default=False) as c:  # the caller's client: used, and left open
        ok, = neuronsim.sweep(kernel, client=c, workers=2, timing_only=False, on_row=seen.append)
        assert c.status == "running" and len(c.scheduler_info()["workers"]) == 2
    assert seen == [ok]
    assert (ok["mode"], ok["status"], ok["exit_code"], ok["expect"], ok["mismatches"], ok["first_mismatch"]) == \
           ("numeric", "ok", 0, "pass", 0, None)
    assert ok["unwritten"] == 0  # kernel1 writes all of b
    bad, = neuronsim.sweep(kernel, client=cluster[0], timing_only=False, inputs=tmp / "in")
    r = cli("run", kernel, "--inputs", tmp / "in", "--outdir", tmp / "o", check=False)
    (line,) = [x for x in r.stdout.splitlines() if x.startswith("MISMATCH")]
    assert r.returncode == 1
    assert (bad["status"], bad["exit_code"], bad["expect"], bad["mismatches"], bad["first_mismatch"]) == \
           ("mismatch", 1, "fail", 1, line)
    assert bad["total_ns"] == ok["total_ns"]


def test_resume_runs_only_the_missing_rows(cluster, tmp):
    kernels = [f"workloads/{w}" for w in ("kernel1", "softmax", "cumsum", "transpose")]
    args = [*kernels, "--arch", "trn1,trn2", "--scheduler", cluster[0], "-o", tmp / "r.csv"]
    r = subprocess.run([str(CLI), "sweep", *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    full = sweeps.read_results(tmp / "r.csv")
    assert len(full) == 8
    # An interrupted sweep: five rows written, the sixth cut short; the JSON lines one row behind.
    lines = (tmp / "r.csv").read_text().splitlines(keepends=True)
    (tmp / "r.csv").write_text("".join(lines[:6]) + lines[6][:25])
    (tmp / "r.jsonl").write_text("".join((tmp / "r.jsonl").read_text().splitlines(keepends=True)[:4]))
    kept = full[:5]

    r = subprocess.run([str(CLI), "sweep", *map(str, args), "--resume"], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "sweep: 8 tasks (5 resumed, 3 run on " in r.stdout
    rows = sweeps.read_results(tmp / "r.csv")
    assert rows[:5] == kept  # kept as they were (wall_s, worker: not run again)
    assert sorted((x["kernel"], x["arch"]) for x in rows) == sorted((k, a) for k in kernels for a in ("trn1", "trn2"))
    assert [json.loads(line) for line in (tmp / "r.jsonl").read_text().splitlines()] == rows
    done = {(x["kernel"], x["arch"]): x for x in full}
    for x in rows[5:]:
        skip = {"wall_s", "worker"}
        assert {k: v for k, v in x.items() if k not in skip} == \
               {k: v for k, v in done[(x["kernel"], x["arch"])].items() if k not in skip}

    # Nothing missing: nothing runs, and the scheduler is not even asked.
    r = subprocess.run([str(CLI), "sweep", *map(str, args[:-4]), "--scheduler", "tcp://127.0.0.1:1", "-o",
                        str(tmp / "r.csv"), "--resume"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "sweep: 8 tasks (8 resumed, 0 run): 8 ok" in r.stdout, r.stderr
    # Without --resume the results are refused, not overwritten.
    before = (tmp / "r.csv").read_text()
    r = subprocess.run([str(CLI), "sweep", *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "exists: --resume" in r.stderr
    assert (tmp / "r.csv").read_text() == before


def run_on_a_terminal(args):
    """The command with stdout on a pseudo-terminal; (exit code, what it wrote there)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.execv(str(CLI), [str(CLI), *args])
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def test_the_progress_bar_shows_on_a_terminal(cluster):
    """On a pipe there is none: every other test here compares what the command prints with the expected text."""
    code, out = run_on_a_terminal(["sweep", "workloads/kernel1", "workloads/softmax", "--arch", "trn1,trn2",
                                   "--scheduler", cluster[0]])
    assert code == 0, out
    assert re.search(r"\[#+\] \| 100% Completed", out), out  # Dask's TextProgressBar


def test_an_interrupted_sweep_keeps_its_rows_and_resume_finishes_it(cluster, tmp):
    """Ctrl-C in the middle of a sweep of the full-size workloads (runs of up to a few tenths of a second): the rows
    written so far stay, whole, and --resume runs exactly the others."""
    subprocess.run([str(BUILD / "neuronsim_workload_gen"), "all", "--size", "full", "--bir-only", "-o",
                    str(tmp / "full")], check=True, stdout=subprocess.DEVNULL)
    n = 3 * len(sweeps.kernels_of(str(tmp / "full")))
    args = [str(CLI), "sweep", str(tmp / "full"), "--arch", "trn1,trn2,trn3", "--scheduler", cluster[0], "-o",
            str(tmp / "r.csv")]
    sweep = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while len((tmp / "r.csv").read_text().splitlines() if (tmp / "r.csv").exists() else []) < 3 and \
                sweep.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sweep.poll() is None, "the sweep ended before it could be interrupted"
        sweep.send_signal(signal.SIGINT)
        _, stderr = sweep.communicate(timeout=120)
    finally:
        if sweep.poll() is None:
            sweep.kill()
            sweep.wait()
    assert (sweep.returncode, stderr) == (130, f"neuronsim: sweep interrupted; the rows so far are in {tmp}/r.csv "
                                               "(--resume continues)\n")
    kept = sweeps.read_results(tmp / "r.csv")
    assert 2 <= len(kept) < n and (tmp / "r.csv").read_text().endswith("\n")
    assert [json.loads(line) for line in (tmp / "r.jsonl").read_text().splitlines()] == kept

    r = subprocess.run(args + ["--resume"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert f"sweep: {n} tasks ({len(kept)} resumed, {n - len(kept)} run on " in r.stdout
    rows = sweeps.read_results(tmp / "r.csv")
    assert rows[: len(kept)] == kept and len({(x["kernel"], x["arch"]) for x in rows}) == len(rows) == n
