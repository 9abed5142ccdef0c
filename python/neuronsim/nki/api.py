"""jit, simulate, benchmark, to_bir, save_bir and launch grids: a kernel traced on symbolic tensors, lowered to BIR, run
on the simulator like any BIR kernel."""
import functools
import gc
import inspect
import math
import operator
import os
import types
import warnings

import numpy as np

from .. import _core
from . import bcast_pe, dtypes, dynamic, engine_choice, hoist, loop_plan, shards, tracer
from .errors import KernelError, Unsupported
from .emit_bir import emit_bir
from .nl_loops import grid_instances
from .symbolic import NeedsUnroll
from .tracer import Trace, View, new_storage
from . import typing as nki_typing


class TensorSpec:
    """A kernel argument given by shape and dtype only (to_bir, timing-only runs): tensor((128, 512), nl.float32)."""

    def __init__(self, shape, dtype=np.float32):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype

    def __repr__(self):
        return f"tensor({self.shape}, {self.dtype})"


def tensor(shape, dtype=np.float32):
    return TensorSpec(shape, dtype)


_RAW_ONLY = dtypes.MX_X4 + ("float8_e8m0fnu",)  # no element rounding rule: given as their bits


class TypedArray:
    """A kernel argument given as values of an NKI dtype: array(values, nl.float8_e4m3) holds the values (float32, or
    any numbers) rounded as the simulator rounds them (neuronsim.from_float32), as raw bits; the same as
    values.astype(nl.float8_e4m3) for float32 values. The MX types (x4 containers,
    float8_e8m0fnu scales) have no rounding rule from fp32: array(bits, nl.float8_e4m3fn_x4) takes their raw bits,
    an integer array of the container (uint32 for the fp8 x4 types, uint16 for float4_e2m1fn_x4, uint8 for
    float8_e8m0fnu)."""

    def __init__(self, values, dtype):
        self.bir = dtypes.bir_name(dtype)
        if self.bir is None:
            raise KernelError(f"unknown dtype {dtype!r}", None)
        if self.bir in _RAW_ONLY:
            container = np.dtype(dtypes.numpy_of(self.bir))
            a = np.asarray(values)
            if a.dtype != container:
                raise KernelError(f"an {self.bir} array is given as its raw bits, an array of {container.name}; "
                                  f"got {a.dtype}", None)
            self.bits = np.ascontiguousarray(a)
        else:
            self.bits = _core.from_float32(np.asarray(values, dtype=np.float32), self.bir)
        self.shape = tuple(self.bits.shape)

    def values(self):
        """The values it holds, as float32."""
        return _core.to_float32(self.bits, self.bir)


def array(values, dtype):
    return TypedArray(values, dtype)


def _arg_spec(x, name="?"):
    """(shape, BIR dtype) of an argument that is a tensor, else None; `name` the parameter it is given for."""
    if isinstance(x, (TensorSpec, nki_typing.Placeholder)):
        b = dtypes.bir_name(x.dtype)
        if b is None:
            raise KernelError(f"kernel argument '{name}': unknown dtype {x.dtype!r}", None)
        return x.shape, b
    if isinstance(x, TypedArray):
        return x.shape, x.bir
    if isinstance(x, np.ndarray):
        b = dtypes.bir_name(x.dtype)
        if b is None:
            raise KernelError(f"kernel argument '{name}' has numpy dtype {x.dtype} (neuronsim takes float32, "
                              "float16, bfloat16, the fp8 types and 8/16/32-bit integers)", None)
        return tuple(x.shape), b
    return None


class Kernel:
    """An NKI kernel: the function and, for kernel[g0, g1](...), its launch grid. Calling it runs it on the simulator
    (simulate) and returns its outputs. generation: "current" (nki.jit: kernel[n] is the LNC degree, n cores of one
    logical core) or "legacy" (neuronxcc.nki.jit: kernel[n] is n instances one after the other)."""

    def __init__(self, fn, grid=(), options=None, generation="current"):
        self.fn = fn
        self.grid = tuple(grid)
        self.options = dict(options or {})
        self.generation = generation
        functools.update_wrapper(self, fn)

    def __getitem__(self, grid):
        from .language import nc, spmd_dim
        if self.generation == "current" and not isinstance(grid, (tuple, spmd_dim)):
            n = self._dim(grid, [grid])  # the current API: kernel[lnc] (public NKI docs, nki.jit)
            return self.with_grid((nc(n),) if n > 1 else ())
        return self.with_grid(grid if isinstance(grid, tuple) else (grid,))

    def _dim(self, g, grid):
        """A launch-grid dim as an int: a positive whole number (not a bool, not 2.5)."""
        try:
            ok = not isinstance(g, bool) and operator.index(g) > 0
        except TypeError:
            ok = False
        if not ok:
            raise KernelError(f"{self.fn.__name__}{list(grid)}: a launch grid's dims are positive whole numbers, "
                              f"got {g!r}", None)
        return operator.index(g)

    def with_grid(self, grid):
        """The kernel launched on grid (a tuple of ints, nl.nc(n), nl.spmd_dim), whatever its generation."""
        from .language import nc, spmd_dim
        out = []
        for g in grid:
            if not isinstance(g, spmd_dim):
                n = self._dim(g, grid)
                g = g if isinstance(g, nc) else n
            out.append(g)
        cores = [d for g in out for d in (g.dims if isinstance(g, spmd_dim) else (g,)) if isinstance(d, nc)]
        if len(cores) > 1:
            raise KernelError("a launch grid has at most one nl.nc(n) axis", None)
        return Kernel(self.fn, tuple(out), self.options, self.generation)

    @property
    def cores(self):
        """The physical cores the kernel runs on: an nl.nc(n) launch-grid axis's n, else 1."""
        from .nl_loops import grid_cores
        return grid_cores(self.grid)

    def __call__(self, *args, **kwargs):
        if tracer._current is not None:  # a kernel calling another: inline it
            return self.fn(*args, **kwargs)
        if self.options.get("benchmark"):
            r = benchmark(self, *args, **kwargs)
            print(f"neuronsim: {self.fn.__name__}: {r.total_ns / 1000.0:.3f} us simulated ({r.arch})")
            return _outputs_of(self, r, None)
        return simulate_kernel(self, *args, **kwargs)

    @property
    def label(self):
        try:
            f = inspect.getsourcefile(self.fn) or "<kernel>"
        except TypeError:
            f = "<kernel>"
        return f"{os.path.relpath(f) if os.path.isabs(f) else f}::{self.fn.__name__}"


def jit(fn=None, generation="current", **options):
    """@nki.jit (also @nki.jit(mode=...), @nki.baremetal, @nki.simulate_kernel's argument): the kernel as a Kernel.
    neuronxcc.nki.jit is the same with generation="legacy" (legacy.py)."""
    if fn is None:
        return lambda f: jit(f, generation, **options)
    if isinstance(fn, Kernel):
        return fn
    return Kernel(fn, (), options, generation)


baremetal = jit
trace = jit


def _sources(kernel, arrays=()):
    """The files a run of the kernel reads, which no output of it may replace (the output rule of every writer,
    sim::prepare_output_paths): the kernel's source file, and the file behind any argument that is a np.memmap."""
    files = []
    try:
        f = inspect.getsourcefile(_as_kernel(kernel).fn)
    except TypeError:
        f = None
    if f and os.path.isfile(f):
        files.append(f)
    for a in arrays:
        name = getattr(a, "filename", None)
        if isinstance(name, str) and os.path.isfile(name):
            files.append(name)
    return files


def _as_kernel(k):
    if isinstance(k, Kernel):
        return k
    if callable(k):
        return Kernel(k)
    raise TypeError(f"a kernel is a function or a @nki.jit kernel, got {type(k).__name__}")


class _Traced:
    def __init__(self, trace, lowered, arg_storages, result, written_args):
        self.trace, self.lowered, self.arg_storages, self.result = trace, lowered, arg_storages, result
        self.written_args = written_args


MAX_PLAN_ROUNDS = 32  # traces a kernel's loop plans may take before its loops are unrolled instead


class _NeedsPlan(Exception):
    def __init__(self, requests):
        self.requests = requests


def trace_kernel(kernel, args, kwargs, arch=None, max_instructions=None):
    """Calls the kernel on symbolic tensors (once per launch-grid instance) and lowers the trace. A trace that asks
    for loops cut or split (a mask= that changes from trip to trip, `//` of a loop variable: loop_plan.py) is traced
    again with those plans, until none is asked. A kernel that uses a loop variable as a Python value is traced
    again with its loops unrolled (NeedsUnroll), with a warning. arch: the architecture the kernel is traced for
    (nisa.get_nc_version()); by default the one the run takes (_placement). Loop trips unrolled and grid instances
    count against max_instructions (default: the run's), the instructions recorded against the most a BIR program
    holds: tracing stops at the kernel line that passes either.

    Python's cyclic garbage collector is paused while it runs: a trace holds tens of objects per instruction, all
    alive until it ends, and the collections the allocations trigger kept walking them (a quarter of tracing a
    10,000-instruction kernel, bench/tune_candidate.py); what the trace leaves is collected when it is switched
    back on."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return _trace_with_plans(kernel, args, kwargs, arch, max_instructions)
    finally:
        if paused:
            gc.enable()


def _trace_with_plans(kernel, args, kwargs, arch, max_instructions):
    budget = _max_instructions(max_instructions)
    plan = {}
    state = _ModuleState(_as_kernel(kernel).fn)
    try:
        for _ in range(MAX_PLAN_ROUNDS):
            state.restore()
            try:
                return _trace_kernel(kernel, args, kwargs, False, plan, arch, budget)
            except _NeedsPlan as e:
                new = False
                for key, p in e.requests.items():
                    new = plan.setdefault(key, loop_plan.Plan()).merge(p) or new
                if not new:
                    break
        raise NeedsUnroll(f"the loop plans did not settle in {MAX_PLAN_ROUNDS} traces")
    except NeedsUnroll as e:
        why = e
    # Warned once the unrolled trace succeeds: a kernel refused while unrolled gets its one error line.
    state.restore()
    traced = _trace_kernel(kernel, args, kwargs, True, {}, arch, budget)
    warnings.warn(f"neuronsim.nki: {why}: the kernel's nl.affine_range / nl.sequential_range loops are unrolled "
                  "(NKI 0.7 runs them as Python ranges; docs/nki-lowering.md 1)", stacklevel=3)
    return traced


class _ModuleState:
    """The attributes of the objects a kernel's module holds, as the first trace found them, put back before each
    trace after it. NKI traces a kernel once; neuronsim may trace it again (loop plans, unrolling), and a kernel
    whose module keeps state across calls must see it as on the first call: nki-samples' attention tutorial v9 places
    its tiles with a module-level allocator object whose offset grows with each tile placed."""

    _SKIP = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)

    def __init__(self, fn):
        self.saved = []
        for v in getattr(fn, "__globals__", {}).values():
            d = getattr(v, "__dict__", None)
            if isinstance(d, dict) and not isinstance(v, self._SKIP) and not callable(v) and \
                    not type(v).__module__.startswith(("builtins", "neuronsim", "numpy")):
                self.saved.append((d, dict(d)))
        self.first = True

    def restore(self):
        if not self.first:
            for d, snap in self.saved:
                d.clear()
                d.update(snap)
        self.first = False


def _max_instructions(n):
    if n is None:
        return _core.DEFAULT_MAX_INSTRUCTIONS
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise TypeError(f"max_instructions must be a positive int, got {type(n).__name__} {n!r}")
    return n


def _trace_kernel(kernel, args, kwargs, unroll, plan, arch=None, max_instructions=None):
    _last_trace[0] = None
    try:
        return _trace_once(kernel, args, kwargs, unroll, plan, arch, max_instructions)
    except Exception:
        # An error after the trace asked for another one may come of a stand-in it went on with (a mask not
        # applied yet, a quotient before its loop is split): the next trace says.
        tr = _last_trace[0]
        if tr is not None and tr.requests:
            raise _NeedsPlan(tr.requests)
        raise


_last_trace = [None]


def _trace_once(kernel, args, kwargs, unroll, plan, arch=None, max_instructions=None):
    kernel = _as_kernel(kernel)
    fn = kernel.fn
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        raise KernelError(f"{fn.__name__}: {e}", None)
    bound.apply_defaults()
    tr = Trace(fn.__name__)
    tr.grid = kernel.grid
    tr.unroll = unroll
    tr.plan = plan
    _last_trace[0] = tr
    tr.cores = kernel.cores
    tr.arch = _placement(kernel, arch)["arch"]
    try:
        tr.core_gen = int(_core.arch_params(tr.arch)["core_gen"])
    except _core.Error as e:
        raise KernelError(f"arch {tr.arch!r}: {e}", None)
    tr.max_instructions = max_instructions
    tr.max_static = _core.MAX_STATIC_INSTRUCTIONS
    prev, tracer._current = tracer._current, tr
    try:
        arg_storages = {}
        sym = {}
        where = (inspect.getsourcefile(fn) or "<kernel>", fn.__code__.co_firstlineno)
        for name, val in bound.arguments.items():
            spec = _arg_spec(val, name)
            if spec is None:
                sym[name] = val
                continue
            s = new_storage(spec[0], spec[1], "hbm", name=name, kind="input", where=where)
            arg_storages[name] = s
            sym[name] = s.view()
        if kernel.grid:
            tr.expand(math.prod(int(g) for g in kernel.grid), f"launch grid {list(kernel.grid)} of {fn.__name__}",
                      where)
        results = []
        hbm_seen = None
        parts = []
        # Each core of an nl.nc(n) axis (its shard id) is traced on its own, nl.program_id a plain int; the
        # instances of the plain axes one after the other (docs/nki-lowering.md "Launch grids").
        for shard in range(tr.cores):
            part = shards.Part(tr)
            tr.__dict__["shard"] = shard
            for ids in grid_instances(kernel.grid, shard):
                tr.program_ids = ids
                n_before = len(tr.storages)
                if hbm_seen is not None:
                    tr.__dict__["shared_hbm"] = list(hbm_seen)
                tr.__dict__["reused"] = set()
                for n in bound.arguments:
                    bound.arguments[n] = sym[n]
                res = fn(*bound.args, **bound.kwargs)
                if tr.broken is not None:
                    break
                part.reused |= tr.__dict__["reused"]
                results.append(res)
                if hbm_seen is None:
                    hbm_seen = [s for s in tr.storages[n_before:] if s.buffer == "hbm"]
            parts.append(part.close())
        if tr.broken is not None:
            raise Unsupported("break or return inside an nl.affine_range / nl.sequential_range / nl.dynamic_range "
                              "body: the body is traced once as one BIR loop", tr.broken)
        if dynamic.open_loops(tr) is not None:
            raise Unsupported("break or return inside a `while reg:` loop: the body is traced once as one BIR loop",
                              dynamic.open_loops(tr))
        result = results[0]
        outs = _flatten(result)
        for r in results[1:]:
            if [getattr(v, "storage", v) for v in _flatten(r)] != [getattr(v, "storage", v) for v in outs]:
                raise KernelError(f"{fn.__name__}: the launch-grid instances return different tensors (each "
                                  "instance returns the same shared HBM tensors, written in its part)", where)
        if tr.cores > 1:
            shards.combine(tr, parts)
        for v in outs:
            if not isinstance(v, View) or v.storage.buffer != "hbm":
                raise KernelError(f"{fn.__name__} returns {v!r}: a kernel returns HBM tensors (nl.ndarray(..., "
                                  "buffer=nl.shared_hbm) written with nl.store)", where)
            if not v.storage.written:
                raise KernelError(f"{fn.__name__} returns {v.name}, which nothing writes", where)
        if tr.requests:
            raise _NeedsPlan(tr.requests)
        written_args = [n for n, s in arg_storages.items() if s.kind == "output"]
        hoist.hoist_transposes(tr)  # loop-invariant PE transposes once before their loop, as the compiler does
        engine_choice.place_default_engines(tr)  # int32 / power tensor_tensor on GpSimd, as NKI documents
        bcast_pe.place_broadcasts(tr)  # partition broadcasts as matmuls into PSUM, as NKI lowers broadcast_to
        lowered = emit_bir(tr, kernel.label, list(arg_storages), outs)
        return _Traced(tr, lowered, arg_storages, result, written_args)
    finally:
        tracer._current = prev


def _flatten(result):
    if result is None:
        return []
    if isinstance(result, (tuple, list)):
        out = []
        for r in result:
            out.extend(_flatten(r))
        return out
    return [result]


def _bits_in(x, bir):
    """An argument array as neuronsim takes it: a bf16 / fp8 array (numpy's bfloat16 and fp8 dtypes, ml_dtypes' or
    neuronsim's) as its raw bits; other arrays unchanged."""
    a = np.ascontiguousarray(x)
    if bir in ("bfloat16", "float8e4", "float8e5", "float8_e4m3fn", "float8_e8m0fnu") and a.dtype.kind == "V" or \
            a.dtype.name in ("bfloat16", "float8_e4m3", "float8_e5m2", "float8_e4m3fn", "float8_e8m0fnu"):
        return a.view(np.uint16 if bir == "bfloat16" else np.uint8)
    return a


def _value_out(a, bir):
    """An output as the caller gets it: bf16 and fp8 as arrays of numpy's bfloat16 and fp8 dtypes (ml_dtypes' or
    neuronsim's), their bits unchanged; float32 only for an fp8 type an old ml_dtypes lacks."""
    if bir in ("bfloat16", "float8e4", "float8e5", "float8_e4m3fn"):
        t = dtypes.numpy_type(dtypes.from_bir(bir))
        if t is not None:
            return a.view(t)
        return _core.to_float32(a, bir)  # pragma: no cover - ml_dtypes without float8_e4m3
    return a


def _inputs(traced, args, kwargs, kernel):
    bound = inspect.signature(_as_kernel(kernel).fn).bind(*args, **kwargs)
    ins = dict(traced.lowered.constants)
    for name, s in traced.arg_storages.items():
        if s.kind == "input" or name in traced.lowered.inputs:
            v = bound.arguments[name]
            if isinstance(v, TypedArray):
                ins[name] = v.bits
            elif isinstance(v, np.ndarray):
                ins[name] = _bits_in(v, s.dtype)
    return ins


def benchmark(kernel=None, *arrays, arch=None, timing_only=False, warmup=None, iters=None, trace=None,
              max_instructions=None, sanitize=False, **kwargs):
    """Runs the kernel on the simulator and returns the neuronsim.Result (outputs, stats with the profile in the
    kernel's source lines, total_ns). Arguments are numpy arrays (or neuronsim.nki.tensor(shape, dtype) with
    timing_only=True). sanitize=True checks the run (docs/sanitizer.md): Result.findings lists what it found. As a
    decorator, @nki.benchmark(warmup=..., iters=...), it makes a kernel whose call prints its simulated time (warmup
    and iters have no meaning in a deterministic simulation)."""
    if kernel is None or (not callable(kernel) and not isinstance(kernel, Kernel)):
        return lambda f: Kernel(f, (), {"benchmark": True})
    traced = trace_kernel(kernel, arrays, kwargs, arch, max_instructions)
    k = traced.lowered.builder.kernel(traced.lowered.label, _sources(kernel, arrays))
    inputs = None if timing_only else _inputs(traced, arrays, kwargs, kernel)
    return _core.run(k, inputs, **_placement(kernel, arch), timing_only=timing_only, trace=trace,
                     max_instructions=_max_instructions(max_instructions), sanitize=sanitize)


# @nki.jit(platform_target=...) -> the arch (the jit options' doc: trn1 | inf2 | gen2, trn2 | gen3, trn3 | gen4).
_TARGETS = {"trn1": "trn1", "inf2": "trn1", "gen2": "trn1", "trn2": "trn2", "gen3": "trn2", "trn3": "trn3",
            "gen4": "trn3"}


def _placement(kernel, arch, ranks=1):
    """arch= and the cores of the run: arch= if given, else the kernel's @nki.jit(platform_target=...), else the
    environment's NEURON_PLATFORM_TARGET_OVERRIDE (the Neuron compiler's variable for compiling off-device, e.g.
    trn2), else trn1; an nl.nc(n) grid runs on n cores of one logical core (LNC = n), which trn2 and trn3 have (the
    default arch is then trn2; trn1's cores are not grouped); ranks= logical cores of that many physical cores each."""
    k = _as_kernel(kernel)
    target, what = k.options.get("platform_target"), "platform_target"
    if target is None and os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE"):
        target, what = os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"], "NEURON_PLATFORM_TARGET_OVERRIDE"
    if arch is None and target is not None:
        arch = _TARGETS.get(str(target).lower())
        if arch is None:
            raise KernelError(f"{what}={target!r}: the targets are " + ", ".join(_TARGETS), None)
    n = k.cores
    if n == 1 and ranks == 1:
        return {"arch": arch or "trn1"}
    return {"arch": arch or ("trn2" if n > 1 else "trn1"), "cores": n * ranks, "lnc": n}


def _outputs_of(kernel, r, traced):
    return r.outputs


def simulate(kernel, *arrays, arch=None, max_instructions=None, sanitize=False, ranks=None, **kwargs):
    """Runs the kernel on the simulator and returns its outputs as numpy arrays, as NKI's simulate_kernel does: what
    the kernel returns (one array, or a tuple); for a kernel that writes its arguments instead (NKI's older style),
    those arrays are updated in place and None is returned. Given the kernel alone, simulate(kernel) is the current
    API's form: a callable that runs it, simulate(kernel)(a, b) (simulate(kernel[2])(...) with a launch grid) -- for a
    kernel that takes arguments; one that takes none runs at once, as the legacy API's simulate_kernel(kernel).
    sanitize=True checks the run for uninitialized reads, loop-carried dependencies of affine_range loops and races
    (docs/sanitizer.md) and raises neuronsim.SanitizerError (its .findings the list) when it finds any.
    ranks=R runs R ranks (logical cores, each with its own copy of the kernel's tensors, for nki.collectives): an
    argument given as a list of R arrays is each rank's own (rank r reads the r-th), any other every rank's; the
    result is a list of R results, rank r's r-th (docs/multicore.md "DRAM and data per rank")."""
    needs = [p for p in inspect.signature(_as_kernel(kernel).fn).parameters.values()
             if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not arrays and not kwargs and needs:
        return functools.wraps(_as_kernel(kernel).fn)(
            lambda *a, **k: simulate_kernel(kernel, *a, arch=arch, max_instructions=max_instructions, sanitize=sanitize,
                                            ranks=ranks, **k))
    return simulate_kernel(kernel, *arrays, arch=arch, max_instructions=max_instructions, sanitize=sanitize,
                           ranks=ranks, **kwargs)


def _per_rank(arrays, kwargs, ranks):
    """The arguments of each of `ranks` ranks: a list or tuple of `ranks` arrays is one per rank, any other value
    every rank's."""
    def pick(v, r):
        if isinstance(v, (list, tuple)) and v and all(isinstance(e, (np.ndarray, TypedArray)) for e in v):
            if len(v) != ranks:
                raise KernelError(f"simulate(ranks={ranks}): an argument given per rank is a list of {ranks} arrays, "
                                  f"got {len(v)}", None)
            return v[r]
        return v
    return [([pick(a, r) for a in arrays], {k: pick(v, r) for k, v in kwargs.items()}) for r in range(ranks)]


def simulate_kernel(kernel, *arrays, arch=None, max_instructions=None, sanitize=False, ranks=None, **kwargs):
    """The legacy API's simulate_kernel(kernel, *args): runs the kernel once (simulate); ranks= as simulate."""
    if ranks is not None:
        if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
            raise KernelError(f"simulate(ranks={ranks!r}): the number of ranks is a positive int", None)
        per = _per_rank(arrays, kwargs, ranks)
        arrays, kwargs = per[0]
    traced = trace_kernel(kernel, arrays, kwargs, arch, max_instructions)
    k = traced.lowered.builder.kernel(traced.lowered.label, _sources(kernel, arrays))
    if ranks is None:
        r = _core.run(k, _inputs(traced, arrays, kwargs, kernel), **_placement(kernel, arch),
                      max_instructions=_max_instructions(max_instructions), sanitize=sanitize)
        if r.findings:
            raise sanitizer_error(r)
        return _results(kernel, traced, r.outputs, arrays, kwargs)
    for a, kw in per[1:]:
        for x, y in zip(list(arrays) + list(kwargs.values()), list(a) + list(kw.values())):
            if isinstance(x, np.ndarray) and (not isinstance(y, np.ndarray) or x.shape != y.shape or
                                              x.dtype != y.dtype):
                raise KernelError(f"simulate(ranks={ranks}): every rank's arrays have rank 0's shapes and dtypes "
                                  f"({x.shape} {x.dtype} against {getattr(y, 'shape', y)})", None)
    r = _core.run(k, [_inputs(traced, a, kw, kernel) for a, kw in per], **_placement(kernel, arch, ranks),
                  max_instructions=_max_instructions(max_instructions), sanitize=sanitize)
    if r.findings:
        raise sanitizer_error(r)
    if ranks == 1:
        return [_results(kernel, traced, r.outputs, arrays, kwargs)]
    return [_results(kernel, traced, {n: v[i] for n, v in r.outputs.items()}, a, kw) for i, (a, kw) in enumerate(per)]


def _results(kernel, traced, outputs, arrays, kwargs):
    """What the kernel returns, from the run's outputs (or its written arguments updated in place, then None)."""
    outs = {}
    for s in traced.trace.storages:
        if s.buffer == "hbm" and s.name in outputs:
            outs[s.id] = _value_out(outputs[s.name], s.dtype)
    if traced.result is None:
        bound = inspect.signature(_as_kernel(kernel).fn).bind(*arrays, **kwargs)
        for name in traced.written_args:
            _write_back(bound.arguments[name], outs[traced.arg_storages[name].id], traced.arg_storages[name].dtype)
        return None

    def build(x):
        if isinstance(x, (tuple, list)):
            return type(x)(build(e) for e in x)
        return outs[x.storage.id]
    return build(traced.result)


def to_bir(kernel, *arrays_or_shapes, arch=None, max_instructions=None, **kwargs):
    """The kernel's BIR JSON module (a dict). Arguments: numpy arrays, neuronsim.nki.tensor(shape, dtype) or
    nki.typing's nt.tensor[shape, dtype]; arch= the architecture it is traced for (nisa.get_nc_version())."""
    return trace_kernel(kernel, arrays_or_shapes, kwargs, arch, max_instructions).lowered.builder.to_bir()


def _write_back(target, got, bir):
    """An in-place argument's result into the caller's array (NKI's simulate updates it): a numpy array takes the
    values in its own dtype (bf16 / fp8 held as raw bits take the bits), a neuronsim.nki.array its bits."""
    if isinstance(target, TypedArray):
        got = _bits_in(got, bir)  # a bfloat16 / fp8 array: its bits
        target.bits[...] = _core.from_float32(np.asarray(got, dtype=np.float32), bir) \
            if got.dtype != target.bits.dtype else got
        return
    if not isinstance(target, np.ndarray):
        return
    if target.dtype.kind == "V" or target.dtype.name in ("bfloat16", "float8_e4m3", "float8_e5m2", "float8_e4m3fn"):
        bits = _core.from_float32(np.asarray(got, dtype=np.float32), bir) if got.dtype.kind == "f" and \
            got.dtype.itemsize == 4 else np.asarray(got)
        target.view(bits.dtype)[...] = bits
        return
    np.copyto(target, got.astype(target.dtype) if got.dtype != target.dtype else got)


def sanitizer_error(result):
    """neuronsim.SanitizerError for a sanitized run's findings: its message their lines as the CLI prints them
    ("sanitizer: KIND: ..."), e.findings the list (Result.findings), e.exit_code 5 (the CLI's)."""
    e = _core.SanitizerError("\n".join(result.finding_lines))
    e.findings = result.findings
    e.exit_code = 5
    e.file = e.inst_index = e.inst_name = e.field = e.source = None
    return e


def save_bir(kernel, *arrays_or_shapes, path, arch=None, max_instructions=None, **kwargs):
    """Writes the kernel's BIR JSON to path (the form `neuronsim run` reads) and returns path. The path goes through
    the rule of every output neuronsim writes, checked before the kernel is traced: never the kernel's own file (nor
    a FIFO, a directory...); written whole or not at all."""
    _core.check_output_paths([path], _sources(kernel, arrays_or_shapes))
    text = trace_kernel(kernel, arrays_or_shapes, kwargs, arch, max_instructions).lowered.builder.to_bir_text()
    _core.write_output(path, text, _sources(kernel, arrays_or_shapes))
    return path



def tune(kernel, *arrays_or_tensors, params, arch="trn1", reference=None, client=None, out=None, resume=False,
         **fixed_kwargs):
    """The kernel's keyword parameters searched on the simulator (docs/tuning.md): every candidate of the grid
    `params` ({name: [values]}) traced, lowered and timed, and checked against `reference` when given, on Dask.
    Returns the rows (dicts keyed as DIR/results.csv), best first. neuronsim.tune.tune says what each argument is
    (also sample, seed, rtol, atol, workers, progress, report)."""
    from ..tune import tune as run_tune
    return run_tune(kernel, *arrays_or_tensors, params=params, arch=arch, reference=reference, client=client, out=out,
                    resume=resume, **fixed_kwargs)
