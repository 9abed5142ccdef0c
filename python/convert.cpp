#include "convert.hpp"

#include <algorithm>
#include <cstring>

#include "neuronsim/error.hpp"
#include "neuronsim/sim/io.hpp"

namespace py = pybind11;

namespace neuronsim::python {

std::string text_of(py::handle obj) {
  return py::str(obj).cast<std::string>();
}

bool is_path(py::handle obj) {
  return py::isinstance<py::str>(obj) || py::hasattr(obj, "__fspath__");
}

std::string arch_arg(py::handle obj) {
  if (!is_path(obj))
    throw py::type_error("arch must be a name (\"trn2\") or an architecture file (str or os.PathLike), got " +
                         text_of(py::type::handle_of(obj).attr("__name__")));
  return py::module_::import("os").attr("fspath")(obj).cast<std::string>();
}

std::string path_arg(py::handle obj, const std::string &what) {
  if (!is_path(obj))
    throw py::type_error(what + " must be a path (str or os.PathLike), got " +
                         text_of(py::type::handle_of(obj).attr("__name__")));
  std::string path = py::module_::import("os").attr("fspath")(obj).cast<std::string>();
  if (path.empty())
    throw UsageError(what + " needs a path, got an empty one");
  return path;
}

py::dtype numpy_dtype(isa::Dtype d) {
  return py::dtype::from_args(py::str(io::npy_descr(d)));
}

std::string type_name(py::handle v) {
  return text_of(py::type::handle_of(v).attr("__name__"));
}

bool bool_arg(py::handle v, const char *name) {
  // numpy's bool_ too (a comparison's result), never an int or a str ("no" would be true).
  if (py::isinstance<py::bool_>(v) || type_name(v) == "bool_")
    return py::bool_(py::reinterpret_borrow<py::object>(v));
  throw py::type_error(std::string(name) + " must be True or False, got " + type_name(v) + " " +
                       text_of(py::repr(v)));
}

std::optional<double> number_arg(py::handle v, const char *name, bool optional) {
  if (optional && v.is_none())
    return std::nullopt;
  if (!py::isinstance<py::bool_>(v) &&
      (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v) || py::hasattr(v, "__float__")) &&
      !py::isinstance<py::str>(v))
    return py::float_(py::reinterpret_borrow<py::object>(v)).cast<double>();
  throw py::type_error(std::string(name) + " must be a number" + (optional ? " or None" : "") + ", got " +
                       type_name(v) + " " + text_of(py::repr(v)));
}

int64_t int_arg(py::handle v, const char *name) {
  if (py::isinstance<py::int_>(v) && !py::isinstance<py::bool_>(v)) {
    try {
      return v.cast<int64_t>();
    } catch (const py::cast_error &) {
      throw UsageError(std::string(name) + " is too large: " + text_of(v));
    }
  }
  throw py::type_error(std::string(name) + " must be an int, got " + type_name(v) + " " +
                       text_of(py::repr(v)));
}

std::string str_arg(py::handle v, const char *name) {
  if (py::isinstance<py::str>(v))
    return v.cast<std::string>();
  throw py::type_error(std::string(name) + " must be a str, got " + type_name(v) + " " +
                       text_of(py::repr(v)));
}

io::NpyArray array_arg(py::handle obj, const std::string &source, const isa::Tensor *check,
                       const std::string &role) {
  py::module_ np = py::module_::import("numpy");
  // An array (or any object with numpy's array interface, a view included): its header's shape and dtype
  // decide, before np.asarray would make a C-ordered copy of a view (3 GB for a broadcast one) and the copy
  // below another.
  const bool header = py::hasattr(obj, "shape") && py::hasattr(obj, "dtype");
  if (check && (header || py::hasattr(obj, "__array_interface__"))) {
    const py::object shape_obj =
        header ? py::object(obj.attr("shape")) : py::object(obj.attr("__array_interface__")["shape"]);
    const py::object dtype_obj =
        header ? py::object(obj.attr("dtype")) : py::object(obj.attr("__array_interface__")["typestr"]);
    std::vector<int64_t> shape;
    std::string descr;
    try {
      for (const auto &d : py::tuple(shape_obj))
        shape.push_back(d.cast<int64_t>());
      descr = np.attr("dtype")(dtype_obj).attr("str").cast<std::string>();
    } catch (const py::error_already_set &) {
      throw py::type_error(source + " must be a numpy array: its shape or dtype is not numpy's (got " +
                           type_name(obj) + ")");
    } catch (const py::cast_error &) {
      throw py::type_error(source + " must be a numpy array: its shape is not a tuple of ints (got " +
                           type_name(obj) + ")");
    }
    sim::check_array(*check, shape, io::npy_descr_dtype(descr, source), source, role);
  }
  // C order, as a .npy file holds it (fortran_order True files are refused; an array is only a view).
  py::array a = np.attr("asarray")(obj, py::arg("order") = "C");
  io::NpyArray out;
  out.dtype = io::npy_descr_dtype(a.dtype().attr("str").cast<std::string>(), source);
  for (py::ssize_t k = 0; k < a.ndim(); ++k)
    out.shape.push_back(static_cast<int64_t>(a.shape(k)));
  if (check)
    sim::check_array(*check, out.shape, out.dtype, source, role); // a list, or an object without a header
  const auto *p = static_cast<const uint8_t *>(a.data());
  out.data.assign(p, p + a.nbytes());
  return out;
}

std::map<std::string, io::NpyArray> arrays_arg(py::handle obj, const std::string &what,
                                               const isa::Program *program, const std::string &role) {
  if (!py::isinstance<py::dict>(obj))
    throw py::type_error(what +
                         " must be a dict of tensor name -> numpy array, or a folder of <name>.npy; got " +
                         type_name(obj));
  std::map<std::string, io::NpyArray> out;
  for (const auto &[key, value] : py::reinterpret_borrow<py::dict>(obj)) {
    if (!py::isinstance<py::str>(key))
      throw py::type_error(what + " keys must be tensor names (str), got " + type_name(key) + " " +
                           text_of(py::repr(key)));
    const std::string name = key.cast<std::string>();
    const std::string source = sim::array_source(what, name);
    const isa::Tensor *t = nullptr;
    if (program) {
      const int i = role == "expected" ? sim::output_tensor(*program, name, source)
                                       : sim::input_tensor(*program, name, source);
      t = &program->tensors[static_cast<size_t>(i)];
    }
    out.emplace(name, array_arg(value, source, t, role));
  }
  return out;
}

py::array tensor_array(const isa::Tensor &t, const std::vector<uint8_t> &bytes) {
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  py::array a(numpy_dtype(t.dtype), shape);
  const size_t n = static_cast<size_t>(a.nbytes());
  auto *dst = static_cast<uint8_t *>(a.mutable_data());
  std::memcpy(dst, bytes.data(), std::min(n, bytes.size()));
  if (bytes.size() < n)
    std::memset(dst + bytes.size(), 0, n - bytes.size());
  return a;
}

py::object to_python(const nlohmann::json &j) {
  using V = nlohmann::json::value_t;
  switch (j.type()) {
  case V::null:
    return py::none();
  case V::boolean:
    return py::bool_(j.get<bool>());
  case V::number_integer:
    return py::int_(j.get<int64_t>());
  case V::number_unsigned:
    return py::int_(j.get<uint64_t>());
  case V::number_float:
    return py::float_(j.get<double>());
  case V::string:
    return py::str(j.get_ref<const std::string &>());
  case V::array: {
    py::list l;
    for (const auto &e : j)
      l.append(to_python(e));
    return std::move(l);
  }
  case V::object: {
    py::dict d;
    for (const auto &[k, v] : j.items())
      d[py::str(k)] = to_python(v);
    return std::move(d);
  }
  default:
    return py::none(); // binary / discarded: not in the documents converted here
  }
}

} // namespace neuronsim::python
