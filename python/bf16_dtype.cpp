// numpy's bfloat16 dtype for machines without ml_dtypes (Debian 12 has no package of it): public NKI kernels use
// nl.bfloat16 as a numpy dtype (np.dtype(nl.bfloat16).itemsize, x.astype(nl.bfloat16)), which real NKI serves with
// ml_dtypes. Registered through numpy's legacy user-dtype C API (numpy 1.x) by the machinery shared with the fp8 types
// (python/float_dtype_scalar.hpp, python/float_dtype_numpy.hpp), it follows ml_dtypes.bfloat16 where that API allows:
//   - kind 'V', type char 'E', itemsize 2, name 'bfloat16' (numpy names a user dtype after its scalar type), and
//     np.dtype("bfloat16") through numpy's sctypeDict. ml_dtypes chose 'V' because numpy takes two dtypes of one
//     kind and size as the same type, so kind 'f' would make bfloat16 equal float16;
//   - float32 -> bf16 is the simulator's own rounding (engines::f32_to_bf16: round to nearest even, any NaN -> the
//     quiet 0x7fc0, Inf kept); every other type goes through float32 with numpy's own cast to or from float32
//     (float64 and long double through float64, then to float32), so float64 and integers above 2^24 are rounded
//     twice, as ml_dtypes' bfloat16 conversion from double through float does;
//   - arithmetic: each ufunc loop computes in float32 and rounds the result once (ml_dtypes' rule);
//   - array elements read out (tolist, item) are Python floats, as ml_dtypes'; a[i] is a bfloat16 scalar.
// This file also holds the one definition of numpy's C API table for bf16_dtype.cpp and fp8_dtypes.cpp.
// The scalar type neuronsim.bfloat16 is created on the first bfloat16_type() call, which the NKI front end makes only
// when ml_dtypes is missing (python/neuronsim/nki/dtypes.py).
#define NEURONSIM_NUMPY_API_HERE
#include "float_dtype_scalar.hpp"

#include "float_dtype_numpy.hpp"

namespace neuronsim::python {

namespace float_dtype {

bool import_numpy() {
  static bool done = false;
  if (!done)
    done = _import_array() >= 0 && _import_umath() >= 0;
  return done;
}

} // namespace float_dtype

pybind11::object bfloat16_type() { return float_dtype::scalar_type<float_dtype::Bf16>(); }

} // namespace neuronsim::python
