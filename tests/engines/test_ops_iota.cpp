// Iota and TensorScalarAffineSelect (engines/ops/iota.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;

namespace {
using V = std::vector<float>;
} // namespace

TEST(OpsIota, AffinePatternWithChannelMultiplier) {
  Harness h;
  auto y = h.b.sbuf("y", {2, 6}, Dtype::int32);
  // value = 10 + 100*p + 3*y + x over pattern [[3,2],[1,3]]
  h.b.add(InstructionType::Iota, {}, {P(y.all())})
      .pattern({{3, 2}, {1, 3}}).base(10).channel_multiplier(100);
  h.place();
  h.run();
  std::vector<int32_t> v(12);
  h.mem->read_i32(whole(y), v.data());
  EXPECT_EQ(v, (std::vector<int32_t>{10, 11, 12, 13, 14, 15, 110, 111, 112, 113, 114, 115}));
}

TEST(OpsAffineSelect, CausalMask) {
  Harness h;
  auto x = h.b.sbuf("x", {3, 3}), y = h.b.sbuf("y", {3, 3});
  // keep x[p][j] where p - j >= 0 (lower triangle), else -inf-like fill
  h.b.add(InstructionType::TensorScalarAffineSelect, {P(x.all())}, {P(y.all())})
      .pattern({{-1, 3}}).base(0).channel_multiplier(1).compare_op(isa::AluOp::is_ge).fill_value(-9999.0);
  h.place();
  h.set(x, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  h.run();
  EXPECT_EQ(h.get(y), (V{1, -9999, -9999, 4, 5, -9999, 7, 8, 9}));
}
