"""The tuner (docs/tuning.md; `neuronsim tune`, neuronsim.nki.tune): the grid's order and sampling, each status (ok,
wrong against the reference, refused for an SBUF overflow, error raised by the kernel's code), total_ns exactly what
`neuronsim nki --timing-only --kwarg` reports, the ranking, results.csv in grid order, --resume (reuse, and the
refusal when the kernel file changed), the report page and the exit codes. One local Dask cluster serves the module
(the CLI reaches it with --scheduler); test_tune_cluster.py kills a worker in the middle of a tune."""
import csv
import json
import os
import shutil

import numpy as np
import pytest

import neuronsim
import neuronsim.nki as nki
from conftest import ROOT, SANITIZED, cli, cli_error
from neuronsim import tune as tuner
from neuronsim.tune_cli import parse_param, split_values

pytestmark = pytest.mark.skipif(SANITIZED, reason="the tuner is pure Python over the front end and neuronsim.run "
                                                  "(checked under ASan by the rest of the suite)")

KERNEL = ROOT / "tests" / "python" / "nki_kernels" / "tune_scale.py"
BOOM_LINE = next(i for i, line in enumerate(KERNEL.read_text().splitlines(), 1) if "raise ValueError" in line)


@pytest.fixture(scope="module")
def scale():
    from neuronsim.tune_work import load_module

    return load_module(str(KERNEL))


def test_grid_order_and_sampling():
    params = {"a": [1, 2], "b": ["x", "y", "z"]}
    grid = tuner.candidates(params)
    assert grid == [(1, "x"), (1, "y"), (1, "z"), (2, "x"), (2, "y"), (2, "z")]  # the last parameter fastest
    s = tuner.candidates(params, sample=3, seed=7)
    assert len(s) == 3 and len(set(s)) == 3 and set(s) <= set(grid)
    assert s == sorted(s, key=grid.index)  # kept in grid order
    assert tuner.candidates(params, sample=3, seed=7) == s  # the same seed, the same draw
    assert {tuple(tuner.candidates(params, sample=3, seed=k)) for k in range(10)} != {tuple(s)}
    assert tuner.candidates(params, sample=99) == grid


def test_param_values_are_literals_split_outside_brackets():
    assert split_values("(128,512),(64,1024)") == ["(128,512)", "(64,1024)"]
    assert parse_param("SHAPE=(128,512),(64,1024)") == ("SHAPE", [(128, 512), (64, 1024)])
    assert parse_param("MODE='a,b','c',True,None,0.5") == ("MODE", ["a,b", "c", True, None, 0.5])
    for text, message in [("TILE=", "--param TILE has no values"), ("TILE", "--param takes NAME=V1,V2,..."),
                          ("TILE=1,,2", "an empty value"), ("TILE=fast", "'fast' is not a Python literal")]:
        with pytest.raises(neuronsim.UsageError, match=message):
            parse_param(text)


def test_each_status_in_the_python_api(client, scale):
    x = np.random.default_rng(1).uniform(-1, 1, (128, 512)).astype(np.float32)
    rows = nki.tune(scale.scale, x, params={"FACTOR": [2.0, 3.0], "WIDE": [1, 400], "BOOM": [False, True]},
                    reference=scale.reference, client=client)
    assert [set(r) for r in rows] == [{"FACTOR", "WIDE", "BOOM", "total_ns", "status", "max_abs_err", "verdict",
                                       "message"}] * 8
    by = {(r["FACTOR"], r["WIDE"], r["BOOM"]): r for r in rows}
    assert [r["status"] for r in rows] == ["ok", "wrong", "refused", "refused", "error", "error", "error", "error"]
    ok, wrong = by[2.0, 1, False], by[3.0, 1, False]
    # The time is what a timing-only run of that candidate gives; wrong candidates are timed too.
    assert ok["total_ns"] == nki.benchmark(scale.scale, nki.tensor((128, 512)), timing_only=True, FACTOR=2.0).total_ns
    assert wrong["total_ns"] == ok["total_ns"]
    assert ok["max_abs_err"] == 0.0 and ok["message"] is None and ok["verdict"]
    # 3x against 2x: off by |x|, worst where |x| is largest.
    worst = np.unravel_index(np.argmax(np.abs(x)), x.shape)
    assert wrong["max_abs_err"] == pytest.approx(float(np.abs(x).max()), rel=1e-6)
    assert wrong["message"].startswith(f"y[{worst[0]}, {worst[1]}] = ")
    assert wrong["message"].endswith("; 65536 of 65536 elements outside")
    refused = by[2.0, 400, False]
    assert refused["total_ns"] is None and "SBUF overflow" in refused["message"]
    # Messages name the kernel file as rows name it (relative to where the tuner runs), never a worker's path.
    given = os.path.relpath(KERNEL)
    assert refused["message"].startswith(f"{given}:11: SBUF overflow")
    err = by[2.0, 1, True]
    assert err["message"] == f"{given}:{BOOM_LINE}: ValueError: BOOM is set"


def test_python_api_refuses_a_keyword_the_kernel_lacks(client, scale):
    with pytest.raises(neuronsim.InvalidInput, match=r"--param TILEZ: .* takes no keyword 'TILEZ' \(its parameters: "
                                                     r"x, TILE, FACTOR, WIDE, BOOM, SLEEP\)"):
        nki.tune(scale.scale, nki.tensor((128, 512)), params={"TILEZ": [1]}, client=client)
    with pytest.raises(neuronsim.UsageError, match="parameter TILE has no values"):
        nki.tune(scale.scale, nki.tensor((128, 512)), params={"TILE": []}, client=client)


def tune_cli(client, *args, check=True):
    return cli("tune", *args, "--scheduler", client.scheduler.address, check=check)


def read_csv(path):
    with open(path) as f:
        return list(csv.reader(f))


def test_cli_ranking_csv_and_the_time_of_neuronsim_nki(client, tmp):
    out = tmp / "t"
    r = tune_cli(client, f"{KERNEL}::scale", "--shape", "x=128x512", "--param", "TILE=64,128,256,512", "--param",
                 "WIDE=1,400", "--out", out)
    lines = read_csv(out / "results.csv")
    assert lines[0] == ["TILE", "WIDE", "total_ns", "status", "max_abs_err", "verdict", "message"]
    assert [row[:2] for row in lines[1:]] == [[t, w] for t in ("64", "128", "256", "512") for w in ("1", "400")]
    assert [row[3] for row in lines[1:]] == ["ok", "refused"] * 4
    times = {int(row[0]): float(row[2]) for row in lines[1:] if row[3] == "ok"}
    # Each time is exactly `neuronsim nki --timing-only --kwarg` 's.
    for tile in (64, 512):
        j = json.loads(cli("nki", f"{KERNEL}::scale", "--shape", "x=128x512", "--timing-only", "--kwarg",
                           f"TILE={tile}", "--json").stdout)
        assert j["total_ns"] == times[tile]
    # The ranking: ok candidates by time, speed-ups against the slowest ok one and against the grid's first.
    ranking = r.stdout.splitlines()
    assert ranking[0].split()[:5] == ["#", "TILE", "WIDE", "total_ns", "vs"]
    order = sorted(times, key=times.get)
    slowest, first = max(times.values()), times[64]
    for n, tile in enumerate(order, start=1):
        cells = ranking[n].split()
        assert cells[:6] == [str(n), str(tile), "1", f"{times[tile]:.1f}", f"{slowest / times[tile]:.2f}x",
                             f"{first / times[tile]:.2f}x"]
        assert cells[6] == "ok"
    assert all(line.split()[6] == "refused" for line in ranking[5:9])
    assert "tune: 8 candidates (0 resumed, 8 run on" in r.stdout and "4 ok, 0 wrong, 4 refused, 0 error" in r.stdout


def test_resume_reuses_rows_and_refuses_a_changed_kernel(client, tmp):
    kernel = tmp / "k.py"
    shutil.copy(KERNEL, kernel)
    out = tmp / "t"
    args = [f"{kernel}::scale", "--shape", "x=128x256", "--param", "TILE=64,128", "--out", out]
    tune_cli(client, *args)
    before = (out / "results.csv").read_bytes()
    code, message = cli_error("tune", *args, "--scheduler", client.scheduler.address)
    assert code == 2 and "results.csv exists: --resume" in message
    r = tune_cli(client, *args, "--resume")
    assert "tune: 2 candidates (2 resumed, 0 run)" in r.stdout
    r = tune_cli(client, *args[:-3], "TILE=64,128,256", "--out", out, "--resume")
    assert "tune: 3 candidates (2 resumed, 1 run on" in r.stdout
    assert [row[0] for row in read_csv(out / "results.csv")[1:]] == ["64", "128", "256"]
    before = (out / "results.csv").read_bytes()
    source = kernel.read_text()
    for change, what in [("kernel", "the kernel file's contents differ"), ("arch", "the arch differs"),
                         ("input", "the inputs differ")]:
        a = list(args)
        if change == "kernel":
            kernel.write_text(source + "# changed\n")
        elif change == "arch":
            a += ["--arch", "trn2"]
        else:
            a[2] = "x=128x512"
        code, message = cli_error("tune", *a, "--resume", "--scheduler", client.scheduler.address)
        kernel.write_text(source)
        assert code == 3 and what in message and "left as they are" in message, message
        assert (out / "results.csv").read_bytes() == before


def test_exit_codes(client, tmp):
    base = [f"{KERNEL}::scale", "--shape", "x=128x256", "--out", tmp / "t"]
    assert cli_error("tune", *base, "--param", "TILE=")[0] == 2
    assert cli_error("tune", *base, "--param", "TILE=64", "--bogus")[0] == 2
    assert cli_error("tune", *base)[0] == 2  # no --param
    code, message = cli_error("tune", *base, "--param", "TILEZ=1,2")
    assert code == 3 and message == (f"tune: --param TILEZ: {KERNEL}::scale takes no keyword 'TILEZ' (its parameters: "
                                      "x, TILE, FACTOR, WIDE, BOOM, SLEEP)")
    code, message = cli_error("tune", *base, "--param", "TILE=64", "--kwarg", "NOPE=1")
    assert code == 3 and "--kwarg NOPE" in message
    # None ok: exit 1, the rows still written.
    r = tune_cli(client, *base, "--param", "BOOM=True", check=False)
    assert r.returncode == 1 and read_csv(tmp / "t" / "results.csv")[1][:3] == ["True", "", "error"]


def test_report_page(client, tmp):
    page = tmp / "tune.html"
    tune_cli(client, f"{KERNEL}::scale", "--shape", "x=128x256", "--param", "TILE=64,128", "--param", "WIDE=1,400",
             "--out", tmp / "t", "--report", page)
    text = page.read_text()
    assert text.count("<rect") == 4 and "TILE=64, WIDE=1" in text and "TILE=128, WIDE=400" in text
    assert "Profile of the best candidate" in text and "srcdoc=" in text and "verdict" in text
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "").split("srcdoc=")[0]


def test_nki_kwarg(tmp):
    r = cli("nki", f"{KERNEL}::scale", "--shape", "x=128x256", "--kwarg", "FACTOR=2.0", "--kwarg", "TILE=64",
            "--outdir", tmp)
    assert "y" in r.stdout or (tmp / "y.npy").exists()
    code, message = cli_error("nki", f"{KERNEL}::scale", "--shape", "x=128x256", "--kwarg", "NOPE=1")
    assert code == 3 and message == (f"--kwarg NOPE: {KERNEL}::scale takes no keyword 'NOPE' (its parameters: x, "
                                     "TILE, FACTOR, WIDE, BOOM, SLEEP)")
    assert cli_error("nki", f"{KERNEL}::scale", "--shape", "x=128x256", "--kwarg", "TILE=fast")[0] == 2
    assert cli_error("nki", f"{KERNEL}::scale", "--shape", "x=128x256", "--kwarg", "TILE")[0] == 2


def nki_total(target, *args):
    return json.loads(cli("nki", target, "--shape", "x=128x512", "--timing-only", "--json", *args).stdout)["total_ns"]


def test_compare_two_nki_kernels(tmp):
    """`neuronsim compare A.py::k B.py::k` with the input options both take: each traced and run timing-only as
    `neuronsim nki` runs it, named by file and function (issue 41 item 6)."""
    wide = tmp / "wide.py"
    wide.write_text(KERNEL.read_text().replace("def scale(x, TILE=128,", "def scale(x, TILE=512,"))
    a, b = f"{KERNEL}::scale", f"{wide}::scale"
    ta, tb = nki_total(a), nki_total(b)
    assert ta != tb  # one load of 512 columns against four of 128
    r = cli("compare", a, b, "--shape", "x=128x512")
    lines = r.stdout.splitlines()
    assert lines[:2] == [f"A: {a} (trn1)", f"B: {b} (trn1)"]
    assert lines[2].endswith(f"({ta:.1f} -> {tb:.1f} ns)")
    assert "neuronsim-nki-" not in r.stdout + r.stderr  # never the temporary BIR
    # The same input options and keywords go to both; B slower than A fails the gate.
    fast, slow = (a, b) if ta < tb else (b, a)
    r = cli("compare", fast, slow, "--shape", "x=128x512", "--kwarg", "FACTOR=3.0", "--fail-if-slower", "1",
            check=False)
    assert r.returncode == 1 and "B is slower than A by" in r.stdout
    code, message = cli_error("compare", a, b)
    assert code == 2 and "kernel parameter 'x' needs --input x=FILE.npy or --shape x=DIMS[:DTYPE]" in message
    code, message = cli_error("compare", a, "workloads/kernel1", "--shape", "x=128x512")
    assert code == 2 and "workloads/kernel1 is not one" in message
