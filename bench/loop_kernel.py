#!/usr/bin/env python3
"""Writes a BIR kernel of N dynamic instructions for bench/run's long-kernel rows: workloads/kernel1 (real compiler
output: Load a -> TensorScalarPtr -> Save b on a [10, 10] fp32 tile) with its TensorScalarPtr inside a Loop of
N - 2 trips (Load + (N - 2) x TensorScalarPtr + Save = N). Generated, not committed (a few KB at any N).
  bench/loop_kernel.py N OUT.bir.json"""
import copy
import json
import os
import sys

n, out = int(sys.argv[1]), sys.argv[2]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(root, "workloads", "kernel1", "kernel1.bir.json")) as f:
    m = json.load(f)
body = m["functions"][0]["blocks"][0]["instructions"]
body[1] = {"opcode": "Loop", "name": "Loop-i0", "LoopAxis": {"name": "i0", "lb": 0, "ub": n - 2, "stride": 1},
           "blocks": [{"name": "Block2", "instructions": [copy.deepcopy(body[1])]}]}
with open(out, "w") as f:
    json.dump(m, f)
