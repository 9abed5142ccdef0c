"""neuronsim.nki end to end: NKI kernel files run unmodified (the legacy neuronxcc.nki namespace and the newer nki
one) through `neuronsim nki FILE.py::FUNCTION` and neuronsim.nki.simulate / benchmark, outputs checked against
numpy, the profile in the kernel file's own lines; errors in the kernel's terms (exit 3)."""
import importlib.util
import json
import pathlib
import sys

import numpy as np
import pytest

import neuronsim
import neuronsim.nki as nki

from conftest import ROOT, cli

KERNELS = pathlib.Path(__file__).resolve().parent / "nki_kernels"
TENSOR_ADD = ROOT / "workloads" / "nki" / "tensor_add.py"


def load(path):
    nki.install()
    spec = importlib.util.spec_from_file_location(path.stem + "_test_module", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rand(shape, seed):
    return np.random.default_rng(seed).uniform(-4, 4, shape).astype(np.float32)


def test_install_serves_both_namespaces_and_says_so():
    done = nki.install()
    for name in ("neuronxcc", "neuronxcc.nki", "neuronxcc.nki.language", "neuronxcc.nki.isa", "nki",
                 "nki.language", "nki.isa"):
        assert done[name] == "neuronsim", (name, done)  # no real Neuron SDK on this machine
    import neuronxcc.nki.language as legacy_nl
    import nki.language as new_nl
    assert legacy_nl is new_nl is nki.language


def test_legacy_namespace_file_runs_unmodified_and_matches_numpy():
    mod = load(TENSOR_ADD)
    a, b = rand((256, 64), 1), rand((256, 64), 2)
    out = nki.simulate(mod.tensor_add, a, b)
    np.testing.assert_array_equal(out, a + b)  # one fp32 rounding of the exact sum on both sides


def test_new_namespace_file_runs_unmodified_and_matches_numpy():
    mod = load(KERNELS / "new_namespace_add.py")
    a, b = rand((384, 32), 3), rand((384, 32), 4)
    c, d = nki.simulate(mod.add_and_scale, a, b)
    np.testing.assert_array_equal(c, a + b)
    np.testing.assert_array_equal(d, 2 * a)  # times 2 is exact in fp32


def test_older_style_output_argument_is_written_in_place():
    mod = load(KERNELS / "legacy_add_inplace.py")
    a, b = rand((256, 16), 5), rand((256, 16), 6)
    c = np.zeros_like(a)
    assert nki.simulate(mod.add_inplace, a, b, c) is None
    np.testing.assert_array_equal(c, a + b)


def test_benchmark_profile_names_the_kernel_lines():
    mod = load(TENSOR_ADD)
    a, b = rand((256, 64), 1), rand((256, 64), 2)
    r = nki.benchmark(mod.tensor_add, a, b)
    assert isinstance(r, neuronsim.Result) and r.total_ns > 0
    lines = {(pathlib.Path(x["file"]).name, x["line"]) for x in r.stats["profile"]["source_lines"]}
    # tensor_add.py: line 13 loads a, 14 loads b, 15 adds, 16 stores
    assert lines == {("tensor_add.py", 13), ("tensor_add.py", 14), ("tensor_add.py", 15), ("tensor_add.py", 16)}
    np.testing.assert_array_equal(r.outputs["c"], a + b)


def test_loop_is_one_bir_loop_not_unrolled():
    mod = load(TENSOR_ADD)
    small = nki.to_bir(mod.tensor_add, nki.tensor((256, 64)), nki.tensor((256, 64)))
    big = nki.to_bir(mod.tensor_add, nki.tensor((128 * 64, 64)), nki.tensor((128 * 64, 64)))

    def count(insts):
        n = 0
        for i in insts:
            n += sum(count(b["instructions"]) for b in i.get("blocks", [])) if i["opcode"] == "Loop" else 1
        return n
    n_small = sum(count(b["instructions"]) for b in small["functions"][0]["blocks"])
    n_big = sum(count(b["instructions"]) for b in big["functions"][0]["blocks"])
    # 2 trips, B = 2: a prologue load pair, then 2 bodies (add, store; the first also loads the next pair) = 8.
    # 64 trips, B = 4: 3 prologue load pairs (6) + a loop of one group of 4 (load pair, add, store: 16) + the last
    # group (its first trip loads the last pair: 4, then 3 x add, store: 6) = 32, whatever the trip count.
    assert n_small == 8
    assert n_big == 6 + 16 + 10


def test_cli_runs_the_file_checks_outputs_and_shows_its_lines(tmp):
    a, b = rand((256, 64), 7), rand((256, 64), 8)
    np.save(tmp / "a.npy", a)
    np.save(tmp / "b.npy", b)
    (tmp / "want").mkdir()
    np.save(tmp / "want" / "c.npy", a + b)
    r = cli("nki", f"{TENSOR_ADD}::tensor_add", "--input", f"a={tmp / 'a.npy'}", "--input", f"b={tmp / 'b.npy'}",
            "--expect", tmp / "want", "--rtol", "0", "--atol", "0", "--top", "3", "--outdir", tmp / "out",
            "--stats", tmp / "s.json", "--emit-bir", tmp / "k.bir.json")
    assert "neuronsim nki: " in r.stdout and "tensor_add.py::tensor_add" in r.stdout
    assert "outputs match" in r.stdout
    assert "tensor_add.py:14" in r.stdout  # --top rows carry the kernel's lines
    np.testing.assert_array_equal(np.load(tmp / "out" / "c.npy"), a + b)
    stats = json.loads((tmp / "s.json").read_text())
    assert stats["command_line"][:2] == ["neuronsim", "nki"]
    assert {x["line"] for x in stats["profile"]["source_lines"]} == {13, 14, 15, 16}
    # --emit-bir wrote the module that ran: it runs as any BIR file
    r2 = cli("run", tmp / "k.bir.json", "--input", f"a={tmp / 'a.npy'}", "--input", f"b={tmp / 'b.npy'}",
             "--expect", tmp / "want", "--rtol", "0", "--atol", "0", "--outdir", tmp / "out2")
    assert "outputs match" in r2.stdout


def test_cli_timing_only_with_shapes(tmp):
    r = cli("nki", f"{KERNELS / 'new_namespace_add.py'}::add_and_scale", "--shape", "a=256x32", "--shape",
            "b=256x32:float32", "--timing-only", "--json")
    doc = json.loads(r.stdout)
    assert doc["timing_only"] is True and doc["total_ns"] > 0


def test_kernel_error_names_file_line_and_tensor_exit_3():
    r = cli("nki", f"{KERNELS / 'bad_shapes.py'}::bad", "--shape", "a=128x64", "--shape", "b=128x64", check=False)
    assert r.returncode == 3, r.stderr
    assert "bad_shapes.py:10" in r.stderr and "shape mismatch" in r.stderr and "x" in r.stderr


def test_kernel_error_is_invalid_input_in_python():
    mod = load(KERNELS / "bad_shapes.py")
    with pytest.raises(nki.KernelError) as e:
        nki.simulate(mod.bad, rand((128, 64), 1), rand((128, 64), 2))
    assert isinstance(e.value, neuronsim.InvalidInput) and e.value.exit_code == 3
    assert e.value.line == 10 and e.value.file.endswith("bad_shapes.py")


def test_cli_usage_errors():
    r = cli("nki", f"{TENSOR_ADD}::tensor_add", "--shape", "a=256x64", check=False)
    assert r.returncode == 2 and "'b' needs --input b=FILE.npy or --shape b=" in r.stderr
    r = cli("nki", f"{TENSOR_ADD}::tensor_add", "--shape", "a=256xq", "--shape", "b=256x64", check=False)
    assert r.returncode == 2 and "--shape a" in r.stderr
    r = cli("nki", f"{TENSOR_ADD}", check=False)
    assert r.returncode == 2 and "FILE.py::FUNCTION" in r.stderr
    r = cli("nki", f"{TENSOR_ADD}::no_such", "--shape", "a=1x1", check=False)
    assert r.returncode == 3 and "no function 'no_such'" in r.stderr


def test_unsupported_call_names_the_call_and_line(tmp):
    (tmp / "k.py").write_text("import nki.language as nl\n\n\ndef k(a):\n    x = nl.load(a)\n"
                              "    y = nl.fancy_new_op(x)\n    return y\n")
    r = cli("nki", f"{tmp / 'k.py'}::k", "--shape", "a=128x8", check=False)
    assert r.returncode == 3 and "nl.fancy_new_op" in r.stderr and "k.py:6" in r.stderr


def test_cli_supplies_shared_constants(tmp):
    (tmp / "k.py").write_text(
        "import numpy as np\nimport nki.language as nl\n\n\ndef k(a):\n"
        "    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)\n"
        "    c = nl.shared_constant(np.full((128, 8), 3, np.int32), dtype=nl.float32)\n"
        "    nl.store(out, nl.multiply(nl.load(a), nl.load(c)))\n    return out\n")
    a = rand((128, 8), 9)
    np.save(tmp / "a.npy", a)
    cli("nki", f"{tmp / 'k.py'}::k", "--input", f"a={tmp / 'a.npy'}", "--outdir", tmp / "out")
    np.testing.assert_array_equal(np.load(tmp / "out" / "out.npy"), a * 3)
    cli("nki", f"{tmp / 'k.py'}::k", "--shape", "a=128x8", "--timing-only")  # no constant data needed


def test_launch_grid_on_cores_and_one_after_the_other():
    mod = load(KERNELS / "spmd_scale.py")
    x = rand((512, 64), 10)
    on_cores = nki.benchmark(mod.scale_rows[nki.language.nc(2)], x)  # 2 cores of one logical core (trn2)
    in_turn = nki.benchmark(mod.scale_rows[2], x, arch="trn2")      # both instances on one core
    for r in (on_cores, in_turn):
        np.testing.assert_array_equal(r.outputs["out"], 2 * x)
    assert on_cores.arch == "trn2" and on_cores.stats["device"]["cores"] == 2
    # The two cores share the work: the run takes less simulated time than the instances one after the other.
    assert on_cores.total_ns < in_turn.total_ns
    # One trace for both cores: the shard id is in the access patterns (ShardIDKind), not a second copy.
    assert '"ShardIDKind"' in json.dumps(nki.to_bir(mod.scale_rows[nki.language.nc(2)], x))


def test_cli_grid(tmp):
    np.save(tmp / "x.npy", rand((512, 64), 11))
    for grid in ("nc2", "2"):
        r = cli("nki", f"{KERNELS / 'spmd_scale.py'}::scale_rows", "--input", f"x={tmp / 'x.npy'}", "--grid", grid,
                "--outdir", tmp / grid, "--json")
        doc = json.loads(r.stdout)
        assert doc["arch"] == ("trn2" if grid == "nc2" else "trn1")
        np.testing.assert_array_equal(np.load(tmp / grid / "out.npy"), 2 * np.load(tmp / "x.npy"))
    r = cli("nki", f"{KERNELS / 'spmd_scale.py'}::scale_rows", "--shape", "x=512x64", "--grid", "ncq", check=False)
    assert r.returncode == 2 and "--grid" in r.stderr


def test_an_error_of_the_kernel_file_itself_is_exit_3_naming_its_line(tmp):
    (tmp / "k.py").write_text("import nki.language as nl\n\n\ndef k(a):\n    assert a.shape[0] == 256, 'rows'\n"
                              "    return a\n")
    r = cli("nki", f"{tmp / 'k.py'}::k", "--shape", "a=128x8", check=False)
    assert r.returncode == 3 and "k.py:5: AssertionError: rows" in r.stderr, r.stderr
