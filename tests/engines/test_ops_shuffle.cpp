// StreamShuffle and StreamTranspose (engines/ops/shuffle.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;

namespace {
using V = std::vector<float>;
} // namespace

// StreamShuffle: output partition i takes input partition 31 - i, except mask 255 at i = 5 (untouched).
// StreamTranspose of [2, 3] (inside one 32x32 tile) is the plain transpose.
TEST(OpsShuffle, StreamShuffleAndTranspose) {
  Harness h;
  auto x = h.b.sbuf("x", {32, 1}), y = h.b.sbuf("y", {32, 1});
  auto a = h.b.sbuf("a", {2, 3}), t = h.b.sbuf("t", {3, 2});
  std::vector<int64_t> mask(32);
  for (int i = 0; i < 32; ++i) mask[static_cast<size_t>(i)] = 31 - i;
  mask[5] = 255;
  h.b.add(InstructionType::StreamShuffle, {P(x.all())}, {P(y.all())}).mask(mask);
  h.b.add(InstructionType::StreamTranspose, {P(a.all())}, {P(t.all())});
  h.place();
  V xs(32), ys(32, -1);
  for (int i = 0; i < 32; ++i) xs[static_cast<size_t>(i)] = float(i);
  h.set(x, xs);
  h.set(y, ys);
  h.set(a, {1, 2, 3, 4, 5, 6});
  h.run();
  V want(32);
  for (int i = 0; i < 32; ++i) want[static_cast<size_t>(i)] = float(31 - i);
  want[5] = -1;
  EXPECT_EQ(h.get(y), want);
  EXPECT_EQ(h.get(t), (V{1, 4, 2, 5, 3, 6}));
}
