// neuronsim compare A B (docs/profiling.md): two --stats documents, or two kernels run on the spot.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

// The helpers below live in namespace test_compare_cli, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_compare_cli {

using clitest::run;

namespace {
const std::string kKernel = clitest::src("workloads/kernel1/kernel1.bir.json");
void write(const std::string &path, const nlohmann::json &j) { std::ofstream(path) << j.dump(); }
} // namespace

TEST(CompareCli, AKernelAgainstItselfChangesNothing) {
  auto r = run("compare " + kKernel + " " + clitest::src("workloads/kernel1") + " --fail-if-slower 0");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("+0.0%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bottleneck: DMA -> DMA"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("changed most"), std::string::npos) << r.out;  // nothing changed
}

TEST(CompareCli, FailIfSlowerAndTheInstructionThatChangedMost) {
  const std::string dir = clitest::temp_dir();
  ASSERT_EQ(run("run " + kKernel + " --timing-only --stats " + dir + "/a.json").code, 0);
  nlohmann::json a = nlohmann::json::parse(clitest::read_file(dir + "/a.json")), b = a;
  // B: 1.5 x the total time, and the DVE instruction holding the critical path 1000 ns longer.
  b["total_ns"] = a["total_ns"].get<double>() * 1.5;
  std::string dve;
  for (auto &row : b["profile"]["instructions"])
    if (row["engine"] == "DVE") {
      row["critical_path_ns"] = row["critical_path_ns"].get<double>() + 1000.0;
      dve = row["name"];
    }
  ASSERT_FALSE(dve.empty());
  write(dir + "/b.json", b);
  auto slow = run("compare " + dir + "/a.json " + dir + "/b.json --fail-if-slower 10");
  EXPECT_EQ(slow.code, 1) << slow.out << slow.err;
  EXPECT_NE(slow.out.find("+50.0%"), std::string::npos) << slow.out;
  // The first row of the instructions table is the DVE instruction, +1000 ns, with its source line 10.
  const auto at = slow.out.find("instructions whose cost changed most");
  ASSERT_NE(at, std::string::npos) << slow.out;
  const std::string first = slow.out.substr(slow.out.find('\n', at) + 1);
  const std::string line = first.substr(0, first.find('\n'));
  EXPECT_NE(line.find("+1000.0"), std::string::npos) << line;
  EXPECT_NE(line.find(dve), std::string::npos) << line;
  EXPECT_NE(line.find("kernel1.py:10"), std::string::npos) << line;
  EXPECT_EQ(run("compare " + dir + "/a.json " + dir + "/b.json --fail-if-slower 60").code, 0);
  EXPECT_EQ(run("compare " + dir + "/a.json " + dir + "/b.json").code, 0);  // no threshold: report only
  auto one = run("compare " + dir + "/a.json");
  EXPECT_EQ(one.code, 2);
  EXPECT_NE(one.err.find("compare takes two files"), std::string::npos) << one.err;
}

}  // namespace test_compare_cli
