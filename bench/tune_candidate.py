#!/usr/bin/python3
"""Row (k) of bench/run: what one `neuronsim tune` candidate costs (project issue 41: a kernel of 10,000 static /
1,000,000 dynamic instructions traced, lowered and run timing-only in under 2 s of CPU), and a depthwise conv1d
written as in the public autocomp baseline (one tensor_tensor and one tensor_reduce per output column, in loops:
the dependency tracker's case).

    PYTHONPATH=build/python /usr/bin/python3 bench/tune_candidate.py [STATIC TRIPS]   (default 10000 100)

Each is one candidate's work on a worker (neuronsim.tune_work): trace + lowering (trace_kernel), the builder's
program read as a Kernel (builder.kernel: the BIR JSON and its reader), the timing-only run. CPU time
(time.process_time), best of 3. Prints two markdown table rows.
"""
import sys
import time

import numpy as np

import neuronsim._core as core
import neuronsim.nki as nki
import neuronsim.nki.api as api
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

STATIC, TRIPS = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (10000, 100)


def chain(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    acc = nl.zeros(x.shape, nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(TRIPS):
        for j in range(STATIC):
            acc[...] = nl.add(acc, t)
    nl.store(y, value=acc)
    return y


def conv1d(img, filt):
    """y[c, o] = sum_k img[c, o + k] * filt[c, k] per channel c (depthwise, 3 taps), one output column at a time."""
    C, W = img.shape
    K = filt.shape[1]
    out = nl.ndarray((C, W - K + 1), dtype=img.dtype, buffer=nl.shared_hbm)
    x = nl.load(img)
    f = nl.load(filt)
    y = nl.ndarray((C, W - K + 1), dtype=nl.float32, buffer=nl.sbuf)
    for o in nl.affine_range(W - K + 1):
        prod = nisa.tensor_tensor(x[:, nl.ds(o, K)], f, np.multiply)
        y[:, nl.ds(o, 1)] = nisa.tensor_reduce(np.add, prod, axis=[1])
    nl.store(out, value=y)
    return out


def candidate(kernel, *args):
    best = None
    for _ in range(3):
        c0 = time.process_time()
        traced = api.trace_kernel(kernel, args, {})
        c1 = time.process_time()
        k = traced.lowered.builder.kernel(kernel.__name__, [])
        c2 = time.process_time()
        r = core.run(k, None, arch="trn1", timing_only=True)
        c3 = time.process_time()
        t = (c1 - c0, c2 - c1, c3 - c2)
        best = t if best is None or sum(t) < sum(best) else best
    return best, r.dynamic_instructions


(tr, kd, run), dyn = candidate(chain, nki.tensor((128, 64)))
total = tr + kd + run
print(f"| (k) one tune candidate: {STATIC:,} static / {dyn:,} dynamic instructions | trace + lowering {tr:.2f} s, "
      f"Kernel {kd:.2f} s, timing-only run {run:.2f} s (CPU) | {total:.2f} s | < 2 s | "
      f"{'yes' if total < 2.0 else 'NO'} |")
(tr, kd, run), dyn = candidate(conv1d, nki.tensor((128, 16386)), nki.tensor((128, 3)))
print(f"| (k) depthwise conv1d, one output column per trip: {dyn:,} dynamic instructions | trace + lowering "
      f"{tr:.2f} s, Kernel {kd:.2f} s, timing-only run {run:.2f} s (CPU) | {tr + kd + run:.2f} s | | |")
