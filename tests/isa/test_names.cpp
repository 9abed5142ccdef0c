// The one "unknown name" rule (isa/names.hpp): the nearest valid name by case, then edit distance, then
// another tool's spelling; the valid names listed; and the readers that use it (enums, dtypes, opcodes,
// keys).
#include <gtest/gtest.h>

#include "neuronsim/isa/names.hpp"
#include "neuronsim/isa/tables.hpp"

using namespace neuronsim;
using namespace neuronsim::isa;

TEST(Names, EditDistanceCountsSwapsAsOne) {
  EXPECT_EQ(edit_distance("mul", "mult"), 1u);    // one insertion
  EXPECT_EQ(edit_distance("scael", "scale"), 1u); // one swap
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Names, NearestIsCaseThenEditsThenHints) {
  const std::vector<std::string> funcs = enum_names<ActivationFunctionType>();
  EXPECT_EQ(nearest_name("relu", funcs), "Relu"); // case alone
  EXPECT_EQ(nearest_name("GELU", funcs), "Gelu");
  EXPECT_EQ(nearest_name("mul", {"add", "mult", "max"}), "mult"); // 1 edit <= max(1, 3 / 3)
  EXPECT_EQ(nearest_name("fp32", enum_names<Dtype>()), "");       // 4 edits from float32: too far by edits
  EXPECT_EQ(nearest_name("fp32", enum_names<Dtype>(), dtype_hints()), "float32"); // numpy's word for it
  EXPECT_EQ(nearest_name("bf16", enum_names<Dtype>(), dtype_hints()), "bfloat16");
  EXPECT_EQ(nearest_name("completely_else", {"a", "b"}), "");
}

TEST(Names, TheMessageListsTheValidNames) {
  EXPECT_EQ(unknown_name("mode", "fast", {"auto", "whole", "streamed"}),
            "unknown mode 'fast' (valid: auto, whole, streamed)");
  EXPECT_EQ(unknown_name("AluOpType", "mul", {"add", "mult"}),
            "unknown AluOpType 'mul' (did you mean 'mult'?; valid: "
            "add, mult)");
  EXPECT_EQ(name_hint("x", {"a", "b", "c"}, {}, 2), " (valid: a, b, and 1 more)"); // 1 edit is all of "x"
  EXPECT_EQ(name_hint("A", {"a", "b"}, {}, 0), " (did you mean 'a'?)");
  EXPECT_EQ(did_you_mean("trn22", {"trn1", "trn2", "trn3"}), " (did you mean 'trn2'?)");
}

// Another tool's word is offered when no spelling is near: NKI's buffer, engine and operator names
// (nl.sbuf, nki.isa's vector engine, nl.multiply) for the BIR's.
TEST(Names, NkiWordsSuggestTheBirValue) {
  EXPECT_EQ(nearest_name("SBUF", enum_names<MemoryType>(), enum_hints("MemoryType")), "SB");
  EXPECT_EQ(nearest_name("sbuf", enum_names<MemoryType>(), enum_hints("MemoryType")), "SB");
  EXPECT_EQ(nearest_name("HBM", enum_names<MemoryType>(), enum_hints("MemoryType")), "DRAM");
  EXPECT_EQ(nearest_name("Vector", enum_names<Engine>(), enum_hints("Engine")), "DVE");
  EXPECT_EQ(nearest_name("gpsimd", enum_names<Engine>(), enum_hints("Engine")), "Pool");
  EXPECT_EQ(nearest_name("ACT", enum_names<Engine>(), enum_hints("Engine")), "Activation");
  try {
    parse_alu("multiply");
    FAIL();
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("unknown AluOpType 'multiply' (did you mean 'mult'?"),
              std::string::npos)
        << e.what();
  }
  try {
    parse_enum<MemoryType>("SBUF");
    FAIL();
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("unknown MemoryType 'SBUF' (did you mean 'SB'?; valid: "),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(enum_hints("ActivationFunctionType").empty());
}

TEST(Names, EveryEnumParserUsesIt) {
  try {
    parse_enum<ActivationFunctionType>("relu");
    FAIL();
  } catch (const InputError &e) {
    EXPECT_NE(
        std::string(e.what()).find("unknown ActivationFunctionType 'relu' (did you mean 'Relu'?; valid: "
                                   "Identity, Square, Relu,"),
        std::string::npos)
        << e.what();
  }
  try {
    parse_alu("mul");
    FAIL();
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("unknown AluOpType 'mul' (did you mean 'mult'?"), std::string::npos)
        << e.what();
  }
  try {
    parse_dtype("fp32");
    FAIL();
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("unknown dtype 'fp32' (did you mean 'float32'?"), std::string::npos)
        << e.what();
  }
  try {
    parse_inst_type("tensortensor");
    FAIL();
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("(did you mean 'TensorTensor'?)"), std::string::npos) << e.what();
  }
}
