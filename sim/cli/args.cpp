// The option-value parsers of the `neuronsim` command (sim/cli/cli.hpp).
#include <cmath>
#include <string>
#include <vector>

#include "cli.hpp"
#include "neuronsim/error.hpp"

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

int parse_count(const std::string &opt, const std::string &v) {
  size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(v, &used);
  } catch (...) {
    used = 0;
  }
  if (used != v.size() || v.empty() || n < 1 || n > 1000000)
    throw UsageError("option " + opt + " needs a whole number from 1 to 1000000, got '" + v + "'");
  return static_cast<int>(n);
}
} // namespace neuronsim::cli
