// Pool, Avg and Max (engines/ops/pool.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;

namespace {
using V = std::vector<float>;
} // namespace

TEST(OpsPool, AvgAndMaxOverTheTwoInnermostDims) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 8}), a = h.b.sbuf("a", {2, 2}), m = h.b.sbuf("m", {2, 2});
  // Per partition two 2x2 windows: [[8,2],[4,2],[2,2],[1,2]].
  Ap v = x.at(0, {{8, 2}, {4, 2}, {2, 2}, {1, 2}});
  h.b.add(InstructionType::Pool, {P(v)}, {P(a.all())}).pool_func(isa::PoolFunctionType::Avg);
  h.b.add(InstructionType::Pool, {P(v)}, {P(m.all())}).pool_func(isa::PoolFunctionType::Max);
  h.place();
  h.set(x, {1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4, 0, 0, 0, 8});
  h.run();
  EXPECT_EQ(h.get(a), (V{2.5f, 6.5f, -2.5f, 2.0f}));
  EXPECT_EQ(h.get(m), (V{4, 8, -1, 8}));
}
