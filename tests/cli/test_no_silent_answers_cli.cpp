// What the refusals of tests/cli/bad_inputs leave working (issue 28): outputs to character devices written in
// place (the node stays a device), outputs through a symlink (the link stays a link), the cores a kernel
// needs taken from its run.json or from itself, output elements nobody wrote reported (a warning, --strict an
// error), `compare --force` and a multi-core document's total, and `isa --explain`.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

// The helpers below live in namespace test_no_silent_answers_cli, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_no_silent_answers_cli {

using clitest::run;
namespace fs = std::filesystem;

namespace {
const std::string kKernel = clitest::src("workloads/kernel1/kernel1.bir.json");
const std::string kMulti = clitest::src("workloads/multicore");

bool char_device(const std::string &p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// kernel1 whose Save writes partitions 0-4 of b only: 50 of its 100 elements are written by no instruction.
std::string half_save_kernel(const std::string &dir) {
  nlohmann::json m = nlohmann::json::parse(clitest::read_file(kKernel));
  for (const char *side : {"ins", "outs"})
    m["functions"][0]["blocks"][0]["instructions"][2][side][0]["ap"] = {{10, 5}, {10, 1}, {1, 10}};
  const std::string path = dir + "/half.bir.json";
  std::ofstream(path) << m.dump();
  return path;
}
} // namespace

TEST(NoSilentAnswers, OutputsToDevicesAreWrittenInPlace) {
  const std::string dir = clitest::temp_dir();
  auto r = run("run " + kKernel + " --outdir " + dir + "/out --stats /dev/null --trace /dev/null --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(char_device("/dev/null")); // never renamed over (was: replaced by a regular file)
  EXPECT_TRUE(fs::is_regular_file(dir + "/out/b.npy"));
  // /dev/full's write errors are catalogue cases (after_run_stats_dev_full, ...), which ASan leaves out.
}

TEST(NoSilentAnswers, AnOutputThroughASymlinkReplacesTheFileItNames) {
  const std::string dir = clitest::temp_dir();
  std::ofstream(dir + "/real.json") << "old";
  fs::create_symlink(dir + "/real.json", dir + "/link.json");
  auto r =
      run("run " + kKernel + " --outdir " + dir + "/out --timing-only --stats " + dir + "/link.json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir + "/link.json"));
  EXPECT_EQ(nlohmann::json::parse(clitest::read_file(dir + "/real.json"))["kernel"], kKernel);
}

TEST(NoSilentAnswers, ABlockDeviceIsRefusedBeforeTheRun) {
  std::string dev;
  for (const auto &e : fs::directory_iterator("/dev"))
    if (e.is_block_file())
      dev = e.path().string();
  if (dev.empty())
    GTEST_SKIP() << "no block device in /dev here";
  auto r = run("run " + kKernel + " --timing-only --stats " + dev);
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("the output path is a block device"), std::string::npos) << r.err;
}

TEST(NoSilentAnswers, AKernelRunsOnTheCoresItNeeds) {
  // run.json says 4 cores, LNC=1, trn2 (workloads/gen writes it); the BIR file alone names cores 0-3 in its
  // replica group, so it runs on 4 cores too (on trn1: no run.json).
  auto folder = run("run " + kMulti + "/tp_mlp_4ranks --timing-only");
  ASSERT_EQ(folder.code, 0) << folder.err;
  EXPECT_NE(folder.out.find("arch trn2, 9 instructions (timing only), 4 cores (LNC=1, from run.json)"),
            std::string::npos)
      << folder.out;
  auto file = run("run " + kMulti + "/tp_mlp_4ranks/tp_mlp_4ranks.bir.json --timing-only");
  ASSERT_EQ(file.code, 0) << file.err;
  EXPECT_NE(file.out.find("arch trn1, 9 instructions (timing only), 4 cores (LNC=1, from the kernel's "
                          "replica_groups)"),
            std::string::npos)
      << file.out;
  // matmul_lnc2's ShardIDKind ub 2: LNC=2 on 2 cores from its run.json, numerically, against its expected/.
  auto lnc = run("run " + kMulti + "/matmul_lnc2 --outdir " + clitest::temp_dir());
  ASSERT_EQ(lnc.code, 0) << lnc.err;
  EXPECT_NE(lnc.out.find("2 cores (LNC=2, from run.json)"), std::string::npos) << lnc.out;
  EXPECT_NE(lnc.out.find("outputs match"), std::string::npos) << lnc.out;
}

TEST(NoSilentAnswers, OutputElementsNobodyWroteAreAWarningOrWithStrictAnError) {
  const std::string dir = clitest::temp_dir();
  const std::string k = half_save_kernel(dir);
  auto warn = run("run " + k + " --outdir " + dir + "/out --json");
  ASSERT_EQ(warn.code, 0) << warn.err;
  EXPECT_NE(warn.err.find("neuronsim: warning: " + k +
                          ": output 'b': 50 of 100 elements were written by no "
                          "instruction"),
            std::string::npos)
      << warn.err;
  EXPECT_EQ(nlohmann::json::parse(warn.out)["unwritten"], (nlohmann::json{{"b", 50}}));
  auto strict = run("run " + k + " --outdir " + dir + "/out2 --strict");
  EXPECT_EQ(strict.code, 4);
  EXPECT_NE(strict.err.find("output 'b': 50 of 100 elements"), std::string::npos) << strict.err;
  EXPECT_FALSE(fs::exists(dir + "/out2/b.npy")); // a failed run writes no outputs
  // A kernel that writes its whole output: nothing to report.
  auto whole = run("run " + kKernel + " --outdir " + dir + "/out3 --strict --json");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_EQ(nlohmann::json::parse(whole.out)["unwritten"], nlohmann::json::object());
  EXPECT_EQ(whole.err.find("warning"), std::string::npos) << whole.err;
}

TEST(NoSilentAnswers, CompareTakesCoresAndTheDevicesTotal) {
  // tp_mlp_4ranks on its 4 cores (run.json) against itself: +0.0%; the device's total, not core 0's.
  auto same = run("compare " + kMulti + "/tp_mlp_4ranks " + kMulti + "/tp_mlp_4ranks --fail-if-slower 0");
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("+0.0%"), std::string::npos) << same.out;
  // Two different kernels: refused without --force, compared with it.
  const std::string a = kKernel, b = clitest::src("workloads/softmax");
  EXPECT_EQ(run("compare " + a + " " + b).code, 3);
  auto forced = run("compare " + a + " " + b + " --force");
  EXPECT_EQ(forced.code, 0) << forced.err;
}

TEST(NoSilentAnswers, IsaExplainGivesTheOperandRolesFromTheTable) {
  auto r = run("isa --explain Activation");
  ASSERT_EQ(r.code, 0) << r.err;
  // ins[1] is the scale, ins[2] the bias (a hand-written [data, bias] computes data * bias).
  EXPECT_NE(r.out.find("  ins[1]    scale         optional: immediate or [P, 1]"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  ins[2]    bias          optional:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  func             yes       ActivationFunctionType  Identity"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("engines: Activation"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cost: activation -- activation max(MIN_II, N)"), std::string::npos) << r.out;
}

}  // namespace test_no_silent_answers_cli
