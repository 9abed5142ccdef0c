"""Ordinary mistakes of a kernel engineer that run to the end on the simulator without a word, each the subject of
one sanitizer finding (tests/python/test_sanitizer.py, docs/sanitizer.md). The line each finding names carries a
`# MISTAKE: <name>` comment."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def count_positive(x):
    """Counts the positive elements of each row into an int32 counter that nothing initialises: every count is off
    by the counter's garbage (here the 0xFF fill: -1)."""
    out = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    counts = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.sbuf)
    for i in nl.sequential_range(x.shape[1] // 128):
        t = nl.load(x[:, i * 128:(i + 1) * 128])
        pos = nl.sum(nl.greater(t, 0.0, dtype=nl.int32), axis=1, keepdims=True, dtype=nl.int32)
        counts[...] = nl.add(counts, pos)  # MISTAKE: counter
    nl.store(out, value=counts)
    return out


@nki.jit
def add_to_output(x):
    """Reads its output before anything wrote it (meaning x + out, with out not yet computed)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(out[:, :])  # MISTAKE: output
    nl.store(out[:, :], value=nl.add(t, nl.load(x[:, :])))
    return out


@nki.jit
def matmul_unzeroed(lhsT, rhs):
    """Accumulates matmuls with accumulate=True into a PSUM tile nothing wrote (nl.ndarray): undefined on silicon
    (NKI nc_matmul, "Accumulation mode"). `+=` or accumulate=None would let the compiler start the group."""
    out = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(lhsT.shape[0] // 128):
        a = nl.load(lhsT[k * 128:(k + 1) * 128, :])
        b = nl.load(rhs[k * 128:(k + 1) * 128, :])
        nisa.nc_matmul(acc, a, b, accumulate=True)  # MISTAKE: psum
    nl.store(out, value=nl.copy(acc))
    return out


@nki.jit
def psum_add_unwritten(x):
    """Adds tiles into a PSUM tile nothing wrote on the vector engine: no matmul, so no accumulation group starts,
    and the first add reads whatever PSUM holds."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    for i in nl.sequential_range(x.shape[0] // 128):
        acc[...] = nl.add(acc, nl.load(x[i * 128:(i + 1) * 128, :]))  # MISTAKE: psum-add
    nl.store(out, value=nl.copy(acc))
    return out


@nki.jit
def running_total(x):
    """A running sum over column blocks in an affine_range: trip i reads the block trip i - 1 stored."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out[:, 0:128], value=nl.load(x[:, 0:128]))
    for i in nl.affine_range(1, x.shape[1] // 128):
        prev = nl.load(out[:, (i - 1) * 128:i * 128])  # MISTAKE: carried
        nl.store(out[:, i * 128:(i + 1) * 128], value=nl.add(prev, nl.load(x[:, i * 128:(i + 1) * 128])))
    return out


@nki.jit
def exchange_halves(x):
    """On the two cores of a logical core (exchange_halves[nl.nc(2)]): each stores its half of x into out and reads
    the other core's half back -- with nothing ordering the other core's store before the read."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    swapped = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    s = nl.program_id(0)
    mine = nl.load(x[s * 64:(s + 1) * 64, :])
    nl.store(out[s * 64:(s + 1) * 64, :], value=mine)
    theirs = nl.load(out[(1 - s) * 64:(2 - s) * 64, :])  # MISTAKE: race
    nl.store(swapped[s * 64:(s + 1) * 64, :], value=theirs)
    return out, swapped


@nki.jit
def overlapping_tiles(x):
    """Trip i stores columns [96 i, 96 i + 128) of out: each tile overlaps the next trip's by 32 columns, so what is
    left there depends on the trips' order (the loop-carried shadow cuts its byte ranges at both ends)."""
    out = nl.ndarray((128, 416), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        nl.store(out[:, i * 96:i * 96 + 128], value=nl.load(x[:, i * 96:i * 96 + 128]))  # MISTAKE: overlap
    return out


@nki.jit
def shift_in_sbuf(x):
    """Trip i doubles t[:, 64 i + 32 : 64 i + 128] into t[:, 64 i : 64 i + 96]: trip i + 1 overwrites columns trip i
    read (and wrote), so the result depends on the trips' order."""
    out = nl.ndarray((128, 256), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
    t[...] = nl.load(x[:, 0:256])
    for i in nl.affine_range(3):
        t[:, i * 64:i * 64 + 96] = nl.multiply(t[:, i * 64 + 32:i * 64 + 128], 2.0)  # MISTAKE: shift
    nl.store(out, value=t)
    return out


@nki.jit
def abutting_tiles(x):
    """Not a mistake: trip (i, j) stores rows [128 i, 128 i + 128) x columns [48 j, 48 j + 48) of out (tiles that
    touch and do not overlap), then reads back exactly its own tile; and a sum over trips into an SBUF accumulator
    read only after the loop (an associative reduction)."""
    out = nl.ndarray((256, 96), dtype=x.dtype, buffer=nl.shared_hbm)
    total = nl.ndarray((128, 48), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 48), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(2):
        for j in nl.affine_range(2):
            nl.store(out[i * 128:(i + 1) * 128, j * 48:(j + 1) * 48], value=nl.load(x[:, j * 48:(j + 1) * 48]))
            back = nl.load(out[i * 128:(i + 1) * 128, j * 48:(j + 1) * 48])
            acc[...] = nl.add(acc, back)
    nl.store(total, value=acc)
    return out, total


@nki.jit
def exchange_window(x):
    """As exchange_halves, but each core reads back only a 32 x 32 window inside the other core's half: the race
    shadow's ranges are cut at the window's edges, so the race is that window, not the whole half."""
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    got = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    s = nl.program_id(0)
    nl.store(out[s * 64:(s + 1) * 64, :], value=nl.load(x[s * 64:(s + 1) * 64, :]))
    window = nl.load(out[(1 - s) * 64 + 16:(1 - s) * 64 + 48, 16:48])  # MISTAKE: window
    nl.store(got[s * 64 + 16:s * 64 + 48, 16:48], value=window)
    return out, got
