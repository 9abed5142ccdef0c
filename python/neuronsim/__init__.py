"""The neuronsim package: the simulator in process (the extension neuronsim._core, python/*.cpp) and sweeps over
many kernels and architectures on Dask (neuronsim.sweeps). docs/python.md and docs/sweeps.md are the guides."""
from . import _core
from ._core import (Error, InvalidInput, Kernel, Mismatch, Report, Result, SanitizerError, SimulationError,
                    TensorInfo, UsageError,
                    __version__, arch_params, encode, from_float32, isa, load, run, run_config, to_float32,
                    validate)
from .sweeps import sweep
import functools as _functools
import inspect as _inspect
import re as _re

__doc__ = _core.__doc__
__all__ = ["Error", "InvalidInput", "Kernel", "Mismatch", "Report", "Result", "SanitizerError", "SimulationError",
           "TensorInfo",
           "UsageError", "arch_params", "encode", "from_float32", "isa", "load", "run", "run_config", "sweep",
           "to_float32", "validate"]

# The classes are defined in the extension; they read as the package's (repr, help, pickling by name).
for _cls in (Kernel, Mismatch, Report, Result, TensorInfo):
    _cls.__module__ = __name__
del _cls


class _Default:
    """A default value as the extension's signature line writes it (shown by help() and inspect.signature)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _signature_of(fn):
    """The inspect.Signature of an extension function, read from the signature line pybind11 writes first in its
    docstring ("run(kernel: handle, inputs: handle = None, *, arch: handle = None, ...) -> ..."); None if absent."""
    m = _re.match(r"\w+\((.*)\) -> ", (fn.__doc__ or "").split("\n", 1)[0])
    if not m:
        return None
    params, kind = [], _inspect.Parameter.POSITIONAL_OR_KEYWORD
    for part in filter(None, (p.strip() for p in m.group(1).split(", "))):
        if part == "*":
            kind = _inspect.Parameter.KEYWORD_ONLY
            continue
        name, _, default = part.partition(" = ")
        params.append(_inspect.Parameter(name.split(":")[0], kind,
                                         default=_Default(default) if default else _inspect.Parameter.empty))
    return _inspect.Signature(params)


def _python_style_call_errors(fn):
    """fn, whose wrong calls (a missing argument, an unknown keyword, too many positional arguments) raise
    TypeError as a Python function's do ("validate() missing a required argument: 'kernel'") instead of
    pybind11's list of supported signatures. A wrong value keeps the extension's own error, which names it."""
    sig = _signature_of(fn)
    if sig is None:
        return fn

    @_functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            if not str(e).startswith(f"{fn.__name__}(): incompatible function arguments"):
                raise
            try:
                sig.bind(*args, **kwargs)
            except TypeError as why:
                raise TypeError(f"{fn.__name__}() {why}") from None
            raise

    call.__signature__ = sig
    return call


arch_params, encode, from_float32, isa, load, run, run_config, to_float32, validate = (
    _python_style_call_errors(f)
    for f in (arch_params, encode, from_float32, isa, load, run, run_config, to_float32, validate))


def __getattr__(name):
    """neuronsim.bfloat16, neuronsim.float8_e4m3, neuronsim.float8_e5m2, neuronsim.float8_e4m3fn: numpy's bfloat16 and
    fp8 scalar types as neuronsim.nki uses them (ml_dtypes' when installed, else neuronsim's own, registered on first
    use). Arrays of neuronsim's pickle through these names."""
    if name == "bfloat16":
        from .nki import dtypes
        return dtypes.BFLOAT16.type
    if name in ("float8_e4m3", "float8_e5m2", "float8_e4m3fn"):
        from .nki import dtypes
        if name in dtypes.FLOAT8:
            return dtypes.FLOAT8[name].type
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
