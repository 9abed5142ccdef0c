// What the files of the `neuronsim` command share (sim/cli/): the argument parsers and the commands that live
// outside main.cpp, which only dispatches. Calls public headers only.
#pragma once

#include <string>
#include <vector>

namespace neuronsim::cli {

// The value after option a[i] (i moves onto it); UsageError "option X needs a value" when there is none.
std::string need_value(const std::vector<std::string> &a, size_t &i);
// A number as the option's value; UsageError naming the option otherwise.
double parse_double(const std::string &opt, const std::string &v);
// --rtol / --atol / --fail-if-slower: a finite number >= 0 (a NaN tolerance would pass every comparison).
double parse_tolerance(const std::string &opt, const std::string &v);
// --top N and the like: a whole number from 1 to 1000000.
int parse_count(const std::string &opt, const std::string &v);

// `neuronsim run` (main.cpp) and what calls it for another command: `neuronsim nki` runs the BIR it traced as
// `run` would, naming the kernel FILE.py::FUNCTION and the command `nki`.
struct RunFrom {
  std::string command = "run";             // in the run header, "neuronsim <command>: <label>"
  std::string label;                       // the kernel's name in the header and the stats (default: the file)
  std::vector<std::string> command_line;   // as the stats record it (default: neuronsim run ARGS)
};
int cmd_run(const std::vector<std::string> &a, const RunFrom &from);
// `neuronsim nki FILE.py::FUNCTION [options]` (nki.cpp): an NKI kernel traced by the Python package, then run.
int cmd_nki(const std::vector<std::string> &a);
// The interpreter of the Python package (NEURONSIM_PYTHON overrides the build's), this build's package put first
// on PYTHONPATH; UsageError when the build has no Python package.
std::string python_interpreter();

// `neuronsim compare A B` (compare.cpp) and `neuronsim arch` (arch.cpp): the exit code.
int cmd_compare(const std::vector<std::string> &a);
int cmd_arch(const std::vector<std::string> &a);

} // namespace neuronsim::cli
