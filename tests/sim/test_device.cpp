// Several NeuronCores in one run (sim/device.hpp): shard ids and ranks, collectives between cores (numerics by
// hand-checked vectors, reference neuronx-cc/bir/sim-bn-rng-collective-dma.md 4), deadlock across cores, and the
// link model's closed form (engines/cost/link.cpp).
// The device's shared HBM: test_device_hbm.cpp; the collective kinds of the public NKI docs:
// test_device_collectives.cpp; the helpers they share: tests/support/device_tensors.hpp.
#include <gtest/gtest.h>

#include <cmath>

#include "neuronsim/builder.hpp"
#include "neuronsim/engines/collective.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/io.hpp"
#include "support/device_tensors.hpp"
#include "support/shard_program.hpp"

using namespace neuronsim;
using builder::Builder;
using builder::TensorHandle;
using isa::AluOp;
using isa::InstructionType;

// The helpers below live in namespace test_device, so this file shares a unity batch with the other tests of its
// target without its file-local names clashing with theirs (docs/dev/build-time.md).
namespace test_device {

using test::device::V;
using test::device::expect_same;
using test::device::kNaN;
using test::device::opts;
using test::device::read;
using test::device::write;

namespace {

// One CollectiveCompute of `kind` from a [1, in_n] to a [1, out_n] SBUF tile on 2 cores, replica group {0, 1}; the
// cores' inputs are in0 and in1; returns each core's output.
std::vector<V> collective2(const std::string &kind, AluOp op, const V &in0, const V &in1, int64_t out_n) {
  Builder b("cc");
  auto a = b.sbuf("a", {1, static_cast<int64_t>(in0.size())}), o = b.sbuf("o", {1, out_n});
  b.add(InstructionType::CollectiveCompute, {Builder::ap(a.all())}, {Builder::ap(o.all())})
      .collective_kind(kind).op(op).replica_groups({{0, 1}});
  isa::Program p = b.finish();
  sim::Device d(p, opts(), 2, 1);
  write(d.core(0), a, in0);
  write(d.core(1), a, in1);
  d.run();
  return {read(d.core(0), o), read(d.core(1), o)};
}

} // namespace

// doReduction (4.2) over two ranks, rank order: res = ins[0], then res op= ins[1]. Inputs: core 0 {1, -2, NaN, 5},
// core 1 {3, 4, 7, NaN}.
//   add: {1+3, -2+4, NaN+7, 5+NaN} = {4, 2, NaN, NaN}
//   max (maxss, accumulator the source operand: x > acc ? x : acc): 3>1 -> 3; 4>-2 -> 4; 7>NaN false -> NaN (the
//       accumulator's NaN stays); NaN>5 false -> 5 (a later rank's NaN is dropped)  = {3, 4, NaN, 5}
//   min (x < acc ? x : acc): 3<1 false -> 1; 4<-2 false -> -2; NaN; NaN<5 false -> 5 = {1, -2, NaN, 5}
TEST(Device, AllReduceAddMaxMinWithNaN) {
  const V in0{1, -2, kNaN, 5}, in1{3, 4, 7, kNaN};
  const struct {
    AluOp op;
    V want;
  } cases[] = {{AluOp::add, {4, 2, kNaN, kNaN}}, {AluOp::max, {3, 4, kNaN, 5}}, {AluOp::min, {1, -2, kNaN, 5}}};
  for (const auto &c : cases) {
    const auto out = collective2("AllReduce", c.op, in0, in1, 4);
    expect_same(out[0], c.want, std::string(isa::alu_name(c.op)) + " core 0");
    expect_same(out[1], c.want, std::string(isa::alu_name(c.op)) + " core 1");
  }
}

// The reducer's element step alone: the same SSE rule with the accumulator first.
TEST(Device, ReduceStepKeepsTheAccumulatorOnNaN) {
  EXPECT_EQ(engines::collective_reduce(AluOp::max, 1.0f, kNaN), 1.0f);
  EXPECT_TRUE(std::isnan(engines::collective_reduce(AluOp::max, kNaN, 1.0f)));
  EXPECT_EQ(engines::collective_reduce(AluOp::min, -1.0f, kNaN), -1.0f);
  EXPECT_EQ(engines::collective_reduce(AluOp::add, 1.5f, 2.0f), 3.5f);
}

// AllGather: each core's output is the ranks' inputs in rank order: {1, 2} ++ {3, 4}.
// ReduceScatter add: the sum {1+10, 2+20, 3+30, 4+40} = {11, 22, 33, 44}; rank r keeps chunk r of 2.
// AllToAll: rank r's chunk p <- rank p's chunk r (chunks of 2): core 0 {1, 2 | 5, 6}, core 1 {3, 4 | 7, 8}.
TEST(Device, AllGatherReduceScatterAllToAll) {
  auto g = collective2("AllGather", AluOp::add, {1, 2}, {3, 4}, 4);
  EXPECT_EQ(g[0], (V{1, 2, 3, 4}));
  EXPECT_EQ(g[1], (V{1, 2, 3, 4}));
  auto rs = collective2("ReduceScatter", AluOp::add, {1, 2, 3, 4}, {10, 20, 30, 40}, 2);
  EXPECT_EQ(rs[0], (V{11, 22}));
  EXPECT_EQ(rs[1], (V{33, 44}));
  auto rsm = collective2("ReduceScatter", AluOp::max, {1, 25, 3, 40}, {10, 20, 30, 4}, 2);
  EXPECT_EQ(rsm[0], (V{10, 25}));  // max(1, 10), max(25, 20)
  EXPECT_EQ(rsm[1], (V{30, 40}));  // max(3, 30), max(40, 4)
  auto a2a = collective2("AllToAll", AluOp::add, {1, 2, 3, 4}, {5, 6, 7, 8}, 4);
  EXPECT_EQ(a2a[0], (V{1, 2, 5, 6}));
  EXPECT_EQ(a2a[1], (V{3, 4, 7, 8}));
}

// Permute by src_target_pairs [[0, 1], [1, 0]]: the cores swap their inputs.
TEST(Device, PermuteSwapsByPairs) {
  Builder b("perm");
  auto a = b.sbuf("a", {1, 2}), o = b.sbuf("o", {1, 2});
  b.add(InstructionType::CollectiveCompute, {Builder::ap(a.all())}, {Builder::ap(o.all())})
      .collective_kind("Permute").src_target_pairs({{0, 1}, {1, 0}});
  isa::Program p = b.finish();
  sim::Device d(p, opts(), 2, 1);
  write(d.core(0), a, {1, 2});
  write(d.core(1), a, {3, 4});
  d.run();
  EXPECT_EQ(read(d.core(0), o), (V{3, 4}));
  EXPECT_EQ(read(d.core(1), o), (V{1, 2}));
}

// A 4-core AllReduce in two replica groups {0, 2} and {1, 3}: each group sums its own two inputs (core i holds
// {i, 10 i}): group {0, 2}: {0+2, 0+20} = {2, 20}; group {1, 3}: {1+3, 10+30} = {4, 40}.
TEST(Device, ReplicaGroupsPartitionTheCores) {
  Builder b("groups");
  auto a = b.sbuf("a", {1, 2}), o = b.sbuf("o", {1, 2});
  b.add(InstructionType::CollectiveCompute, {Builder::ap(a.all())}, {Builder::ap(o.all())})
      .collective_kind("AllReduce").op(AluOp::add).replica_groups({{0, 2}, {1, 3}});
  isa::Program p = b.finish();
  sim::Device d(p, opts(), 4, 1);
  for (int i = 0; i < 4; ++i) write(d.core(i), a, {static_cast<float>(i), 10.0f * i});
  d.run();
  EXPECT_EQ(read(d.core(0), o), (V{2, 20}));
  EXPECT_EQ(read(d.core(2), o), (V{2, 20}));
  EXPECT_EQ(read(d.core(1), o), (V{4, 40}));
  EXPECT_EQ(read(d.core(3), o), (V{4, 40}));
}

// Shard ids: every core saves its [1, 2] tile to o[0, 2 s : 2 s + 2] of the shared DRAM output (the start is
// 2 * ShardIDKind); with LNC=2 core 0 (tile {1, 1}) and core 1 (tile {2, 2}) fill the two halves: {1, 1, 2, 2}.
// Ranks: GetGlobalRankId is core / LNC (birsim's getRankIdforCore).
TEST(Device, ShardIdSplitsTheSharedOutput) {
  Builder b("shard");
  auto o = b.output("o", {1, 4});
  auto t = b.sbuf("t", {1, 2}), r = b.sbuf("r", {1, 1}, isa::Dtype::int32);
  b.add(InstructionType::Save, {Builder::ap(t.all())}, {Builder::ap(o.tile(0, 1, 0, 2))});
  b.add(InstructionType::GetGlobalRankId, {}, {Builder::ap(r.all())});
  isa::Program p = b.finish();
  p.insts[0].outs[0].start = test::twice_the_shard();
  sim::Device d(p, opts("trn2"), 2, 2);
  write(d.core(0), t, {1, 1});
  write(d.core(1), t, {2, 2});
  d.run();
  EXPECT_EQ(read(d.core(0), o), (V{1, 1, 2, 2}));  // one DRAM: core 1 sees the same tensor
  EXPECT_EQ(read(d.core(1), o), (V{1, 1, 2, 2}));
  EXPECT_EQ(read(d.core(0), r), (V{0}));  // LNC=2: both physical cores are logical core (rank) 0
  EXPECT_EQ(read(d.core(1), r), (V{0}));
  sim::Device d4(p, opts("trn2"), 4, 2);  // cores 2, 3 are rank 1 (shards 0, 1 again)
  for (int i = 0; i < 4; ++i) write(d4.core(i), t, {0, 0});
  d4.run();
  EXPECT_EQ(read(d4.core(2), r), (V{1}));
  EXPECT_EQ(read(d4.core(3), r), (V{1}));
}

// DRAM per rank: with 4 cores of LNC=2 core i saves the tile {i+1, i+1} to o[0, 2 s : 2 s + 2] (s = i % 2). The
// shards of rank 0 (cores 0, 1) share one DRAM and see {1, 1, 2, 2}; rank 1 (cores 2, 3) has its own copy of o and
// sees {3, 3, 4, 4}, not rank 0's values. With LNC=1 (2 cores, both shard 0) each rank sees only its own write:
// core 0 reads {1, 1} at o[0, 0:2], core 1 {2, 2} (the rest of o is never written).
TEST(Device, DramIsSharedByTheShardsOfARankAndPrivateToEachRank) {
  const auto [p, t, o] = test::shard_save_program();
  sim::Device d(p, opts("trn2"), 4, 2);
  EXPECT_EQ(d.ranks(), 2);
  for (int i = 0; i < 4; ++i) write(d.core(i), t, {float(i + 1), float(i + 1)});
  d.run();
  EXPECT_EQ(read(d.core(0), o), (V{1, 1, 2, 2}));
  EXPECT_EQ(read(d.core(1), o), (V{1, 1, 2, 2}));
  EXPECT_EQ(read(d.core(2), o), (V{3, 3, 4, 4}));
  EXPECT_EQ(read(d.core(3), o), (V{3, 3, 4, 4}));
  EXPECT_EQ(&d.rank_memory(1), &d.core(2).memory());
  sim::Device d1(p, opts("trn2"), 2, 1);
  for (int i = 0; i < 2; ++i) write(d1.core(i), t, {float(i + 1), float(i + 1)});
  d1.run();
  const V o0 = read(d1.core(0), o), o1 = read(d1.core(1), o);
  EXPECT_EQ(V(o0.begin(), o0.begin() + 2), (V{1, 1}));
  EXPECT_EQ(V(o1.begin(), o1.begin() + 2), (V{2, 2}));
}

// LNC=2 is trn2/trn3 only; cores in 1..8.
TEST(Device, RefusesLncAndCoreCountsTheArchCannotHold) {
  Builder b("k");
  b.add(InstructionType::NoOp, {}, {});
  isa::Program p = b.finish();
  try {
    sim::Device d(p, opts("trn1"), 2, 2);
    FAIL();
  } catch (const InputError &e) {
    EXPECT_EQ(e.context().field, "lnc");
    EXPECT_NE(std::string(e.what()).find("trn1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(sim::Device(p, opts("trn2"), 9, 1), InputError);
  EXPECT_THROW(sim::Device(p, opts("trn2"), 3, 2), InputError);
}

// Send/Recv pairs (one program per core): core 0 sends a, core 1 receives it into c.
TEST(Device, SendRecvPair) {
  Builder b0("send"), b1("recv");
  auto a0 = b0.sbuf("a", {1, 2}), c0 = b0.sbuf("c", {1, 2});
  auto a1 = b1.sbuf("a", {1, 2}), c1 = b1.sbuf("c", {1, 2});
  (void)c0;
  (void)a1;
  b0.add(InstructionType::CollectiveSend, {Builder::ap(a0.all())}, {}).peer_id(1);
  b1.add(InstructionType::CollectiveRecv, {}, {Builder::ap(c1.all())}).peer_id(0);
  isa::Program p0 = b0.finish(), p1 = b1.finish();
  sim::Device d({&p0, &p1}, opts(), 1);
  write(d.core(0), a0, {3, -4});
  write(d.core(1), c1, {0, 0});
  d.run();
  EXPECT_EQ(read(d.core(1), c1), (V{3, -4}));
}

// A receive with no matching send is a deadlock naming the blocked core, its instruction and the core it waits for.
TEST(Device, UnmatchedRecvIsADeadlockAcrossCores) {
  Builder b0("recv"), b1("idle");
  auto c0 = b0.sbuf("c", {1, 2});
  auto c1 = b1.sbuf("c", {1, 2});
  b0.add(InstructionType::CollectiveRecv, {}, {Builder::ap(c0.all())}).peer_id(1).name("wait_for_1");
  b1.add(InstructionType::Memset, {}, {Builder::ap(c1.all())}).constant(1.0);
  isa::Program p0 = b0.finish(), p1 = b1.finish();
  sim::Device d({&p0, &p1}, opts(), 1);
  try {
    d.run();
    FAIL();
  } catch (const SimulationError &e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("deadlock across cores"), std::string::npos) << m;
    EXPECT_NE(m.find("core 0: "), std::string::npos) << m;
    EXPECT_NE(m.find("'wait_for_1'"), std::string::npos) << m;
    EXPECT_NE(m.find("waits for core 1"), std::string::npos) << m;
  }
  // The process stays usable: a single-core run after the deadlocked one.
  sim::Simulator s(p1, opts());
  EXPECT_GT(s.run().total_ns, 0.0);
}

// The two-rank AllReduce's time is the link model's closed form (trn2, sim/arch/trn2.json): a [1, 1024] fp32
// buffer is 4096 B; a ring of N = 2 takes 2(N-1) = 2 steps of 4096 / 2 = 2048 B, each the step latency 1300 ns
// plus 2048 B / 360 B/ns: 2 x (1300 + 5.688889) = 2611.377778 ns. Both cores reach it together (the same program),
// so each core's collective occupies POOL for exactly that long.
TEST(Device, TwoRankAllReduceTimeIsTheRingClosedForm) {
  Builder b("ar");
  auto a = b.sbuf("a", {1, 1024}), o = b.sbuf("o", {1, 1024});
  b.add(InstructionType::CollectiveCompute, {Builder::ap(a.all())}, {Builder::ap(o.all())})
      .collective_kind("AllReduce").op(AluOp::add).replica_groups({{0, 1}});
  isa::Program p = b.finish();
  sim::Device d(p, opts("trn2", true), 2, 1);
  const sim::DeviceResult r = d.run();
  const double want = 2 * (1300.0 + 2048.0 / 360.0);
  EXPECT_NEAR(r.link_busy_ns, want, 1e-6);
  EXPECT_EQ(r.collectives, 1);
  for (const auto &c : r.cores) {
    ASSERT_EQ(c.events.size(), 1u);
    EXPECT_NEAR(c.events[0].end_ns - c.events[0].start_ns, want, 1e-3);
  }
  EXPECT_NEAR(engines::collective_link_ns(d.core(0).arch(), engines::LinkPattern::AllGather, 4, 4096, false),
              3 * (1300.0 + 1024.0 / 360.0), 1e-9);  // N-1 = 3 steps of 4096 / 4 B
}

} // namespace test_device
