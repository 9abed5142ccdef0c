// Every malformed input of tests/cli/bad_inputs/catalogue.json, run through the real `neuronsim` binary (one
// child process per case, with a timeout): the exit code is the documented one (DESIGN.md section 5), stderr is
// one line naming the file, instruction and field (section 7), nothing crashed or hung, the inputs are byte for
// byte what they were, the --outdir holds no half-written .npy and no temporary file is left anywhere in the
// case's scratch directory. A case may first set up its scratch directory ("setup": FIFOs, symlinks to devices,
// copies of workloads to alter), which the catalogue cannot hold as committed files.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/bad_inputs/run_process.hpp"
#include "neuronsim/io/npy.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using neuronsim::testing::ProcessResult;
using neuronsim::testing::run_process;
using neuronsim::testing::snapshot;

namespace {

const std::string kCasesDir = std::string(NEURONSIM_SOURCE_DIR) + "/tests/cli/bad_inputs";

struct Case {
  std::string name, why;
  std::vector<std::string> args;
  int exit = 0;
  std::vector<std::string> stderr_has;
  nlohmann::json setup = nlohmann::json::array();
  std::string stdout_to; // "stdout": the case's standard output goes there (a device such as /dev/full)
  bool python = false;   // "python": the command runs the Python package (neuronsim sweep, neuronsim nki)
  std::string cwd;        // "cwd": the command's working directory (default: the test's)
};

// Placeholders: {dir} this folder, {kernel1} workloads/kernel1, {workloads} workloads/, {scratch} the case's
// fresh scratch directory, {out} = {scratch}/out (not created).
std::string subst(std::string s, const std::string &scratch) {
  auto rep = [&](const std::string &key, const std::string &val) {
    for (size_t p; (p = s.find(key)) != std::string::npos;) s.replace(p, key.size(), val);
  };
  rep("{dir}", kCasesDir);
  rep("{kernel1}", std::string(NEURONSIM_SOURCE_DIR) + "/workloads/kernel1");
  rep("{workloads}", std::string(NEURONSIM_SOURCE_DIR) + "/workloads");
  rep("{out}", scratch + "/out");
  rep("{scratch}", scratch);
  return s;
}

// One setup step: {"mkfifo": P}, {"symlink": [TARGET, LINK]}, {"mkdir": P}, {"copy": [SRC, DST]} (a file or a
// whole directory), {"write": [P, TEXT]}, {"nest": ...} (below), {"remove": P}, {"mksocket": P}.
void run_setup(const nlohmann::json &step, const std::string &scratch) {
  const auto str = [&](const nlohmann::json &v) { return subst(v.get<std::string>(), scratch); };
  std::error_code ec;
  if (step.contains("mkfifo")) {
    ASSERT_EQ(::mkfifo(str(step["mkfifo"]).c_str(), 0644), 0) << step.dump();
  } else if (step.contains("symlink")) {
    fs::create_symlink(str(step["symlink"][0]), str(step["symlink"][1]), ec);
    ASSERT_FALSE(ec) << step.dump() << ": " << ec.message();
  } else if (step.contains("mkdir")) {
    fs::create_directories(str(step["mkdir"]), ec);
    ASSERT_FALSE(ec) << step.dump();
  } else if (step.contains("copy")) {
    fs::copy(str(step["copy"][0]), str(step["copy"][1]), fs::copy_options::recursive, ec);
    ASSERT_FALSE(ec) << step.dump() << ": " << ec.message();
  } else if (step.contains("write")) {
    std::ofstream(str(step["write"][0]), std::ios::binary) << step["write"][1].get<std::string>();
  } else if (step.contains("nest")) {
    // {"nest": [TEMPLATE, OUT, OPEN, CORE, CLOSE, N]}: TEMPLATE with "@NEST@" replaced by OPEN x N, CORE, CLOSE x N
    // (documents nested thousands of levels deep, made here rather than committed).
    const auto &a = step["nest"];
    std::ifstream in(str(a[0]), std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = text.find("@NEST@");
    ASSERT_NE(at, std::string::npos) << step.dump();
    std::string nested;
    const int n = a[5].get<int>();
    for (int k = 0; k < n; ++k) nested += a[2].get<std::string>();
    nested += a[3].get<std::string>();
    for (int k = 0; k < n; ++k) nested += a[4].get<std::string>();
    text.replace(at, 6, nested);
    std::ofstream(str(a[1]), std::ios::binary) << text;
  } else if (step.contains("remove")) {
    fs::remove_all(str(step["remove"]), ec);
  } else if (step.contains("mksocket")) {
    // {"mksocket": P}: a Unix-domain socket bound at P (closed again: the node stays). Bound by its name from
    // its folder: a socket's path is limited to 107 bytes, less than a scratch folder's.
    const fs::path p = str(step["mksocket"]);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string name = p.filename().string();
    ASSERT_LT(name.size(), sizeof(addr.sun_path)) << p;
    std::copy(name.begin(), name.end(), addr.sun_path);
    const fs::path here = fs::current_path();
    fs::current_path(p.parent_path());
    const int rc = ::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr));
    fs::current_path(here);
    ::close(fd);
    ASSERT_EQ(rc, 0) << p;
  } else {
    FAIL() << "unknown setup step " << step.dump();
  }
}

std::vector<Case> load_catalogue() {
  std::vector<Case> cases;
  std::ifstream in(kCasesDir + "/catalogue.json");
  if (!in) return cases;
  const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("cases")) return cases;
  for (const auto &c : j["cases"]) {
    Case k;
    k.name = c.value("name", "");
    k.why = c.value("why", "");
    if (c.contains("args")) k.args = c["args"].get<std::vector<std::string>>();
    k.exit = c.value("exit", -1);
    k.stderr_has = c.value("stderr", std::vector<std::string>{});
    if (c.contains("setup")) k.setup = c["setup"];
    k.stdout_to = c.value("stdout", std::string());
    k.python = c.value("python", false);
    k.cwd = c.value("cwd", std::string());
    cases.push_back(k);
  }
  return cases;
}

const std::vector<Case> &catalogue() {
  static const std::vector<Case> c = load_catalogue();
  return c;
}

// The files a case reads: every argument that names an existing file or folder (NAME=FILE for --input).
std::vector<std::string> input_paths(const std::vector<std::string> &args) {
  std::vector<std::string> paths;
  for (const auto &a : args) {
    std::string p = a;
    if (auto eq = p.find('='); eq != std::string::npos && p.find('/') != std::string::npos && eq < p.find('/'))
      p = p.substr(eq + 1);
    std::error_code ec;
    if (!p.empty() && p[0] == '/' && fs::exists(p, ec)) paths.push_back(p);
  }
  return paths;
}

void expect_one_line_naming(const std::string &err, const Case &c) {
  ASSERT_FALSE(err.empty()) << c.name << ": no message on stderr";
  EXPECT_EQ(err.find('\n'), err.size() - 1) << c.name << ": stderr must be exactly one line:\n" << err;
  EXPECT_EQ(err.rfind("neuronsim: ", 0), 0u) << c.name << ": " << err;
  EXPECT_EQ(err.find("internal error"), std::string::npos) << c.name << ": vague message: " << err;
  for (const auto &s : c.stderr_has) EXPECT_NE(err.find(s), std::string::npos) << c.name << ": '" << s << "' missing in:\n" << err;
}

// After a failed run the output folder may hold complete .npy files (written before a later failure) but nothing
// truncated, and no temporary (an output's ".tmp.<pid>.<n>", a writability probe) is left anywhere in the
// scratch directory.
void expect_no_partial_outputs(const std::string &scratch, const std::string &outdir, const std::string &name) {
  std::error_code ec;
  for (const auto &e : fs::recursive_directory_iterator(scratch, ec)) {
    const std::string f = e.path().filename().string();
    EXPECT_EQ(f.find(".tmp."), std::string::npos) << name << ": temporary file left behind: " << e.path();
    EXPECT_EQ(f.find(".neuronsim-probe"), std::string::npos) << name << ": probe file left behind: " << e.path();
  }
  if (!fs::exists(outdir, ec)) return;
  for (const auto &e : fs::recursive_directory_iterator(outdir, ec)) {
    if (e.path().extension() == ".npy" && e.is_regular_file()) {
      try {
        neuronsim::io::read_npy(e.path().string());
      } catch (const std::exception &x) {
        ADD_FAILURE() << name << ": half-written output " << e.path() << ": " << x.what();
      }
    }
  }
}

class BadInput : public ::testing::TestWithParam<size_t> {};

TEST_P(BadInput, GivesItsErrorAndExitCode) {
  const Case &c = catalogue().at(GetParam());
  SCOPED_TRACE(c.name + ": " + c.why);
#if defined(__SANITIZE_ADDRESS__)
  // The sweeps run the Python package in a plain interpreter, which cannot load the instrumented module (the
  // Python suite covers them in the normal build, .ci/run).
  if (c.python)
    GTEST_SKIP() << "a sweep: the Python package runs outside the sanitizer build";
#endif
  const std::string scratch = neuronsim::testing::temp_dir("bad-" + c.name);
  ASSERT_FALSE(scratch.empty());
  const std::string outdir = scratch + "/out";
  for (const auto &step : c.setup) {
    run_setup(step, scratch);
    if (HasFatalFailure()) return;
  }

  std::vector<std::string> args;
  for (const auto &a : c.args) args.push_back(subst(a, scratch));
  std::map<std::string, std::map<std::string, std::string>> before;
  for (const auto &p : input_paths(args)) before[p] = snapshot(p);

  const ProcessResult r = run_process(NEURONSIM_BINARY, args, scratch, 60, c.stdout_to, subst(c.cwd, scratch));
  ASSERT_TRUE(r.started) << "cannot start " << NEURONSIM_BINARY;
  EXPECT_FALSE(r.timed_out) << c.name << ": hung (killed after 60 s)";
  EXPECT_FALSE(r.signaled) << c.name << ": crashed with signal " << r.signal << "\nstderr: " << r.err;
  EXPECT_EQ(r.exit_code, c.exit) << "stderr: " << r.err;
  expect_one_line_naming(r.err, c);
  for (const auto &[p, snap] : before) EXPECT_EQ(snapshot(p), snap) << c.name << ": input " << p << " changed";
  expect_no_partial_outputs(scratch, outdir, c.name);
  fs::remove_all(scratch);
}

std::string case_name(const ::testing::TestParamInfo<size_t> &info) {
  std::string n = catalogue().at(info.param).name;
  for (auto &ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInput, ::testing::Range<size_t>(0, catalogue().size()), case_name);

TEST(BadInputCatalogue, IsReadableAndCoversTheKinds) {
  ASSERT_GE(catalogue().size(), 30u) << kCasesDir << "/catalogue.json";
  std::map<int, int> kinds;
  for (const auto &c : catalogue()) {
    EXPECT_FALSE(c.name.empty());
    EXPECT_FALSE(c.stderr_has.empty()) << c.name;
    EXPECT_TRUE(c.exit >= 2 && c.exit <= 4) << c.name;
    EXPECT_FALSE(c.args.empty()) << c.name;
    ++kinds[c.exit];
  }
  EXPECT_GT(kinds[2], 0);
  EXPECT_GT(kinds[3], 0);
  EXPECT_GT(kinds[4], 0);
}

} // namespace
