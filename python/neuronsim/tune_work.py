"""One candidate of `neuronsim tune` on a Dask worker (tune.py hands them out): the kernel traced with the
candidate's keyword arguments, lowered and timed as `neuronsim nki --timing-only --kwarg ...` times it, optionally
run numerically and compared with a numpy reference; the result is the candidate's row, whatever happens.

Statuses: ok; wrong (outputs outside rtol/atol: the worst element named); refused (the front end's KernelError /
Unsupported, or the simulator refusing the program: its message); error (an exception raised by the kernel's own
code, or the reference's: its file:line).
"""
import ast
import hashlib
import importlib.util
import inspect
import os
import sys
import tempfile
import warnings

import numpy as np

from . import _core
from ._errors import one_line

# The columns after the parameters' (one per --param, its value as a Python literal): docs/tuning.md lists them.
COLUMNS = [
    ("total_ns", float, "simulated time of the candidate's timing-only run, ns (as `neuronsim nki --timing-only`)"),
    ("status", str, "ok, wrong (outputs outside the tolerance), refused (the front end or the simulator refuses the "
                    "program), error (an exception in the kernel's or the reference's code)"),
    ("max_abs_err", float, "with a reference: the largest |kernel - reference| over the outputs"),
    ("verdict", str, "the run's verdict (what bounds its time)"),
    ("message", str, "why a candidate is not ok: the worst element, the refusal, the exception with its file:line"),
]
STATUSES = ("ok", "wrong", "refused", "error")

_PACKAGE = os.path.dirname(os.path.abspath(__file__))  # neuronsim's own files: never "the kernel's line"


def literal(text):
    """A parameter's CSV cell (its repr) -> the value."""
    return ast.literal_eval(text)


# ---- The kernel and the reference, on the worker

_modules = {}  # (absolute path, sha256 of its contents) -> the module, once per worker process


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_module(path):
    """The file imported as a module with the NKI names installed (as `neuronsim nki` imports a kernel file), once
    per worker for the same contents: a kernel and its reference in one file share it."""
    from .nki.install import install

    key = (path, file_sha256(path))
    if key not in _modules:
        install()
        folder = os.path.dirname(path)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        name = os.path.splitext(os.path.basename(path))[0] + "_nki_tune"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _modules[key] = mod
    return _modules[key]


class FunctionRef:
    """A function the workers call: FILE.py::NAME (loaded there from the file, the way `neuronsim nki` loads it), or
    the function itself pickled by value (one defined in the calling script), unpickled once the NKI names are
    installed."""

    def __init__(self, fn=None, path=None, name=None, label=None):
        self.path, self.name, self.pickled = path, name, None
        if fn is not None:
            import cloudpickle

            self.pickled = cloudpickle.dumps(fn)
            self.name = getattr(fn, "__name__", "?")
        self._fn = fn
        # How rows, stats and messages name it: FILE.py::NAME as given (relative to where the tuner started).
        self.label = label or (f"{os.path.relpath(path)}::{name}" if path else _label_of(fn))

    @classmethod
    def of(cls, fn):
        """The way to reach fn from a worker: its file when it is a module-level function of a file that is not the
        calling script (__main__), else fn by value."""
        inner = getattr(fn, "fn", fn)  # a Kernel's function
        try:
            path = inspect.getsourcefile(inner)
        except TypeError:
            path = None
        top_level = getattr(inner, "__qualname__", None) == getattr(inner, "__name__", "")
        if path and os.path.isfile(path) and top_level and getattr(inner, "__module__", None) != "__main__":
            return cls(path=os.path.abspath(path), name=inner.__name__)
        return cls(fn=fn)

    def get(self):
        if getattr(self, "_fn", None) is None:
            if self.path:
                mod = load_module(self.path)
                if not hasattr(mod, self.name):
                    raise _core.InvalidInput(f"{self.path}: no function '{self.name}'")
                self._fn = getattr(mod, self.name)
            else:
                import cloudpickle

                from .nki.install import install

                install()
                self._fn = cloudpickle.loads(self.pickled)
        return self._fn

    def __getstate__(self):
        return {"path": self.path, "name": self.name, "pickled": self.pickled, "label": self.label}

    def __setstate__(self, state):
        self.__dict__.update(state, _fn=None)


def _label_of(fn):
    inner = getattr(fn, "fn", fn)
    try:
        f = inspect.getsourcefile(inner) or "<kernel>"
    except TypeError:
        f = "<kernel>"
    return f"{os.path.relpath(f) if os.path.isabs(f) else f}::{getattr(inner, '__name__', '?')}"


class Spec:
    """What every candidate shares: the kernel, its tensor arguments ({name: ("shape", shape, dtype) | ("file", path,
    dtype) | ("array", array)}), the fixed keyword arguments, the launch grid, the arch (with its settings), the
    reference, the tolerances, the seed of generated inputs, the instruction budget."""

    def __init__(self, kernel, params, tensors, fixed, grid, arch, reference, rtol, atol, seed, max_instructions):
        self.kernel, self.params, self.tensors, self.fixed, self.grid = kernel, list(params), tensors, fixed, grid
        self.arch, self.reference, self.rtol, self.atol, self.seed = arch, reference, rtol, atol, seed
        self.max_instructions = max_instructions


# ---- One candidate

def _where(exc):
    """file:line of the innermost frame outside neuronsim's own files (the kernel's or the reference's line)."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    at = next((f for f in reversed(frames) if not f.filename.startswith(_PACKAGE)), None)
    return f"{at.filename}:{at.lineno}: " if at else ""


def _exception_message(exc):
    if isinstance(exc, SystemExit):
        return f"{_where(exc)}SystemExit: the code exits ({exc.code!r})"
    return f"{_where(exc)}{type(exc).__name__}: {one_line(exc)}"


def _tensor_args(spec, numeric):
    """{name: argument} of the kernel's tensors: shape-only specs for tracing, or (numeric) the arrays given."""
    from .nki.api import TensorSpec

    out = {}
    for name, t in spec.tensors.items():
        if t[0] == "array":
            out[name] = t[1]
        elif t[0] == "file":
            arr = np.load(t[1], mmap_mode="r", allow_pickle=False)
            out[name] = np.asarray(arr) if numeric else TensorSpec(arr.shape, t[2] or arr.dtype)
        else:
            out[name] = TensorSpec(t[1], t[2])
    return out


def run_candidate(spec, values):
    """The row of one candidate: {param: repr(value)} and the COLUMNS. Never raises for the kernel's sake."""
    row = {p: repr(v) for p, v in zip(spec.params, values)}
    row.update(total_ns=None, status=None, max_abs_err=None, verdict=None, message=None)
    kwargs = dict(spec.fixed)
    kwargs.update(zip(spec.params, values))
    try:
        total_ns, verdict, traced, kernel = _time(spec, kwargs)
        row.update(total_ns=total_ns, verdict=verdict, status="ok")
        if spec.reference is not None:
            err, worst = _check(spec, kwargs, traced, kernel)
            row["max_abs_err"] = err
            if worst:
                row.update(status="wrong", message=worst)
    except _Refused as e:
        row.update(status="refused", message=_as_given(spec, str(e)))
    except _Failed as e:
        row.update(status="error", message=_as_given(spec, str(e)))
    return row


def _as_given(spec, message):
    """A message names the kernel's and the reference's files as the user named them, not by the absolute paths the
    workers load them from."""
    for ref in (spec.kernel, spec.reference):
        if ref is not None and ref.path:
            given = ref.label.rpartition("::")[0] or ref.path
            message = message.replace(ref.path, given)
    return message


class _Refused(Exception):
    pass


class _Failed(Exception):
    pass


def _guard(fn, *args):
    """fn(*args), its failures sorted: neuronsim's refusals (KernelError, Unsupported, a _core.Error) -> _Refused,
    anything else (the kernel's or the reference's own exception, a sys.exit) -> _Failed with its file:line."""
    from .nki.errors import KernelError, Unsupported

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a candidate's row is its result; warnings go nowhere on a worker
            return fn(*args)
    except (KernelError, Unsupported) as e:
        raise _sorted(_Refused(one_line(e)), e) from None
    except _core.Error as e:
        raise _sorted(_Refused(f"{type(e).__name__}: {one_line(e)}"), e) from None
    except (Exception, SystemExit) as e:
        raise _sorted(_Failed(_exception_message(e)), e) from None


def _sorted(failure, e):
    """failure (a _Refused or _Failed) remembering the class of the exception it stands for (a sweep row's
    error_type) and the exit code `neuronsim nki` gives for it (3: the kernel cannot be traced, or run's own)."""
    failure.kind = type(e).__name__
    failure.exit_code = getattr(e, "exit_code", None) or 3
    return failure


def _time(spec, kwargs, report=None):
    """Traced with shape-only tensors, lowered and run timing-only, as `neuronsim nki --timing-only` runs it."""
    from .nki.api import _max_instructions, _placement

    kernel, traced, k = trace_and_lower(spec, kwargs)
    r = _guard(lambda: _core.run(k, None, **_placement(kernel, spec.arch), timing_only=True, report=report,
                                 max_instructions=_max_instructions(spec.max_instructions)))
    return r.total_ns, r.verdict, traced, (kernel, k)


def trace_and_lower(spec, kwargs):
    """(the Kernel with spec's launch grid, its trace, the lowered neuronsim Kernel named spec.kernel.label), traced
    with shape-only tensors and kwargs as `neuronsim nki` traces it; _Refused / _Failed when it cannot be."""
    from .nki.api import _as_kernel, _sources, trace_kernel

    kernel = _guard(lambda: _as_kernel(spec.kernel.get()))
    if spec.grid:
        kernel = _guard(lambda: kernel[spec.grid])
    args = _tensor_args(spec, False)
    args.update(kwargs)
    traced = _guard(trace_kernel, kernel, (), args, spec.arch, spec.max_instructions)
    k = _guard(lambda: traced.lowered.builder.kernel(spec.kernel.label, _sources(kernel)))
    return kernel, traced, k


def _as_float(a, bir):
    if bir in ("bfloat16", "float8e4", "float8e5", "float8_e4m3fn") and a.dtype.kind in "uV":
        return _core.to_float32(np.ascontiguousarray(a).view(np.uint16 if bir == "bfloat16" else np.uint8), bir)
    return np.asarray(a, dtype=np.float64) if a.dtype.kind in "fiub" else np.asarray(a)


def _check(spec, kwargs, traced, kernels):
    """The numeric run on the given inputs (or the generated ones, --seed), compared with the reference's outputs:
    (max |got - want|, the worst element's line or None)."""
    from .nki.api import _placement

    kernel, k = kernels
    tensors = _tensor_args(spec, True)
    inputs = numeric_inputs(traced, tensors)
    with tempfile.TemporaryDirectory(prefix="neuronsim-tune-") as tmp:
        r = _guard(lambda: _core.run(k, inputs, **_placement(kernel, spec.arch), seed=spec.seed, save_inputs=tmp,
                                     max_instructions=_max_instructions_of(spec)))
        used = {}
        for name, storage in traced.arg_storages.items():
            path = os.path.join(tmp, f"{name}.npy")
            if os.path.isfile(path):
                used[name] = _as_float(np.load(path), storage.dtype).astype(np.float32)
            elif name in tensors:
                used[name] = _as_float(np.asarray(getattr(tensors[name], "bits", tensors[name])), storage.dtype)
    ref = spec.reference.get()
    sig = inspect.signature(ref).parameters
    takes_any = any(p.kind == p.VAR_KEYWORD for p in sig.values())
    ref_args = {n: v for n, v in used.items() if n in sig or takes_any}
    ref_args.update((n, v) for n, v in kwargs.items() if n in sig or takes_any)
    want = _guard(lambda: ref(**ref_args))
    from .nki.api import _flatten

    outs = _flatten(traced.result)
    names = [v.storage.name for v in outs] if outs else list(traced.written_args)
    dts = [v.storage.dtype for v in outs] if outs else [traced.arg_storages[n].dtype for n in names]
    wants = list(want) if isinstance(want, (tuple, list)) else [want]
    if len(wants) != len(names):
        raise _Failed(f"the reference returns {len(wants)} output{'s' if len(wants) != 1 else ''}, the kernel "
                      f"{len(names)} ({', '.join(names)})")
    worst, err = None, 0.0
    for name, dt, w in zip(names, dts, wants):
        got = _as_float(r.outputs[name], dt).astype(np.float64)
        w = np.asarray(w, dtype=np.float64)
        if got.shape != w.shape:
            return float("inf"), f"{name}: shape {list(got.shape)}, the reference's {list(w.shape)}"
        diff = np.abs(got - w)
        diff = np.where(np.isnan(got) != np.isnan(w), np.inf, np.nan_to_num(diff, nan=0.0))
        if diff.size:
            err = max(err, float(diff.max()))
        excess = diff - (spec.atol + spec.rtol * np.abs(w))
        bad = int(np.count_nonzero(excess > 0))
        if bad and worst is None:
            at = np.unravel_index(int(np.argmax(excess)), excess.shape)
            where = ", ".join(str(int(i)) for i in at)
            worst = (f"{name}[{where}] = {got[at]:.6g}, the reference's {w[at]:.6g} (|err| {diff[at]:.3g} > atol "
                     f"{spec.atol:g} + rtol {spec.rtol:g} * |ref|); {bad} of {diff.size} elements outside")
    return err, worst


def numeric_inputs(traced, tensors):
    """The inputs of a numeric run of a traced kernel: its nl.shared_constant data and the arrays among `tensors`
    ({name: array, or a shape-only spec whose data the run generates}) as the bits of the BIR's dtypes."""
    from .nki.api import _bits_in

    inputs = dict(traced.lowered.constants)
    for name, a in tensors.items():
        if not isinstance(a, np.ndarray) and not hasattr(a, "bits"):
            continue
        storage = traced.arg_storages.get(name)
        bir = storage.dtype if storage is not None else None
        inputs[name] = a.bits if hasattr(a, "bits") else _bits_in(a, bir)
    return inputs


def _max_instructions_of(spec):
    from .nki.api import _max_instructions

    return _max_instructions(spec.max_instructions)
