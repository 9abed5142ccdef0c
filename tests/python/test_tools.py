"""neuronsim.isa, encode and validate against `neuronsim isa --json`, `encode` and `validate`."""
import json

import numpy as np
import pytest

import neuronsim
from conftest import ROOT, cli

K1 = "workloads/kernel1"


@pytest.fixture(autouse=True)
def in_checkout(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_isa_is_the_cli_document():
    doc = neuronsim.isa()
    assert doc == json.loads(cli("isa", "--json").stdout)
    assert len(doc["instruction_types"]) == 110  # the 110-row instruction table (spec 000)


def folder_files(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


@pytest.mark.parametrize("gen", ["v2", "v3", "v4"])
def test_encode_gives_the_cli_files(gen, tmp):
    cli("encode", "workloads/softmax", "--gen", gen, "-o", tmp / "cli")
    files = neuronsim.encode("workloads/softmax", gen)
    assert files == folder_files(tmp / "cli")
    assert "manifest.json" in files and all(len(b) % 64 == 0 for n, b in files.items() if n.endswith(".bin"))
    assert json.loads(files["manifest.json"])["generation"] == gen


def test_encode_outdir_and_arch(tmp):
    files = neuronsim.encode(K1, "v2", arch="trn3", outdir=tmp / "o")
    assert files == folder_files(tmp / "o")
    cli("encode", K1, "--gen", "v2", "--arch", "trn3", "-o", tmp / "cli")
    assert files == folder_files(tmp / "cli")
    # A folder that holds something else is refused, as by the CLI.
    (tmp / "mine").mkdir()
    (tmp / "mine/notes.txt").write_text("mine")
    with pytest.raises(neuronsim.InvalidInput, match="refusing to write there"):
        neuronsim.encode(K1, "v2", outdir=tmp / "mine")
    assert (tmp / "mine/notes.txt").read_text() == "mine"


def test_encode_refuses_bundle_streams(tmp):
    neuronsim.encode(K1, "v3", outdir=tmp / "s")
    with pytest.raises(neuronsim.InvalidInput, match="bundle streams given where BIR is needed"):
        neuronsim.encode(neuronsim.load(tmp / "s"), "v3")


def test_validate_agrees_and_prints_as_the_cli(tmp):
    files = neuronsim.encode(K1, "v3", outdir=tmp / "s")
    rep = neuronsim.validate(K1, files)
    assert rep.ok and bool(rep) and rep.divergence is None and rep.lint == [] and rep.lint_errors == 0
    assert rep.summary.startswith("validate: OK")
    assert str(rep) == cli("validate", "--bir", K1, "--bundles", tmp / "s").stdout
    assert str(neuronsim.validate(K1, tmp / "s")) == str(rep)


def test_validate_names_the_first_divergence(tmp):
    # softmax's first TensorReduce (the row max) carries its ALU byte at +0x24 (isa/tables/bundle_fields.def, form
    # TR): writing min's byte there is an encoder bug that changes the data.
    files = neuronsim.encode("workloads/softmax", "v3")
    manifest = json.loads(files["manifest.json"])
    reduce = next(i for i in manifest["instructions"] if i["type"] == "TensorReduce")
    alu = {op["name"]: op["wire"]["v3"] for op in neuronsim.isa()["alu_ops"]}
    data = bytearray(files[reduce["file"]])
    assert data[reduce["offset"] + 0x24] == alu["max"]
    data[reduce["offset"] + 0x24] = alu["min"]
    bad = {**files, reduce["file"]: bytes(data)}
    rep = neuronsim.validate("workloads/softmax", bad)
    assert not rep.ok and not bool(rep) and rep.lint_errors == 1
    assert rep.divergence.startswith(f"first divergence after DVE #0 (DVE.bin +0x0000, opcode 0x7c) TensorReduce "
                                     f"'{reduce['name']}': outs[0] 'neg_max'")
    assert rep.summary.startswith("validate: DIFFER")
    (tmp / "bad").mkdir()
    for name, blob in bad.items():
        (tmp / "bad" / name).write_bytes(blob)
    r = cli("validate", "--bir", "workloads/softmax", "--bundles", tmp / "bad", check=False)
    assert r.returncode == 1 and r.stdout == str(rep)


def test_validate_refuses_path_names_in_a_dict():
    with pytest.raises(neuronsim.InvalidInput, match="a bundle file name must be a plain file name"):
        neuronsim.validate(K1, {"../x.bin": b""})


def test_arch_files(tmp):
    """arch= takes an architecture file (str or os.PathLike) wherever it takes a name; arch_params reads one."""
    text = cli("arch", "--show", "trn2").stdout
    (tmp / "same.json").write_text(text)
    fast = json.loads(text)
    fast["dve_ghz"]["value"] = 1.92  # twice trn2's DVE clock
    (tmp / "fast.json").write_text(json.dumps(fast))
    trn2 = neuronsim.run(K1, arch="trn2", timing_only=True)
    assert neuronsim.run(K1, arch=tmp / "same.json", timing_only=True).total_ns == trn2.total_ns
    # kernel1's DVE instruction holds the critical path for 64 + 60 + 100 cycles (tests/cli/test_arch_cli.cpp).
    faster = neuronsim.run(K1, arch=str(tmp / "fast.json"), timing_only=True)
    assert trn2.total_ns - faster.total_ns == pytest.approx(224 / 0.96 - 224 / 1.92, abs=0.002)
    assert neuronsim.arch_params("trn2")["dve_ghz"] == 0.96
    assert neuronsim.arch_params(tmp / "fast.json")["dve_ghz"] == 1.92
    assert neuronsim.arch_params("trn1")["core_gen"] == 2
    assert neuronsim.validate(K1, neuronsim.encode(K1, "v3", arch=tmp / "fast.json"), arch=tmp / "fast.json")
    fast["pe_ghz"]["value"] = -1
    (tmp / "bad.json").write_text(json.dumps(fast))
    with pytest.raises(neuronsim.InvalidInput) as e:
        neuronsim.run(K1, arch=tmp / "bad.json")
    assert str(e.value) == f"{tmp}/bad.json: field 'pe_ghz': the value must be in [0.01, 100], got -1 (arch_params.def)"
    with pytest.raises(TypeError, match="arch must be a name"):
        neuronsim.run(K1, arch=2)
    # A sweep checks the file at once and hands its workers the absolute path.
    from neuronsim import sweeps
    assert sweeps.archs_of(f"trn1,{tmp}/fast.json") == ["trn1", f"{tmp}/fast.json"]
    with pytest.raises(neuronsim.InvalidInput, match="field 'pe_ghz'"):
        sweeps.archs_of([str(tmp / "bad.json")])


# Multi-core bundles (docs/multicore.md): encode(cores=, lnc=) is `encode --cores N --lnc L` over the same
# library call, its dict names every file by its path in the folder (cores.json, core<i>/<file>).
TP2 = "workloads/multicore/tp_mlp_2ranks"


def tree_files(d):
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_encode_cores_gives_the_cli_folder(tmp):
    cli("encode", TP2, "--gen", "v3", "--cores", "2", "--lnc", "1", "-o", tmp / "cli")
    files = neuronsim.encode(TP2, "v3", cores=2, lnc=1, outdir=tmp / "py")
    assert files == tree_files(tmp / "cli") == tree_files(tmp / "py")
    assert {n.split("/")[0] for n in files} == {"cores.json", "core0", "core1"}
    index = json.loads(files["cores.json"])
    assert (index["cores"], index["lnc"], index["dirs"], index["generation"]) == (2, 1, ["core0", "core1"], "v3")
    for c in ("core0", "core1"):
        assert json.loads(files[c + "/manifest.json"])["generation"] == "v3"
        assert any(n.startswith(c + "/") and n.endswith(".bin") for n in files)
    # lnc alone means that many cores (as --lnc 2 alone), on an arch with logical cores of 2.
    lnc2 = neuronsim.encode("workloads/multicore/matmul_lnc2", "v3", lnc=2)
    cli("encode", "workloads/multicore/matmul_lnc2", "--gen", "v3", "--lnc", "2", "-o", tmp / "lnc2")
    assert lnc2 == tree_files(tmp / "lnc2")
    assert json.loads(lnc2["cores.json"])["cores"] == 2


def test_run_and_validate_a_multi_core_encode(tmp):
    files = neuronsim.encode(TP2, "v3", cores=2, lnc=1, outdir=tmp / "enc")
    # The streams' outputs are byte-identical to the BIR's two-core run (rank r's y at outputs["y"][r]).
    streams = neuronsim.run(tmp / "enc", TP2 + "/inputs")
    bir = neuronsim.run(TP2, arch="trn2", cores=2, lnc=1)
    assert streams.outputs["y"].shape == bir.outputs["y"].shape == (2,) + bir.outputs["y"].shape[1:]
    assert streams.outputs["y"].tobytes() == bir.outputs["y"].tobytes()
    assert streams.stats["device"]["cores"] == 2 and len(streams.stats["cores"]) == 2
    # The CLI's run of the folder writes the same bytes.
    cli("run", tmp / "enc", "--inputs", TP2 + "/inputs", "--outdir", tmp / "out")
    for r in range(2):
        assert np.load(tmp / "out" / f"rank{r}" / "y.npy").tobytes() == streams.outputs["y"][r].tobytes()
    # validate: the folder and the dict agree with the CLI's report, which names each core.
    rep = neuronsim.validate(TP2, files)
    assert rep.ok, str(rep)
    assert str(rep) == cli("validate", "--bir", TP2, "--bundles", tmp / "enc").stdout
    assert str(neuronsim.validate(TP2, tmp / "enc", cores=2, lnc=1)) == str(rep)
    assert "core1 " in str(rep)
    # A bug planted in core 1's stream is named with its core; the same bytes in a folder give the CLI's report.
    # kernel1 on two ranks (b = a - 1 each): core 1's DVE op0 byte (+0x24, isa/tables/bundle_fields.def) from
    # subtract (v3 0x05) to add (0x04), as tests/cli BundlesCli.MultiCoreBadFoldersAndDivergenceNameTheCore does.
    two = neuronsim.encode(K1, "v3", cores=2)
    alu = {op["name"]: op["wire"]["v3"] for op in neuronsim.isa()["alu_ops"]}
    data = bytearray(two["core1/DVE.bin"])
    assert data[0x24] == alu["subtract"]
    data[0x24] = alu["add"]
    bad = {**two, "core1/DVE.bin": bytes(data)}
    brep = neuronsim.validate(K1, bad)
    assert not brep.ok and brep.divergence.startswith("first divergence after core1 DVE #0"), str(brep)
    assert "'I-4'" in brep.divergence and any(l.startswith("lint: core1: ") for l in brep.lint)
    for name, blob in bad.items():
        (tmp / "bad" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "bad" / name).write_bytes(blob)
    r = cli("validate", "--bir", K1, "--bundles", tmp / "bad", check=False)
    assert r.returncode == 1 and r.stdout == str(brep)


def test_multi_core_encode_and_validate_refusals(tmp):
    with pytest.raises(neuronsim.UsageError, match="cores takes 1 to 8, got 0"):
        neuronsim.encode(TP2, "v3", cores=0)
    with pytest.raises(neuronsim.UsageError, match="cores takes 1 to 8, got 9"):
        neuronsim.encode(TP2, "v3", cores=9)
    with pytest.raises(neuronsim.UsageError, match="cores takes 1 to 8, got 1000000000000000000000000000000"):
        neuronsim.validate(TP2, {}, cores=10**30)
    with pytest.raises(TypeError, match="lnc must be an int or None"):
        neuronsim.encode(TP2, "v3", lnc="2")
    with pytest.raises(neuronsim.UsageError, match="logical cores of at most 1 physical cores .*got LNC=2"):
        neuronsim.encode(TP2, "v2", cores=2, lnc=2)  # trn1 has no logical cores
    with pytest.raises(neuronsim.UsageError, match="3 cores do not make logical cores of 2"):
        neuronsim.encode(TP2, "v3", cores=3, lnc=2)
    files = neuronsim.encode(TP2, "v3", cores=2, outdir=tmp / "enc")
    # The folder's cores and LNC: other counts are refused naming the folder, as by the CLI.
    with pytest.raises(neuronsim.InvalidInput, match="2 cores with LNC=1 .*validate asks for 4 cores") as e:
        neuronsim.validate(TP2, tmp / "enc", cores=4)
    assert e.value.file == str(tmp / "enc") and e.value.exit_code == 3
    # One core's streams on two cores: refused naming the folder.
    neuronsim.encode(K1, "v3", outdir=tmp / "one")
    with pytest.raises(neuronsim.InvalidInput, match="one core's bundle streams"):
        neuronsim.validate(K1, tmp / "one", cores=2)
    # A dict's names: a file, or core<i>/<file>; nothing else.
    for name in ("x/DVE.bin", "core1/../x.bin", "core/DVE.bin", "core0/", "core0/a/b.bin"):
        with pytest.raises(neuronsim.InvalidInput, match="plain file name, or core<i>/<file name>"):
            neuronsim.validate(TP2, {**files, name: b""})
    # A core cores.json lists but the dict lacks is named.
    partial = {n: b for n, b in files.items() if not n.startswith("core1/")}
    with pytest.raises(neuronsim.InvalidInput, match="core1"):
        neuronsim.validate(TP2, partial)
