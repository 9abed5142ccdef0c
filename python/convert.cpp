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

io::NpyArray array_arg(py::handle obj, const std::string &source) {
  py::module_ np = py::module_::import("numpy");
  // C order, as a .npy file holds it (fortran_order True files are refused; an array is only a view).
  py::array a = np.attr("asarray")(obj, py::arg("order") = "C");
  io::NpyArray out;
  out.dtype = io::npy_descr_dtype(a.dtype().attr("str").cast<std::string>(), source);
  for (py::ssize_t k = 0; k < a.ndim(); ++k)
    out.shape.push_back(static_cast<int64_t>(a.shape(k)));
  const auto *p = static_cast<const uint8_t *>(a.data());
  out.data.assign(p, p + a.nbytes());
  return out;
}

std::map<std::string, io::NpyArray> arrays_arg(py::handle obj, const std::string &what) {
  if (!py::isinstance<py::dict>(obj))
    throw py::type_error(what + " must be a dict of tensor name -> numpy array, or a folder of <name>.npy");
  std::map<std::string, io::NpyArray> out;
  for (const auto &[key, value] : py::reinterpret_borrow<py::dict>(obj)) {
    if (!py::isinstance<py::str>(key))
      throw py::type_error(what + " keys must be tensor names (str)");
    const std::string name = key.cast<std::string>();
    out.emplace(name, array_arg(value, sim::array_source(what, name)));
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
