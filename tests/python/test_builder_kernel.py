"""Builder.kernel (neuronsim._core.builder) reads the built program one instruction's JSON at a time
(isa::reread_program), as `neuronsim tune` and `neuronsim nki` take a traced kernel. It must be the program the
whole BIR text gives -- the old path: to_bir_text() written to a file and loaded -- with the same simulated time and
the same stats, for the NKI workloads (loops, accumulation groups, several engines and DMA queues) and a loop of
repeated adds like bench/tune_candidate.py's."""
import importlib.util

import numpy as np
import pytest

import neuronsim
import neuronsim._core as core
import neuronsim.nki as nki
import neuronsim.nki.api as api
import neuronsim.nki.language as nl

from conftest import ROOT

NKI = ROOT / "workloads" / "nki"
DTYPES = {"matmul_tiled": {"lhsT": "bfloat16", "rhs": "bfloat16"},
          "attention": {"qT": "bfloat16", "kT": "bfloat16", "v": "bfloat16"}}


def workload_kernel(name):
    spec = importlib.util.spec_from_file_location(f"builder_kernel_{name}", NKI / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    nki.install()
    spec.loader.exec_module(mod)
    args = []
    for f in sorted((ROOT / "workloads" / name / "inputs").glob("*.npy")):
        a = np.load(f, mmap_mode="r")
        dtype = DTYPES.get(name, {}).get(f.stem)
        args.append(nki.tensor(a.shape, getattr(nl, dtype) if dtype else np.float32))
    return getattr(mod, name), args


def chain(x):
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    acc = nl.zeros(x.shape, nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(3):
        for j in range(5):
            acc[...] = nl.add(acc, t)
    nl.store(y, value=acc)
    return y


def without_names(stats):
    """The stats with what names the kernel file (a label here, a path there) left out."""
    return {k: v for k, v in stats.items() if k not in ("kernel", "command_line")}


@pytest.mark.parametrize("name", ["chain", "softmax", "matmul_tiled", "attention", "tensor_add"])
def test_kernel_is_the_program_of_its_bir_text(name, tmp_path):
    kernel, args = (chain, [nki.tensor((128, 64))]) if name == "chain" else workload_kernel(name)
    builder = api.trace_kernel(kernel, args, {}).lowered.builder
    fast = builder.kernel(name, [])
    path = tmp_path / f"{name}.bir.json"
    path.write_text(builder.to_bir_text())
    old = neuronsim.load(str(path))
    # The same program: its instructions by type, then the same run.
    assert fast.instructions == old.instructions
    assert sum(fast.instructions.values()) > 3
    a = core.run(fast, None, arch="trn1", timing_only=True)
    b = core.run(old, None, arch="trn1", timing_only=True)
    assert a.total_ns == b.total_ns > 0
    assert a.dynamic_instructions == b.dynamic_instructions
    assert without_names(a.stats) == without_names(b.stats)
    if name == "chain":
        assert a.dynamic_instructions == 3 * 5 + 3  # the adds, the load, the memset and the store
