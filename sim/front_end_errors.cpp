// Failures as the front ends report them (front_end_errors.hpp).
#include "neuronsim/sim/front_end_errors.hpp"

#include <filesystem>
#include <new>

#include <nlohmann/json.hpp>

#include "neuronsim/error.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

namespace fs = std::filesystem;

std::string one_line(const std::string &m) {
  static const char *hex = "0123456789ABCDEF";
  std::string s;
  for (size_t i = 0; i < m.size();) {
    const unsigned char c = static_cast<unsigned char>(m[i]);
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 1;
    for (size_t k = 1; k < n; ++k)
      if (i + k >= m.size() || (static_cast<unsigned char>(m[i + k]) & 0xC0) != 0x80)
        n = 0;
    if (n > 1) {
      s.append(m, i, n);
      i += n;
      continue;
    }
    if (c >= 0x20 && c < 0x7F)
      s += static_cast<char>(c);
    else
      s += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    ++i;
  }
  return s;
}

void rethrow_as_error() {
  try {
    throw;
  } catch (const Error &) {
    throw;
  } catch (const RunCancelled &) {
    throw;
  } catch (const fs::filesystem_error &e) {
    // A file-system call on a user's path (a directory listing, a permission): the path and the OS reason.
    throw InputError({e.path1().string(), -1, "", ""}, e.code().message());
  } catch (const nlohmann::json::exception &e) {
    // A JSON value of the wrong type in a document read without a schema (a manifest entry).
    throw InputError({}, std::string("invalid JSON value: ") + e.what());
  } catch (const std::bad_alloc &) {
    throw SimulationError({}, "out of host memory");
  } catch (const std::exception &e) {
    throw SimulationError({}, std::string("internal error: ") + e.what());
  }
}

} // namespace neuronsim::sim
