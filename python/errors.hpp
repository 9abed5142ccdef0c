// The Python exceptions of the module: neuronsim.Error and its subclasses, one per CLI exit code.
#pragma once

#include <exception>
#include <new>
#include <string>

#include <pybind11/pybind11.h>

#include "neuronsim/error.hpp"
#include "neuronsim/sim/session.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::python {

// Creates Error, InvalidInput (exit 3), SimulationError (exit 4) and UsageError (exit 2) in `m`, and
// translates the library's exceptions into them: the message is the line the CLI prints after "neuronsim: ",
// and the instance carries exit_code, file, inst_index, inst_name and field (None where the error does not
// say). A cancelled run (sim::RunCancelled, after Ctrl-C) becomes the KeyboardInterrupt Python's SIGINT
// handler raises.
void register_errors(pybind11::module_ &m);

// Runs `f`; an exception that is neither the library's own nor Python's becomes the Error the CLI reports for it
// (sim::rethrow_as_error: a filesystem error on a path or a JSON value of the wrong type InvalidInput, anything
// else SimulationError "internal error: <what>"). Running out of memory stays Python's MemoryError.
template <typename F> auto guarded(F &&f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error &) {
    throw;
  } catch (const sim::RunCancelled &) {
    throw;
  } catch (const pybind11::error_already_set &) {
    throw;
  } catch (const pybind11::builtin_exception &) {
    throw;
  } catch (const std::bad_alloc &) {
    throw;
  } catch (const std::exception &) {
    sim::rethrow_as_error();
  }
}

} // namespace neuronsim::python
