// Runs the real `neuronsim` binary as a child process for the CLI tests: stdout and stderr captured, a timeout
// so a hang fails the test instead of the suite, and the way it ended (exit code or signal) reported apart.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace neuronsim::testing {

struct ProcessResult {
  bool started = false;
  bool timed_out = false;
  bool signaled = false;
  int signal = 0;
  int exit_code = -1;
  std::string out, err;
};

inline std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Runs `binary args...` with stdout/stderr redirected to files in `scratch` (stdout to `stdout_to` instead
// when given: a device such as /dev/full); kills it with SIGKILL after `timeout_s` seconds.
inline ProcessResult run_process(const std::string &binary, const std::vector<std::string> &args,
                                 const std::string &scratch, int timeout_s = 120,
                                 const std::string &stdout_to = "", const std::string &cwd = "") {
  ProcessResult r;
  const std::string out_path = stdout_to.empty() ? scratch + "/stdout.txt" : stdout_to;
  const std::string err_path = scratch + "/stderr.txt";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(),
                                   stdout_to.empty() ? O_WRONLY | O_CREAT | O_TRUNC : O_WRONLY, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());  // the child's working directory
  std::vector<std::string> argv_s;
  argv_s.push_back(binary);
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (auto &a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, binary.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return r;
  r.started = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0) return r;
    if (std::chrono::steady_clock::now() > deadline) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFSIGNALED(status)) {
    r.signaled = true;
    r.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  }
  if (stdout_to.empty())
    r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

// Every regular file under `path` (or `path` itself) with its bytes, to prove a run did not modify its inputs.
inline std::map<std::string, std::string> snapshot(const std::string &path) {
  std::map<std::string, std::string> m;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    m[path] = read_file(path);
  } else if (fs::is_directory(path, ec)) {
    for (const auto &e : fs::recursive_directory_iterator(path, ec))
      if (e.is_regular_file()) m[e.path().string()] = read_file(e.path().string());
  }
  return m;
}

} // namespace neuronsim::testing
