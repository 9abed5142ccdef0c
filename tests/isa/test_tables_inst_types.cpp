// Pins spec 003 (master opcode reference) and reference bir/instruction-type.md as carried by
// include/neuronsim/isa/tables/instruction_types.def + isa/tables/instruction_wire.def. Expected values are
// literal, checkable against the spec text; they are never read back from the table under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "neuronsim/isa/tables.hpp"

using namespace neuronsim;
using namespace neuronsim::isa;
using IT = InstructionType;

namespace {
std::set<uint8_t> l2set(IT t, CoreGen g) {
  const auto &v = inst_type_info(t).l2_for(g);
  return {v.begin(), v.end()};
}
std::set<IT> set_of(const std::vector<IT> &v) { return {v.begin(), v.end()}; }
bool in(const std::vector<IT> &v, IT t) { return std::find(v.begin(), v.end(), t) != v.end(); }
constexpr CoreGen V2 = CoreGen::V2, V3 = CoreGen::V3, V4 = CoreGen::V4;
} // namespace

TEST(InstTypes, The110NamesInOrder) {
  // reference bir/instruction-type.md (InstructionType2string @0x2d5bf0), spec 003 section 1.
  const char *names[] = {
      "Generic", "GenericCopy", "GenericRelu", "AbstractCopy", "Activation", "ReadActivationAccumulator",
      "LoadActFuncSet", "MatmultBase", "Matmult", "MatmultSparse", "Memset", "GetGlobalRankId", "NoOp",
      "EventSemaphore", "GroupResetSemaphores", "AllEngineBarrier", "Drain", "Halt", "DMA", "Load", "Pool",
      "Reciprocal", "Save", "TensorCopy", "TensorCopyDynamicSrc", "TensorCopyDynamicDst", "IndirectCopy",
      "TensorReduce", "TensorScalar", "TensorScalarPtr", "TensorScalarCache", "TensorTensor", "DMACopy",
      "GPSIMDSB2SB", "BNStats", "BNStatsAggregate", "BNGradients", "BNBackprop", "BNBackprop2", "StreamShuffle",
      "StreamTranspose", "ReadVarAddr", "GenericIndirectLoad", "IndirectLoad", "GenericIndirectSave",
      "IndirectSave", "IndirectSaveAccumulate", "Collective", "CollectiveCompute", "CollectiveSend",
      "CollectiveRecv", "Select", "CopyPredicated", "CustomOp", "BIRKernel", "NKIKernel", "NKIKLIRKernel",
      "DevicePrint", "GetRandState", "SetRandState", "Rand", "Iota", "TensorScalarAffineSelect", "RangeSelect",
      "GetSequenceBounds", "Dropout", "GetCurProcessingRankID", "DMATrigger", "DMADescriptor", "DMADescriptorCopy",
      "DMADescriptorCCE", "DMADescriptorTranspose", "DMADescriptorReplicate", "RegisterAlu", "RegisterMove",
      "TensorLoad", "TensorSave", "Terminator", "CompareAndBranch", "UnconditionalBranch", "BranchHint", "Return",
      "Exit", "Break", "Call", "SwitchQueueInstance", "ResetQueueInstance", "CoreBarrier", "Max", "MaxIndex",
      "MatchReplace", "MaxIndexAndMatchReplace", "Gather", "InlineASMBytes", "TensorCompletion", "MatmultMx",
      "QuantizeMx", "Rand2", "RandSetState", "RandGetState", "Rng", "ActivationReadAccumulator",
      "DveReadAccumulator", "Exponential", "NonzeroWithCount", "Loop", "DynamicForLoop", "DMABlock", "DoWhile",
      "TongaReduceMacroSymbolic"};
  ASSERT_EQ(sizeof(names) / sizeof(names[0]), 110u);
  ASSERT_EQ(kNumInstructionTypes, 110);
  ASSERT_EQ(inst_type_infos().size(), 110u);
  for (int i = 0; i < 110; ++i) {
    auto t = static_cast<IT>(i);
    EXPECT_STREQ(inst_type_name(t), names[i]) << i;
    EXPECT_STREQ(inst_type_info(t).name, names[i]);
    EXPECT_EQ(inst_type_info(t).type, t);
    EXPECT_EQ(parse_inst_type(names[i]), t);
  }
  EXPECT_STREQ(inst_type_name(static_cast<IT>(110)), "?");
  EXPECT_STREQ(inst_type_family(IT::TensorTensor), "compute");
}

TEST(InstTypes, UnknownNameRaisesQuotingTheString) {
  try {
    parse_inst_type("TensorTensorOp");
    FAIL();
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("'TensorTensorOp'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(inst_type_from_name("activation"));  // names are case-sensitive
}

TEST(InstTypes, L3WordIsLengthByteThenL2) {
  // spec 003 INV-1: L3 = (0x10 << 8) | L2; QuantizeMx + SATURATE sets the high byte to 0x11.
  EXPECT_EQ(l3_word(0x21), 0x1021);
  EXPECT_EQ(l3_word(0xE3, true), 0x11E3);
  auto h = parse_l3_word(0x104D);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->l2, 0x4D);
  EXPECT_FALSE(h->saturate);
  h = parse_l3_word(0x11E3);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->l2, 0xE3);
  EXPECT_TRUE(h->saturate);
  EXPECT_FALSE(parse_l3_word(0x1121));  // only QuantizeMx may set the saturate bit
  EXPECT_FALSE(parse_l3_word(0x2021));  // the length byte is always 0x10 (64-byte bundles)
  for (const auto &it : inst_type_infos())
    for (CoreGen g : kCoreGens) {
      const auto &b = it.l2_for(g);
      auto w = it.l3_for(g);
      ASSERT_EQ(w.size(), b.size());
      for (size_t i = 0; i < b.size(); ++i) EXPECT_EQ(w[i], 0x1000 | b[i]) << it.name;
    }
  EXPECT_EQ(inst_type_info(IT::QuantizeMx).l3_for(V4), std::vector<uint16_t>{0x10E3});
}

TEST(InstTypes, L1NeverEqualsL2) {
  // spec 003 INV-3: the IT ordinal and the opcode are different enums, equal for no op.
  for (const auto &it : inst_type_infos())
    for (CoreGen g : kCoreGens)
      for (uint8_t b : it.l2_for(g)) EXPECT_NE(int(b), int(it.type)) << it.name << " " << core_gen_name(g);
}

TEST(InstTypes, ActivationIsTheOnlyRenumber) {
  // spec 003 section 6: Activation 0x21 -> 0x25 at V4 is the only byte renumber of an existing op.
  EXPECT_EQ(l2set(IT::Activation, V2), std::set<uint8_t>{0x21});
  EXPECT_EQ(l2set(IT::Activation, V3), std::set<uint8_t>{0x21});
  EXPECT_EQ(l2set(IT::Activation, V4), std::set<uint8_t>{0x25});
  EXPECT_EQ(inst_type_info(IT::Activation).l3_for(V4), std::vector<uint16_t>{0x1025});
  for (const auto &it : inst_type_infos()) {
    if (it.type == IT::Activation) continue;
    for (auto [a, b] : {std::pair{V2, V3}, std::pair{V3, V4}}) {
      if (!it.encoded_on(a) || !it.encoded_on(b)) continue;
      auto old = l2set(it.type, a), now = l2set(it.type, b);
      // A later generation may add a byte (SetRandState's V3 Pool arm) but never drops or renumbers one.
      EXPECT_TRUE(std::includes(now.begin(), now.end(), old.begin(), old.end())) << it.name;
    }
  }
}

TEST(InstTypes, GenerationIntroducedOps) {
  // spec 003 section 6 / reference opcode-master.md 4(b): GEN3-NEW and GEN4-NEW rosters.
  std::set<IT> new_v3, new_v4;
  for (const auto &it : inst_type_infos()) {
    if (!it.encoded_on(V2) && it.encoded_on(V3)) new_v3.insert(it.type);
    if (!it.encoded_on(V3) && it.encoded_on(V4)) new_v4.insert(it.type);
  }
  EXPECT_EQ(new_v3, (std::set<IT>{IT::MatmultSparse, IT::GPSIMDSB2SB, IT::RangeSelect, IT::GetSequenceBounds,
                                  IT::CoreBarrier, IT::MaxIndexAndMatchReplace, IT::RandSetState,
                                  IT::RandGetState, IT::NonzeroWithCount}));
  EXPECT_EQ(new_v4, (std::set<IT>{IT::MatmultMx, IT::QuantizeMx, IT::Rand2, IT::Exponential}));
  // RangeSelect 0xBC and NonzeroWithCount 0xF2, both CONFIRMED gen3-new (spec 003 section 4).
  EXPECT_EQ(l2set(IT::RangeSelect, V3), std::set<uint8_t>{0xBC});
  EXPECT_EQ(l2set(IT::NonzeroWithCount, V3), std::set<uint8_t>{0xF2});
  EXPECT_EQ(inst_type_info(IT::RangeSelect).l3_for(V3), std::vector<uint16_t>{0x10BC});
  EXPECT_EQ(l2set(IT::MatmultMx, V4), (std::set<uint8_t>{0x09, 0x0A}));
  EXPECT_EQ(l2set(IT::QuantizeMx, V4), std::set<uint8_t>{0xE3});
  EXPECT_EQ(l2set(IT::Rand2, V4), std::set<uint8_t>{0xE2});
  EXPECT_EQ(l2set(IT::Exponential, V4), std::set<uint8_t>{0x30});
  // Lowered to a plain copy on V4 (the "(copy)" cells).
  EXPECT_FALSE(inst_type_info(IT::Gather).encoded_on(V4));
  EXPECT_FALSE(inst_type_info(IT::IndirectCopy).encoded_on(V4));
  EXPECT_EQ(l2set(IT::IndirectCopy, V2), std::set<uint8_t>{0xE7});
}

TEST(InstTypes, Corrections) {
  // OPC-1: IndirectLoad/IndirectSave carry 0xC4 and 0xD6 (direction bool), not a [col] collision.
  for (IT t : {IT::IndirectLoad, IT::IndirectSave}) {
    EXPECT_EQ(l2set(t, V2), (std::set<uint8_t>{0xC4, 0xD6}));
    EXPECT_TRUE(inst_type_info(t).col.empty());
  }
  EXPECT_EQ(set_of(inst_types_for_l2(0xC4, V3)), (std::set<IT>{IT::IndirectLoad, IT::IndirectSave}));
  // OPC-3: NonzeroWithCount is IT 104; 231 = 0xE7 is IndirectCopy's L2.
  EXPECT_EQ(static_cast<int>(IT::NonzeroWithCount), 104);
  EXPECT_EQ(inst_types_for_l2(231, V2), std::vector<IT>{IT::IndirectCopy});
  // OPC-4: MatmultSparse is 0x06 + 0x07, not 0x50.
  auto ms = l2set(IT::MatmultSparse, V3);
  EXPECT_TRUE(ms.count(0x06) && ms.count(0x07));
  EXPECT_FALSE(ms.count(0x50));
  EXPECT_TRUE(inst_types_for_l2(0x50, V3).empty());
  // OPC-2: RangeSelect carries 0xBC only; 0x9B decodes to DveReadAccumulator.
  EXPECT_EQ(inst_types_for_l2(0x9B, V3), std::vector<IT>{IT::DveReadAccumulator});
}

TEST(InstTypes, RngAndMemsetRandomShare0x4D) {
  // spec 003 QUIRK: two IR ops, one micro-op.
  for (CoreGen g : kCoreGens) EXPECT_EQ(inst_types_for_l2(0x4D, g), (std::vector<IT>{IT::Memset, IT::Rng}));
  EXPECT_EQ(l2set(IT::Memset, V2), (std::set<uint8_t>{0x49, 0x4D}));
  EXPECT_TRUE(in(inst_type_info(IT::Rng).col, IT::Memset));
}

TEST(InstTypes, TheEightCollisionGroups) {
  // spec 003 section 2: eight wire opcodes emitted by more than one IT.
  std::set<std::set<IT>> groups;
  for (const auto &it : inst_type_infos()) {
    if (it.col.empty()) continue;
    std::set<IT> g = set_of(it.col);
    g.insert(it.type);
    groups.insert(g);
  }
  std::set<std::set<IT>> want = {{IT::Rng, IT::Memset},
                                 {IT::CollectiveSend, IT::CollectiveRecv},
                                 {IT::CompareAndBranch, IT::UnconditionalBranch},
                                 {IT::Load, IT::Save, IT::DMACopy},
                                 {IT::ReadActivationAccumulator, IT::ActivationReadAccumulator},
                                 {IT::GetRandState, IT::RandGetState},
                                 {IT::StreamShuffle, IT::StreamTranspose},
                                 {IT::MaxIndex, IT::MaxIndexAndMatchReplace}};
  EXPECT_EQ(groups, want);
  EXPECT_EQ(set_of(inst_types_for_l2(0xD4, V2)), (std::set<IT>{IT::Load, IT::Save, IT::DMACopy}));
  EXPECT_EQ(set_of(inst_types_for_l2(0xCB, V4)), (std::set<IT>{IT::CollectiveSend, IT::CollectiveRecv}));
  EXPECT_EQ(set_of(inst_types_for_l2(0xA9, V3)), (std::set<IT>{IT::CompareAndBranch, IT::UnconditionalBranch}));
  EXPECT_EQ(set_of(inst_types_for_l2(0x69, V2)), (std::set<IT>{IT::StreamShuffle, IT::StreamTranspose}));
  // RandGetState is gen3-new, so 0x77 is unambiguous on V2 only.
  EXPECT_EQ(inst_types_for_l2(0x77, V2), std::vector<IT>{IT::GetRandState});
  EXPECT_EQ(set_of(inst_types_for_l2(0x77, V3)), (std::set<IT>{IT::GetRandState, IT::RandGetState}));
}

TEST(InstTypes, NoSharedL2ByteUnlessMarked) {
  // Spike's check-opcode-overlap analogue: two ITs may share an L2 byte on a generation only if the table names
  // them as [col] or shared partners; both relations are symmetric.
  for (const auto &it : inst_type_infos()) {
    for (IT p : it.col) EXPECT_TRUE(in(inst_type_info(p).col, it.type)) << it.name << " col " << inst_type_name(p);
    for (IT p : it.shared)
      EXPECT_TRUE(in(inst_type_info(p).shared, it.type)) << it.name << " shared " << inst_type_name(p);
  }
  for (CoreGen g : kCoreGens)
    for (int b = 0; b < 256; ++b) {
      auto users = inst_types_for_l2(static_cast<uint8_t>(b), g);
      for (IT x : users)
        for (IT y : users) {
          if (x == y) continue;
          const auto &ix = inst_type_info(x);
          EXPECT_TRUE(in(ix.col, y) || in(ix.shared, y))
              << core_gen_name(g) << " byte " << b << ": " << ix.name << " / " << inst_type_name(y);
        }
    }
}

TEST(InstTypes, KindsPerSpec003Section6) {
  std::set<IT> bases, carriers, lowered;
  for (const auto &it : inst_type_infos()) {
    if (it.kind == InstKind::Base) bases.insert(it.type);
    if (it.kind == InstKind::Carrier) carriers.insert(it.type);
    if (it.kind == InstKind::Lowered) lowered.insert(it.type);
    // Only a concrete IT reaches setupHeader; every concrete one has a fixed opcode on some generation except
    // InlineASMBytes, whose opcode is the user's first byte.
    bool any = it.encoded_on(V2) || it.encoded_on(V3) || it.encoded_on(V4);
    if (it.kind != InstKind::Concrete) {
      EXPECT_FALSE(any) << it.name;
      EXPECT_EQ(it.max_bundles, 0) << it.name;
    } else if (it.type != IT::InlineASMBytes) {
      EXPECT_TRUE(any) << it.name;
      EXPECT_GE(it.min_bundles, 1) << it.name;
    }
  }
  EXPECT_EQ(bases, (std::set<IT>{IT::MatmultBase, IT::DMA, IT::Collective, IT::Terminator, IT::DMADescriptor}));
  EXPECT_EQ(carriers, (std::set<IT>{IT::BIRKernel, IT::NKIKernel, IT::NKIKLIRKernel, IT::DevicePrint, IT::Break}));
  for (IT t : {IT::Generic, IT::GenericRelu, IT::AbstractCopy, IT::GenericCopy, IT::TensorCopyDynamicSrc,
               IT::TensorCopyDynamicDst, IT::GenericIndirectLoad, IT::GenericIndirectSave, IT::Select, IT::Loop,
               IT::DynamicForLoop, IT::DoWhile, IT::DMABlock, IT::TongaReduceMacroSymbolic, IT::Rand})
    EXPECT_TRUE(lowered.count(t)) << inst_type_name(t);
  EXPECT_EQ(inst_type_info(IT::InlineASMBytes).kind, InstKind::Concrete);
  EXPECT_STREQ(inst_kind_name(InstKind::Base), "abstract_base");
}

TEST(InstTypes, SplitOpcodes) {
  // spec 003 section 3 [split] list.
  EXPECT_EQ(l2set(IT::TensorReduce, V2), (std::set<uint8_t>{0x7C, 0x7D, 0x42, 0x52, 0x83, 0x84}));
  EXPECT_EQ(l2set(IT::TensorScalarPtr, V2), (std::set<uint8_t>{0x43, 0x93, 0x53, 0x9A, 0x9C, 0x9E, 0xE5, 0x74}));
  EXPECT_EQ(l2set(IT::TensorScalarCache, V2), (std::set<uint8_t>{0x9A, 0xE6}));
  EXPECT_EQ(l2set(IT::TensorTensor, V3), (std::set<uint8_t>{0x41, 0x51}));
  EXPECT_EQ(l2set(IT::BNStats, V2), (std::set<uint8_t>{0x61, 0x82}));
  EXPECT_EQ(l2set(IT::BNGradients, V2), (std::set<uint8_t>{0x63, 0x94}));
  EXPECT_EQ(l2set(IT::CollectiveCompute, V2), (std::set<uint8_t>{0xD9, 0xDA}));
  EXPECT_EQ(l2set(IT::TensorLoad, V2), (std::set<uint8_t>{0xCE, 0xAA}));
  EXPECT_EQ(l2set(IT::TensorSave, V2), (std::set<uint8_t>{0xAB, 0xCD}));
  EXPECT_EQ(l2set(IT::SetRandState, V2), std::set<uint8_t>{0xD0});
  EXPECT_EQ(l2set(IT::SetRandState, V3), (std::set<uint8_t>{0x78, 0xD0}));
  EXPECT_EQ(l2set(IT::TensorCopy, V2), (std::set<uint8_t>{0x46, 0x47}));
  // V3/V4 widen fields only for TensorScalar(Ptr)/Cache/TensorTensor: same opcodes on every generation.
  for (IT t : {IT::TensorScalar, IT::TensorScalarPtr, IT::TensorScalarCache, IT::TensorTensor})
    EXPECT_TRUE(l2set(t, V2) == l2set(t, V3) && l2set(t, V3) == l2set(t, V4)) << inst_type_name(t);
  for (IT t : {IT::TensorReduce, IT::TensorScalarCache, IT::TensorTensor, IT::BNStats, IT::Memset,
               IT::CollectiveCompute, IT::TensorLoad, IT::TensorSave, IT::SetRandState, IT::TensorCopy})
    EXPECT_STRNE(inst_type_info(t).split, "") << inst_type_name(t);
}

TEST(InstTypes, MultiBundleOps) {
  // spec 003 section 3 multi-bundle table; max -1 = per active engine / per argument.
  auto b = [](IT t) { return std::pair{inst_type_info(t).min_bundles, inst_type_info(t).max_bundles}; };
  EXPECT_EQ(b(IT::Matmult), (std::pair{1, 4}));
  EXPECT_EQ(b(IT::MatmultSparse), (std::pair{2, 5}));
  EXPECT_EQ(b(IT::MatmultMx), (std::pair{2, 2}));
  EXPECT_EQ(b(IT::MaxIndex), (std::pair{2, 2}));
  EXPECT_EQ(b(IT::MaxIndexAndMatchReplace), (std::pair{2, 2}));
  EXPECT_EQ(b(IT::StreamShuffle), (std::pair{2, 2}));
  EXPECT_EQ(b(IT::StreamTranspose), (std::pair{2, 2}));
  EXPECT_EQ(b(IT::Gather), (std::pair{2, 2}));
  EXPECT_EQ(b(IT::CustomOp), (std::pair{2, -1}));
  EXPECT_EQ(b(IT::BNBackprop), (std::pair{1, 2}));
  EXPECT_EQ(b(IT::BNBackprop2), (std::pair{1, 2}));
  EXPECT_EQ(b(IT::Return), (std::pair{1, -1}));
  EXPECT_EQ(b(IT::Call), (std::pair{1, -1}));
  EXPECT_EQ(l2set(IT::Matmult, V2), (std::set<uint8_t>{0x01, 0x02}));
  EXPECT_EQ(l2set(IT::CustomOp, V2), (std::set<uint8_t>{0x85, 0x86}));
  EXPECT_EQ(l2set(IT::MaxIndex, V2), (std::set<uint8_t>{0x6D, 0x6E}));
}

TEST(InstTypes, SingleOpcodeRows) {
  // Spot checks of spec 003 section 1 (the byte-verified ones of section 4 / opcode-master.md section 5 first).
  std::map<IT, uint8_t> one = {
      {IT::Pool, 0x45},          {IT::Rng, 0x4D},           {IT::CollectiveSend, 0xCB},
      {IT::LoadActFuncSet, 0x23}, {IT::ReadActivationAccumulator, 0x24}, {IT::GetGlobalRankId, 0xDC},
      {IT::NoOp, 0xA4},          {IT::EventSemaphore, 0xA0}, {IT::GroupResetSemaphores, 0xB0},
      {IT::AllEngineBarrier, 0xD5}, {IT::Drain, 0xA2},      {IT::Halt, 0xA1},
      {IT::Reciprocal, 0x48},    {IT::BNStatsAggregate, 0x62}, {IT::ReadVarAddr, 0xB2},
      {IT::IndirectSaveAccumulate, 0xCA}, {IT::CopyPredicated, 0xEA}, {IT::Iota, 0x7E},
      {IT::TensorScalarAffineSelect, 0x92}, {IT::Dropout, 0x7F}, {IT::GetCurProcessingRankID, 0xDB},
      {IT::DMATrigger, 0xC1},    {IT::RegisterAlu, 0xA8},   {IT::RegisterMove, 0xA7},
      {IT::BranchHint, 0xDD},    {IT::Return, 0xD2},        {IT::Exit, 0xDF},
      {IT::Call, 0xD3},          {IT::SwitchQueueInstance, 0xCF}, {IT::ResetQueueInstance, 0xC2},
      {IT::Max, 0x6C},           {IT::MatchReplace, 0x6F},  {IT::TensorCompletion, 0xDE},
      {IT::DveReadAccumulator, 0x9B}};
  for (auto [t, byte] : one) {
    EXPECT_EQ(l2set(t, V2), std::set<uint8_t>{byte}) << inst_type_name(t);
    EXPECT_EQ(l2set(t, V4), std::set<uint8_t>{byte}) << inst_type_name(t);
  }
  EXPECT_EQ(l2set(IT::CoreBarrier, V3), std::set<uint8_t>{0xD8});
  EXPECT_EQ(l2set(IT::GPSIMDSB2SB, V3), std::set<uint8_t>{0xBF});
  EXPECT_EQ(l2set(IT::GetSequenceBounds, V3), std::set<uint8_t>{0xBE});
}

TEST(InstTypes, Engines) {
  auto eng = [](IT t) { return inst_type_info(t).engines; };
  EXPECT_EQ(eng(IT::Activation), std::vector<Engine>{Engine::Activation});
  EXPECT_EQ(eng(IT::Matmult), std::vector<Engine>{Engine::PE});
  EXPECT_EQ(eng(IT::Pool), std::vector<Engine>{Engine::Pool});
  EXPECT_EQ(eng(IT::TensorTensor), std::vector<Engine>{Engine::DVE});
  EXPECT_EQ(eng(IT::EventSemaphore), std::vector<Engine>{Engine::SP});
  EXPECT_EQ(eng(IT::Load), std::vector<Engine>{Engine::DMA});
  EXPECT_EQ(eng(IT::TensorReduce), (std::vector<Engine>{Engine::Pool, Engine::DVE}));
  // structural-enums: GPSIMD is the external name of Pool(1).
  EXPECT_EQ(eng(IT::GPSIMDSB2SB), std::vector<Engine>{Engine::Pool});
  EXPECT_STREQ(inst_type_info(IT::GPSIMDSB2SB).engine_text, "GPSIMD");
  for (const auto &it : inst_type_infos())
    for (Engine e : it.engines) EXPECT_NE(e, Engine::Unassigned) << it.name;
}
