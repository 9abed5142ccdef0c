"""The sanitizer (--sanitize, sanitize=True; docs/sanitizer.md) from the outside: the ordinary-mistake kernels of
tests/python/nki_kernels/sanitizer_mistakes.py each report exactly the expected finding (kind, tensor, range, line);
the CLI's lines, exit code 5 and stats list; the Python API's findings and SanitizerError; and no false positive on
everything bundled: every workload (workloads/*, workloads/multicore/*), the encoded bundle streams of each, every
NKI kernel of workloads/nki, the real compiler output (workloads/kernel1)."""
import json
import re

import numpy as np
import pytest

import neuronsim
import neuronsim.nki as nki
import neuronsim.nki.isa as nisa
import neuronsim.nki.language as nl

from conftest import ROOT, SANITIZED, cli
from test_nki_isa import bir_ops
from test_nki_isa_matmul import matmults
from test_nki_workloads import KERNELS, args_for, grid

MISTAKES = ROOT / "tests/python/nki_kernels/sanitizer_mistakes.py"


def line_of(name):
    """The line of sanitizer_mistakes.py marked `# MISTAKE: name`."""
    for n, text in enumerate(MISTAKES.read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# MISTAKE: {name}"):
            return n
    raise AssertionError(name)


def mistakes():
    import importlib.util
    nki.install()
    spec = importlib.util.spec_from_file_location("sanitizer_mistakes", MISTAKES)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def one(findings, kind):
    assert len(findings) == 1, findings
    f = findings[0]
    assert f["kind"] == kind
    assert set(f) == {"kind", "instruction", "opcode", "file", "line", "tensor", "range", "core", "trip", "other"}
    return f


RNG = np.random.default_rng(0)


def test_an_uninitialized_counter():
    m = mistakes()
    x = RNG.uniform(-1, 1, (128, 512)).astype(np.float32)
    r = nki.benchmark(m.count_positive, x, sanitize=True)
    f = one(r.findings, "uninitialized-read")
    assert (f["tensor"], f["range"], f["line"], f["opcode"]) == ("counts", "[0:128, 0:1]", line_of("counter"),
                                                               "TensorTensor")
    assert f["file"].endswith("sanitizer_mistakes.py") and f["other"] is None and f["trip"] is None
    # Without the sanitizer the same run says nothing, and every count is off by one (0xFF fill: -1).
    plain = nki.benchmark(m.count_positive, x)
    assert plain.findings is None
    np.testing.assert_array_equal(plain.outputs["out"][:, 0], (x > 0).sum(axis=1) - 1)


def test_an_output_read_before_it_is_written():
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    f = one(nki.benchmark(mistakes().add_to_output, x, sanitize=True).findings, "uninitialized-read")
    assert (f["tensor"], f["range"], f["line"], f["opcode"]) == ("out", "[0:128, 0:64]", line_of("output"), "Load")


def test_psum_accumulation_into_a_tile_nothing_zeroed():
    lhsT = RNG.uniform(-1, 1, (256, 128)).astype(np.float32)
    rhs = RNG.uniform(-1, 1, (256, 512)).astype(np.float32)
    m = mistakes()
    r = nki.benchmark(m.matmul_unzeroed, lhsT, rhs, sanitize=True)
    f = one(r.findings, "uninitialized-read")
    assert (f["tensor"], f["range"], f["line"], f["opcode"]) == ("acc", "[0:128, 0:512]", line_of("psum"), "Matmult")
    # The simulator's first write copies into unwritten PSUM, so the values are those of a zeroed tile: the finding
    # is the only sign.
    np.testing.assert_allclose(r.outputs["out"], lhsT.T @ rhs, rtol=1e-4, atol=1e-4)


def plus_equals_into_ndarray(lhsT, rhs):
    """matmul_unzeroed with `+=` (the compiler's accumulate=None): the k loop's first trip starts the group."""
    out = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(lhsT.shape[0] // 128):
        acc += nisa.nc_matmul(nl.load(lhsT[k * 128:(k + 1) * 128, :]), nl.load(rhs[k * 128:(k + 1) * 128, :]))
    nl.store(out, value=nl.copy(acc))
    return out


def dst_form_into_ndarray(lhsT, rhs):
    """The same with nc_matmul(dst, ...) and accumulate left at None."""
    out = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(lhsT.shape[0] // 128):
        nisa.nc_matmul(acc, nl.load(lhsT[k * 128:(k + 1) * 128, :]), nl.load(rhs[k * 128:(k + 1) * 128, :]))
    nl.store(out, value=nl.copy(acc))
    return out


@pytest.mark.parametrize("kernel", [plus_equals_into_ndarray, dst_form_into_ndarray])
def test_a_matmul_with_the_flag_inferred_starts_its_group_on_unwritten_psum(kernel):
    """NKI nc_matmul, "Accumulation mode": with accumulate=None (and `+=`) the first write of a PSUM location
    overwrites and later ones accumulate -- no finding, the sum of the k tiles only."""
    lhsT = RNG.uniform(-1, 1, (384, 128)).astype(np.float32)
    rhs = RNG.uniform(-1, 1, (384, 512)).astype(np.float32)
    r = nki.benchmark(kernel, lhsT, rhs, sanitize=True)
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["out"], lhsT.T @ rhs, rtol=1e-4, atol=1e-4)


def test_a_vector_add_into_psum_nothing_wrote():
    x = RNG.uniform(-1, 1, (384, 512)).astype(np.float32)
    r = nki.benchmark(mistakes().psum_add_unwritten, x, sanitize=True)
    f = one(r.findings, "uninitialized-read")
    assert (f["tensor"], f["range"], f["line"]) == ("acc", "[0:128, 0:512]", line_of("psum-add"))
    assert f["opcode"] != "Matmult"


def test_an_affine_range_trip_reading_the_previous_trips_store():
    x = RNG.uniform(-1, 1, (128, 512)).astype(np.float32)
    r = nki.benchmark(mistakes().running_total, x, sanitize=True)
    f = one(r.findings, "loop-carried-dependency")
    o = f["other"]
    # Trip t (i = t + 1) loads out[:, 128 t : 128 (t + 1)], which trip t - 1 stored: trips 1 and 2 (i = 2, 3) read
    # what trips 0 and 1 (i = 1, 2) wrote.
    assert (f["opcode"], f["tensor"], f["range"], f["line"]) == ("Load", "out", "[0:128, 128:384]",
                                                                 line_of("carried"))
    assert (o["opcode"], o["tensor"], o["trip"]) == ("Save", "out", f["trip"] - 1)
    assert r.finding_lines[0].startswith("sanitizer: loop-carried-dependency: ")
    assert "nl.sequential_range" in r.finding_lines[0] and f"(i = {f['trip'] + 1})" in r.finding_lines[0]


def test_loop_carried_regions_of_partly_overlapping_tiles():
    """The loop-carried shadow keeps byte ranges, cut where an access starts or ends inside one: the regions are the
    overlaps only, and tiles that merely touch (or a trip reading back its own tile) are clean."""
    m = mistakes()
    x = RNG.uniform(-1, 1, (128, 416)).astype(np.float32)
    r = nki.benchmark(m.overlapping_tiles, x, sanitize=True)
    f = one(r.findings, "loop-carried-dependency")
    # Trips 0-3 store [0, 128), [96, 224), [192, 320), [288, 416): overlaps [96, 128), [192, 224), [288, 320), whose
    # bounding box is 96:320 (columns 128:192 and 224:288 have one writer each; so do 0:96 and 320:416).
    assert (f["opcode"], f["tensor"], f["range"], f["line"]) == ("Save", "out", "[0:128, 96:320]", line_of("overlap"))
    assert f["other"]["opcode"] == "Save" and abs(f["trip"] - f["other"]["trip"]) == 1
    np.testing.assert_array_equal(r.outputs["out"], x)  # in order here, every trip stores x's own columns
    # Trip i writes [64 i, 64 i + 96) and reads [64 i + 32, 64 i + 128): trip i + 1's write [64 i + 64, 64 i + 160)
    # overlaps trip i's read at [64 i + 64, 64 i + 128) and its write at [64 i + 64, 64 i + 96); for i = 0, 1:
    # columns 64:128 and 128:192.
    f = one(nki.benchmark(m.shift_in_sbuf, x[:, :256], sanitize=True).findings, "loop-carried-dependency")
    assert (f["tensor"], f["range"], f["line"]) == ("t", "[0:128, 64:192]", line_of("shift"))
    assert nki.benchmark(m.abutting_tiles, x[:, :96], sanitize=True).findings == []


def test_two_cores_without_their_barrier_race():
    x = RNG.uniform(-1, 1, (128, 32)).astype(np.float32)
    r = nki.benchmark(mistakes().exchange_halves[nl_nc(2)], x, sanitize=True)
    # Each core's load of the other core's half races with that core's store: two findings, one per core, each
    # naming the load (its line) and the store on the other core over the same rows.
    assert len(r.findings) == 2, r.findings
    got = set()
    for f in r.findings:
        o = f["other"]
        assert f["kind"] == "race" and f["trip"] is None and o["trip"] is None
        # The finding is reported at whichever access of the pair executes second (timing decides): the load first.
        if f["opcode"] == "Save":
            f, o = o, f
        race = line_of("race")
        assert (f["opcode"], f["line"], o["opcode"], o["line"]) == ("Load", race, "Save", race - 1)
        assert f["tensor"] == o["tensor"] == "out" and f["range"] == o["range"]
        got.add((f["core"], o["core"], f["range"]))
    assert got == {(0, 1, "[64:128, 0:32]"), (1, 0, "[0:64, 0:32]")}


def test_a_race_over_a_window_of_the_other_cores_rows():
    x = RNG.uniform(-1, 1, (128, 64)).astype(np.float32)
    r = nki.benchmark(mistakes().exchange_window[nl_nc(2)], x, sanitize=True)
    # Core s stores rows [64 s, 64 s + 64) and loads rows [64 (1 - s) + 16, 64 (1 - s) + 48), columns 16:48, of the
    # other core's: per core one race over that window only.
    got = set()
    for f in r.findings:
        o = f["other"]
        assert f["kind"] == "race" and f["tensor"] == o["tensor"] == "out" and f["range"] == o["range"]
        load, save = (f, o) if f["opcode"] == "Load" else (o, f)
        assert (load["opcode"], load["line"], save["opcode"]) == ("Load", line_of("window"), "Save")
        got.add((load["core"], f["range"]))
    assert len(r.findings) == 2 and got == {(1, "[16:48, 16:48]"), (0, "[80:112, 16:48]")}


def nl_nc(n):
    import neuronsim.nki.language as nl
    return nl.nc(n)


def test_simulate_raises_sanitizer_error_with_the_findings():
    x = RNG.uniform(-1, 1, (128, 512)).astype(np.float32)
    with pytest.raises(neuronsim.SanitizerError) as e:
        nki.simulate(mistakes().count_positive, x, sanitize=True)
    assert e.value.exit_code == 5 and len(e.value.findings) == 1
    assert str(e.value).startswith("sanitizer: uninitialized-read: ")
    assert isinstance(e.value, neuronsim.Error)


def test_cli_lines_exit_code_and_stats(tmp):
    stats = tmp / "s.json"
    r = cli("nki", f"{MISTAKES}::count_positive", "--shape", "x=128x256", "--sanitize", "--quiet",
            "--outdir", str(tmp / "out"), "--stats", str(stats), check=False)
    assert r.returncode == 5, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("sanitizer: ")]
    assert len(lines) == 1 and lines[0].startswith("sanitizer: uninitialized-read: ")
    assert f"sanitizer_mistakes.py:{line_of('counter')} reads counts[0:128, 0:1]" in lines[0]
    assert (tmp / "out" / "out.npy").exists()  # the outputs are written first
    doc = json.loads(stats.read_text())
    assert [f["tensor"] for f in doc["sanitizer"]] == ["counts"]
    # A differing output does not hide it: 5, not 1 (the finding explains the difference).
    np.save(tmp / "want.npy", np.zeros((128, 1), np.int32))
    (tmp / "expect").mkdir()
    np.save(tmp / "expect" / "out.npy", np.zeros((128, 1), np.int32))
    r = cli("nki", f"{MISTAKES}::count_positive", "--shape", "x=128x256", "--sanitize", "--quiet",
            "--outdir", str(tmp / "out"), "--expect", str(tmp / "expect"), check=False)
    assert r.returncode == 5, r.stdout + r.stderr
    # Timing-only: the same finding (addresses, not values).
    r = cli("nki", f"{MISTAKES}::count_positive", "--shape", "x=128x256", "--sanitize", "--timing-only",
            "--quiet", check=False)
    assert r.returncode == 5 and "sanitizer: uninitialized-read: " in r.stderr
    # Without --sanitize: nothing is said, exit 0, no "sanitizer" key.
    r = cli("nki", f"{MISTAKES}::count_positive", "--shape", "x=128x256", "--quiet", "--outdir", str(tmp / "o2"),
            "--stats", str(stats))
    assert "sanitizer" not in r.stderr and "sanitizer" not in json.loads(stats.read_text())


# ------------------------------------------------------------------------------------------- no false positives
MULTICORE = sorted(p.name for p in (ROOT / "workloads/multicore").iterdir() if list(p.glob("*.bir.json")))
SINGLE = sorted(p.name for p in (ROOT / "workloads").iterdir() if list(p.glob("*.bir.json")))
CLEAN_WORKLOADS = SINGLE + [f"multicore/{m}" for m in MULTICORE]
if SANITIZED:
    CLEAN_WORKLOADS = ["kernel1", "attention", "multicore/tp_mlp"]


@pytest.mark.parametrize("name", CLEAN_WORKLOADS)
def test_every_workload_and_its_bundles_run_clean(name, tmp):
    w = ROOT / "workloads" / name
    stats = tmp / "s.json"
    r = cli("run", str(w), "--sanitize", "--quiet", "--outdir", str(tmp / "out"), "--stats", str(stats),
            check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(stats.read_text())["sanitizer"] == []
    # Its encoded bundle streams (explicit semaphores: the race checks apply), numerically and timing-only, and
    # validated against the BIR.
    conf = json.loads((w / "run.json").read_text()) if (w / "run.json").exists() else {}
    cores = ["--cores", str(conf["cores"]), "--lnc", str(conf.get("lnc", 1))] if conf.get("cores", 1) > 1 else []
    gen = "v3" if conf.get("arch") == "trn2" else "v2"
    cli("encode", str(w), "--gen", gen, "-o", str(tmp / "enc"), *cores)
    inputs = ["--inputs", str(w / "inputs")] if (w / "inputs").exists() else []
    for extra in ([], ["--timing-only"]):
        r = cli("run", str(tmp / "enc"), "--sanitize", "--quiet", "--outdir", str(tmp / "out2"),
                *(inputs if not extra else []), *extra, check=False)
        assert r.returncode == 0, r.stdout + r.stderr
    r = cli("validate", "--bir", str(w), "--bundles", str(tmp / "enc"), "--sanitize", check=False)
    assert r.returncode == 0 and "sanitizer" not in r.stderr, r.stdout + r.stderr


NKI_KERNELS = ["attention", "tensor_add", "tp_mlp"] if SANITIZED else sorted(KERNELS)


@pytest.mark.parametrize("name", NKI_KERNELS)
def test_every_nki_workload_kernel_runs_clean(name, tmp):
    stats = tmp / "s.json"
    r = cli("nki", f"{ROOT}/workloads/nki/{name}.py::{name}", *args_for(name), *grid(name), "--sanitize",
            "--quiet", "--outdir", str(tmp / "out"), "--stats", str(stats), check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(stats.read_text())["sanitizer"] == []


def test_the_front_end_records_what_the_sanitizer_needs():
    """debug.nki: every instruction in a loop names the kernel's loop and its trip; the tile declared in the body is
    local to it; the PSUM accumulation is a reduction; accumulate=True into an nl.ndarray PSUM tile accumulates from
    its first matmul on (start_tensor_calc false), where `+=` lets the first trip start the group."""
    m = mistakes()
    bir = nki.to_bir(m.matmul_unzeroed, nki.tensor((256, 128)), nki.tensor((256, 512)))
    mm = matmults(bir)
    assert mm and all(not i.get("start_tensor_calc", True) for i in mm)
    for i in mm:
        n = i["debug"]["nki"]
        assert n["reduce"] == "add" and n["reduce_in"] == -1
        assert [(lp["kind"], lp["var"]) for lp in n["loops"]] == [("affine", "k")]
    loads = [i for op, i in bir_ops(bir) if op == "Load"]
    assert all(i["debug"]["nki"]["local"] == [0, 1] for i in loads)  # HBM source; the tile a, b of the body
    allocs = {a["name"]: a for a in bir["functions"][0]["allocations"]}
    assert allocs["acc_set"]["debug"]["nki"]["shape"] == [128, 512]
    mm = matmults(nki.to_bir(plus_equals_into_ndarray, nki.tensor((256, 128)), nki.tensor((256, 512))))
    assert [i["start_tensor_calc"] for i in mm] == [True, False]  # k = 0 peeled, then the loop of the rest
    assert re.match(r"\d+", str(loads[0]["debug"]["lineno"]))
