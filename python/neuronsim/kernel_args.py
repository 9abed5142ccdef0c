"""An NKI kernel file's function and its arguments as the commands written in Python take them (`neuronsim tune`,
`neuronsim sweep` entries FILE.py::FUNCTION): the function loaded as the workers load it, --kwarg / --shape /
--input / --grid parsed as `neuronsim nki` parses them, the tensors checked against the function's parameters.
Errors name the command (`what`: "tune: ...", "sweep: ...") and the kernel file as the user gave it."""
import inspect
import os
import stat

import numpy as np

from ._errors import error as _error
from .tune_work import FunctionRef


def names_nki(arg):
    """FILE.py::FUNCTION (a kernel file's function), not a path."""
    path, sep, func = os.fspath(arg).rpartition("::")
    return bool(sep) and path.endswith(".py") and len(path) > 3 and bool(func)


def load_kernel(target, what):
    """FILE.py::FUNCTION -> (FunctionRef, the Kernel), the file imported here as the workers import it;
    InvalidInput naming the file when it is not there, does not import or has no such function."""
    from .nki.api import _as_kernel
    from .tune_work import _exception_message, load_module

    path, sep, func = target.rpartition("::")
    if not sep or not path or not func:
        raise _error("UsageError", f"a kernel is FILE.py::FUNCTION, got '{target}'", what)
    if not os.path.isfile(path):
        raise _error("InvalidInput", f"{path}: no such file", what)
    try:
        mod = load_module(os.path.abspath(path))
    except (Exception, SystemExit) as e:
        raise _error("InvalidInput", f"{target}: the file does not import: {_exception_message(e)}", what) from None
    if not callable(getattr(mod, func, None)):
        raise _error("InvalidInput", f"{path}: no function '{func}'", what)
    ref = FunctionRef(path=os.path.abspath(path), name=func, label=target)
    return ref, _as_kernel(getattr(mod, func))


def parse_options(kwargs, shapes, inputs, grid, what):
    """The command line's --kwarg, --shape, --input and --grid (lists of their texts, grid one text or None) ->
    (fixed {name: value}, shapes {name: (shape, dtype)}, inputs {name: path}, grid tuple)."""
    from .nki import cli as nki_cli

    fixed, shape_of, input_of = {}, {}, {}
    try:
        for text in kwargs:
            name, value = nki_cli.parse_kwarg(text)
            if name in fixed:
                raise _error("UsageError", f"--kwarg {name} given twice", what)
            fixed[name] = value
        for text in shapes:
            name, shape, dt = nki_cli._parse_shape(text)
            shape_of[name] = (shape, dt)
        dims = nki_cli._parse_grid(grid) if grid else ()
    except nki_cli._Usage as e:
        raise _error("UsageError", str(e), what) from None
    for text in inputs:
        name, eq, f = text.partition("=")
        if not eq or not name or not f:
            raise _error("UsageError", f"--input takes NAME=FILE.npy, got '{text}'", what)
        input_of[name] = f
    return fixed, shape_of, input_of, dims


def tensors_of(kernel, label, inputs, shapes, what):
    """{name: ("file", path, dtype) | ("shape", shape, dtype)} for the kernel's tensor parameters given by --input
    and --shape, checked as `neuronsim nki` checks them (a name the function does not take, unless kernel is None; a
    file that is not a .npy, a --shape that differs from its --input's)."""
    out = {}
    if kernel is not None:  # None: checked against each kernel later (a sweep's)
        params = inspect.signature(kernel.fn).parameters
        for name in list(inputs) + list(shapes):
            if name not in params:
                raise _error("UsageError", f"{label} has no parameter '{name}' (it has: {', '.join(params)})", what)
    for name, (shape, dt) in shapes.items():
        if name not in inputs:
            out[name] = ("shape", shape, dt)
    for name, path in inputs.items():
        try:
            mode = os.stat(path).st_mode
        except OSError as e:
            raise _error("InvalidInput", f"--input {name}={path}: {e.strerror}", what) from None
        if not stat.S_ISREG(mode):
            raise _error("InvalidInput", f"--input {name}={path}: not a regular file; an input is a .npy file", what)
        try:
            arr = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as e:
            raise _error("InvalidInput", f"--input {name}={path}: {e}", what) from None
        dt = shapes[name][1] if name in shapes else None
        if name in shapes and tuple(shapes[name][0]) != tuple(arr.shape):
            raise _error("UsageError", f"--shape {name} {list(shapes[name][0])} differs from --input {name} "
                                       f"{list(arr.shape)}", what)
        out[name] = ("file", os.path.abspath(path), dt)
    return out


def check_required(kernel, tensors, fixed, params, what):
    """Every parameter of the function without a default is given (a tensor, a --kwarg or a --param)."""
    for name, prm in inspect.signature(kernel.fn).parameters.items():
        if prm.default is prm.empty and prm.kind not in (prm.VAR_POSITIONAL, prm.VAR_KEYWORD) and \
                name not in tensors and name not in fixed and name not in params:
            given = (f", --kwarg {name}=VALUE or --param {name}=V1,V2" if what == "tune" else
                     f" or --kwarg {name}=VALUE")
            raise _error("UsageError", f"kernel parameter '{name}' needs --input {name}=FILE.npy, --shape "
                                       f"{name}=DIMS[:DTYPE]{given}", what)


def check_keywords(kernel, names, option, label, what):
    """Every name is a keyword the kernel function takes: else InvalidInput (exit 3) naming it and its parameters."""
    from . import _core
    from .nki.cli import check_keywords as check

    try:
        check(kernel, names, option, label)
    except _core.Error as e:
        raise _error("InvalidInput", str(e), what) from None
