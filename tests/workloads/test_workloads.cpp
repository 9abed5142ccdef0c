// Workloads (workloads/<name>/): every committed workload runs through sim::Simulator at its small size and
// matches its independent reference within the tolerance its generator states and justifies; and the generator
// (workloads/gen/) is the source of truth: regenerating at the small size reproduces the committed BIR, inputs,
// expected outputs and README byte for byte.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/io/npy.hpp"
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/session.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "neuronsim/sim/stats.hpp"
#include "workload.hpp"

using namespace neuronsim;
namespace fs = std::filesystem;

namespace {

// Workloads of several cores live in workloads/multicore/ (they need --cores / --lnc to run).
std::string dir_of(const std::string &name) {
  const workloads::Generator *g = workloads::find_generator(name);
  const bool multi = g && (*g)(workloads::Size::Small, false).cores > 1;
  return std::string(NEURONSIM_SOURCE_DIR) + "/workloads/" + (multi ? "multicore/" : "") + name;
}

std::string slurp(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::set<std::string> npy_files(const fs::path &d) {
  std::set<std::string> s;
  if (fs::is_directory(d))
    for (const auto &e : fs::directory_iterator(d))
      if (e.path().extension() == ".npy") s.insert(e.path().stem().string());
  return s;
}

std::vector<std::string> names() {
  std::vector<std::string> v;
  for (const auto &e : workloads::registry()) v.push_back(e.first);
  return v;
}

workloads::Workload regenerate(const std::string &name) {
  const workloads::Generator *g = workloads::find_generator(name);
  if (!g) throw std::runtime_error("no generator " + name);
  return (*g)(workloads::Size::Small, true);
}

class Workload : public ::testing::TestWithParam<std::string> {};

} // namespace

TEST_P(Workload, RegeneratingAtSmallSizeReproducesTheCommittedFiles) {
  const std::string name = GetParam();
  const fs::path dir = dir_of(name);
  ASSERT_TRUE(fs::is_directory(dir)) << dir << " is missing: run neuronsim_workload_gen " << name
                                     << " --size small -o workloads/" << name;
  const workloads::Workload w = regenerate(name);
  EXPECT_TRUE(slurp(dir / (name + ".bir.json")) == workloads::bir_text(w))
      << name << ".bir.json differs from what the generator writes; regenerate it";
  std::set<std::string> want_in, want_exp;
  for (const auto &[n, a] : w.inputs) {
    want_in.insert(n);
    const auto bytes = io::serialize_npy(a);
    EXPECT_TRUE(slurp(dir / "inputs" / (n + ".npy")) == std::string(bytes.begin(), bytes.end())) << "inputs/" << n;
  }
  for (const auto &[n, a] : w.expected) {
    want_exp.insert(n);
    const auto bytes = io::serialize_npy(a);
    EXPECT_TRUE(slurp(dir / "expected" / (n + ".npy")) == std::string(bytes.begin(), bytes.end()))
        << "expected/" << n;
  }
  for (size_t r = 0; r < w.rank_inputs.size(); ++r) {  // a run of several ranks: inputs/rank<r>/ each
    const fs::path rd = dir / "inputs" / ("rank" + std::to_string(r));
    std::set<std::string> want;
    for (const auto &[n, a] : w.rank_inputs[r]) {
      want.insert(n);
      const auto bytes = io::serialize_npy(a);
      EXPECT_TRUE(slurp(rd / (n + ".npy")) == std::string(bytes.begin(), bytes.end())) << rd << "/" << n;
    }
    EXPECT_EQ(npy_files(rd), want);
  }
  EXPECT_EQ(npy_files(dir / "inputs"), want_in);
  EXPECT_EQ(npy_files(dir / "expected"), want_exp);
  EXPECT_FALSE(slurp(dir / "README.md").empty());
  // A workload of several cores says how it runs (run.json: trn2, its cores and LNC); a single-core one has
  // none.
  EXPECT_EQ(slurp(dir / "run.json"), workloads::run_json_text(w)) << name << "/run.json";
  if (w.cores > 1) {
    const auto j = nlohmann::json::parse(workloads::run_json_text(w));
    EXPECT_EQ(j.at("cores").get<int>(), w.cores);
    EXPECT_EQ(j.at("lnc").get<int>(), w.lnc);
  }
}

TEST_P(Workload, SmallSizeMatchesTheIndependentReference) {
  const std::string name = GetParam();
  const fs::path dir = dir_of(name);
  const workloads::Workload w = regenerate(name);  // for the tolerance (computed from the same inputs)
  const isa::Program p = isa::read_bir_file((dir / (name + ".bir.json")).string());
  sim::RunOptions opt;
  opt.arch = w.cores > 1 ? "trn2" : "trn1";  // LNC=2 and 8 cores a device are trn2 / trn3 (sim/arch)
  // A workload of several cores runs on a Device (sim/device.hpp): each rank's DRAM gets its inputs (the
  // session's per-rank layout: inputs/rank<r>/ over inputs/) and its outputs are checked against expected/.
  std::unique_ptr<sim::Device> device;
  std::unique_ptr<sim::Simulator> single;
  if (w.cores > 1) device = std::make_unique<sim::Device>(p, opt, w.cores, w.lnc);
  else single = std::make_unique<sim::Simulator>(p, opt);
  const int ranks = device ? device->ranks() : 1;
  sim::InputSpec spec;
  spec.dir = (dir / "inputs").string();
  EXPECT_EQ(sim::has_rank_dirs(spec.dir, ranks), !w.rank_inputs.empty());
  for (int r = 0; r < ranks; ++r) {
    engines::Memory &m = device ? device->rank_memory(r) : single->memory();
    const sim::InputSpec rs = ranks > 1 ? sim::rank_inputs(p, spec, r, ranks) : spec;
    EXPECT_EQ(rs.files.size(), w.rank_inputs.empty() ? 0u : w.rank_inputs[size_t(r)].size());
    const auto lines = sim::load_inputs(p, m, rs);
    EXPECT_EQ(lines.size(), w.inputs.size() + rs.files.size());
  }
  const double total = device ? device->run().total_ns : single->run().total_ns;
  EXPECT_GT(total, 0.0);
  for (int r = 0; r < ranks; ++r) {
    engines::Memory &m = device ? device->rank_memory(r) : single->memory();
    std::vector<std::string> checked;
    const auto bad = sim::compare_outputs(p, m, (dir / "expected").string(), w.rtol, w.atol, &checked);
    for (const auto &mm : bad)
      ADD_FAILURE() << name << " rank " << r << ": " << mm.tensor << "[" << mm.index << "] got " << mm.got
                    << ", want " << mm.want << " (rtol " << w.rtol << ", atol " << w.atol << ") " << mm.message;
    EXPECT_EQ(checked.size(), w.expected.size());
  }
}

// Timing-only runs at the small size schedule and finish too (the fidelity table runs the full sizes this way).
TEST_P(Workload, TimingOnlyRunFinishes) {
  const std::string name = GetParam();
  const isa::Program p = isa::read_bir_file((fs::path(dir_of(name)) / (name + ".bir.json")).string());
  const workloads::Workload w = (*workloads::find_generator(name))(workloads::Size::Small, false);
  for (const char *arch : {"trn1", "trn2", "trn3"}) {
    sim::RunOptions opt;
    opt.arch = arch;
    opt.timing_only = true;
    if (w.cores > 1) {
      if (w.lnc > 1 && std::string(arch) == "trn1") continue;  // no logical cores on trn1
      sim::Device d(p, opt, w.cores, w.lnc);
      const sim::DeviceResult r = d.run();
      EXPECT_GT(r.total_ns, 0.0) << arch;
      for (const auto &c : r.cores) EXPECT_EQ(c.dynamic_instructions, p.dynamic_count()) << arch;
      continue;
    }
    sim::Simulator s(p, opt);
    const sim::RunResult r = s.run();
    EXPECT_GT(r.total_ns, 0.0) << arch;
    EXPECT_EQ(r.dynamic_instructions, p.dynamic_count()) << arch;
  }
}

INSTANTIATE_TEST_SUITE_P(All, Workload, ::testing::ValuesIn(names()),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

TEST(StreamedRun, FullSizeMatmulTiledStreamsAsTheWholeScheduleRunsIncludingTheCriticalPathList) {
  // The full-size matmul_tiled (99,328 dynamic instructions at trn1): its critical path's last 10,000 links reach
  // back past the last 65,536 events a streamed run keeps, so the streamed run replays itself for those events
  // (sim/core_run.cpp); every figure of the stats document is the materialised run's (tests/sim/
  // test_streamed_run.cpp compares the committed workloads field by field).
  const auto *gen = workloads::find_generator("matmul_tiled");
  ASSERT_NE(gen, nullptr);
  const isa::Program p = (*gen)(workloads::Size::Full, false).program;
  nlohmann::json doc[2];
  for (int i = 0; i < 2; ++i) {
    sim::RunOptions o;
    o.timing_only = true;
    o.schedule = i == 0 ? sim::ScheduleMode::Whole : sim::ScheduleMode::Streamed;
    sim::Simulator s(p, o);
    const sim::RunResult r = s.run();
    EXPECT_EQ(r.streamed, i == 1);
    doc[i] = sim::stats_json(r, s.schedule(), p);
  }
  EXPECT_EQ(doc[0].at("critical_path").size(), sim::kCriticalPathListed);
  EXPECT_EQ(doc[0].at("critical_path"), doc[1].at("critical_path"));
  EXPECT_EQ(doc[0], doc[1]);
}
