// engines/ops data movement and synthesis: Load/Save, TensorCopy cast, DMACopy modes, Memset, Iota,
// TensorScalarAffineSelect, dispatch and the default-engine table.
#include <gtest/gtest.h>

#include <cmath>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;

namespace {
isa::Arg A(const Ap &a) { return Builder::ap(a); }
using V = std::vector<float>;
} // namespace

TEST(OpsCopy, LoadComputeSaveRoundTripWithStridedLoad) {
  Harness h;
  auto in = h.b.input("in", {2, 4}), out = h.b.output("out", {2, 2});
  auto t = h.b.sbuf("t", {2, 2});
  h.b.add(InstructionType::Load, {A(in.at(1, {{4, 2}, {2, 2}}))}, {A(t.all())});  // columns 1 and 3
  h.b.add(InstructionType::Save, {A(t.all())}, {A(out.all())});
  h.place();
  h.set(in, {0, 1, 2, 3, 4, 5, 6, 7});
  h.run();
  EXPECT_EQ(h.get(out), (V{1, 3, 5, 7}));
}

TEST(OpsCopy, TensorCopyFp32ToBf16RoundsToNearestEven) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 4}), y = h.b.sbuf("y", {1, 4}, Dtype::bfloat16);
  h.b.add(InstructionType::TensorCopy, {A(x.all())}, {A(y.all())});
  h.place();
  const float ulp = std::ldexp(1.0f, -7);  // bf16 spacing at 1.0
  // tie -> even (1.0); above tie -> up; tie at odd mantissa -> up to even; plain value exact
  h.set(x, {1.0f + ulp / 2, 1.0f + ulp / 2 + ulp / 8, 1.0f + ulp + ulp / 2, -2.5f});
  h.run();
  std::vector<uint8_t> raw(8);
  h.mem->read_raw(whole(y), raw.data());
  auto u16 = [&](int i) { return int(raw[size_t(2 * i)] | raw[size_t(2 * i + 1)] << 8); };
  EXPECT_EQ(u16(0), 0x3F80);
  EXPECT_EQ(u16(1), 0x3F81);
  EXPECT_EQ(u16(2), 0x3F82);
  EXPECT_EQ(u16(3), 0xC020);
}

TEST(OpsDma, CopyTransposeAndReplicate) {
  Harness h;
  auto a = h.b.dram("a", {2, 3});
  auto tc = h.b.sbuf("tc", {2, 3}), tt = h.b.sbuf("tt", {3, 2}), tr = h.b.sbuf("tr", {4, 3});
  h.b.add(InstructionType::DMACopy, {A(a.all())}, {A(tc.all())}).copy_mode(isa::CopyMode::Copy);
  // [P=2, F=3] padded to [W=1, Z=1, Y=2, X=3]; WZXY swaps the last two axes.
  h.b.add(InstructionType::DMACopy, {A(a.all())}, {A(tt.all())})
      .copy_mode(isa::CopyMode::Transpose).transpose_op(isa::TransposeOps::WZXY);
  h.b.add(InstructionType::DMACopy, {A(tc.all())}, {A(tr.all())}).copy_mode(isa::CopyMode::Replicate);
  h.b.add(InstructionType::DMACopy, {A(a.all())}, {A(tc.all())}).copy_mode(isa::CopyMode::Dynamic);
  h.place();
  h.set(a, {1, 2, 3, 4, 5, 6});
  h.exec(0);
  h.exec(1);
  h.exec(2);
  EXPECT_EQ(h.get(tc), (V{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(h.get(tt), (V{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(h.get(tr), (V{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
  try {
    h.exec(3);
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "mode");
  }
}

TEST(OpsMemset, ConstantIntAndDeterministicRandom) {
  Harness h;
  auto f = h.b.sbuf("f", {2, 2}), i = h.b.sbuf("i", {1, 2}, Dtype::int32), r = h.b.sbuf("r", {1, 64});
  h.b.add(InstructionType::Memset, {}, {A(f.all())}).constant(1.5);
  h.b.add(InstructionType::Memset, {}, {A(i.all())}).constant(7.0);
  h.b.add(InstructionType::Memset, {}, {A(r.all())}).memset_mode(isa::MemsetMode::Random);
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
  h2.b.add(InstructionType::Memset, {}, {A(r2.all())}).memset_mode(isa::MemsetMode::Random);
  h2.place();
  h2.run();
  EXPECT_EQ(h2.get(r2), rv);
}

TEST(OpsIota, AffinePatternWithChannelMultiplier) {
  Harness h;
  auto y = h.b.sbuf("y", {2, 6}, Dtype::int32);
  // value = 10 + 100*p + 3*y + x over pattern [[3,2],[1,3]]
  h.b.add(InstructionType::Iota, {}, {A(y.all())})
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
  h.b.add(InstructionType::TensorScalarAffineSelect, {A(x.all())}, {A(y.all())})
      .pattern({{-1, 3}}).base(0).channel_multiplier(1).compare_op(isa::AluOp::is_ge).fill_value(-9999.0);
  h.place();
  h.set(x, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  h.run();
  EXPECT_EQ(h.get(y), (V{1, -9999, -9999, 4, 5, -9999, 7, 8, 9}));
}

TEST(OpsDispatch, ExecutesTableAndDefaultEngines) {
  using IT = InstructionType;
  using E = isa::Engine;
  for (IT t : {IT::Load, IT::Save, IT::DMACopy, IT::TensorCopy, IT::Memset, IT::Iota, IT::TensorTensor,
               IT::TensorScalar, IT::TensorScalarPtr, IT::TensorReduce, IT::Activation, IT::Select,
               IT::CopyPredicated, IT::TensorScalarAffineSelect, IT::Pool, IT::Matmult, IT::Reciprocal,
               IT::Exponential, IT::NoOp})
    EXPECT_TRUE(engines::executes(t)) << isa::inst_type_name(t);
  EXPECT_TRUE(engines::executes(IT::CompareAndBranch));   // the scheduler picks the successor; no memory effect
  EXPECT_TRUE(engines::executes(IT::DoWhile));           // a region: the scheduler walks its body
  EXPECT_FALSE(engines::executes(IT::InlineASMBytes));   // raw bytes birsim skips too
  EXPECT_EQ(engines::default_engine(IT::Matmult), E::PE);
  EXPECT_EQ(engines::default_engine(IT::Activation), E::Activation);
  EXPECT_EQ(engines::default_engine(IT::TensorTensor), E::DVE);
  EXPECT_EQ(engines::default_engine(IT::Iota), E::Pool);
  EXPECT_EQ(engines::default_engine(IT::Load), E::SP);
  EXPECT_EQ(engines::default_engine(IT::EventSemaphore), E::SP);
  Harness h;
  auto x = h.b.sbuf("x", {1, 1});
  h.b.add(IT::InlineASMBytes, {A(x.all())}, {A(x.all())});
  h.place();
  try {
    h.run();
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_NE(std::string(e.what()).find("InlineASMBytes"), std::string::npos);
  }
}
