"""Python and the CLI give the same results: for every workload, the outputs byte for byte and the statistics equal
(the CLI's --stats file read back), on the three architectures; also for timing-only runs and bundle streams."""
import json

import numpy as np
import pytest

import neuronsim
from conftest import PARITY_WORKLOADS, ROOT, SANITIZED, cli


@pytest.fixture(autouse=True)
def in_checkout(monkeypatch):
    monkeypatch.chdir(ROOT)


def cli_run(kernel, out, *extra):
    r = cli("run", kernel, "--outdir", out / "o", "--stats", out / "s.json", *extra, check=False)
    assert r.returncode in (0, 1), r.stderr  # 1: outputs outside the workload's tolerance (compared below too)
    return r.returncode, json.load(open(out / "s.json"))


def same_outputs(result, folder, kernel):
    names = [t.name for t in neuronsim.load(kernel).outputs]
    assert sorted(result.outputs) == sorted(names)
    for name in names:
        want = np.load(folder / f"{name}.npy")
        got = result.outputs[name]
        assert (got.dtype, got.shape) == (want.dtype, want.shape), name
        assert got.tobytes() == want.tobytes(), name


def same_stats(py, cli):
    """The documents are the same but for the command line, which only the CLI has (docs/profiling.md)."""
    assert py["command_line"] == [] and cli["command_line"][:2] == ["neuronsim", "run"]
    return {k: v for k, v in py.items() if k != "command_line"} == {k: v for k, v in cli.items() if k != "command_line"}


# Under ASan one architecture and a few workloads (conftest PARITY_WORKLOADS): the module's path is the same for the
# three, and each comparison starts an instrumented CLI.
@pytest.mark.parametrize("arch", ["trn1"] if SANITIZED else ["trn1", "trn2", "trn3"])
@pytest.mark.parametrize("workload", PARITY_WORKLOADS)
def test_workload(workload, arch, tmp):
    kernel = f"workloads/{workload}"
    code, stats = cli_run(kernel, tmp, "--arch", arch)
    r = neuronsim.run(kernel, arch=arch)
    same_outputs(r, tmp / "o", kernel)
    assert same_stats(r.stats, stats)
    assert r.total_ns == stats["total_ns"]
    assert (code == 0) == (r.mismatches == [])  # both compared with the workload's expected/


@pytest.mark.parametrize("workload", PARITY_WORKLOADS)
def test_workload_timing_only(workload, tmp):
    kernel = f"workloads/{workload}"
    _, stats = cli_run(kernel, tmp, "--timing-only")
    assert same_stats(neuronsim.run(kernel, timing_only=True).stats, stats)


@pytest.mark.parametrize("workload", ["kernel1", "softmax", "matmul_tiled"])
def test_bundle_streams(workload, tmp):
    cli("encode", f"workloads/{workload}", "--gen", "v3", "-o", tmp / "s")
    inputs = f"workloads/{workload}/inputs"
    _, stats = cli_run(tmp / "s", tmp, "--inputs", inputs)
    r = neuronsim.run(tmp / "s", inputs)
    same_outputs(r, tmp / "o", tmp / "s")
    assert same_stats(r.stats, stats) and r.arch == "trn2"
