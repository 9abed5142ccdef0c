"""Result.stats carries the --stats profile (docs/profiling.md) on kernel1: Load a (line 9), TensorScalarPtr
(line 10), Save b (line 12) of /home/ec2-user/bug/kernel1.py, as its BIR's debug objects say."""
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
