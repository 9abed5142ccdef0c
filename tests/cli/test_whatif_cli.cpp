// The performance engineer's loop from the command line (docs/profiling.md): a what-if in one flag (--set,
// compare --set-b), the verdict and --sensitivity on a kernel whose DMA fixed latency dominates by
// construction,
// --why, the per-command help, the labelled multi-core tables and an empty expected/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

// The helpers below live in namespace test_whatif_cli, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_whatif_cli {

using clitest::run;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
// kernel1: Load a [10, 10] fp32 tile, one DVE instruction, Save it (400 bytes each way). Both transfers lie
// on the critical path one after the other, and each waits the whole DMA fixed latency before its descriptors
// start (about 1.3 us against 15 ns of bytes): DMA latency dominates by construction.
const std::string kKernel1 = clitest::src("workloads/kernel1");
// On trn1 as shipped, a transfer's first byte is bounded twice over: by dma_latency_ns 850 and by DMA engine 0's
// processing of its 8 descriptors, 8 x dma_engine_descriptor_ns 106 = 848 ns (docs/timing-model.md 2.1), so halving
// one alone moves little. The latency tests take 53 ns per descriptor (8 x 53 = 424 < 425): latency alone bounds.
const std::string kLatencyArch = "'trn1+{dma_engine_descriptor_ns=53}'";

double total_of(const std::string &args) {
  const std::string dir = clitest::temp_dir();
  auto r = run("run " + kKernel1 + " --timing-only --quiet --arch " + kLatencyArch + " --stats " + dir + "/s.json " +
               args);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(clitest::read_file(dir + "/s.json"))["total_ns"].get<double>();
}
} // namespace

TEST(WhatIfCli, SetMovesTheTotalByTheHandComputedAmount) {
  const double base = total_of("");
  // dma_latency_ns 850 -> 425 on trn1: two transfers on the path (the load, then the store), each 425 ns sooner.
  EXPECT_NEAR(base - total_of("--set dma_latency_ns=425"), 2 * (850.0 - 425.0), 1e-6);
  // The engines' read rate 17 -> 34 B/ns moves only the load (the store writes to HBM at the write rate). Its last
  // piece is on the second engine (partitions 8-9: 2 descriptors of one 40-byte row, starting a stagger of 21.5
  // ns after the first engine, whose 8 descriptors end sooner): it ends 2 x 40 x (1/17 - 1/34) = 2.353 ns sooner
  // (each descriptor's time is rounded to a picosecond in both runs: within 0.002 ns).
  EXPECT_NEAR(base - total_of("--set dma_engine_bytes_per_ns=34"), 2 * 40 * (1 / 17.0 - 1 / 34.0), 0.002);
  // Two settings at once add up here (the rate only shortens the transfers, the latency only delays them).
  EXPECT_NEAR(base - total_of("--set dma_latency_ns=425 --set dma_engine_bytes_per_ns=34"),
              850.0 + 2 * 40 * (1 / 17.0 - 1 / 34.0), 0.002);
}

TEST(WhatIfCli, TheArchIsNamedWithItsSettingsEverywhere) {
  const std::string dir = clitest::temp_dir();
  auto r = run("run " + kKernel1 + " --timing-only --arch trn2 --set dma_latency_ns=425.0 --stats " + dir +
               "/s.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("arch trn2+{dma_latency_ns=425.0}, 3 instructions"), std::string::npos) << r.out;
  const json s = json::parse(clitest::read_file(dir + "/s.json"));
  EXPECT_EQ(s["arch"], "trn2+{dma_latency_ns=425.0}");
  // --arch takes the same form, and a file is named by its path (never by the "name" inside it).
  auto same = run("run " + kKernel1 + " --timing-only --arch 'trn2+{dma_latency_ns=425}' --json");
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_EQ(json::parse(same.out)["arch"], "trn2+{dma_latency_ns=425}");
  const std::string file = dir + "/mine.json";
  std::ofstream(file) << clitest::read_file(clitest::src("sim/arch/trn2.json"));
  auto f = run("run " + kKernel1 + " --timing-only --arch " + file + " --set pe_ghz=3 --json");
  ASSERT_EQ(f.code, 0) << f.err;
  EXPECT_EQ(json::parse(f.out)["arch"], file + "+{pe_ghz=3}");
}

TEST(WhatIfCli, BadSettingsAreRefusedNamingTheKey) {
  auto unknown = run("run " + kKernel1 + " --set dma_gbps=54.4");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_EQ(unknown.err,
            "neuronsim: --set dma_gbps=54.4: unknown architecture parameter (`neuronsim arch --keys` "
            "lists them)\n");
  auto range = run("run " + kKernel1 + " --set dma_latency_ns=-1");
  EXPECT_EQ(range.code, 2);
  EXPECT_EQ(range.err,
            "neuronsim: --set dma_latency_ns=-1: the value must be in [0, 1e+06], got -1 (arch_params.def)\n");
  auto twice = run("run " + kKernel1 + " --arch 'trn2+{pe_ghz=2}' --set pe_ghz=3");
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("pe_ghz is set twice"), std::string::npos) << twice.err;
  auto shape = run("run " + kKernel1 + " --set pe_ghz");
  EXPECT_EQ(shape.code, 2);
  EXPECT_NE(shape.err.find("--set takes KEY=VALUE"), std::string::npos) << shape.err;
  auto keys = run("arch --keys");
  ASSERT_EQ(keys.code, 0);
  EXPECT_NE(keys.out.find("dma_latency_ns  [0, 1e+06]  latency from a transfer entering its queue to its first byte"), std::string::npos)
      << keys.out;
}

TEST(WhatIfCli, CompareOneKernelUnderTwoMachines) {
  auto r = run("compare " + kKernel1 + " --arch " + kLatencyArch + " --set-b dma_latency_ns=425");
  ASSERT_EQ(r.code, 0) << r.err;
  // 1987.8 -> 1137.8 ns (SetMovesTheTotalByTheHandComputedAmount): -850 / 1987.8 = -42.8%.
  EXPECT_NE(r.out.find("B: " + kKernel1 + " (trn1+{dma_engine_descriptor_ns=53,dma_latency_ns=425})"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("-42.8%"), std::string::npos) << r.out;
  auto arch_b = run("compare " + kKernel1 + " --arch trn2 --arch-b trn1");
  ASSERT_EQ(arch_b.code, 0) << arch_b.err;
  EXPECT_NE(arch_b.out.find("A: " + kKernel1 + " (trn2)\nB: " + kKernel1 + " (trn1)"), std::string::npos)
      << arch_b.out;
  EXPECT_EQ(run("compare " + kKernel1).code, 2); // one file and no second machine
}

TEST(WhatIfCli, MultiCoreSensitivityScalesTheDeviceHbmTheRunUses) {
  // A multi-core run's cores share the device's HBM (hbm_device_bytes_per_ns); the core's share hbm_bytes_per_ns
  // is not read there, so --sensitivity doubles the device's, and its rerun equals a direct run with it doubled.
  const std::string k = clitest::src("workloads/multicore/matmul_lnc2");
  auto r = run("run " + k + " --timing-only --sensitivity --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  json hbm;
  for (const auto &row : j["sensitivity"])
    if (row["parameter"] == "HBM rate x2") hbm = row;
  ASSERT_TRUE(hbm.is_object()) << j["sensitivity"];
  ASSERT_TRUE(hbm["used"].get<bool>());
  const std::string arch = hbm["arch"].get<std::string>();
  const auto at = arch.find("hbm_device_bytes_per_ns=");
  ASSERT_NE(at, std::string::npos) << arch;
  EXPECT_EQ(arch.find("{hbm_bytes_per_ns"), std::string::npos) << arch;
  auto direct = run("run " + k + " --timing-only --json --arch '" + arch + "'");
  ASSERT_EQ(direct.code, 0) << direct.err;
  EXPECT_DOUBLE_EQ(json::parse(direct.out)["total_ns"].get<double>(), hbm["total_ns"].get<double>());
}

TEST(WhatIfCli, LatencyDominatedKernelGetsTheLatencyVerdictAndSensitivityRanksLatencyFirst) {
  auto r = run("run " + kKernel1 + " --arch " + kLatencyArch + " --timing-only --sensitivity --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["analysis"]["verdict"]["kind"], "dma-latency");
  EXPECT_EQ(j["analysis"]["verdict"]["text"].get<std::string>().rfind("DMA latency-bound (fixed latency ", 0),
            0u);
  // Halving the latency saves 850 ns of 1987.8: 1987.8 / 1137.8 = 1.747x, the largest speed-up.
  const json &s = j["sensitivity"];
  ASSERT_EQ(s.size(), 11u);
  EXPECT_EQ(s[0]["parameter"], "DMA latency /2");
  EXPECT_EQ(s[0]["arch"], "trn1+{dma_engine_descriptor_ns=53,dma_latency_ns=425}");
  EXPECT_NEAR(s[0]["speedup"].get<double>(),
              j["total_ns"].get<double>() / (j["total_ns"].get<double>() - 850.0), 1e-9);
  // Sorted fastest first, then the parameters kernel1 never reads: it runs no instruction on PE or ACT (its store
  // is triggered from GpSimd, its load from SP).
  std::set<std::string> unused;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!s[i]["used"].get<bool>()) {
      unused.insert(s[i]["parameter"].get<std::string>());
      EXPECT_FALSE(s[i].contains("speedup")) << s[i];
      continue;
    }
    EXPECT_TRUE(unused.empty()) << "a used parameter after an unused one: " << s[i];
    if (i > 0) {
      EXPECT_LE(s[i]["speedup"].get<double>(), s[i - 1]["speedup"].get<double>());
    }
  }
  EXPECT_EQ(unused, (std::set<std::string>{"PE clock x2", "ACT clock x2"}));
  // The text form: the verdict after the summary and the sorted table.
  auto text = run("run " + kKernel1 + " --arch " + kLatencyArch + " --timing-only --sensitivity --why");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("verdict: DMA latency-bound"), std::string::npos) << text.out;
  // Once: the summary ends with it, the --why tables do not repeat it.
  EXPECT_EQ(text.out.find("verdict: ", text.out.find("verdict: ") + 1), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("   1.747x       1.14 us  DMA latency /2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("        -             -  PE clock x2           not used by this run\n"), std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("x       1.99 us  PE clock"), std::string::npos) << text.out;
  // --why: the DMA queue line with its bytes (10 x 10 fp32), one fixed latency per transfer (850 ns to the first
  // byte + 10 ns to the completion), its per-row cost (10 descriptors x 53 ns on their two engines + 2 pieces x 7
  // ns = 544 ns) and its transfer (10 rows of 40 B at 17 B/ns = 23.5 ns).
  EXPECT_NE(text.out.find("qSyncIO0                1        400   0.45 GB/s   34.0 GB/s    860.0 ns    544.0 ns     "
                          "23.5 ns"),
            std::string::npos)
      << text.out;
}

TEST(WhatIfCli, EveryCommandsHelpListsItsOwnOptions) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run", "--timing-only"}, {"run", "--set KEY=VALUE"}, {"run", "--sensitivity"},  {"compare", "--set-b"},
      {"encode", "--gen"},      {"disasm", "FILE_OR_DIR"},  {"validate", "--bundles"}, {"isa", "--keys"},
      {"arch", "--keys"},       {"report", "RESULTS.csv"}};
  for (const auto &[cmd, option] : cases) {
    auto r = run(cmd + " --help");
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_NE(r.out.find(option), std::string::npos) << cmd << " --help lacks " << option << ":\n" << r.out;
    EXPECT_EQ(r.out.find("cycle-level simulator"), std::string::npos) << cmd << " --help is the global help";
  }
  // The global help names the commands and points at theirs.
  EXPECT_NE(run("--help").out.find("neuronsim COMMAND --help"), std::string::npos);
}

TEST(WhatIfCli, MultiCoreTablesAreLabelledPerCore) {
  auto r = run("run " + clitest::src("workloads/kernel1") + " --timing-only --cores 2");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto c0 = r.out.find("core 0 (shard 0, rank 0):\nsimulated time:");
  const auto c1 = r.out.find("core 1 (shard 0, rank 1):\nsimulated time:");
  EXPECT_NE(c0, std::string::npos) << r.out;
  EXPECT_NE(c1, std::string::npos) << r.out;
  EXPECT_LT(c0, c1);
}

TEST(WhatIfCli, AnEmptyExpectedFolderComparesNothing) {
  const std::string dir = clitest::temp_dir();
  fs::copy_file(clitest::src("workloads/kernel1/kernel1.bir.json"), dir + "/k.bir.json");
  fs::create_directory(dir + "/expected");
  auto r = run("run " + dir + " --outdir " + dir + "/out");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("no expected outputs in " + dir + "/expected (nothing compared)"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("MISMATCH"), std::string::npos) << r.out;
}

TEST(WhatIfCli, EncodeAndValidateTakeSettingsToo) {
  const std::string dir = clitest::temp_dir();
  auto e = run("encode " + kKernel1 + " --gen v3 -o " + dir + "/b --set dma_ring_depth=2");
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find("(v3, arch trn2+{dma_ring_depth=2})"), std::string::npos) << e.out;
  auto v = run("validate --bir " + kKernel1 + " --bundles " + dir + "/b --set dma_ring_depth=2");
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  auto bad = run("validate --bir " + kKernel1 + " --bundles " + dir + "/b --set dma_ring_depth=0");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--set dma_ring_depth=0: the value must be in [1, 1024], got 0"), std::string::npos)
      << bad.err;
}

}  // namespace test_whatif_cli
