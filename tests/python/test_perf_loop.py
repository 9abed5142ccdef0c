"""The performance engineer's loop in Python, as the CLI has it (docs/profiling.md): set=, seed=, save_inputs=,
progress=, Result.summary() / top(n) / verdict, and a docstring with an example on every public function."""
import inspect
import json
import pathlib

import numpy as np
import pytest

import neuronsim
from conftest import ROOT, cli

K1 = str(ROOT / "workloads/kernel1/kernel1.bir.json")  # a bare BIR file: its inputs are generated


def test_set_runs_a_what_if_named_as_the_cli_names_it():
    # Refusals first, then the runs.
    with pytest.raises(neuronsim.UsageError, match=r"set dma_gbps=54.4: unknown architecture parameter"):
        neuronsim.run(K1, timing_only=True, set={"dma_gbps": 54.4})
    with pytest.raises(neuronsim.UsageError, match=r"the value must be in \[0, 1e\+06\], got -1"):
        neuronsim.run(K1, timing_only=True, set={"dma_latency_ns": -1})
    base = neuronsim.run(K1, timing_only=True)
    r = neuronsim.run(K1, timing_only=True, set={"dma_latency_ns": 425})
    assert r.arch == r.stats["arch"] == "trn1+{dma_latency_ns=425}"
    # Two transfers on the critical path ([10, 10] fp32: 8 rows on DMA engine 0, 2 on engine 1; a 40 B row moves in
    # 2.353 ns on trn1). Each ended with engine 1's piece, started 850 + 21.5 (stagger) ns after it entered its
    # queue: 850 + 21.5 + 7 + 2 x 2.353. With 425 ns of latency, engine 0's processing of its 8 descriptors (8 x 106
    # = 848 ns, docs/timing-model.md 2.1) binds instead, its piece moving once they are all processed:
    # 848 + 7 + 8 x 2.353.
    per_transfer = (850 + 21.5 + 7 + 2 * 2.353) - (848 + 7 + 8 * 2.353)
    assert base.total_ns - r.total_ns == pytest.approx(2 * per_transfer, abs=1e-6)
    assert neuronsim.run(K1, timing_only=True, arch="trn1+{dma_latency_ns=425}").total_ns == r.total_ns
    assert neuronsim.arch_params("trn2+{hwdge=false}")["hwdge"] is False


def test_seed_and_save_inputs_match_the_cli(tmp):
    r = neuronsim.run(K1, seed=7, save_inputs=tmp / "py")
    assert r.saved_inputs == [str(tmp / "py" / "a.npy")]
    cli("run", K1, "--seed", "7", "--save-inputs", tmp / "cli", "--outdir", tmp / "out", "--quiet")
    assert (tmp / "py" / "a.npy").read_bytes() == (tmp / "cli" / "a.npy").read_bytes()
    other = neuronsim.run(K1, seed=8)
    assert not np.array_equal(other.outputs["b"], r.outputs["b"])  # another draw


def long_kernel(tmp, n=2000):
    """kernel1 with its DVE instruction repeated n times (each a copy named I-4-k): n + 4 engine instructions."""
    bir = json.loads(pathlib.Path(K1).read_text())
    insts = bir["functions"][0]["blocks"][0]["instructions"]
    dve = next(i for i in insts if i["opcode"] == "TensorScalarPtr")
    copies = [dict(dve, name=f"{dve['name']}-{k}") for k in range(n)]
    at = insts.index(dve)
    bir["functions"][0]["blocks"][0]["instructions"] = insts[:at] + copies + insts[at + 1:]
    path = tmp / "long.bir.json"
    path.write_text(json.dumps(bir))
    return path


def test_progress_is_called_and_its_exception_stops_the_run(tmp):
    with pytest.raises(TypeError, match="progress must be callable"):
        neuronsim.run(K1, progress=3)
    calls = []
    # The progress hook is polled every 256 engine instructions and calls back at most five times a second, the
    # first time at once: a run of 2000 DVE instructions calls it at least once.
    k = long_kernel(tmp)
    r = neuronsim.run(k, timing_only=True, progress=lambda done, total, ns: calls.append((done, total, ns)))
    assert calls, "progress was never called"
    done, total, ns = calls[0]
    assert 0 < done <= total == 2000 + 2 and 0 <= ns <= r.total_ns  # 2000 on DVE, the two DMA triggers on SP
    with pytest.raises(ZeroDivisionError):
        neuronsim.run(k, timing_only=True, progress=lambda *a: 1 / 0)


def test_summary_top_and_verdict_are_the_clis():
    r = neuronsim.run(K1, timing_only=True)
    out = cli("run", K1, "--timing-only", "--top", "2").stdout
    # The CLI prints the summary between its "executed" line and the --top table.
    summary = out[out.index("simulated time:"):out.index("top 2 instructions")]
    assert r.summary() == summary
    assert r.verdict.startswith("DMA latency-bound (fixed latency ") and f"verdict: {r.verdict}\n" in summary
    top = r.top(2)
    assert [row["name"] for row in top] == [row["name"] for row in r.stats["profile"]["critical_path"]["instructions"][:2]]
    assert top[0]["critical_path_ns"] >= top[1]["critical_path_ns"] > 0
    assert len(r.top()) == len(r.stats["profile"]["critical_path"]["instructions"][:10])


def test_every_public_function_has_a_docstring_with_an_example():
    for name in neuronsim.__all__:
        obj = getattr(neuronsim, name)
        if inspect.isclass(obj):
            continue
        doc = obj.__doc__ or ""
        assert "Example" in doc and ">>> " in doc, f"neuronsim.{name} has no example in its docstring"
    for name in ("summary", "top", "report"):
        assert "Example" in getattr(neuronsim.Result, name).__doc__, name
    # help(neuronsim.run) shows the arguments (pybind11's signature line) and the example.
    doc = neuronsim.run.__doc__
    for arg in ("set", "seed", "save_inputs", "progress", "report", "arch", "timing_only"):
        assert f"{arg}: " in doc.splitlines()[0] or f"{arg}=" in doc.splitlines()[0], arg
    assert 'set={"dma_latency_ns": 425}' in doc


def test_sweep_archs_carry_settings():
    from neuronsim.sweeps import archs_of
    # Commas inside the braces belong to the settings; --set goes over every arch, and each is named as runs name it.
    assert archs_of("trn1,trn2+{dma_latency_ns=425,pe_ghz=3}") == ["trn1", "trn2+{dma_latency_ns=425,pe_ghz=3}"]
    assert archs_of(["trn1", "trn2+{pe_ghz=3}"], ["sp_ghz=2.0"]) == ["trn1+{sp_ghz=2.0}", "trn2+{pe_ghz=3,sp_ghz=2.0}"]
    assert archs_of("trn2", {"hwdge": False}) == ["trn2+{hwdge=false}"]
    with pytest.raises(neuronsim.UsageError, match="unknown architecture parameter"):
        archs_of("trn2", ["dma_gbps=54.4"])
