"""The tracing half of `neuronsim nki FILE.py::FUNCTION` (sim/cli/main.cpp runs it as `python3 -m neuronsim
nki-trace ...`, then runs the BIR it writes as `neuronsim run` would):

    python3 -m neuronsim nki-trace FILE.py::FUNCTION -o OUT.bir.json [--input NAME=X.npy]... [--shape NAME=SPEC]...
                                  [--inputs DIR] [--kwarg NAME=VALUE]... [--grid DIMS] [--arch NAME]
                                  [--max-instructions N]

Each tensor parameter of FUNCTION is given by --input (the shape and dtype of the .npy file) or --shape
(NAME=128x512 or NAME=128x512:bfloat16; float32 when no dtype is given); a --shape beside an --input names the dtype
of the file's bits (bf16 arrays are held as uint16); --inputs DIR gives the others from DIR/rank0/NAME.npy or
DIR/NAME.npy (the folder `neuronsim run --inputs` reads, docs/multicore.md). --kwarg NAME=VALUE passes a
compile-time parameter (VALUE a Python literal: int, float, str in quotes, bool, None, tuple; a NAME the function does
not take is exit 3). Parameters with defaults may be left out. --arch: the architecture the kernel is traced for
(nisa.get_nc_version()), the run's. Exit codes as `neuronsim run`: 2 usage, 3 the kernel cannot be traced
(KernelError / Unsupported, the message naming the kernel's file:line; the kernel's own exception or sys.exit too).
--max-instructions bounds the loops unrolled and the launch-grid instances traced (api.trace_kernel).
"""
import importlib.util
import inspect
import os
import stat
import sys
import warnings

import numpy as np

from .. import _core
from . import dtypes
from .api import Kernel, TensorSpec, _as_kernel, trace_kernel
from .install import install


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the neuronsim package's files


class _Usage(Exception):
    pass


def _parse_shape(text):
    name, eq, spec = text.partition("=")
    if not eq or not name or not spec:
        raise _Usage(f"--shape takes NAME=DIMS[:DTYPE] (e.g. a=128x512:float32), got '{text}'")
    dims, _, dt = spec.partition(":")
    try:
        shape = tuple(int(d) for d in dims.lower().split("x"))
    except ValueError:
        raise _Usage(f"--shape {name}: dims are integers joined by 'x' (128x512), got '{dims}'")
    if any(d <= 0 for d in shape):
        raise _Usage(f"--shape {name}: dims must be positive, got '{dims}'")
    dtype = dt or "float32"
    if dtypes.bir_name(dtype) is None:
        raise _Usage(f"--shape {name}: unknown dtype '{dtype}' (float32, bfloat16, float16, int32, ...)")
    return name, shape, dtype


def parse_literal(text, what):
    """VALUE of --kwarg NAME=VALUE (and of the tuner's --param): a Python literal (int, float, 'str', bool, None,
    tuple / list of those). Raises _Usage naming `what` otherwise."""
    import ast
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise _Usage(f"{what}: '{text}' is not a Python literal (an int, float, bool, None, tuple, or a string in "
                     "quotes: NAME=\"'text'\")") from None


def parse_kwarg(text):
    """--kwarg NAME=VALUE -> (NAME, value)."""
    name, eq, value = text.partition("=")
    if not eq or not name.isidentifier() or not value.strip():
        raise _Usage(f"--kwarg takes NAME=VALUE (e.g. tile_size=512), got '{text}'")
    return name, parse_literal(value, f"--kwarg {name}")


def check_keywords(kernel, names, option, target):
    """Every name (of --kwarg / --param) is a keyword the kernel function takes: else InvalidInput (exit 3) naming it
    and the function's parameters."""
    params = inspect.signature(kernel.fn).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return
    for name in names:
        if name not in params or params[name].kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                       inspect.Parameter.VAR_POSITIONAL):
            raise _core.InvalidInput(f"{option} {name}: {target} takes no keyword '{name}' (its parameters: "
                                     f"{', '.join(params) or 'none'})")


def _parse_grid(text):
    """--grid 4x2 (instances one after the other) or nc2 / nc2x4 (an axis on 2 cores): the launch grid."""
    from .language import nc
    out = []
    for d in text.lower().split("x"):
        try:
            out.append(nc(int(d[2:])) if d.startswith("nc") else int(d))
        except ValueError:
            raise _Usage(f"--grid takes dims joined by 'x', each a number or nc<N> (4x2, nc2), got '{text}'")
        if int(out[-1]) <= 0:
            raise _Usage(f"--grid dims must be positive, got '{text}'")
    return tuple(out)


def load_function(target):
    """FILE.py::FUNCTION -> the kernel, the file imported as a module with the NKI names installed."""
    path, sep, func = target.rpartition("::")
    if not sep or not path or not func:
        raise _Usage(f"nki takes FILE.py::FUNCTION, got '{target}'")
    if not os.path.isfile(path):
        raise _core.InvalidInput(f"{path}: no such file")
    install()
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0] + "_nki_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not hasattr(mod, func):
        raise _core.InvalidInput(f"{path}: no function '{func}'")
    return _as_kernel(getattr(mod, func))


def _load_input(name, path):
    """--input NAME=PATH's array header (memory-mapped, nothing read): a regular file only, so that a FIFO or a device
    is refused at once instead of blocking the read."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise _core.InvalidInput(f"--input {name}={path}: {e.strerror}")
    if not stat.S_ISREG(mode):
        what = "a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise _core.InvalidInput(f"--input {name}={path}: {what}; an input is a regular .npy file")
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as e:
        raise _core.InvalidInput(f"--input {name}={path}: {e}")


def main(argv):
    try:
        target, out, inputs, shapes, grid, arch, max_instructions = None, None, {}, {}, None, None, None
        kwargs = {}
        inputs_dir = None
        # A warning names the kernel's line itself: one line, as the CLI's own warnings.
        warnings.showwarning = lambda message, *_: sys.stderr.write(
            f"neuronsim: warning: {_one_line(str(message).removeprefix('neuronsim.nki: '))}\n")
        i = 0
        while i < len(argv):
            a = argv[i]
            if a in ("-o", "--input", "--inputs", "--shape", "--grid", "--arch", "--max-instructions", "--kwarg"):
                if i + 1 >= len(argv):
                    raise _Usage(f"option {a} needs a value")
                v = argv[i + 1]
                i += 2
                if a == "-o":
                    out = v
                elif a == "--arch":
                    arch = v
                elif a == "--inputs":
                    inputs_dir = v
                elif a == "--grid":
                    grid = _parse_grid(v)
                elif a == "--max-instructions":
                    if not v.isdigit() or int(v) <= 0:
                        raise _Usage(f"--max-instructions takes a positive whole number, got '{v}'")
                    max_instructions = int(v)
                elif a == "--kwarg":
                    name, value = parse_kwarg(v)
                    if name in kwargs:
                        raise _Usage(f"--kwarg {name} given twice")
                    kwargs[name] = value
                elif a == "--input":
                    name, eq, f = v.partition("=")
                    if not eq or not name or not f:
                        raise _Usage(f"--input takes NAME=FILE.npy, got '{v}'")
                    inputs[name] = f
                else:
                    name, shape, dt = _parse_shape(v)
                    shapes[name] = (shape, dt)
                continue
            if a.startswith("-"):
                raise _Usage(f"unknown option '{a}'")
            if target is not None:
                raise _Usage(f"more than one FILE.py::FUNCTION given ('{target}', '{a}')")
            target = a
            i += 1
        if target is None or out is None:
            raise _Usage("nki-trace needs FILE.py::FUNCTION and -o OUT.bir.json")
        kernel = load_function(target)
        params = inspect.signature(kernel.fn).parameters
        check_keywords(kernel, kwargs, "--kwarg", target)
        args = {}
        for name, p in params.items():
            # --inputs DIR, as `neuronsim run` reads it: rank 0's own DIR/rank0/NAME.npy, else DIR/NAME.npy (every
            # rank's); the shapes and dtypes are the same on every rank.
            for f in ([os.path.join(inputs_dir, "rank0", name + ".npy"), os.path.join(inputs_dir, name + ".npy")]
                      if inputs_dir is not None and name not in inputs and name not in kwargs else []):
                if os.path.isfile(f):
                    inputs[name] = f
                    break
            if name in kwargs:
                if name in inputs or name in shapes:
                    raise _Usage(f"parameter '{name}' given both by --kwarg and by --input / --shape")
                args[name] = kwargs[name]
            elif name in inputs:
                arr = _load_input(name, inputs[name])
                dt = shapes[name][1] if name in shapes else arr.dtype
                if dtypes.bir_name(dt) is None:
                    raise _core.InvalidInput(f"--input {name}={inputs[name]}: dtype {arr.dtype} is not one neuronsim "
                                             "takes (float32, float16, bfloat16 as uint16 with --shape "
                                             f"{name}=DIMS:bfloat16, the fp8 types, 8/16/32-bit integers); write "
                                             "the array with .astype(np.float32)")
                if name in shapes and tuple(shapes[name][0]) != tuple(arr.shape):
                    raise _Usage(f"--shape {name} {list(shapes[name][0])} differs from --input {name} "
                                 f"{list(arr.shape)}")
                args[name] = TensorSpec(arr.shape, dt)
            elif name in shapes:
                args[name] = TensorSpec(*shapes[name])
            elif p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise _Usage(f"kernel parameter '{name}' needs --input {name}=FILE.npy or --shape {name}=DIMS[:DTYPE]")
        for name in list(inputs) + list(shapes):
            if name not in params:
                raise _Usage(f"{target} has no parameter '{name}' (it has: {', '.join(params)})")
        args.update((k, v) for k, v in kwargs.items() if k not in params)  # a **kwargs kernel's
        if grid is not None:
            kernel = kernel[grid]
        traced = trace_kernel(kernel, (), args, arch, max_instructions=max_instructions)
        text = traced.lowered.builder.to_bir_text()
        folder = os.path.dirname(os.path.abspath(out))
        try:
            with open(out, "w") as f:
                f.write(text)
            # The run's placement beside the BIR (run.json): an nl.nc(n) grid runs on n cores of one logical core.
            with open(os.path.join(folder, "run.json"), "w") as f:
                f.write('{"lnc": %d}\n' % kernel.cores)
            # nl.shared_constant data beside the BIR, as <name>.const.npy: `neuronsim nki` gives each to the run.
            for name, data in traced.lowered.constants.items():
                np.save(os.path.join(folder, f"{name}.const.npy"), data)
        except OSError as e:
            raise _core.InvalidInput(f"{target}: cannot write the traced kernel into neuronsim's temporary folder "
                                     f"{folder}: {e.strerror or e} (TMPDIR names where it is made)")
        return 0
    except _Usage as e:
        sys.stderr.write(f"neuronsim: {e}\n")
        return 2
    except _core.Error as e:
        sys.stderr.write(f"neuronsim: {_one_line(str(e))}\n")
        return getattr(e, "exit_code", 3)
    except (Exception, SystemExit) as e:  # the kernel file's own error or sys.exit: exit 3, naming its line
        import traceback
        frames = traceback.extract_tb(e.__traceback__)
        where = next((f for f in reversed(frames) if not f.filename.startswith(_PACKAGE)), frames[-1] if frames else None)
        given = target.rpartition("::")[0] if target else ""
        # The kernel file as the user named it (Python holds it by its absolute path).
        name = given if given and where and where.filename == os.path.abspath(given) else where and where.filename
        at = f"{name}:{where.lineno}: " if where else ""
        if isinstance(e, SystemExit):
            why = f"the kernel exits ({e.code!r})" if e.code is None or isinstance(e.code, int) else str(e.code)
            sys.stderr.write(f"neuronsim: {at}SystemExit: {_one_line(why)}\n")
        else:
            sys.stderr.write(f"neuronsim: {at}{type(e).__name__}: {_one_line(str(e))}\n")
        return 3


def _one_line(s):
    return " ".join(s.split("\n"))
