// TensorTensor (engines/ops/tensor_tensor.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;

namespace {
using V = std::vector<float>;
} // namespace

TEST(OpsTensorTensor, SubtractIsFirstMinusSecondAndBitvecInInt32) {
  Harness h;
  auto a = h.b.sbuf("a", {2, 2}), b = h.b.sbuf("b", {2, 2}), y = h.b.sbuf("y", {2, 2});
  auto ia = h.b.sbuf("ia", {1, 2}, Dtype::int32), ib = h.b.sbuf("ib", {1, 2}, Dtype::int32);
  auto iy = h.b.sbuf("iy", {1, 2}, Dtype::int32);
  h.b.add(InstructionType::TensorTensor, {P(a.all()), P(b.all())}, {P(y.all())}).op(AluOp::subtract);
  h.b.add(InstructionType::TensorTensor, {P(ia.all()), P(ib.all())}, {P(iy.all())}).op(AluOp::bitwise_xor);
  h.place();
  h.set(a, {10, 20, 30, 40});
  h.set(b, {1, 2, 3, 4});
  std::vector<int32_t> va{0x0F0F0F0F, 7}, vb{0x00FF00FF, 5};
  h.mem->write_i32(whole(ia), va.data());
  h.mem->write_i32(whole(ib), vb.data());
  h.run();
  EXPECT_EQ(h.get(y), (V{9, 18, 27, 36}));
  std::vector<int32_t> r(2);
  h.mem->read_i32(whole(iy), r.data());
  EXPECT_EQ(r[0], 0x0FF00FF0);
  EXPECT_EQ(r[1], 2);
}
