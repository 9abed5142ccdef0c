// numpy's bfloat16 dtype when ml_dtypes is not installed (python/bf16_dtype.cpp; docs/nki-lowering.md "bfloat16
// arrays"): python/neuronsim/nki/dtypes.py asks for it only when `import ml_dtypes` fails, so that one process
// never has two numpy dtypes named bfloat16.
#pragma once

#include <pybind11/pybind11.h>

namespace neuronsim::python {

// The scalar type neuronsim.bfloat16 (np.dtype(it) is the dtype), registered with numpy on the first call.
pybind11::object bfloat16_type();

} // namespace neuronsim::python
