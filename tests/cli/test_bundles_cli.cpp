// `neuronsim encode`, `disasm`, `run DIR` and `validate` against the real binary (issue 6 parts 3 and 4).
// kernel1 computes b = a - 1.0 (real compiler output, workloads/kernel1): Load a -> SBUF, TensorScalarPtr
// subtract 1.0 on DVE, Save -> b.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_run.hpp"
#include "neuronsim/builder.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/io/npy.hpp"

using clitest::run;
using clitest::src;
namespace fs = std::filesystem;

namespace {

const std::string kKernel = src("workloads/kernel1");
const std::string kInputs = src("workloads/kernel1/inputs");

// "simulated time: 4.27 us (4270.6 ns)": the exact ns in parentheses.
double simulated_ns(const std::string &out) {
  auto p = out.find("simulated time: ");
  if (p != std::string::npos)
    p = out.find('(', p);
  return p == std::string::npos ? -1.0 : std::stod(out.substr(p + 1));
}

std::vector<std::string> lines(const std::string &s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  for (std::string l; std::getline(is, l);) out.push_back(l);
  return out;
}

std::string last_line(const std::string &s) {
  auto v = lines(s);
  return v.empty() ? "" : v.back();
}

// y = (x > 0.25) as 1.0 / 0.0 on DVE: the comparison traps an encoder that writes L1 ordinals (spec 000).
std::string write_is_gt_kernel(const std::string &dir) {
  using neuronsim::isa::InstructionType;
  neuronsim::builder::Builder b("is_gt");
  auto x = b.input("x", {16, 32}), y = b.output("y", {16, 32});
  auto t = b.sbuf("t", {16, 32}), u = b.sbuf("u", {16, 32});
  b.add(InstructionType::Load, {b.ap(x.all())}, {b.ap(t.all())});                          // I-1
  b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), b.imm(0.25)}, {b.ap(u.all())})  // I-2
      .op0(neuronsim::isa::AluOp::is_gt)
      .engine(neuronsim::isa::Engine::DVE);
  b.add(InstructionType::Save, {b.ap(u.all())}, {b.ap(y.all())});  // I-3
  const std::string path = dir + "/is_gt.bir.json";
  std::ofstream(path) << neuronsim::isa::to_bir_json(b.finish()).dump(1);
  return path;
}

void patch(const std::string &file, size_t offset, uint8_t expect, uint8_t value) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f) << file;
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  ASSERT_EQ(static_cast<uint8_t>(c), expect) << file << " +" << offset;
  f.seekp(static_cast<std::streamoff>(offset));
  c = static_cast<char>(value);
  f.write(&c, 1);
}

} // namespace

TEST(BundlesCli, HelpForEverySubcommand) {
  for (const char *cmd : {"encode", "disasm", "validate"}) {
    auto r = run(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_NE(r.out.find(std::string("usage: neuronsim ") + cmd), std::string::npos) << r.out;
  }
  auto r = run("--help");
  EXPECT_NE(r.out.find("neuronsim encode KERNEL --gen v2|v3|v4 -o DIR"), std::string::npos);
  EXPECT_NE(r.out.find("neuronsim validate --bir KERNEL --bundles DIR"), std::string::npos);
  EXPECT_EQ(run("encode " + kKernel).code, 2);           // no --gen
  EXPECT_EQ(run("encode " + kKernel + " --gen v9 -o x").code, 2);
  EXPECT_EQ(run("validate --bir " + kKernel).code, 2);  // no --bundles
}

// Every generation: the streams run to the same b.npy and the same simulated time as the BIR on that
// generation's architecture.
TEST(BundlesCli, EncodeThenRunGivesTheSameOutputAsTheBir) {
  const std::string tmp = clitest::temp_dir();
  const std::pair<const char *, const char *> gens[] = {{"v2", "trn1"}, {"v3", "trn2"}, {"v4", "trn3"}};
  for (auto [gen, arch] : gens) {
    const std::string dir = tmp + "/" + gen;
    auto e = run("encode " + kKernel + " --gen " + gen + " -o " + dir);
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_NE(e.out.find("3 instructions: 3 dynamic + 0 sync carriers"), std::string::npos) << e.out;
    EXPECT_TRUE(fs::is_regular_file(dir + "/manifest.json"));
    EXPECT_EQ(fs::file_size(dir + "/DVE.bin"), 64u);
    EXPECT_EQ(fs::file_size(dir + "/DMA.bin"), 128u);

    auto rb = run("run " + dir + " --inputs " + kInputs + " --outdir " + tmp + "/out-bundles");
    ASSERT_EQ(rb.code, 0) << rb.err;
    EXPECT_NE(rb.out.find("bundle streams"), std::string::npos);
    EXPECT_NE(rb.out.find(std::string("arch ") + arch), std::string::npos) << rb.out;
    auto rk = run("run " + kKernel + " --arch " + arch + " --outdir " + tmp + "/out-bir");
    ASSERT_EQ(rk.code, 0) << rk.err;
    EXPECT_EQ(clitest::read_file(tmp + "/out-bundles/b.npy"), clitest::read_file(tmp + "/out-bir/b.npy")) << gen;
    // The same timing, except that the BIR's two DMA instructions each pay their trigger on SP (one sequencer
    // cycle: 1 / 1.4 GHz on trn1, 1 / 1.2 GHz on trn2/trn3; docs/timing-model.md 2.4), which a bundle stream
    // does not carry (its transfers sit on DMA queues). The summary prints 0.1 ns.
    const double sp_ghz = std::string(arch) == "trn1" ? 1.4 : 1.2;
    EXPECT_NEAR(simulated_ns(rk.out) - simulated_ns(rb.out), 2 / sp_ghz, 0.11) << gen;
  }
  // The workload's expected output holds for the streams too.
  auto r = run("run " + tmp + "/v3 --inputs " + kInputs + " --expect " + src("workloads/kernel1/expected") +
               " --outdir " + tmp + "/out3");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  fs::remove_all(tmp);
}

TEST(BundlesCli, EncodeNeverOverwritesWhatItDidNotWrite) {
  const std::string tmp = clitest::temp_dir();
  const std::string user = tmp + "/user";
  fs::create_directories(user);
  std::ofstream(user + "/notes.txt") << "mine";
  auto r = run("encode " + kKernel + " --gen v3 -o " + user);
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("refusing"), std::string::npos) << r.err;
  EXPECT_EQ(clitest::read_file(user + "/notes.txt"), "mine");
  // Into the kernel's own directory: refused, the BIR untouched.
  const std::string before = clitest::read_file(src("workloads/kernel1/kernel1.bir.json"));
  EXPECT_EQ(run("encode " + kKernel + " --gen v3 -o " + kKernel).code, 3);
  EXPECT_EQ(clitest::read_file(src("workloads/kernel1/kernel1.bir.json")), before);
  // A previous encode output is replaced (v4 over v3).
  ASSERT_EQ(run("encode " + kKernel + " --gen v3 -o " + tmp + "/enc").code, 0);
  ASSERT_EQ(run("encode " + kKernel + " --gen v4 -o " + tmp + "/enc").code, 0);
  EXPECT_NE(clitest::read_file(tmp + "/enc/manifest.json").find("\"generation\": \"v4\""), std::string::npos);
  fs::remove_all(tmp);
}

// kernel1 on v3, derived by hand:
// - tensors: a, b DRAM (var ids 1, 2 = tensor index + 1); the SBUF tiles placed first-fit in tensor order:
//   tile.7 at byte 0, the second tile (40 bytes per partition, 64-byte aligned) at byte 0x40 -- partition 0, so
//   ADDR4 = byte (reference isa/addr4.md).
// - sync band (docs/bundle-layout.md, sp-sync-encoding.md): +0x04 wait mode (0x05 = GE imm), +0x05 wait sem,
//   +0x06 update mode (0x13 = inc, LUT reading), +0x07 update sem, +0x08 value. Queue q counts on semaphore q:
//   DVE = 3, the first DMA queue = 5, the next = 6 (transfers are spread round robin).
// - I-2 Load a -> tile: 0xD4 DIRECT2D, sync_command 3 at +0x0F; src (+0x10) var 1, mode 0x10, one strided dim
//   of 10 rows x 40 bytes, 40-byte span; dst (+0x28) ADDR4 0x40, partition step 1 << 18 over 10 partitions.
// - I-4 TensorScalarPtr subtract 1.0: 0x43 TS; waits for DMA0 >= 1, counts on DVE; in/out descriptors 10 x 1
//   with spare {1, 1} slots, fp32 tag 0x0A, 10 channels, op0 subtract = 0x05, imm0 1.0f = 0x3F800000 whose
//   source byte 0xA1 = fp32 tag 0xA in the high nibble + source 1 (immediate); imm1 absent (source 0).
// - DMA bundles also show their copy mode and transpose op (both 0: a plain copy).
// - I-6 Save tile.7 -> b: waits for DVE >= 1, counts on DMA1.
TEST(BundlesCli, DisasmOfKernel1LineByLine) {
  const std::string tmp = clitest::temp_dir();
  ASSERT_EQ(run("encode " + kKernel + " --gen v3 -o " + tmp + "/enc").code, 0);
  auto r = run("disasm " + tmp + "/enc");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> want = {
      "DMA +0x0000 I-2 | d4100000 00001305 00000000 00000003 00000000 01000010 28000000 00000000 0a000000 "
      "28000000 40000000 00000010 00000400 00000000 0a000000 28000a0a | 0x10d4 DMA2D wait_mode=0x00 "
      "wait_idx=0x00 update_mode=inc update_idx=0x05 sync_value=0x00000000 sync_command=0x03 src=[0x00000000 var 1 "
      "mode 0x10 (40,10) (0,0) span 40] dst=[0x00000040 var 0 mode 0x10 (262144,10) (0,0) span 40] "
      "src_dtype=float32 dst_dtype=float32 copy_mode=0x00 transpose_op=0x00",
      "DMA +0x0040 I-6 | d4100000 05031306 01000000 00000003 00000000 00000010 00000400 00000000 0a000000 "
      "28000000 00000000 02000010 28000000 00000000 0a000000 28000a0a | 0x10d4 DMA2D wait_mode=0x05 "
      "wait_idx=0x03 update_mode=inc update_idx=0x06 sync_value=0x00000001 sync_command=0x03 src=[0x00000000 var 0 "
      "mode 0x10 (262144,10) (0,0) span 40] dst=[0x00000000 var 2 mode 0x10 (40,10) (0,0) span 40] "
      "src_dtype=float32 dst_dtype=float32 copy_mode=0x00 transpose_op=0x00",
      "DVE +0x0000 I-4 | 43100000 05051303 01000000 00000000 40000000 01000100 01000a00 01000100 0a0a0aa1 "
      "05000000 0000803f 00000000 00000000 01000100 01000a00 01000100 | 0x1043 TS wait_mode=0x05 wait_idx=0x05 "
      "update_mode=inc update_idx=0x03 sync_value=0x00000001 accumulator_cmd=0 in=[0x00000040 (1,10) (1,1) (1,1)] "
      "in_dtype=float32 out_dtype=float32 num_active_channels=0x0a op0=subtract op1=bypass reverse0=0 "
      "reverse1=0 imm0=imm:0x3f800000 imm1=none:0x00000000 out=[0x00000000 (1,10) (1,1) (1,1)]",
  };
  const auto got = lines(r.out);
  ASSERT_EQ(got.size(), want.size()) << r.out;
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "line " << i;
  // A lone stream file takes its generation from the manifest beside it; the name comes from it too.
  auto one = run("disasm " + tmp + "/enc/DVE.bin");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(lines(one.out), std::vector<std::string>{want[2]});
  fs::remove_all(tmp);
}

TEST(BundlesCli, ValidateOfAnUntouchedEncodeAgrees) {
  const std::string tmp = clitest::temp_dir();
  for (const char *gen : {"v2", "v3", "v4"}) {
    ASSERT_EQ(run("encode " + kKernel + " --gen " + gen + " -o " + tmp + "/" + gen).code, 0);
    auto r = run("validate --bir " + kKernel + " --bundles " + tmp + "/" + gen);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(last_line(r.out).rfind("validate: OK", 0), 0u) << r.out;
  }
  const std::string k = write_is_gt_kernel(tmp);
  ASSERT_EQ(run("encode " + k + " --gen v3 -o " + tmp + "/gt").code, 0);
  auto r = run("validate --bir " + k + " --bundles " + tmp + "/gt");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  fs::remove_all(tmp);
}

// is_gt is L1 ordinal 20 = 0x14 but wire byte 0x13 (spec 000); 0x14 on the wire is is_ge.
TEST(BundlesCli, ValidateCatchesIsGtWrittenAsItsL1Ordinal) {
  const std::string tmp = clitest::temp_dir();
  const std::string k = write_is_gt_kernel(tmp);
  ASSERT_EQ(run("encode " + k + " --gen v3 -o " + tmp + "/gt").code, 0);
  patch(tmp + "/gt/DVE.bin", 0x24, 0x13, 0x14);  // TS op0 at +0x24 (bundle_fields.def NS_TS_BODY)
  auto r = run("validate --bir " + k + " --bundles " + tmp + "/gt");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const std::string last = last_line(r.out);
  EXPECT_EQ(last.rfind("validate: DIFFER", 0), 0u) << r.out;
  EXPECT_NE(last.find("DVE #0"), std::string::npos) << last;
  EXPECT_NE(last.find("TensorScalarPtr 'I-2'"), std::string::npos) << last;
  EXPECT_NE(last.find("is_gt"), std::string::npos) << last;
  EXPECT_NE(last.find("L1 ordinal"), std::string::npos) << last;
  fs::remove_all(tmp);
}

TEST(BundlesCli, ValidateReportsABadHeaderWord) {
  const std::string tmp = clitest::temp_dir();
  ASSERT_EQ(run("encode " + kKernel + " --gen v2 -o " + tmp + "/enc").code, 0);
  patch(tmp + "/enc/DVE.bin", 1, 0x10, 0x11);
  auto r = run("validate --bir " + kKernel + " --bundles " + tmp + "/enc");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("header word 0x1143"), std::string::npos) << r.out;
  EXPECT_NE(last_line(r.out).find("'I-4'"), std::string::npos) << r.out;
  fs::remove_all(tmp);
}

// A stream that decodes cleanly but computes something else: the first instruction whose written data differ
// is named, with the tensor and the element.
TEST(BundlesCli, ValidateNamesTheFirstDivergingInstruction) {
  const std::string tmp = clitest::temp_dir();
  ASSERT_EQ(run("encode " + kKernel + " --gen v3 -o " + tmp + "/enc").code, 0);
  patch(tmp + "/enc/DVE.bin", 0x24, 0x05, 0x04);  // op0 subtract -> add
  auto r = run("validate --bir " + kKernel + " --bundles " + tmp + "/enc");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("divergence: first divergence after DVE #0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'I-4'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("element [0, 0]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("decodes to add but the BIR says subtract"), std::string::npos) << r.out;
  fs::remove_all(tmp);
}

// Every bundled workload encodes on every generation and validates against its BIR: the streams reproduce the
// data each instruction writes and every output.
class WorkloadBundles : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(WorkloadBundles, EncodeThenValidateAgrees) {
  const auto &[name, gen] = GetParam();
  const std::string tmp = clitest::temp_dir();
  auto enc = run("encode " + src("workloads/" + name) + " --gen " + gen + " -o " + tmp + "/enc");
  ASSERT_EQ(enc.code, 0) << enc.out << enc.err;
  auto val = run("validate --bir " + src("workloads/" + name) + " --bundles " + tmp + "/enc");
  EXPECT_EQ(val.code, 0) << val.out << val.err;
  EXPECT_NE(val.out.find("validate: OK"), std::string::npos) << val.out;
  fs::remove_all(tmp);
}

INSTANTIATE_TEST_SUITE_P(
    All, WorkloadBundles,
    ::testing::Combine(::testing::Values("kernel1", "tensor_add", "matmul_tiled", "matmul_hoisted",
                                         "matmul_blocked_free", "matmul_blocked_mnk", "softmax", "layernorm",
                                         "rmsnorm", "attention", "transpose", "cumsum"),
                       ::testing::Values("v2", "v3", "v4")),
    [](const auto &info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

TEST(BundlesCli, MalformedManifestsAreInputErrors) {
  const std::string tmp = clitest::temp_dir();
  ASSERT_EQ(run("encode " + kKernel + " --gen v3 -o " + tmp + "/enc").code, 0);
  const std::string mpath = tmp + "/enc/manifest.json";
  const nlohmann::json good = nlohmann::json::parse(clitest::read_file(mpath));
  auto with = [&](const std::function<void(nlohmann::json &)> &edit) {
    nlohmann::json m = good;
    edit(m);
    std::ofstream(mpath) << m.dump();
    return run("run " + tmp + "/enc --timing-only");
  };
  // A number where the generation's name belongs.
  auto r1 = with([](nlohmann::json &m) { m["generation"] = 3; });
  EXPECT_EQ(r1.code, 3) << r1.err;
  EXPECT_NE(r1.err.find("malformed manifest"), std::string::npos) << r1.err;
  // An offset near 2^64 must not wrap the bounds check.
  auto r2 = with([](nlohmann::json &m) { m["instructions"][0]["offset"] = 18446744073709551600ull; });
  EXPECT_EQ(r2.code, 3) << r2.err;
  EXPECT_NE(r2.err.find("truncated stream"), std::string::npos) << r2.err;
  // A stream file outside the bundle directory: refused as no engine's stream, naming the instruction's field.
  auto r3 = with([](nlohmann::json &m) { m["instructions"][0]["file"] = "../../etc/passwd"; });
  EXPECT_EQ(r3.code, 3) << r3.err;
  EXPECT_NE(r3.err.find("field 'file': '../../etc/passwd' is not the stream of the instruction's engine"),
            std::string::npos)
      << r3.err;
  fs::remove_all(tmp);
}

// A data-dependent branch end to end: for (r1 = 3; r1 > 0; --r1) t += x, written with basic blocks and a
// CompareAndBranch back edge (tests/sim/test_simulator.cpp countdown, on a loaded input). `encode` writes the path
// the program takes (the branch kept, its taken edge the fall-through, the other edge the off-trace Exit) and
// `validate` agrees on every generation; the stream's manifest carries the block table.
TEST(BundlesCli, ValidateAgreesOnABranchingKernel) {
  using neuronsim::isa::InstructionType;
  namespace isa = neuronsim::isa;
  using neuronsim::builder::Builder;
  const std::string tmp = clitest::temp_dir();
  Builder b("countdown");
  auto x = b.input("x", {8, 4}), o = b.output("o", {8, 4});
  auto t = b.sbuf("t", {8, 4}), u = b.sbuf("u", {8, 4});
  b.block("entry");
  b.add(InstructionType::Load, {b.ap(x.all())}, {b.ap(u.all())});
  b.add(InstructionType::RegisterMove, {Builder::imm(3, isa::Dtype::int32)}, {Builder::reg("r1")});
  b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(0.0);
  b.block("body");
  b.add(InstructionType::TensorTensor, {b.ap(t.all()), b.ap(u.all())}, {b.ap(t.all())}).op(isa::AluOp::add);
  b.add(InstructionType::RegisterAlu, {Builder::reg("r1"), Builder::imm(1, isa::Dtype::int32)}, {Builder::reg("r1")})
      .op(isa::AluOp::subtract);
  b.add(InstructionType::CompareAndBranch, {Builder::reg("r1"), Builder::imm(0, isa::Dtype::int32)}, {})
      .comp_op(isa::BranchCompareOp::IS_GTIMM).on_true("body").on_false("exit");
  b.block("exit");
  b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.all())});
  const std::string k = tmp + "/countdown.bir.json";
  std::ofstream(k) << isa::to_bir_json(b.finish()).dump(1);
  for (const char *gen : {"v2", "v3", "v4"}) {
    const std::string dir = tmp + "/" + gen;
    auto e = run("encode " + k + " --gen " + gen + " -o " + dir);
    ASSERT_EQ(e.code, 0) << e.out << e.err;
    std::ifstream ms(dir + "/manifest.json");
    const auto m = nlohmann::json::parse(ms);
    ASSERT_EQ(m.at("blocks").size(), 1u);
    EXPECT_EQ(m.at("blocks")[0].at("name"), "off_trace");
    int branches = 0;
    for (const auto &ji : m.at("instructions")) branches += ji.at("type") == "CompareAndBranch";
    EXPECT_EQ(branches, 3);  // taken, taken, not taken
    auto r = run("validate --bir " + k + " --bundles " + dir);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(last_line(r.out).rfind("validate: OK", 0), 0u) << r.out;
    auto d = run("disasm " + dir);
    EXPECT_NE(d.out.find("CompareAndBranch"), std::string::npos) << d.out;
  }
  fs::remove_all(tmp);
}

// A kernel with a Call (scale2: y = 2x), two DMATriggers over two DMABlocks of descriptor copies (t0 fires blk0:
// o2[:, 0] = a[:, 0]; t1 fires blk1: o2[:, 1] = a[:, 1]) and a GroupResetSemaphores. The stream carries the call's
// body, each fired block's descriptors as DMACopy bundles after their trigger and the block itself as a sync
// carrier; validate agrees on every generation.
TEST(BundlesCli, CallsAndDmaTriggersEncodeAndValidate) {
  const std::string tmp = clitest::temp_dir();
  const std::string k = src("tests/cli/data/calls_triggers.bir.json");
  neuronsim::io::NpyArray a;
  a.shape = {2, 4};
  for (int i = 0; i < 8; ++i) {
    const float v = 0.5f + static_cast<float>(i);
    const auto *b = reinterpret_cast<const uint8_t *>(&v);
    a.data.insert(a.data.end(), b, b + 4);
  }
  fs::create_directories(tmp + "/in");
  neuronsim::io::write_npy(tmp + "/in/a.npy", a);
  ASSERT_EQ(run("run " + k + " --inputs " + tmp + "/in --outdir " + tmp + "/bir").code, 0);
  const auto o1 = neuronsim::io::read_npy(tmp + "/bir/o1.npy"), o2 = neuronsim::io::read_npy(tmp + "/bir/o2.npy");
  auto f32 = [](const neuronsim::io::NpyArray &x, size_t i) {
    float v;
    std::memcpy(&v, x.data.data() + i * 4, 4);
    return v;
  };
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(f32(o1, i), 2.0f * f32(a, i)) << i;
    if (i % 4 < 2) {
      EXPECT_EQ(f32(o2, i), f32(a, i)) << i;
    }
  }
  for (const char *gen : {"v2", "v3", "v4"}) {
    const std::string dir = tmp + "/" + gen;
    ASSERT_EQ(run("encode " + k + " --gen " + gen + " -o " + dir).code, 0) << gen;
    auto v = run("validate --bir " + k + " --bundles " + dir + " --inputs " + tmp + "/in");
    EXPECT_EQ(v.code, 0) << gen << ": " << v.out << v.err;
    EXPECT_NE(v.out.find("validate: OK"), std::string::npos) << v.out;
  }
  fs::remove_all(tmp);
}

// Multi-core (issue 17): `encode --cores N` writes one bundle set per core (DIR/core<i>, DIR/cores.json);
// `run DIR` runs them on N cores with each rank's outputs byte-identical to the BIR's N-core run; `validate`
// compares every core. tp_mlp_2ranks: rank r reads inputs/rank<r>/ (its W1 / W2 blocks), one AllReduce
// (docs/multicore.md).
TEST(BundlesCli, MultiCoreEncodeRunAndValidatePerCore) {
  const std::string tmp = clitest::temp_dir(), w = src("workloads/multicore/tp_mlp_2ranks");
  auto e = run("encode " + w + " --gen v3 -o " + tmp + "/enc --cores 2 --lnc 1");
  ASSERT_EQ(e.code, 0) << e.out << e.err;
  EXPECT_NE(e.out.find("2 cores, LNC=1"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("core1 (shard 0, rank 1)"), std::string::npos) << e.out;
  for (const char *f : {"/enc/cores.json", "/enc/core0/manifest.json", "/enc/core1/manifest.json"})
    EXPECT_TRUE(fs::is_regular_file(tmp + f)) << f;
  auto rb = run("run " + tmp + "/enc --inputs " + w + "/inputs --outdir " + tmp + "/ob");
  ASSERT_EQ(rb.code, 0) << rb.out << rb.err;
  EXPECT_NE(rb.out.find("bundle streams of 2 cores"), std::string::npos) << rb.out;
  EXPECT_NE(rb.out.find("device: 2 cores (LNC=1)"), std::string::npos) << rb.out;
  EXPECT_NE(rb.out.find("1 collectives"), std::string::npos) << rb.out;
  auto rk = run("run " + w + " --arch trn2 --cores 2 --lnc 1 --outdir " + tmp + "/ok");
  ASSERT_EQ(rk.code, 0) << rk.out << rk.err;
  for (const char *f : {"/rank0/y.npy", "/rank1/y.npy"})
    EXPECT_EQ(clitest::read_file(tmp + "/ob" + f), clitest::read_file(tmp + "/ok" + f)) << f;
  // The streams meet the workload's expectation too (its tolerance: the folder of streams has no tolerance.json).
  auto rx = run("run " + tmp + "/enc --inputs " + w + "/inputs --expect " + w + "/expected --rtol 0 --atol 0.0100459" +
                " --outdir " + tmp + "/ox");
  EXPECT_EQ(rx.code, 0) << rx.out << rx.err;
  auto v = run("validate --bir " + w + " --bundles " + tmp + "/enc");
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  EXPECT_NE(v.out.find("validate: OK"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("core1 "), std::string::npos) << v.out;  // the per-core simulated times
  // --cores given: it must match the folder.
  auto bad = run("run " + tmp + "/enc --cores 4 --arch trn2");
  EXPECT_EQ(bad.code, 3) << bad.out << bad.err;
  EXPECT_NE(bad.err.find(tmp + "/enc"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("2 cores with LNC=1"), std::string::npos) << bad.err;
  auto badv = run("validate --bir " + w + " --bundles " + tmp + "/enc --cores 2 --lnc 2");
  EXPECT_EQ(badv.code, 3) << badv.out << badv.err;
  EXPECT_NE(badv.err.find(tmp + "/enc"), std::string::npos) << badv.err;
  // Encoding again into the folder replaces it; a folder of anything else is refused.
  EXPECT_EQ(run("encode " + w + " --gen v3 -o " + tmp + "/enc --cores 2").code, 0);
  std::ofstream(tmp + "/mine.txt") << "user data";
  auto over = run("encode " + w + " --gen v3 -o " + tmp + " --cores 2");
  EXPECT_EQ(over.code, 3) << over.out << over.err;
  EXPECT_TRUE(fs::is_regular_file(tmp + "/mine.txt"));
  fs::remove_all(tmp);
}

// A single-core stream folder on several cores, and a multi-core folder missing a core, are refused naming the
// folder; a changed op in core 1's stream is named with its core.
TEST(BundlesCli, MultiCoreBadFoldersAndDivergenceNameTheCore) {
  const std::string tmp = clitest::temp_dir();
  ASSERT_EQ(run("encode " + kKernel + " --gen v3 -o " + tmp + "/one").code, 0);
  auto r1 = run("run " + tmp + "/one --cores 2 --arch trn2");
  EXPECT_EQ(r1.code, 3) << r1.out << r1.err;
  EXPECT_NE(r1.err.find(tmp + "/one"), std::string::npos) << r1.err;
  EXPECT_NE(r1.err.find("one core's bundle streams"), std::string::npos) << r1.err;
  auto v1 = run("validate --bir " + kKernel + " --bundles " + tmp + "/one --cores 2");
  EXPECT_EQ(v1.code, 3) << v1.out << v1.err;
  EXPECT_NE(v1.err.find(tmp + "/one"), std::string::npos) << v1.err;

  // kernel1 on 2 cores of LNC=1: two ranks, each b = a - 1 on its own DRAM.
  ASSERT_EQ(run("encode " + kKernel + " --gen v3 -o " + tmp + "/two --cores 2").code, 0);
  EXPECT_EQ(run("validate --bir " + kKernel + " --bundles " + tmp + "/two").code, 0);
  patch(tmp + "/two/core1/DVE.bin", 0x24, 0x05, 0x04);  // core 1's op0 subtract -> add
  auto d = run("validate --bir " + kKernel + " --bundles " + tmp + "/two");
  EXPECT_EQ(d.code, 1) << d.out << d.err;
  EXPECT_NE(d.out.find("divergence: first divergence after core1 DVE #0"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("'I-4'"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("lint: core1: "), std::string::npos) << d.out;
  fs::rename(tmp + "/two/core1", tmp + "/gone");
  auto m = run("run " + tmp + "/two --arch trn2");
  EXPECT_EQ(m.code, 3) << m.out << m.err;
  EXPECT_NE(m.err.find(tmp + "/two/core1"), std::string::npos) << m.err;
  auto mv = run("validate --bir " + kKernel + " --bundles " + tmp + "/two");
  EXPECT_EQ(mv.code, 3) << mv.out << mv.err;
  EXPECT_NE(mv.err.find(tmp + "/two/core1"), std::string::npos) << mv.err;
  fs::remove_all(tmp);
}
