// The `neuronsim isa` dump: shape and a few values a reader can check against spec 000/003.
#include <gtest/gtest.h>

#include "neuronsim/isa/dump.hpp"

using namespace neuronsim::isa;
using nlohmann::json;

namespace {
bool executes_tt(InstructionType t) { return t == InstructionType::TensorTensor; }
} // namespace

TEST(IsaDump, JsonShape) {
  json j = isa_tables_json(executes_tt);
  ASSERT_EQ(j["alu_ops"].size(), 33u);
  EXPECT_EQ(j["alu_ops"][0], (json{{"ordinal", 0}, {"name", "bypass"}, {"class", "unary"}, {"bitvec", false},
                                    {"wire", {{"v2", 0}, {"v3", 0}, {"v4", 0}}}}));
  const json &mod_int = j["alu_ops"][32];
  EXPECT_EQ(mod_int["name"], "mod_int");
  EXPECT_TRUE(mod_int["wire"]["v2"].is_null());
  EXPECT_TRUE(mod_int["wire"]["v4"].is_number_unsigned());
  EXPECT_EQ(mod_int["wire"]["v4"].get<uint64_t>(), 4294967240ull);
  EXPECT_NE(j.dump().find("\"v4\":4294967240"), std::string::npos);
  EXPECT_TRUE(j["alu_ops"][24]["wire"]["v4"].is_null());  // average
  EXPECT_EQ(j["alu_ops"][20]["wire"]["v4"], 0x13);         // is_gt
  EXPECT_EQ(j["alu_ops"][20]["class"], "order_sensitive");

  EXPECT_EQ(j["enums"]["TSCMode"][0], (json{{"ordinal", 0}, {"name", "Reduce"}}));
  EXPECT_EQ(j["enums"]["EngineAccumulationType"][5]["name"], "LoadAccumulate");
  EXPECT_EQ(j["enums"]["ReduceCmdType"].size(), 4u);
  for (const char *e : {"CopyMode", "MemsetMode", "Engine", "Dtype", "ActivationFunctionType"})
    EXPECT_TRUE(j["enums"].contains(e)) << e;
  EXPECT_EQ(j["enums"].size(), enum_tables().size());
  EXPECT_EQ(j["enum_info"]["TSCMode"]["source"], "spec 000");

  ASSERT_EQ(j["instruction_types"].size(), 110u);
  const json &act = j["instruction_types"][4];
  EXPECT_EQ(act["name"], "Activation");
  EXPECT_EQ(act["kind"], "concrete");
  EXPECT_EQ(act["engines"], json::array({"Activation"}));
  EXPECT_EQ(act["l2"]["v2"], json::array({0x21}));
  EXPECT_EQ(act["l2"]["v4"], json::array({0x25}));
  EXPECT_EQ(act["l3"]["v4"], json::array({0x1025}));
  EXPECT_EQ(act["executes"], false);
  EXPECT_EQ(j["instruction_types"][31]["executes"], true);
  EXPECT_EQ(j["instruction_types"][0]["kind"], "lowered");
  EXPECT_EQ(j["instruction_types"][100]["col"], json::array({"Memset"}));
  EXPECT_TRUE(j["instruction_types"][53]["bundles"]["max"].is_null());  // CustomOp: 0x86 per argument
  EXPECT_EQ(j["instruction_types"][63]["l2"]["v2"], json::array());    // RangeSelect is new on V3
}

TEST(IsaDump, TextHasTheSameRows) {
  std::string t = isa_tables_text(executes_tt);
  EXPECT_NE(t.find("mod_int"), std::string::npos);
  EXPECT_NE(t.find("0xFFFFFFC8"), std::string::npos);
  EXPECT_NE(t.find("LoadAccumulate"), std::string::npos);
  EXPECT_NE(t.find("NonzeroWithCount"), std::string::npos);
  EXPECT_NE(t.find("0xF2"), std::string::npos);
  // Exactly one line per ALU op and per InstructionType begins with its ordinal and name.
  EXPECT_NE(t.find("\n104  NonzeroWithCount"), std::string::npos);
  EXPECT_EQ(isa_tables_text(nullptr).size() > 0, true);
}
