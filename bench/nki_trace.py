#!/usr/bin/python3
"""Row (i) of bench/run: tracing and lowering cost O(static instructions), whatever the trip counts (project issue 29:
a kernel of 10,000 static instructions in loops of any trip count traces and lowers in under 1 s).

    PYTHONPATH=build/python /usr/bin/python3 bench/nki_trace.py [OPS]      (default OPS = 1250)

The kernel: a chain of OPS element-wise instructions on a [128, 4] tile, in an nl.affine_range of 1,000,000 trips
(the lowering rotates the loop's tiles over B = 4 buffers and emits the body 2B times: the pipelined loop's group and
its last group), plus the load and the store. Timed, CPU time (time.process_time; wall time is noisy on a shared
machine), best of 3: the trace and the lowering (neuronsim.nki.api.trace_kernel: the kernel called on symbolic
tensors, then every instruction emitted through the builder and the lowering library: the builder then holds the
program), and separately the BIR document as a Python dict (to_bir's isa::to_bir_json and its conversion).
Prints one markdown table row.
"""
import sys
import time

import neuronsim.nki as nki
import neuronsim.nki.api as api
import neuronsim.nki.language as nl

ops = int(sys.argv[1]) if len(sys.argv) > 1 else 1250
TRIPS = 1_000_000


def chain(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(TRIPS):
        t = nl.load(x[nl.ds(i * 128, 128), :])
        for k in range(ops):
            t = nl.add(t, 1.0) if k % 2 else nl.multiply(t, 0.5)
        nl.store(out[nl.ds(i * 128, 128), :], t)
    return out


def count(insts):
    return sum(count([i2 for b in i["blocks"] for i2 in b["instructions"]]) if i["opcode"] == "Loop" else 1
               for i in insts)


best_lower = best_doc = None
for _ in range(3):
    c0 = time.process_time()
    traced = api.trace_kernel(chain, (nki.tensor((128 * TRIPS, 4)),), {})
    c1 = time.process_time()
    doc = traced.lowered.builder.to_bir()
    c2 = time.process_time()
    best_lower = c1 - c0 if best_lower is None else min(best_lower, c1 - c0)
    best_doc = c2 - c1 if best_doc is None else min(best_doc, c2 - c1)
n = sum(count(b["instructions"]) for b in doc["functions"][0]["blocks"])
print(f"| (i) NKI kernel traced and lowered: {n} static instructions in a loop of {TRIPS:,} trips | "
      f"trace + lowering CPU {best_lower:.2f} s | the BIR as a dict (to_bir) CPU {best_doc:.2f} s more | "
      f"< 1 s per 10,000 static instructions | {'yes' if best_lower * 10000 / n < 1.0 else 'NO'} |")
