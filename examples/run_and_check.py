#!/usr/bin/python3
"""Run a kernel on numpy inputs and check its outputs against a numpy reference.

    PYTHONPATH=build/python python3 examples/run_and_check.py

kernel1 is real Neuron compiler output computing b = a - 1.0 on a [10, 10] float32 tile (workloads/kernel1).
"""
import pathlib

import numpy as np

import neuronsim

ROOT = pathlib.Path(__file__).resolve().parents[1]

kernel = neuronsim.load(ROOT / "workloads/kernel1")
for t in kernel.inputs + kernel.outputs:
    print(f"{t.kind:15} {t.name} {t.shape} {t.dtype}")

# Build the inputs from what the kernel declares, run, and compare with numpy's answer.
rng = np.random.default_rng(0)
inputs = {t.name: rng.uniform(-4, 4, t.shape).astype(t.dtype) for t in kernel.inputs}
result = neuronsim.run(kernel, inputs, expect={"b": inputs["a"] - np.float32(1.0)}, rtol=0, atol=0)
print(f"simulated {result.total_ns:.1f} ns on {result.arch}; bottleneck {result.stats['bottleneck']}")
for m in result.mismatches:
    print(m)
print("outputs match numpy" if result.ok else "outputs DIFFER from numpy")

# A workload folder brings its own inputs, expected outputs and tolerance, as `neuronsim run` uses them.
softmax = neuronsim.run(ROOT / "workloads/softmax")
print(f"softmax: {len(softmax.mismatches)} mismatches against workloads/softmax/expected")
raise SystemExit(0 if result.ok and softmax.ok else 1)
