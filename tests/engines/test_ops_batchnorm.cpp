// Batch norm: BNStats, BNStatsAggregate, BNGradients, BNBackprop, BNBackprop2 (engines/ops/batchnorm.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;

namespace {
using V = std::vector<float>;
} // namespace

// x = 1 2 3 4: lane A {1, 3} (n 2, mean 2, M2 2), lane B {2, 4} (n 2, mean 3, M2 2); the Chan merge gives the
// population mean 2.5 and variance 1.25.
TEST(OpsBatchNorm, StatsAndAggregateWelfordChan) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 4}), s = h.b.sbuf("s", {1, 6}), g = h.b.sbuf("g", {1, 2});
  h.b.add(InstructionType::BNStats, {P(x.all())}, {P(s.all())});
  h.b.add(InstructionType::BNStatsAggregate, {P(s.all())}, {P(g.all())});
  h.place();
  h.set(x, {1, 2, 3, 4});
  h.run();
  EXPECT_EQ(h.get(s), (V{2, 2, 2, 2, 3, 2}));
  EXPECT_EQ(h.get(g), (V{2.5f, 1.25f}));
}

// apply_transpose reduces over partitions: [4, 1] transposed to [1, 4].
TEST(OpsBatchNorm, StatsApplyTranspose) {
  Harness h;
  auto x = h.b.sbuf("x", {4, 1}), s = h.b.sbuf("s", {1, 6});
  h.b.add(InstructionType::BNStats, {P(x.all())}, {P(s.all())}).apply_transpose(true);
  h.place();
  h.set(x, {1, 2, 3, 4});
  h.run();
  EXPECT_EQ(h.get(s), (V{2, 2, 2, 2, 3, 2}));
}

// BNGradients: x 1 2 3 4, dy 0 0 1 1, mean 2.5, vf 2: t = (x - 2.5) * dy * 2 = 0 0 1 3 ->
// (sum dy, sum t*vf, sum t) = (2, 8, 4). Backprop: dx = (dy * N - ((x - m) * Bc + A)) * scale with N = 2,
// x 1 2, dy 1 2, m 1, (scale, A, Bc) = (0.5, 1, 2): (2 - 1) * 0.5 = 0.5, (4 - 3) * 0.5 = 0.5.
TEST(OpsBatchNorm, GradientsBackpropAndBackprop2) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 4}), dy = h.b.sbuf("dy", {1, 4}), gr = h.b.sbuf("gr", {1, 3});
  auto x2 = h.b.sbuf("x2", {1, 2}), dy2 = h.b.sbuf("dy2", {1, 2}), c = h.b.sbuf("c", {1, 3});
  auto ca = h.b.sbuf("ca", {1, 1}), cb = h.b.sbuf("cb", {1, 2}), o1 = h.b.sbuf("o1", {1, 2}), o2 = h.b.sbuf("o2", {1, 2});
  h.b.add(InstructionType::BNGradients, {P(x.all()), P(dy.all()), I(2.5), I(2)}, {P(gr.all())});
  h.b.add(InstructionType::BNBackprop, {P(x2.all()), P(dy2.all()), P(c.all()), I(1)}, {P(o1.all())})
      .total_elements(2);
  h.b.add(InstructionType::BNBackprop2, {P(x2.all()), P(dy2.all()), P(ca.all()), P(cb.all()), I(1)}, {P(o2.all())})
      .total_elements(2);
  h.place();
  h.set(x, {1, 2, 3, 4});
  h.set(dy, {0, 0, 1, 1});
  h.set(x2, {1, 2});
  h.set(dy2, {1, 2});
  h.set(c, {0.5f, 1, 2});
  h.set(ca, {0.5f});
  h.set(cb, {1, 2});
  h.run();
  EXPECT_EQ(h.get(gr), (V{2, 8, 4}));
  EXPECT_EQ(h.get(o1), (V{0.5f, 0.5f}));
  EXPECT_EQ(h.get(o2), (V{0.5f, 0.5f}));
}
