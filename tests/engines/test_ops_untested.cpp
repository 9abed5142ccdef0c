// Hand-checked tests for executed instruction types no other test named (issue #5 audit): the copy thunks,
// dynamic/indirect movement, ReadVarAddr, rank ids, point-to-point collectives, GetRandState, the DMADescriptor
// family, and the no-effect sync/control types. Every expected value is worked out by hand in the comment beside
// it, from the semantics in engines/ops/*.cpp and the reference page that file cites.
#include <gtest/gtest.h>

#include <cstring>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;

namespace {
isa::Arg ImmArray(std::vector<double> v) {
  isa::Arg a;
  a.kind = isa::ArgKind::ImmArray;
  a.dtype = Dtype::uint32;
  a.imm_array = std::move(v);
  a.json_kind = "imm_array";
  return a;
}
using V = std::vector<float>;
using U = std::vector<uint32_t>;

U raw_u32(const Harness &h, const TensorHandle &t) {
  Access a = whole(t);
  U v(static_cast<size_t>(a.partitions() * a.free_elements()));
  h.mem->read_raw(a, reinterpret_cast<uint8_t *>(v.data()));
  return v;
}
std::vector<uint16_t> raw_u16(const Harness &h, const TensorHandle &t) {
  Access a = whole(t);
  std::vector<uint16_t> v(static_cast<size_t>(a.partitions() * a.free_elements()));
  h.mem->read_raw(a, reinterpret_cast<uint8_t *>(v.data()));
  return v;
}
} // namespace

// ------------------------------------------------------------------------------------------------ copy thunks
// reference sim-elementwise-datamove.md 5.1: GenericCopy and AbstractCopy are one-line thunks to doCopy.
// GenericCopy with a strided source: src 10 11 12 13 14 15, pattern start 1, [step 2, num 3] -> 11 13 15.
// AbstractCopy fp32 -> bf16 is a cast-on-copy: 1.0 = 0x3F800000 -> 0x3F80; -2.5 = 0xC0200000 -> 0xC020;
// 0.75 = 0x3F400000 -> 0x3F40 (all exact in bf16, the low 16 bits are zero).
TEST(OpsUntestedCopy, GenericCopyStridedAndAbstractCopyCasts) {
  Harness h;
  auto src = h.b.sbuf("src", {1, 6}), g = h.b.sbuf("g", {1, 3});
  auto f = h.b.sbuf("f", {1, 3}), bf = h.b.sbuf("bf", {1, 3}, Dtype::bfloat16);
  h.b.add(InstructionType::GenericCopy, {P(src.at(1, {{6, 1}, {2, 3}}))}, {P(g.all())});
  h.b.add(InstructionType::AbstractCopy, {P(f.all())}, {P(bf.all())});
  h.place();
  h.set(src, {10, 11, 12, 13, 14, 15});
  h.set(f, {1.0f, -2.5f, 0.75f});
  h.run();
  EXPECT_EQ(h.get(g), (V{11, 13, 15}));
  EXPECT_EQ(raw_u16(h, bf), (std::vector<uint16_t>{0x3F80, 0xC020, 0x3F40}));
}

// GPSIMDSB2SB is dispatched as a plain SBUF -> SBUF copy (dispatch.cpp, INFERRED): [2, 2] 1 2 3 4 lands as is,
// and a [2, 1] column (start 1, partition step 2) picks 2 and 4.
TEST(OpsUntestedCopy, Gpsimdsb2sbIsAPlainSbufCopy) {
  Harness h;
  auto a = h.b.sbuf("a", {2, 2}), b = h.b.sbuf("b", {2, 2}), c = h.b.sbuf("c", {2, 1});
  h.b.add(InstructionType::GPSIMDSB2SB, {P(a.all())}, {P(b.all())});
  h.b.add(InstructionType::GPSIMDSB2SB, {P(a.at(1, {{2, 2}, {1, 1}}))}, {P(c.all())});
  h.place();
  h.set(a, {1, 2, 3, 4});
  h.run();
  EXPECT_EQ(h.get(b), (V{1, 2, 3, 4}));
  EXPECT_EQ(h.get(c), (V{2, 4}));
}

// ------------------------------------------------------------------------------------------------ dynamic / indirect
// TensorCopyDynamicDst moves the destination start by the runtime offset (x `scale`): r = 3 -> src 7 8 lands at
// dst elements 3, 4 of 0 0 0 0 0 0; with r = 1 and scale 2 the offset is 2 -> elements 2, 3 of the second dst.
// The source never moves (Src would move it).
TEST(OpsUntestedIndirect, TensorCopyDynamicDstMovesTheDestination) {
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
TEST(OpsUntestedIndirect, IndirectCopyHonoursNumValidIndices) {
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
TEST(OpsUntestedIndirect, GenericIndirectSaveScattersWithItsOp) {
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

TEST(OpsUntestedIndirect, GenericIndirectSaveRefusesMax) {
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

// ------------------------------------------------------------------------------------------------ registers, ranks
// ReadVarAddr (registers.cpp): SBUF = placement address + in-partition byte offset; DRAM = byte offset in the tensor.
// Placement (engines/memory.cpp first fit, 64-byte SBUF alignment, tensor order): a [1, 4] fp32 = 16 bytes at 0,
// d [2, 10] fp32 overlaps a's partition 0, so it goes to the next 64-byte boundary after 16: 64.
//   d at element 5 (partition 0, column 5):              64 + 5 * 4 = 84
//   d at element 13 (partition 1, column 13 % 10 = 3):   64 + 3 * 4 = 76
//   DRAM x [4, 8] fp32 at element 11:                    11 * 4 = 44
//   DRAM y [2, 8] bf16 at element 3:                     3 * 2 = 6
TEST(OpsUntestedRegisters, ReadVarAddrByteAddresses) {
  Harness h;
  auto a = h.b.sbuf("a", {1, 4}), d = h.b.sbuf("d", {2, 10});
  auto x = h.b.dram("x", {4, 8}), y = h.b.dram("y", {2, 8}, Dtype::bfloat16);
  auto o = h.b.sbuf("o", {1, 4}, Dtype::int32);
  h.b.add(InstructionType::ReadVarAddr, {P(d.at(5, {{10, 1}, {1, 1}}))}, {P(o.tile(0, 1, 0, 1))});
  h.b.add(InstructionType::ReadVarAddr, {P(d.at(13, {{10, 1}, {1, 1}}))}, {R("r")});
  h.b.add(InstructionType::TensorSave, {R("r")}, {P(o.tile(0, 1, 1, 1))});
  h.b.add(InstructionType::ReadVarAddr, {P(x.at(11, {{8, 1}, {1, 1}}))}, {P(o.tile(0, 1, 2, 1))});
  h.b.add(InstructionType::ReadVarAddr, {P(y.at(3, {{8, 1}, {1, 1}}))}, {P(o.tile(0, 1, 3, 1))});
  h.place();
  ASSERT_EQ(h.mem->placed_addr(a.id), 0);
  ASSERT_EQ(h.mem->placed_addr(d.id), 64);
  h.run();
  EXPECT_EQ(h.get(o), (V{84, 76, 44, 6}));
}

// GetCurProcessingRankID: one NeuronCore is rank 0 for every (iter_id, channel_id) (registers.cpp): an access
// prefilled with 5 5 5 becomes 0 0 0, and a register output reads back 0 through TensorSave.
TEST(OpsUntestedRegisters, GetCurProcessingRankIdIsZero) {
  Harness h;
  auto o = h.b.sbuf("o", {1, 3}), s = h.b.sbuf("s", {1, 1}, Dtype::int32);
  h.b.add(InstructionType::GetCurProcessingRankID, {}, {P(o.all())}).iter_id(2).channel_id(1);
  h.b.add(InstructionType::GetCurProcessingRankID, {}, {R("rk")});
  h.b.add(InstructionType::TensorSave, {R("rk")}, {P(s.all())});
  h.place();
  h.set(o, {5, 5, 5});
  h.set(s, {5});
  h.run();
  EXPECT_EQ(h.get(o), (V{0, 0, 0}));
  EXPECT_EQ(h.get(s), (V{0}));
}

// ------------------------------------------------------------------------------------------------ collectives
// collective.cpp, single rank: CollectiveRecv from peer 0 (this rank) is a loopback copy of ins[0] to outs[0];
// CollectiveSend to peer 0 has no local effect (its output-less form touches nothing: b keeps 9 9).
TEST(OpsUntestedCollective, SendRecvSingleRankLoopback) {
  Harness h;
  auto a = h.b.sbuf("a", {1, 2}), b = h.b.sbuf("b", {1, 2}), c = h.b.sbuf("c", {1, 2});
  h.b.add(InstructionType::CollectiveSend, {P(a.all())}, {}).peer_id(0);
  h.b.add(InstructionType::CollectiveRecv, {P(a.all())}, {P(c.all())}).peer_id(0);
  h.place();
  h.set(a, {3, -4});
  h.set(b, {9, 9});
  h.set(c, {0, 0});
  h.exec(0);
  EXPECT_EQ(h.get(a), (V{3, -4}));
  EXPECT_EQ(h.get(b), (V{9, 9}));
  EXPECT_EQ(h.get(c), (V{0, 0}));
  h.exec(1);
  EXPECT_EQ(h.get(c), (V{3, -4}));
}

// A peer other than rank 0 needs another NeuronCore's buffers: refused naming peer_id.
TEST(OpsUntestedCollective, SendRecvToAnotherRankIsRefused) {
  for (auto type : {InstructionType::CollectiveSend, InstructionType::CollectiveRecv}) {
    Harness h;
    auto a = h.b.sbuf("a", {1, 2}), c = h.b.sbuf("c", {1, 2});
    h.b.add(type, {P(a.all())}, {P(c.all())}).peer_id(1);
    h.place();
    try {
      h.run();
      FAIL() << isa::inst_type_name(type);
    } catch (const SemanticError &e) {
      EXPECT_EQ(e.context().field, "peer_id");
      const std::string m = e.what();
      EXPECT_NE(m.find("peer 1"), std::string::npos) << m;
      EXPECT_NE(m.find("one NeuronCore"), std::string::npos) << m;
    }
  }
}

// ------------------------------------------------------------------------------------------------ random state
// SetRandState with an 8-value immediate array is the gen-1 wire seed (random.cpp, reference
// sim-bn-rng-collective-dma.md 2.3): per partition p, word0 = (p << 24) | (imm[0] & 0xFFFFFF), words 1..5 = imm[1..5].
// Seed {0x12345678, 2, 3, 4, 5, 6, 7, 8} on 2 partitions:
//   p0: 0x00345678 2 3 4 5 6      p1: 0x01345678 2 3 4 5 6
// Seed {0, 0, 0, 0, 0, 7, 0, 0}: p0 words 0..4 are all zero -> the dead-state guard sets word 4 = 1:
//   p0: 0 0 0 0 1 7               p1: 0x01000000 0 0 0 0 7
// One LFSR step on word 0 of the first seed (taps {32,22,2,1}: b = s>>31 ^ s>>21 ^ s>>1 ^ s, s = s << 1 | b & 1):
//   p0 s = 0x00345678: bit0 of (0 ^ 0x1 ^ 0x1A2B3C ^ 0x345678) = 1 ^ 0 ^ 0 = 1 -> 0x0068ACF1
// GetRandState with an input access is birsim's doCopy snapshot (IT58 = doCopy): it copies the access.
TEST(OpsUntestedRandom, GetRandStateAfterAKnownSeed) {
  Harness h;
  auto s1 = h.b.sbuf("s1", {2, 6}, Dtype::uint32), s2 = h.b.sbuf("s2", {2, 6}, Dtype::uint32);
  auto r = h.b.sbuf("r", {1, 1}, Dtype::uint32), s3 = h.b.sbuf("s3", {1, 6}, Dtype::uint32);
  auto snap = h.b.sbuf("snap", {2, 6}, Dtype::uint32);
  h.b.add(InstructionType::SetRandState, {ImmArray({0x12345678, 2, 3, 4, 5, 6, 7, 8})}, {});
  h.b.add(InstructionType::GetRandState, {}, {P(s1.all())});
  h.b.add(InstructionType::Rand, {}, {P(r.all())}).random_algorithm(isa::RandomAlgorithmKind::LFSR);
  h.b.add(InstructionType::GetRandState, {}, {P(s3.all())});
  h.b.add(InstructionType::SetRandState, {ImmArray({0, 0, 0, 0, 0, 7, 0, 0})}, {});
  h.b.add(InstructionType::GetRandState, {}, {P(s2.all())});
  h.b.add(InstructionType::GetRandState, {P(s1.all())}, {P(snap.all())});
  h.place();
  h.run();
  EXPECT_EQ(raw_u32(h, s1), (U{0x00345678u, 2, 3, 4, 5, 6, 0x01345678u, 2, 3, 4, 5, 6}));
  EXPECT_EQ(raw_u32(h, r), (U{0x0068ACF1u}));
  EXPECT_EQ(raw_u32(h, s3), (U{0x0068ACF1u, 2, 3, 4, 5, 6}));
  EXPECT_EQ(raw_u32(h, s2), (U{0, 0, 0, 0, 1, 7, 0x01000000u, 0, 0, 0, 0, 7}));
  EXPECT_EQ(raw_u32(h, snap), raw_u32(h, s1));
}

TEST(OpsUntestedRandom, GetRandStateRefusesAStateThatIsNeither6Nor24Words) {
  Harness h;
  auto s = h.b.sbuf("s", {1, 5}, Dtype::uint32);
  h.b.add(InstructionType::GetRandState, {}, {P(s.all())});
  h.place();
  try {
    h.run();
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "outs[0]");
  }
}

// ------------------------------------------------------------------------------------------------ DMA descriptors
// reference sim-bn-rng-collective-dma.md 5: descriptors re-dispatch to the DMACopy do* bodies (dma_copy.cpp).
// DMADescriptor (the base) follows its copy mode like DMACopy:
//   mode Copy (the default):  a 1 2 3 4 5 6 -> 1 2 3 4 5 6
//   mode Replicate, src [2, 2] 1 2 3 4 -> dst [4, 2]: partition r takes src partition r % 2 -> 1 2 3 4 1 2 3 4
//   mode Transpose, WZXY on [2, 3] (padded [W=1, Z=1, Y=2, X=3]; output axes W Z X Y) -> [3, 2] 1 4 2 5 3 6
// DMADescriptorTranspose forces Transpose: the same 1 4 2 5 3 6; DMADescriptorReplicate forces Replicate:
// src [1, 3] 7 8 9 -> dst [3, 3] 7 8 9 7 8 9 7 8 9 (even with mode Copy set, which it ignores).
TEST(OpsUntestedDma, DescriptorBaseFollowsItsModeAndLeavesForceTheirs) {
  Harness h;
  auto a = h.b.sbuf("a", {2, 3}), cp = h.b.sbuf("cp", {2, 3}), tr = h.b.sbuf("tr", {3, 2}), tr2 = h.b.sbuf("tr2", {3, 2});
  auto q = h.b.sbuf("q", {2, 2}), rep = h.b.sbuf("rep", {4, 2});
  auto s = h.b.sbuf("s", {1, 3}), rep2 = h.b.sbuf("rep2", {3, 3});
  h.b.add(InstructionType::DMADescriptor, {P(a.all())}, {P(cp.all())});
  h.b.add(InstructionType::DMADescriptor, {P(q.all())}, {P(rep.all())}).copy_mode(isa::CopyMode::Replicate);
  h.b.add(InstructionType::DMADescriptor, {P(a.all())}, {P(tr.all())})
      .copy_mode(isa::CopyMode::Transpose).transpose_op(isa::TransposeOps::WZXY);
  h.b.add(InstructionType::DMADescriptorTranspose, {P(a.all())}, {P(tr2.all())}).transpose_op(isa::TransposeOps::WZXY);
  h.b.add(InstructionType::DMADescriptorReplicate, {P(s.all())}, {P(rep2.all())}).copy_mode(isa::CopyMode::Copy);
  h.place();
  h.set(a, {1, 2, 3, 4, 5, 6});
  h.set(q, {1, 2, 3, 4});
  h.set(s, {7, 8, 9});
  h.run();
  EXPECT_EQ(h.get(cp), (V{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(h.get(rep), (V{1, 2, 3, 4, 1, 2, 3, 4}));
  EXPECT_EQ(h.get(tr), (V{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(h.get(tr2), (V{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(h.get(rep2), (V{7, 8, 9, 7, 8, 9, 7, 8, 9}));
}

// DMADescriptorTranspose with transpose_op None is the identity copy (doDMATranspose); DMADescriptorReplicate
// refuses dst partitions that are not a multiple of the source's (3 vs 2), naming outs[0].
TEST(OpsUntestedDma, DescriptorTransposeNoneCopiesAndReplicateChecksPartitions) {
  Harness h;
  auto a = h.b.sbuf("a", {2, 3}), c = h.b.sbuf("c", {2, 3}), r = h.b.sbuf("r", {3, 3});
  h.b.add(InstructionType::DMADescriptorTranspose, {P(a.all())}, {P(c.all())});
  h.b.add(InstructionType::DMADescriptorReplicate, {P(a.all())}, {P(r.all())});
  h.place();
  h.set(a, {1, 2, 3, 4, 5, 6});
  h.exec(0);
  EXPECT_EQ(h.get(c), (V{1, 2, 3, 4, 5, 6}));
  try {
    h.exec(1);
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "outs[0]");
  }
}

// ------------------------------------------------------------------------------------------------ no-effect types
// Drain, Halt, BranchHint and TensorCompletion have empty birsim bodies (reference sim-control-sync-customop.md
// 3.4 and its function map: "body is `ret`"); LoadActFuncSet is a validity gate only (sim-activation-pwp.md 1).
// Given an input and an output access anyway, none of them writes: o keeps 9 9 9 9, i keeps 1 2 3 4, no register
// and no random state changes.
TEST(OpsUntestedNoEffect, SyncAndHintTypesTouchNoMemory) {
  for (auto type : {InstructionType::Drain, InstructionType::Halt, InstructionType::BranchHint,
                    InstructionType::TensorCompletion, InstructionType::LoadActFuncSet}) {
    Harness h;
    auto i = h.b.sbuf("i", {2, 2}), o = h.b.sbuf("o", {2, 2});
    h.b.add(type, {P(i.all())}, {P(o.all())});
    h.place();
    h.set(i, {1, 2, 3, 4});
    h.set(o, {9, 9, 9, 9});
    const auto rng1 = h.st.rng1, xorwow = h.st.xorwow;
    h.run();
    EXPECT_EQ(h.get(i), (V{1, 2, 3, 4})) << isa::inst_type_name(type);
    EXPECT_EQ(h.get(o), (V{9, 9, 9, 9})) << isa::inst_type_name(type);
    EXPECT_TRUE(h.st.regs.empty()) << isa::inst_type_name(type);
    EXPECT_EQ(h.st.rng1, rng1) << isa::inst_type_name(type);
    EXPECT_EQ(h.st.xorwow, xorwow) << isa::inst_type_name(type);
  }
}

// LoadActFuncSet: birsim asserts ActFuncSetId > -1 (reference sim-activation-pwp.md 1 QUIRK, visitInstLoadActFuncSet
// @0x1b2070). Set 0 and set 3 pass; -1 is refused naming act_func_set_id.
TEST(OpsUntestedNoEffect, LoadActFuncSetGatesItsSetId) {
  Harness h;
  h.b.add(InstructionType::LoadActFuncSet, {}, {}).act_func_set_id(0);
  h.b.add(InstructionType::LoadActFuncSet, {}, {}).act_func_set_id(3);
  h.b.add(InstructionType::LoadActFuncSet, {}, {}).act_func_set_id(-1);
  h.place();
  h.exec(0);
  h.exec(1);
  try {
    h.exec(2);
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "act_func_set_id");
    EXPECT_EQ(e.context().inst_index, 2);
  }
}
