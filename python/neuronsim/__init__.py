"""The neuronsim package: the simulator in process (the extension neuronsim._core, python/*.cpp) and sweeps over
many kernels and architectures on Dask (neuronsim.sweeps). README "Python" and "Sweeps" are the guides."""
from . import _core
from ._core import (Error, InvalidInput, Kernel, Mismatch, Report, Result, SimulationError, TensorInfo, UsageError,
                    __version__, arch_params, encode, from_float32, isa, load, run, run_config, to_float32,
                    validate)
from .sweeps import sweep

__doc__ = _core.__doc__
__all__ = ["Error", "InvalidInput", "Kernel", "Mismatch", "Report", "Result", "SimulationError", "TensorInfo",
           "UsageError", "arch_params", "encode", "from_float32", "isa", "load", "run", "run_config", "sweep",
           "to_float32", "validate"]

# The classes are defined in the extension; they read as the package's (repr, help, pickling by name).
for _cls in (Kernel, Mismatch, Report, Result, TensorInfo):
    _cls.__module__ = __name__
del _cls
