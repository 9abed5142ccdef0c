// Registers and ranks: RegisterMove / RegisterAlu, TensorLoad / TensorSave, ReadVarAddr, the rank ids
// (engines/ops/registers.cpp). Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;

namespace {
using V = std::vector<float>;
} // namespace

// Registers: r0 = 7; r1 = r0 + 5 = 12; r1 saved to a tensor, loaded back into r2, r3 = r2 << 2 = 48, saved.
TEST(OpsRegisters, MoveAluLoadSaveAndRankIds) {
  Harness h;
  auto t = h.b.sbuf("t", {1, 1}, Dtype::int32), u = h.b.sbuf("u", {1, 1}, Dtype::int32);
  auto rk = h.b.sbuf("rk", {1, 2});
  h.b.add(InstructionType::RegisterMove, {I(7)}, {R("r0")});
  h.b.add(InstructionType::RegisterAlu, {R("r0"), I(5)}, {R("r1")}).op(AluOp::add);
  h.b.add(InstructionType::TensorSave, {R("r1")}, {P(t.all())});
  h.b.add(InstructionType::TensorLoad, {P(t.all())}, {R("r2")});
  h.b.add(InstructionType::RegisterAlu, {R("r2"), I(2)}, {R("r3")}).op(AluOp::logical_shift_left);
  h.b.add(InstructionType::TensorSave, {R("r3")}, {P(u.all())});
  h.b.add(InstructionType::GetGlobalRankId, {}, {P(rk.all())});
  h.place();
  h.set(rk, {5, 5});
  h.run();
  EXPECT_EQ(h.get(t), (V{12}));
  EXPECT_EQ(h.get(u), (V{48}));
  EXPECT_EQ(h.get(rk), (V{0, 0}));
}

TEST(OpsRegisters, UnsetRegisterIsSimulationError) {
  Harness h;
  h.b.add(InstructionType::RegisterMove, {R("nope")}, {R("r0")});
  h.place();
  EXPECT_THROW(h.run(), SimulationError);
}

// ReadVarAddr (registers.cpp): SBUF = placement address + in-partition byte offset; DRAM = byte offset in the tensor.
// Placement (engines/memory.cpp first fit, 64-byte SBUF alignment, tensor order): a [1, 4] fp32 = 16 bytes at 0,
// d [2, 10] fp32 overlaps a's partition 0, so it goes to the next 64-byte boundary after 16: 64.
//   d at element 5 (partition 0, column 5):              64 + 5 * 4 = 84
//   d at element 13 (partition 1, column 13 % 10 = 3):   64 + 3 * 4 = 76
//   DRAM x [4, 8] fp32 at element 11:                    11 * 4 = 44
//   DRAM y [2, 8] bf16 at element 3:                     3 * 2 = 6
TEST(OpsRegisters, ReadVarAddrByteAddresses) {
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
TEST(OpsRegisters, GetCurProcessingRankIdIsZero) {
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
