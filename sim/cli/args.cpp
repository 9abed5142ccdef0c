// The option-value parsers and the option tables of the `neuronsim` command, and the reader's warnings as
// every command prints them (sim/cli/cli.hpp).
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/names.hpp"
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/front_end_errors.hpp"

namespace neuronsim::cli {

std::string need_value(const std::vector<std::string> &a, size_t &i) {
  if (i + 1 >= a.size()) throw UsageError("option " + a[i] + " needs a value");
  return a[++i];
}

double parse_double(const std::string &opt, const std::string &v) {
  try {
    size_t used = 0;
    double d = std::stod(v, &used);
    if (used == v.size()) return d;
  } catch (...) {
  }
  throw UsageError("option " + opt + " needs a number, got '" + v + "'");
}

double parse_tolerance(const std::string &opt, const std::string &v) {
  const double d = parse_double(opt, v);
  if (!std::isfinite(d) || d < 0) throw UsageError("option " + opt + " needs a finite number >= 0, got '" + v + "'");
  return d;
}

namespace {
long long parse_whole(const std::string &opt, const std::string &v, long long lo, long long hi) {
  size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(v, &used);
  } catch (...) {
    used = 0;
  }
  if (used != v.size() || v.empty() || n < lo || n > hi)
    throw UsageError("option " + opt + " needs a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ", got '" + v + "'");
  return n;
}
} // namespace

int parse_count(const std::string &opt, const std::string &v) {
  return static_cast<int>(parse_whole(opt, v, 1, 1000000));
}

int parse_cores(const std::string &opt, const std::string &v) {
  return static_cast<int>(parse_whole(opt, v, 1, sim::kMaxCores));
}

std::string need_path(const std::string &opt, const std::string &v) {
  if (v.empty())
    throw UsageError("option " + opt + " needs a path, got an empty one");
  return v;
}

bool parse_options(const std::vector<std::string> &a, const std::vector<Option> &table,
                   const std::function<void(const std::string &)> &positional) {
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string &o = a[i];
    if (o == "--help" || o == "-h")
      return false;
    if (o.empty() || o[0] != '-') {
      positional(o);
      continue;
    }
    const Option *opt = nullptr;
    for (const auto &row : table)
      if (row.name == o)
        opt = &row;
    if (!opt) {
      std::vector<std::string> names;
      for (const auto &row : table)
        names.push_back(row.name);
      throw UsageError("unknown option '" + o + "'" + isa::did_you_mean(o, names));
    }
    opt->apply(opt->value.empty() ? std::string() : need_value(a, i));
  }
  return true;
}

std::string options_help(const std::vector<Option> &table) {
  std::string s;
  for (const auto &row : table) {
    std::string head = "  " + row.name + (row.value.empty() ? "" : " " + row.value);
    if (head.size() < 25)
      head.resize(25, ' ');
    else
      head += "  ";
    s += head + row.help + "\n";
  }
  return s;
}

// --input NAME=FILE.npy: both parts non-empty, each NAME once.
void add_input(sim::InputSpec &spec, const std::string &v) {
  const auto eq = v.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError("--input takes NAME=FILE.npy, got '" + v + "'");
  const std::string name = v.substr(0, eq), file = v.substr(eq + 1);
  if (file.empty()) throw UsageError("--input " + name + "= needs a file name after '='");
  if (!spec.files.emplace(name, file).second)
    throw UsageError("--input " + name + " is given twice ('" + spec.files[name] + "' and '" + file + "')");
}

// What the reader ignored (unknown keys), one line each on stderr before the run.
void print_warnings(const isa::Program &p) {
  for (const auto &w : p.warnings) std::cerr << "neuronsim: warning: " << sim::one_line(w) << "\n";
}

} // namespace neuronsim::cli
