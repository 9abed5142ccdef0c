"""NKI kernels wherever a kernel is taken (issue 41 item 6; docs/sweeps.md "NKI kernels", docs/tuning.md): sweep
entries FILE.py::FUNCTION with the tensors and keywords the tuner takes (the CLI's --shape / --input / --kwarg, the
Python API's nki_args), each row timed exactly as `neuronsim nki --timing-only` times the kernel on that arch;
`neuronsim nki --sensitivity` on a kernel file; `neuronsim report FILE.py::FUNCTION`. Rows, messages and pages name
the kernel file as given, never the temporary BIR."""
import json

import numpy as np
import pytest

import neuronsim
import neuronsim.nki as nki
from conftest import ROOT, SANITIZED, cli, cli_error
from neuronsim import sweeps

pytestmark = pytest.mark.skipif(SANITIZED, reason="sweeps of NKI kernels are pure Python over the front end and "
                                                  "neuronsim.run (checked under ASan by the rest of the suite)")

KERNEL = "tests/python/nki_kernels/tune_scale.py"  # as given on the command line (the CLI runs in the checkout)
TARGET = f"{KERNEL}::scale"
BOOM_LINE = next(i for i, line in enumerate((ROOT / KERNEL).read_text().splitlines(), 1) if "raise ValueError" in line)
TEMPORARY = "neuronsim-nki-"  # the folder `neuronsim nki` traces into


def nki_stats(tmp, *args):
    """The --stats document of `neuronsim nki TARGET --timing-only ARGS`."""
    cli("nki", TARGET, "--timing-only", "--stats", tmp / "s.json", *args)
    return json.loads((tmp / "s.json").read_text())


def test_sweep_cli_times_each_nki_kernel_as_nki_does(client, tmp):
    out = tmp / "r.csv"
    r = cli("sweep", TARGET, f"fast@t256={TARGET}", "--shape", "x=128x512", "--kwarg", "TILE=256", "--arch",
            "trn1,trn2", "--scheduler", client.scheduler.address, "-o", out)
    assert "sweep: 4 tasks (0 resumed, 4 run on" in r.stdout and "4 ok, 0 mismatch, 0 error" in r.stdout
    rows = sweeps.read_results(out)  # in the order the tasks finished
    assert sorted((x["kernel"], x["group"], x["variant"], x["arch"]) for x in rows) == [
        ("fast@t256", "fast", "t256", "trn1"), ("fast@t256", "fast", "t256", "trn2"),
        (TARGET, "scale", "tune_scale", "trn1"), (TARGET, "scale", "tune_scale", "trn2")]
    assert all(x["path"] == f"{ROOT / KERNEL}::scale" and x["status"] == "ok" for x in rows)
    for arch in ("trn1", "trn2"):
        s = nki_stats(tmp, "--shape", "x=128x512", "--kwarg", "TILE=256", "--arch", arch)
        # 512 columns in tiles of 256: two loads, two multiplies, two adds, two stores, and the zeroed scratch.
        assert s["dynamic_instructions"] == 9
        for x in rows:
            if x["arch"] == arch:
                assert (x["total_ns"], x["dynamic_instructions"], x["dve_busy_ns"]) == \
                       (s["total_ns"], 9, s["engines"]["DVE"]["busy_ns"])
    # The keyword reaches the kernel: tiles of 128 are four trips, 17 instructions.
    rows = neuronsim.sweep(TARGET, "trn1", nki_args={"x": nki.tensor((128, 512))}, client=client)
    assert rows[0]["dynamic_instructions"] == 17
    assert rows[0]["total_ns"] == nki_stats(tmp, "--shape", "x=128x512")["total_ns"]


def test_sweep_python_api_takes_tensors_arrays_and_keywords(client, tmp):
    x = np.arange(128 * 512, dtype=np.float32).reshape(128, 512)
    np.save(tmp / "x.npy", x)
    timing, numeric = (neuronsim.sweep({"k": str(ROOT / TARGET)}, "trn2", nki_args={"x": arg, "TILE": 256},
                                       timing_only=t, client=client)[0]
                       for arg, t in ((nki.tensor((128, 512)), True), (x, False)))
    want = nki_stats(tmp, "--shape", "x=128x512", "--kwarg", "TILE=256", "--arch", "trn2")["total_ns"]
    assert (timing["mode"], timing["status"], timing["total_ns"]) == ("timing", "ok", want)
    # A numeric run of the same program: every output element written, nothing compared (no expected outputs).
    assert (numeric["mode"], numeric["status"], numeric["unwritten"], numeric["expect"]) == ("numeric", "ok", 0,
                                                                                            None)
    assert numeric["total_ns"] == want
    # The kernel's own arch when none is given (trn1: no platform_target, no nl.nc grid).
    assert neuronsim.sweep(str(ROOT / TARGET), nki_args={"x": x}, client=client)[0]["arch"] == "trn1"


def test_sweep_rows_of_kernels_that_fail_name_the_file(client, tmp):
    out = tmp / "r.csv"
    r = cli("sweep", f"boom={TARGET}", f"wide={TARGET}", "--shape", "x=128x512", "--kwarg", "BOOM=True", "--arch",
            "trn1", "--scheduler", client.scheduler.address, "-o", out, check=False)
    assert r.returncode == 1 and "0 ok, 0 mismatch, 2 error" in r.stdout
    for x in sweeps.read_results(out):
        assert (x["status"], x["exit_code"], x["error_type"]) == ("error", 3, "ValueError")
        assert x["error"] == f"{KERNEL}:{BOOM_LINE}: ValueError: BOOM is set"
    # The front end's refusal (an SBUF overflow at that size) is the row's error, KernelError, naming the line.
    rows = neuronsim.sweep(TARGET, "trn1", nki_args={"x": nki.tensor((128, 512)), "WIDE": 1000}, client=client)
    assert (rows[0]["status"], rows[0]["exit_code"], rows[0]["error_type"]) == ("error", 3, "KernelError")
    assert rows[0]["error"].startswith(f"{KERNEL}:") and "SBUF overflow" in rows[0]["error"]
    assert TEMPORARY not in rows[0]["error"]


def test_sweep_refuses_arguments_no_nki_kernel_takes(client, tmp):
    where = ("--scheduler", client.scheduler.address)
    code, message = cli_error("sweep", TARGET, "--shape", "x=128x512", "--kwarg", "NOPE=1", *where)
    assert code == 3 and message == (f"sweep: --kwarg NOPE: {TARGET} takes no keyword 'NOPE' (its parameters: x, "
                                     "TILE, FACTOR, WIDE, BOOM, SLEEP)")
    code, message = cli_error("sweep", TARGET, *where)
    assert code == 2 and message.startswith("sweep: kernel parameter 'x' needs --input x=FILE.npy")
    code, message = cli_error("sweep", "tests/python/nki_kernels/nothere.py::scale", *where)
    assert code == 3 and message == ("sweep: no such kernel file: tests/python/nki_kernels/nothere.py (of "
                                     "tests/python/nki_kernels/nothere.py::scale)")
    code, message = cli_error("sweep", f"{KERNEL}::nothing", "--shape", "x=128x512", *where)
    assert code == 3 and message == f"sweep: {KERNEL}: no function 'nothing'"
    code, message = cli_error("sweep", "workloads/softmax", "--kwarg", "TILE=256", *where)
    assert code == 2 and "are for NKI kernels (FILE.py::FUNCTION), and no kernel of the sweep is one" in message


def test_sensitivity_of_an_nki_kernel(tmp):
    r = cli("nki", TARGET, "--shape", "x=128x512", "--timing-only", "--sensitivity", "--json")
    doc = json.loads(r.stdout)
    assert doc["kernel"] == TARGET and TEMPORARY not in r.stdout
    rows = {row["parameter"]: row for row in doc["sensitivity"]}
    # The "DMA latency /2" rerun is the run on trn1 with dma_latency_ns halved (850 -> 425), as --set runs it.
    row = rows["DMA latency /2"]
    assert row["arch"] == "trn1+{dma_latency_ns=425}"
    halved = nki_stats(tmp, "--shape", "x=128x512", "--set", "dma_latency_ns=425")["total_ns"]
    assert row["total_ns"] == halved
    assert row["speedup"] == pytest.approx(doc["total_ns"] / halved)
    # A kernel that cannot be traced: the message names the kernel file's line.
    code, message = cli_error("nki", TARGET, "--shape", "x=128x512", "--kwarg", "BOOM=True", "--sensitivity")
    assert code == 3 and message == f"{KERNEL}:{BOOM_LINE}: ValueError: BOOM is set"


def test_report_of_an_nki_kernel(tmp):
    page = tmp / "p.html"
    r = cli("report", TARGET, "--shape", "x=128x512", "--kwarg", "TILE=256", "--timing-only", "-o", page)
    assert r.stdout.endswith(f"report: {page}\n")
    html = page.read_text()
    assert f"{TARGET} on trn1" in html and TEMPORARY not in html
    # The same page as `neuronsim nki ... --report` writes, with the same run in it.
    cli("nki", TARGET, "--shape", "x=128x512", "--kwarg", "TILE=256", "--timing-only", "--report", tmp / "q.html",
        "--stats", tmp / "s.json")
    total = json.loads((tmp / "s.json").read_text())["total_ns"]
    assert repr(total) in html and repr(total) in (tmp / "q.html").read_text()
    # `report` of that run's --stats names the kernel file too.
    cli("report", tmp / "s.json", "-o", tmp / "r.html")
    assert f"{TARGET} on trn1" in (tmp / "r.html").read_text()
    code, message = cli_error("report", f"{KERNEL}::scale", "-o", page)
    assert code == 2 and message.startswith("kernel parameter 'x' needs --input x=FILE.npy")
    code, message = cli_error("report", "tests/python/nki_kernels/nothere.py::f", "-o", page)
    assert code == 3 and message.startswith("tests/python/nki_kernels/nothere.py: cannot open kernel file")
