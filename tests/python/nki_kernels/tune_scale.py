"""A kernel for the tuner's tests (test_tune.py): y = FACTOR * x, TILE columns at a time, with a keyword for each way a
candidate can end. FACTOR other than 2.0 is wrong against `reference`; a WIDE scratch buffer overflows SBUF (the front
end refuses it); BOOM raises in the kernel's own code; SLEEP makes tracing slow (a worker can be killed mid-task)."""
import time

import neuronxcc.nki.language as nl


def scale(x, TILE=128, FACTOR=2.0, WIDE=1, BOOM=False, SLEEP=0.0):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    scratch = nl.zeros((128, 512 * WIDE), nl.float32, buffer=nl.sbuf)
    if SLEEP:
        time.sleep(SLEEP)
    if BOOM:
        raise ValueError("BOOM is set")
    for i in nl.affine_range(x.shape[1] // TILE):
        t = nl.load(x[:, i * TILE:(i + 1) * TILE])
        s = nl.add(nl.multiply(t, FACTOR), scratch[:, 0:TILE])
        nl.store(y[:, i * TILE:(i + 1) * TILE], value=s)
    return y


def reference(x):
    return 2.0 * x
