// Transposing DMAs (docs/timing-model.md 2.5): a DMACopy in Transpose mode timed as each NeuronCore generation moves
// it, hand-computed from sim/arch/*.json. NeuronCore-v3 has transpose hardware at 90% of the engine rate into SBUF
// [ARCH3]; NeuronCore-v2 has none: one descriptor per row gathers the row's elements one by one, each costing the
// engine a tiny transfer's ~7 ns (calibration.md D5; INFERRED, see the section) -- "much lower DMA bandwidth" than a
// plain load ([PERF] Opt #8/#10), but not one descriptor per element.
#include <gtest/gtest.h>

#include "neuronsim/builder.hpp"
#include "neuronsim/engines/dma.hpp"
#include "neuronsim/sim/kernel.hpp"
#include "neuronsim/sim/run_kernel.hpp"
#include "neuronsim/sim/run_settings.hpp"
#include "neuronsim/sim/sensitivity.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "support/timing_run.hpp"

namespace test_dma_transpose {

using namespace neuronsim;
using builder::Builder;
using isa::Dtype;
using isa::InstructionType;
using test::timing_opts;
using test::work_event;

namespace {

// One [128, 128] HBM -> SBUF DMA, transposing or not, of dtype dt.
isa::Program one_load(bool transpose, Dtype dt) {
  Builder b(transpose ? "transpose" : "copy");
  auto a = b.input("a", {128, 128}, dt);
  auto t = b.sbuf("t", {128, 128}, dt);
  auto &&i = b.add(InstructionType::DMACopy, {b.ap(a.all())}, {b.ap(t.all())});
  if (transpose) i.copy_mode(isa::CopyMode::Transpose).transpose_op(isa::TransposeOps::WZXY);
  else i.copy_mode(isa::CopyMode::Copy);
  return b.finish();
}

struct Timed {
  engines::DmaTransfer tr;
  double span_ns;  // trigger issue to completion
  double busy_ns;  // engine 0's busy time
};

Timed time_one(const std::string &arch, bool transpose, Dtype dt) {
  isa::Program p = one_load(transpose, dt);
  sim::Simulator s(p, timing_opts(arch));
  Timed t{engines::dma_transfer(s.schedule().insts.back().d, s.arch(), s.memory()), 0, 0};
  auto r = s.run();
  const auto &x = work_event(r, 0);
  t.span_ns = x.finish_ns - x.issue_ns;
  t.busy_ns = r.dma_engines[0].busy_ns;
  return t;
}

// A [128, 128] transfer spread over the 16 engines: 8 rows each, one descriptor per row taking desc_ps.
void expect_eight_rows_on_every_engine(const Timed &t, long long desc_ps) {
  ASSERT_EQ(t.tr.parts.size(), 16u);
  for (const auto &p : t.tr.parts) {
    EXPECT_EQ(p.descriptors, 8) << p.engine;
    EXPECT_EQ(p.desc_ps, desc_ps) << p.engine;
  }
}

} // namespace

TEST(DmaTranspose, NeuronCoreV2GathersEachRowElementByElementWithOneDescriptorPerRow) {
  // trn1, fp32 [128, 128]: 16 engines x 8 rows, one descriptor per row (not 128); each descriptor moves 128
  // elements at dma_transfer_overhead_ns 7 each = 896 ns (its 512 B at 17 B/ns would take 30.1 ns). Engine busy:
  // 7 + 8 x 896 = 7175 ns. Span: dma_latency_ns 850 (the 8 x 106 ns of descriptor processing end before), the last
  // engine 15 x 21.5 = 322.5 ns later, its 7175 ns, completion 10: 8357.5 ns.
  const Timed t = time_one("trn1", true, Dtype::float32);
  expect_eight_rows_on_every_engine(t, 896000);
  EXPECT_NEAR(t.busy_ns, 7175.0, 1e-3);
  EXPECT_NEAR(t.span_ns, 8357.5, 1e-3);
  // bf16: the same elements, so the same time (half the bytes: half the bandwidth).
  const Timed h = time_one("trn1", true, Dtype::bfloat16);
  EXPECT_NEAR(h.span_ns, 8357.5, 1e-3);
}

TEST(DmaTranspose, NeuronCoreV2TransposeHasMuchLowerBandwidthThanACopy) {
  // [PERF] Opt #8: load_transpose2d has "much lower DMA bandwidth compared to nl.load". The copy's engine busy is
  // 7 + 8 x 512 / 17 = 247.94 ns, the transpose's 7175 ns: 28.9x.
  const Timed c = time_one("trn1", false, Dtype::float32), t = time_one("trn1", true, Dtype::float32);
  EXPECT_NEAR(c.busy_ns, 7 + 8 * 512 / 17.0, 1e-2);
  EXPECT_NEAR(t.busy_ns / c.busy_ns, 7175.0 / (7 + 8 * 512 / 17.0), 1e-3);
  // A smaller per-element cost only shortens it (docs/timing-model.md 2.1): 3.5 ns -> 128 x 3.5 = 448 ns a row.
  isa::Program p = one_load(true, Dtype::float32);
  sim::Simulator s(p, timing_opts("trn1"));
  engines::ArchParams fast = s.arch();
  fast.dma_transfer_overhead_ns = 3.5;
  const auto tr = engines::dma_transfer(s.schedule().insts.back().d, fast, s.memory());
  for (const auto &part : tr.parts) EXPECT_EQ(part.desc_ps, 448000) << part.engine;
}

TEST(DmaTranspose, NeuronCoreV3TransposesInHardwareAtNinetyPercentOfTheEngineRate) {
  // trn2, bf16 [128, 128] [ARCH3]: one descriptor per row of 256 B at 23 x 0.9 = 20.7 B/ns = 12.367 ns. Engine busy
  // 7 + 8 x 12.367 = 105.936 ns; span 850 + 322.5 + 105.936 + 10 = 1288.436 ns.
  const Timed t = time_one("trn2", true, Dtype::bfloat16);
  expect_eight_rows_on_every_engine(t, 12367);
  EXPECT_NEAR(t.busy_ns, 105.936, 1e-3);
  EXPECT_NEAR(t.span_ns, 1288.436, 1e-3);
}

TEST(DmaTranspose, ACopyThatTransposesByItsPatternIsTimedAsTheElementGatherOnEveryGeneration) {
  // An SBUF [128, 128] tile saved to out[j, i] (the DRAM side's elements 128 apart, the SBUF side's rows whole) is
  // the movement of a v2 transposing DMA: one descriptor per row, 128 elements at 7 ns = 896 ns, on trn1 and trn2
  // alike (INFERRED, docs/timing-model.md 2.5). Single elements on BOTH sides stay one descriptor per element.
  for (const std::string arch : {"trn1", "trn2"}) {
    Builder b("save_t");
    auto t = b.sbuf("t", {128, 128});
    auto o = b.output("o", {128, 128});
    auto g = b.output("g", {128, 128 * 128});
    auto pattern = [](const builder::TensorHandle &h, std::vector<isa::ApDim> dims) {
      builder::Ap a;
      a.tensor = h.id;
      a.dtype = h.dtype;
      a.dims = std::move(dims);
      return a;
    };
    b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(pattern(o, {{1, 128}, {128, 128}}))});
    // both sides strided: every other SBUF element into every 128th element of a DRAM row
    b.add(InstructionType::Save, {b.ap(pattern(t, {{128, 128}, {2, 64}}))},
          {b.ap(pattern(g, {{128 * 128, 128}, {128, 64}}))});
    isa::Program p = b.finish();
    sim::Simulator s(p, timing_opts(arch));
    std::vector<const engines::DynInst *> saves;
    for (const auto &si : s.schedule().insts)
      if (si.d.inst->type == InstructionType::Save) {
        // a DMA's trigger entry and its transfer entry (the later one) share the instruction
        if (!saves.empty() && saves.back()->inst == si.d.inst) saves.back() = &si.d;
        else saves.push_back(&si.d);
      }
    ASSERT_EQ(saves.size(), 2u) << arch;
    const auto tr = engines::dma_transfer(*saves[0], s.arch(), s.memory());
    ASSERT_EQ(tr.parts.size(), 16u) << arch;
    for (const auto &part : tr.parts) {
      EXPECT_EQ(part.descriptors, 8) << arch;
      EXPECT_EQ(part.desc_ps, 896000) << arch;
    }
    const auto both = engines::dma_transfer(*saves[1], s.arch(), s.memory());
    for (const auto &part : both.parts) EXPECT_EQ(part.descriptors, 8 * 64) << arch;
  }
}

TEST(DmaTranspose, NoHeadlineParameterMadeTwiceBetterSlowsTransposingLoads) {
  // tests/workloads/test_monotonicity.cpp's property on a kernel the workloads lack: eight [128, 128] transposing
  // loads, each stored back, on every arch (a faster resource never makes the kernel slower beyond 0.5%).
  Builder b("transposes");
  auto a = b.input("a", {8 * 128, 128});
  auto o = b.output("o", {8 * 128, 128});
  auto t = b.sbuf("t", {128, 8 * 128});
  for (int i = 0; i < 8; ++i) {
    b.add(InstructionType::DMACopy, {b.ap(a.tile(128 * i, 128, 0, 128))}, {b.ap(t.tile(0, 128, 128 * i, 128))})
        .copy_mode(isa::CopyMode::Transpose)
        .transpose_op(isa::TransposeOps::WZXY);
    b.add(InstructionType::Save, {b.ap(t.tile(0, 128, 128 * i, 128))}, {b.ap(o.tile(128 * i, 128, 0, 128))});
  }
  sim::Kernel k;
  k.path = k.label = "transposes";
  k.program = b.finish();
  for (const char *arch : {"trn1", "trn2", "trn3"}) {
    sim::RunSettings s;
    s.options.arch = arch;
    s.options.timing_only = true;
    sim::complete_settings(k, s);
    const sim::Run base = sim::run_kernel(k, s);
    const double t0 = base.result.total_ns;
    ASSERT_GT(t0, 0.0) << arch;
    for (const auto &row : sim::sensitivity(k, s, base)) {
      if (!row.used) continue;
      EXPECT_LE(row.total_ns, t0 * 1.005) << arch << ": " << row.parameter << " takes " << row.total_ns << " ns, "
                                          << t0 << " before";
    }
  }
}

} // namespace test_dma_transpose
