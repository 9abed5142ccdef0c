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

// StreamShuffle broadcasting one source partition: mask all 0 over a [1, 2] source and a [4, 2] destination
// (NKI nc_stream_shuffle with src[0:1]): every destination partition takes source partition 0. A mask entry
// naming source partition 1, which the source does not have, is refused.
TEST(OpsShuffle, StreamShuffleBroadcastsOnePartition) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 2}), y = h.b.sbuf("y", {4, 2});
  h.b.add(InstructionType::StreamShuffle, {P(x.all())}, {P(y.all())}).mask(std::vector<int64_t>(32, 0));
  h.place();
  h.set(x, {3, 5});
  h.run();
  EXPECT_EQ(h.get(y), (V{3, 5, 3, 5, 3, 5, 3, 5}));
  Harness bad;
  auto a = bad.b.sbuf("a", {1, 2}), b = bad.b.sbuf("b", {4, 2});
  std::vector<int64_t> mask(32, 0);
  mask[2] = 1;
  bad.b.add(InstructionType::StreamShuffle, {P(a.all())}, {P(b.all())}).mask(mask);
  bad.place();
  bad.set(a, {1, 2});
  EXPECT_THROW(bad.run(), SemanticError);
}
