#include "errors.hpp"

#include "neuronsim/sim/session.hpp"

namespace py = pybind11;

namespace neuronsim::python {

namespace {

// The classes live as long as the module (it holds a reference to each).
PyObject *g_error = nullptr, *g_invalid = nullptr, *g_simulation = nullptr, *g_usage = nullptr,
         *g_sanitizer = nullptr;

PyObject *make_class(py::module_ &m, const char *name, const char *doc, PyObject *base) {
  const std::string qualified = std::string("neuronsim.") + name;
  PyObject *cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (!cls)
    throw py::error_already_set();
  m.add_object(name, py::reinterpret_borrow<py::object>(cls));
  return cls;
}

void raise(const Error &e) {
  PyObject *cls = e.exit_code() == 2 ? g_usage : e.exit_code() == 4 ? g_simulation : g_invalid;
  const ErrorContext &c = e.context();
  auto or_none = [](const std::string &s) -> py::object {
    if (s.empty())
      return py::none();
    return py::str(s);
  };
  py::object exc = py::reinterpret_borrow<py::object>(cls)(sim::one_line(e.what()));
  exc.attr("exit_code") = e.exit_code();
  exc.attr("file") = or_none(c.file);
  exc.attr("inst_index") = c.inst_index >= 0 ? py::object(py::int_(c.inst_index)) : py::none();
  exc.attr("inst_name") = or_none(c.inst_name);
  exc.attr("field") = or_none(c.field);
  exc.attr("source") = or_none(c.source);
  PyErr_SetObject(cls, exc.ptr());
}

} // namespace

void register_errors(py::module_ &m) {
  g_error = make_class(
      m, "Error",
      "Base class of neuronsim's errors. str(e) is the CLI's message; e.exit_code is the CLI's exit\n"
      "code; e.file, e.inst_index, e.inst_name and e.field say where, e.source the instruction's\n"
      "source line from the BIR debug information ('kernel.py:42') (None when not known).",
      PyExc_Exception);
  g_invalid = make_class(
      m, "InvalidInput",
      "The input cannot be read or cannot run: BIR, bundles, arrays, shapes, dtypes (CLI exit 3).", g_error);
  g_simulation = make_class(
      m, "SimulationError",
      "A fault while simulating: a deadlock, an out-of-bounds access at run time (CLI exit 4).", g_error);
  g_usage = make_class(m, "UsageError", "An argument is not one the call takes (CLI exit 2).", g_error);
  g_sanitizer = make_class(
      m, "SanitizerError",
      "A sanitized run found something (neuronsim.nki.simulate(..., sanitize=True); CLI exit 5): e.findings is\n"
      "the list of findings, as Result.findings (docs/sanitizer.md).",
      g_error);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const Error &e) {
      raise(e);
    } catch (const sim::RunCancelled &) {
      // Python's own SIGINT handler saw the signal too (python/interrupt.cpp chains to it): running it raises
      // KeyboardInterrupt, or whatever a handler installed meanwhile does.
      if (PyErr_CheckSignals() == 0)
        PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
  });
}

} // namespace neuronsim::python
