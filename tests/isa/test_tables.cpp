// Pins every fact of spec 000 (AluOpType + mode enums) and spec 003 (master opcode reference) that the ISA tables
// carry. Expected values are written out literally so a reader can check each against the spec text; they are
// not read back from the tables under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "neuronsim/isa/tables.hpp"

using namespace neuronsim;
using namespace neuronsim::isa;


// ============================================================================================ spec 000: AluOpType
TEST(AluOps, ThirtyThreeOrdinalsAndExactSpellings) {
  // spec 000 contract item 1: the 33 ordinals and spellings (6 is `mult`, 25 is the distinct `elemwise_mul`).
  const char *expected[] = {"bypass",      "bitwise_not", "arith_shift_left",   "arith_shift_right",
                            "add",         "subtract",    "mult",               "divide",
                            "max",         "min",         "bitwise_and",        "bitwise_or",
                            "bitwise_xor", "logical_and", "logical_or",         "logical_xor",
                            "logical_shift_left",         "logical_shift_right", "is_equal",
                            "not_equal",   "is_gt",       "is_ge",              "is_lt",
                            "is_le",       "average",     "elemwise_mul",       "pow",
                            "mod",         "rsqrt",       "abs",                "abs_max",
                            "abs_min",     "mod_int"};
  ASSERT_EQ(kNumAluOps, 33);
  ASSERT_EQ(alu_ops().size(), 33u);
  for (int i = 0; i < 33; ++i) {
    EXPECT_EQ(static_cast<int>(alu_ops()[i].op), i);
    EXPECT_STREQ(alu_name(static_cast<AluOp>(i)), expected[i]) << "ordinal " << i;
    EXPECT_EQ(parse_alu(expected[i]), static_cast<AluOp>(i));
  }
  EXPECT_EQ(static_cast<int>(AluOp::mult), 6);
  EXPECT_EQ(static_cast<int>(AluOp::elemwise_mul), 25);
  EXPECT_EQ(static_cast<int>(AluOp::mod_int), 32);
  EXPECT_FALSE(alu_from_name("multiply"));  // spec 000: "NOT multiply"
}

TEST(AluOps, UnknownNameRaisesQuotingTheString) {
  try {
    parse_alu("multiply");
    FAIL() << "no throw";
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("'multiply'"), std::string::npos) << e.what();
  }
}

TEST(AluOps, CoreV4WireMapWithComparisonReorder) {
  // spec 000 sub_142E030: identity for 0..18, then the anti-symmetric comparison reorder.
  for (int i = 0; i <= 18; ++i) EXPECT_EQ(alu_to_wire(static_cast<AluOp>(i), CoreGen::V4), uint32_t(i)) << i;
  EXPECT_EQ(alu_to_wire(AluOp::not_equal, CoreGen::V4), 0x18u);
  EXPECT_EQ(alu_to_wire(AluOp::is_gt, CoreGen::V4), 0x13u);
  EXPECT_EQ(alu_to_wire(AluOp::is_ge, CoreGen::V4), 0x14u);
  EXPECT_EQ(alu_to_wire(AluOp::is_lt, CoreGen::V4), 0x16u);
  EXPECT_EQ(alu_to_wire(AluOp::is_le, CoreGen::V4), 0x15u);
  EXPECT_EQ(alu_to_wire(AluOp::pow, CoreGen::V4), 0x1Au);
  EXPECT_EQ(alu_to_wire(AluOp::mod, CoreGen::V4), 0x1Bu);
  EXPECT_EQ(alu_to_wire(AluOp::rsqrt, CoreGen::V4), 0x1Du);
  EXPECT_EQ(alu_to_wire(AluOp::abs, CoreGen::V4), 0x19u);
  EXPECT_EQ(alu_to_wire(AluOp::abs_max, CoreGen::V4), 0x20u);
  EXPECT_EQ(alu_to_wire(AluOp::abs_min, CoreGen::V4), 0x21u);
  // mod_int escapes to the int32 extended band: the full 32-bit value, low byte 0xC8.
  EXPECT_EQ(alu_to_wire(AluOp::mod_int, CoreGen::V4), 0xFFFFFFC8u);
  EXPECT_EQ(alu_to_wire(AluOp::mod_int, CoreGen::V4) & 0xFF, 0xC8u);
  // The reorder means wire != ordinal for exactly these (a reimplementer assuming identity is wrong here).
  // is_lt is reordered within the band but lands on its own number: 22 -> 0x16 = 22.
  std::set<std::string> differs;
  for (const auto &op : alu_ops())
    if (op.wire[2] && *op.wire[2] != uint32_t(op.op)) differs.insert(op.name);
  EXPECT_EQ(differs, (std::set<std::string>{"not_equal", "is_gt", "is_ge", "is_le", "rsqrt", "abs",
                                            "abs_max", "abs_min", "mod_int"}));
}

TEST(AluOps, CoreV2V3SameBandWithoutTheLastThree) {
  // spec 000 NOTE (sub_12039C0, 30 cases 0..29) and reference isa-enum-ordinals.md GOTCHA: same bytes as V4 for
  // 0..29; abs_max/abs_min/mod_int are CoreV4-only.
  for (CoreGen g : {CoreGen::V2, CoreGen::V3}) {
    for (int i = 0; i < 30; ++i) {
      auto op = static_cast<AluOp>(i);
      if (op == AluOp::average || op == AluOp::elemwise_mul) continue;
      EXPECT_EQ(alu_to_wire(op, g), alu_to_wire(op, CoreGen::V4)) << alu_name(op);
    }
    for (AluOp op : {AluOp::abs_max, AluOp::abs_min, AluOp::mod_int}) {
      EXPECT_FALSE(alu_wire(op, g)) << alu_name(op);
      EXPECT_THROW(alu_to_wire(op, g), SemanticError);
    }
  }
  EXPECT_EQ(alu_to_wire(AluOp::is_gt, CoreGen::V2), 0x13u);
  EXPECT_EQ(alu_to_wire(AluOp::not_equal, CoreGen::V3), 0x18u);
}

TEST(AluOps, AverageAndElemwiseMulRaiseInvalidEnumVariant) {
  // spec 000 GOTCHA: 24 and 25 fall to the converter's default arm on every generation.
  for (CoreGen g : kCoreGens)
    for (AluOp op : {AluOp::average, AluOp::elemwise_mul}) {
      EXPECT_FALSE(alu_wire(op, g));
      try {
        alu_to_wire(op, g);
        FAIL() << alu_name(op);
      } catch (const SemanticError &e) {
        EXPECT_NE(std::string(e.what()).find("Invalid enum variant for enum AluOpType"), std::string::npos);
      }
    }
}

TEST(AluOps, WireDecode) {
  EXPECT_EQ(alu_from_wire(0x13, CoreGen::V4), AluOp::is_gt);
  EXPECT_EQ(alu_from_wire(0x15, CoreGen::V2), AluOp::is_le);
  EXPECT_EQ(alu_from_wire(0x18, CoreGen::V3), AluOp::not_equal);
  EXPECT_EQ(alu_from_wire(0xC8, CoreGen::V4), AluOp::mod_int);        // the 1-byte ALU field
  EXPECT_EQ(alu_from_wire(0xFFFFFFC8u, CoreGen::V4), AluOp::mod_int);  // the converter's return value
  EXPECT_FALSE(alu_from_wire(0xC8, CoreGen::V2));
  EXPECT_FALSE(alu_from_wire(0x20, CoreGen::V3));  // abs_max is V4-only
  EXPECT_FALSE(alu_from_wire(0x17, CoreGen::V4));  // unused slot in the band
  EXPECT_FALSE(alu_from_wire(0x1C, CoreGen::V4));
}

TEST(AluOps, NoTwoOpsShareAWireValueWithinAGeneration) {
  for (CoreGen g : kCoreGens) {
    std::map<uint32_t, std::string> seen;
    for (const auto &op : alu_ops()) {
      auto w = alu_wire(op.op, g);
      if (!w) continue;
      auto [it, fresh] = seen.emplace(*w, op.name);
      EXPECT_TRUE(fresh) << core_gen_name(g) << ": " << op.name << " and " << it->second << " share " << *w;
    }
  }
}

TEST(AluOps, Commutativity) {
  // spec 000 "Commutativity" (birsim functor bodies, acc op x).
  std::set<int> commutative = {4, 6, 8, 9, 18, 19, 10, 11, 12, 13, 14, 15, 30, 31, 24, 25};
  std::set<int> order_sensitive = {5, 7, 2, 3, 16, 17, 26, 27, 32, 20, 21, 22, 23};
  std::set<int> unary = {0, 1, 28, 29};
  ASSERT_EQ(commutative.size() + order_sensitive.size() + unary.size(), 33u);
  for (const auto &op : alu_ops()) {
    int i = static_cast<int>(op.op);
    OperandOrder want = commutative.count(i)       ? OperandOrder::Commutative
                        : order_sensitive.count(i) ? OperandOrder::OrderSensitive
                                                   : OperandOrder::Unary;
    EXPECT_EQ(op.order, want) << op.name;
  }
  EXPECT_STREQ(operand_order_name(OperandOrder::OrderSensitive), "order_sensitive");
}

TEST(AluOps, BitVectorOpsAreTheBitwiseAndShiftOps) {
  // INFERRED (alu_ops.def): the int32-only ops absent from birsim's fp32 ts_ops map, minus mod/mod_int.
  std::set<std::string> bitvec;
  for (const auto &op : alu_ops())
    if (op.bitvec) bitvec.insert(op.name);
  EXPECT_EQ(bitvec, (std::set<std::string>{"bitwise_not", "arith_shift_left", "arith_shift_right", "bitwise_and",
                                           "bitwise_or", "bitwise_xor", "logical_shift_left",
                                           "logical_shift_right"}));
}

// ============================================================================================ spec 000: mode enums
TEST(ModeEnums, ValueSets) {
  // spec 000: TSCMode 0 Reduce, 1 Cumulative, 2 TensorScan.
  EXPECT_EQ(static_cast<int>(TSCMode::Reduce), 0);
  EXPECT_EQ(static_cast<int>(TSCMode::Cumulative), 1);
  EXPECT_EQ(static_cast<int>(TSCMode::TensorScan), 2);
  // spec 000: CopyMode 0 Copy, 1 Transpose, 2 CCE, 3 Replicate (Dynamic 4 from bir-json.md 2.4).
  EXPECT_EQ(parse_enum<CopyMode>("Copy"), CopyMode::Copy);
  EXPECT_EQ(static_cast<int>(parse_enum<CopyMode>("Transpose")), 1);
  EXPECT_EQ(static_cast<int>(parse_enum<CopyMode>("CCE")), 2);
  EXPECT_EQ(static_cast<int>(parse_enum<CopyMode>("Replicate")), 3);
  // spec 000: MemsetMode 0 "Const" (built inline as 'Cons'+'t'), 1 Random.
  EXPECT_STREQ(enum_name(MemsetMode::Const), "Const");
  EXPECT_EQ(static_cast<int>(MemsetMode::Random), 1);
  EXPECT_EQ(EnumTraits<MemsetMode>::count, 2);
  // spec 000: ReduceCmdType Idle 0, Reset 1, Reduce 2, ResetReduce 3.
  EXPECT_EQ(EnumTraits<ReduceCmdType>::count, 4);
  EXPECT_EQ(static_cast<int>(parse_enum<ReduceCmdType>("Idle")), 0);
  EXPECT_EQ(static_cast<int>(parse_enum<ReduceCmdType>("Reset")), 1);
  EXPECT_EQ(static_cast<int>(parse_enum<ReduceCmdType>("Reduce")), 2);
  EXPECT_EQ(static_cast<int>(parse_enum<ReduceCmdType>("ResetReduce")), 3);
  // spec 000: EngineAccumulationType {Idle, Zero, Accumulate, ZeroAccumulate, AddAccumulate, LoadAccumulate}.
  const char *acc[] = {"Idle", "Zero", "Accumulate", "ZeroAccumulate", "AddAccumulate", "LoadAccumulate"};
  ASSERT_EQ(EnumTraits<EngineAccumulationType>::count, 6);
  for (int i = 0; i < 6; ++i)
    EXPECT_STREQ(enum_name(static_cast<EngineAccumulationType>(i)), acc[i]);
  EXPECT_EQ(static_cast<int>(EngineAccumulationType::LoadAccumulate), 5);
}

TEST(ModeEnums, JsonKeysAndOffsets) {
  // spec 000: mode -> TSCMode @+0x150, CopyMode @+0x128, MemsetMode @+0xF0; reduce_cmd -> EngineAccumulationType.
  EXPECT_NE(std::string(EnumTraits<TSCMode>::json_key).find("+0x150"), std::string::npos);
  EXPECT_NE(std::string(EnumTraits<CopyMode>::json_key).find("+0x128"), std::string::npos);
  EXPECT_NE(std::string(EnumTraits<MemsetMode>::json_key).find("+0xF0"), std::string::npos);
  EXPECT_NE(std::string(EnumTraits<EngineAccumulationType>::json_key).find("reduce_cmd"), std::string::npos);
  EXPECT_NE(std::string(EnumTraits<ReduceCmdType>::json_key).find("dormant"), std::string::npos);
}

// spec 000 GOTCHA / CORRECTION D-D02-C1: ReduceCmdType is consumed by no instruction; the reduce_cmd key is an
// EngineAccumulationType. Checked against the instruction-field table the BIR JSON reader uses.
namespace {
struct FieldRow {
  const char *member, *key, *ctype;
};
#define NS_FIELD(member, key, kind, ctype, def, only, ...) FieldRow{#member, key, #ctype},
const FieldRow kFields[] = {
#include "neuronsim/isa/tables/inst_fields.def"
};
#undef NS_FIELD
} // namespace

TEST(ModeEnums, ReduceCmdTypeIsDormant) {
  bool saw_reduce_cmd = false;
  for (const auto &f : kFields) {
    EXPECT_STRNE(f.ctype, "ReduceCmdType") << f.member;
    if (std::string(f.key) == "reduce_cmd") {
      saw_reduce_cmd = true;
      EXPECT_STREQ(f.ctype, "EngineAccumulationType");
    }
  }
  EXPECT_TRUE(saw_reduce_cmd);
}

// Every enum in enums.def: name -> enum -> name, ordinal -> enum, no duplicate names or ordinals, unknown throws.
namespace {
template <typename E> void round_trip() {
  using T = EnumTraits<E>;
  std::set<int> ords;
  std::set<std::string> names;
  ASSERT_GT(T::count, 0) << T::type_name;
  for (const auto &e : T::entries) {
    EXPECT_TRUE(ords.insert(e.ordinal).second) << T::type_name << " duplicate ordinal " << e.ordinal;
    EXPECT_TRUE(names.insert(e.name).second) << T::type_name << " duplicate name " << e.name;
    E v = parse_enum<E>(e.name);
    EXPECT_EQ(static_cast<int>(v), e.ordinal) << T::type_name << "::" << e.name;
    EXPECT_STREQ(enum_name(v), e.name);
    EXPECT_EQ(enum_from_ordinal<E>(e.ordinal), v);
  }
  EXPECT_FALSE(enum_from_ordinal<E>(-1));
  try {
    parse_enum<E>("NoSuchValue");
    ADD_FAILURE() << T::type_name;
  } catch (const InputError &ex) {
    EXPECT_NE(std::string(ex.what()).find("'NoSuchValue'"), std::string::npos);
    EXPECT_NE(std::string(ex.what()).find(T::type_name), std::string::npos);
  }
}
} // namespace

TEST(Enums, RoundTripEveryEnum) {
  int n = 0;
#define NS_RT(T, key, src) round_trip<T>(), ++n;
  NEURONSIM_ENUMS(NS_RT)
#undef NS_RT
  EXPECT_EQ(static_cast<size_t>(n), enum_tables().size());
  EXPECT_GE(n, 24);
}

TEST(Enums, EngineTypeOrdinals) {
  // reference bir/structural-enums.md EngineType2string (8 cases) and bir-json.md 2.4 spellings.
  const char *names[] = {"Unassigned", "Pool", "Activation", "PE", "DMA", "DVE", "SP", "ALL"};
  ASSERT_EQ(EnumTraits<Engine>::count, 8);
  for (int i = 0; i < 8; ++i) EXPECT_STREQ(enum_name(static_cast<Engine>(i)), names[i]);
  // spec 003 NOTE: wire engine numbering {PE=0, ACT=1, POOL=2, DVE=3, SP=4}.
  EXPECT_EQ(static_cast<int>(WireEngine::PE), 0);
  EXPECT_EQ(static_cast<int>(WireEngine::ACT), 1);
  EXPECT_EQ(static_cast<int>(WireEngine::POOL), 2);
  EXPECT_EQ(static_cast<int>(WireEngine::DVE), 3);
  EXPECT_EQ(static_cast<int>(WireEngine::SP), 4);
}

TEST(Enums, StructuralEnums) {
  // reference bir/structural-enums.md.
  EXPECT_EQ(static_cast<int>(ArchLevel::sunda), 20);
  EXPECT_EQ(static_cast<int>(ArchLevel::core_v4), 40);
  EXPECT_EQ(static_cast<int>(IndirectDim::X), 3);
  EXPECT_EQ(static_cast<int>(AxisListType::C), 5);
  EXPECT_EQ(static_cast<int>(TransposeOps::XYZW), 12);  // the full reversal; KLR's list omits it
  EXPECT_EQ(static_cast<int>(TransposeOps::XYWZ), 13);
  EXPECT_EQ(EnumTraits<TransposeOps>::count, 14);
  // reference isa-enum-ordinals.md ENUM 12: AllToAllV is kind 6.
  EXPECT_EQ(static_cast<int>(CollectiveKind::AllToAllV), 6);
  EXPECT_EQ(static_cast<int>(CollectiveKind::PermuteReduceImplicit), 10);
}

TEST(Enums, Dtypes) {
  // reference bir/dtype-tables.md: ordinals and element strides (container size for x4 types).
  EXPECT_EQ(static_cast<int>(Dtype::uint8), 0);
  EXPECT_EQ(static_cast<int>(Dtype::bfloat16), 12);
  EXPECT_EQ(static_cast<int>(Dtype::float32), 16);
  EXPECT_EQ(static_cast<int>(Dtype::float32r), 17);
  EXPECT_EQ(static_cast<int>(Dtype::int64), 19);
  EXPECT_EQ(dtype_size(Dtype::float4_e2m1fn_x4), 2);
  EXPECT_EQ(dtype_size(Dtype::float8_e4m3fn_x4), 4);
  EXPECT_EQ(dtype_size(Dtype::bfloat16), 2);
  EXPECT_EQ(dtype_size(Dtype::int64), 8);
  EXPECT_EQ(parse_dtype("float32"), Dtype::float32);
  EXPECT_THROW(parse_dtype("float31"), InputError);
}
