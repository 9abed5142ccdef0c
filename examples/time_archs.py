#!/usr/bin/python3
"""Time a kernel on the three architectures (timing only: no numerics) and show where the time goes.

    PYTHONPATH=build/python python3 examples/time_archs.py [KERNEL]

Default KERNEL: workloads/matmul_tiled (result = lhsT^T @ rhs, bf16 in, fp32 out).
"""
import pathlib
import sys

import neuronsim

ROOT = pathlib.Path(__file__).resolve().parents[1]
kernel = neuronsim.load(sys.argv[1] if len(sys.argv) > 1 else ROOT / "workloads/matmul_tiled")
print(f"{kernel.label}: {kernel.dynamic_instructions} instructions executed per run")
print(f"{'arch':5} {'total us':>10}  {'PE':>5} {'ACT':>5} {'POOL':>5} {'DVE':>5}  bottleneck")
for arch in ("trn1", "trn2", "trn3"):
    r = neuronsim.run(kernel, arch=arch, timing_only=True)
    util = {name: e["utilization"] for name, e in r.stats["engines"].items()}
    print(f"{arch:5} {r.total_ns / 1000:10.2f}  " + " ".join(f"{util[e]:5.0%}" for e in ("PE", "ACT", "POOL", "DVE"))
          + f"  {r.stats['bottleneck']}")
