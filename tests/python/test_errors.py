"""The exception classes: one per CLI exit code, each with the CLI's own message (the CLI is run for comparison)."""
import json
import os
import shutil
import socket

import numpy as np
import pytest

import neuronsim
from conftest import ROOT, SANITIZED, cli_error

K1 = "workloads/kernel1"
CASES = ROOT / "tests/cli/bad_inputs"
CLASSES = {2: neuronsim.UsageError, 3: neuronsim.InvalidInput, 4: neuronsim.SimulationError}


@pytest.fixture(autouse=True)
def in_checkout(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_hierarchy():
    for cls in CLASSES.values():
        assert issubclass(cls, neuronsim.Error) and cls.__module__ == "neuronsim"
    assert issubclass(neuronsim.Error, Exception)
    assert len(set(CLASSES.values())) == 3


def test_errors_name_the_source_line(tmp):
    """An error about an instruction with BIR debug information ends with its source line, also in e.source."""
    m = json.loads((ROOT / K1 / "kernel1.bir.json").read_text())
    i4 = m["functions"][0]["blocks"][0]["instructions"][1]
    i4["debug"] = {"filename": "kernel.py", "lineno": 42}
    i4["engine"] = "PE"  # TensorScalarPtr runs on DVE, Activation or Pool
    (tmp / "k.bir.json").write_text(json.dumps(m))
    with pytest.raises(neuronsim.InvalidInput) as e:
        neuronsim.run(tmp / "k.bir.json", timing_only=True)
    assert str(e.value).endswith("TensorScalarPtr cannot run on PE (it runs on DVE, Activation, Pool) (kernel.py:42)")
    assert (e.value.source, e.value.inst_name, e.value.field) == ("kernel.py:42", "I-4", "engine")
    assert cli_error("run", tmp / "k.bir.json", "--timing-only") == (3, str(e.value))


def test_invalid_input_carries_where(tmp):
    with pytest.raises(neuronsim.InvalidInput) as e:
        neuronsim.run(tmp / "missing.bir.json")
    assert str(e.value) == f"{tmp / 'missing.bir.json'}: no such file or directory"
    assert (e.value.exit_code, e.value.file, e.value.inst_index, e.value.inst_name, e.value.field) == (
        3, str(tmp / "missing.bir.json"), None, None, None)
    assert cli_error("run", tmp / "missing.bir.json") == (3, str(e.value))


def test_usage_error_messages():
    with pytest.raises(neuronsim.UsageError) as e:
        neuronsim.run(K1, arch="trn9")
    assert str(e.value) == "arch takes trn1, trn2, trn3 or an architecture FILE.json, got 'trn9' (did you mean 'trn1'?)"
    assert e.value.exit_code == 2
    # The CLI's message comes from the same function, naming its option.
    assert cli_error("run", K1, "--arch", "trn9") == (
        2, "--arch takes trn1, trn2, trn3 or an architecture FILE.json, got 'trn9' (did you mean 'trn1'?)")
    with pytest.raises(neuronsim.UsageError, match=r"^gen takes v2, v3 or v4, got 'v9' \(did you mean 'v2'\?\)$"):
        neuronsim.encode(K1, "v9")
    with pytest.raises(neuronsim.UsageError,
                       match=r"^arch takes trn1, trn2, trn3 or an architecture FILE\.json, got 'x'$"):  # no near one
        neuronsim.validate(K1, K1, arch="x")


def test_input_array_rules():
    ok = np.zeros((10, 10), np.float32)
    with pytest.raises(neuronsim.InvalidInput) as e:
        neuronsim.run(K1, {"a": ok.astype(np.float64)})
    assert str(e.value) == ("inputs['a']: unsupported .npy dtype '<f8' (float64: save it as float32 with np.save(path, "
                            "a.astype(np.float32)); supported: <f4 <f2 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1, "
                            "little-endian)")
    with pytest.raises(neuronsim.InvalidInput) as e:
        neuronsim.run(K1, {"a": np.zeros((5, 5), np.float32)})
    assert str(e.value) == ("inputs['a']: field 'shape': input 'a' has shape [5, 5], the kernel declares [10, 10] "
                            "(shapes must match exactly; reshape the array)")
    with pytest.raises(neuronsim.InvalidInput) as e:
        neuronsim.run(K1, {"z": ok})
    assert str(e.value) == "inputs['z']: the kernel has no input tensor named 'z' (its inputs: 'a')"
    with pytest.raises(neuronsim.InvalidInput) as e:
        neuronsim.run(K1, expect={"a": ok})
    assert str(e.value) == "expect['a']: 'a' is an input, not an output (its outputs: 'b')"
    with pytest.raises(neuronsim.InvalidInput, match=r"^inputs\['a'\]: unsupported \.npy dtype '>f4'"):
        neuronsim.run(K1, {"a": ok.astype(">f4")})
    with pytest.raises(TypeError):
        neuronsim.run(K1, [ok])


def test_a_fortran_ordered_array_is_its_values():
    a = np.asfortranarray(np.arange(100, dtype=np.float32).reshape(10, 10))
    np.testing.assert_array_equal(neuronsim.run(K1, {"a": a}).outputs["b"], a - 1)


def test_bad_tolerance_file(tmp):
    (tmp / "w").mkdir()
    (tmp / "w/k.bir.json").write_bytes((ROOT / K1 / "kernel1.bir.json").read_bytes())
    (tmp / "w/tolerance.json").write_text('{"rtol": 0}')
    with pytest.raises(neuronsim.InvalidInput) as e:
        neuronsim.run(tmp / "w")
    assert str(e.value) == f"{tmp / 'w/tolerance.json'}: field 'atol': the tolerance file needs a number under this key"
    assert cli_error("run", tmp / "w", "--outdir", tmp / "out") == (3, str(e.value))


def catalogue():
    return json.load(open(CASES / "catalogue.json"))["cases"]


def subst(text, scratch, out):
    """The catalogue's placeholders, as tests/cli/test_bad_inputs.cpp substitutes them."""
    return (text.replace("{dir}", str(CASES)).replace("{kernel1}", str(ROOT / K1))
            .replace("{workloads}", str(ROOT / "workloads")).replace("{out}", str(out))
            .replace("{scratch}", str(scratch)))


def run_setup(step, scratch, out):
    """One setup step of a case (tests/cli/test_bad_inputs.cpp, run_setup): the same files for both forms."""
    def p(v):
        return subst(v, scratch, out)
    if "mkfifo" in step:
        os.mkfifo(p(step["mkfifo"]))
    elif "symlink" in step:
        os.symlink(p(step["symlink"][0]), p(step["symlink"][1]))
    elif "mkdir" in step:
        os.makedirs(p(step["mkdir"]), exist_ok=True)
    elif "copy" in step:
        src, dst = p(step["copy"][0]), p(step["copy"][1])
        (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, dst)
    elif "write" in step:
        with open(p(step["write"][0]), "w") as f:
            f.write(step["write"][1])
    elif "remove" in step:
        target = p(step["remove"])
        shutil.rmtree(target) if os.path.isdir(target) else os.remove(target)
    elif "mksocket" in step:
        path = p(step["mksocket"])  # bound from its folder: a socket's path is limited to 107 bytes
        here = os.getcwd()
        os.chdir(os.path.dirname(path))
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(os.path.basename(path))
            s.close()
        finally:
            os.chdir(here)
    elif "nest" in step:
        template, dst, open_, core, close, n = step["nest"]
        text = open(p(template)).read().replace("@NEST@", open_ * n + core + close * n)
        with open(p(dst), "w") as f:
            f.write(text)
    else:
        raise AssertionError(f"unknown setup step {step}")


def as_call(case, scratch, out):
    """The Python call for a catalogue case, or None when it is about the command line itself (unknown options,
    missing values: Python's own TypeError covers those), an output file Python does not write, stdout, or a command
    Python has no call for (compare, isa, arch)."""
    if case.get("stdout") or any("{out}" in json.dumps(step) for step in case.get("setup", [])):
        return None  # stdout, or a file in --outdir: where the CLI writes (run() returns its outputs instead)
    args = [subst(a, scratch, out) for a in case["args"]]
    if args[0] == "encode" and args[2:4] == ["--gen", "v3"] and args[4] == "-o":
        kw = {}
        if args[6:8] and args[6] == "--cores":
            kw["cores"] = int(args[7])
        elif args[6:]:
            return None
        return lambda: neuronsim.encode(args[1], "v3", outdir=args[5], **kw)
    if args[0] == "sweep":
        return sweep_call(args[1:])
    if args[0] != "run":
        return None
    kw, inputs, i = {}, {}, 2
    while i < len(args):
        if args[i] == "--outdir" and i + 1 < len(args):
            if args[i + 1] != str(out):
                return None  # where the CLI writes: run() returns its outputs instead
            i += 2
        elif args[i] == "--input" and i + 1 < len(args) and "=" in args[i + 1]:
            name, path = args[i + 1].split("=", 1)
            if not name or not path or name in inputs:
                return None  # how NAME=FILE is spelled on the command line
            inputs[name] = path
            i += 2
        elif args[i] in ("--arch", "--kernel-sim") and i + 1 < len(args):
            kw[args[i][2:].replace("-", "_")] = args[i + 1]
            i += 2
        elif args[i] in ("--cores", "--lnc") and i + 1 < len(args) and args[i + 1] in [str(n) for n in range(1, 9)]:
            kw[args[i][2:]] = int(args[i + 1])
            i += 2
        elif args[i] in ("--timing-only", "--strict"):
            kw[args[i][2:].replace("-", "_")] = True
            i += 1
        else:
            return None
    return lambda: neuronsim.run(args[1], inputs or None, **kw)


def sweep_call(args):
    """`neuronsim sweep ARGS` as neuronsim.sweep(...), for the options that have a keyword."""
    kernels, kw, i = [], {}, 0
    keys = {"--arch": "archs", "--workers": "workers", "-o": "out", "--cores": "cores", "--lnc": "lnc"}
    while i < len(args):
        if args[i] in keys and i + 1 < len(args):
            v = args[i + 1]
            kw[keys[args[i]]] = int(v) if args[i] in ("--workers", "--cores", "--lnc") else v
            i += 2
        elif args[i].startswith("-"):
            return None  # --rank-by: the command's printing, not a sweep() keyword
        else:
            kernels.append(args[i])
            i += 1
    return lambda: neuronsim.sweep(kernels, **kw)


@pytest.mark.parametrize("case", catalogue(), ids=lambda c: c["name"])
def test_bad_input_catalogue(case, tmp):
    scratch = tmp / "scratch"
    scratch.mkdir()
    call = as_call(case, scratch, scratch / "out")
    if call is None:
        pytest.skip("a command-line matter (option parsing, stdout, compare) with no Python form")
    if SANITIZED and case.get("python"):
        pytest.skip("sweeps are pure Python over neuronsim.run (test_sweep.py skips them under ASan too)")
    for step in case.get("setup", []):
        run_setup(step, scratch, scratch / "out")
    if SANITIZED:
        # Under ASan the point is the module's own path: the CLI's message is compared in the normal build, and the
        # CLI runs every case under ASan in its own test (an instrumented CLI process per case cost 2 minutes here).
        with pytest.raises(neuronsim.Error) as e:
            call()
        assert type(e.value) is CLASSES[case["exit"]] and e.value.exit_code == case["exit"]
        return
    code, message = cli_error(*[subst(a, scratch, scratch / "out") for a in case["args"]])
    assert code == case["exit"]
    with pytest.raises(neuronsim.Error) as e:
        call()
    assert type(e.value) is CLASSES[code] and e.value.exit_code == code
    # The same message, naming the keyword arguments instead of the options.
    message = (message.replace("--arch", "arch").replace("--timing-only", "timing_only")
               .replace("--input/--inputs", "inputs").replace("--cores", "cores").replace("--lnc", "lnc")
               .replace("--strict", "strict=True"))
    assert str(e.value) == message


def test_deadlock_is_a_simulation_error_and_the_next_run_works():
    with pytest.raises(neuronsim.SimulationError) as e:
        neuronsim.run(CASES / "bundle_deadlock")
    assert "deadlock" in str(e.value) and e.value.exit_code == 4
    assert neuronsim.run(K1).ok


@pytest.mark.parametrize("call, message", [
    (lambda: neuronsim.validate(bundles=5), "validate() missing a required argument: 'kernel'"),
    (lambda: neuronsim.run(), "run() missing a required argument: 'kernel'"),
    (lambda: neuronsim.run(K1, timing_onyl=True), "run() got an unexpected keyword argument 'timing_onyl'"),
    (lambda: neuronsim.run(K1, None, "trn2"), "run() too many positional arguments"),
    (lambda: neuronsim.encode(K1, "v2", None), "encode() too many positional arguments"),
])
def test_a_wrong_call_reads_as_pythons_own(call, message):
    """A missing argument, a misspelt keyword or an extra positional argument gets Python's own wording, naming
    the function and the argument, not pybind11's list of supported signatures."""
    with pytest.raises(TypeError) as e:
        call()
    assert str(e.value) == message


def test_functions_show_their_signature():
    """help() and inspect.signature show the arguments with their defaults as the extension declares them."""
    import inspect
    sig = inspect.signature(neuronsim.validate)
    assert list(sig.parameters)[:2] == ["kernel", "bundles"]
    assert sig.parameters["bundles"].default is inspect.Parameter.empty
    assert sig.parameters["inputs"].kind is inspect.Parameter.KEYWORD_ONLY
    assert str(sig).startswith("(kernel, bundles, *, inputs=None, arch=None, rtol=0.0, atol=0.0")
    assert neuronsim.validate.__doc__.startswith("validate(kernel: handle, bundles: handle, *")
