// The per-type key and engine tables (isa/inst_rules.cpp over inst_keys.def and engines_allowed.def) and what the
// BIR JSON reader does with them: required keys are errors when missing or null, unknown keys one warning per key
// name with the closest known key, real compiler output and every workload warning-free, engines outside a type's
// row refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "neuronsim/engines/ops.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/inst_rules.hpp"

// The helpers below live in namespace test_inst_rules, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_inst_rules {

using namespace neuronsim;
using namespace neuronsim::isa;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kSource = NEURONSIM_SOURCE_DIR;
// The real compiler's kernel1 (a copy of reference bir-samples/kernel1.bir.json).
const std::string kSample = kSource + "/tests/isa/data/kernel1.bir.json";

json sample() { return read_json_file(kSample, "kernel"); }
json &insts(json &m) { return m["functions"][0]["blocks"][0]["instructions"]; }

// The message of the InputError reading `m` throws ("" when it reads).
std::string read_error(const json &m) {
  try {
    parse_bir(m, "k.json");
  } catch (const InputError &e) {
    return e.what();
  }
  return "";
}

// The ONLY column of inst_fields.def names a type (or ANY), as in isa/bir/reader.hpp.
namespace only_sel {
constexpr int ANY = -1;
#define NS_IT(ord, name, family) constexpr int name = ord;
#include "neuronsim/isa/tables/instruction_types.def"
#undef NS_IT
} // namespace only_sel

// The keys the reader can read for a type: inst_fields.def rows whose ONLY column is ANY or the type.
std::set<std::string> readable_keys(InstructionType t) {
  std::set<std::string> keys;
  const int type = static_cast<int>(t);
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  if (only_sel::only == only_sel::ANY || only_sel::only == type)                                             \
    keys.insert(key);
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  return keys;
}

} // namespace

// ------------------------------------------------------------------------------------------------ the tables
TEST(InstKeys, EveryTypeHasARowAndEveryRequiredKeyIsReadable) {
  for (int i = 0; i < kNumInstructionTypes; ++i) {
    const auto t = static_cast<InstructionType>(i);
    SCOPED_TRACE(inst_type_name(t));
    const InstKeys &k = inst_keys(t);  // throws std::logic_error unless inst_keys.def has exactly one row
    const std::set<std::string> readable = readable_keys(t);
    for (const auto &key : k.required) {
      // The writer emits required keys from these fields, so a program it writes reads back.
      EXPECT_TRUE(readable.count(key)) << "required key '" << key << "' has no inst_fields.def row for the type";
      EXPECT_TRUE(std::find(k.optional.begin(), k.optional.end(), key) == k.optional.end()) << key;
    }
  }
}

// reference neuronx-cc/bir/json-schema-catalog.md, "Required vs optional" (`req` in the op tables).
TEST(InstKeys, RequiredKeysFollowTheCatalog) {
  using V = std::vector<std::string>;
  EXPECT_EQ(inst_keys(InstructionType::TensorTensor).required, (V{"op"}));
  EXPECT_EQ(inst_keys(InstructionType::Activation).required, (V{"scale", "alpha", "func", "acc", "op0", "op1", "reduce_op"}));
  EXPECT_EQ(inst_keys(InstructionType::TensorScalarPtr).required, (V{"op0", "reverse0", "op1", "reverse1"}));
  EXPECT_EQ(inst_keys(InstructionType::Memset).required, (V{"mode", "constant"}));
  EXPECT_EQ(inst_keys(InstructionType::TensorReduce).required, (V{"op", "axis"}));
  EXPECT_TRUE(inst_keys(InstructionType::Matmult).required.empty());  // the catalog marks none
  EXPECT_TRUE(inst_keys(InstructionType::Load).required.empty());
}

TEST(InstKeys, ClosestKeyIsTheDidYouMean) {
  EXPECT_EQ(edit_distance("opp", "op"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(closest_key(InstructionType::TensorTensor, "opp"), "op");
  EXPECT_EQ(closest_key(InstructionType::Activation, "scael"), "scale");
  EXPECT_EQ(closest_key(InstructionType::TensorScalarPtr, "reverse_0"), "reverse0");
  EXPECT_EQ(closest_key(InstructionType::TensorTensor, "completely_unrelated"), "");
}

// The operand roles (inst_keys.def's last two columns) and the fields' meanings (inst_fields.def's last
// column): what `neuronsim isa --explain` prints and engines/ops reads its operands by.
TEST(InstKeys, OperandRolesAreParsedInOrder) {
  const InstKeys &a = inst_keys(InstructionType::Activation);
  std::vector<std::string> names;
  for (const auto &r : a.ins)
    names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"data", "scale", "bias", "alpha", "acc_seed"}));
  EXPECT_FALSE(a.ins[0].optional);
  EXPECT_TRUE(a.ins[1].optional);                                    // "scale?": absent -> the `scale` key
  EXPECT_EQ(operand_index(InstructionType::Activation, "bias"), 2u); // [data, bias] computes data * bias
  EXPECT_EQ(operand_index(InstructionType::Activation, "acc_out", true), 1u);
  EXPECT_THROW(operand_index(InstructionType::Activation, "gamma"), std::logic_error);
  const InstKeys &c = inst_keys(InstructionType::CollectiveCompute);
  ASSERT_FALSE(c.ins.empty());
  EXPECT_TRUE(c.ins[0].repeats); // "src...": every input
  EXPECT_TRUE(inst_keys(InstructionType::NoOp).ins.empty());
}

// Every type the engines execute with data operands has its roles in the table (a new type's row must say
// them).
TEST(InstKeys, EveryTypeThatMovesDataHasRoles) {
  for (int i = 0; i < kNumInstructionTypes; ++i) {
    const auto t = static_cast<InstructionType>(i);
    if (!engines::executes(t) || !engines::reads_or_writes_data(t))
      continue;
    const InstKeys &k = inst_keys(t);
    EXPECT_FALSE(k.ins.empty() && k.outs.empty())
        << inst_type_name(t) << ": no operand roles in inst_keys.def";
  }
}

TEST(InstFields, EveryFieldSaysWhatItMeans) {
  for (const auto &f : field_infos())
    EXPECT_FALSE(f.meaning.empty()) << f.key << ": no meaning in inst_fields.def";
  const FieldInfo *func = field_info(InstructionType::Activation, "func");
  ASSERT_NE(func, nullptr);
  EXPECT_EQ(func->type, "ActivationFunctionType");
  EXPECT_EQ(func->fallback, "Identity");
  EXPECT_EQ(field_info(InstructionType::Pool, "func")->type, "PoolFunctionType"); // the ONLY column decides
  EXPECT_EQ(field_info(InstructionType::Activation, "scale")->fallback, "1");
  EXPECT_EQ(field_info(InstructionType::Activation, "is_activate2")->type, "bool");
  EXPECT_EQ(field_info(InstructionType::AbstractCopy, "dma_qos"), nullptr); // read, not modelled
}

TEST(EngineRules, TheTablesPinEngines) {
  EXPECT_FALSE(engine_allowed(InstructionType::TensorTensor, Engine::PE));
  EXPECT_TRUE(engine_allowed(InstructionType::TensorTensor, Engine::DVE));
  EXPECT_TRUE(engine_allowed(InstructionType::TensorTensor, Engine::Pool));  // neuron-arch.md 3.3
  EXPECT_FALSE(engine_allowed(InstructionType::Matmult, Engine::DVE));
  EXPECT_TRUE(engine_allowed(InstructionType::Matmult, Engine::PE));
  EXPECT_FALSE(engine_allowed(InstructionType::Activation, Engine::Pool));
  EXPECT_TRUE(engine_allowed(InstructionType::TensorCopy, Engine::Activation));
  EXPECT_TRUE(engine_allowed(InstructionType::Load, Engine::SP));   // any sequencer triggers DMA
  EXPECT_TRUE(engine_allowed(InstructionType::Load, Engine::Activation));
  EXPECT_TRUE(engine_allowed(InstructionType::Matmult, Engine::Unassigned));
  EXPECT_TRUE(engine_allowed(InstructionType::GetGlobalRankId, Engine::DVE));  // its row pins none
  EXPECT_EQ(allowed_engines_text(InstructionType::TensorTensor), "DVE, Pool");
}

// The engine an Unassigned instruction is given (engines/ops/engine_policy.cpp) must itself be legal.
TEST(EngineRules, EveryDefaultEngineIsAllowed) {
  for (int i = 0; i < kNumInstructionTypes; ++i) {
    const auto t = static_cast<InstructionType>(i);
    if (!engines::executes(t)) continue;
    EXPECT_TRUE(engine_allowed(t, engines::default_engine(t)))
        << inst_type_name(t) << " defaults to " << enum_name(engines::default_engine(t)) << ", allowed "
        << allowed_engines_text(t);
  }
}

// ------------------------------------------------------------------------------------------------ the reader
TEST(InstKeysReader, RealCompilerOutputAndEveryWorkloadReadWithoutWarnings) {
  EXPECT_TRUE(read_bir_file(kSample).warnings.empty());
  int n = 0;
  for (const auto &d : fs::directory_iterator(kSource + "/workloads"))
    for (const auto &f : fs::directory_iterator(d.path()))
      if (f.path().string().size() > 9 && f.path().string().substr(f.path().string().size() - 9) == ".bir.json") {
        const Program p = read_bir_file(f.path().string());
        EXPECT_TRUE(p.warnings.empty()) << f.path() << ": " << (p.warnings.empty() ? "" : p.warnings[0]);
        ++n;
      }
  EXPECT_GE(n, 12);
}

TEST(InstKeysReader, MissingOrNullRequiredKeyIsAnError) {
  json m = sample();
  insts(m)[1].erase("op1");
  std::string e = read_error(m);
  EXPECT_NE(e.find("instruction 1 'I-4' field 'op1'"), std::string::npos) << e;
  EXPECT_NE(e.find("missing required key 'op1'"), std::string::npos) << e;
  m = sample();
  insts(m)[1]["op0"] = nullptr;
  e = read_error(m);
  EXPECT_NE(e.find("required key 'op0' is null"), std::string::npos) << e;
  // A misspelling of the missing key is named.
  m = sample();
  insts(m)[1].erase("op0");
  insts(m)[1]["opp0"] = "subtract";
  e = read_error(m);
  EXPECT_NE(e.find("the instruction has 'opp0': misspelt?"), std::string::npos) << e;
}

TEST(InstKeysReader, UnknownKeysWarnOncePerNameWithTheClosestKey) {
  json m = sample();
  insts(m)[0]["can_read_uninitt"] = false;  // Load: did you mean can_read_uninit
  insts(m)[2]["can_read_uninitt"] = false;  // the same name again: no second warning
  insts(m)[1]["frobnicate"] = 1;
  const Program p = parse_bir(m, "k.json");
  ASSERT_EQ(p.warnings.size(), 2u);
  // Each ends with the instruction's source line (the sample's debug information: kernel1.py lines 9 and 10).
  EXPECT_EQ(p.warnings[0],
            "k.json: instruction 0 'I-2' field 'can_read_uninitt': unknown key for Load, ignored (did you mean "
            "'can_read_uninit'?) (/home/ec2-user/bug/kernel1.py:9)");
  EXPECT_EQ(p.warnings[1], "k.json: instruction 1 'I-4' field 'frobnicate': unknown key for TensorScalarPtr, ignored "
                           "(/home/ec2-user/bug/kernel1.py:10)");
}

TEST(InstKeysReader, AKeyOfAnotherTypeIsUnknownHere) {
  json m = sample();
  insts(m)[1]["op"] = "add";  // TensorTensor's key on a TensorScalarPtr: ignored, and said so
  const Program p = parse_bir(m, "k.json");
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("field 'op': unknown key for TensorScalarPtr"), std::string::npos) << p.warnings[0];
}

TEST(InstKeysReader, EngineOutsideTheRowIsAnError) {
  json m = sample();
  insts(m)[1]["engine"] = "PE";
  const std::string e = read_error(m);
  EXPECT_NE(e.find("instruction 1 'I-4' field 'engine': function 'sg0000': TensorScalarPtr cannot run on PE (it "
                   "runs on DVE, Activation, Pool)"),
            std::string::npos)
      << e;
  insts(m)[1]["engine"] = "Pool";
  EXPECT_EQ(read_error(m), "");
}

// The writer writes every required key (with the value it holds), so what it writes reads back.
TEST(InstKeysWriter, RequiredKeysAreAlwaysWritten) {
  Program p = read_bir_file(kSample);
  Inst &tsp = p.insts[1];
  tsp.given.reset(static_cast<int>(Field::op1));
  tsp.given.reset(static_cast<int>(Field::reverse1));
  const json j = to_bir_json(p);
  const json &w = j["functions"][0]["blocks"][0]["instructions"][1];
  EXPECT_EQ(w.at("op1"), "bypass");
  EXPECT_EQ(w.at("reverse1"), false);
  const Program back = parse_bir(j, "w.json");
  EXPECT_EQ(back.insts[1].f.op0, AluOp::subtract);
  EXPECT_TRUE(back.warnings.empty());
}

}  // namespace test_inst_rules
