// The shared machinery of neuronsim's custom-float numpy dtypes, part 1: the per-format state, element access, the
// scalar type (neuronsim.bfloat16, neuronsim.float8_e4m3, ...) and numpy's array functions (getitem, copyswap, sort,
// argmax, dot, ...). It follows ml_dtypes' custom-float types (its custom_float.h) where numpy 1.x's legacy
// user-dtype C API allows; every value rule (float32 <-> the format) is the simulator's own, from the format's traits
// (python/float_dtypes.hpp, over engines/dtype.cpp). Part 2 (casts, ufunc loops, registration) is
// python/float_dtype_numpy.hpp.
//
// Included by python/bf16_dtype.cpp and python/fp8_dtypes.cpp, the only files that call numpy's C API. They share
// one table of numpy's C API (PY_ARRAY_UNIQUE_SYMBOL), defined in bf16_dtype.cpp (NEURONSIM_NUMPY_API_HERE), which
// imports it (import_numpy); CMake keeps both out of the unity build, where the two definitions would meet.
//
// A format's traits T (python/float_dtypes.hpp) give: Bits (uint16_t or uint8_t, the stored element), kName
// ("bfloat16"), kQualName ("neuronsim.bfloat16", the scalar type's name, through which arrays pickle), kTypeChar
// (numpy's type char, as ml_dtypes'), kDoc, and to_f32(Bits) / from_f32(float), the simulator's conversions.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>

#include <pybind11/pybind11.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL neuronsim_numpy_array_api
#define PY_UFUNC_UNIQUE_SYMBOL neuronsim_numpy_ufunc_api
#ifndef NEURONSIM_NUMPY_API_HERE
#define NO_IMPORT_ARRAY
#define NO_IMPORT_UFUNC
#endif
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>

#include "float_dtypes.hpp"

namespace neuronsim::python::float_dtype {

// numpy's C API, imported once (python/bf16_dtype.cpp); false with a Python error set.
bool import_numpy();

template <class T> struct State {
  static inline PyTypeObject *type = nullptr; // the scalar type
  static inline PyArray_Descr proto;          // what numpy registered (numpy 1.x keeps the pointer)
  static inline PyArray_ArrFuncs funcs;
  static inline PyArray_Descr *descr = nullptr; // np.dtype(type)
  static inline int num = NPY_NOTYPE;
  static inline std::string failure; // why registration failed, raised again on later calls
};

template <class T> struct Scalar {
  PyObject_HEAD typename T::Bits bits; // numpy finds an element's value right after the header (scalar_value)
};

template <class T> constexpr npy_intp kSize = npy_intp(sizeof(typename T::Bits));

template <class T> inline float at(const char *p) {
  typename T::Bits b;
  std::memcpy(&b, p, sizeof b);
  return T::to_f32(b);
}
template <class T> inline void put(char *p, float v) {
  typename T::Bits b = T::from_f32(v);
  std::memcpy(p, &b, sizeof b);
}
template <class T> bool is_scalar(PyObject *o) {
  return State<T>::type != nullptr && PyObject_TypeCheck(o, State<T>::type);
}
template <class T> typename T::Bits bits_of(PyObject *o) { return reinterpret_cast<Scalar<T> *>(o)->bits; }
template <class T> float value_of(PyObject *o) { return T::to_f32(bits_of<T>(o)); }

template <class T> PyObject *scalar_of_bits(typename T::Bits b) {
  PyObject *o = State<T>::type->tp_alloc(State<T>::type, 0);
  if (o)
    reinterpret_cast<Scalar<T> *>(o)->bits = b;
  return o;
}
template <class T> PyObject *new_scalar(float v) { return scalar_of_bits<T>(T::from_f32(v)); }

// A float64 as float32, a finite value past float32's range held at +-FLT_MAX: the format's encoder then applies its
// own overflow rule, as to a float32 that overflows it (bf16, e4m3, e5m2: Inf; e4m3fn: 448, engines/dtype.cpp). A
// cast of 1e300 to e4m3fn gives 448 as 1e30 does, not the NaN an Inf would give.
inline float narrow(double d) {
  if (std::isfinite(d) && std::fabs(d) > double(FLT_MAX))
    return float(std::copysign(double(FLT_MAX), d)); // float(d) would raise the FPU overflow flag numpy reports
  return float(d);
}
inline float narrow(float f) { return f; }

// A Python number, numpy scalar, size-1 array or numeric string as the format's bits; false with a Python error set.
template <class T> bool to_bits(PyObject *o, typename T::Bits *out) {
  if (is_scalar<T>(o)) {
    *out = bits_of<T>(o);
    return true;
  }
  PyObject *f = nullptr;
  if (PyUnicode_Check(o) || PyBytes_Check(o))
    f = PyFloat_FromString(o);
  else if (PyNumber_Check(o))
    f = PyNumber_Float(o);
  else
    PyErr_Format(PyExc_TypeError, "%s: expected a number, got %s", T::kName, Py_TYPE(o)->tp_name);
  if (f == nullptr)
    return false;
  double d = PyFloat_AsDouble(f);
  Py_DECREF(f);
  if (d == -1.0 && PyErr_Occurred())
    return false;
  *out = T::from_f32(narrow(d));
  return true;
}

// ------------------------------------------------------------------------------------------------ the scalar type

template <class T> PyObject *scalar_new(PyTypeObject *, PyObject *args, PyObject *kwds) {
  if ((kwds != nullptr && PyDict_Size(kwds) != 0) || PyTuple_Size(args) != 1) {
    PyErr_Format(PyExc_TypeError, "%s() takes one positional argument, a number or an array", T::kName);
    return nullptr;
  }
  PyObject *a = PyTuple_GET_ITEM(args, 0);
  if (is_scalar<T>(a)) {
    Py_INCREF(a);
    return a;
  }
  if (PyArray_Check(a) && PyArray_NDIM(reinterpret_cast<PyArrayObject *>(a)) > 0) {
    Py_INCREF(State<T>::descr); // stolen
    return PyArray_CastToType(reinterpret_cast<PyArrayObject *>(a), State<T>::descr, 0);
  }
  typename T::Bits b;
  if (!to_bits<T>(a, &b))
    return nullptr;
  return scalar_of_bits<T>(b);
}

// ml_dtypes' text: the float32 value with 6 significant digits (every bf16 and fp8 value reads back as itself).
template <class T> PyObject *scalar_repr(PyObject *self) {
  float v = value_of<T>(self);
  std::ostringstream s;
  s << (std::isnan(v) ? std::fabs(v) : v);
  return PyUnicode_FromString(s.str().c_str());
}

template <class T> PyObject *scalar_float(PyObject *self) { return PyFloat_FromDouble(value_of<T>(self)); }

// Through a Python float: Python's float -> int rules (NaN and Inf raise), float's hash (equal values must hash
// alike) and float's format().
template <class T> PyObject *scalar_int(PyObject *self) {
  PyObject *f = scalar_float<T>(self);
  if (f == nullptr)
    return nullptr;
  PyObject *i = PyNumber_Long(f);
  Py_DECREF(f);
  return i;
}
template <class T> int scalar_bool(PyObject *self) { return value_of<T>(self) != 0.0f; }
template <class T> Py_hash_t scalar_hash(PyObject *self) {
  PyObject *f = scalar_float<T>(self);
  if (f == nullptr)
    return -1;
  Py_hash_t h = PyObject_Hash(f);
  Py_DECREF(f);
  return h;
}
template <class T> PyObject *scalar_format(PyObject *self, PyObject *spec) {
  PyObject *f = scalar_float<T>(self);
  if (f == nullptr)
    return nullptr;
  PyObject *r = PyObject_Format(f, spec);
  Py_DECREF(f);
  return r;
}

template <class T> PyObject *scalar_compare(PyObject *a, PyObject *b, int op) {
  if (!is_scalar<T>(a) || !is_scalar<T>(b))
    return PyGenericArrType_Type.tp_richcompare(a, b, op); // numpy's: through arrays and the ufunc loops
  float x = value_of<T>(a), y = value_of<T>(b);
  bool r = op == Py_LT ? x < y : op == Py_LE ? x <= y : op == Py_EQ ? x == y : op == Py_NE ? x != y
         : op == Py_GT ? x > y : x >= y;
  return PyBool_FromLong(r);
}

// Two scalars of the format: the float32 result rounded; anything else goes to numpy (arrays, other scalars).
template <class T, int Op> PyObject *scalar_binary(PyObject *a, PyObject *b) {
  if (is_scalar<T>(a) && is_scalar<T>(b)) {
    float x = value_of<T>(a), y = value_of<T>(b);
    return new_scalar<T>(Op == 0 ? x + y : Op == 1 ? x - y : Op == 2 ? x * y : x / y);
  }
  PyNumberMethods *n = PyArray_Type.tp_as_number;
  return Op == 0 ? n->nb_add(a, b) : Op == 1 ? n->nb_subtract(a, b) : Op == 2 ? n->nb_multiply(a, b)
                                                                              : n->nb_true_divide(a, b);
}
template <class T> PyObject *scalar_negative(PyObject *self) { return new_scalar<T>(-value_of<T>(self)); }
template <class T> PyObject *scalar_positive(PyObject *self) { return new_scalar<T>(value_of<T>(self)); }
template <class T> PyObject *scalar_absolute(PyObject *self) { return new_scalar<T>(std::fabs(value_of<T>(self))); }

template <class T> PyType_Spec *scalar_spec() {
  static PyMethodDef methods[] = {
      {"__format__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(scalar_format<T>)), METH_O,
       "format(float(x), spec)"},
      {nullptr, nullptr, 0, nullptr},
  };
  static PyType_Slot slots[] = {
      {Py_tp_new, reinterpret_cast<void *>(scalar_new<T>)},
      {Py_tp_repr, reinterpret_cast<void *>(scalar_repr<T>)},
      {Py_tp_str, reinterpret_cast<void *>(scalar_repr<T>)},
      {Py_tp_hash, reinterpret_cast<void *>(scalar_hash<T>)},
      {Py_tp_richcompare, reinterpret_cast<void *>(scalar_compare<T>)},
      {Py_tp_methods, reinterpret_cast<void *>(methods)},
      {Py_tp_doc, const_cast<char *>(T::kDoc)},
      {Py_nb_add, reinterpret_cast<void *>(scalar_binary<T, 0>)},
      {Py_nb_subtract, reinterpret_cast<void *>(scalar_binary<T, 1>)},
      {Py_nb_multiply, reinterpret_cast<void *>(scalar_binary<T, 2>)},
      {Py_nb_true_divide, reinterpret_cast<void *>(scalar_binary<T, 3>)},
      {Py_nb_negative, reinterpret_cast<void *>(scalar_negative<T>)},
      {Py_nb_positive, reinterpret_cast<void *>(scalar_positive<T>)},
      {Py_nb_absolute, reinterpret_cast<void *>(scalar_absolute<T>)},
      {Py_nb_float, reinterpret_cast<void *>(scalar_float<T>)},
      {Py_nb_int, reinterpret_cast<void *>(scalar_int<T>)},
      {Py_nb_bool, reinterpret_cast<void *>(scalar_bool<T>)},
      {0, nullptr},
  };
  static PyType_Spec spec = {T::kQualName, int(sizeof(Scalar<T>)), 0, Py_TPFLAGS_DEFAULT, slots};
  return &spec;
}

// ------------------------------------------------------------------------------------------------ array functions

template <class T> PyObject *item_get(void *data, void *) {
  return PyFloat_FromDouble(at<T>(static_cast<char *>(data)));
}

template <class T> int item_set(PyObject *item, void *data, void *) {
  typename T::Bits b;
  if (!to_bits<T>(item, &b))
    return -1;
  std::memcpy(data, &b, sizeof b);
  return 0;
}

template <class T> void swap_bytes(char *p) { std::reverse(p, p + kSize<T>); }

template <class T>
void copy_swap_n(void *dstv, npy_intp dstride, void *srcv, npy_intp sstride, npy_intp n, int swap, void *) {
  char *dst = static_cast<char *>(dstv), *src = static_cast<char *>(srcv);
  for (npy_intp i = 0; i < n; ++i) {
    if (src != nullptr)
      std::memcpy(dst + i * dstride, src + i * sstride, kSize<T>);
    if (swap)
      swap_bytes<T>(dst + i * dstride);
  }
}

template <class T> void copy_swap(void *dst, void *src, int swap, void *) {
  if (src != nullptr)
    std::memcpy(dst, src, kSize<T>);
  if (swap)
    swap_bytes<T>(static_cast<char *>(dst));
}

template <class T> npy_bool nonzero(void *data, void *) { return at<T>(static_cast<char *>(data)) != 0.0f; }

// np.arange's fill: buffer[0] and buffer[1] set, the rest continues the step.
template <class T> int fill(void *buffer, npy_intp n, void *) {
  char *b = static_cast<char *>(buffer);
  float start = at<T>(b), delta = at<T>(b + kSize<T>) - start;
  for (npy_intp i = 2; i < n; ++i)
    put<T>(b + kSize<T> * i, start + float(i) * delta);
  return 0;
}

// np.dot: float32 accumulation, rounded once.
template <class T> void dot(void *a, npy_intp as, void *b, npy_intp bs, void *out, npy_intp n, void *) {
  const char *x = static_cast<const char *>(a), *y = static_cast<const char *>(b);
  float acc = 0.0f;
  for (npy_intp i = 0; i < n; ++i)
    acc += at<T>(x + i * as) * at<T>(y + i * bs);
  put<T>(static_cast<char *>(out), acc);
}

// np.sort's order: NaNs last, as numpy sorts floats.
template <class T> int compare(const void *a, const void *b, void *) {
  float x = at<T>(static_cast<const char *>(a)), y = at<T>(static_cast<const char *>(b));
  if (x < y || (!std::isnan(x) && std::isnan(y)))
    return -1;
  if (y < x || (std::isnan(x) && !std::isnan(y)))
    return 1;
  return 0;
}

// np.argmax / np.argmin: the first NaN wins, as numpy's float loops.
template <class T, bool Max> int arg_extreme(void *data, npy_intp n, npy_intp *index, void *) {
  const char *d = static_cast<const char *>(data);
  *index = 0;
  float best = at<T>(d);
  for (npy_intp i = 1; i < n && !std::isnan(best); ++i) {
    float v = at<T>(d + kSize<T> * i);
    if ((Max ? v > best : v < best) || std::isnan(v)) {
      best = v;
      *index = i;
    }
  }
  return 0;
}

template <class T> void init_array_funcs(PyArray_ArrFuncs *f) {
  PyArray_InitArrFuncs(f);
  f->getitem = item_get<T>;
  f->setitem = item_set<T>;
  f->copyswapn = copy_swap_n<T>;
  f->copyswap = copy_swap<T>;
  f->nonzero = nonzero<T>;
  f->fill = fill<T>;
  f->dotfunc = dot<T>;
  f->compare = compare<T>;
  f->argmax = arg_extreme<T, true>;
  f->argmin = arg_extreme<T, false>;
}

} // namespace neuronsim::python::float_dtype
