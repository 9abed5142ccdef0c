"""Shared fixtures of the Python suite (run by ctest: one entry per test_*.py, see CMakeLists.txt).

ctest sets PYTHONPATH to build/python and names the CLI binary and the build folder; run by hand from the checkout:
    PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python
"""
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("NEURONSIM_BUILD_DIR", ROOT / "build")).resolve()
CLI = pathlib.Path(os.environ.get("NEURONSIM_BINARY", BUILD / "neuronsim"))
KERNEL_SIM = pathlib.Path(os.environ.get("NEURONSIM_TEST_KERNEL_SIM", BUILD / "neuronsim_test_kernel_sim"))
WORKLOADS = sorted(p.name for p in (ROOT / "workloads").iterdir() if list(p.glob("*.bir.json")))
# Children (examples, the CLI) run from other folders: a relative PYTHONPATH (build/python) must stay valid there.
os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                          if p)
# The ASan tree (NEURONSIM_SANITIZE=ON) runs the module with the sanitizer runtime preloaded into the interpreter.
SANITIZED = os.environ.get("NEURONSIM_SANITIZE") == "1"
# The workloads the parity tests run under ASan: the instrumented tree already runs every workload through the C++
# suite (tests/workloads); here a few that between them reach every binding (outputs, stats, a long critical path)
# keep the sanitizer stage of .ci/run inside its time.
PARITY_WORKLOADS = ["attention", "kernel1", "matmul_tiled", "softmax"] if SANITIZED else WORKLOADS
# What a child interpreter started with a clean environment still needs (the sanitizer runtime there).
SANITIZER_ENV = {k: v for k, v in os.environ.items() if k in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")}


@pytest.fixture
def tmp():
    """A fresh folder, removed after the test (pytest's own tmp_path keeps the last runs' folders)."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="neuronsim-pytest-"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def dask_scratch():
    """Dask workers the tests start (test_sweep*.py) keep their scratch space (dask-worker-space) in a folder removed
    at the end, not in /tmp: a worker killed on purpose cannot clean up after itself."""
    d = tempfile.mkdtemp(prefix="neuronsim-pytest-dask-")
    old = os.environ.get("DASK_TEMPORARY_DIRECTORY")
    os.environ["DASK_TEMPORARY_DIRECTORY"] = d
    try:
        yield d
    finally:
        if old is None:
            del os.environ["DASK_TEMPORARY_DIRECTORY"]
        else:
            os.environ["DASK_TEMPORARY_DIRECTORY"] = old
        shutil.rmtree(d, ignore_errors=True)




@pytest.fixture(scope="module")
def client():
    """A local Dask cluster of two single-threaded worker processes for one test module (test_tune.py,
    test_sweep_nki.py): the CLI reaches it with --scheduler client.scheduler.address."""
    import logging

    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": ":0"}, silence_logs=logging.ERROR) as cluster, \
            Client(cluster, set_as_default=False) as c:
        yield c

@pytest.fixture
def killable_cluster(tmp):
    """A scheduler and two workers a test may kill (sweep_support.KillableCluster: test_sweep_fault.py,
    test_tune_cluster.py); its client closed, its processes stopped and its log closed at the test's end."""
    from sweep_support import KillableCluster, stop

    procs, cluster = [], None
    log = open(tmp / "cluster.log", "w")
    try:
        cluster = KillableCluster(tmp, procs, log)
        yield cluster
    finally:
        if cluster is not None:
            cluster.client.close()
        stop(procs)
        log.close()


def cli(*args, check=True):
    """Runs the `neuronsim` command from the checkout; returns the CompletedProcess (text)."""
    r = subprocess.run([str(CLI), *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    if check and r.returncode != 0:
        raise AssertionError(f"neuronsim {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")
    return r


def cli_error(*args):
    """The CLI's exit code and its one-line message (stderr without the "neuronsim: " prefix)."""
    r = cli(*args, check=False)
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and len(lines) == 1 and lines[0].startswith("neuronsim: "), (r.returncode, r.stderr)
    return r.returncode, lines[0][len("neuronsim: "):]


if SANITIZED:
    # Under ASan each test runs in a child process forked for it, so a sanitizer report (build-asan/asan-report.<pid>,
    # .ci/run) belongs to one test. (It began as the way around the false stack-buffer-overflow that Debian's
    # SystemC, which switches stacks without telling the sanitizer, caused after an exception; the ASan tree now has
    # no stack redzones, CMakeLists.txt, and the tests that were skipped for it run here.)
    import traceback

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(pyfuncitem):
        args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            verdict = ""
            try:
                pyfuncitem.obj(**args)
            except pytest.skip.Exception as e:
                verdict = "skip:" + str(e.msg)
            except BaseException:
                verdict = "fail:" + traceback.format_exc()
            os.write(write, verdict.encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as f:
            verdict = f.read().decode()
        _, status = os.waitpid(pid, 0)
        if verdict.startswith("skip:"):
            pytest.skip(verdict[5:])
        if verdict.startswith("fail:"):
            pytest.fail(verdict[5:], pytrace=False)
        if status != 0:
            pytest.fail(f"the test's process ended with status {status} (see its output)", pytrace=False)
        return True
