#!/usr/bin/python3
"""Row (j) of bench/run: the cost of --sanitize (project issue 39: a sanitized numeric run takes at most 3x the plain
one, on a kernel large enough that process start does not dominate).

    PYTHONPATH=build/python /usr/bin/python3 bench/sanitize_cost.py [REPS]      (default REPS = 3)

Kernels, traced once, then run in this process (neuronsim.run: no process start, no tracing in the figures), plain and
sanitized in turn, REPS times each; CPU time (time.process_time: wall time is noisy on a shared machine), best of the
repetitions:
  - softmax (workloads/nki/softmax.py) on x [8192, 512] fp32: element-wise work on SBUF tiles, every store of the
    output in an affine_range checked for loop-carried dependencies;
  - matmul_tiled (workloads/nki/matmul_tiled.py) on lhsT [512, 512] @ rhs [512, 2048] bf16: PSUM accumulation groups.
Prints one markdown table row: each kernel's plain and sanitized time and their ratio; met when every ratio is <= 3.
"""
import pathlib
import sys
import time

import numpy as np

import neuronsim
import neuronsim.nki as nki
import neuronsim.nki.api as api
import neuronsim.nki.language as nl

ROOT = pathlib.Path(__file__).resolve().parents[1]
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
nki.install()
sys.path.insert(0, str(ROOT / "workloads" / "nki"))
from matmul_tiled import matmul_tiled  # noqa: E402
from softmax import softmax  # noqa: E402

rng = np.random.default_rng(0)
cases = [
    ("softmax x [8192, 512] fp32", softmax, [rng.uniform(-4, 4, (8192, 512)).astype(np.float32)]),
    ("matmul_tiled 512x512 @ 512x2048 bf16", matmul_tiled,
     [nki.array(rng.uniform(-1, 1, (512, 512)), nl.bfloat16), nki.array(rng.uniform(-1, 1, (512, 2048)), nl.bfloat16)]),
]
cells, ok = [], True
for label, kernel, args in cases:
    traced = api.trace_kernel(kernel, tuple(args), {})
    k = traced.lowered.builder.kernel(traced.lowered.label)
    inputs = api._inputs(traced, tuple(args), {}, kernel)
    best = {False: None, True: None}
    for _ in range(reps):
        for sanitize in (False, True):
            c0 = time.process_time()
            r = neuronsim.run(k, inputs, sanitize=sanitize)
            t = time.process_time() - c0
            assert not sanitize or r.findings == [], r.finding_lines
            best[sanitize] = t if best[sanitize] is None else min(best[sanitize], t)
    ratio = best[True] / best[False]
    ok = ok and ratio <= 3.0
    cells.append(f"{label}: {best[False]:.2f} s plain, {best[True]:.2f} s sanitized, {ratio:.2f}x")
print(f"| (j) --sanitize, numeric run in process (CPU, best of {reps}) | {cells[0]} | {cells[1]} | <= 3x | "
      f"{'yes' if ok else 'NO'} |")
