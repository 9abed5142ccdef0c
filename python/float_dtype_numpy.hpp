// The shared machinery of neuronsim's custom-float numpy dtypes, part 2: casts to and from numpy's numeric types and
// between the custom formats, ufunc loops, and the registration of one format with numpy (numpy 1.x's legacy
// user-dtype C API: PyArray_RegisterDataType, PyArray_RegisterCastFunc, PyUFunc_RegisterLoopForType). It follows
// ml_dtypes' custom-float registration (its custom_float.h: the same casts, safe casts and ufunc set, arithmetic in
// float32 rounded once); the value rules are the simulator's, from the format's traits (python/float_dtypes.hpp).
//
// Included by python/bf16_dtype.cpp and python/fp8_dtypes.cpp, after python/float_dtype_scalar.hpp (part 1).
#pragma once

#include <type_traits>
#include <vector>

namespace neuronsim::python::float_dtype {

// ------------------------------------------------------------------------------------------------ casts
// Between a format and float32: the simulator's conversions. Between a format and another numeric type N: numpy's
// own cast between N and an intermediate over a chunk, then the format's step. The intermediate is float32, but
// float64 for float64 and long double sources, narrowed with narrow() (a finite overflow stays finite, so the
// format's overflow rule applies).

constexpr npy_intp kChunk = 256;

template <int N> using Mid = std::conditional_t<N == NPY_DOUBLE || N == NPY_LONGDOUBLE, double, float>;
template <int N> constexpr int kMidNum = std::is_same_v<Mid<N>, double> ? NPY_DOUBLE : NPY_FLOAT;

// numpy's casts, shared by every format: builtin type N to its intermediate, float32 to N, and N's size.
inline PyArray_VectorUnaryFunc *g_to_mid[NPY_NTYPES] = {};
inline PyArray_VectorUnaryFunc *g_from_f32[NPY_NTYPES] = {};
inline int g_size[NPY_NTYPES] = {};

template <class T, int N> void cast_to(void *from, void *to, npy_intp n, void *, void *) {
  char *src = static_cast<char *>(from), *dst = static_cast<char *>(to);
  Mid<N> buf[kChunk];
  for (npy_intp i = 0; i < n; i += kChunk) {
    npy_intp m = std::min(kChunk, n - i);
    const Mid<N> *v = buf;
    if constexpr (N == kMidNum<N>)
      v = reinterpret_cast<const Mid<N> *>(src + npy_intp(sizeof(Mid<N>)) * i);
    else
      g_to_mid[N](src + g_size[N] * i, buf, m, nullptr, nullptr);
    for (npy_intp j = 0; j < m; ++j)
      put<T>(dst + kSize<T> * (i + j), narrow(v[j]));
  }
}

template <class T, int N> void cast_from(void *from, void *to, npy_intp n, void *, void *) {
  char *src = static_cast<char *>(from), *dst = static_cast<char *>(to);
  float buf[kChunk];
  for (npy_intp i = 0; i < n; i += kChunk) {
    npy_intp m = std::min(kChunk, n - i);
    float *f = N == NPY_FLOAT ? reinterpret_cast<float *>(dst + 4 * i) : buf;
    for (npy_intp j = 0; j < m; ++j)
      f[j] = at<T>(src + kSize<T> * (i + j));
    if (N != NPY_FLOAT)
      g_from_f32[N](buf, dst + g_size[N] * i, m, nullptr, nullptr);
  }
}

// One custom format to another: decoded to float32 and rounded once (ml_dtypes' casts between its types, through
// float). Every fp8 value is a bf16 value, so fp8 -> bf16 is exact.
template <class A, class B> void cast_custom(void *from, void *to, npy_intp n, void *, void *) {
  const char *src = static_cast<const char *>(from);
  char *dst = static_cast<char *>(to);
  for (npy_intp i = 0; i < n; ++i)
    put<B>(dst + kSize<B> * i, at<A>(src + kSize<A> * i));
}

template <class T, int N> bool register_cast() {
  PyArray_Descr *other = PyArray_DescrFromType(N);
  if (other == nullptr)
    return false;
  g_size[N] = other->elsize;
  bool ok = true;
  if (N != kMidNum<N>) {
    PyArray_Descr *f32 = PyArray_DescrFromType(NPY_FLOAT);
    g_to_mid[N] = PyArray_GetCastFunc(other, kMidNum<N>);
    g_from_f32[N] = PyArray_GetCastFunc(f32, N);
    Py_DECREF(f32);
    ok = g_to_mid[N] != nullptr && g_from_f32[N] != nullptr;
  } else if (N != NPY_FLOAT) {
    PyArray_Descr *f32 = PyArray_DescrFromType(NPY_FLOAT);
    g_from_f32[N] = PyArray_GetCastFunc(f32, N);
    Py_DECREF(f32);
    ok = g_from_f32[N] != nullptr;
  }
  ok = ok && PyArray_RegisterCastFunc(other, State<T>::num, cast_to<T, N>) == 0 &&
       PyArray_RegisterCastFunc(State<T>::descr, N, cast_from<T, N>) == 0;
  Py_DECREF(other);
  return ok;
}

template <class T> bool register_casts() {
  bool ok = register_cast<T, NPY_BOOL>() && register_cast<T, NPY_BYTE>() && register_cast<T, NPY_UBYTE>() &&
            register_cast<T, NPY_SHORT>() && register_cast<T, NPY_USHORT>() && register_cast<T, NPY_INT>() &&
            register_cast<T, NPY_UINT>() && register_cast<T, NPY_LONG>() && register_cast<T, NPY_ULONG>() &&
            register_cast<T, NPY_LONGLONG>() && register_cast<T, NPY_ULONGLONG>() &&
            register_cast<T, NPY_HALF>() && register_cast<T, NPY_FLOAT>() && register_cast<T, NPY_DOUBLE>() &&
            register_cast<T, NPY_LONGDOUBLE>();
  // Safe casts, as ml_dtypes registers them: the format into the wider floats, and bool / 8-bit integers into the
  // format. And float16 into the format, which ml_dtypes does not declare: numpy 1.x takes a Python float operand by
  // its value, as float16 when it lies in float16's range (value-based casting), so without it `x - 0.5` would leave
  // the format for numpy's float32 loop. With it, `(x - 0.5) * 2` keeps the format, as ml_dtypes' does under numpy
  // 2's rule for Python scalars, and the number is rounded to the format from its float64 value (x * 1e-8 is not
  // flushed as a float16 would be). The price: float16 arrays mix with the format's as the format (ml_dtypes:
  // float32).
  for (int to : {NPY_FLOAT, NPY_DOUBLE, NPY_LONGDOUBLE})
    ok = ok && PyArray_RegisterCanCast(State<T>::descr, to, NPY_NOSCALAR) == 0;
  for (int from : {NPY_BOOL, NPY_BYTE, NPY_UBYTE, NPY_HALF}) {
    PyArray_Descr *d = PyArray_DescrFromType(from);
    ok = ok && d != nullptr && PyArray_RegisterCanCast(d, State<T>::num, NPY_NOSCALAR) == 0;
    Py_XDECREF(d);
  }
  return ok;
}

// Both ways between two registered formats.
template <class A, class B> bool register_custom_casts() {
  return PyArray_RegisterCastFunc(State<A>::descr, State<B>::num, cast_custom<A, B>) == 0 &&
         PyArray_RegisterCastFunc(State<B>::descr, State<A>::num, cast_custom<B, A>) == 0;
}

// ------------------------------------------------------------------------------------------------ ufunc loops
// Each loop reads its operands as float32, computes in float32 and rounds a result of the format once.

using Binary = float (*)(float, float);
using Unary = float (*)(float);
using Test2 = bool (*)(float, float);
using Test1 = bool (*)(float);

template <class T, Binary F> void loop2(char **args, npy_intp const *dims, npy_intp const *steps, void *) {
  for (npy_intp i = 0; i < dims[0]; ++i)
    put<T>(args[2] + i * steps[2], F(at<T>(args[0] + i * steps[0]), at<T>(args[1] + i * steps[1])));
}
template <class T, Unary F> void loop1(char **args, npy_intp const *dims, npy_intp const *steps, void *) {
  for (npy_intp i = 0; i < dims[0]; ++i)
    put<T>(args[1] + i * steps[1], F(at<T>(args[0] + i * steps[0])));
}
template <class T, Test2 F> void test2(char **args, npy_intp const *dims, npy_intp const *steps, void *) {
  for (npy_intp i = 0; i < dims[0]; ++i)
    *reinterpret_cast<npy_bool *>(args[2] + i * steps[2]) =
        F(at<T>(args[0] + i * steps[0]), at<T>(args[1] + i * steps[1]));
}
template <class T, Test1 F> void test1(char **args, npy_intp const *dims, npy_intp const *steps, void *) {
  for (npy_intp i = 0; i < dims[0]; ++i)
    *reinterpret_cast<npy_bool *>(args[1] + i * steps[1]) = F(at<T>(args[0] + i * steps[0]));
}

inline float add_(float a, float b) { return a + b; }
inline float sub_(float a, float b) { return a - b; }
inline float mul_(float a, float b) { return a * b; }
inline float div_(float a, float b) { return a / b; }
inline float power_(float a, float b) { return std::pow(a, b); }
inline float maximum_(float a, float b) { return (a >= b || std::isnan(a)) ? a : b; } // NaN propagates, as numpy
inline float minimum_(float a, float b) { return (a <= b || std::isnan(a)) ? a : b; }
inline float fmax_(float a, float b) { return std::fmax(a, b); } // NaN ignored
inline float fmin_(float a, float b) { return std::fmin(a, b); }
inline float negative_(float a) { return -a; }
inline float positive_(float a) { return a; }
inline float absolute_(float a) { return std::fabs(a); }
inline float sign_(float a) { return std::isnan(a) ? a : a > 0 ? 1.0f : a < 0 ? -1.0f : 0.0f; }
inline float square_(float a) { return a * a; }
inline float reciprocal_(float a) { return 1.0f / a; }
inline float sqrt_(float a) { return std::sqrt(a); }
inline float exp_(float a) { return std::exp(a); }
inline float log_(float a) { return std::log(a); }
inline float tanh_(float a) { return std::tanh(a); }
inline float floor_(float a) { return std::floor(a); }
inline float ceil_(float a) { return std::ceil(a); }
inline float rint_(float a) { return std::nearbyint(a); }
inline bool eq_(float a, float b) { return a == b; }
inline bool ne_(float a, float b) { return a != b; }
inline bool lt_(float a, float b) { return a < b; }
inline bool le_(float a, float b) { return a <= b; }
inline bool gt_(float a, float b) { return a > b; }
inline bool ge_(float a, float b) { return a >= b; }
inline bool isnan_(float a) { return std::isnan(a); }
inline bool isinf_(float a) { return std::isinf(a); }
inline bool isfinite_(float a) { return std::isfinite(a); }
inline bool signbit_(float a) { return std::signbit(a); }

struct Loop {
  const char *ufunc;
  PyUFuncGenericFunction fn;
  int shape; // 2: (x, x) -> x; 1: x -> x; -2: (x, x) -> bool; -1: x -> bool
};

template <class T> bool register_loops(PyObject *numpy) {
  static const Loop loops[] = {
      {"add", loop2<T, add_>, 2}, {"subtract", loop2<T, sub_>, 2}, {"multiply", loop2<T, mul_>, 2},
      {"true_divide", loop2<T, div_>, 2}, {"power", loop2<T, power_>, 2}, {"maximum", loop2<T, maximum_>, 2},
      {"minimum", loop2<T, minimum_>, 2}, {"fmax", loop2<T, fmax_>, 2}, {"fmin", loop2<T, fmin_>, 2},
      {"negative", loop1<T, negative_>, 1}, {"positive", loop1<T, positive_>, 1},
      {"absolute", loop1<T, absolute_>, 1}, {"sign", loop1<T, sign_>, 1}, {"square", loop1<T, square_>, 1},
      {"reciprocal", loop1<T, reciprocal_>, 1}, {"sqrt", loop1<T, sqrt_>, 1}, {"exp", loop1<T, exp_>, 1},
      {"log", loop1<T, log_>, 1}, {"tanh", loop1<T, tanh_>, 1}, {"floor", loop1<T, floor_>, 1},
      {"ceil", loop1<T, ceil_>, 1}, {"rint", loop1<T, rint_>, 1},
      {"equal", test2<T, eq_>, -2}, {"not_equal", test2<T, ne_>, -2}, {"less", test2<T, lt_>, -2},
      {"less_equal", test2<T, le_>, -2}, {"greater", test2<T, gt_>, -2}, {"greater_equal", test2<T, ge_>, -2},
      {"isnan", test1<T, isnan_>, -1}, {"isinf", test1<T, isinf_>, -1}, {"isfinite", test1<T, isfinite_>, -1},
      {"signbit", test1<T, signbit_>, -1},
  };
  const int num = State<T>::num;
  for (const Loop &l : loops) {
    int nin = l.shape < 0 ? -l.shape : l.shape;
    std::vector<int> types(size_t(nin), num);
    types.push_back(l.shape < 0 ? NPY_BOOL : num);
    PyObject *u = PyObject_GetAttrString(numpy, l.ufunc);
    if (u == nullptr)
      return false;
    bool ok = PyObject_TypeCheck(u, &PyUFunc_Type) && reinterpret_cast<PyUFuncObject *>(u)->nargs == nin + 1;
    if (!ok)
      PyErr_Format(PyExc_RuntimeError, "%s: numpy.%s is not a ufunc of %d inputs", T::kName, l.ufunc, nin);
    ok = ok && PyUFunc_RegisterLoopForType(reinterpret_cast<PyUFuncObject *>(u), num, l.fn, types.data(),
                                           nullptr) == 0;
    Py_DECREF(u);
    if (!ok)
      return false;
  }
  return true;
}

// ------------------------------------------------------------------------------------------------ registration

template <class T> bool register_dtype() {
  using S = State<T>;
  if (!import_numpy())
    return false;
  PyObject *bases = PyTuple_Pack(1, reinterpret_cast<PyObject *>(&PyGenericArrType_Type));
  if (bases == nullptr)
    return false;
  PyObject *type = PyType_FromSpecWithBases(scalar_spec<T>(), bases);
  Py_DECREF(bases);
  if (type == nullptr)
    return false;
  S::type = reinterpret_cast<PyTypeObject *>(type); // kept for the process's life, as numpy keeps the dtype

  init_array_funcs<T>(&S::funcs);
  std::memset(static_cast<void *>(&S::proto), 0, sizeof S::proto);
  Py_SET_REFCNT(&S::proto, 1);
  Py_SET_TYPE(&S::proto, &PyArrayDescr_Type);
  Py_INCREF(type);
  S::proto.typeobj = S::type;
  S::proto.kind = 'V';
  S::proto.type = T::kTypeChar;
  S::proto.byteorder = '='; // as ml_dtypes, for every size
  S::proto.flags = NPY_USE_SETITEM;
  S::proto.elsize = int(kSize<T>);
  S::proto.alignment = int(kSize<T>);
  S::proto.f = &S::funcs;
  S::proto.hash = -1;
  S::num = PyArray_RegisterDataType(&S::proto);
  if (S::num < 0)
    return false;
  S::descr = PyArray_DescrFromType(S::num);
  if (S::descr == nullptr || PyObject_SetAttrString(type, "dtype", reinterpret_cast<PyObject *>(S::descr)) < 0)
    return false;

  PyObject *numpy = PyImport_ImportModule("numpy");
  if (numpy == nullptr)
    return false;
  bool ok = register_casts<T>() && register_loops<T>(numpy);
  // np.dtype("bfloat16"), np.dtype("float8_e4m3") (and so np.dtype(nl.bfloat16), a str): numpy looks names up in
  // sctypeDict. A name already there (ml_dtypes imported first) is left alone.
  PyObject *names = ok ? PyObject_GetAttrString(numpy, "sctypeDict") : nullptr;
  ok = names != nullptr && PyDict_Check(names) &&
       (PyDict_GetItemString(names, T::kName) != nullptr || PyDict_SetItemString(names, T::kName, type) == 0);
  Py_XDECREF(names);
  Py_DECREF(numpy);
  return ok;
}

// The format's scalar type, registered on the first call; a failure is kept and raised as ImportError on every call.
template <class T> pybind11::object scalar_type() {
  using S = State<T>;
  if (S::failure.empty() && S::descr == nullptr && !register_dtype<T>()) {
    S::failure = std::string("neuronsim could not register its ") + T::kName + " numpy dtype";
    if (PyErr_Occurred()) {
      pybind11::error_already_set e;
      S::failure += std::string(": ") + e.what();
    }
  }
  if (!S::failure.empty())
    throw pybind11::import_error(S::failure);
  return pybind11::reinterpret_borrow<pybind11::object>(reinterpret_cast<PyObject *>(S::type));
}

} // namespace neuronsim::python::float_dtype
