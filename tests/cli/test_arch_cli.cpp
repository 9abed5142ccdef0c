// `neuronsim arch` and `--arch FILE.json` (README "Architectures"): the built-in architectures listed and shown,
// a shown one read back unchanged, and hypothetical parts whose timing moves by what the cost formulas say.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

using clitest::run;
using nlohmann::json;

namespace {
const std::string kKernel1 = clitest::src("workloads/kernel1");

// The --stats document of a timing-only run of kernel1 on `arch`.
json stats(const std::string &dir, const std::string &arch) {
  const std::string file = dir + "/stats.json";
  auto r = run("run " + kKernel1 + " --timing-only --quiet --arch " + arch + " --stats " + file);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(clitest::read_file(file));
}

// sim/arch/trn2.json with one value changed, written as DIR/NAME.
std::string trn2_with(const std::string &dir, const std::string &name, const std::string &key, const json &value) {
  json a = json::parse(clitest::read_file(clitest::src("sim/arch/trn2.json")));
  a[key]["value"] = value;
  const std::string path = dir + "/" + name;
  std::ofstream(path) << a.dump(1);
  return path;
}
} // namespace

TEST(ArchCli, ListGivesEachBuiltInWithItsGenerationAndClocks) {
  auto r = run("arch --list");
  ASSERT_EQ(r.code, 0) << r.err;
  // sim/arch/*.json: trn1 is NeuronCore-v2 with PE at 2.8 GHz, trn2 v3 with DVE at 0.96 GHz, trn3 v4.
  EXPECT_EQ(r.out,
            "trn1  NeuronCore-v2  PE 2.8 GHz, ACT 1.4 GHz, POOL 1.4 GHz, DVE 1.12 GHz, SP 1.4 GHz\n"
            "trn2  NeuronCore-v3  PE 2.4 GHz, ACT 1.2 GHz, POOL 1.2 GHz, DVE 0.96 GHz, SP 1.2 GHz\n"
            "trn3  NeuronCore-v4  PE 2.4 GHz, ACT 1.2 GHz, POOL 1.2 GHz, DVE 1.2 GHz, SP 1.2 GHz\n");
}

TEST(ArchCli, ShowPrintsTheCompiledInFileAndItReadsBackToTheSameTiming) {
  auto r = run("arch --show trn2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, clitest::read_file(clitest::src("sim/arch/trn2.json")));
  const std::string dir = clitest::temp_dir();
  std::ofstream(dir + "/x.json") << r.out;
  json a = stats(dir, "trn2"), b = stats(dir, dir + "/x.json");
  EXPECT_EQ(b["arch"], dir + "/x.json"); // a file is named by its path (its "name" is the built-in it copies)
  for (json *s : {&a, &b})
    s->erase("command_line"), s->erase("arch");
  EXPECT_EQ(a, b);  // every figure: total, engines, DMA, profile, critical path
  EXPECT_EQ(run("arch --show " + dir + "/x.json").out, r.out);  // a file is checked and printed as read
}

TEST(ArchCli, DoubledDmaBandwidthSavesEachDescriptorItsStreamingTime) {
  // kernel1 moves a [10, 10] float32 tensor in (Load) and out (Save): 10 descriptors of 40 bytes each, rows
  // 0-7 on DMA engine 0 and 8-9 on engine 1 (dma_partitions_per_engine 8). A descriptor costs
  // dma_descriptor_overhead_ns + 40 B / dma_engine_bytes_per_ns (docs/timing-model.md 2.2; HBM's 360 B/ns floor
  // is far below), so doubling 27.2 B/ns saves 40/27.2 - 40/54.4 = 0.7353 ns per descriptor: 20 descriptors of
  // DMA-engine time, and on the critical path 8 per transfer (engine 0 finishes last) x 2 transfers.
  const std::string dir = clitest::temp_dir();
  const json a = stats(dir, "trn2");
  const json b = stats(dir, trn2_with(dir, "fast_dma.json", "dma_engine_bytes_per_ns", 54.4));
  const double per_desc = 40.0 / 27.2 - 40.0 / 54.4;
  EXPECT_EQ(a["dma"]["descriptors"], 20);
  EXPECT_NEAR(a["dma"]["busy_ns"].get<double>() - b["dma"]["busy_ns"].get<double>(), 20 * per_desc, 0.03);
  EXPECT_NEAR(a["total_ns"].get<double>() - b["total_ns"].get<double>(), 16 * per_desc, 0.03);
  EXPECT_EQ(a["engines"]["DVE"]["busy_ns"], b["engines"]["DVE"]["busy_ns"]);  // the engines' own work is unchanged
}

TEST(ArchCli, DoubledDveClockHalvesTheDveInstruction) {
  // kernel1's one DVE instruction (TensorScalarPtr on [10, 10]) occupies DVE for MIN_II = 64 cycles
  // (min_ii_cycles), and its dependant (the Save) sees its result sbuf_access_startup_cycles 60 +
  // dependent_overhead_cycles 100 later (engines/cost/cost.cpp): 66.667 ns busy at trn2's 0.96 GHz, 33.333 ns at
  // 1.92 GHz. It is on the critical path (Load -> DVE -> Save) with all 224 cycles, so the total shrinks by
  // 224/0.96 - 224/1.92 = 116.667 ns.
  const std::string dir = clitest::temp_dir();
  const json a = stats(dir, "trn2");
  const json b = stats(dir, trn2_with(dir, "fast_dve.json", "dve_ghz", 1.92));
  EXPECT_EQ(a["engines"]["DVE"]["cycles"], 64);
  EXPECT_EQ(b["engines"]["DVE"]["cycles"], 64);
  EXPECT_NEAR(a["engines"]["DVE"]["busy_ns"].get<double>(), 64 / 0.96, 0.001);
  EXPECT_NEAR(b["engines"]["DVE"]["busy_ns"].get<double>(), 64 / 1.92, 0.001);
  EXPECT_NEAR(a["total_ns"].get<double>() - b["total_ns"].get<double>(), 224 / 0.96 - 224 / 1.92, 0.002);
  EXPECT_EQ(a["dma"]["busy_ns"], b["dma"]["busy_ns"]);  // the DMA engines' work is unchanged
}

TEST(ArchCli, ArchitectureFilesWorkWhereverArchIsTaken) {
  const std::string dir = clitest::temp_dir();
  const std::string fast = trn2_with(dir, "fast_dve.json", "dve_ghz", 1.92);
  auto c = run("compare " + kKernel1 + " " + kKernel1 + " --arch " + fast);
  EXPECT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("A: " + kKernel1 + " (" + fast + ")"), std::string::npos) << c.out;
  auto e = run("encode " + kKernel1 + " --gen v3 -o " + dir + "/b --arch " + fast);
  EXPECT_EQ(e.code, 0) << e.err;
  auto v = run("validate --bir " + kKernel1 + " --bundles " + dir + "/b --arch " + fast);
  EXPECT_EQ(v.code, 0) << v.out << v.err;
}

TEST(ArchCli, RefusalsNameWhatIsWrong) {
  auto none = run("arch");
  EXPECT_EQ(none.code, 2);
  EXPECT_EQ(none.err,
            "neuronsim: arch takes --list, --keys or --show NAME|FILE.json (neuronsim arch --help)\n");
  auto unknown = run("arch --show trn9");
  EXPECT_EQ(unknown.code, 3);
  EXPECT_EQ(unknown.err,
            "neuronsim: unknown architecture 'trn9' (built in: trn1, trn2, trn3; a file of your own "
            "is named by a path ending in .json) (did you mean 'trn1'?)\n");
  const std::string dir = clitest::temp_dir();
  const std::string bad = trn2_with(dir, "bad.json", "sp_ghz", 0);
  auto show = run("arch --show " + bad);
  EXPECT_EQ(show.code, 3);
  EXPECT_EQ(show.err, "neuronsim: " + bad + ": field 'sp_ghz': the value must be in [0.01, 100], got 0 "
                      "(arch_params.def)\n");
  EXPECT_EQ(show.out, "");
  // The run refuses the file before it starts: no output folder is made.
  auto r = run("run " + kKernel1 + " --outdir " + dir + "/out --arch " + bad);
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, show.err);
  EXPECT_FALSE(std::filesystem::exists(dir + "/out"));
}
