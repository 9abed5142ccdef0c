"""neuronsim.nki: NKI kernels (Python, the nki.language / nki.isa API) traced to BIR and run on the simulator.

    import neuronsim.nki as nki
    import neuronsim.nki.language as nl

    @nki.jit
    def add(a, b):
        c = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(a.shape[0] // 128):
            x = nl.load(a[i * 128:(i + 1) * 128, :])
            y = nl.load(b[i * 128:(i + 1) * 128, :])
            nl.store(c[i * 128:(i + 1) * 128, :], nl.add(x, y))
        return c

    out = nki.simulate(add, a, b)           # numpy outputs, as NKI's simulate_kernel
    # bf16 / fp8 arguments: x.astype(nl.bfloat16), x.astype(nl.float8_e4m3) (ml_dtypes' dtypes, else neuronsim's),
    # or nki.array(values, nl.float8_e4m3); bf16 / fp8 outputs are arrays of those dtypes
    r = nki.benchmark(add, a, b)            # a neuronsim.Result: total_ns, stats (profile in the kernel's lines)
    rows = nki.tune(k, a, b, params={"TN": [64, 128]})   # a parameter search on Dask, best first (docs/tuning.md)
    doc = nki.to_bir(add, a, b)             # the BIR JSON module

The kernel is called once with symbolic tensors; loops stay loops; the front end writes instructions and never
computes a value (docs/nki-lowering.md). install() serves `neuronxcc.nki` / `nki` imports from here when no real
package is importable, so that published kernel files run unmodified (`neuronsim nki FILE.py::FUNCTION`).
"""
__neuronsim__ = True

from . import collectives, compiler, isa, language, registry, typing  # noqa: E402
# nki.isa's topic modules: each registers its names (replacing their refusals), which nki.isa serves through the
# registry (isa.__getattr__)
from . import isa_accum, isa_dma, isa_move, isa_mx, isa_random, isa_select  # noqa: E402, F401
from .api import (Kernel, TensorSpec, TypedArray, array, baremetal, benchmark, jit, save_bir,  # noqa: E402
                  simulate, simulate_kernel, tensor, to_bir, trace, tune)
from .dtypes import DType as dtype  # noqa: E402 - nki.dtype, the type of the dtypes (annotations: x: nki.dtype)
from .errors import KernelError, Unsupported  # noqa: E402
from .install import install  # noqa: E402
from .tracer import View as _View  # noqa: E402

__all__ = ["Kernel", "KernelError", "TensorSpec", "TypedArray", "Unsupported", "array", "baremetal", "benchmark",
           "collectives", "compiler", "dtype", "install", "isa", "jit", "language", "save_bir", "simulate",
           "simulate_kernel", "tensor", "to_bir", "trace", "tune", "typing"]

for _name in ("jit", "simulate", "baremetal", "benchmark", "simulate_kernel", "tensor", "dtype"):
    registry.value("nki", _name, globals()[_name])
for _name in ("dtype", "itemsize", "ndim", "shape", "reshape", "broadcast_to"):  # legacy nki.tensor's members
    registry.value("nki", "tensor." + _name, getattr(_View, _name))
registry.value("nki", "profile", benchmark)  # legacy nki.profile: a run with its profile (neuronsim.Result.stats)
# nki.jit's options: each is accepted; what it changes here is in docs/nki-api.md.
for _name in ("jit:mode", "jit:platform_target", "jit:kernel[grid]", "jit:kernel[lnc]", "jit:debug_kernel",
              "jit:show_compiler_tb", "jit:experimental_flags"):
    registry.value("nki", _name, jit)


def __getattr__(name):
    return registry.module_getattr("nki", name)
