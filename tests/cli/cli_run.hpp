// Runs the real `neuronsim` binary for CLI tests: captures stdout, stderr and the exit status.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "support/temp_dir.hpp"

namespace clitest {

struct Result {
  int code = -1;       // exit code, or 128 + signal
  std::string out, err;
};

inline std::string read_file(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A fresh directory in the running test's temporary folder, removed when the test ends (support/temp_dir.hpp).
inline std::string temp_dir() { return neuronsim::testing::temp_dir("cli"); }

// Runs `neuronsim <args>` (args already shell-quoted where needed) with a time limit. Its stdout and stderr go
// through two files in the running test's temporary folder.
inline Result run(const std::string &args, int timeout_s = 120) {
  const std::string dir = neuronsim::testing::test_folder();
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  const std::string cmd = "timeout " + std::to_string(timeout_s) + " " + NEURONSIM_BINARY + " " + args + " >" +
                          out + " 2>" + err;
  int st = std::system(cmd.c_str());
  Result r;
  if (WIFEXITED(st)) r.code = WEXITSTATUS(st);
  else if (WIFSIGNALED(st)) r.code = 128 + WTERMSIG(st);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

inline std::string src(const std::string &rel) { return std::string(NEURONSIM_SOURCE_DIR) + "/" + rel; }

} // namespace clitest
