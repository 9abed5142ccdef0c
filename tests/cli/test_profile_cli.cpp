// neuronsim run --top / --json / --quiet and the --stats profile (docs/profiling.md), on the bundled kernel1
// (workloads/kernel1: Load a, TensorScalarPtr, Save b; its BIR carries debug.filename and debug.lineno 9, 10,
// 12).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"

// The helpers below live in namespace test_profile_cli, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_profile_cli {

using clitest::run;

namespace {
const std::string kKernel = clitest::src("workloads/kernel1/kernel1.bir.json");
}

TEST(ProfileCli, StatsCarryTheProfileWithSourceLinesAndTheCommandLine) {
  const std::string dir = clitest::temp_dir();
  auto r = run("run " + kKernel + " --timing-only --stats " + dir + "/s.json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(clitest::read_file(dir + "/s.json"));
  EXPECT_TRUE(j.contains("engines"));  // the existing keys stay
  EXPECT_EQ(j["command_line"][0], "neuronsim");
  EXPECT_EQ(j["command_line"][3], "--timing-only");
  // Rows: the Load's trigger (SP) and transfer (DMA), the TensorScalarPtr, the Save's trigger (POOL) and transfer.
  const auto &rows = j["profile"]["instructions"];
  ASSERT_EQ(rows.size(), 5u);
  int dve = 0;
  for (const auto &row : rows) {
    EXPECT_EQ(row["file"], "/home/ec2-user/bug/kernel1.py");
    EXPECT_EQ(row["executions"], 1);
    if (row["engine"] == "DVE") {
      ++dve;
      EXPECT_EQ(row["line"], 10);
      // It reads what the Load wrote: all its wait is the Load's completion (a dependency).
      EXPECT_GT(row["wait_ns"]["dependency"].get<double>(), 850.0);  // at least the DMA latency (dma_latency_ns)
      EXPECT_EQ(row["wait_ns"]["dependency"].get<double>(), row["wait_total_ns"].get<double>());
    }
  }
  EXPECT_EQ(dve, 1);
  EXPECT_EQ(j["profile"]["source_lines"].size(), 3u);  // lines 9, 10, 12
}

TEST(ProfileCli, TopPrintsTheCriticalPathInstructionsWithSourceLines) {
  auto r = run("run " + kKernel + " --timing-only --top 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("top 2 instructions on the critical path"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernel1.py:"), std::string::npos) << r.out;
  auto bad = run("run " + kKernel + " --top x");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--top needs a whole number"), std::string::npos) << bad.err;
}

TEST(ProfileCli, JsonPrintsOneObjectAndQuietNothing) {
  const std::string dir = clitest::temp_dir();
  auto r = run("run " + clitest::src("workloads/kernel1") + " --json --outdir " + dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // stdout is the one document, nothing else
  EXPECT_GT(j["total_ns"].get<double>(), 0.0);
  EXPECT_EQ(j["outputs"].size(), 1u);
  EXPECT_TRUE(j["outputs_match"].get<bool>());  // the kernel folder's expected/ is compared
  EXPECT_EQ(j["arch"], "trn1");
  auto q = run("run " + kKernel + " --quiet --outdir " + dir);
  EXPECT_EQ(q.code, 0) << q.err;
  EXPECT_EQ(q.out, "");
  auto h = run("run --help");
  for (const char *opt : {"--top N", "--json", "--quiet"}) EXPECT_NE(h.out.find(opt), std::string::npos) << opt;
}

TEST(ProfileCli, ScheduleStreamedAndWholeGiveTheSameStatsAndSummary) {
  // `--schedule` (docs/cli.md "Long kernels"): auto streams this --timing-only run; the stats document (but
  // its command line) and the printed summary are those of the materialised schedule.
  const std::string dir = clitest::temp_dir();
  std::string out[3];
  nlohmann::json doc[3];
  const char *modes[3] = {"whole", "streamed", "auto"};
  for (int i = 0; i < 3; ++i) {
    const std::string f = dir + "/" + modes[i] + ".json";
    auto r = run("run " + kKernel + " --timing-only --schedule " + modes[i] + " --top 3 --stats " + f);
    ASSERT_EQ(r.code, 0) << r.err;
    const size_t from = r.out.find("simulated time"), to = r.out.find("stats: ");  // the file names differ
    ASSERT_NE(from, std::string::npos);
    out[i] = r.out.substr(from, to - from);
    doc[i] = nlohmann::json::parse(clitest::read_file(f));
    doc[i].erase("command_line");
  }
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(out[0], out[i]) << modes[i];
    EXPECT_EQ(doc[0], doc[i]) << modes[i];
  }
  auto bad = run("run " + kKernel + " --timing-only --schedule lazy");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--schedule takes auto, whole or streamed, got 'lazy'"), std::string::npos) << bad.err;
}

}  // namespace test_profile_cli
