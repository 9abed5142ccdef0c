"""workloads/nki/: the generator's algorithms written as NKI kernels. Each runs through `neuronsim nki` on the
generator's committed inputs and is checked twice: against the generator's independent expected outputs (within its
tolerance.json) and against the kernel file's own numpy reference; its simulated time is compared with the
generator's BIR of the same algorithm (workloads/<name>, timing-only): equal under the shared lowering library, or
the difference explained in workloads/nki/README.md."""
import importlib.util
import json

import numpy as np
import pytest

import neuronsim

from conftest import ROOT, SANITIZED, cli

NKI = ROOT / "workloads" / "nki"
# name -> {parameter: dtype given with --shape beside its --input (bf16 files hold raw bits)}
KERNELS = {
    "tensor_add": {}, "softmax": {}, "rmsnorm": {}, "layernorm": {}, "cumsum": {}, "transpose": {},
    "matmul_tiled": {"lhsT": "bfloat16", "rhs": "bfloat16"},
    "matmul_hoisted": {"lhsT": "bfloat16", "rhs": "bfloat16"},
    "matmul_blocked_free": {"lhsT": "bfloat16", "rhs": "bfloat16"},
    "matmul_blocked_mnk": {"lhsT": "bfloat16", "rhs": "bfloat16"},
    "attention": {"qT": "bfloat16", "kT": "bfloat16", "v": "bfloat16"},
    "tp_mlp": {},
}
# Kernels of several cores: their workload folder, the launch grid of the NKI run and the generator's run options.
MULTICORE = {"tp_mlp": ("multicore/tp_mlp", ["--grid", "nc2"], ["--arch", "trn2", "--lnc", "2"])}


def workload(name):
    return ROOT / "workloads" / (MULTICORE[name][0] if name in MULTICORE else name)


def grid(name):
    return MULTICORE[name][1] if name in MULTICORE else []
# The kernels whose simulated time differs from the generator's, and why (workloads/nki/README.md).
TIME_DIFFERS = {}


def module(name):
    spec = importlib.util.spec_from_file_location(f"nki_workload_{name}", NKI / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    import neuronsim.nki
    neuronsim.nki.install()
    spec.loader.exec_module(mod)
    return mod


def args_for(name):
    out = []
    for f in sorted((workload(name) / "inputs").glob("*.npy")):
        out += ["--input", f"{f.stem}={f}"]
        if f.stem in KERNELS[name]:
            a = np.load(f, mmap_mode="r")
            out += ["--shape", f"{f.stem}={'x'.join(map(str, a.shape))}:{KERNELS[name][f.stem]}"]
    return out


def shapes_for(name):
    out = []
    for f in sorted((workload(name) / "inputs").glob("*.npy")):
        a = np.load(f, mmap_mode="r")
        out += ["--shape", f"{f.stem}={'x'.join(map(str, a.shape))}:{KERNELS[name].get(f.stem, 'float32')}"]
    return out


def values(path, dtype):
    a = np.load(path)
    return neuronsim.to_float32(a, dtype) if dtype in ("bfloat16",) else a


# Under ASan (.ci/run's second stage) a few kernels that between them reach every front-end path the others take
# (loads ahead, accumulation groups, unrolled query tiles, two cores) keep the stage inside its time; the
# instrumented C++ suite runs every workload already.
RUN = ["attention", "matmul_blocked_mnk", "tensor_add", "tp_mlp"] if SANITIZED else sorted(KERNELS)


@pytest.mark.parametrize("name", RUN)
def test_nki_kernel_matches_generator_outputs_numpy_and_time(name, tmp):
    wl = workload(name)
    tol = json.loads((wl / "tolerance.json").read_text())
    r = cli("nki", f"{NKI / name}.py::{name}", *args_for(name), *grid(name), "--expect", wl / "expected", "--rtol",
            tol["rtol"], "--atol", tol["atol"], "--outdir", tmp / "out", "--json")
    doc = json.loads(r.stdout)
    assert doc["outputs_match"] is True, doc.get("mismatches")
    # The file's own numpy reference on the same inputs.
    mod = module(name)
    ins = {f.stem: values(f, KERNELS[name].get(f.stem, "")) for f in (wl / "inputs").glob("*.npy")}
    want = mod.reference(**ins)
    (out_file,) = list((tmp / "out").glob("*.npy"))
    got = values(out_file, "bfloat16" if np.load(out_file).dtype == np.uint16 else "")
    assert np.all(np.abs(got - want) <= tol["atol"] + tol["rtol"] * np.abs(want))
    # Simulated time against the generator's BIR.
    t_nki = json.loads(cli("nki", f"{NKI / name}.py::{name}", *shapes_for(name), *grid(name), "--timing-only",
                            "--json").stdout)
    gen_opts = MULTICORE[name][2] if name in MULTICORE else []
    t_gen = json.loads(cli("run", wl, *gen_opts, "--timing-only", "--json").stdout)
    # The table of workloads/nki/README.md gives both times, to 0.1 ns.
    row = next(l for l in (NKI / "README.md").read_text().splitlines() if l.startswith(f"| {name} |"))
    assert row.split("|")[3:5] == [f" {t_nki['total_ns']:.1f} ", f" {t_gen['total_ns']:.1f} "], row
    if name in TIME_DIFFERS:
        assert t_nki["total_ns"] != t_gen["total_ns"], f"{name} now equals the generator: update README.md"
    else:
        assert t_nki["total_ns"] == t_gen["total_ns"]


@pytest.mark.parametrize("name", RUN)
def test_nki_kernel_never_slows_when_a_headline_parameter_gets_2x_better(name):
    """The monotonicity property (tests/workloads/test_monotonicity.cpp) through `neuronsim nki` at the small sizes:
    on trn2, where the HBM share binds, each `--sensitivity` rerun is at most 0.5% slower than the base run."""
    arch = [] if name in MULTICORE else ["--arch", "trn2"]
    doc = json.loads(cli("nki", f"{NKI / name}.py::{name}", *shapes_for(name), *grid(name), *arch, "--timing-only",
                         "--sensitivity", "--json").stdout)
    base = doc["total_ns"]
    for row in doc["sensitivity"]:
        if row["used"]:
            assert row["total_ns"] <= base * 1.005, f"{name}: {row['parameter']} ({row['arch']}) takes " \
                f"{row['total_ns']} ns against {base} ns"
