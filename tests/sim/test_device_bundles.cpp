// Bundle streams of a multi-core kernel (issue 17: "encode/validate still works per core"): `encode --cores N`
// lowers the kernel once per core (its shard id and rank resolved, sim/stream_form.hpp StreamFormOptions), and
// the N stream sets run on N cores give what the BIR gives on N cores.
#include <gtest/gtest.h>

#include <filesystem>

#include "neuronsim/builder.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/stream_form.hpp"
#include "neuronsim/engines/arch.hpp"
#include "neuronsim/sim/session.hpp"
#include "support/shard_program.hpp"
#include "support/temp_dir.hpp"

using namespace neuronsim;
using builder::Builder;
using isa::InstructionType;

namespace {

namespace fs = std::filesystem;
using V = std::vector<float>;

sim::RunOptions trn2(bool dma_triggers = true) {
  sim::RunOptions o;
  o.arch = "trn2";
  o.dma_triggers = dma_triggers;
  return o;
}

isa::Program shard_program() { return test::shard_save_program().program; }

std::vector<float> tensor(sim::Device &d, int rank, const isa::Program &p, const std::string &name) {
  return sim::tensor_f32(p, d.rank_memory(rank), p.find_tensor(name));
}

} // namespace

// Core i's stream has the Save's start resolved for its shard: 2 * 0 = 0 on core 0, 2 * 1 = 2 elements (8 bytes of
// fp32) on core 1; the streams on two cores fill the shared output as the BIR does: {1, 1, 2, 2}.
TEST(DeviceBundles, EachCoreIsLoweredForItsShard) {
  sim::Kernel k;
  k.program = shard_program();
  const std::string dir = neuronsim::testing::temp_dir() + "/enc";
  const auto sums = sim::encode_kernel_cores(k, isa::CoreGen::V3, "trn2", dir, 2, 2);
  ASSERT_EQ(sums.size(), 2u);
  EXPECT_TRUE(fs::is_regular_file(dir + "/cores.json"));
  int lnc = 0;
  isa::CoreGen gen = isa::CoreGen::V2;
  const std::vector<isa::Program> cores = sim::read_core_bundles(dir, &lnc, &gen);
  ASSERT_EQ(cores.size(), 2u);
  EXPECT_EQ(lnc, 2);
  EXPECT_EQ(gen, isa::CoreGen::V3);
  for (int c = 0; c < 2; ++c) {
    const isa::Inst *save = nullptr;
    for (const auto &in : cores[static_cast<size_t>(c)].insts)
      if (in.type == InstructionType::Save) save = &in;
    ASSERT_NE(save, nullptr) << c;
    EXPECT_EQ(save->outs[0].start.kind, isa::Expr::Kind::Const) << c;
    EXPECT_EQ(save->outs[0].start.c, 2 * c) << c;
  }
  sim::Device d({&cores[0], &cores[1]}, trn2(), 2);
  const V one{1, 1}, two{2, 2};
  const int t = cores[0].find_tensor("t");
  engines::Access a;  // all of t [1, 2]: one partition of two fp32 elements
  a.tensor = t;
  a.dtype = isa::Dtype::float32;
  a.ap = {{2, 1}, {1, 2}};
  d.core(0).memory().write_f32(a, one.data());
  d.core(1).memory().write_f32(a, two.data());
  d.run();
  EXPECT_EQ(tensor(d, 0, cores[0], "o"), (V{1, 1, 2, 2}));
}

// The multi-core workloads: the N stream sets on N cores give, on every core, exactly the simulated time of the
// programs `encode --cores` lowered before writing them (sim/stream_form.hpp, core i with its shard and rank), and
// outputs byte-identical to the BIR's on N cores for every rank. The time also equals the BIR's when the lowering
// added no sync carrier (tp_mlp: the BIR run without its DMA triggers, the one cost a stream does not carry,
// tests/sim/test_stream_form.cpp SameOutputsAndSameTimeAsTheBir); matmul_lnc2's 8 carriers (EventSemaphore, one
// instruction slot each on PE and DVE) make its streams slightly slower (sim/stream_form.hpp
// StreamFormOptions::fit_bundles).
TEST(DeviceBundles, WorkloadsRunTheSameOnEveryCore) {
  struct Case {
    const char *name;
    int cores, lnc;
    int64_t carriers;  // per core
  };
  for (const Case c : {Case{"matmul_lnc2", 2, 2, 8}, Case{"tp_mlp_2ranks", 2, 1, 1}, Case{"tp_mlp_4ranks", 4, 1, 1}}) {
    const sim::Kernel k = sim::load_kernel(std::string(NEURONSIM_SOURCE_DIR) + "/workloads/multicore/" + c.name);
    const std::string dir = neuronsim::testing::temp_dir() + "/" + c.name;
    const auto sums = sim::encode_kernel_cores(k, isa::CoreGen::V3, "trn2", dir, c.cores, c.lnc);
    const sim::Kernel kb = sim::load_kernel(dir);
    ASSERT_EQ(kb.core_programs.size(), static_cast<size_t>(c.cores)) << c.name;
    EXPECT_EQ(kb.core_lnc, c.lnc);
    std::vector<isa::Program> lowered;
    for (int i = 0; i < c.cores; ++i) {
      EXPECT_EQ(sums[static_cast<size_t>(i)].stream_form.carriers, c.carriers) << c.name << " core " << i;
      sim::StreamFormOptions lo;
      lo.shard = i % c.lnc;
      lo.rank = i / c.lnc;
      lowered.push_back(sim::to_stream_form(k.program, engines::load_arch("trn2"), lo));
    }

    sim::Device bir(k.program, trn2(/*dma_triggers=*/false), c.cores, c.lnc);
    std::vector<const isa::Program *> progs, lows;
    for (const auto &p : kb.core_programs) progs.push_back(&p);
    for (const auto &p : lowered) lows.push_back(&p);
    sim::Device streams(progs, trn2(), c.lnc), low(lows, trn2(), c.lnc);
    const int ranks = c.cores / c.lnc;
    for (int r = 0; r < ranks; ++r) {
      sim::InputSpec spec;
      spec.dir = k.inputs_dir;
      const sim::InputSpec rs = sim::rank_inputs(k.program, spec, r, ranks);
      sim::load_inputs(k.program, bir.rank_memory(r), rs);
      sim::load_inputs(kb.program, streams.rank_memory(r), rs);
      sim::load_inputs(lowered[0], low.rank_memory(r), rs);
    }
    const sim::DeviceResult rb = bir.run(), rs = streams.run(), rl = low.run();
    EXPECT_GT(rs.total_ns, 0.0);
    EXPECT_EQ(rs.total_ns, rl.total_ns) << c.name;
    EXPECT_EQ(rs.dynamic_instructions, rl.dynamic_instructions) << c.name;
    for (int i = 0; i < c.cores; ++i)
      EXPECT_EQ(rs.cores[static_cast<size_t>(i)].total_ns, rl.cores[static_cast<size_t>(i)].total_ns)
          << c.name << " core " << i;
    if (c.carriers == 1) {  // tp_mlp's carrier waits where its instruction would have waited anyway
      EXPECT_EQ(rs.total_ns, rb.total_ns) << c.name;
      for (int i = 0; i < c.cores; ++i)
        EXPECT_EQ(rs.cores[static_cast<size_t>(i)].total_ns, rb.cores[static_cast<size_t>(i)].total_ns)
            << c.name << " core " << i;
    } else {
      EXPECT_GE(rs.total_ns, rb.total_ns) << c.name;
    }
    EXPECT_EQ(rb.collectives, rs.collectives) << c.name;
    EXPECT_EQ(rs.collectives, c.lnc == 1 ? 1 : 0) << c.name;  // tp_mlp: one AllReduce; matmul_lnc2 none
    for (int r = 0; r < ranks; ++r)
      for (const auto &t : k.program.tensors) {
        if (!t.is_output()) continue;
        EXPECT_EQ(tensor(bir, r, k.program, t.name), tensor(streams, r, kb.program, t.name))
            << c.name << " rank " << r << " " << t.name;
      }
  }
}

// A folder that lacks a core's streams, or one cores.json does not list, is refused naming that folder.
TEST(DeviceBundles, MissingOrExtraCoreFolderIsNamed) {
  sim::Kernel k;
  k.program = shard_program();
  const std::string dir = neuronsim::testing::temp_dir() + "/enc";
  sim::encode_kernel_cores(k, isa::CoreGen::V3, "trn2", dir, 2, 2);
  fs::rename(dir + "/core1", dir + "/core2");
  try {
    sim::load_kernel(dir);
    FAIL() << "a folder without core1 was read";
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/core1"), std::string::npos) << e.what();
  }
  fs::create_directories(dir + "/core1");
  fs::copy(dir + "/core2", dir + "/core1");
  try {
    sim::load_kernel(dir);
    FAIL() << "a folder with an extra core2 was read";
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/core2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("extra core folder"), std::string::npos) << e.what();
  }
}

// Speed (issue 17 item 8): a core's schedule depends on its program and shard id only, so cores of the same shard
// share one (built once). 4 cores of LNC=2: cores 0 and 2 are shard 0, cores 1 and 3 shard 1. The shard's
// schedules differ where ShardIDKind does: the Save's output start is 2 * shard elements (0 on shard 0, 2 on 1).
TEST(DeviceSchedule, CoresOfOneShardShareTheirSchedule) {
  const isa::Program p = shard_program();
  sim::Device d(p, trn2(), 4, 2);
  EXPECT_EQ(&d.core(2).schedule(), &d.core(0).schedule());
  EXPECT_EQ(&d.core(3).schedule(), &d.core(1).schedule());
  EXPECT_NE(&d.core(1).schedule(), &d.core(0).schedule());
  auto save_start = [](const sim::Schedule &s) {
    for (const auto &si : s.insts)
      if (si.d.inst && si.d.inst->type == InstructionType::Save && !si.d.outs.empty()) return si.d.outs[0].start;
    return int64_t(-1);
  };
  EXPECT_EQ(save_start(d.core(0).schedule()), 0);
  EXPECT_EQ(save_start(d.core(1).schedule()), 2);
  sim::Device d8(p, trn2(), 8, 1);  // LNC=1: every core is shard 0, one schedule
  for (int i = 1; i < 8; ++i) EXPECT_EQ(&d8.core(i).schedule(), &d8.core(0).schedule()) << i;
  // Different programs never share (a multi-core bundle folder: one program per core).
  const isa::Program q = shard_program();
  sim::Device dq({&p, &q}, trn2(), 1);
  EXPECT_NE(&dq.core(1).schedule(), &dq.core(0).schedule());
  // Shared or not, every core runs to the same time (the cores are alike and meet no collective).
  const sim::DeviceResult r = d8.run();
  for (int i = 1; i < 8; ++i) EXPECT_EQ(r.cores[static_cast<size_t>(i)].total_ns, r.cores[0].total_ns) << i;
}
