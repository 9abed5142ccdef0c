// `neuronsim sweep` and `neuronsim tune`, which only start the Python package's, and the interpreter every command
// that runs on the package uses (python_interpreter: sweep, tune and nki).
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "neuronsim/error.hpp"

#include "cli.hpp"

namespace fs = std::filesystem;

namespace neuronsim::cli {

// The Python interpreter the package was built for (NEURONSIM_PYTHON overrides it), with this build's package
// (build/python, beside the binary) first on PYTHONPATH; an installed one (cmake --install) is on the interpreter's
// own path. `neuronsim sweep` and `neuronsim nki` run Python through it.
std::string python_interpreter() {
#ifndef NEURONSIM_PYTHON
  throw UsageError("this command runs on the neuronsim Python package, which this build lacks (install pybind11-dev "
                   "and python3-dev, as scripts/bootstrap does, and reconfigure)");
#else
  const char *env = std::getenv("NEURONSIM_PYTHON");
  const std::string python = env && *env ? env : NEURONSIM_PYTHON;
  std::error_code ec;
  const fs::path package = fs::read_symlink("/proc/self/exe", ec).parent_path() / "python";
  if (!ec && fs::is_regular_file(package / "neuronsim" / "__init__.py")) {
    const char *old = std::getenv("PYTHONPATH");
    const std::string path = package.string() + (old && *old ? ":" + std::string(old) : "");
    setenv("PYTHONPATH", path.c_str(), 1);
  }
  return python;
#endif
}

namespace {

// Replaces this process with `python3 -m neuronsim COMMAND ARGS...`; returns only when the interpreter cannot be
// started.
int exec_python_command(const std::string &command, const std::vector<std::string> &a) {
  std::vector<std::string> words = {python_interpreter(), "-m", "neuronsim", command};
  words.insert(words.end(), a.begin(), a.end());
  std::vector<char *> argv;
  for (auto &w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  execvp(words[0].c_str(), argv.data());
  throw UsageError(command + ": cannot start " + words[0] + ": " + std::strerror(errno) +
                   " (NEURONSIM_PYTHON names the Python interpreter)");
}

} // namespace

// `neuronsim sweep`: the sweep is Python (python/neuronsim/sweeps.py, on Dask); this command only starts it.
// The package of this build (build/python, beside the binary) goes first on PYTHONPATH; an installed one
// (cmake --install) is on the interpreter's own path.
int cmd_sweep(const std::vector<std::string> &a) { return exec_python_command("sweep", a); }

// `neuronsim tune FILE.py::FUNCTION --param NAME=V1,V2...`: the tuner is Python too (python/neuronsim/tune*.py, on
// the sweep's Dask runner), started the same way.
int cmd_tune(const std::vector<std::string> &a) { return exec_python_command("tune", a); }

} // namespace neuronsim::cli
