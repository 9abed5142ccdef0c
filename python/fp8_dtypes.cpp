// numpy's fp8 dtypes for machines without ml_dtypes: float8_e4m3 (NKI nl.float8_e4m3, BIR float8e4), float8_e5m2
// (nl.float8_e5m2, BIR float8e5) and float8_e4m3fn (nl.float8_e4m3fn, BIR float8_e4m3fn), so kernels and their tests
// write np.dtype(nl.float8_e4m3).itemsize, x.astype(nl.float8_e5m2), pass fp8 arrays and get fp8 outputs back as with
// ml_dtypes. The same machinery as bfloat16 (python/float_dtype_scalar.hpp, python/float_dtype_numpy.hpp): names as
// ml_dtypes', itemsize 1, type chars '7', '5', '4' as ml_dtypes', arithmetic in float32 rounded once, casts with every
// numpy integer and float type and between the four custom formats (through float32), pickling through
// neuronsim.float8_e4m3 etc. The values are the simulator's conversions (engines/dtype.cpp, the formats' traits in
// python/float_dtypes.hpp). Where they differ from ml_dtypes (as its float8.h and custom_float.h read):
//   - float8_e4m3fn overflow: a float32 that rounds past 448 gives +-448 here (engines::default_fp8_overflow, libBIR
//     CastToNewDType's saturate, the rule of every engine store to float8_e4m3fn); ml_dtypes gives NaN (0x7f / 0xff:
//     its conversion without saturation returns the type's infinity(), which for e4m3fn is the NaN code). Both round
//     values up to 464 to 448 (464 is the tie between 448 and the NaN code's 480, to the even 448), and both give NaN
//     for +-Inf and NaN inputs (here sign | 0x7f).
//   - float8_e4m3 and float8_e5m2: the same rule in both (round to nearest even, overflow -> +-Inf, subnormals kept).
//     NaN inputs give sign | the canonical quiet NaN (e4m3 0x7c, e5m2 0x7e; ml_dtypes' e4m3 quiet NaN is 0x7c too).
//   - float64 (and long double) sources are rounded to float32 first, then to fp8: two roundings, where ml_dtypes
//     converts a double directly (its float8 constructor from double). They differ only for a float64 within float32's
//     rounding of an fp8 tie: 1 + 2^-4 + 2^-30 is float32 1.0625, the e4m3 tie between 1 and 1.125, to the even 1.0;
//     ml_dtypes gives 1.125. A finite float64 beyond float32's range counts as an overflow (e4m3fn: 448), not as Inf.
//   - numpy kind: 'V' for all three (ml_dtypes registers float8_e5m2 with kind 'f', the other two with 'V').
//   - float16 -> fp8 is declared a safe cast, as for bfloat16 (so `x * 0.5` stays fp8 under numpy 1.x's value-based
//     casting of Python floats); ml_dtypes declares only bool and 8-bit integers safe into its fp8 types.
#include "float_dtype_scalar.hpp"

#include "float_dtype_numpy.hpp"

namespace neuronsim::python {

namespace {

using namespace float_dtype;

// fp8 <-> fp8 and fp8 <-> bf16 casts, once all four formats are registered.
bool register_cross_casts() {
  return register_custom_casts<Bf16, Fp8E4m3>() && register_custom_casts<Bf16, Fp8E5m2>() &&
         register_custom_casts<Bf16, Fp8E4m3fn>() && register_custom_casts<Fp8E4m3, Fp8E5m2>() &&
         register_custom_casts<Fp8E4m3, Fp8E4m3fn>() && register_custom_casts<Fp8E5m2, Fp8E4m3fn>();
}

} // namespace

pybind11::dict float8_types() {
  static std::string failure;
  static bool crossed = false;
  pybind11::dict d;
  bfloat16_type(); // the cross casts need bfloat16 registered first
  d[Fp8E4m3::kName] = scalar_type<Fp8E4m3>();
  d[Fp8E5m2::kName] = scalar_type<Fp8E5m2>();
  d[Fp8E4m3fn::kName] = scalar_type<Fp8E4m3fn>();
  if (failure.empty() && !crossed) {
    crossed = register_cross_casts();
    if (!crossed) {
      failure = "neuronsim could not register the casts between its bfloat16 and fp8 numpy dtypes";
      if (PyErr_Occurred()) {
        pybind11::error_already_set e;
        failure += std::string(": ") + e.what();
      }
    }
  }
  if (!failure.empty())
    throw pybind11::import_error(failure);
  return d;
}

} // namespace neuronsim::python
