// Select and CopyPredicated (engines/ops/select.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;

namespace {
using V = std::vector<float>;
} // namespace

TEST(OpsSelect, StrictPredicateAndImmediateFalse) {
  Harness h;
  auto p = h.b.sbuf("p", {1, 4}), t = h.b.sbuf("t", {1, 4}), y = h.b.sbuf("y", {1, 4});
  h.b.add(InstructionType::Select, {P(p.all()), P(t.all()), I(-5.0)}, {P(y.all())});
  h.place();
  h.set(p, {1, 0, 0, 1});
  h.set(t, {10, 20, 30, 40});
  h.run();
  EXPECT_EQ(h.get(y), (V{10, -5, -5, 40}));
  h.set(p, {1, 2, 0, 1});
  EXPECT_THROW(h.run(), SimulationError);
}

TEST(OpsCopyPredicated, CopiesWherePredicateHoldsAndReversePredInverts) {
  Harness h;
  auto s = h.b.sbuf("s", {1, 4}), p = h.b.sbuf("p", {1, 4}, Dtype::uint8);
  auto y = h.b.sbuf("y", {1, 4}), z = h.b.sbuf("z", {1, 4});
  h.b.add(InstructionType::CopyPredicated, {P(s.all()), P(p.all())}, {P(y.all())});
  h.b.add(InstructionType::CopyPredicated, {P(s.all()), P(p.all())}, {P(z.all())}).reverse_pred(true);
  h.place();
  h.set(s, {1, 2, 3, 4});
  h.set(y, {0, 0, 0, 0});
  h.set(z, {0, 0, 0, 0});
  h.set(p, {1, 0, 3, 0});
  h.run();
  EXPECT_EQ(h.get(y), (V{1, 0, 3, 0}));
  EXPECT_EQ(h.get(z), (V{0, 2, 0, 4}));
}
