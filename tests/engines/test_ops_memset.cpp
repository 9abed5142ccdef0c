// Memset, constant and random (engines/ops/memset.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;

namespace {
using V = std::vector<float>;
} // namespace

TEST(OpsMemset, ConstantIntAndDeterministicRandom) {
  Harness h;
  auto f = h.b.sbuf("f", {2, 2}), i = h.b.sbuf("i", {1, 2}, Dtype::int32), r = h.b.sbuf("r", {1, 64});
  h.b.add(InstructionType::Memset, {}, {P(f.all())}).constant(1.5);
  h.b.add(InstructionType::Memset, {}, {P(i.all())}).constant(7.0);
  h.b.add(InstructionType::Memset, {}, {P(r.all())}).memset_mode(isa::MemsetMode::Random);
  h.place();
  h.run();
  EXPECT_EQ(h.get(f), (V{1.5f, 1.5f, 1.5f, 1.5f}));
  std::vector<int32_t> iv(2);
  h.mem->read_i32(whole(i), iv.data());
  EXPECT_EQ(iv[0], 7);
  auto rv = h.get(r);
  for (float x : rv) {
    EXPECT_GE(x, 0.0f);
    EXPECT_LT(x, 1.0f);
  }
  EXPECT_NE(rv[0], rv[1]);
  // Same seed, same numbers.
  Harness h2;
  auto r2 = h2.b.sbuf("r", {1, 64});
  h2.b.add(InstructionType::Memset, {}, {P(r2.all())}).memset_mode(isa::MemsetMode::Random);
  h2.place();
  h2.run();
  EXPECT_EQ(h2.get(r2), rv);
}
