// Error messages name the source line of the instruction they are about, from its BIR debug information
// (issue 16 item 2): "... (kernel.py:42)", whether the error comes from reading the kernel, from scheduling it
// or from running it. The kernel is workloads/kernel1 (Load I-2, TensorScalarPtr I-4, Save I-6) with I-4's
// debug information set to kernel.py line 42 and one mistake.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

using clitest::run;
using nlohmann::json;

namespace {

bool ends_with(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// kernel1 with I-4 at kernel.py:42 (or `debug` as given) and `mutate` applied to I-4, written into a fresh folder.
std::string kernel(const std::function<void(json &)> &mutate, const json &debug = {{"filename", "kernel.py"},
                                                                                    {"lineno", 42}}) {
  json m = json::parse(clitest::read_file(clitest::src("workloads/kernel1/kernel1.bir.json")));
  json &i4 = m["functions"][0]["blocks"][0]["instructions"][1];
  i4["debug"] = debug;
  mutate(i4);
  const std::string path = clitest::temp_dir() + "/k.bir.json";
  std::ofstream(path) << m.dump();
  return path;
}

} // namespace

TEST(SourceErrors, AnErrorWhileReadingNamesTheSourceLine) {
  const std::string k = kernel([](json &i) { i["engine"] = "PE"; });
  auto r = run("run " + k + " --timing-only");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "neuronsim: " + k + ": instruction 1 'I-4' field 'engine': function 'sg0000': TensorScalarPtr "
                   "cannot run on PE (it runs on DVE, Activation, Pool) (kernel.py:42)\n");
}

TEST(SourceErrors, AnErrorWhileSchedulingNamesTheSourceLine) {
  // ins[0] reads 11 partitions of a 10-partition tile: refused before the run, by the scheduler's walk.
  const std::string k = kernel([](json &i) { i["ins"][0]["ap"][0] = {10, 11}; });
  auto r = run("run " + k + " --timing-only");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find(k + ": instruction 1 'I-4' field 'ins[0]': access out of bounds"), std::string::npos) << r.err;
  EXPECT_TRUE(ends_with(r.err, " (kernel.py:42)\n")) << r.err;
}

TEST(SourceErrors, AnErrorAtRunTimeNamesTheSourceLine) {
  // I-4 becomes Select(pred = tile.7, true = tile.7, false = tile.7): the generated input a (uniform in [-1, 1))
  // is no 0/1 predicate, which only the run finds out.
  const std::string k = kernel([](json &i) {
    for (const char *key : {"op0", "op1", "reverse0", "reverse1", "is_scalar_tensor_tensor", "is_tensor_scalar_addr",
                            "is_tensor_tensor_scan", "duplicate", "can_read_uninit"})
      i.erase(key);
    i["opcode"] = "Select";
    i["ins"] = {i["outs"][0], i["outs"][0], i["outs"][0]};
  });
  const std::string out = clitest::temp_dir();
  auto r = run("run " + k + " --outdir " + out + " --quiet");
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.err.find(k + ": instruction 1 'I-4' field 'ins[0]': Select predicate element 0 is "), std::string::npos)
      << r.err;
  EXPECT_TRUE(ends_with(r.err, " (kernel.py:42)\n")) << r.err;
  // Timing only, nothing is computed: the same kernel runs.
  EXPECT_EQ(run("run " + k + " --timing-only --quiet").code, 0);
}

TEST(SourceErrors, ALineWithoutAFileAndNoDebugInformation) {
  const std::string line_only = kernel([](json &i) { i["engine"] = "PE"; }, {{"lineno", 7}});
  auto r = run("run " + line_only + " --timing-only");
  EXPECT_TRUE(ends_with(r.err, "Activation, Pool) (line 7)\n")) << r.err;
  const std::string none = kernel([](json &i) {
    i["engine"] = "PE";
    i.erase("debug");
  });
  r = run("run " + none + " --timing-only");
  EXPECT_TRUE(ends_with(r.err, "(it runs on DVE, Activation, Pool)\n")) << r.err;  // nothing appended
}
