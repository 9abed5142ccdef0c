"""Issue 39 on the Python side: every writer of the package under the C++ output rule (save_bir, Result.report,
benchmark(trace=), the sweeps' results files: never the kernel's own file, an input or the run's trace), the NKI
tracer's work bounded by max_instructions (unrolled loops, static_range, launch grids) and its recorded instructions
by the most a BIR program holds, launch grids of positive dims only, argument errors naming the argument, and a
folder named nki/ on sys.path never taken for the NKI package. The command-line forms are catalogue cases
(tests/cli/bad_inputs/cases/nki_front_end.py)."""
import importlib
import importlib.util
import shutil
import sys

import numpy as np
import pytest

import neuronsim
import neuronsim.nki as nki
from conftest import ROOT

K1 = ROOT / "workloads/kernel1"

ADD1 = """import nki
import nki.language as nl


@nki.jit
def add1(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=nl.add(t, 1.0))
    return out


@nki.jit
def unrolled(a, n):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    for i in nl.affine_range(n):
        if i == 0:
            nl.store(out, value=t)
    return out


@nki.jit
def static(a, n):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    for i in nl.static_range(n):
        t = nl.add(t, 1.0)
    nl.store(out, value=t)
    return out
"""


@pytest.fixture
def kernels(tmp):
    """The kernels above as a file of their own (tmp/k.py), imported with the NKI names served."""
    (tmp / "k.py").write_text(ADD1)
    nki.install()
    spec = importlib.util.spec_from_file_location("writers_and_bounds_k", tmp / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


A = np.arange(20, dtype=np.float32).reshape(2, 10)


# ---------------------------------------------------------------------------------------- one output rule
def test_save_bir_never_replaces_the_kernel_file(kernels, tmp):
    before = (tmp / "k.py").read_text()
    with pytest.raises(neuronsim.InvalidInput, match="k.py: an output would overwrite the input file"):
        nki.save_bir(kernels.add1, A, path=tmp / "k.py")
    assert (tmp / "k.py").read_text() == before
    # A device is written in place, every write error reported with its path (was a bare [Errno 28]).
    with pytest.raises(neuronsim.InvalidInput, match="^/dev/full: write failed: No space left on device$"):
        nki.save_bir(kernels.add1, A, path="/dev/full")
    assert nki.save_bir(kernels.add1, A, path=tmp / "k.bir.json") == tmp / "k.bir.json"
    assert neuronsim.run(tmp / "k.bir.json", {"a": A}).outputs["out"].tolist() == (A + 1).tolist()


def test_a_result_page_never_replaces_what_the_run_read(kernels, tmp):
    shutil.copy(K1 / "kernel1.bir.json", tmp / "k1.bir.json")
    r = neuronsim.run(tmp / "k1.bir.json", timing_only=True, trace=tmp / "t.json")
    for path in ("k1.bir.json", "t.json"):
        before = (tmp / path).read_bytes()
        with pytest.raises(neuronsim.InvalidInput, match=f"{path}: an output would overwrite the input file"):
            r.report(tmp / path)
        assert (tmp / path).read_bytes() == before
    # An NKI run's result knows its kernel file, and so does its trace= output.
    b = nki.benchmark(kernels.add1, A)
    with pytest.raises(neuronsim.InvalidInput, match="k.py: an output would overwrite the input file"):
        b.report(tmp / "k.py")
    with pytest.raises(neuronsim.InvalidInput, match="k.py: an output would overwrite the input file"):
        nki.benchmark(kernels.add1, A, timing_only=True, trace=tmp / "k.py")
    assert (tmp / "k.py").read_text() == ADD1
    b.report(tmp / "page.html")
    assert (tmp / "page.html").read_text().startswith("<!DOCTYPE html>")


def test_the_rule_is_bound_from_cpp(tmp):
    (tmp / "in.npy").write_bytes(b"x")
    with pytest.raises(neuronsim.InvalidInput, match="an output would overwrite the input file"):
        neuronsim._core.check_output_paths([str(tmp / "in.npy")], [str(tmp / "in.npy")])
    with pytest.raises(neuronsim.InvalidInput, match="two outputs name the same file"):
        neuronsim._core.check_output_paths([str(tmp / "o"), str(tmp / "o")])
    with pytest.raises(TypeError, match="outputs must be a list of paths"):
        neuronsim._core.check_output_paths(str(tmp / "o"))
    neuronsim._core.write_output(tmp / "o.txt", "text\n", [tmp / "in.npy"])
    assert (tmp / "o.txt").read_text() == "text\n"


# ---------------------------------------------------------------------------------------- bounded work
def test_unrolled_loops_count_against_max_instructions(kernels):
    # `if i == 0` makes the loop a Python range (NKI 0.7): 10^12 trips are refused at the loop's line at once.
    with pytest.raises(nki.KernelError) as e:
        nki.simulate(kernels.unrolled, A, 10**12)
    assert str(e.value).endswith(
        "k.py:17: nl.affine_range of 1,000,000,000,000 trips, unrolled (its variable is used as a Python value): "
        "1,000,000,000,000 unrolled trips and launch-grid instances in all, more than the 1,000,000,000 "
        "instructions one run may execute (--max-instructions, max_instructions=)")
    with pytest.raises(nki.KernelError, match="k.py:17: nl.affine_range of 5 trips.*more than the 4 instructions"):
        nki.to_bir(kernels.unrolled, A, 5, max_instructions=4)
    with pytest.warns(UserWarning, match="unrolled"):
        assert nki.simulate(kernels.unrolled, A, 4, max_instructions=4).tolist() == A.tolist()
    with pytest.raises(nki.KernelError, match="k.py:27: nl.static_range of 3 trips.*more than the 2 instructions"):
        nki.to_bir(kernels.static, A, 3, max_instructions=2)
    with pytest.raises(TypeError, match="max_instructions must be a positive int, got int 0"):
        nki.to_bir(kernels.add1, A, max_instructions=0)


def test_launch_grids_count_against_max_instructions(kernels):
    with pytest.raises(nki.KernelError, match=r"k.py:5: launch grid \[1000000, 1000000\] of add1: "
                                              r"1,000,000,000,000 unrolled trips"):
        nki.simulate(kernels.add1[10**6, 10**6], A)
    with pytest.raises(nki.KernelError, match=r"launch grid \[3, 3\] of add1: 9 .* more than the 8 instructions"):
        nki.to_bir(kernels.add1[3, 3], A, max_instructions=8)
    assert nki.to_bir(kernels.add1[3, 3], A, max_instructions=9)["functions"]


@pytest.mark.parametrize("grid", [0, (2, 0), -1, 2.5, True])
def test_a_launch_grid_dim_is_a_positive_whole_number(kernels, grid):
    # A zero grid was "IndexError: list index out of range".
    with pytest.raises(nki.KernelError, match="a launch grid's dims are positive whole numbers"):
        kernels.add1[grid]
    assert kernels.add1[np.int64(2)].grid == (2,)


def test_recorded_instructions_are_bounded(kernels, monkeypatch):
    # The bound is the most instructions a BIR program holds (250,000); lowered here so the test stays quick.
    monkeypatch.setattr(neuronsim._core, "MAX_STATIC_INSTRUCTIONS", 50)
    with pytest.raises(nki.KernelError, match="k.py:28: the kernel records more than 50 instructions"):
        nki.to_bir(kernels.static, A, 100)
    assert nki.to_bir(kernels.static, A, 40)["functions"]


# ---------------------------------------------------------------------------------------- messages and imports
def test_an_argument_of_an_unknown_dtype_is_named(kernels):
    with pytest.raises(nki.KernelError, match="kernel argument 'a' has numpy dtype float64"):
        nki.simulate(kernels.add1, A.astype(np.float64))


def test_a_folder_named_nki_is_no_nki_package(tmp, monkeypatch):
    install_module = sys.modules["neuronsim.nki.install"]
    (tmp / "nki").mkdir()
    (tmp / "neuronxcc").mkdir()
    monkeypatch.syspath_prepend(str(tmp))
    for name in ("nki", "neuronxcc"):
        monkeypatch.delitem(sys.modules, name, raising=False)  # put back after the test
        assert not install_module._importable(name)
    (tmp / "nki" / "__init__.py").write_text("")  # a package of that name: left as it is
    importlib.invalidate_caches()
    assert install_module._importable("nki")
