// Determinism (DESIGN.md section 4): the same run in two separate processes of the CLI gives bit-identical
// output .npy files, identical stats JSON and an identical trace -- with given inputs and with generated ones,
// on each architecture.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli/bad_inputs/run_process.hpp"
#include "support/temp_dir.hpp"

// The helpers below live in namespace test_determinism, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_determinism {

namespace fs = std::filesystem;
using neuronsim::testing::temp_dir;
using neuronsim::testing::read_file;
using neuronsim::testing::run_process;
using neuronsim::testing::snapshot;

namespace {

struct Run {
  std::string stdout_text;
  std::map<std::string, std::string> outputs;  // file name -> bytes
  std::string stats, trace;
};

// One CLI process; every path it writes lives in `dir`, and paths in its outputs are made relative to `dir` so
// that two runs into two folders compare equal.
Run run_once(const std::vector<std::string> &kernel_args, const std::string &dir) {
  std::vector<std::string> args = {"run"};
  args.insert(args.end(), kernel_args.begin(), kernel_args.end());
  args.insert(args.end(), {"--outdir", dir + "/out", "--stats", dir + "/stats.json", "--trace", dir + "/trace.json"});
  const auto r = run_process(NEURONSIM_BINARY, args, dir, 120);
  EXPECT_TRUE(r.started && !r.timed_out && !r.signaled && r.exit_code == 0) << r.err;
  Run out;
  out.stdout_text = r.out;
  for (const auto &[path, bytes] : snapshot(dir + "/out")) out.outputs[fs::path(path).filename().string()] = bytes;
  out.stats = read_file(dir + "/stats.json");
  out.trace = read_file(dir + "/trace.json");
  auto strip = [&](std::string &s) {
    for (size_t p; (p = s.find(dir)) != std::string::npos;) s.replace(p, dir.size(), "<dir>");
  };
  strip(out.stdout_text);
  strip(out.stats);
  strip(out.trace);
  return out;
}

void expect_same_twice(const std::vector<std::string> &kernel_args) {
  const std::string a = temp_dir("det-a"), b = temp_dir("det-b");
  ASSERT_FALSE(a.empty() || b.empty());
  const Run r1 = run_once(kernel_args, a), r2 = run_once(kernel_args, b);
  ASSERT_FALSE(r1.outputs.empty()) << "no outputs written";
  ASSERT_FALSE(r1.stats.empty()) << "no stats written";
  EXPECT_EQ(r1.outputs.size(), r2.outputs.size());
  for (const auto &[name, bytes] : r1.outputs) {
    auto it = r2.outputs.find(name);
    ASSERT_NE(it, r2.outputs.end()) << name << " only in the first run";
    EXPECT_TRUE(bytes == it->second) << name << " differs between two runs";
  }
  EXPECT_EQ(r1.stats, r2.stats);
  EXPECT_TRUE(r1.trace == r2.trace) << "trace differs between two runs";
  EXPECT_EQ(r1.stdout_text, r2.stdout_text);
  fs::remove_all(a);
  fs::remove_all(b);
}

const std::string kKernel1 = std::string(NEURONSIM_SOURCE_DIR) + "/workloads/kernel1";

TEST(Determinism, WorkloadWithGivenInputsTwiceIsBitIdentical) { expect_same_twice({kKernel1}); }

TEST(Determinism, GeneratedInputsTwiceAreBitIdentical) {
  // A bare .bir.json: the input is generated (seeded by the tensor name), not read from the workload folder.
  expect_same_twice({kKernel1 + "/kernel1.bir.json"});
}

TEST(Determinism, EveryArchTwiceIsBitIdentical) {
  for (const char *arch : {"trn2", "trn3"}) {
    SCOPED_TRACE(arch);
    expect_same_twice({kKernel1, "--arch", arch});
  }
}

} // namespace

}  // namespace test_determinism
