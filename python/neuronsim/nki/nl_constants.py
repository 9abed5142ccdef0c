"""nki.language.constants: what kernels import from this undocumented submodule (`from neuronxcc.nki.language.constants
import sizeinbytes`, as public kernels do)."""
from . import dtypes
from .errors import KernelError

__neuronsim__ = True


def sizeinbytes(dtype):
    """The size of one element of dtype in bytes."""
    bir = dtypes.bir_name(dtype)
    if bir is None:
        raise KernelError(f"sizeinbytes: {dtype!r} is not an NKI dtype")
    return dtypes.size(bir)
