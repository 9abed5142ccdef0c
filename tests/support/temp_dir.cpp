// tests/support/temp_dir.hpp: one folder per test under the system temp dir, removed when the test ends.
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace fs = std::filesystem;

namespace neuronsim::testing {
namespace {

struct Folder {
  std::string path; // empty until made
  int next = 0;     // the n of the next temp_dir
};
Folder g_test;    // the running test's
Folder g_process; // made outside any test

std::string running_test_name() {
  const ::testing::TestInfo *t = ::testing::UnitTest::GetInstance()->current_test_info();
  return t ? std::string(t->test_suite_name()) + "." + t->name() : std::string();
}

// Only [A-Za-z0-9._-] in a path component (parameterised test names carry '/').
std::string safe(const std::string &s) {
  std::string out;
  for (char ch : s) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                    ch == '.' || ch == '_' || ch == '-';
    out += ok ? ch : '_';
  }
  return out.substr(0, 120);
}

Folder &current() {
  return running_test_name().empty() ? g_process : g_test;
}

void remove(Folder &f) {
  if (f.path.empty())
    return;
  std::error_code ec;
  fs::remove_all(f.path, ec);
  f = Folder{};
}

class Cleaner : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo &) override { remove(g_test); }
  void OnTestProgramEnd(const ::testing::UnitTest &) override {
    remove(g_test);
    remove(g_process);
  }
};

} // namespace

std::string test_folder() {
  Folder &f = current();
  if (f.path.empty()) {
    const std::string name = running_test_name();
    std::string tmpl =
        (fs::temp_directory_path() / ("neuronsim-test-" + safe(name.empty() ? "process" : name) + "-XXXXXX"))
            .string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data()))
      throw std::runtime_error("cannot make a temporary folder like " + tmpl);
    f.path = buf.data();
  }
  return f.path;
}

std::string temp_dir(const std::string &tag) {
  const std::string folder = test_folder();
  Folder &f = current();
  const std::string dir = folder + "/" + safe(tag) + "-" + std::to_string(f.next++);
  fs::create_directories(dir);
  return dir;
}

::testing::TestEventListener *new_temp_folder_cleaner() {
  return new Cleaner;
}

} // namespace neuronsim::testing
