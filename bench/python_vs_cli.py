#!/usr/bin/python3
"""Row (e) of bench/run: running workloads/kernel1 N times in one Python process (neuronsim.run) against spawning
`neuronsim run` N times (project issue 15: at least 10x faster in process).

    PYTHONPATH=build/python /usr/bin/python3 bench/python_vs_cli.py BUILD_DIR [N]     (default N = 1000)

Both sides do the same work per run: read the BIR, load the workload's inputs, simulate, compare with its expected/;
the CLI also writes b.npy (into a temporary folder) and pays a process start and SystemC's elaboration. Prints one
markdown table row; the two loops run one after the other in this process, so the figures are side by side.
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import neuronsim

build = pathlib.Path(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
root = pathlib.Path(__file__).resolve().parents[1]
kernel = str(root / "workloads/kernel1")

assert neuronsim.run(kernel).ok  # also warms up: the SystemC core is elaborated on the first run
t0 = time.perf_counter()
for _ in range(n):
    neuronsim.run(kernel)
in_process = (time.perf_counter() - t0) / n

out = tempfile.mkdtemp(prefix="neuronsim-bench-")
try:
    cmd = [str(build / "neuronsim"), "run", kernel, "--outdir", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    t0 = time.perf_counter()
    for _ in range(n):
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    spawned = (time.perf_counter() - t0) / n
finally:
    shutil.rmtree(out, ignore_errors=True)

ratio = spawned / in_process
print(f"| (e) workloads/kernel1 x {n}: neuronsim.run in one Python process vs spawning `neuronsim run` | "
      f"{in_process * 1e3:.2f} ms/run | {spawned * 1e3:.2f} ms/run | {ratio:.1f}x | >= 10x | "
      f"{'yes' if ratio >= 10 else 'NO'} |")
