"""neuronsim.isa, encode and validate against `neuronsim isa --json`, `encode` and `validate`."""
import json

import pytest

import neuronsim
from conftest import ROOT, SANITIZED, cli

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
    if SANITIZED:
        # The refusals below are throws after the process has simulated: what the ASan build misreports
        # (.ci/run); they are checked in the normal build (and the CLI's in tests/cli/bad_inputs/ under ASan).
        return
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
