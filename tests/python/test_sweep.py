"""Sweeps without a standing cluster (docs/sweeps.md): which kernels an argument names and how they group, the
ranking, the results files read back, the command line's refusals, and the page's local examples run as written
(on the LocalCluster they start). test_sweep_cluster.py runs sweeps on a real scheduler and workers,
test_sweep_fault.py loses a worker in the middle of one."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import neuronsim
from conftest import CLI, ROOT, SANITIZED
from neuronsim import dask_runner, sweeps
from neuronsim.sweeps import COLUMN_NAMES
from sweep_support import in_checkout_folder, normalized, sweeps_page, run_sh

# Under the sanitizers (build-asan) the sweeps are not run: they add only Python around neuronsim.run, which the
# rest of the suite runs there, and Dask's processes under the ASan runtime would add minutes, nothing it could find.
pytestmark = pytest.mark.skipif(SANITIZED, reason="sweeps are pure Python over neuronsim.run (checked under ASan by "
                                                  "the rest of the suite)")


def kernel1_copy(folder, name):
    shutil.copy(ROOT / "workloads/kernel1/kernel1.bir.json", folder / name)


# ---- Which kernels, which groups

def test_a_folder_of_kernels_is_one_group_named_after_it(tmp):
    v = tmp / "variants"
    v.mkdir()
    kernel1_copy(v, "b.bir.json")
    kernel1_copy(v, "mm@a.bir.json")
    shutil.copytree(ROOT / "workloads/kernel1", v / "c")
    (v / "notes.txt").write_text("not a kernel")
    (v / "empty").mkdir()
    (v / "tolerance.json").write_text("{}")  # a .json file that is not *.bir.json stays out
    ks = sweeps.kernels_of(str(v))
    assert [(k.name, k.group, k.variant) for k in ks] == [
        (f"{v}/b.bir.json", "variants", "b"), (f"{v}/c", "variants", "c"), (f"{v}/mm@a.bir.json", "mm", "a")]
    assert [k.path for k in ks] == [str(v / "b.bir.json"), str(v / "c"), str(v / "mm@a.bir.json")]


def test_every_kernel_file_of_a_folder_is_a_kernel_whatever_it_is(tmp):
    """A *.bir.json that is a FIFO makes its folder a folder of kernels (a row each, its own an error row), never a
    workload of the other file alone; one *.bir.json beside a kernel folder is refused as ambiguous."""
    v = tmp / "v"
    v.mkdir()
    kernel1_copy(v, "a.bir.json")
    os.mkfifo(v / "b.bir.json")
    assert [k.name for k in sweeps.kernels_of(str(v))] == [f"{v}/a.bir.json", f"{v}/b.bir.json"]
    w = tmp / "w"
    w.mkdir()
    kernel1_copy(w, "a.bir.json")
    shutil.copytree(ROOT / "workloads/kernel1", w / "k1")
    with pytest.raises(neuronsim.InvalidInput, match=r"is ambiguous: it holds one kernel file \(a\.bir\.json\) and "
                                                     r"kernel folders \(k1\)"):
        sweeps.kernels_of(str(w))
    with pytest.raises(neuronsim.UsageError, match="^sweep: kernel mine='' has an empty path$"):
        sweeps.kernels_of(["mine="])
    with pytest.raises(neuronsim.UsageError, match="^sweep: kernel '' has an empty path$"):
        sweeps.kernels_of([""])


def test_labels_and_single_kernels(tmp, monkeypatch):
    monkeypatch.chdir(ROOT)
    ks = sweeps.kernels_of(["workloads/kernel1", "mm@tiled=workloads/matmul_tiled", "fast=workloads/softmax"])
    assert [(k.name, k.group, k.variant) for k in ks] == [
        ("workloads/kernel1", "kernel1", None), ("mm@tiled", "mm", "tiled"), ("fast", "fast", None)]
    assert ks[1].path == str(ROOT / "workloads/matmul_tiled")
    # A dict names them too; a BIR file's name loses its .bir.json
    ks = sweeps.kernels_of({"x@1": "workloads/kernel1/kernel1.bir.json"})
    assert [(k.name, k.path, k.group, k.variant) for k in ks] == [
        ("x@1", str(ROOT / "workloads/kernel1/kernel1.bir.json"), "x", "1")]
    assert sweeps.kernels_of("workloads/kernel1/kernel1.bir.json")[0].group == "kernel1"


def test_what_a_sweep_refuses(tmp, monkeypatch):
    monkeypatch.chdir(ROOT)
    (tmp / "empty").mkdir()
    cases = [
        (lambda: sweeps.kernels_of("workloads/nope"), neuronsim.InvalidInput, 3,
         "sweep: no such kernel or folder: workloads/nope"),
        (lambda: sweeps.kernels_of(str(tmp / "empty")), neuronsim.InvalidInput, 3,
         f"sweep: {tmp}/empty holds no kernel (a *.bir.json file, a workload folder with one, or a bundle folder "
         "with manifest.json)"),
        (lambda: sweeps.kernels_of(["workloads/kernel1", "workloads/kernel1"]), neuronsim.UsageError, 2,
         "sweep: kernel workloads/kernel1 is named twice"),
        (lambda: sweeps.archs_of("trn1,trn4"), neuronsim.UsageError, 2,
         "sweep: arch 'trn4' is not one of trn1, trn2, trn3 (or an architecture FILE.json) (did you mean 'trn1'?)"),
        (lambda: sweeps.rank([], "bottleneck"), neuronsim.UsageError, 2, "sweep: cannot rank by 'bottleneck': one "
         "of " + ", ".join(sweeps.NUMERIC_COLUMNS) + " (- before it: descending)"),
        (lambda: neuronsim.sweep("workloads/kernel1", resume=True), neuronsim.UsageError, 2,
         "sweep: resume needs the results files (out / -o)"),
    ]
    for call, cls, code, message in cases:
        with pytest.raises(cls) as e:
            call()
        assert (str(e.value), e.value.exit_code) == (message, code)
    assert sweeps.archs_of("trn3,trn1,trn3") == ["trn3", "trn1"]


# ---- Ranking

def row(kernel, group, variant, arch, total_ns, status="ok"):
    r = dict.fromkeys(COLUMN_NAMES)
    r.update(kernel=kernel, group=group, variant=variant, arch=arch, total_ns=total_ns, status=status,
             bottleneck="PE" if total_ns else None, error_type="InvalidInput" if status == "error" else None)
    return r


ROWS = [row("mm@a", "mm", "a", "trn1", 300.0), row("mm@b", "mm", "b", "trn1", 100.0),
        row("mm@a", "mm", "a", "trn2", 50.0), row("mm@b", "mm", "b", "trn2", 80.0),
        row("solo", "solo", None, "trn1", 200.0), row("bad", "bad", None, "trn1", None, "error")]


def test_rank_sorts_within_each_arch_and_names_the_best_variant():
    assert [(r["kernel"], r["arch"]) for r in sweeps.rank(ROWS)] == [
        ("mm@b", "trn1"), ("solo", "trn1"), ("mm@a", "trn1"), ("mm@a", "trn2"), ("mm@b", "trn2"), ("bad", "trn1")]
    assert [(r["kernel"], r["arch"]) for r in sweeps.rank(ROWS, "-total_ns")][:3] == [
        ("mm@a", "trn1"), ("solo", "trn1"), ("mm@b", "trn1")]
    assert [(g, a, x["variant"], y["variant"]) for g, a, x, y in sweeps.best(ROWS)] == [
        ("mm", "trn1", "b", "a"), ("mm", "trn2", "a", "b")]  # solo has one variant: no best
    # 300 / 100 = 3.00x; 80 / 50 = 1.60x
    assert sweeps.format_ranking(ROWS) == """\
rank  kernel  arch  total_ns  bottleneck  status
   1  mm@b    trn1     100.0  PE          ok
   2  solo    trn1     200.0  PE          ok
   3  mm@a    trn1     300.0  PE          ok
   1  mm@a    trn2      50.0  PE          ok
   2  mm@b    trn2      80.0  PE          ok
   -  bad     trn1         -  -           error (InvalidInput)

best variant per group (lowest total_ns):
  mm trn1: b 100.0 (next a 300.0, 3.00x)
  mm trn2: a 50.0 (next b 80.0, 1.60x)
"""


# ---- Results files

def test_results_read_back_as_written_and_a_cut_line_is_dropped(tmp):
    rows = [dict(ROWS[1], path="/k/mm b", error='say "x", y', wall_s=0.1 + 0.2, exit_code=0, mismatches=None),
            dict(ROWS[5], exit_code=3, error="line one of an error")]
    files = dask_runner.Results(tmp / "r.csv", resume=False, columns=sweeps.COLUMNS)
    for r in rows:
        files.add(r)
    files.close()
    csv_path, json_path = sweeps.results_paths(tmp / "r.csv")
    assert json_path == tmp / "r.jsonl"
    assert sweeps.read_results(csv_path) == rows  # floats exact (0.30000000000000004), None for empty cells
    assert [json.loads(line) for line in json_path.read_text().splitlines()] == rows
    assert csv_path.read_text().splitlines()[0] == ",".join(COLUMN_NAMES)
    with open(csv_path, "a") as f:
        f.write("mm@c,/k,mm,c,trn1,timing,ok,0")  # a write cut short
    assert sweeps.read_results(csv_path) == rows
    csv_path.write_text("kernel,arch\nx,trn1\n")
    with pytest.raises(neuronsim.UsageError, match="does not start with the columns this version writes"):
        sweeps.read_results(csv_path)


# ---- The command line

def sweep_cli(*args, cwd=ROOT):
    return subprocess.run([str(CLI), "sweep", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_command_line_refusals_are_one_line(tmp):
    (tmp / "r.csv").write_text("")
    cases = [
        ((), 2, "sweep: the following arguments are required: KERNEL_OR_DIR (try neuronsim sweep --help)"),
        (("workloads/kernel1", "--arch", "trn9"), 2, "sweep: arch 'trn9' is not one of trn1, trn2, trn3 (or an "
         "architecture FILE.json) (did you mean 'trn1'?)"),
        (("workloads/kernel1", "--rank-by", "kernel"), 2, "sweep: cannot rank by 'kernel': one of "
         + ", ".join(sweeps.NUMERIC_COLUMNS) + " (- before it: descending)"),
        (("workloads/kernel1", "--resume"), 2, "sweep: resume needs the results files (out / -o)"),
        (("workloads/kernel1", "--workers", "0"), 2, "sweep: workers must be at least 1, got 0"),
        (("workloads/nope",), 3, "sweep: no such kernel or folder: workloads/nope"),
        (("workloads/kernel1", "-o", tmp / "r.csv"), 2, f"sweep: {tmp}/r.csv exists: --resume (resume=True) "
         "continues that sweep; remove it to start over"),
        (("workloads/kernel1", "--bogus"), 2, "sweep: unrecognized arguments: --bogus (try neuronsim sweep --help)"),
        (("workloads/kernel1", "-o", tmp / "no/r.csv"), 3, f"sweep: {tmp}/no/r.csv: its folder {tmp}/no does not "
         "exist"),  # refused before the cluster starts
    ]
    for args, code, message in cases:
        r = sweep_cli(*args)
        assert (r.returncode, r.stderr, r.stdout) == (code, f"neuronsim: {message}\n", ""), args
    assert (tmp / "r.csv").read_text() == ""  # refused, untouched
    assert sorted(p.name for p in tmp.iterdir()) == ["r.csv"]


def test_help_names_every_option_and_column():
    r = sweep_cli("--help")
    assert r.returncode == 0, r.stderr
    for word in ["--arch", "--scheduler", "--workers", "-o", "--resume", "--rank-by", "--numeric", "--inputs",
                 "LABEL=PATH", "NAME@VARIANT", "dask-scheduler", "dask-worker", "exit codes"]:
        assert word in r.stdout, word
    assert "columns, in order: " + ", ".join(COLUMN_NAMES) in " ".join(r.stdout.split())
    assert "neuronsim sweep KERNEL_OR_DIR..." in subprocess.run([str(CLI), "--help"], capture_output=True,
                                                                 text=True).stdout


# ---- docs/sweeps.md

def test_the_page_lists_the_columns_in_order():
    section, _ = sweeps_page()
    table = section[section.index("| column"):]
    names = []
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        names += re.findall(r"`(\w+)`", line.split("|")[1])
    assert names == COLUMN_NAMES


def test_the_page_local_examples(tmp):
    """The local examples, as written, from a folder laid out like the checkout: their output is the page's."""
    _, blocks = sweeps_page()
    (rank_lang, rank_cmd), (_, rank_out), (resume_lang, resume_cmds), (py_lang, py_code), (_, py_out) = blocks[:5]
    assert (rank_lang, resume_lang, py_lang) == ("sh", "sh", "python")
    in_checkout_folder(tmp)

    r = run_sh(rank_cmd, tmp)
    assert r.returncode == 0, r.stderr
    assert normalized(r.stdout) == normalized(rank_out)
    rows = sweeps.read_results(tmp / "matmul.csv")
    assert len(rows) == 12 and len({(x["kernel"], x["arch"]) for x in rows}) == 12
    assert [json.loads(line) for line in (tmp / "matmul.jsonl").read_text().splitlines()] == rows

    first, again = [line for line in resume_cmds.splitlines() if line.strip()]
    r = run_sh(first, tmp)
    assert r.returncode == 0, r.stderr
    n = 3 * len([p for p in (ROOT / "workloads").iterdir() if list(p.glob("*.bir.json"))])
    assert f"sweep: {n} tasks (0 resumed, {n} run on a local cluster" in r.stdout
    written = (tmp / "all.csv").read_text()
    r = run_sh(again, tmp)
    assert r.returncode == 0, r.stderr
    assert f"sweep: {n} tasks ({n} resumed, 0 run): {n} ok, 0 mismatch, 0 error" in r.stdout  # no cluster started
    assert (tmp / "all.csv").read_text() == written

    (tmp / "example.py").write_text(py_code)
    r = subprocess.run([sys.executable, "example.py"], cwd=tmp, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout == py_out
    assert len(sweeps.read_results(tmp / "mm.csv")) == 4 and len((tmp / "mm.jsonl").read_text().splitlines()) == 4
