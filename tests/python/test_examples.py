"""Every script in examples/ runs (from another folder, as a user would) and says what it should."""
import os
import subprocess
import sys

import pytest

import neuronsim
from conftest import ROOT

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def timing_lines():
    k = neuronsim.load(ROOT / "workloads/matmul_tiled")
    return [f"{a:5} {neuronsim.run(k, arch=a, timing_only=True).total_ns / 1000:10.2f}" for a in ("trn1", "trn2", "trn3")]


def first_reduce(kernel):
    """The manifest's name of the kernel's first TensorReduce, read here from the manifest of an encoding."""
    import json
    manifest = json.loads(neuronsim.encode(ROOT / kernel, "v3")["manifest.json"])
    return next(i["name"] for i in manifest["instructions"] if i["type"] == "TensorReduce")


# What each example must print (every line given here must appear in its output).
EXPECTED = {
    "run_and_check.py": lambda: ["ExternalInput   a (10, 10) float32", "outputs match numpy",
                                 "softmax: 0 mismatches against workloads/softmax/expected"],
    "time_archs.py": timing_lines,
    "validate_encoder.py": lambda: [
        "v2: validate: OK: the bundles agree with the BIR (14 instructions and 1 outputs compared, no lint findings)",
        "v3: validate: OK: the bundles agree with the BIR (14 instructions and 1 outputs compared, no lint findings)",
        "v4: validate: OK: the bundles agree with the BIR (14 instructions and 1 outputs compared, no lint findings)",
        f"{first_reduce('workloads/softmax')} encoded with min instead of max:",
        "validate: DIFFER: DVE #0 (DVE.bin +0x0000, opcode 0x7c) TensorReduce"],
}


def test_every_example_has_expectations():
    assert sorted(p.name for p in EXAMPLES) == sorted(EXPECTED)


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example(script, tmp):
    r = subprocess.run([sys.executable, str(script)], cwd=tmp, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stdout + r.stderr
    for line in EXPECTED[script.name]():
        assert line in r.stdout, (line, r.stdout)
