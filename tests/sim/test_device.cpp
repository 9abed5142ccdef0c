// Several NeuronCores in one run (sim/device.hpp): shard ids and ranks, collectives between cores (numerics by
// hand-checked vectors, reference neuronx-cc/bir/sim-bn-rng-collective-dma.md 4), deadlock across cores, and the
// link model's closed form (engines/cost/link.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "neuronsim/builder.hpp"
#include "neuronsim/engines/collective.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/io.hpp"
#include "support/shard_program.hpp"

using namespace neuronsim;
using builder::Builder;
using builder::TensorHandle;
using isa::AluOp;
using isa::InstructionType;

namespace {

using V = std::vector<float>;

engines::Access whole(const TensorHandle &t) {
  engines::Access x;
  const builder::Ap a = t.all();
  x.tensor = a.tensor;
  x.dtype = a.dtype;
  x.start = a.start.to_expr().eval(nullptr);
  x.ap = a.dims;
  return x;
}
V read(sim::Simulator &s, const TensorHandle &t) {
  const engines::Access a = whole(t);
  V v(static_cast<size_t>(a.partitions() * a.free_elements()));
  s.memory().read_f32(a, v.data());
  return v;
}
void write(sim::Simulator &s, const TensorHandle &t, const V &v) { s.memory().write_f32(whole(t), v.data()); }

sim::RunOptions opts(const char *arch = "trn2", bool timing_only = false) {
  sim::RunOptions o;
  o.arch = arch;
  o.timing_only = timing_only;
  return o;
}

// NaN-aware equality for the reducer's vectors.
void expect_same(const V &got, const V &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got[i])) << what << "[" << i << "] = " << got[i];
    else EXPECT_EQ(got[i], want[i]) << what << "[" << i << "]";
  }
}

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

const float kNaN = std::nanf("");

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

// ---- The device's shared HBM (docs/multicore.md, engines/hbm.hpp) -------------------------------------

namespace {

// One [128, 32768] fp32 DRAM -> SBUF load per core: 16 MiB, each of trn2's 16 DMA engines moving 8 rows of
// 131072 B (one descriptor per row). Returns each core's transfer time, from entering its ring to its last byte.
std::vector<double> load_16mib(int cores, const char *arch = "trn2") {
  Builder b("load");
  auto a = b.input("a", {128, 32768});
  auto t = b.sbuf("t", {128, 32768});
  b.add(InstructionType::Load, {Builder::ap(a.all())}, {Builder::ap(t.all())});
  isa::Program p = b.finish();
  std::vector<double> out;
  auto take = [&](const sim::RunResult &r) {
    for (const auto &e : r.events)
      if (e.queue >= sim::kNumEngines) out.push_back(e.end_ns - e.issue_ns);
  };
  if (cores == 0) {  // a one-core run (the plain Simulator)
    sim::Simulator s(p, opts(arch, true));
    take(s.run());
    return out;
  }
  sim::Device d(p, opts(arch, true), cores, 1);
  for (const auto &c : d.run().cores) take(c);
  return out;
}

} // namespace

// trn2 (sim/arch/trn2.json). The load's piece on each engine: dma_transfer_overhead_ns 7 + 8 descriptors of 131072 /
// 23 ns (integer ps: 5698783) = 45597.264 ns; the last engine starts 15 x 21.5 = 322.5 ns after the first byte,
// which follows the ring entry by dma_latency_ns 850: the engines end at 850 + 322.5 + 45597.264 = 46769.764 ns.
// Its 16 MiB pass an HBM pool from the first byte at most at the engines' 16 x 23 = 368 B/ns:
//  - a one-core run: the core's share of the device's HBM, hbm_bytes_per_ns = 360 B/ns: 16777216 / 360 =
//    46603.378 ns, so 850 + 46603.378 = 47453.378 ns (its bytes, not its engines, end it);
//  - two cores of a multi-core run share the device's 2900 B/ns: 736 B/ns asked, each stream at 368 B/ns
//    (45590.26 ns): the engines end it, 46769.764 ns;
//  - eight cores ask for 2944 > 2900 B/ns: each gets 2900 / 8 = 362.5 B/ns, 16777216 / 362.5 = 46281.975 ns,
//    longer than its engines: 850 + 46281.975 = 47131.975 ns.
TEST(DeviceHbm, EightCoresLoadingAtOnceShareTheDevicesBandwidth) {
  const std::vector<double> one = load_16mib(0), two = load_16mib(2), eight = load_16mib(8);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_NEAR(one[0], 850.0 + 16777216.0 / 360.0, 2e-3);
  ASSERT_EQ(two.size(), 2u);
  for (double x : two) EXPECT_NEAR(x, 850.0 + 322.5 + 7.0 + 8 * 5698.783, 1e-3);
  ASSERT_EQ(eight.size(), 8u);
  for (double x : eight) EXPECT_NEAR(x, 850.0 + 16777216.0 / 362.5, 2e-3);
}

namespace {

// Two trn1 cores (one device), each running `load` (the [128, 4096] fp32 load above, 2 MiB) and/or an AllReduce of
// a [128, 2048] fp32 SBUF buffer (1 MiB) between them, both issued from the same queue at t0 (the collective right
// after the load's one-cycle trigger). Returns core 0's (load time from entering its ring, collective time).
std::pair<double, double> load_and_allreduce(bool load, bool allreduce) {
  Builder b("ovl");
  auto a = b.input("a", {128, 4096});
  auto t = b.sbuf("t", {128, 4096});
  auto c = b.sbuf("c", {128, 2048}), o = b.sbuf("o", {128, 2048});
  if (load) b.add(InstructionType::Load, {Builder::ap(a.all())}, {Builder::ap(t.all())});
  if (allreduce)
    b.add(InstructionType::CollectiveCompute, {Builder::ap(c.all())}, {Builder::ap(o.all())})
        .collective_kind("AllReduce").op(AluOp::add).replica_groups({{0, 1}});
  isa::Program p = b.finish();
  sim::Device d(p, opts("trn1", true), 2, 1);
  const sim::DeviceResult r = d.run();
  double dma = 0, cc = 0;
  for (const auto &e : r.cores[0].events) {
    if (e.queue >= sim::kNumEngines) dma = e.end_ns - e.issue_ns;
    else if (allreduce && e.inst == (load ? 1 : 0)) cc = e.end_ns - e.start_ns;
  }
  return {dma, cc};
}

} // namespace

// The collective's ring traffic competes with the cores' DMAs on the device's HBM (trn1: 820 B/ns for 2 cores,
// sim/arch/trn1.json). The AllReduce of 1 MiB on 2 ranks is 2 steps of 524288 B per member: 2 members x 2 steps x
// 524288 = 2 MiB through the HBM at most at 2 x 410 = 820 B/ns (link_intra_bytes_per_ns per member).
//  - Alone: the link model's closed form, 2 x (1300 + 524288 / 410) = 5157.502 ns.
//  - The loads alone: their engines end them: 850 + 15 x 21.5 + 7 + 8 x 16384 / 17 (integer ps 963765) =
//    8889.62 ns; their streams, capped at 16 x 17 = 272 B/ns each, would pass in 850 + 7710.12 ns.
//  - Together: the collective's stream runs alone at 820 B/ns for the loads' 850 ns latency (697000 B), then
//    three streams (caps 272, 272, 820) share 820 B/ns: the loads keep their caps, the collective gets 276 B/ns
//    and moves its other 1400152 B in 5072.99 ns: 2 step latencies 2600 + 850 + 5072.99 = 8522.99 ns. The loads,
//    bound by their engines, are not slowed.
TEST(DeviceHbm, ACollectiveOverlappingLoadsSharesTheDevicesHbmWithThem) {
  const auto alone = load_and_allreduce(false, true), loads = load_and_allreduce(true, false),
             both = load_and_allreduce(true, true);
  EXPECT_NEAR(alone.second, 2 * (1300.0 + 524288.0 / 410.0), 1e-3);
  const double engines = 850.0 + 322.5 + 7.0 + 8 * 963.765;
  EXPECT_NEAR(loads.first, engines, 1e-3);
  EXPECT_NEAR(both.first, engines, 1e-3);
  EXPECT_NEAR(both.second, 2 * 1300.0 + 850.0 + (2097152.0 - 820.0 * 850.0) / 276.0, 2e-3);
}

// ---- The six kinds with semantics from the public NKI docs (engines/ops/collective.cpp) ---------------------

namespace {

// A one-instruction program: CollectiveCompute `kind` from the [1, n] SBUF tiles of `in_sizes` (ins[0], ins[1],
// ...) to a [1, out_n] tile, replica group `group`. The tiles are a, b, ... and o.
struct CcProgram {
  isa::Program p;
  std::vector<TensorHandle> ins;
  TensorHandle o;
};
CcProgram cc_program(const std::string &kind, AluOp op, const std::vector<int64_t> &in_sizes, int64_t out_n,
                     const std::vector<std::vector<int64_t>> &groups, isa::Dtype second_dtype = isa::Dtype::float32) {
  Builder b("cc");
  std::vector<TensorHandle> ins;
  std::vector<isa::Arg> args;
  for (size_t i = 0; i < in_sizes.size(); ++i) {
    ins.push_back(b.sbuf(std::string(1, static_cast<char>('a' + i)), {1, in_sizes[i]},
                         i == 1 ? second_dtype : isa::Dtype::float32));
    args.push_back(Builder::ap(ins.back().all()));
  }
  auto o = b.sbuf("o", {1, out_n});
  b.add(InstructionType::CollectiveCompute, args, {Builder::ap(o.all())}).collective_kind(kind).op(op)
      .replica_groups(groups);  // empty: every core of the run
  return {b.finish(), ins, o};
}

isa::Expr shard_expr() {
  isa::Expr s;
  s.kind = isa::Expr::Kind::ShardId;
  s.k = 2;
  return s;
}

// The error of running `d`, or "" when it runs.
template <typename Run> std::string error_of(Run run) {
  try {
    run();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

// PermuteImplicit (NKI collective_permute_implicit): in the rank list [0, 2, 1], a ring in list order, each rank
// receives its predecessor's input: 0 -> 2 -> 1 -> 0. Core i holds {i + 1, 10 (i + 1)}.
//   core 2 <- core 0: {1, 10};  core 1 <- core 2: {3, 30};  core 0 <- core 1: {2, 20}
// (rank order would have given core 1 <- core 0: the list order is what decides.)
TEST(DeviceCollectives, PermuteImplicitReceivesFromThePredecessorInListOrder) {
  CcProgram c = cc_program("PermuteImplicit", AluOp::bypass, {2}, 2, {{0, 2, 1}});
  sim::Device d(c.p, opts(), 3, 1);
  for (int i = 0; i < 3; ++i) write(d.core(i), c.ins[0], {i + 1.0f, 10.0f * (i + 1)});
  d.run();
  EXPECT_EQ(read(d.core(2), c.o), (V{1, 10}));
  EXPECT_EQ(read(d.core(1), c.o), (V{3, 30}));
  EXPECT_EQ(read(d.core(0), c.o), (V{2, 20}));
}

// PermuteReduceImplicit (NKI collective_permute_implicit_reduce): each rank folds its two inputs with doReduction
// (res = ins[0], then op ins[1], the accumulator kept on a NaN), then the ring of two swaps the results.
//   core 0: a {1, -2, NaN, 5},   b {3, 4, 7, NaN}
//   core 1: a {10, 20, 30, 40},  b {1, NaN, 50, -1}
//   add: core 0's {4, 2, NaN, NaN}; core 1's {11, NaN, 80, 39}
//   max (x > acc ? x : acc): core 0's {3, 4, NaN, 5}; core 1's {10, 20 (NaN > 20 false), 50, 40}
//   min (x < acc ? x : acc): core 0's {1, -2, NaN, 5}; core 1's {1, 20, 30, -1}
// Core 0 receives core 1's result and core 1 core 0's.
TEST(DeviceCollectives, PermuteReduceImplicitFoldsTwoInputsAndPassesThemOn) {
  const struct {
    AluOp op;
    V res0, res1;
  } cases[] = {{AluOp::add, {4, 2, kNaN, kNaN}, {11, kNaN, 80, 39}},
               {AluOp::max, {3, 4, kNaN, 5}, {10, 20, 50, 40}},
               {AluOp::min, {1, -2, kNaN, 5}, {1, 20, 30, -1}}};
  for (const auto &k : cases) {
    CcProgram c = cc_program("PermuteReduceImplicit", k.op, {4, 4}, 4, {{0, 1}});
    sim::Device d(c.p, opts(), 2, 1);
    write(d.core(0), c.ins[0], {1, -2, kNaN, 5});
    write(d.core(0), c.ins[1], {3, 4, 7, kNaN});
    write(d.core(1), c.ins[0], {10, 20, 30, 40});
    write(d.core(1), c.ins[1], {1, kNaN, 50, -1});
    d.run();
    expect_same(read(d.core(0), c.o), k.res1, std::string(isa::alu_name(k.op)) + " core 0");
    expect_same(read(d.core(1), c.o), k.res0, std::string(isa::alu_name(k.op)) + " core 1");
  }
  CcProgram bad = cc_program("PermuteReduceImplicit", AluOp::mult, {4, 4}, 4, {{0, 1}});
  sim::Device d(bad.p, opts(), 2, 1);
  EXPECT_NE(error_of([&] { d.run(); }).find("Unsupported OP type 'mult'"), std::string::npos);
}

// GetCurProcessingRankID (NKI collective_permute_implicit_current_processing_rank_id): at iteration k the rank
// group[(pos - k) mod n]. Rank list [0, 2, 1]: core 0 at pos 0, core 2 at pos 1, core 1 at pos 2.
//   k = 0: its own rank: core 0 -> 0, core 1 -> 1, core 2 -> 2
//   k = 1: core 0 -> group[2] = 1, core 2 -> group[0] = 0, core 1 -> group[1] = 2
//   k = 2: core 0 -> group[1] = 2, core 2 -> group[2] = 1, core 1 -> group[0] = 0
//   k = 4 = 1 (mod 3): as k = 1
//   k = register r (RegisterMove 1): as k = 1
TEST(DeviceCollectives, CurProcessingRankFollowsTheRingBackwards) {
  Builder b("cur");
  auto o = b.sbuf("o", {1, 5}, isa::Dtype::int32);
  const int64_t ks[] = {0, 1, 2, 4};
  for (int i = 0; i < 4; ++i)
    b.add(InstructionType::GetCurProcessingRankID, {}, {Builder::ap(o.tile(0, 1, i, 1))})
        .iter_id(ks[i]).channel_id(0).replica_groups({{0, 2, 1}});
  b.add(InstructionType::RegisterMove, {Builder::imm(1, isa::Dtype::int32)}, {Builder::reg("r")});
  b.add(InstructionType::GetCurProcessingRankID, {}, {Builder::ap(o.tile(0, 1, 4, 1))})
      .channel_id(0).replica_groups({{0, 2, 1}});
  isa::Program p = b.finish();
  isa::Expr r;
  r.kind = isa::Expr::Kind::Register;
  r.regref = "r";
  p.insts[5].iter_id_expr.push_back(r);
  sim::Device d(p, opts(), 3, 1);
  d.run();
  EXPECT_EQ(read(d.core(0), o), (V{0, 1, 2, 1, 1}));
  EXPECT_EQ(read(d.core(1), o), (V{1, 2, 0, 2, 2}));
  EXPECT_EQ(read(d.core(2), o), (V{2, 0, 1, 0, 0}));
}

// The refusals around GetCurProcessingRankID, in a test of their own that simulates nothing first (under ASan an
// exception after a SystemC run is misreported, .ci/run): the same program under LNC=2, and an expression-valued
// iter_id at encode.
TEST(DeviceCollectives, CurProcessingRankRefusals) {
  Builder b("cur");
  auto o = b.sbuf("o", {1, 5}, isa::Dtype::int32);
  b.add(InstructionType::GetCurProcessingRankID, {}, {Builder::ap(o.tile(0, 1, 0, 1))})
      .iter_id(1).channel_id(0).replica_groups({{0, 2, 1}});
  const isa::Program p = b.finish();
  isa::Expr r;
  r.kind = isa::Expr::Kind::Register;
  r.regref = "r";
  // Under LNC=2 the group's numbering (cores for the collectives, ranks here) is undocumented: refused, naming it.
  try {
    sim::Device d2(p, opts(), 4, 2);
    ADD_FAILURE() << "GetCurProcessingRankID with a replica group ran under LNC=2";
  } catch (const Error &x) {
    EXPECT_NE(std::string(x.what()).find("instruction 0"), std::string::npos) << x.what();
    EXPECT_NE(std::string(x.what()).find("field 'replica_groups'"), std::string::npos) << x.what();
    EXPECT_NE(std::string(x.what()).find("--lnc 1 only"), std::string::npos) << x.what();
  }

  // No bundle form carries an expression-valued iter_id: encode refuses it naming the field rather than writing
  // the form's plain iter_id (0), which would make the streams part from the BIR.
  Builder b2("enc");
  auto o2 = b2.sbuf("o", {1, 1}, isa::Dtype::int32);
  b2.add(InstructionType::GetCurProcessingRankID, {}, {Builder::ap(o2.tile(0, 1, 0, 1))}).channel_id(0);
  isa::Program pe = b2.finish();
  ASSERT_NO_THROW(isa::encode(pe.insts[0], pe, isa::CoreGen::V3));  // a plain iter_id encodes
  pe.insts[0].iter_id_expr.push_back(r);
  try {
    isa::encode(pe.insts[0], pe, isa::CoreGen::V3);
    ADD_FAILURE() << "an expression-valued iter_id was encoded";
  } catch (const Error &x) {
    EXPECT_NE(std::string(x.what()).find("field 'iter_id'"), std::string::npos) << x.what();
    EXPECT_NE(std::string(x.what()).find("has no bundle form"), std::string::npos) << x.what();
  }
}

// AllToAllV (NKI all_to_all_v): flat buffers, metadata ins[1] of uint32 rows x 2 ranks. Inputs: core 0
// {1, 2, 3, 4, 5}, core 1 {10, 20, 30, 40, 50}; outputs of 5 prefilled with -1.
// Two rows: core 0 send counts {2, 3}, displs {0, 2}: {1, 2} to rank 0, {3, 4, 5} to rank 1;
//           core 1 send counts {1, 2}, displs {4, 0}: {50} to rank 0, {10, 20} to rank 1.
//   recv counts = each sender's count to it, displs = their running sum:
//   core 0: {1, 2} at 0, {50} at 2, the rest kept: {1, 2, 50, -1, -1}
//   core 1: {3, 4, 5} at 0, {10, 20} at 3: {3, 4, 5, 10, 20}
// Four rows: core 0 recv counts {2, 1}, displs {3, 0}: {50, -1, -1, 1, 2};
//            core 1 recv counts {3, 2}, displs {2, 0}: {10, 20, 3, 4, 5}.
namespace {

// Runs the AllToAllV above with each core's metadata (rows x 2, row-major); returns the outputs, or the error.
struct A2avRun {
  std::vector<V> out;
  std::string error;
};
A2avRun all_to_all_v2(const V &meta0, const V &meta1) {
  const int64_t m = static_cast<int64_t>(meta0.size());
  CcProgram c = cc_program("AllToAllV", AluOp::bypass, {5, m}, 5, {{0, 1}}, isa::Dtype::uint32);
  sim::Device d(c.p, opts(), 2, 1);
  write(d.core(0), c.ins[0], {1, 2, 3, 4, 5});
  write(d.core(1), c.ins[0], {10, 20, 30, 40, 50});
  write(d.core(0), c.ins[1], meta0);
  write(d.core(1), c.ins[1], meta1);
  for (int i = 0; i < 2; ++i) write(d.core(i), c.o, {-1, -1, -1, -1, -1});
  A2avRun r;
  r.error = error_of([&] { d.run(); });
  if (r.error.empty()) r.out = {read(d.core(0), c.o), read(d.core(1), c.o)};
  return r;
}

} // namespace

TEST(DeviceCollectives, AllToAllVRoutesVariableChunksByTheMetadata) {
  A2avRun two = all_to_all_v2({2, 3, 0, 2}, {1, 2, 4, 0});
  ASSERT_EQ(two.error, "");
  EXPECT_EQ(two.out[0], (V{1, 2, 50, -1, -1}));
  EXPECT_EQ(two.out[1], (V{3, 4, 5, 10, 20}));
  A2avRun four = all_to_all_v2({2, 3, 0, 2, 2, 1, 3, 0}, {1, 2, 4, 0, 3, 2, 2, 0});
  ASSERT_EQ(four.error, "");
  EXPECT_EQ(four.out[0], (V{50, -1, -1, 1, 2}));
  EXPECT_EQ(four.out[1], (V{10, 20, 3, 4, 5}));
  // Three rows whose recv counts agree with the senders ({2, 1} and {3, 2}) give the two-row result.
  A2avRun three = all_to_all_v2({2, 3, 0, 2, 2, 1}, {1, 2, 4, 0, 3, 2});
  ASSERT_EQ(three.error, "");
  EXPECT_EQ(three.out[0], (V{1, 2, 50, -1, -1}));
}

// Inconsistent metadata is refused naming the core, the instruction and the field.
//  - core 1's recv count from rank 0 says 2, rank 0 sends it 3;
//  - core 0 sends 3 from displacement 3 of its 5 elements (3 + 3 > 5);
//  - core 1 receives 3 + 2 = 6 elements into 5 (four rows, displacement 3 for the 3 from rank 0);
//  - metadata of 5 elements is not 2-4 rows of 2.
TEST(DeviceCollectives, AllToAllVRefusesInconsistentMetadata) {
  std::string e = all_to_all_v2({2, 3, 0, 2, 2, 1}, {1, 2, 4, 0, 2, 2}).error;
  EXPECT_NE(e.find("core 1's metadata recv count from rank 0 is 2, that rank sends it 3"), std::string::npos) << e;
  EXPECT_NE(e.find("ins[1]"), std::string::npos) << e;
  e = all_to_all_v2({2, 3, 0, 3}, {1, 2, 4, 0}).error;
  EXPECT_NE(e.find("core 0's metadata column 1: send displacement 3 + count 3 is beyond its input's 5"),
            std::string::npos) << e;
  e = all_to_all_v2({2, 3, 0, 2, 2, 1, 3, 0}, {1, 2, 4, 0, 3, 2, 3, 0}).error;
  EXPECT_NE(e.find("core 1's recv displacements from rank 0: 3 + 3 is beyond its output's 5"), std::string::npos)
      << e;
  CcProgram c = cc_program("AllToAllV", AluOp::bypass, {5, 5}, 5, {{0, 1}}, isa::Dtype::uint32);
  sim::Device d(c.p, opts(), 2, 1);
  for (int i = 0; i < 2; ++i) write(d.core(i), c.ins[1], {0, 0, 0, 0, 0});
  e = error_of([&] { d.run(); });
  EXPECT_NE(e.find("metadata has 5 elements, not 2, 3 or 4 rows of 2"), std::string::npos) << e;
}

namespace {

// A SendRecv / SendRecvCCE program for one core: recv_from_rank the constants `from`.
CcProgram send_recv_program(const std::string &kind, AluOp op, const std::vector<int64_t> &from,
                            const std::vector<std::vector<int64_t>> &groups) {
  CcProgram c = cc_program(kind, op, {2}, 2, groups);
  for (int64_t r : from) c.p.insts[0].recv_from_rank.push_back(isa::Expr::constant(r));
  return c;
}

} // namespace

// SendRecv: each core's output <- the input of the rank its recv_from_rank names; core i holds {i + 1, -(i + 1)}.
//   core 0 from 2: {3, -3};  core 1 from 0: {1, -1};  core 2 from 0: {1, -1}
// SendRecvCCE add: core 0 from [1, 2]: {2 + 3, -2 - 3} = {5, -5}; core 1 from [0]: {1, -1}; core 2 from
// [2, 0, 1]: {3 + 1 + 2, -3 - 1 - 2} = {6, -6}. max: core 0 {max(2, 3), max(-2, -3)} = {3, -2}; core 2 {3, -1}.
TEST(DeviceCollectives, SendRecvTakesThePeersInputAndSendRecvCceFoldsTheListedRanks) {
  {
    CcProgram p0 = send_recv_program("SendRecv", AluOp::bypass, {2}, {}), p1 = send_recv_program("SendRecv", AluOp::bypass, {0}, {}),
              p2 = send_recv_program("SendRecv", AluOp::bypass, {0}, {});
    sim::Device d({&p0.p, &p1.p, &p2.p}, opts(), 1);
    for (int i = 0; i < 3; ++i) write(d.core(i), p0.ins[0], {i + 1.0f, -(i + 1.0f)});
    d.run();
    EXPECT_EQ(read(d.core(0), p0.o), (V{3, -3}));
    EXPECT_EQ(read(d.core(1), p0.o), (V{1, -1}));
    EXPECT_EQ(read(d.core(2), p0.o), (V{1, -1}));
  }
  const struct {
    AluOp op;
    V out0, out2;
  } cases[] = {{AluOp::add, {5, -5}, {6, -6}}, {AluOp::max, {3, -2}, {3, -1}}};
  for (const auto &k : cases) {
    CcProgram p0 = send_recv_program("SendRecvCCE", k.op, {1, 2}, {}), p1 = send_recv_program("SendRecvCCE", k.op, {0}, {}),
              p2 = send_recv_program("SendRecvCCE", k.op, {2, 0, 1}, {});
    sim::Device d({&p0.p, &p1.p, &p2.p}, opts(), 1);
    for (int i = 0; i < 3; ++i) write(d.core(i), p0.ins[0], {i + 1.0f, -(i + 1.0f)});
    d.run();
    EXPECT_EQ(read(d.core(0), p0.o), k.out0) << isa::alu_name(k.op);
    EXPECT_EQ(read(d.core(1), p0.o), (V{1, -1})) << isa::alu_name(k.op);
    EXPECT_EQ(read(d.core(2), p0.o), k.out2) << isa::alu_name(k.op);
  }
}

// One program on a logical core of 2 (LNC=2, shards 0 and 1): recv_from_rank = 1 - ShardIDKind (an affine form)
// swaps the cores' inputs {1, 2} and {3, 4}; send_to_rank the same expression agrees with it.
TEST(DeviceCollectives, SendRecvPeerIsAnAffineFormOfTheShard) {
  CcProgram c = cc_program("SendRecv", AluOp::bypass, {2}, 2, {{0, 1}});
  isa::Expr peer;
  peer.kind = isa::Expr::Kind::Affine;
  peer.c = 1;
  peer.kids.push_back(shard_expr());
  peer.coeffs.push_back(-1);
  c.p.insts[0].recv_from_rank.push_back(peer);
  c.p.insts[0].send_to_rank.push_back(peer);
  sim::Device d(c.p, opts(), 2, 2);
  write(d.core(0), c.ins[0], {1, 2});
  write(d.core(1), c.ins[0], {3, 4});
  d.run();
  EXPECT_EQ(read(d.core(0), c.o), (V{3, 4}));
  EXPECT_EQ(read(d.core(1), c.o), (V{1, 2}));
}

// A peer outside the group, a send its receiver does not expect, shapes that differ: errors naming the core, the
// instruction and the field.
TEST(DeviceCollectives, SendRecvMismatchesNameTheCoreInstructionAndField) {
  CcProgram c = send_recv_program("SendRecv", AluOp::bypass, {5}, {{0, 1}});
  c.p.insts[0].name = "sr";
  sim::Device d(c.p, opts(), 2, 1);
  std::string e = error_of([&] { d.run(); });
  EXPECT_NE(e.find("core 0 names rank 5, outside its replica group {0, 1}"), std::string::npos) << e;
  EXPECT_NE(e.find("'sr'"), std::string::npos) << e;
  EXPECT_NE(e.find("recv_from_rank[0]"), std::string::npos) << e;

  CcProgram p0 = send_recv_program("SendRecv", AluOp::bypass, {1}, {}), p1 = send_recv_program("SendRecv", AluOp::bypass, {1}, {});
  // Core 1 receives from itself, so core 0's send to it has no receive (core 1's send to core 0 is matched).
  p1.p.insts[0].send_to_rank.push_back(isa::Expr::constant(0));
  p0.p.insts[0].send_to_rank.push_back(isa::Expr::constant(1));
  sim::Device d2({&p0.p, &p1.p}, opts(), 1);
  e = error_of([&] { d2.run(); });
  EXPECT_NE(e.find("core 0 sends to rank 1, whose recv_from_rank does not name it"), std::string::npos) << e;
  EXPECT_NE(e.find("send_to_rank"), std::string::npos) << e;

  CcProgram s0 = send_recv_program("SendRecv", AluOp::bypass, {1}, {});
  Builder b1("cc");  // the same tensors, core 1's input access one element of a
  auto a1 = b1.sbuf("a", {1, 2}), o1 = b1.sbuf("o", {1, 2});
  b1.add(InstructionType::CollectiveCompute, {Builder::ap(a1.tile(0, 1, 0, 1))}, {Builder::ap(o1.all())})
      .collective_kind("SendRecv").op(AluOp::bypass).replica_groups({});
  isa::Program s1 = b1.finish();
  s1.insts[0].recv_from_rank.push_back(isa::Expr::constant(0));
  sim::Device d3({&s0.p, &s1}, opts(), 1);
  e = error_of([&] { d3.run(); });
  EXPECT_NE(e.find("core 1's input has 1 elements, core 0's 2"), std::string::npos) << e;
  EXPECT_NE(e.find("ins[0]"), std::string::npos) << e;
}

// PermuteReduce follows birsim's identity copy: each core's output is its own input.
TEST(DeviceCollectives, PermuteReduceIsBirsimsIdentityCopy) {
  CcProgram c = cc_program("PermuteReduce", AluOp::add, {2}, 2, {{0, 1}});
  sim::Device d(c.p, opts(), 2, 1);
  write(d.core(0), c.ins[0], {1, 2});
  write(d.core(1), c.ins[0], {3, 4});
  d.run();
  EXPECT_EQ(read(d.core(0), c.o), (V{1, 2}));
  EXPECT_EQ(read(d.core(1), c.o), (V{3, 4}));
}

// Each kind on one core, naming only that rank:
//   PermuteImplicit / PermuteReduce: out = in = {1, 2, 3}
//   PermuteReduceImplicit max: max({1, 2, 3}, {3, 2, 1}) = {3, 2, 3} passed to itself
//   SendRecv from 0 / SendRecvCCE from [0]: out = in
//   AllToAllV metadata {2 | 1} (send count 2 from displacement 1): {2, 3} at 0 of the output of 2
TEST(DeviceCollectives, EachKindOnOneCore) {
  auto one = [](CcProgram &c, const std::vector<V> &ins) {
    sim::Simulator s(c.p, opts());
    for (size_t i = 0; i < ins.size(); ++i) s.memory().write_f32(whole(c.ins[i]), ins[i].data());
    s.run();
    return read(s, c.o);
  };
  for (const char *k : {"PermuteImplicit", "PermuteReduce"}) {
    CcProgram c = cc_program(k, AluOp::bypass, {3}, 3, {});
    EXPECT_EQ(one(c, {{1, 2, 3}}), (V{1, 2, 3})) << k;
  }
  CcProgram pri = cc_program("PermuteReduceImplicit", AluOp::max, {3, 3}, 3, {{0}});
  EXPECT_EQ(one(pri, {{1, 2, 3}, {3, 2, 1}}), (V{3, 2, 3}));
  CcProgram sr = send_recv_program("SendRecv", AluOp::bypass, {0}, {});
  EXPECT_EQ(one(sr, {{7, 8}}), (V{7, 8}));
  CcProgram cce = send_recv_program("SendRecvCCE", AluOp::add, {0}, {});
  EXPECT_EQ(one(cce, {{7, 8}}), (V{7, 8}));
  CcProgram a2av = cc_program("AllToAllV", AluOp::bypass, {3, 2}, 2, {}, isa::Dtype::uint32);
  EXPECT_EQ(one(a2av, {{1, 2, 3}, {2, 1}}), (V{2, 3}));
  // A peer other than the one core is refused naming the field.
  CcProgram far = send_recv_program("SendRecv", AluOp::bypass, {1}, {});
  sim::Simulator s(far.p, opts());
  const std::string e = error_of([&] { s.run(); });
  EXPECT_NE(e.find("recv_from_rank[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("core 0 names rank 1, outside its replica group {0}"), std::string::npos) << e;
}

// Timing through the link model (trn2): a [1, 1024] fp32 buffer is 4096 B.
//  - PermuteImplicit on 2 ranks: each sends its buffer to its successor at once: one point-to-point step,
//    1300 + 4096 / 360 = 1311.377778 ns.
//  - AllToAllV on 2 ranks: AllToAll's N-1 = 1 step of 4096 / 2 B: 1300 + 2048 / 360 = 1305.688889 ns.
//  - SendRecvCCE receiving from 2 ranks of 3: one step of 2 x 4096 B: 1300 + 8192 / 360 = 1322.755556 ns.
TEST(DeviceCollectives, TimesFollowTheLinkPatterns) {
  CcProgram pi = cc_program("PermuteImplicit", AluOp::bypass, {1024}, 1024, {{0, 1}});
  sim::Device d(pi.p, opts("trn2", true), 2, 1);
  EXPECT_NEAR(d.run().link_busy_ns, 1300.0 + 4096.0 / 360.0, 1e-6);
  CcProgram av = cc_program("AllToAllV", AluOp::bypass, {1024, 4}, 1024, {{0, 1}}, isa::Dtype::uint32);
  sim::Device d2(av.p, opts("trn2", true), 2, 1);
  EXPECT_NEAR(d2.run().link_busy_ns, 1300.0 + 2048.0 / 360.0, 1e-6);
  CcProgram cce = cc_program("SendRecvCCE", AluOp::add, {1024}, 1024, {{0, 1, 2}});
  for (int64_t r : {1, 2}) cce.p.insts[0].recv_from_rank.push_back(isa::Expr::constant(r));
  sim::Device d3(cce.p, opts("trn2", true), 3, 1);
  EXPECT_NEAR(d3.run().link_busy_ns, 1300.0 + 8192.0 / 360.0, 1e-6);
}

// The BIR keys: recv_from_rank [QAE] and send_to_rank QAE (reference bir-json.md 2.2) and iter_id as an expression
// (MaybeAffine<uint>) are read, written back and read again; CCGetRankKind and loop variables are refused naming
// the field; PermuteReduce carries a one-line warning naming the instruction.
TEST(DeviceCollectives, RankExpressionKeysReadWriteAndRefuse) {
  using json = nlohmann::json;
  auto alloc = [](const std::string &n) {
    return json{{"Skind", "memory_location_set"}, {"name", n + "_set"}, {"kind", "Internal"}, {"dtype", "float32"},
                {"tensor_shape", {1, 2}}, {"partition_dim", 0},
                {"memorylocations", {{{"Skind", "memory_location"}, {"name", n}, {"type", "SB"}, {"dims", {1, 8}},
                                      {"addr", 0}, {"base", 0}, {"bank", 0}, {"allocated", false}}}}};
  };
  auto ap = [](const std::string &n) {
    return json{{"kind", "physical_ap"}, {"dtype", "float32"}, {"memref", n}, {"memsetref", n + "_set"},
                {"ap", {{1, 1}, {1, 2}}}, {"offset", 0}};
  };
  const json shard = {{"kind", "ShardIDKind"}, {"ub", 2}};
  const json peer = {{"kind", "AffExprKind"}, {"terms", {{{"idx", shard}, {"coeff", -1}}}}, {"c", 1}};
  auto module = [&](json inst) {
    json fn = {{"name", "sg0000"}, {"allocations", {alloc("a"), alloc("o")}},
               {"blocks", {{{"name", "B"}, {"instructions", {inst}}}}}};
    return json{{"arch", "gen3"}, {"version", 2}, {"functions", {fn}}};
  };
  auto cc = [&](const std::string &kind) {
    return json{{"opcode", "CollectiveCompute"}, {"name", "I-1"}, {"engine", "Pool"}, {"kind", kind},
                {"replica_groups", {{0, 1}}}, {"ins", {ap("a")}}, {"outs", {ap("o")}}};
  };
  json sr = cc("SendRecv");
  sr["recv_from_rank"] = {peer};
  sr["send_to_rank"] = peer;
  isa::Program p = isa::parse_bir(module(sr), "k.json");
  ASSERT_EQ(p.insts[0].recv_from_rank.size(), 1u);
  ASSERT_EQ(p.insts[0].send_to_rank.size(), 1u);
  EXPECT_EQ(p.insts[0].recv_from_rank[0].eval(nullptr, 0), 1);  // 1 - 0
  EXPECT_EQ(p.insts[0].recv_from_rank[0].eval(nullptr, 1), 0);  // 1 - 1
  isa::Program back = isa::parse_bir(isa::to_bir_json(p), "k2.json");
  ASSERT_EQ(back.insts[0].recv_from_rank.size(), 1u);
  EXPECT_EQ(back.insts[0].send_to_rank.at(0).eval(nullptr, 1), 0);

  auto refused = [&](const json &m) {
    try {
      isa::parse_bir(m, "k.json");
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  json rank = sr;
  rank["recv_from_rank"] = {{{"kind", "CCGetRankKind"}, {"op_param", 0}, {"channel_id", 0}}};
  std::string e = refused(module(rank));
  EXPECT_NE(e.find("CCGetRankKind is not modelled"), std::string::npos) << e;
  EXPECT_NE(e.find("recv_from_rank[0]"), std::string::npos) << e;
  json in_loop = sr;
  in_loop["recv_from_rank"] = {{{"kind", "AffIVKind"}, {"axis", "i"}}};
  json lp = {{"opcode", "Loop"}, {"name", "L"}, {"LoopAxis", {{"name", "i"}, {"lb", 0}, {"ub", 2}, {"stride", 1}}},
             {"blocks", {{{"name", "LB"}, {"instructions", {in_loop}}}}}};
  e = refused(module(lp));
  EXPECT_NE(e.find("a loop variable in a rank expression"), std::string::npos) << e;

  json cur = {{"opcode", "GetCurProcessingRankID"}, {"name", "I-2"}, {"engine", "SP"}, {"channel_id", 0},
              {"iter_id", peer}, {"replica_groups", {{0, 1}}}, {"ins", json::array()}, {"outs", {ap("o")}}};
  isa::Program pc = isa::parse_bir(module(cur), "k.json");
  ASSERT_EQ(pc.insts[0].iter_id_expr.size(), 1u);
  EXPECT_EQ(pc.insts[0].iter_id_expr[0].eval(nullptr, 0), 1);
  isa::Program pr = isa::parse_bir(module(cc("PermuteReduce")), "k.json");
  ASSERT_EQ(pr.warnings.size(), 1u);
  EXPECT_NE(pr.warnings[0].find("'I-1'"), std::string::npos) << pr.warnings[0];
  EXPECT_NE(pr.warnings[0].find("PermuteReduce follows birsim: an identity copy"), std::string::npos) << pr.warnings[0];
}
