"""Result.stats carries the --stats profile (docs/profiling.md) on kernel1: Load a (line 9), TensorScalarPtr
(line 10), Save b (line 12) of /home/ec2-user/bug/kernel1.py, as its BIR's debug objects say."""
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
