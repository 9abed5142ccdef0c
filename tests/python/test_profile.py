"""Result.stats carries the --stats profile (docs/profiling.md) on kernel1: Load a (line 9), TensorScalarPtr
(line 10), Save b (line 12) of /home/ec2-user/bug/kernel1.py, as its BIR's debug objects say; and a timing-only
run's document, built on first read, is the one built right after the run."""
import json

import pytest

import neuronsim
from conftest import ROOT


def test_stats_profile_has_source_lines_and_wait_reasons(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = neuronsim.run("workloads/kernel1", timing_only=True)
    prof = r.stats["profile"]
    assert r.stats["tool"]["name"] == "neuronsim" and r.stats["command_line"] == []
    lines = sorted(row["line"] for row in prof["source_lines"])
    assert lines == [9, 10, 12]
    dve = [row for row in prof["instructions"] if row["engine"] == "DVE"]
    assert len(dve) == 1 and dve[0]["opcode"] == "TensorScalarPtr" and dve[0]["executions"] == 1
    # The DVE instruction reads what the Load wrote: its whole wait is a dependency, at least the 850 ns DMA latency
    # (sim/arch/trn1.json dma_latency_ns).
    assert dve[0]["wait_ns"]["dependency"] == dve[0]["wait_total_ns"] > 850.0
    assert set(dve[0]["wait_ns"]) == {"dependency", "semaphore", "shared_port", "psum_bank", "dma_ring", "dma_engine"}


def test_stats_read_once_and_critical_path_rows_longest_first(monkeypatch):
    # Result.stats is made on first read (a tune candidate reading only total_ns skips it), then the same dict. The
    # critical-path tables are the profile's rows with critical_path_ns > 0, longest first, rows of equal time in
    # the order of the full table (a stable sort): recomputed here from the full tables.
    monkeypatch.chdir(ROOT)
    r = neuronsim.run("workloads/tensor_add", timing_only=True)
    assert r.stats is r.stats
    prof = r.stats["profile"]
    for table in ("instructions", "source_lines"):
        on_path = [row for row in prof[table] if row["critical_path_ns"] > 0]
        want = sorted(on_path, key=lambda row: -row["critical_path_ns"])  # sorted() is stable
        assert prof["critical_path"][table] == want
    assert len(prof["critical_path"]["instructions"]) >= 2
    assert r.top(2) == prof["critical_path"]["instructions"][:2]
    # The rows' critical-path times add up to the run's critical-path shares.
    assert sum(row["critical_path_ns"] for row in prof["instructions"]) == \
        pytest.approx(sum(r.stats["critical_path_ns"].values()))


def _cli_run(kernel, tmp):
    """`neuronsim run KERNEL --timing-only --stats`: its stats document without the command line, and the summary
    it prints (from "simulated time:" to the verdict line)."""
    from conftest import cli
    out = cli("run", kernel, "--timing-only", "--stats", tmp / "s.json").stdout
    doc = json.loads((tmp / "s.json").read_text())
    doc.pop("command_line")
    summary = out[out.index("simulated time:"):]
    return doc, summary[:summary.index("\n", summary.index("verdict:")) + 1]


def _text(stats):
    return json.dumps({k: v for k, v in stats.items() if k != "command_line"}, sort_keys=True)


@pytest.mark.parametrize("workload", ["workloads/matmul_tiled", "workloads/tensor_add"])
def test_lazy_stats_are_the_eager_document(monkeypatch, tmp, workload):
    # A timing-only run streams its schedule, and its Result builds the stats document on first read, from the
    # run's records (docs/dev/performance.md rows (k)); the CLI builds it right after the same run. The same JSON
    # text, and the same summary and verdict (which the Result makes without the document); a whole run's Result
    # builds it after the run: the same again.
    monkeypatch.chdir(ROOT)
    doc, summary = _cli_run(workload, tmp)
    lazy = neuronsim.run(workload, timing_only=True)
    assert lazy.summary() == summary and lazy.verdict == doc["analysis"]["verdict"]["text"]
    assert _text(lazy.stats) == json.dumps(doc, sort_keys=True)
    whole = neuronsim.run(workload, timing_only=True, schedule="whole")
    assert whole.total_ns == lazy.total_ns == doc["total_ns"]
    assert (whole.summary(), whole.verdict, _text(whole.stats)) == (summary, lazy.verdict, _text(lazy.stats))
    # report() builds the document too when the stats were never read
    neuronsim.run(workload, timing_only=True).report(tmp / "r.html")
    assert (tmp / "r.html").stat().st_size > 0


def test_lazy_stats_of_a_traced_kernel():
    # A tune candidate's run (neuronsim.tune_work): a traced NKI kernel of 1,280 dynamic DVE adds of [128, 16], tiny
    # instructions, so its verdict is DVE's with the tiny-instruction note. The lazily built document, summary and
    # verdict are the whole run's, and the verdict the document's own.
    import neuronsim.nki as nki
    import neuronsim.nki.api as api
    import neuronsim.nki.language as nl

    def chain(x):
        y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        acc = nl.zeros(x.shape, nl.float32, buffer=nl.sbuf)
        for i in nl.affine_range(32):
            for j in range(40):
                acc[...] = nl.add(acc, t)
        nl.store(y, value=acc)
        return y

    k = api.trace_kernel(chain, (nki.tensor((128, 16)),), {}).lowered.builder.kernel("chain", [])
    lazy = neuronsim.run(k, timing_only=True)
    whole = neuronsim.run(k, timing_only=True, schedule="whole")
    assert lazy.total_ns == whole.total_ns
    assert lazy.dynamic_instructions == 32 * 40 + 3  # and the load, the zeros' memset and the store
    assert lazy.verdict == whole.verdict == whole.stats["analysis"]["verdict"]["text"]
    assert lazy.verdict.startswith("DVE-bound") and "1281 tiny instructions" in lazy.verdict  # with the memset
    assert lazy.summary() == whole.summary() and lazy.top(3) == whole.top(3)
    assert _text(lazy.stats) == _text(whole.stats)
