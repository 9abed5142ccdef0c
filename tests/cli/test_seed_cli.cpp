// --seed N and --save-inputs DIR (docs/cli.md): generated inputs are reproducible and can be saved.
#include <gtest/gtest.h>

#include "cli_run.hpp"

// The helpers below live in namespace test_seed_cli, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_seed_cli {

using clitest::run;

namespace {
// kernel1 computes b = a - 1.0 on a [10, 10] fp32 tile (workloads/kernel1/make_data.py); run from its BIR file,
// its input `a` is generated.
const std::string kKernel = clitest::src("workloads/kernel1/kernel1.bir.json");
}

TEST(SeedCli, TheSeedIsPrintedAndSavedInputsReproduceTheRun) {
  const std::string dir = clitest::temp_dir();
  auto r0 = run("run " + kKernel + " --outdir " + dir + "/o0 --save-inputs " + dir + "/in0");
  ASSERT_EQ(r0.code, 0) << r0.err;
  EXPECT_NE(r0.out.find("input seed 0"), std::string::npos) << r0.out;
  EXPECT_NE(r0.out.find("a: generated (deterministic, seed 0)"), std::string::npos) << r0.out;
  EXPECT_NE(r0.out.find("saved  " + dir + "/in0/a.npy"), std::string::npos) << r0.out;
  auto r7 = run("run " + kKernel + " --seed 7 --outdir " + dir + "/o7 --save-inputs " + dir + "/in7");
  ASSERT_EQ(r7.code, 0) << r7.err;
  EXPECT_NE(r7.out.find("input seed 7"), std::string::npos) << r7.out;
  const std::string a0 = clitest::read_file(dir + "/in0/a.npy"), a7 = clitest::read_file(dir + "/in7/a.npy");
  ASSERT_EQ(a0.size(), a7.size());
  ASSERT_GT(a0.size(), 400u);  // 100 fp32 after the header
  EXPECT_NE(a0, a7);           // another draw
  // The same seed again: the same inputs, byte for byte; and the saved inputs given back give the same outputs.
  auto again = run("run " + kKernel + " --seed 7 --outdir " + dir + "/o7b --save-inputs " + dir + "/in7b");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(clitest::read_file(dir + "/in7b/a.npy"), a7);
  auto replay = run("run " + kKernel + " --inputs " + dir + "/in7 --outdir " + dir + "/o7c");
  ASSERT_EQ(replay.code, 0) << replay.err;
  EXPECT_EQ(clitest::read_file(dir + "/o7c/b.npy"), clitest::read_file(dir + "/o7/b.npy"));
}

TEST(SeedCli, SaveInputsNeverOverwritesAnInputAndBadSeedsAreRefused) {
  const std::string dir = clitest::temp_dir();
  ASSERT_EQ(run("run " + kKernel + " --outdir " + dir + "/o --save-inputs " + dir + "/in").code, 0);
  const std::string before = clitest::read_file(dir + "/in/a.npy");
  // Saving into the folder the inputs are read from would overwrite them: refused before the run.
  auto r = run("run " + kKernel + " --seed 3 --inputs " + dir + "/in --outdir " + dir + "/o --save-inputs " + dir + "/in");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("a.npy"), std::string::npos) << r.err;
  EXPECT_EQ(clitest::read_file(dir + "/in/a.npy"), before);
  for (const char *bad : {"-1", "x", "1.5"}) {
    auto b = run("run " + kKernel + " --seed " + bad);
    EXPECT_EQ(b.code, 2) << bad;
    EXPECT_NE(b.err.find("--seed needs a whole number"), std::string::npos) << b.err;
  }
  EXPECT_EQ(run("run " + kKernel + " --timing-only --save-inputs " + dir + "/t").code, 2);
}

}  // namespace test_seed_cli
