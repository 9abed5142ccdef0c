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

// `neuronsim compare A B` (compare.cpp) and `neuronsim arch` (arch.cpp): the exit code.
int cmd_compare(const std::vector<std::string> &a);
int cmd_arch(const std::vector<std::string> &a);

} // namespace neuronsim::cli
