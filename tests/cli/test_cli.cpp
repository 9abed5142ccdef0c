// One test per `neuronsim` option (DESIGN.md section 5), against the real binary.
// kernel1 computes b = a - 1.0 (real compiler output, workloads/kernel1).
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/cli_run.hpp"
#include "neuronsim/engines/npy_dtype.hpp"
#include "neuronsim/io/npy.hpp"

// The helpers below live in namespace test_cli, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_cli {

using clitest::run;
using clitest::src;
namespace fs = std::filesystem;

namespace {
const std::string kKernel = src("workloads/kernel1/kernel1.bir.json");
const std::string kInput = src("workloads/kernel1/inputs/a.npy");

std::vector<float> floats(const std::string &path) {
  auto a = neuronsim::io::read_npy(path);
  return neuronsim::engines::npy_to_f32(a);
}

// "simulated time: 4.27 us (4270.6 ns)": the exact ns in parentheses.
double simulated_ns(const std::string &out) {
  auto p = out.find("simulated time: ");
  if (p != std::string::npos)
    p = out.find('(', p);
  return p == std::string::npos ? -1.0 : std::stod(out.substr(p + 1));
}
} // namespace

TEST(Cli, NoArgumentsPrintsHelpAndExitsUsage) {
  auto r = run("");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("usage:"), std::string::npos);
}

TEST(Cli, HelpAndVersion) {
  EXPECT_EQ(run("--help").code, 0);
  auto r = run("run --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--timing-only"), std::string::npos);
  auto v = run("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out.rfind("neuronsim ", 0), 0u);
  EXPECT_EQ(v.err.find("SystemC"), std::string::npos) << "the SystemC banner must not leak into our output";
}

TEST(Cli, RunWithoutKernelRunsTheBundledWorkloadAndChecksIt) {
  const std::string out = clitest::temp_dir();
  auto r = run("run --outdir " + out);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("bundled default workload"), std::string::npos);
  EXPECT_NE(r.out.find("outputs match"), std::string::npos) << r.out;
}

TEST(Cli, InputAndOutdirComputeAMinusOne) {
  const std::string out = clitest::temp_dir();
  auto r = run("run " + kKernel + " --input a=" + kInput + " --outdir " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  auto a = floats(kInput), b = floats(out + "/b.npy");
  ASSERT_EQ(a.size(), 100u);
  ASSERT_EQ(b.size(), 100u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(b[i], a[i] - 1.0f) << i;
}

TEST(Cli, InputsDirectory) {
  const std::string out = clitest::temp_dir();
  auto r = run("run " + kKernel + " --inputs " + src("workloads/kernel1/inputs") + " --outdir " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("input  a: " + src("workloads/kernel1/inputs/a.npy")), std::string::npos) << r.out;
}

TEST(Cli, MissingInputsAreGeneratedDeterministically) {
  const std::string o1 = clitest::temp_dir(), o2 = clitest::temp_dir();
  ASSERT_EQ(run("run " + kKernel + " --outdir " + o1).code, 0);
  ASSERT_EQ(run("run " + kKernel + " --outdir " + o2).code, 0);
  EXPECT_EQ(clitest::read_file(o1 + "/b.npy"), clitest::read_file(o2 + "/b.npy"));
  for (float v : floats(o1 + "/b.npy")) EXPECT_TRUE(v >= -2.0f && v < 0.0f) << v;  // uniform [-1,1) minus 1
}

TEST(Cli, ExpectPassesAndFailsWithTheWorstElement) {
  const std::string out = clitest::temp_dir(), wrong = clitest::temp_dir();
  auto ok = run("run " + kKernel + " --input a=" + kInput + " --outdir " + out + " --expect " +
                src("workloads/kernel1/expected"));
  EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
  // An expected tensor that is off by +0.5 at element 37 only.
  auto b = neuronsim::io::read_npy(src("workloads/kernel1/expected/b.npy"));
  auto v = neuronsim::engines::npy_to_f32(b);
  v[37] += 0.5f;
  neuronsim::io::write_npy(wrong + "/b.npy", neuronsim::engines::npy_from_f32(v, b.shape, neuronsim::isa::Dtype::float32));
  auto bad = run("run " + kKernel + " --input a=" + kInput + " --outdir " + out + " --expect " + wrong);
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.out.find("MISMATCH b[37]"), std::string::npos) << bad.out;
  // --atol large enough accepts it.
  auto loose = run("run " + kKernel + " --input a=" + kInput + " --outdir " + out + " --expect " + wrong +
                   " --atol 0.6");
  EXPECT_EQ(loose.code, 0) << loose.out;
  auto rel = run("run " + kKernel + " --input a=" + kInput + " --outdir " + out + " --expect " + wrong +
                 " --rtol 1000");
  EXPECT_EQ(rel.code, 0) << rel.out;
}

TEST(Cli, ArchChangesClocks) {
  const std::string out = clitest::temp_dir();
  auto t1 = run("run " + kKernel + " --timing-only --arch trn1");
  auto t2 = run("run " + kKernel + " --timing-only --arch trn2");
  ASSERT_EQ(t1.code, 0);
  ASSERT_EQ(t2.code, 0);
  EXPECT_NE(t2.out.find("arch trn2"), std::string::npos);
  // DVE's 64-cycle subtract: 64 / 1.12 GHz = 57.1 ns on trn1, 64 / 0.96 GHz = 66.7 ns on trn2.
  EXPECT_NE(t1.out.find("57.1"), std::string::npos) << t1.out;
  EXPECT_NE(t2.out.find("66.7"), std::string::npos) << t2.out;
  EXPECT_EQ(run("run " + kKernel + " --arch trn9").code, 2);
}

TEST(Cli, StatsJson) {
  const std::string dir = clitest::temp_dir();
  auto r = run("run " + kKernel + " --outdir " + dir + " --stats " + dir + "/s.json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(clitest::read_file(dir + "/s.json"));
  EXPECT_EQ(j["arch"], "trn1");
  for (const char *e : {"PE", "ACT", "POOL", "DVE", "SP"}) {
    ASSERT_TRUE(j["engines"].contains(e)) << e;
    for (const char *k : {"instructions", "busy_ns", "utilization", "cycles"}) EXPECT_TRUE(j["engines"][e].contains(k));
  }
  EXPECT_EQ(j["engines"]["DVE"]["instructions"], 1);
  EXPECT_EQ(j["engines"]["DVE"]["cycles"], 64);
  EXPECT_EQ(j["dma"]["bytes"], 800);  // 10x10 fp32 in and out
  EXPECT_DOUBLE_EQ(j["total_ns"].get<double>(), simulated_ns(r.out) > 0 ? j["total_ns"].get<double>() : -1);
}

TEST(Cli, TraceJsonHasTracksForEnginesRingsAndDmaEngines) {
  const std::string dir = clitest::temp_dir();
  auto r = run("run " + kKernel + " --outdir " + dir + " --trace " + dir + "/t.json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(clitest::read_file(dir + "/t.json"));
  int slices = 0, tracks = 0, flows = 0;
  for (const auto &e : j["traceEvents"]) {
    if (e["ph"] == "X") ++slices;
    if (e["ph"] == "M" && e["name"] == "thread_name") ++tracks;
    if (e["ph"] == "s") ++flows;
  }
  // kernel1 is Load a -> TensorScalarPtr (DVE) -> Save b on 10 x 10 fp32 (sim/trace.cpp, docs/timing-model.md 6):
  //  - slices: the two DMA triggers on SP and the DVE op (3); each transfer on its queue's ring slot (2); each
  //    transfer on the two DMA engines serving partitions 0-7 and 8-9 (4): 9;
  //  - tracks: five engines, ring slot 0 of qSyncIO0 (the load) and of qSyncIO1 (the save), 16 DMA engines: 23;
  //  - flows: trigger -> load -> subtract -> save trigger -> save: 4.
  EXPECT_EQ(slices, 3 + 2 + 4);
  EXPECT_EQ(tracks, 5 + 2 + 16);
  EXPECT_EQ(flows, 4);
}

TEST(Cli, TimingOnlyWritesNoOutputsAndKeepsTheTime) {
  const std::string out = clitest::temp_dir() + "/o";
  auto full = run("run " + kKernel + " --outdir " + out + "-full");
  auto fast = run("run " + kKernel + " --timing-only --outdir " + out);
  ASSERT_EQ(full.code, 0);
  ASSERT_EQ(fast.code, 0);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_DOUBLE_EQ(simulated_ns(full.out), simulated_ns(fast.out));
}

TEST(Cli, IsaJsonDump) {
  auto r = run("isa --json");
  ASSERT_EQ(r.code, 0);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["alu_ops"].size(), 33u);
  EXPECT_EQ(j["alu_ops"][32]["name"], "mod_int");
  EXPECT_EQ(j["alu_ops"][32]["wire"]["v4"], 4294967240u);
  EXPECT_TRUE(j["alu_ops"][24]["wire"]["v4"].is_null());  // average
  EXPECT_EQ(j["alu_ops"][20]["wire"]["v4"], 0x13);        // is_gt reordered
  ASSERT_EQ(j["instruction_types"].size(), 110u);
  EXPECT_EQ(j["instruction_types"][29]["name"], "TensorScalarPtr");
  EXPECT_EQ(j["instruction_types"][29]["executes"], true);
  auto text = run("isa");
  EXPECT_EQ(text.code, 0);
  EXPECT_NE(text.out.find("mod_int"), std::string::npos);
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(run("frobnicate").code, 2);
  EXPECT_EQ(run("run " + kKernel + " --no-such-option").code, 2);
  EXPECT_EQ(run("run " + kKernel + " --input a").code, 2);
  EXPECT_EQ(run("run " + kKernel + " --rtol abc").code, 2);
}

TEST(Cli, InvalidInputExitsThreeWithTheFileName) {
  auto r = run("run /nonexistent/k.bir.json");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("/nonexistent/k.bir.json"), std::string::npos) << r.err;
  auto wrong = run("run " + kKernel + " --input nosuch=" + kInput);
  EXPECT_EQ(wrong.code, 3);
  EXPECT_NE(wrong.err.find("nosuch"), std::string::npos) << wrong.err;
}

TEST(Cli, WorkloadFolderSuppliesItsTolerance) {
  // workloads/matmul_tiled/tolerance.json: rtol = 2^-8 (the bf16 result's rounding), atol = K u max sum|ab| (1 + 2^-8)
  // (bf16 inputs, fp32 accumulation).
  const std::string out = clitest::temp_dir();
  auto r = run("run " + src("workloads/matmul_tiled") + " --outdir " + out);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("outputs match"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rtol 0.00390625, atol 0.0003186"), std::string::npos) << r.out;
  // An explicit tolerance overrides it: exact comparison fails for the bf16 result of an fp32-accumulated matmul.
  auto exact = run("run " + src("workloads/matmul_tiled") + " --outdir " + out + " --rtol 0 --atol 0");
  EXPECT_EQ(exact.code, 1) << exact.out;
}

// A key kernel1's TensorScalarPtr does not have: the run goes on (exit 0) and stderr says which key was ignored
// and what it may have meant (isa/tables/inst_keys.def); the real compiler output itself gives no warning.
TEST(Cli, UnknownKeysAreWarnedAboutWithTheClosestKey) {
  const std::string dir = clitest::temp_dir();
  auto m = nlohmann::json::parse(clitest::read_file(kKernel));
  m["functions"][0]["blocks"][0]["instructions"][1]["revers0"] = false;
  std::ofstream(dir + "/k.bir.json") << m.dump();
  auto r = run("run " + dir + "/k.bir.json --input a=" + kInput + " --outdir " + dir + "/out");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("neuronsim: warning: " + dir +
                       "/k.bir.json: instruction 1 'I-4' field 'revers0': unknown key for TensorScalarPtr, ignored "
                       "(did you mean 'reverse0'?)"),
            std::string::npos)
      << r.err;
  auto clean = run("run " + kKernel + " --input a=" + kInput + " --outdir " + dir + "/out");
  EXPECT_EQ(clean.err, "");
  fs::remove_all(dir);
}

// An output tensor whose name would leave --outdir ("../b") is written inside it, with '/' as '_'.
TEST(Cli, OutputNamesStayInsideTheOutdir) {
  const std::string dir = clitest::temp_dir();
  auto m = nlohmann::json::parse(clitest::read_file(kKernel));
  for (auto &a : m["functions"][0]["allocations"])
    if (a["name"] == "b_set") a["memorylocations"][0]["name"] = "../b";
  for (auto &arg : m["functions"][0]["blocks"][0]["instructions"][2]["outs"]) arg["memsetref"] = "b_set";
  std::ofstream(dir + "/k.bir.json") << m.dump();
  auto r = run("run " + dir + "/k.bir.json --input a=" + kInput + " --outdir " + dir + "/out");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/out/.._b.npy")) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/b.npy"));
  const auto b = floats(dir + "/out/.._b.npy"), a = floats(kInput);
  EXPECT_EQ(b[7], a[7] - 1.0f);
  fs::remove_all(dir);
}

// Multi-core runs (docs/multicore.md): the LNC=2 matmul on trn2 matches its numpy-independent reference
// (workloads/multicore/matmul_lnc2/expected), prints a line per core and the device's, and --stats has one
// document per core; trn1 has no logical cores.
TEST(Cli, LncTwoMatmulSplitsBetweenTheCores) {
  const std::string out = clitest::temp_dir();
  auto r = run("run " + clitest::src("workloads/multicore/matmul_lnc2") + " --arch trn2 --lnc 2 --outdir " + out +
               " --stats " + out + "/s.json --trace " + out + "/t.json");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("outputs match"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("core 1 (shard 1, rank 0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device: 2 cores (LNC=2)"), std::string::npos) << r.out;
  const auto doc = nlohmann::json::parse(clitest::read_file(out + "/s.json"));
  ASSERT_EQ(doc.at("cores").size(), 2u);
  EXPECT_EQ(doc.at("cores")[1].at("shard"), 1);
  EXPECT_EQ(doc.at("device").at("cores"), 2);
  // The device's HBM and DMA engines: every DMA of matmul_lnc2 is a Load or Save between DRAM and SBUF, so the
  // device's HBM carried the cores' DMA bytes; its utilization is those bytes over one trn2 device's 2900 B/ns for
  // the run's time, the DMA engines' their busy time over 2 cores x 16 engines for that time.
  EXPECT_NE(r.out.find("device HBM: "), std::string::npos) << r.out;
  const auto &dev = doc.at("device");
  EXPECT_EQ(dev.at("devices"), 1);
  EXPECT_EQ(dev.at("hbm_device_bytes_per_ns").get<double>(), 2900.0);
  const double cores_bytes = doc.at("cores")[0].at("dma").at("bytes").get<double>() +
                             doc.at("cores")[1].at("dma").at("bytes").get<double>();
  EXPECT_GT(cores_bytes, 0.0);
  EXPECT_EQ(dev.at("hbm_bytes").get<double>(), cores_bytes);
  const double total = dev.at("total_ns").get<double>();
  EXPECT_NEAR(dev.at("hbm_utilization").get<double>(), cores_bytes / (2900.0 * total), 1e-12);
  EXPECT_EQ(dev.at("dma_engines"), 32);
  const double busy = doc.at("cores")[0].at("dma").at("busy_ns").get<double>() +
                      doc.at("cores")[1].at("dma").at("busy_ns").get<double>();
  EXPECT_NEAR(dev.at("dma_busy_ns").get<double>(), busy, 1e-6);
  EXPECT_NEAR(dev.at("dma_utilization").get<double>(), busy / (32 * total), 1e-12);
  // The trace: one track group (pid) per core, each with its instructions.
  std::map<int, int> slices;
  const auto trace = nlohmann::json::parse(clitest::read_file(out + "/t.json"));
  for (const auto &e : trace.at("traceEvents"))
    if (e.at("ph") == "X") ++slices[e.at("pid").get<int>()];
  EXPECT_EQ(slices.size(), 2u);
  EXPECT_GT(slices[1], 0);
  EXPECT_EQ(slices[1], slices[2]);  // the same program on both cores
  auto bad = run("run " + clitest::src("workloads/multicore/matmul_lnc2") + " --arch trn1 --lnc 2 --timing-only");
  EXPECT_EQ(bad.code, 3) << bad.err;
  EXPECT_NE(bad.err.find("LNC=2"), std::string::npos) << bad.err;
}

// Per-rank data (docs/multicore.md): with --cores 2 --lnc 1 each rank has its own DRAM; tp_mlp_2ranks reads
// inputs/rank<r>/w1.npy, w2.npy for rank r and the replicated inputs/xT.npy for both, and writes
// OUTDIR/rank<r>/y.npy (the AllReduce gives both ranks the same y). An --expect folder with rank folders is
// compared per rank.
TEST(Cli, RanksReadTheirOwnInputsAndWriteTheirOwnOutputs) {
  const std::string out = clitest::temp_dir();
  const std::string w = clitest::src("workloads/multicore/tp_mlp_2ranks");
  auto r = run("run " + w + " --arch trn2 --cores 2 --outdir " + out + "/o");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("input  rank1 w1: " + w + "/inputs/rank1/w1.npy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("input  rank1 xT: " + w + "/inputs/xT.npy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("outputs match"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out + "/o/y.npy"));
  EXPECT_EQ(floats(out + "/o/rank0/y.npy"), floats(out + "/o/rank1/y.npy"));
  // Expected per rank: rank1's y changed at element 5 is reported as rank1's mismatch only.
  fs::create_directories(out + "/e/rank0");
  fs::create_directories(out + "/e/rank1");
  fs::copy_file(w + "/expected/y.npy", out + "/e/rank0/y.npy");
  {
    neuronsim::io::NpyArray a = neuronsim::io::read_npy(w + "/expected/y.npy");
    float v;
    std::memcpy(&v, a.data.data() + 5 * 4, 4);
    v += 1.0f;
    std::memcpy(a.data.data() + 5 * 4, &v, 4);
    neuronsim::io::write_npy(out + "/e/rank1/y.npy", a);
  }
  auto m = run("run " + w + " --arch trn2 --cores 2 --outdir " + out + "/o --expect " + out + "/e");
  EXPECT_EQ(m.code, 1) << m.out << m.err;
  EXPECT_NE(m.out.find("MISMATCH rank1/y[5]"), std::string::npos) << m.out;
  EXPECT_EQ(m.out.find("MISMATCH rank0/"), std::string::npos) << m.out;
  // The example of docs/multicore.md: the 4-rank MLP, every rank's y written under OUTDIR/rank<r>/ and
  // matching expected/.
  auto four = run("run " + clitest::src("workloads/multicore/tp_mlp_4ranks") + " --arch trn2 --cores 4 --lnc 1 "
                  "--outdir " + out + "/o4");
  EXPECT_EQ(four.code, 0) << four.out << four.err;
  EXPECT_NE(four.out.find("outputs match"), std::string::npos) << four.out;
  EXPECT_TRUE(fs::exists(out + "/o4/rank3/y.npy"));
  // A rank folder layout that does not fit the run's ranks is refused, naming the folder: the 4-rank MLP
  // given the 2-rank one's inputs (tp_mlp_2ranks itself on 4 cores is refused before: its replica group holds
  // cores 0, 1).
  auto few = run("run " + clitest::src("workloads/multicore/tp_mlp_4ranks") + " --inputs " + w +
                 "/inputs --outdir " + out + "/o");
  EXPECT_EQ(few.code, 3) << few.out << few.err;
  EXPECT_NE(few.err.find(w + "/inputs/rank2: no such directory"), std::string::npos) << few.err;
  fs::create_directories(out + "/e/rank2");
  auto many = run("run " + w + " --arch trn2 --cores 2 --outdir " + out + "/o --expect " + out + "/e");
  EXPECT_EQ(many.code, 3) << many.out << many.err;
  EXPECT_NE(many.err.find(out + "/e/rank2: the run has 2 ranks"), std::string::npos) << many.err;
}

TEST(Cli, IncludePreambleAddsTheFixedStartAndEndOfAnExecution) {
  // calibration.md F1: a profiler's kernel latency includes ~17 us before the first engine work and ~5 us after the
  // last (trn1): kernel_preamble_ns = 22000 in sim/arch/trn1.json, added to the total only with --include-preamble;
  // the engines' utilizations stay over the kernel's own time.
  const std::string dir = clitest::temp_dir();
  auto a = run("run " + kKernel + " --timing-only --stats " + dir + "/a.json");
  auto b = run("run " + kKernel + " --timing-only --include-preamble --stats " + dir + "/b.json");
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  const auto ja = nlohmann::json::parse(clitest::read_file(dir + "/a.json"));
  const auto jb = nlohmann::json::parse(clitest::read_file(dir + "/b.json"));
  EXPECT_EQ(ja["preamble_ns"].get<double>(), 0.0);
  EXPECT_EQ(jb["preamble_ns"].get<double>(), 22000.0);
  EXPECT_NEAR(jb["total_ns"].get<double>() - ja["total_ns"].get<double>(), 22000.0, 1e-6);
  EXPECT_EQ(ja["engines"]["DVE"]["utilization"], jb["engines"]["DVE"]["utilization"]);
  EXPECT_NEAR(simulated_ns(b.out) - simulated_ns(a.out), 22000.0, 0.1);
  EXPECT_NE(b.out.find("+ pre-amble 22000.0 ns)"), std::string::npos) << b.out;
}

}  // namespace test_cli
