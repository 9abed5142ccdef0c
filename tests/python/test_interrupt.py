"""The GIL is released while a kernel runs, and Ctrl-C (SIGINT) stops a long run with KeyboardInterrupt, leaving the
process able to run again."""
import json
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import neuronsim
from conftest import ROOT, SANITIZED


def long_kernel(path, iterations):
    """tensor_add's loop body cut down to its TensorTensor add, on [128, 8192] fp32 SBUF tiles (4 MiB each, 96 KiB of
    the 192 KiB per partition), repeated `iterations` times: a run of ~1 ms of host time per iteration that needs
    no inputs. (~0.17 ms per iteration since the elementwise work of issue 18: the tests below size their runs for
    that and more, so that the signal or the ticks land inside the run.)"""
    bir = json.load(open(ROOT / "workloads/tensor_add/tensor_add.bir.json"))
    f = bir["functions"][0]
    width = 8192
    for a in f["allocations"]:
        if a["name"].endswith("_tile_set"):
            a["tensor_shape"] = [128, width]
            a["memorylocations"][0]["dims"] = [128, 4 * width]
    add = next(i for i in f["blocks"][0]["instructions"] if i["opcode"] == "TensorTensor")
    for arg in add["ins"] + add["outs"]:
        arg["ap"] = [[width, 128], [1, width]]
        arg["offset"] = 0
    f["blocks"][0]["instructions"] = [{"opcode": "Loop", "name": "Loop-i",
                                       "LoopAxis": {"name": "i", "lb": 0, "ub": iterations, "stride": 1},
                                       "blocks": [{"name": "body", "instructions": [add]}]}]
    json.dump(bir, open(path, "w"))
    return path


# Under ASan (-O1, unvectorised) an iteration takes 50-150 times as long: the runs below are cut by 50 there, which
# keeps each one at least as long in seconds (what the tests depend on) and the sanitizer stage of .ci/run inside
# its time.
SCALE = 50 if SANITIZED else 1


def finish(p, timeout):
    """The rest of a child's stdout and its stderr, once it has ended. (Read through p.stdout: lines after one
    already read may sit in its buffer, where communicate() would not see them.)"""
    out, err = p.stdout.read(), p.stderr.read()
    p.wait(timeout=timeout)
    return out, err


def child(script, *args):
    """A Python child with the default SIGINT disposition (a shell may have started us with SIGINT ignored)."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def test_sigint_stops_a_long_run_and_the_process_runs_again(tmp):
    # 50000 iterations: tens of seconds when not stopped.
    k = long_kernel(tmp / "long.bir.json", 50000)
    p = child("""
        import sys, time, neuronsim
        print("running", flush=True)
        try:
            neuronsim.run(sys.argv[1])
            print("finished")
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        r = neuronsim.run("workloads/kernel1")
        print("again", r.ok, r.mismatches)
    """, k)
    try:
        assert p.stdout.readline() == "running\n"
        time.sleep(1.5)  # well into the run
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        assert p.stdout.readline() == "interrupted\n"
        latency = time.monotonic() - sent
        out, err = finish(p, 120)
    finally:
        p.kill()
        p.wait()
    assert latency < 10, latency  # the core polls every 256 instructions (~0.2 s here), not at the run's end
    assert out == "again True []\n" and p.returncode == 0, err


def test_a_program_with_its_own_sigint_handler_keeps_it(tmp):
    # Only Python's default handler (KeyboardInterrupt) is intercepted: this one runs after the run has finished.
    iterations = 20000 // SCALE
    k = long_kernel(tmp / "long.bir.json", iterations)  # ~3 s: the signal comes 0.5 s in
    p = child("""
        import signal, sys, neuronsim
        seen = []
        signal.signal(signal.SIGINT, lambda *a: seen.append("SIGINT"))
        print("running", flush=True)
        r = neuronsim.run(sys.argv[1])
        print("finished", r.dynamic_instructions, seen)
    """, k)
    try:
        assert p.stdout.readline() == "running\n"
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        out, err = finish(p, 300)
    finally:
        p.kill()
        p.wait()
    assert out == f"finished {iterations} ['SIGINT']\n" and p.returncode == 0, err


def ticking_run(k):
    """Runs kernel k on a thread while this one ticks every 10 ms: (dynamic instructions run, ticks, start, s)."""
    done = []
    t = threading.Thread(target=lambda: done.append(neuronsim.run(k).dynamic_instructions))
    ticks = []
    start = time.monotonic()
    t.start()
    while t.is_alive():
        ticks.append(time.monotonic())
        time.sleep(0.01)
    t.join()
    return done, ticks, start, time.monotonic() - start


def test_the_gil_is_released_while_simulating(tmp):
    # A run of more than a second, however fast this build simulates: the loop doubles until one is.
    iterations = 12000 // SCALE
    while True:
        k = long_kernel(tmp / "long.bir.json", iterations)
        done, ticks, start, elapsed = ticking_run(k)
        if elapsed > 1.0 or iterations >= 16 * (12000 // SCALE):
            break
        iterations *= 2
    gaps = [b - a for a, b in zip([start] + ticks, ticks)]
    assert done == [iterations] and elapsed > 1.0, elapsed  # a run long enough for the check to mean something
    # This thread kept running Python throughout: a held GIL would stop it for the whole run (one gap ~ elapsed).
    assert max(gaps) < elapsed / 4 and len(ticks) > elapsed / 0.05, (max(gaps), len(ticks), elapsed)
