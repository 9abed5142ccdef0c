"""What the sweep and tune tests share: the examples of docs/sweeps.md, made runnable here, background processes (a
Dask scheduler and its workers) that are always stopped, and a cluster whose workers a test may kill."""
import os
import re
import shlex
import signal
import socket
import subprocess
import time

from conftest import BUILD, ROOT


def sweeps_page():
    """docs/sweeps.md and its fenced blocks as (language, text), in order."""
    text = (ROOT / "docs/sweeps.md").read_text()
    return text, re.findall(r"```(\w*)[^\n]*\n(.*?)```", text, re.S)


def in_checkout_folder(tmp):
    """tmp made to look like the checkout for the page's commands: build/ and workloads/ link to the real ones."""
    os.symlink(BUILD, tmp / "build")
    os.symlink(ROOT / "workloads", tmp / "workloads")
    return tmp


def run_sh(line, cwd):
    return subprocess.run(line, shell=True, cwd=cwd, capture_output=True, text=True, timeout=300)


def normalized(out):
    """A sweep's printed output without what depends on the machine and the moment: its wall time and the number
    of local workers (one per core)."""
    out = re.sub(r"; \d+\.\d s$", "; N.N s", out, flags=re.M)
    return re.sub(r"a local cluster of \d+ workers?", "a local cluster of N workers", out)


def page_cluster_commands(port):
    """The three cluster lines of docs/sweeps.md (scheduler, workers, sweep), for a scheduler on 127.0.0.1:port and this
    build."""
    _, blocks = sweeps_page()
    (block,) = [text for lang, text in blocks if lang == "sh" and "dask-scheduler" in text]
    lines = [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
    assert [line.split()[0] for line in lines] == ["dask-scheduler", "PYTHONPATH=/path/to/neuronsim/build/python",
                                                   "build/neuronsim"]
    return [line.replace("scheduler-host", "127.0.0.1").replace("8786", str(port))
            .replace("/path/to/neuronsim/build", str(BUILD)) for line in lines]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(line, log):
    """A background process from a shell-like line (leading NAME=VALUE words go to its environment), in a process
    group of its own: stop() ends its children (dask-worker's nannies and workers) with it."""
    words = shlex.split(line)
    env = dict(os.environ)
    while "=" in words[0]:
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    return subprocess.Popen(words, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def wait_for_port(port, proc, log_path, timeout=60):
    """Until something listens on 127.0.0.1:port (the scheduler `proc` started); fails if it exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the scheduler exited ({proc.returncode}): {log_path.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port} after {timeout} s: {log_path.read_text()[-2000:]}")


def stop(procs):
    """SIGTERM to each process group, SIGKILL to any still there 15 s later."""
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def rows_in(path):
    """The data rows a results CSV holds so far (0 before it exists)."""
    try:
        return len(path.read_text().splitlines()) - 1
    except FileNotFoundError:
        return 0


class KillableCluster:
    """A real dask-scheduler on 127.0.0.1 and two dask-worker processes named w0 and w1 without nannies (a killed
    worker stays dead), one thread each, their output in `log`: `address`, a connected `client`, `workers` (the
    processes, w0 first), `by_name` ({"w0": its address, ...}) and `procs`, which conftest's killable_cluster fixture
    stops whatever happens (a test adds the command it starts there)."""

    def __init__(self, tmp, procs, log):
        from distributed import Client

        port = free_port()
        self.address, self.procs, self.log = f"tcp://127.0.0.1:{port}", procs, log
        procs.append(start(f"dask-scheduler --host 127.0.0.1 --port {port} --no-dashboard", log))
        wait_for_port(port, procs[0], tmp / "cluster.log")
        self.workers = [start(f"dask-worker {self.address} --nthreads 1 --no-nanny --no-dashboard --name w{i}", log)
                        for i in range(2)]
        procs.extend(self.workers)
        self.client = Client(self.address, timeout="60s", set_as_default=False)
        self.client.wait_for_workers(2, timeout=120)
        self.by_name = {info["name"]: addr for addr, info in self.client.scheduler_info()["workers"].items()}
