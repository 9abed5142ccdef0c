"""The bad-input catalogue (tests/cli/bad_inputs) is what its generator writes: make_cases.py, run on a copy of its
folder, writes every committed case file and catalogue.json byte for byte, and nothing the checkout lacks. A case
edited by hand, or a generator change whose files were not regenerated, fails here (issue 36)."""
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

CASES = ROOT / "tests/cli/bad_inputs"


def test_regenerating_the_catalogue_gives_the_committed_files(tmp):
    # The generator finds its folder, workloads/kernel1 and sim/arch from its own path: the same layout under tmp, with the
    # bundle cases (written by make_bundles.cpp, read by make_cases.py) copied as they are.
    copy = tmp / "tests/cli/bad_inputs"
    copy.mkdir(parents=True)
    shutil.copy(CASES / "make_cases.py", copy)
    shutil.copytree(CASES / "cases", copy / "cases", ignore=shutil.ignore_patterns("__pycache__"))
    for d in CASES.glob("bundle_*"):
        shutil.copytree(d, copy / d.name)
    for d in ("workloads", "sim"):  # what the cases start from (kernel1, the arch files), read only
        (tmp / d).symlink_to(ROOT / d)

    r = subprocess.run([sys.executable, str(copy / "make_cases.py")], cwd=tmp, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    count = int(r.stdout.split()[0])  # "N cases"
    assert r.stdout == f"{count} cases\n" and count > 300

    def files(folder):  # what the generators own: not the scripts themselves
        return {p.relative_to(folder) for p in folder.rglob("*")
                if p.is_file() and p.suffix not in (".py", ".cpp", ".hpp") and "__pycache__" not in p.parts}
    ours, committed = files(copy), files(CASES)
    assert Path("catalogue.json") in ours
    assert sorted(ours - committed) == [], "make_cases.py writes files the checkout does not have"
    assert sorted(committed - ours) == [], "the checkout has case files make_cases.py no longer writes"
    for rel in sorted(ours):
        assert (copy / rel).read_bytes() == (CASES / rel).read_bytes(), \
            f"{rel} differs from what make_cases.py writes: rerun python3 tests/cli/bad_inputs/make_cases.py"
