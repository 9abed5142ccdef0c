// The DVE search family: Max8, MaxIndex, MatchReplace, NonzeroWithCount, GetSequenceBounds
// (engines/ops/search.cpp). Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;

namespace {
using V = std::vector<float>;
} // namespace

// data 5 1 9 9 3 7 2 8 6 4: top 8 = 9 9 8 7 6 5 4 3; first-occurrence indices one-to-one: 2 3 7 5 8 0 9 4.
TEST(OpsSearch, Max8MaxIndexMatchReplace) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 10}), mx = h.b.sbuf("mx", {1, 8}), ix = h.b.sbuf("ix", {1, 8}, Dtype::uint32);
  auto mr = h.b.sbuf("mr", {1, 10}), mr2 = h.b.sbuf("mr2", {1, 10}), ix2 = h.b.sbuf("ix2", {1, 8}, Dtype::uint32);
  h.b.add(InstructionType::Max, {P(x.all())}, {P(mx.all())});
  h.b.add(InstructionType::MaxIndex, {P(mx.all()), P(x.all())}, {P(ix.all())});
  h.b.add(InstructionType::MatchReplace, {P(mx.all()), P(x.all())}, {P(mr.all())}).imm_value(-100);
  h.b.add(InstructionType::MaxIndexAndMatchReplace, {P(mx.all()), P(x.all())}, {P(mr2.all()), P(ix2.all())})
      .imm_value(-100);
  h.place();
  h.set(x, {5, 1, 9, 9, 3, 7, 2, 8, 6, 4});
  h.run();
  EXPECT_EQ(h.get(mx), (V{9, 9, 8, 7, 6, 5, 4, 3}));
  std::vector<uint32_t> idx(8);
  h.mem->read_raw(whole(ix), reinterpret_cast<uint8_t *>(idx.data()));
  EXPECT_EQ(idx, (std::vector<uint32_t>{2, 3, 7, 5, 8, 0, 9, 4}));
  EXPECT_EQ(h.get(mr), (V{-100, 1, -100, -100, -100, -100, 2, -100, -100, -100}));
  EXPECT_EQ(h.get(mr2), h.get(mr));
  // MatchReplace walks vals from slot 7 down to 0 (nki.isa.nc_match_replace8): the two 9s are paired with their
  // matches highest slot first, slot 1 takes position 2 and slot 0 position 3 (MaxIndex above: ascending).
  h.mem->read_raw(whole(ix2), reinterpret_cast<uint8_t *>(idx.data()));
  EXPECT_EQ(idx, (std::vector<uint32_t>{3, 2, 7, 5, 8, 0, 9, 4}));
}

// The public nki.isa.nc_match_replace8 page's duplicate-vals example: data [1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8],
// vals [3, 8, 8, 8, 8, 8, 8, 8] -> dst_idx [2, 10, 9, 8, 7, 6, 5, 4] (vals walked from slot 7 down: slot 7 takes
// the first 8 at position 4, slot 1 the last at 10; slot 0's 3 is at 2). Every match is replaced by imm.
TEST(OpsSearch, MatchReplace8DuplicateValsFollowTheDocumentedExample) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 11}), v = h.b.sbuf("v", {1, 8});
  auto mr = h.b.sbuf("mr", {1, 11}), ix = h.b.sbuf("ix", {1, 8}, Dtype::uint32);
  h.b.add(InstructionType::MaxIndexAndMatchReplace, {P(v.all()), P(x.all())}, {P(mr.all()), P(ix.all())})
      .imm_value(-1);
  h.place();
  h.set(x, {1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8});
  h.set(v, {3, 8, 8, 8, 8, 8, 8, 8});
  h.run();
  std::vector<uint32_t> idx(8);
  h.mem->read_raw(whole(ix), reinterpret_cast<uint8_t *>(idx.data()));
  EXPECT_EQ(idx, (std::vector<uint32_t>{2, 10, 9, 8, 7, 6, 5, 4}));
  EXPECT_EQ(h.get(mr), (V{1, 2, -1, 4, -1, -1, -1, -1, -1, -1, -1}));
}

TEST(OpsSearch, MaxIndexMissIsAllOnes) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 8}), v = h.b.sbuf("v", {1, 8}), ix = h.b.sbuf("ix", {1, 8}, Dtype::uint32);
  h.b.add(InstructionType::MaxIndex, {P(v.all()), P(x.all())}, {P(ix.all())});
  h.place();
  h.set(x, {0, 1, 2, 3, 4, 5, 6, 7});
  h.set(v, {7, 42, 0, 0, 7, 7, 7, 7});  // 42 absent; the second 0 and the later 7s find no unused occurrence
  h.run();
  std::vector<uint32_t> idx(8);
  h.mem->read_raw(whole(ix), reinterpret_cast<uint8_t *>(idx.data()));
  EXPECT_EQ(idx, (std::vector<uint32_t>{7, 0xFFFFFFFFu, 0, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu,
                                        0xFFFFFFFFu}));
}

// nonzero of 0 3 0 5 with offset 10: 11 13, padding -1 -1, count 2. Sequence bounds of ids 1 1 2 0 2:
// starts 0 0 2 5(pad: n) 4, ends (exclusive) 2 2 3 -1 5.
TEST(OpsSearch, NonzeroWithCountAndSequenceBounds) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 4}), o = h.b.sbuf("o", {1, 5}, Dtype::int32);
  auto ids = h.b.sbuf("ids", {1, 5}), b = h.b.sbuf("b", {1, 10}, Dtype::int32);
  h.b.add(InstructionType::NonzeroWithCount, {P(x.all()), I(10)}, {P(o.all())});
  h.b.add(InstructionType::GetSequenceBounds, {P(ids.all())}, {P(b.all())});
  h.place();
  h.set(x, {0, 3, 0, 5});
  h.set(ids, {1, 1, 2, 0, 2});
  h.run();
  EXPECT_EQ(h.get(o), (V{11, 13, -1, -1, 2}));
  EXPECT_EQ(h.get(b), (V{0, 0, 2, 5, 4, 2, 2, 3, -1, 5}));
}
