"""The Python side of issue 28 (docs/bad-input.md): arrays checked from their header before any
copy, TypeErrors that name the argument, a workload's cores from its run.json or from the kernel itself, output
elements no instruction wrote (a warning, strict=True an error), and the output rule of the sweeps' results files.
The refusals shared with the CLI are the catalogue's (test_errors.py)."""
import json
import os
import tracemalloc
import warnings

import numpy as np
import pytest

import neuronsim
from conftest import ROOT

K1 = ROOT / "workloads/kernel1"
MC = ROOT / "workloads/multicore"


def test_a_wrong_shape_is_refused_before_the_array_is_copied():
    # A broadcast view of 30000 x 25000 float32 (3 GB if materialised) for the [10, 10] input: refused from its
    # header, with well under 100 MB traced (np.asarray of it in C order would allocate the 3 GB).
    view = np.broadcast_to(np.zeros(1, np.float32), (30000, 25000))
    tracemalloc.start()
    try:
        with pytest.raises(neuronsim.InvalidInput) as e:
            neuronsim.run(K1, {"a": view})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(e.value) == ("inputs['a']: field 'shape': input 'a' has shape [30000, 25000], the kernel declares "
                            "[10, 10] (shapes must match exactly; reshape the array)")
    assert peak < 100 * 2**20
    # The same for an expected array and a dtype: float64 is refused from the header too.
    with pytest.raises(neuronsim.InvalidInput, match=r"^expect\['b'\]: field 'shape'"):
        neuronsim.run(K1, expect={"b": np.broadcast_to(np.zeros(1, np.float32), (20000, 20000))})
    with pytest.raises(neuronsim.InvalidInput, match=r"^inputs\['a'\]: unsupported \.npy dtype '<f8'"):
        neuronsim.run(K1, {"a": np.broadcast_to(np.zeros(1), (10, 10))})
    # A right-shaped view still runs, with its values.
    r = neuronsim.run(K1, {"a": np.broadcast_to(np.float32(3), (10, 10))})
    np.testing.assert_array_equal(r.outputs["b"], np.full((10, 10), 2, np.float32))  # b = a - 1


@pytest.mark.parametrize("call, message", [
    (lambda: neuronsim.run(K1, timing_only="yes"), "timing_only must be True or False, got str 'yes'"),
    (lambda: neuronsim.run(K1, rtol="x"), "rtol must be a number or None, got str 'x'"),
    (lambda: neuronsim.run(K1, max_instructions=1.5), "max_instructions must be an int, got float 1.5"),
    (lambda: neuronsim.run(K1, cores="2"), "cores must be an int or None, got str '2'"),
    (lambda: neuronsim.run(K1, schedule=1), "schedule must be a str, got int 1"),
    (lambda: neuronsim.run(K1, strict=1), "strict must be True or False, got int 1"),
    (lambda: neuronsim.run(K1, [np.zeros((10, 10), np.float32)]),
     "inputs as a list holds one dict (or folder) of inputs per rank, got an item of type ndarray"),
    (lambda: neuronsim.run(K1, {1: np.zeros((10, 10), np.float32)}), "inputs keys must be tensor names (str), got int 1"),
    (lambda: neuronsim.encode(K1, 3), "gen must be a str, got int 3"),
    (lambda: neuronsim.validate(K1, bundles=3), "bundles must be a folder (str or os.PathLike) or the dict encode() "
                                                "returns, got int"),
    (lambda: neuronsim.validate(K1, {"DVE.bin": "text"}), "bundles['DVE.bin'] must be bytes (a file's content, as "
                                                          "encode() returns it), got str"),
    (lambda: neuronsim.validate(K1, K1, rtol=None), "rtol must be a number, got NoneType None"),
    (lambda: neuronsim.to_float32(np.zeros(2, np.uint16), 5), "dtype must be a str, got int 5"),
    (lambda: neuronsim.sweep(None), "kernels must be a path, a list of paths (or LABEL=PATH) or a dict {label: path}, "
                                    "got NoneType"),
    (lambda: neuronsim.sweep(str(K1), workers="x"), "workers must be an int or None, got str 'x'"),
    (lambda: neuronsim.sweep([str(K1), 3]), "kernels holds paths (str or os.PathLike) or LABEL=PATH, got int 3"),
    (lambda: neuronsim.sweep(str(K1), archs=3), "archs must be a str (\"trn1,trn2\"), a list of them or None, got int"),
    (lambda: neuronsim.sweep(str(K1), timing_only="no"), "timing_only must be True or False, got str 'no'"),
    (lambda: neuronsim.sweep(str(K1), out=5), "out must be a path (str or os.PathLike) or None, got int"),
])
def test_every_type_error_names_its_argument(call, message):
    with pytest.raises(TypeError) as e:
        call()
    assert str(e.value) == message


def test_a_workload_runs_on_the_cores_it_needs():
    assert neuronsim.run_config(MC / "tp_mlp_4ranks") == {"cores": 4, "lnc": 1, "arch": "trn2"}
    assert neuronsim.run_config(K1) == {}
    # A contradicting cores= is refused naming the instruction, as --cores is.
    with pytest.raises(neuronsim.InvalidInput) as e:
        neuronsim.run(MC / "tp_mlp_4ranks", timing_only=True, cores=2)
    assert e.value.field == "replica_groups" and "run it with cores 4 or more" in str(e.value)
    r = neuronsim.run(MC / "tp_mlp_2ranks", timing_only=True)  # run.json: 2 cores, trn2
    assert (r.arch, r.stats["device"]["cores"], r.stats["device"]["lnc"]) == ("trn2", 2, 1)
    assert r.total_ns == r.stats["device"]["total_ns"]
    # The BIR file alone (no run.json): its replica group [[0, 1]] asks for 2 cores, on the default trn1.
    r = neuronsim.run(MC / "tp_mlp_2ranks/tp_mlp_2ranks.bir.json", timing_only=True)
    assert (r.arch, r.stats["device"]["cores"]) == ("trn1", 2)


def half_save(tmp):
    """kernel1 whose Save writes partitions 0-4 of b only: 50 of its 100 elements are written by no instruction."""
    m = json.loads((K1 / "kernel1.bir.json").read_text())
    for side in ("ins", "outs"):
        m["functions"][0]["blocks"][0]["instructions"][2][side][0]["ap"] = [[10, 5], [10, 1], [1, 10]]
    (tmp / "half.bir.json").write_text(json.dumps(m))
    return tmp / "half.bir.json"


def test_output_elements_nobody_wrote_warn_or_raise_with_strict(tmp):
    k = half_save(tmp)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = neuronsim.run(k)
    assert r.unwritten == {"b": 50}
    assert any("output 'b': 50 of 100 elements were written by no instruction" in str(x.message) for x in w)
    assert np.isnan(r.outputs["b"][5:]).all() and not np.isnan(r.outputs["b"][:5]).any()
    assert neuronsim.run(K1).unwritten == {}
    with pytest.raises(neuronsim.SimulationError) as e:
        neuronsim.run(k, strict=True)
    assert "output 'b': 50 of 100 elements were written by no instruction" in str(e.value)
    assert "(strict=True)" in str(e.value)


def test_the_output_rule_is_the_libraries(tmp):
    # (The refusals come before this test's one run.)
    assert neuronsim._core.output_kind(str(tmp / "new.csv")) == "absent"
    (tmp / "old.csv").write_text("x")
    assert neuronsim._core.output_kind(str(tmp / "old.csv")) == "regular"
    assert neuronsim._core.output_kind("/dev/null") == "device"
    os.mkfifo(tmp / "f.csv")
    with pytest.raises(neuronsim.InvalidInput, match="the output path is a FIFO"):
        neuronsim._core.output_kind(str(tmp / "f.csv"))
    # trace= goes through it: a FIFO is refused before the run, /dev/null is written in place.
    with pytest.raises(neuronsim.InvalidInput, match="f.csv: the output path is a FIFO"):
        neuronsim.run(K1, trace=tmp / "f.csv", timing_only=True)
    neuronsim.run(K1, trace="/dev/null", timing_only=True)
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
