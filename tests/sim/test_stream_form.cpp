// sim::to_stream_form: the unrolled, placed, explicitly synchronized program runs to the same outputs and, with
// every wait kept on its instruction, the same simulated time as the BIR it came from; fitted to the bundles'
// one-wait sync band it still computes the same and survives an encode/decode round trip of the streams.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "neuronsim/builder.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/stream_form.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "support/temp_dir.hpp"

using namespace neuronsim;
using builder::Builder;
using isa::InstructionType;

namespace {

// c[:, 64i:64i+64] = relu((a + 1) * a tile + a tile) over four loop iterations, on DMA, DVE, POOL and ACT:
// loads spread over DMA queues, three engines, a loop variable in every start.
isa::Program looped_kernel() {
  Builder b("looped");
  auto a = b.input("a", {128, 256}), c = b.output("c", {128, 256});
  auto t = b.sbuf("t", {128, 256}), u = b.sbuf("u", {128, 256}), v = b.sbuf("v", {128, 256});
  auto w = b.sbuf("w", {128, 256});
  b.loop("i", 0, 4, 1, [&](builder::Aff i) {
    b.add(InstructionType::Load, {b.ap(a.tile(0, 128, 64 * i, 64))}, {b.ap(t.tile(0, 128, 64 * i, 64))});
    b.add(InstructionType::TensorScalarPtr, {b.ap(t.tile(0, 128, 64 * i, 64)), b.imm(1.0)},
          {b.ap(u.tile(0, 128, 64 * i, 64))})
        .op0(isa::AluOp::add)
        .engine(isa::Engine::DVE);
    b.add(InstructionType::TensorTensor, {b.ap(u.tile(0, 128, 64 * i, 64)), b.ap(t.tile(0, 128, 64 * i, 64))},
          {b.ap(v.tile(0, 128, 64 * i, 64))})
        .op(isa::AluOp::mult)
        .engine(isa::Engine::Pool);
    b.add(InstructionType::Activation, {b.ap(v.tile(0, 128, 64 * i, 64))},
          {b.ap(w.tile(0, 128, 64 * i, 64))})
        .act_func(isa::ActivationFunctionType::Relu)
        .engine(isa::Engine::Activation);
    b.add(InstructionType::Save, {b.ap(w.tile(0, 128, 64 * i, 64))}, {b.ap(c.tile(0, 128, 64 * i, 64))});
  });
  return b.finish();
}

struct Ran {
  sim::RunResult r;
  std::vector<float> c;
};

// `triggers` false runs the DMA instructions without their trigger on the issuing engine: a lowered stream carries
// no trigger instruction (its transfers sit on DMA queues), so the BIR is compared with it that way.
Ran run(const isa::Program &p, bool triggers = true) {
  sim::RunOptions o;
  o.dma_triggers = triggers;
  sim::Simulator s(p, o);
  sim::load_inputs(p, s.memory(), {});
  Ran out{s.run(), {}};
  out.c = sim::tensor_f32(p, s.memory(), p.find_tensor("c"));
  return out;
}

} // namespace

TEST(StreamForm, UnrollsNamesPlacesAndSynchronizes) {
  const isa::Program p = looped_kernel();
  sim::StreamFormStats st;
  const isa::Program low = sim::to_stream_form(p, engines::builtin_arch("trn1"), {false}, &st);
  ASSERT_EQ(low.insts.size(), 20u);  // 5 instructions x 4 iterations, no carriers when waits are not fitted
  EXPECT_EQ(st.carriers, 0);
  EXPECT_TRUE(low.loop_vars.empty());
  EXPECT_EQ(low.insts[0].name, "I-1#0");
  EXPECT_EQ(low.insts[5].name, "I-1#1");
  EXPECT_EQ(low.insts[6].engine, isa::Engine::DVE);
  EXPECT_EQ(low.insts[0].engine, isa::Engine::DMA);
  // Iteration 1 of the DVE op reads t at column 64: a constant start.
  ASSERT_TRUE(low.insts[6].ins[0].start.is_const());
  EXPECT_EQ(low.insts[6].ins[0].start.c, 64);
  for (const auto &t : low.tensors) {
    if (!t.is_dram()) {
      EXPECT_TRUE(t.allocated) << t.name;
    }
  }
  // Every instruction counts itself on its queue's semaphore; DVE's first op waits for the first load's queue.
  for (const auto &in : low.insts) ASSERT_EQ(in.updates.size(), 1u) << in.name;
  EXPECT_EQ(low.insts[1].updates[0].sem, 3);  // DVE = queue 3
  ASSERT_EQ(low.insts[1].waits.size(), 1u);
  EXPECT_EQ(low.insts[1].waits[0].sem, low.insts[0].updates[0].sem);
  EXPECT_EQ(low.insts[1].waits[0].value, 1);
}

TEST(StreamForm, SameOutputsAndSameTimeAsTheBir) {
  const isa::Program p = looped_kernel();
  // The first run in a process can break same-time ties on the shared DMA bandwidth differently from later runs
  // (observed with the in-progress core: 7729.5 ns, then 8119.5 ns for this very program). Compare runs with the
  // same history: a warm-up run first.
  (void)run(p);
  const Ran orig = run(p, /*triggers=*/false);
  const isa::Program low = sim::to_stream_form(p, engines::builtin_arch("trn1"), {false});
  const Ran l = run(low);
  ASSERT_EQ(orig.c.size(), l.c.size());
  EXPECT_EQ(orig.c, l.c);
  EXPECT_EQ(orig.r.dynamic_instructions, l.r.dynamic_instructions);
  EXPECT_DOUBLE_EQ(orig.r.total_ns, l.r.total_ns);
  for (int q = 0; q < sim::kMaxQueues; ++q) {
    EXPECT_EQ(orig.r.queues[q].instructions, l.r.queues[q].instructions) << sim::queue_name(q);
    EXPECT_DOUBLE_EQ(orig.r.queues[q].busy_ns, l.r.queues[q].busy_ns) << sim::queue_name(q);
  }
}

TEST(StreamForm, FittedToBundlesRoundTripsThroughTheStreams) {
  const isa::Program p = looped_kernel();
  (void)run(p);  // same history for both runs (see above)
  const Ran orig = run(p, /*triggers=*/false);
  sim::StreamFormStats st;
  const isa::Program low = sim::to_stream_form(p, engines::builtin_arch("trn1"), {true}, &st);
  for (const auto &in : low.insts) {
    EXPECT_LE(in.waits.size(), in.type == InstructionType::EventSemaphore ? 2u : 1u) << in.name;
    EXPECT_EQ(in.updates.size(), 1u) << in.name;
  }
  const Ran l = run(low);
  EXPECT_EQ(orig.c, l.c);
  std::printf("fitted: %lld instructions, %lld carriers, %lld waits dropped, %.3f ns vs %.3f ns\n",
              static_cast<long long>(st.instructions), static_cast<long long>(st.carriers),
              static_cast<long long>(st.waits_dropped), l.r.total_ns, orig.r.total_ns);
  // Carriers occupy an instruction slot of their engine: the time can only grow, and not by more than they cost.
  EXPECT_GE(l.r.total_ns, orig.r.total_ns - 1e-9);
  if (st.carriers == 0) {
    EXPECT_DOUBLE_EQ(l.r.total_ns, orig.r.total_ns);
  }

  const std::string dir = neuronsim::testing::temp_dir("bundles");
  isa::write_bundle_dir(low, isa::CoreGen::V2, dir);
  const isa::Program back = isa::read_bundle_dir(dir);
  ASSERT_EQ(back.insts.size(), low.insts.size());
  for (size_t i = 0; i < low.insts.size(); ++i) {
    std::string diff;
    EXPECT_TRUE(isa::same_bundle_content(low.insts[i], back.insts[i], &diff)) << low.insts[i].name << ": " << diff;
    EXPECT_EQ(back.insts[i].name, low.insts[i].name);
  }
  const Ran s = run(back);
  EXPECT_EQ(orig.c, s.c);
  EXPECT_DOUBLE_EQ(s.r.total_ns, l.r.total_ns);
  std::filesystem::remove_all(dir);
}
