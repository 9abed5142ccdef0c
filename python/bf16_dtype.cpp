// numpy's bfloat16 dtype for machines without ml_dtypes (Debian 12 has no package of it): public NKI kernels use
// nl.bfloat16 as a numpy dtype (np.dtype(nl.bfloat16).itemsize, x.astype(nl.bfloat16)), which real NKI serves with
// ml_dtypes. Registered through numpy's legacy user-dtype C API (numpy 1.x: PyArray_RegisterDataType,
// PyArray_RegisterCastFunc, PyUFunc_RegisterLoopForType), it follows ml_dtypes.bfloat16 where that API allows:
//   - kind 'V', type char 'E', itemsize 2, name 'bfloat16' (numpy names a user dtype after its scalar type), and
//     np.dtype("bfloat16") through numpy's sctypeDict. ml_dtypes chose 'V' because numpy takes two dtypes of one
//     kind and size as the same type, so kind 'f' would make bfloat16 equal float16;
//   - float32 -> bf16 is the simulator's own rounding (engines::f32_to_bf16: round to nearest even, any NaN -> the
//     quiet 0x7fc0, Inf kept); every other type goes through float32 with numpy's own cast to or from float32, so
//     float64 and integers above 2^24 are rounded twice, as ml_dtypes' conversion through float does;
//   - arithmetic: each ufunc loop computes in float32 and rounds the result once (ml_dtypes' rule);
//   - array elements read out (tolist, item) are Python floats, as ml_dtypes'; a[i] is a bfloat16 scalar.
// The scalar type neuronsim.bfloat16 is created on the first bfloat16_type() call, which the NKI front end makes only
// when ml_dtypes is missing (python/neuronsim/nki/dtypes.py).
#include "bf16_dtype.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>

#include "neuronsim/engines/dtype.hpp"

namespace py = pybind11;

namespace {

using neuronsim::engines::bf16_to_f32;
using neuronsim::engines::f32_to_bf16;

struct Bf16Scalar {
  PyObject_HEAD uint16_t bits; // numpy finds an element's value right after the header (scalar_value)
};

PyTypeObject *g_type = nullptr;  // neuronsim.bfloat16
PyArray_Descr g_proto;           // what numpy registered (numpy 1.x keeps the pointer)
PyArray_ArrFuncs g_funcs;
PyArray_Descr *g_descr = nullptr; // np.dtype(bfloat16)
int g_num = NPY_NOTYPE;
std::string g_failure;           // why registration failed, raised again on later calls

inline float bf16_at(const char *p) {
  uint16_t b;
  std::memcpy(&b, p, 2);
  return bf16_to_f32(b);
}
inline void bf16_put(char *p, float v) {
  uint16_t b = f32_to_bf16(v);
  std::memcpy(p, &b, 2);
}
bool is_bf16(PyObject *o) { return g_type != nullptr && PyObject_TypeCheck(o, g_type); }
uint16_t bits_of(PyObject *o) { return reinterpret_cast<Bf16Scalar *>(o)->bits; }
float value_of(PyObject *o) { return bf16_to_f32(bits_of(o)); }

PyObject *new_scalar(float v) {
  PyObject *o = g_type->tp_alloc(g_type, 0);
  if (o)
    reinterpret_cast<Bf16Scalar *>(o)->bits = f32_to_bf16(v);
  return o;
}

// A float64 as float32 with IEEE overflow (to +-Inf; a value past FLT_MAX is Inf in bf16 as well).
float narrow(double d) {
  if (std::isfinite(d) && std::fabs(d) > double(FLT_MAX))
    return std::copysign(std::numeric_limits<float>::infinity(), float(d));
  return float(d);
}

// A Python number, numpy scalar, size-1 array or numeric string as bf16 bits; false with a Python error set.
bool to_bits(PyObject *o, uint16_t *out) {
  if (is_bf16(o)) {
    *out = bits_of(o);
    return true;
  }
  PyObject *f = nullptr;
  if (PyUnicode_Check(o) || PyBytes_Check(o))
    f = PyFloat_FromString(o);
  else if (PyNumber_Check(o))
    f = PyNumber_Float(o);
  else
    PyErr_Format(PyExc_TypeError, "bfloat16: expected a number, got %s", Py_TYPE(o)->tp_name);
  if (f == nullptr)
    return false;
  double d = PyFloat_AsDouble(f);
  Py_DECREF(f);
  if (d == -1.0 && PyErr_Occurred())
    return false;
  *out = f32_to_bf16(narrow(d));
  return true;
}

// ------------------------------------------------------------------------------------------------ the scalar type

PyObject *scalar_new(PyTypeObject *, PyObject *args, PyObject *kwds) {
  if ((kwds != nullptr && PyDict_Size(kwds) != 0) || PyTuple_Size(args) != 1) {
    PyErr_SetString(PyExc_TypeError, "bfloat16() takes one positional argument, a number or an array");
    return nullptr;
  }
  PyObject *a = PyTuple_GET_ITEM(args, 0);
  if (is_bf16(a)) {
    Py_INCREF(a);
    return a;
  }
  if (PyArray_Check(a) && PyArray_NDIM(reinterpret_cast<PyArrayObject *>(a)) > 0) {
    Py_INCREF(g_descr); // stolen
    return PyArray_CastToType(reinterpret_cast<PyArrayObject *>(a), g_descr, 0);
  }
  uint16_t b;
  if (!to_bits(a, &b))
    return nullptr;
  PyObject *o = g_type->tp_alloc(g_type, 0);
  if (o)
    reinterpret_cast<Bf16Scalar *>(o)->bits = b;
  return o;
}

// ml_dtypes' text: the float32 value with 6 significant digits (every bf16 value reads back as itself).
PyObject *scalar_repr(PyObject *self) {
  float v = value_of(self);
  std::ostringstream s;
  s << (std::isnan(v) ? std::fabs(v) : v);
  return PyUnicode_FromString(s.str().c_str());
}

PyObject *scalar_float(PyObject *self) { return PyFloat_FromDouble(value_of(self)); }

PyObject *scalar_int(PyObject *self) { // Python's float -> int rules (NaN and Inf raise)
  PyObject *f = scalar_float(self);
  if (f == nullptr)
    return nullptr;
  PyObject *i = PyNumber_Long(f);
  Py_DECREF(f);
  return i;
}

int scalar_bool(PyObject *self) { return value_of(self) != 0.0f; }

Py_hash_t scalar_hash(PyObject *self) { // equal to hash(float(x)), as equal values must hash alike
  PyObject *f = scalar_float(self);
  if (f == nullptr)
    return -1;
  Py_hash_t h = PyObject_Hash(f);
  Py_DECREF(f);
  return h;
}

PyObject *scalar_format(PyObject *self, PyObject *spec) {
  PyObject *f = scalar_float(self);
  if (f == nullptr)
    return nullptr;
  PyObject *r = PyObject_Format(f, spec);
  Py_DECREF(f);
  return r;
}

PyObject *scalar_compare(PyObject *a, PyObject *b, int op) {
  if (!is_bf16(a) || !is_bf16(b))
    return PyGenericArrType_Type.tp_richcompare(a, b, op); // numpy's: through arrays and the ufunc loops below
  float x = value_of(a), y = value_of(b);
  bool r = op == Py_LT ? x < y : op == Py_LE ? x <= y : op == Py_EQ ? x == y : op == Py_NE ? x != y
         : op == Py_GT ? x > y : x >= y;
  return PyBool_FromLong(r);
}

// Two bfloat16 scalars: the float32 result rounded; anything else goes to numpy (arrays, other scalars).
template <int Op> PyObject *scalar_binary(PyObject *a, PyObject *b) {
  if (is_bf16(a) && is_bf16(b)) {
    float x = value_of(a), y = value_of(b);
    return new_scalar(Op == 0 ? x + y : Op == 1 ? x - y : Op == 2 ? x * y : x / y);
  }
  PyNumberMethods *n = PyArray_Type.tp_as_number;
  return Op == 0 ? n->nb_add(a, b) : Op == 1 ? n->nb_subtract(a, b) : Op == 2 ? n->nb_multiply(a, b)
                                                                              : n->nb_true_divide(a, b);
}
PyObject *scalar_negative(PyObject *self) { return new_scalar(-value_of(self)); }
PyObject *scalar_positive(PyObject *self) { return new_scalar(value_of(self)); }
PyObject *scalar_absolute(PyObject *self) { return new_scalar(std::fabs(value_of(self))); }

PyMethodDef g_methods[] = {
    {"__format__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(scalar_format)), METH_O,
     "format(float(x), spec)"},
    {nullptr, nullptr, 0, nullptr},
};

const char kTypeDoc[] = "bfloat16: 1 sign, 8 exponent and 7 mantissa bits (numpy dtype kind 'V', as ml_dtypes')";

PyType_Slot g_slots[] = {
    {Py_tp_new, reinterpret_cast<void *>(scalar_new)},
    {Py_tp_repr, reinterpret_cast<void *>(scalar_repr)},
    {Py_tp_str, reinterpret_cast<void *>(scalar_repr)},
    {Py_tp_hash, reinterpret_cast<void *>(scalar_hash)},
    {Py_tp_richcompare, reinterpret_cast<void *>(scalar_compare)},
    {Py_tp_methods, reinterpret_cast<void *>(g_methods)},
    {Py_tp_doc, const_cast<char *>(kTypeDoc)},
    {Py_nb_add, reinterpret_cast<void *>(scalar_binary<0>)},
    {Py_nb_subtract, reinterpret_cast<void *>(scalar_binary<1>)},
    {Py_nb_multiply, reinterpret_cast<void *>(scalar_binary<2>)},
    {Py_nb_true_divide, reinterpret_cast<void *>(scalar_binary<3>)},
    {Py_nb_negative, reinterpret_cast<void *>(scalar_negative)},
    {Py_nb_positive, reinterpret_cast<void *>(scalar_positive)},
    {Py_nb_absolute, reinterpret_cast<void *>(scalar_absolute)},
    {Py_nb_float, reinterpret_cast<void *>(scalar_float)},
    {Py_nb_int, reinterpret_cast<void *>(scalar_int)},
    {Py_nb_bool, reinterpret_cast<void *>(scalar_bool)},
    {0, nullptr},
};

PyType_Spec g_spec = {"neuronsim.bfloat16", int(sizeof(Bf16Scalar)), 0, Py_TPFLAGS_DEFAULT, g_slots};

// ------------------------------------------------------------------------------------------------ array functions

PyObject *item_get(void *data, void *) { return PyFloat_FromDouble(bf16_at(static_cast<char *>(data))); }

int item_set(PyObject *item, void *data, void *) {
  uint16_t b;
  if (!to_bits(item, &b))
    return -1;
  std::memcpy(data, &b, 2);
  return 0;
}

void swap2(char *p) { std::swap(p[0], p[1]); }

void copy_swap_n(void *dstv, npy_intp dstride, void *srcv, npy_intp sstride, npy_intp n, int swap, void *) {
  char *dst = static_cast<char *>(dstv), *src = static_cast<char *>(srcv);
  for (npy_intp i = 0; i < n; ++i) {
    if (src != nullptr)
      std::memcpy(dst + i * dstride, src + i * sstride, 2);
    if (swap)
      swap2(dst + i * dstride);
  }
}

void copy_swap(void *dst, void *src, int swap, void *) {
  if (src != nullptr)
    std::memcpy(dst, src, 2);
  if (swap)
    swap2(static_cast<char *>(dst));
}

npy_bool nonzero(void *data, void *) { return bf16_at(static_cast<char *>(data)) != 0.0f; }

// np.arange's fill: buffer[0] and buffer[1] set, the rest continues the step.
int fill(void *buffer, npy_intp n, void *) {
  char *b = static_cast<char *>(buffer);
  float start = bf16_at(b), delta = bf16_at(b + 2) - start;
  for (npy_intp i = 2; i < n; ++i)
    bf16_put(b + 2 * i, start + float(i) * delta);
  return 0;
}

// np.dot: float32 accumulation, rounded once.
void dot(void *a, npy_intp as, void *b, npy_intp bs, void *out, npy_intp n, void *) {
  const char *x = static_cast<const char *>(a), *y = static_cast<const char *>(b);
  float acc = 0.0f;
  for (npy_intp i = 0; i < n; ++i)
    acc += bf16_at(x + i * as) * bf16_at(y + i * bs);
  bf16_put(static_cast<char *>(out), acc);
}

// np.sort's order: NaNs last, as numpy sorts floats.
int compare(const void *a, const void *b, void *) {
  float x = bf16_at(static_cast<const char *>(a)), y = bf16_at(static_cast<const char *>(b));
  if (x < y || (!std::isnan(x) && std::isnan(y)))
    return -1;
  if (y < x || (std::isnan(x) && !std::isnan(y)))
    return 1;
  return 0;
}

// np.argmax / np.argmin: the first NaN wins, as numpy's float loops.
template <bool Max> int arg_extreme(void *data, npy_intp n, npy_intp *index, void *) {
  const char *d = static_cast<const char *>(data);
  *index = 0;
  float best = bf16_at(d);
  for (npy_intp i = 1; i < n && !std::isnan(best); ++i) {
    float v = bf16_at(d + 2 * i);
    if ((Max ? v > best : v < best) || std::isnan(v)) {
      best = v;
      *index = i;
    }
  }
  return 0;
}

// ------------------------------------------------------------------------------------------------ casts
// Between bf16 and float32: the simulator's conversions. Between bf16 and another numeric type T: numpy's own cast
// between T and float32 over a chunk, then the bf16 step.

constexpr npy_intp kChunk = 256;
PyArray_VectorUnaryFunc *g_to_f32[NPY_NTYPES] = {};   // numpy's cast of builtin type T to float32
PyArray_VectorUnaryFunc *g_from_f32[NPY_NTYPES] = {}; // ... and from float32 to T
int g_size[NPY_NTYPES] = {};

template <int T> void cast_to_bf16(void *from, void *to, npy_intp n, void *, void *) {
  char *src = static_cast<char *>(from), *dst = static_cast<char *>(to);
  float buf[kChunk];
  for (npy_intp i = 0; i < n; i += kChunk) {
    npy_intp m = std::min(kChunk, n - i);
    const float *f = buf;
    if (T == NPY_FLOAT)
      f = reinterpret_cast<const float *>(src + 4 * i);
    else
      g_to_f32[T](src + g_size[T] * i, buf, m, nullptr, nullptr);
    for (npy_intp j = 0; j < m; ++j)
      bf16_put(dst + 2 * (i + j), f[j]);
  }
}

template <int T> void cast_from_bf16(void *from, void *to, npy_intp n, void *, void *) {
  char *src = static_cast<char *>(from), *dst = static_cast<char *>(to);
  float buf[kChunk];
  for (npy_intp i = 0; i < n; i += kChunk) {
    npy_intp m = std::min(kChunk, n - i);
    float *f = T == NPY_FLOAT ? reinterpret_cast<float *>(dst + 4 * i) : buf;
    for (npy_intp j = 0; j < m; ++j)
      f[j] = bf16_at(src + 2 * (i + j));
    if (T != NPY_FLOAT)
      g_from_f32[T](buf, dst + g_size[T] * i, m, nullptr, nullptr);
  }
}

template <int T> bool register_cast() {
  PyArray_Descr *other = PyArray_DescrFromType(T);
  if (other == nullptr)
    return false;
  g_size[T] = other->elsize;
  bool ok = true;
  if (T != NPY_FLOAT) {
    PyArray_Descr *f32 = PyArray_DescrFromType(NPY_FLOAT);
    g_to_f32[T] = PyArray_GetCastFunc(other, NPY_FLOAT);
    g_from_f32[T] = PyArray_GetCastFunc(f32, T);
    Py_DECREF(f32);
    ok = g_to_f32[T] != nullptr && g_from_f32[T] != nullptr;
  }
  ok = ok && PyArray_RegisterCastFunc(other, g_num, cast_to_bf16<T>) == 0 &&
       PyArray_RegisterCastFunc(g_descr, T, cast_from_bf16<T>) == 0;
  Py_DECREF(other);
  return ok;
}

bool register_casts() {
  bool ok = register_cast<NPY_BOOL>() && register_cast<NPY_BYTE>() && register_cast<NPY_UBYTE>() &&
            register_cast<NPY_SHORT>() && register_cast<NPY_USHORT>() && register_cast<NPY_INT>() &&
            register_cast<NPY_UINT>() && register_cast<NPY_LONG>() && register_cast<NPY_ULONG>() &&
            register_cast<NPY_LONGLONG>() && register_cast<NPY_ULONGLONG>() && register_cast<NPY_HALF>() &&
            register_cast<NPY_FLOAT>() && register_cast<NPY_DOUBLE>() && register_cast<NPY_LONGDOUBLE>();
  // Safe casts, as ml_dtypes registers them: bf16 into the wider floats, and bool / 8-bit integers into bf16. And
  // float16 into bf16, which ml_dtypes does not declare: numpy 1.x takes a Python float operand by its value, as
  // float16 when it lies in float16's range (value-based casting), so without it `x - 0.5` would leave bfloat16
  // for numpy's float32 loop. With it, `(x - 0.5) * 2` stays bfloat16, as ml_dtypes' does under numpy 2's rule
  // for Python scalars, and the number is cast to bf16 from its float64 value (x * 1e-8 is not flushed as a
  // float16 would be). The price: float16 arrays mix with bf16 ones as bf16 (ml_dtypes: float32).
  for (int to : {NPY_FLOAT, NPY_DOUBLE, NPY_LONGDOUBLE})
    ok = ok && PyArray_RegisterCanCast(g_descr, to, NPY_NOSCALAR) == 0;
  for (int from : {NPY_BOOL, NPY_BYTE, NPY_UBYTE, NPY_HALF}) {
    PyArray_Descr *d = PyArray_DescrFromType(from);
    ok = ok && d != nullptr && PyArray_RegisterCanCast(d, g_num, NPY_NOSCALAR) == 0;
    Py_XDECREF(d);
  }
  return ok;
}

// ------------------------------------------------------------------------------------------------ ufunc loops
// Each loop reads its operands as float32, computes in float32 and rounds a bf16 result once.

using Binary = float (*)(float, float);
using Unary = float (*)(float);
using Test2 = bool (*)(float, float);
using Test1 = bool (*)(float);

template <Binary F> void loop2(char **args, npy_intp const *dims, npy_intp const *steps, void *) {
  for (npy_intp i = 0; i < dims[0]; ++i)
    bf16_put(args[2] + i * steps[2], F(bf16_at(args[0] + i * steps[0]), bf16_at(args[1] + i * steps[1])));
}
template <Unary F> void loop1(char **args, npy_intp const *dims, npy_intp const *steps, void *) {
  for (npy_intp i = 0; i < dims[0]; ++i)
    bf16_put(args[1] + i * steps[1], F(bf16_at(args[0] + i * steps[0])));
}
template <Test2 F> void test2(char **args, npy_intp const *dims, npy_intp const *steps, void *) {
  for (npy_intp i = 0; i < dims[0]; ++i)
    *reinterpret_cast<npy_bool *>(args[2] + i * steps[2]) =
        F(bf16_at(args[0] + i * steps[0]), bf16_at(args[1] + i * steps[1]));
}
template <Test1 F> void test1(char **args, npy_intp const *dims, npy_intp const *steps, void *) {
  for (npy_intp i = 0; i < dims[0]; ++i)
    *reinterpret_cast<npy_bool *>(args[1] + i * steps[1]) = F(bf16_at(args[0] + i * steps[0]));
}

float add_(float a, float b) { return a + b; }
float sub_(float a, float b) { return a - b; }
float mul_(float a, float b) { return a * b; }
float div_(float a, float b) { return a / b; }
float power_(float a, float b) { return std::pow(a, b); }
float maximum_(float a, float b) { return (a >= b || std::isnan(a)) ? a : b; } // NaN propagates, as numpy
float minimum_(float a, float b) { return (a <= b || std::isnan(a)) ? a : b; }
float fmax_(float a, float b) { return std::fmax(a, b); } // NaN ignored
float fmin_(float a, float b) { return std::fmin(a, b); }
float negative_(float a) { return -a; }
float positive_(float a) { return a; }
float absolute_(float a) { return std::fabs(a); }
float sign_(float a) { return std::isnan(a) ? a : a > 0 ? 1.0f : a < 0 ? -1.0f : 0.0f; }
float square_(float a) { return a * a; }
float reciprocal_(float a) { return 1.0f / a; }
float sqrt_(float a) { return std::sqrt(a); }
float exp_(float a) { return std::exp(a); }
float log_(float a) { return std::log(a); }
float tanh_(float a) { return std::tanh(a); }
float floor_(float a) { return std::floor(a); }
float ceil_(float a) { return std::ceil(a); }
float rint_(float a) { return std::nearbyint(a); }
bool eq_(float a, float b) { return a == b; }
bool ne_(float a, float b) { return a != b; }
bool lt_(float a, float b) { return a < b; }
bool le_(float a, float b) { return a <= b; }
bool gt_(float a, float b) { return a > b; }
bool ge_(float a, float b) { return a >= b; }
bool isnan_(float a) { return std::isnan(a); }
bool isinf_(float a) { return std::isinf(a); }
bool isfinite_(float a) { return std::isfinite(a); }
bool signbit_(float a) { return std::signbit(a); }

struct Loop {
  const char *ufunc;
  PyUFuncGenericFunction fn;
  int shape; // 2: (bf16, bf16) -> bf16; 1: bf16 -> bf16; -2: (bf16, bf16) -> bool; -1: bf16 -> bool
};

const Loop kLoops[] = {
    {"add", loop2<add_>, 2}, {"subtract", loop2<sub_>, 2}, {"multiply", loop2<mul_>, 2},
    {"true_divide", loop2<div_>, 2}, {"power", loop2<power_>, 2}, {"maximum", loop2<maximum_>, 2},
    {"minimum", loop2<minimum_>, 2}, {"fmax", loop2<fmax_>, 2}, {"fmin", loop2<fmin_>, 2},
    {"negative", loop1<negative_>, 1}, {"positive", loop1<positive_>, 1}, {"absolute", loop1<absolute_>, 1},
    {"sign", loop1<sign_>, 1}, {"square", loop1<square_>, 1}, {"reciprocal", loop1<reciprocal_>, 1},
    {"sqrt", loop1<sqrt_>, 1}, {"exp", loop1<exp_>, 1}, {"log", loop1<log_>, 1}, {"tanh", loop1<tanh_>, 1},
    {"floor", loop1<floor_>, 1}, {"ceil", loop1<ceil_>, 1}, {"rint", loop1<rint_>, 1},
    {"equal", test2<eq_>, -2}, {"not_equal", test2<ne_>, -2}, {"less", test2<lt_>, -2},
    {"less_equal", test2<le_>, -2}, {"greater", test2<gt_>, -2}, {"greater_equal", test2<ge_>, -2},
    {"isnan", test1<isnan_>, -1}, {"isinf", test1<isinf_>, -1}, {"isfinite", test1<isfinite_>, -1},
    {"signbit", test1<signbit_>, -1},
};

bool register_loops(PyObject *numpy) {
  for (const Loop &l : kLoops) {
    int nin = l.shape < 0 ? -l.shape : l.shape;
    std::vector<int> types(size_t(nin), g_num);
    types.push_back(l.shape < 0 ? NPY_BOOL : g_num);
    PyObject *u = PyObject_GetAttrString(numpy, l.ufunc);
    if (u == nullptr)
      return false;
    bool ok = PyObject_TypeCheck(u, &PyUFunc_Type) && reinterpret_cast<PyUFuncObject *>(u)->nargs == nin + 1;
    if (!ok)
      PyErr_Format(PyExc_RuntimeError, "bfloat16: numpy.%s is not a ufunc of %d inputs", l.ufunc, nin);
    ok = ok && PyUFunc_RegisterLoopForType(reinterpret_cast<PyUFuncObject *>(u), g_num, l.fn, types.data(),
                                           nullptr) == 0;
    Py_DECREF(u);
    if (!ok)
      return false;
  }
  return true;
}

// ------------------------------------------------------------------------------------------------ registration

bool register_dtype() {
  if (_import_array() < 0 || _import_umath() < 0)
    return false;
  PyObject *bases = PyTuple_Pack(1, reinterpret_cast<PyObject *>(&PyGenericArrType_Type));
  if (bases == nullptr)
    return false;
  PyObject *type = PyType_FromSpecWithBases(&g_spec, bases);
  Py_DECREF(bases);
  if (type == nullptr)
    return false;
  g_type = reinterpret_cast<PyTypeObject *>(type); // kept for the process's life, as numpy keeps the dtype

  PyArray_InitArrFuncs(&g_funcs);
  g_funcs.getitem = item_get;
  g_funcs.setitem = item_set;
  g_funcs.copyswapn = copy_swap_n;
  g_funcs.copyswap = copy_swap;
  g_funcs.nonzero = nonzero;
  g_funcs.fill = fill;
  g_funcs.dotfunc = dot;
  g_funcs.compare = compare;
  g_funcs.argmax = arg_extreme<true>;
  g_funcs.argmin = arg_extreme<false>;

  std::memset(static_cast<void *>(&g_proto), 0, sizeof g_proto);
  Py_SET_REFCNT(&g_proto, 1);
  Py_SET_TYPE(&g_proto, &PyArrayDescr_Type);
  Py_INCREF(type);
  g_proto.typeobj = g_type;
  g_proto.kind = 'V';
  g_proto.type = 'E';
  g_proto.byteorder = '=';
  g_proto.flags = NPY_USE_SETITEM;
  g_proto.elsize = 2;
  g_proto.alignment = 2;
  g_proto.f = &g_funcs;
  g_proto.hash = -1;
  g_num = PyArray_RegisterDataType(&g_proto);
  if (g_num < 0)
    return false;
  g_descr = PyArray_DescrFromType(g_num);
  if (g_descr == nullptr || PyObject_SetAttrString(type, "dtype", reinterpret_cast<PyObject *>(g_descr)) < 0)
    return false;

  PyObject *numpy = PyImport_ImportModule("numpy");
  if (numpy == nullptr)
    return false;
  bool ok = register_casts() && register_loops(numpy);
  // np.dtype("bfloat16") (and so np.dtype(nl.bfloat16), a str): numpy looks names up in sctypeDict. A bfloat16
  // already there (ml_dtypes imported first) is left alone.
  PyObject *names = ok ? PyObject_GetAttrString(numpy, "sctypeDict") : nullptr;
  ok = names != nullptr && PyDict_Check(names) &&
       (PyDict_GetItemString(names, "bfloat16") != nullptr ||
        PyDict_SetItemString(names, "bfloat16", type) == 0);
  Py_XDECREF(names);
  Py_DECREF(numpy);
  return ok;
}

} // namespace

namespace neuronsim::python {

py::object bfloat16_type() {
  if (g_failure.empty() && g_descr == nullptr && !register_dtype()) {
    g_failure = "neuronsim could not register its bfloat16 numpy dtype";
    if (PyErr_Occurred()) {
      py::error_already_set e;
      g_failure += std::string(": ") + e.what();
    }
  }
  if (!g_failure.empty())
    throw py::import_error(g_failure);
  return py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject *>(g_type));
}

} // namespace neuronsim::python
