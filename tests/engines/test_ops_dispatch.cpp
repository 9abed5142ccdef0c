// The dispatch table (engines/ops/dispatch.cpp) against birsim's, the default engine of each type
// (engines/ops/engine_policy.cpp), and the refusal by name of a type without semantics.
#include <gtest/gtest.h>

#include <set>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;

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
  h.b.add(IT::InlineASMBytes, {P(x.all())}, {P(x.all())});
  h.place();
  try {
    h.run();
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_NE(std::string(e.what()).find("InlineASMBytes"), std::string::npos);
  }
}

// Issue 5's bar: every type birsim executes, plus Rng and NonzeroWithCount. Reference
// neuronx-cc/bir/sim-dispatch-state.md 1.4 (the 110-row dispatch table): 93 "mapped" rows, the 3 "noop" rows
// (NoOp, EventSemaphore, AllEngineBarrier) and the 3 "preCF" regions (Loop, DynamicForLoop, DoWhile) execute; the
// 11 "base" rows do not. Of those 11, neuronsim also runs DMADescriptor (its descriptor copy), Rng and
// NonzeroWithCount; the remaining 8 are abstract bases (Generic, MatmultBase, DMA, Collective, Terminator), a leaf
// lowered away (GenericRelu) and the two blobs birsim skips (NKIKLIRKernel, InlineASMBytes).
TEST(OpsDispatch, EveryTypeBirsimExecutesExecutesHere) {
  const std::set<InstructionType> not_run = {
      InstructionType::Generic,    InstructionType::GenericRelu, InstructionType::MatmultBase,
      InstructionType::DMA,        InstructionType::Collective,  InstructionType::Terminator,
      InstructionType::NKIKLIRKernel, InstructionType::InlineASMBytes};
  int running = 0;
  for (int i = 0; i < isa::kNumInstructionTypes; ++i) {
    const auto t = static_cast<InstructionType>(i);
    if (not_run.count(t)) {
      EXPECT_FALSE(engines::executes(t)) << isa::inst_type_name(t);
      EXPECT_STRNE(engines::not_executed_reason(t), "not implemented") << isa::inst_type_name(t);
    } else {
      EXPECT_TRUE(engines::executes(t)) << isa::inst_type_name(t);
      running += engines::executes(t) ? 1 : 0;
    }
  }
  EXPECT_EQ(running, 102);
  for (auto t : {InstructionType::Call, InstructionType::NKIKernel, InstructionType::DMATrigger,
                 InstructionType::DMABlock, InstructionType::SwitchQueueInstance,
                 InstructionType::ResetQueueInstance, InstructionType::GroupResetSemaphores,
                 InstructionType::Rng, InstructionType::NonzeroWithCount})
    EXPECT_TRUE(engines::executes(t)) << isa::inst_type_name(t);
}
