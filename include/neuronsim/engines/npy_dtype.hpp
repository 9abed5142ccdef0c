// .npy arrays (include/neuronsim/io/npy.hpp) as tensor data: the conversions that apply the engines' rounding rules
// (engines/dtype.cpp), used by the engines (CustomOp / BIRKernel operands, engines/ops/kernel.cpp) and by sim (--input,
// --output, the Python module).
//
// Loading into a tensor (npy_to_dtype, below): the file's dtype must equal the tensor's, or be one of
//   - the raw-bits container of io/npy.hpp for a bfloat16 / fp8 / x4 tensor,
//   - `<f4` or `<f2` for any float tensor but float8_e8m0fnu (raw bits only): converted through fp32 with the
//     engines' rounding (RNE, fp8 overflow rule per engines/dtype.cpp),
//   - any integer dtype for an integer tensor, when every value fits (NumPy's default int64 arange loads into
//     an int32 tensor); an out-of-range value is an error, not a wrap.
// Anything else is an InputError naming the file, the file dtype and the tensor dtype.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "neuronsim/io/npy.hpp"
#include "neuronsim/isa/tables.hpp"

namespace neuronsim::engines {

// An array of dtype `d` built from fp32 values, converted with the engines' store rule (store_f32).
io::NpyArray npy_from_f32(const std::vector<float> &values, const std::vector<int64_t> &shape,
                          isa::Dtype d = isa::Dtype::float32);
// The array's elements widened to fp32 (load_f32); raw-bits containers are read as integers.
std::vector<float> npy_to_f32(const io::NpyArray &a);
// The array's bytes as a tensor of dtype `target` under the rules above; `file` names the source in errors.
std::vector<uint8_t> npy_to_dtype(const io::NpyArray &a, isa::Dtype target, const std::string &file);

}  // namespace neuronsim::engines
