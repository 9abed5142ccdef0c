// How a front end (the `neuronsim` command, the Python module) reports a failure: as one Error with its exit
// code, on one printable line.
#pragma once

#include <string>

namespace neuronsim::sim {

// Error messages may quote the input (a JSON parser's "last read" bytes, a .npy header): the user still gets
// one printable line -- control characters and bytes that are not valid UTF-8 as \xNN escapes.
std::string one_line(const std::string &message);

// Inside a catch block: rethrows the exception being handled as the Error `neuronsim` reports for it. An Error
// and RunCancelled pass unchanged; a file-system failure on a user's path becomes InputError "<path>: <OS
// reason>" (exit 3); a JSON value of the wrong type InputError "invalid JSON value: ..." (exit 3); running out of
// memory SimulationError "out of host memory"; anything else SimulationError "internal error: ..." (exit 4).
[[noreturn]] void rethrow_as_error();

} // namespace neuronsim::sim
