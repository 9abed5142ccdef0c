// Indirect and dynamic movement: IndirectLoad / IndirectSave(Accumulate), IndirectCopy, Gather, the
// GenericIndirect pair and TensorCopyDynamicSrc / Dst (engines/ops/indirect.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;

namespace {
using V = std::vector<float>;
} // namespace

// IndirectLoad rows 2, skip, 0; IndirectSaveAccumulate with a duplicate index adds in list order;
// IndirectSave keeps the last writer; Gather per partition.
TEST(OpsIndirect, LoadSaveAccumulateGather) {
  Harness h;
  auto tab = h.b.sbuf("tab", {4, 2}), idx = h.b.sbuf("idx", {1, 3}, Dtype::int32), out = h.b.sbuf("out", {3, 2});
  auto acc = h.b.sbuf("acc", {1, 4}), vals = h.b.sbuf("vals", {1, 3}), idx2 = h.b.sbuf("idx2", {1, 3}, Dtype::int32);
  auto sv = h.b.sbuf("sv", {1, 4});
  auto data = h.b.sbuf("data", {2, 4}), gi = h.b.sbuf("gi", {2, 2}, Dtype::int32), go = h.b.sbuf("go", {2, 2});
  h.b.add(InstructionType::IndirectLoad, {P(tab.all()), P(idx.all())}, {P(out.all())});
  h.b.add(InstructionType::IndirectSaveAccumulate, {P(vals.all()), P(idx2.all())}, {P(acc.all())});
  h.b.add(InstructionType::IndirectSave, {P(vals.all()), P(idx2.all())}, {P(sv.all())});
  h.b.add(InstructionType::Gather, {P(data.all()), P(gi.all())}, {P(go.all())});
  h.place();
  h.set(tab, {0, 1, 10, 11, 20, 21, 30, 31});
  h.set(idx, {2, -1, 0});
  h.set(out, {9, 9, 9, 9, 9, 9});
  h.set(acc, {0, 0, 0, 0});
  h.set(sv, {0, 0, 0, 0});
  h.set(vals, {1, 2, 3});
  h.set(idx2, {1, 1, 3});
  h.set(data, {10, 11, 12, 13, 20, 21, 22, 23});
  h.set(gi, {3, 0, 1, 1});
  h.run();
  EXPECT_EQ(h.get(out), (V{20, 21, 9, 9, 0, 1}));
  EXPECT_EQ(h.get(acc), (V{0, 3, 0, 3}));
  EXPECT_EQ(h.get(sv), (V{0, 2, 0, 3}));
  EXPECT_EQ(h.get(go), (V{13, 10, 21, 21}));
}

// Gather's local form (num_elem_per_idx): 32 partitions = two groups of 16; each group's indices [16, 1] are read
// column-major (position q for partition q), the first 3 valid; every partition p gathers E = 2 elements of its own
// row [p*10 .. p*10+7] (value = 10 p + element) at each index. Group 0's indices 6, 0, 2 (partitions 0, 1, 2), group
// 1's 4, 4, 0 (partitions 16, 17, 18): partition 1 -> 16, 17, 10, 11, 12, 13; partition 17 -> 174, 175, 174,
// 175, 170, 171.
TEST(OpsIndirect, GatherLocalFormReadsEachGroupsIndicesColumnMajor) {
  Harness h;
  auto data = h.b.sbuf("data", {32, 8}), gi = h.b.sbuf("gi", {32, 1}, Dtype::uint16), go = h.b.sbuf("go", {32, 6});
  h.b.add(InstructionType::Gather, {P(data.all()), P(gi.all())}, {P(go.all())}).num_elem_per_idx(2)
      .num_valid_indices(3);
  h.place();
  V dv(32 * 8), iv(32, 0);
  for (int p = 0; p < 32; ++p)
    for (int e = 0; e < 8; ++e) dv[static_cast<size_t>(p * 8 + e)] = float(10 * p + e);
  iv[0] = 6, iv[1] = 0, iv[2] = 2, iv[16] = 4, iv[17] = 4, iv[18] = 0;
  h.set(data, dv);
  h.set(gi, iv);
  h.run();
  const V got = h.get(go);
  EXPECT_EQ(V(got.begin() + 6, got.begin() + 12), (V{16, 17, 10, 11, 12, 13}));
  EXPECT_EQ(V(got.begin() + 17 * 6, got.begin() + 18 * 6), (V{174, 175, 174, 175, 170, 171}));
}

// IndirectSaveAccumulate's `op` goes through AluOpType2MemoryReduction ({copy, add}): bypass overwrites (the last
// duplicate wins: 2 at entry 1, 3 at entry 3 over a table of 5s), explicit add accumulates onto the 5s
// (5 + 1 + 2 = 8, 5 + 3 = 8), max is refused naming `op`.
TEST(OpsIndirect, SaveAccumulateFollowsItsOp) {
  for (AluOp op : {AluOp::bypass, AluOp::add, AluOp::max}) {
    Harness h;
    auto acc = h.b.sbuf("acc", {1, 4}), vals = h.b.sbuf("vals", {1, 3}), idx = h.b.sbuf("idx", {1, 3}, Dtype::int32);
    h.b.add(InstructionType::IndirectSaveAccumulate, {P(vals.all()), P(idx.all())}, {P(acc.all())}).op(op);
    h.place();
    h.set(acc, {5, 5, 5, 5});
    h.set(vals, {1, 2, 3});
    h.set(idx, {1, 1, 3});
    if (op == AluOp::max) {
      try {
        h.run();
        FAIL();
      } catch (const SemanticError &e) {
        EXPECT_EQ(e.context().field, "op");
      }
      continue;
    }
    h.run();
    EXPECT_EQ(h.get(acc), op == AluOp::add ? (V{5, 8, 5, 8}) : (V{5, 2, 5, 3})) << alu_name(op);
  }
}

// GenericIndirectLoad on a [2, 3] table (dims padded to [1, 1, 2, 3]: coef Y = 3, X = 1): (y, x) = (1, 2) -> 5,
// (0, 1) -> 1. TensorCopyDynamicSrc: the source start moves by the register value (2 elements).
TEST(OpsIndirect, GenericIndirectAndDynamicCopy) {
  Harness h;
  auto tab = h.b.sbuf("tab", {2, 3}), iy = h.b.sbuf("iy", {1, 2}, Dtype::int32), ix = h.b.sbuf("ix", {1, 2}, Dtype::int32);
  auto o = h.b.sbuf("o", {1, 2}), src = h.b.sbuf("src", {1, 6}), dst = h.b.sbuf("dst", {1, 2});
  h.b.add(InstructionType::GenericIndirectLoad, {P(tab.all()), P(iy.all()), P(ix.all())}, {P(o.all())})
      .indirect_dims({2, 3});
  h.b.add(InstructionType::RegisterMove, {I(2)}, {R("off")});
  h.b.add(InstructionType::TensorCopyDynamicSrc, {P(src.tile(0, 1, 0, 2)), R("off")}, {P(dst.all())});
  h.place();
  h.set(tab, {0, 1, 2, 3, 4, 5});
  h.set(iy, {1, 0});
  h.set(ix, {2, 1});
  h.set(src, {0, 10, 20, 30, 40, 50});
  h.run();
  EXPECT_EQ(h.get(o), (V{5, 1}));
  EXPECT_EQ(h.get(dst), (V{20, 30}));
}

// TensorCopyDynamicDst moves the destination start by the runtime offset (x `scale`): r = 3 -> src 7 8 lands at
// dst elements 3, 4 of 0 0 0 0 0 0; with r = 1 and scale 2 the offset is 2 -> elements 2, 3 of the second dst.
// The source never moves (Src would move it).
TEST(OpsIndirect, TensorCopyDynamicDstMovesTheDestination) {
  Harness h;
  auto src = h.b.sbuf("src", {1, 2}), d1 = h.b.sbuf("d1", {1, 6}), d2 = h.b.sbuf("d2", {1, 6});
  h.b.add(InstructionType::RegisterMove, {I(3)}, {R("off")});
  h.b.add(InstructionType::TensorCopyDynamicDst, {P(src.all()), R("off")}, {P(d1.tile(0, 1, 0, 2))});
  h.b.add(InstructionType::RegisterMove, {I(1)}, {R("one")});
  h.b.add(InstructionType::TensorCopyDynamicDst, {P(src.all()), R("one")}, {P(d2.tile(0, 1, 0, 2))}).scale(2);
  h.place();
  h.set(src, {7, 8});
  h.set(d1, {0, 0, 0, 0, 0, 0});
  h.set(d2, {0, 0, 0, 0, 0, 0});
  h.run();
  EXPECT_EQ(h.get(d1), (V{0, 0, 0, 7, 8, 0}));
  EXPECT_EQ(h.get(d2), (V{0, 0, 7, 8, 0, 0}));
}

// IndirectCopy gathers rows like IndirectLoad but only the first num_valid_indices indices: table rows
// (0 1) (10 11) (20 21) (30 31), indices 3 1 0, num_valid_indices 2 -> out rows tab[3] = 30 31, tab[1] = 10 11, and
// the third row keeps its 9 9. Without num_valid_indices all three indices apply: third row = tab[0] = 0 1.
TEST(OpsIndirect, IndirectCopyHonoursNumValidIndices) {
  Harness h;
  auto tab = h.b.sbuf("tab", {4, 2}), idx = h.b.sbuf("idx", {1, 3}, Dtype::int32);
  auto o = h.b.sbuf("o", {3, 2}), all = h.b.sbuf("all", {3, 2});
  h.b.add(InstructionType::IndirectCopy, {P(tab.all()), P(idx.all())}, {P(o.all())}).num_valid_indices(2);
  h.b.add(InstructionType::IndirectCopy, {P(tab.all()), P(idx.all())}, {P(all.all())});
  h.place();
  h.set(tab, {0, 1, 10, 11, 20, 21, 30, 31});
  h.set(idx, {3, 1, 0});
  h.set(o, {9, 9, 9, 9, 9, 9});
  h.run();
  EXPECT_EQ(h.get(o), (V{30, 31, 10, 11, 9, 9}));
  EXPECT_EQ(h.get(all), (V{30, 31, 10, 11, 0, 1}));
}

// GenericIndirectSave on a [2, 3] table, indirect_dims {Y=2, X=3}: coef Y = 3, X = 1, so (y, x) = (1, 2) -> element
// 5, (0, 1) -> element 1, (1, 2) again -> element 5. The reduction is the instruction's own `op` key, default add
// (reference bir-json.md 2.2 "GenericIndirectSave | DMA + indirect_dims; op:AluOp?=add"; json-schema-catalog.md
// InstGenericIndirectSave `op` +0x140; sim-elementwise-datamove.md 6.3: serial, so duplicates add in list order).
// Table 10 10 10 10 10 10, values 1 2 4:
//   add (default and explicit):  element 1 = 10 + 2 = 12, element 5 = 10 + 1 + 4 = 15
//   bypass (copy, last writer wins): element 1 = 2, element 5 = 4
TEST(OpsIndirect, GenericIndirectSaveScattersWithItsOp) {
  Harness h;
  auto vals = h.b.sbuf("vals", {1, 3}), iy = h.b.sbuf("iy", {1, 3}, Dtype::int32), ix = h.b.sbuf("ix", {1, 3}, Dtype::int32);
  auto td = h.b.sbuf("td", {2, 3}), ta = h.b.sbuf("ta", {2, 3}), tc = h.b.sbuf("tc", {2, 3});
  h.b.add(InstructionType::GenericIndirectSave, {P(vals.all()), P(iy.all()), P(ix.all())}, {P(td.all())})
      .indirect_dims({2, 3});
  h.b.add(InstructionType::GenericIndirectSave, {P(vals.all()), P(iy.all()), P(ix.all())}, {P(ta.all())})
      .indirect_dims({2, 3}).op(AluOp::add);
  h.b.add(InstructionType::GenericIndirectSave, {P(vals.all()), P(iy.all()), P(ix.all())}, {P(tc.all())})
      .indirect_dims({2, 3}).op(AluOp::bypass);
  h.place();
  h.set(vals, {1, 2, 4});
  h.set(iy, {1, 0, 1});
  h.set(ix, {2, 1, 2});
  for (const auto &t : {td, ta, tc}) h.set(t, {10, 10, 10, 10, 10, 10});
  h.run();
  EXPECT_EQ(h.get(td), (V{10, 12, 10, 10, 10, 15}));
  EXPECT_EQ(h.get(ta), (V{10, 12, 10, 10, 10, 15}));
  EXPECT_EQ(h.get(tc), (V{10, 2, 10, 10, 10, 4}));
}

TEST(OpsIndirect, GenericIndirectSaveRefusesMax) {
  // reference sim-elementwise-datamove.md 6.4: AluOpType2MemoryReduction maps only bypass and add.
  Harness h;
  auto vals = h.b.sbuf("vals", {1, 1}), ix = h.b.sbuf("ix", {1, 1}, Dtype::int32), t = h.b.sbuf("t", {1, 2});
  h.b.add(InstructionType::GenericIndirectSave, {P(vals.all()), P(ix.all())}, {P(t.all())})
      .indirect_dims({3}).op(AluOp::max);
  h.place();
  try {
    h.run();
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "op");
  }
}

// oob_is_err false (NKI dma_copy oob_mode.skip): an entry beyond the table is skipped like a negative index. Table
// rows (0 1) (10 11) (20 21) (30 31), indices 3 7 1: IndirectLoad -> rows 30 31, skipped (9 9), 10 11; IndirectSave
// of values (1 2) (3 4) (5 6) into a table of 0s -> row 3 = 1 2, index 7 skipped, row 1 = 5 6. With the default
// (oob_is_err true) index 7 is a run-time error naming ins[1].
TEST(OpsIndirect, OutOfBoundsEntriesAreSkippedWhenNotAnError) {
  Harness h;
  auto tab = h.b.sbuf("tab", {4, 2}), idx = h.b.sbuf("idx", {1, 3}, Dtype::int32), out = h.b.sbuf("out", {3, 2});
  auto vals = h.b.sbuf("vals", {3, 2}), dst = h.b.sbuf("dst", {4, 2});
  h.b.add(InstructionType::IndirectLoad, {P(tab.all()), P(idx.all())}, {P(out.all())}).oob_is_err(false);
  h.b.add(InstructionType::IndirectSave, {P(vals.all()), P(idx.all())}, {P(dst.all())}).oob_is_err(false);
  h.place();
  h.set(tab, {0, 1, 10, 11, 20, 21, 30, 31});
  h.set(idx, {3, 7, 1});
  h.set(out, {9, 9, 9, 9, 9, 9});
  h.set(vals, {1, 2, 3, 4, 5, 6});
  h.set(dst, {0, 0, 0, 0, 0, 0, 0, 0});
  h.run();
  EXPECT_EQ(h.get(out), (V{30, 31, 9, 9, 10, 11}));
  EXPECT_EQ(h.get(dst), (V{0, 0, 5, 6, 0, 0, 1, 2}));

  Harness e;
  auto tab2 = e.b.sbuf("tab", {4, 2}), idx2 = e.b.sbuf("idx", {1, 3}, Dtype::int32), out2 = e.b.sbuf("out", {3, 2});
  e.b.add(InstructionType::IndirectLoad, {P(tab2.all()), P(idx2.all())}, {P(out2.all())});
  e.place();
  e.set(tab2, {0, 1, 10, 11, 20, 21, 30, 31});
  e.set(idx2, {3, 7, 1});
  try {
    e.run();
    ADD_FAILURE() << "an index beyond the table ran";
  } catch (const SimulationError &x) {
    EXPECT_NE(std::string(x.what()).find("ins[1]"), std::string::npos) << x.what();
  }
}
