// Values between Python and the library: paths, numpy arrays <-> io::NpyArray, JSON documents -> Python
// objects.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "neuronsim/isa/program.hpp"
#include "neuronsim/io/npy.hpp"

namespace neuronsim::python {

// A str or os.PathLike argument as a path; TypeError naming `what` otherwise, UsageError for an empty one (as
// the CLI refuses an empty path: it is not "the current directory").
std::string path_arg(pybind11::handle obj, const std::string &what);
bool is_path(pybind11::handle obj);
// An `arch=` argument: a built-in name or an architecture file, as a str or os.PathLike (TypeError otherwise).
std::string arch_arg(pybind11::handle obj);

// Typed keyword arguments, each TypeError naming the argument (pybind11's own conversion error lists the
// whole signature instead): a bool (True/False), a number (int or float, not bool; None -> nullopt when
// `optional`), a whole number (int, not bool), a str.
bool bool_arg(pybind11::handle v, const char *name);
std::optional<double> number_arg(pybind11::handle v, const char *name, bool optional);
int64_t int_arg(pybind11::handle v, const char *name);
std::string str_arg(pybind11::handle v, const char *name);
// "a str" -> "str": the type name of a Python object, for messages.
std::string type_name(pybind11::handle v);

// The numpy dtype a tensor of dtype `d` is held in: its .npy descr (io/npy.hpp; bf16 as uint16, fp8 as
// uint8).
pybind11::dtype numpy_dtype(isa::Dtype d);

// An array argument as a .npy file holding it would read: np.asarray(obj) in C order, its dtype by numpy's
// descr string (dtype.str) under the .npy rules -- InvalidInput naming `source` for one that the .npy reader
// refuses (float64, big-endian, objects, ...). Given the tensor it is for (`check`, role "input" or
// "expected"), the shape and dtype are checked against it (sim::check_array) from the object's own shape and
// dtype before anything is copied: a broadcast view of the wrong shape is refused without materialising it.
io::NpyArray array_arg(pybind11::handle obj, const std::string &source, const isa::Tensor *check = nullptr,
                       const std::string &role = "input");
// A dict of name -> array; `what` names it in messages ("expect" -> "expect['a']"). With a program, each name
// must be one of its input (role "input") or output (role "expected") tensors and each array suit it, checked
// before the array is copied.
std::map<std::string, io::NpyArray> arrays_arg(pybind11::handle obj, const std::string &what,
                                               const isa::Program *program = nullptr,
                                               const std::string &role = "input");

// A tensor's bytes as a numpy array of its shape and container dtype (one copy).
pybind11::array tensor_array(const isa::Tensor &t, const std::vector<uint8_t> &bytes);

// str(obj).
std::string text_of(pybind11::handle obj);

// A JSON document as dicts, lists, str, int, float, bool and None.
pybind11::object to_python(const nlohmann::json &j);

} // namespace neuronsim::python
