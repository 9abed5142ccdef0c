// Runs of several ranks (docs/multicore.md): --save-inputs writes each rank's inputs in the per-rank layout
// --inputs reads, and data-dependent control flow runs when each core's path depends on its own data alone.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "neuronsim/builder.hpp"
#include "neuronsim/io/npy.hpp"
#include "neuronsim/isa/bir_json.hpp"

namespace fs = std::filesystem;
using clitest::run;
using clitest::src;

namespace {

std::vector<uint8_t> npy_data(const std::string &path) { return neuronsim::io::read_npy(path).data; }

void write_i32(const std::string &path, std::vector<int64_t> shape, int32_t v) {
  neuronsim::io::NpyArray a;
  a.dtype = neuronsim::isa::Dtype::int32;
  a.shape = std::move(shape);
  const auto *b = reinterpret_cast<const uint8_t *>(&v);
  a.data.assign(b, b + 4);
  neuronsim::io::write_npy(path, a);
}

void write_f32(const std::string &path, std::vector<int64_t> shape, const std::vector<float> &v) {
  neuronsim::io::NpyArray a;
  a.dtype = neuronsim::isa::Dtype::float32;
  a.shape = std::move(shape);
  a.data.resize(v.size() * 4);
  std::memcpy(a.data.data(), v.data(), a.data.size());
  neuronsim::io::write_npy(path, a);
}

std::vector<float> read_f32(const std::string &path) {
  const auto d = npy_data(path);
  std::vector<float> v(d.size() / 4);
  std::memcpy(v.data(), d.data(), d.size());
  return v;
}

} // namespace

// tp_mlp_2ranks reads its W1 / W2 blocks from inputs/rank<r>/ and the replicated inputs/xT.npy. --save-inputs DIR
// writes every rank's inputs as it read them to DIR/rank<r>/<tensor>.npy (the replicated xT in each), and DIR fed
// back as --inputs reproduces the run's outputs byte for byte.
TEST(MultiCoreCli, SaveInputsPerRankReplaysTheRun) {
  const std::string tmp = clitest::temp_dir(), w = src("workloads/multicore/tp_mlp_2ranks");
  auto r1 = run("run " + w + " --arch trn2 --cores 2 --lnc 1 --outdir " + tmp + "/o1 --save-inputs " + tmp + "/saved");
  ASSERT_EQ(r1.code, 0) << r1.out << r1.err;
  for (int r = 0; r < 2; ++r) {
    const std::string rank = "rank" + std::to_string(r);
    for (const char *t : {"w1", "w2"}) {
      const std::string saved = tmp + "/saved/" + rank + "/" + t + ".npy";
      EXPECT_NE(r1.out.find("saved  " + saved), std::string::npos) << r1.out;
      EXPECT_EQ(npy_data(saved), npy_data(w + "/inputs/" + rank + "/" + t + ".npy")) << saved;
    }
    EXPECT_EQ(npy_data(tmp + "/saved/" + rank + "/xT.npy"), npy_data(w + "/inputs/xT.npy")) << rank;
  }
  EXPECT_FALSE(fs::exists(tmp + "/saved/xT.npy"));  // nothing outside the rank folders
  auto r2 = run("run " + w + " --arch trn2 --cores 2 --lnc 1 --inputs " + tmp + "/saved --outdir " + tmp + "/o2");
  ASSERT_EQ(r2.code, 0) << r2.out << r2.err;
  EXPECT_NE(r2.out.find("rank1 w1: " + tmp + "/saved/rank1/w1.npy"), std::string::npos) << r2.out;
  for (const char *f : {"/rank0/y.npy", "/rank1/y.npy"})
    EXPECT_EQ(clitest::read_file(tmp + "/o2" + f), clitest::read_file(tmp + "/o1" + f)) << f;

  // Generated inputs (a kernel given without its inputs, --seed 5) are saved per rank too and replay the same way.
  const std::string k1 = src("workloads/kernel1/kernel1.bir.json");
  auto g1 = run("run " + k1 + " --arch trn2 --cores 2 --seed 5 --outdir " + tmp + "/g1 --save-inputs " + tmp + "/gen");
  ASSERT_EQ(g1.code, 0) << g1.out << g1.err;
  for (const char *f : {"/rank0/a.npy", "/rank1/a.npy"}) EXPECT_TRUE(fs::is_regular_file(tmp + "/gen" + f)) << f;
  auto g2 = run("run " + k1 + " --arch trn2 --cores 2 --inputs " + tmp + "/gen --outdir " + tmp + "/g2");
  ASSERT_EQ(g2.code, 0) << g2.out << g2.err;
  for (const char *f : {"/rank0/b.npy", "/rank1/b.npy"})
    EXPECT_EQ(clitest::read_file(tmp + "/g2" + f), clitest::read_file(tmp + "/g1" + f)) << f;
  fs::remove_all(tmp);
}

// Saving into the folder a rank reads its inputs from would overwrite them: refused before the run (exit 3),
// the files untouched, as for one core.
TEST(MultiCoreCli, SaveInputsNeverOverwritesARanksInput) {
  const std::string tmp = clitest::temp_dir(), w = src("workloads/multicore/tp_mlp_2ranks");
  fs::copy(w + "/inputs", tmp + "/in", fs::copy_options::recursive);
  const std::string before = clitest::read_file(tmp + "/in/rank1/w2.npy");
  auto r = run("run " + w + " --arch trn2 --cores 2 --lnc 1 --inputs " + tmp + "/in --outdir " + tmp +
               "/o --save-inputs " + tmp + "/in");
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("an output would overwrite the input file"), std::string::npos) << r.err;
  EXPECT_EQ(clitest::read_file(tmp + "/in/rank1/w2.npy"), before);
  EXPECT_FALSE(fs::exists(tmp + "/in/rank0/xT.npy"));  // nothing was written
  fs::remove_all(tmp);
}

namespace {
// for (r1 = n; r1 > 0; --r1) t += u, with u = x: o = n * x, the trip count n read from the rank's input n (a
// CompareAndBranch back edge on a register loaded from it; tests/cli/test_bundles_cli.cpp's countdown, with the
// count from data). Kind::Barrier adds a CoreBarrier before the Save; Kind::FromRank takes n = rank + 1 from
// GetGlobalRankId instead of the input.
enum class Kind { FromInput, Barrier, FromRank };
std::string rank_countdown(const std::string &dir, Kind kind) {
  const bool barrier = kind == Kind::Barrier;
  using neuronsim::isa::InstructionType;
  namespace isa = neuronsim::isa;
  using neuronsim::builder::Builder;
  Builder b("rank_countdown");
  auto x = b.input("x", {8, 4}), n = b.input("n", {1, 1}, isa::Dtype::int32), o = b.output("o", {8, 4});
  auto t = b.sbuf("t", {8, 4}), u = b.sbuf("u", {8, 4}), nt = b.sbuf("nt", {1, 1}, isa::Dtype::int32);
  b.block("entry");
  b.add(InstructionType::Load, {b.ap(x.all())}, {b.ap(u.all())});
  b.add(InstructionType::Load, {b.ap(n.all())}, {b.ap(nt.all())});
  if (kind == Kind::FromRank) {
    b.add(InstructionType::GetGlobalRankId, {}, {Builder::reg("r1")}).engine(isa::Engine::DVE);
    b.add(InstructionType::RegisterAlu, {Builder::reg("r1"), Builder::imm(1, isa::Dtype::int32)}, {Builder::reg("r1")})
        .op(isa::AluOp::add).engine(isa::Engine::DVE);
  } else {
    b.add(InstructionType::TensorLoad, {b.ap(nt.all())}, {Builder::reg("r1")}).engine(isa::Engine::DVE);
  }
  b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(0.0)
      .engine(isa::Engine::DVE);
  b.block("body");
  b.add(InstructionType::TensorTensor, {b.ap(t.all()), b.ap(u.all())}, {b.ap(t.all())}).op(isa::AluOp::add)
      .engine(isa::Engine::DVE);
  b.add(InstructionType::RegisterAlu, {Builder::reg("r1"), Builder::imm(1, isa::Dtype::int32)}, {Builder::reg("r1")})
      .op(isa::AluOp::subtract).engine(isa::Engine::DVE);
  b.add(InstructionType::CompareAndBranch, {Builder::reg("r1"), Builder::imm(0, isa::Dtype::int32)}, {})
      .comp_op(isa::BranchCompareOp::IS_GTIMM).on_true("body").on_false("exit").engine(isa::Engine::DVE);
  b.block("exit");
  if (barrier) b.add(InstructionType::CoreBarrier, {}, {}).engine(isa::Engine::DVE);
  b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.all())});
  const std::string k = dir + "/countdown" + std::to_string(static_cast<int>(kind)) + ".bir.json";
  std::ofstream(k) << isa::to_bir_json(b.finish()).dump(1);
  return k;
}
} // namespace

TEST(MultiCoreCli, DataDependentBranchesGoTheirOwnWayOnEachRank) {
  const std::string tmp = clitest::temp_dir(), k = rank_countdown(tmp, Kind::FromInput);
  std::vector<float> x(32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f + static_cast<float>(i);
  fs::create_directories(tmp + "/in/rank0");
  fs::create_directories(tmp + "/in/rank1");
  write_f32(tmp + "/in/x.npy", {8, 4}, x);
  write_i32(tmp + "/in/rank0/n.npy", {1, 1}, 1);  // rank 0: the body once, o = x
  write_i32(tmp + "/in/rank1/n.npy", {1, 1}, 3);  // rank 1: three times, o = x + x + x (exact: small halves)
  auto r = run("run " + k + " --arch trn2 --cores 2 --lnc 1 --inputs " + tmp + "/in --outdir " + tmp + "/o --stats " +
               tmp + "/stats.json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<float> o0 = read_f32(tmp + "/o/rank0/o.npy"), o1 = read_f32(tmp + "/o/rank1/o.npy");
  ASSERT_EQ(o0.size(), 32u);
  ASSERT_EQ(o1.size(), 32u);
  for (size_t i = 0; i < 32; ++i) {
    EXPECT_EQ(o0[i], x[i]) << i;
    EXPECT_EQ(o1[i], 3.0f * x[i]) << i;
  }
  std::ifstream ss(tmp + "/stats.json");
  const auto st = nlohmann::json::parse(ss);
  // Dynamic instructions (no DMA triggers): entry 4 (two Loads, TensorLoad, Memset) + 3 per trip (TensorTensor,
  // RegisterAlu, CompareAndBranch) + exit 1 (Save): rank 0 4 + 3 + 1 = 8, rank 1 4 + 9 + 1 = 14.
  const auto &c0 = st.at("cores").at(0), &c1 = st.at("cores").at(1);
  EXPECT_EQ(c0.at("dynamic_instructions"), 8);
  EXPECT_EQ(c1.at("dynamic_instructions"), 14);
  // Time: each trip's TensorTensor depends on the last one's t, a DVE result read by the next DVE instruction, so a
  // trip costs its DVE time max(64, N = 4) = 64 cycles plus dve_dependent_latency_cycles (6, calibration.md E6) on
  // the critical path; RegisterAlu and CompareAndBranch (1 sequencer cycle each) fit in that wait. trn2's DVE runs
  // at 0.96 GHz (sim/arch/trn2.json dve_ghz, dve_dependent_latency_cycles, sequencer_instruction_cycles), and
  // everything else (the loads, the save) is the same on both cores, so rank 1's two extra trips take
  // 2 x 70 / 0.96 = 145.833 ns more, and its DVE is busy 2 x (64 + 1 + 1) / 0.96 = 137.5 ns more. The device ends
  // with rank 1.
  const double t0 = c0.at("total_ns"), t1 = c1.at("total_ns");
  EXPECT_NEAR(t1 - t0, 2 * 70 / 0.96, 0.002);
  const double dve0 = c0.at("profile").at("engines").at("DVE").at("busy_ns");
  const double dve1 = c1.at("profile").at("engines").at("DVE").at("busy_ns");
  EXPECT_NEAR(dve1 - dve0, 2 * 66 / 0.96, 0.002);
  EXPECT_EQ(st.at("device").at("total_ns"), t1);
  // Each core's path on its own: run alone (one core) on rank 1's data, the kernel takes the same 14 instructions.
  auto one = run("run " + k + " --arch trn2 --input n=" + tmp + "/in/rank1/n.npy --input x=" + tmp +
                 "/in/x.npy --outdir " + tmp + "/one");
  ASSERT_EQ(one.code, 0) << one.out << one.err;
  EXPECT_EQ(clitest::read_file(tmp + "/one/o.npy"), clitest::read_file(tmp + "/o/rank1/o.npy"));

  // Refused, naming why: shards of one logical core share its DRAM (LNC=2), or a CoreBarrier brings another core
  // in; encode --cores follows the same rule.
  auto l2 = run("run " + k + " --arch trn2 --lnc 2 --inputs " + tmp + "/in");
  EXPECT_EQ(l2.code, 3) << l2.out << l2.err;
  EXPECT_NE(l2.err.find("with LNC=2 the shards of a logical core share its DRAM"), std::string::npos) << l2.err;
  EXPECT_NE(l2.err.find(k), std::string::npos) << l2.err;
  const std::string kb = rank_countdown(tmp, Kind::Barrier);
  auto bar = run("run " + kb + " --arch trn2 --cores 2 --lnc 1 --inputs " + tmp + "/in");
  EXPECT_EQ(bar.code, 3) << bar.out << bar.err;
  EXPECT_NE(bar.err.find("CoreBarrier brings other cores' data"), std::string::npos) << bar.err;
  EXPECT_NE(bar.err.find("'I-8'"), std::string::npos) << bar.err;
  auto enc = run("encode " + kb + " --gen v3 --cores 2 -o " + tmp + "/enc");
  EXPECT_EQ(enc.code, 3) << enc.out << enc.err;
  EXPECT_NE(enc.err.find("CoreBarrier brings other cores' data"), std::string::npos) << enc.err;
  EXPECT_FALSE(fs::exists(tmp + "/enc"));
  fs::remove_all(tmp);
}

// Branches on the rank (GetGlobalRankId + 1 trips: rank 0 once, rank 1 twice): encode --cores 2 lowers each core
// along its own path, and the streams' outputs are byte-identical to the BIR's two-core run; validate agrees.
TEST(MultiCoreCli, RankDependentBranchesEncodePerCore) {
  const std::string tmp = clitest::temp_dir(), k = rank_countdown(tmp, Kind::FromRank);
  std::vector<float> x(32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i);
  fs::create_directories(tmp + "/in");
  write_f32(tmp + "/in/x.npy", {8, 4}, x);
  write_i32(tmp + "/in/n.npy", {1, 1}, 0);  // unread
  auto e = run("encode " + k + " --gen v3 --cores 2 -o " + tmp + "/enc");
  ASSERT_EQ(e.code, 0) << e.out << e.err;
  auto rb = run("run " + k + " --arch trn2 --cores 2 --inputs " + tmp + "/in --outdir " + tmp + "/ob");
  ASSERT_EQ(rb.code, 0) << rb.out << rb.err;
  auto rs = run("run " + tmp + "/enc --inputs " + tmp + "/in --outdir " + tmp + "/os");
  ASSERT_EQ(rs.code, 0) << rs.out << rs.err;
  for (int r = 0; r < 2; ++r) {
    const std::string f = "/rank" + std::to_string(r) + "/o.npy";
    EXPECT_EQ(clitest::read_file(tmp + "/os" + f), clitest::read_file(tmp + "/ob" + f)) << f;
    const std::vector<float> o = read_f32(tmp + "/ob" + f);
    ASSERT_EQ(o.size(), 32u);
    for (size_t i = 0; i < 32; ++i) EXPECT_EQ(o[i], static_cast<float>(r + 1) * x[i]) << r << " " << i;
  }
  auto v = run("validate --bir " + k + " --bundles " + tmp + "/enc --inputs " + tmp + "/in");
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  EXPECT_NE(v.out.find("validate: OK"), std::string::npos) << v.out;
  fs::remove_all(tmp);
}
