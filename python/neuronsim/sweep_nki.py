"""NKI kernels in a sweep: entries FILE.py::FUNCTION (docs/sweeps.md, "NKI kernels"), each traced, lowered and run on
the worker as `neuronsim nki FILE.py::FUNCTION --timing-only` runs it, once per arch of the sweep, called with the
tensors and keyword arguments the tuner takes (--shape / --input / --kwarg / --grid; sweep(nki_args=..., grid=...)).
Rows, messages and the stats name the kernel as given (FILE.py::FUNCTION), never a temporary file."""
import inspect
import os

from . import _core, kernel_args
from ._errors import error as _error


class NkiArgs:
    """What every NKI kernel of a sweep is called with: tensors as tune_work.Spec holds them ({name: ("shape", shape,
    dtype) | ("file", path, dtype) | ("array", array)}), fixed keyword arguments, the launch grid."""

    def __init__(self, tensors=None, fixed=None, grid=()):
        self.tensors, self.fixed, self.grid = dict(tensors or {}), dict(fixed or {}), tuple(grid or ())

    def given(self):
        return bool(self.tensors or self.fixed or self.grid)


def nki_args_of(args, grid=None):
    """sweep(nki_args={name: array | nki.tensor(shape, dtype) | value}, grid=...) -> NkiArgs: arrays and tensors by
    name, every other value a keyword argument, as neuronsim.nki.tune takes its fixed keyword arguments."""
    from .tune import _tensor_entry

    if args is None:
        args = {}
    if not isinstance(args, dict) or not all(isinstance(k, str) for k in args):
        raise TypeError(f"nki_args must be a dict {{parameter name: array, nki.tensor(...) or value}} or None, got "
                        f"{type(args).__name__}")
    if grid is not None and not isinstance(grid, tuple):
        grid = (grid,)
    tensors, fixed = {}, {}
    for name, v in args.items():
        entry = _tensor_entry(v)
        if entry is not None:
            tensors[name] = entry
        else:
            fixed[name] = v
    return NkiArgs(tensors, fixed, grid or ())


def check_kernel(spec, nki):
    """On the client, before anything runs: the kernel file imports, has the function, and the function takes what
    `nki` gives it and gets every parameter it needs (errors name FILE.py::FUNCTION as given: InvalidInput exit 3,
    UsageError exit 2). Sets spec.own_arch, the arch the kernel runs on when the sweep names none (its
    @nki.jit(platform_target=...), trn2 for an nl.nc grid, else trn1)."""
    from .nki.api import _placement

    ref, kernel = kernel_args.load_kernel(spec.nki_target, "sweep")
    spec.nki_path = ref.path
    kernel_args.check_keywords(kernel, list(nki.fixed), "--kwarg", spec.nki_target, "sweep")
    sig_params = inspect.signature(kernel.fn).parameters
    takes_any = any(p.kind == p.VAR_KEYWORD for p in sig_params.values())
    for name in nki.tensors:
        if name not in sig_params and not takes_any:
            raise _error("UsageError", f"{spec.nki_target} has no parameter '{name}' (it has: "
                                       f"{', '.join(sig_params)})", "sweep")
    kernel_args.check_required(kernel, nki.tensors, nki.fixed, {}, "sweep")
    try:
        spec.own_arch = _placement(kernel[nki.grid] if nki.grid else kernel, None)["arch"]
    except Exception as e:  # an unknown platform_target: the kernel's own error, named by the file
        raise _error("InvalidInput", f"{spec.nki_target}: {e}", "sweep") from None


def run_nki(kernel, arch, timing_only, nki, cores=None, lnc=None, seed=0):
    """The kernel (a KernelSpec of an NKI entry) traced for `arch`, lowered and run (timing-only, or numerically on
    nki's arrays and files, generated data for its shapes); returns the neuronsim.Result. A kernel that cannot be
    traced raises _core.InvalidInput (exit 3) whose message names FILE.py and its line, exit_code and kind set as
    `neuronsim nki` would exit and what raised it."""
    from .nki.api import _max_instructions, _placement
    from .tune_work import FunctionRef, Spec, _Failed, _guard, _Refused, _as_given, _tensor_args, numeric_inputs, \
        trace_and_lower

    ref = FunctionRef(path=kernel.nki_path, name=kernel.nki_target.rpartition("::")[2], label=kernel.nki_target)
    spec = Spec(ref, [], nki.tensors, nki.fixed, nki.grid, arch, None, 0.0, 0.0, seed, None)
    try:
        k_fn, traced, k = trace_and_lower(spec, dict(nki.fixed))
        placement = _placement(k_fn, arch)
        if cores is not None:
            placement["cores"] = cores
        if lnc is not None:
            placement["lnc"] = lnc
        inputs = None if timing_only else numeric_inputs(traced, _tensor_args(spec, True))
        return _guard(lambda: _core.run(k, inputs, **placement, timing_only=timing_only, seed=seed,
                                        max_instructions=_max_instructions(None)))
    except (_Refused, _Failed) as e:
        err = _core.InvalidInput(_as_given(spec, str(e)))
        err.kind, err.exit_code = e.kind, e.exit_code
        raise err from None


def nki_reads(kernels, nki):
    """The files the NKI entries read (kernel files, --input files), which no results file may replace."""
    files = [k.nki_path for k in kernels if getattr(k, "nki_path", None)]
    return files + [t[1] for t in nki.tensors.values() if t[0] == "file" and os.path.isfile(t[1])]
