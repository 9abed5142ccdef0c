// RunOptions::cancelled: the core polls it once every kCancelPollInstructions (256) issued instructions; true
// ends the run with RunCancelled, and the process (the one SystemC core) runs the next program normally.
#include <gtest/gtest.h>

#include "neuronsim/builder.hpp"
#include "neuronsim/sim/simulator.hpp"

using namespace neuronsim;
using builder::Builder;
using isa::InstructionType;

namespace {

// 2000 DVE memsets of a [128, 64] fp32 tile, one per loop iteration.
isa::Program memsets() {
  Builder b;
  auto t = b.sbuf("t", {128, 64});
  b.loop("i", 0, 2000, 1, [&](builder::Aff) {
    b.add(InstructionType::Memset, {}, {b.ap(t.all())})
        .memset_mode(isa::MemsetMode::Const)
        .constant(1.0)
        .engine(isa::Engine::DVE);
  });
  return b.finish();
}

class Cancel : public ::testing::TestWithParam<bool> {};

} // namespace

TEST_P(Cancel, StopsAtThePollThatAsksAndTheNextRunCompletes) {
  const isa::Program p = memsets();
  sim::RunOptions o;
  o.timing_only = GetParam();
  int polls = 0;
  o.cancelled = [&polls] { return ++polls == 3; };
  sim::Simulator s(p, o);
  EXPECT_THROW(s.run(), sim::RunCancelled);
  EXPECT_EQ(polls, 3); // polled at the 256th, 512th and 768th instruction; the third asked to stop

  // The same program again, never cancelled: all 2000 instructions run; polled at 256, 512, ..., 1792
  // (floor(2000 / 256) = 7 times).
  polls = 0;
  o.cancelled = [&polls] { return ++polls > 100; };
  sim::Simulator again(p, o);
  const sim::RunResult r = again.run();
  EXPECT_EQ(polls, 7);
  EXPECT_EQ(r.queues[3].instructions, 2000); // DVE
  EXPECT_EQ(r.dynamic_instructions, 2000);
}

TEST_P(Cancel, TheCancelledSimulatorRunsAgain) {
  const isa::Program p = memsets();
  sim::RunOptions o;
  o.timing_only = GetParam();
  bool stop = true;
  o.cancelled = [&stop] { return stop; };
  sim::Simulator s(p, o);
  EXPECT_THROW(s.run(), sim::RunCancelled);
  sim::RunOptions plain;
  plain.timing_only = GetParam();
  const double expected = sim::Simulator(p, plain).run().total_ns;
  stop = false;
  const sim::RunResult r = s.run();
  EXPECT_EQ(r.queues[3].instructions, 2000);
  EXPECT_DOUBLE_EQ(r.total_ns, expected); // the same timeline as a run that was never cancelled
}

INSTANTIATE_TEST_SUITE_P(Modes, Cancel, ::testing::Values(false, true),
                         [](const auto &info) { return info.param ? "timing_only" : "numeric"; });
