// Several NeuronCores sharing the device's HBM (docs/multicore.md, engines/hbm.hpp): transfers on many cores at
// once, and a collective's ring traffic beside loads, timed against hand-computed bandwidth shares.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "neuronsim/builder.hpp"
#include "neuronsim/sim/device.hpp"
#include "support/device_tensors.hpp"

using namespace neuronsim;
using builder::Builder;
using builder::TensorHandle;
using isa::AluOp;
using isa::InstructionType;

// The helpers below live in namespace test_device_hbm, so this file shares a unity batch with the other tests of its
// target without its file-local names clashing with theirs (docs/dev/build-time.md).
namespace test_device_hbm {

using test::device::opts;

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

} // namespace test_device_hbm
