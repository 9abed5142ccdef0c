// BIR JSON reader (isa/bir/) on bad input: each malformed case raises an InputError naming file, instruction and
// key, and no mutation of the real compiler sample crashes it.
#include <gtest/gtest.h>

#include <fstream>

#include "isa/bir_json_support.hpp"
#include "support/temp_dir.hpp"

using namespace neuronsim;
using namespace neuronsim::isa;
using namespace bir_json_test;
using json = nlohmann::json;

// ------------------------------------------------------------------------------------------------ errors
TEST(BirJson, MalformedJsonNamesFileAndPosition) {
  const std::string path = neuronsim::testing::temp_dir("bir") + "/bir_malformed.json";
  {
    std::ofstream f(path);
    f << "{\n  \"version\": 2,\n  \"functions\": [ }\n";
  }
  try {
    read_bir_file(path);
    FAIL() << "expected InputError";
  } catch (const InputError &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("line 3"), std::string::npos) << msg;
  }
  std::remove(path.c_str());
  EXPECT_THROW(read_bir_file(path + ".missing"), InputError);
}

TEST(BirJson, UnknownOpcode) {
  json m = module(
      {alloc("t", "SB", {1, 4})},
      {{{"opcode", "NoOp"}, {"name", "I-0"}},
       {{"opcode", "TensorFrobnicate"}, {"name", "I-9"}, {"ins", json::array()}, {"outs", json::array()}}});
  expect_input_error(m, {"test.bir.json", "instruction 1", "'I-9'", "field 'opcode'", "'TensorFrobnicate'"});
}

TEST(BirJson, MissingRequiredKeys) {
  json t = alloc("t", "SB", {1, 4});
  json ap = {{4, 1}, {1, 4}};
  expect_input_error(module({t}, {{{"name", "I-0"}, {"ins", json::array()}}}),
                     {"test.bir.json", "instruction 0", "'I-0'", "field 'opcode'", "sg0000"});
  expect_input_error(module({t}, {{{"opcode", "TensorCopy"}, {"name", "I-5"}, {"outs", {phys_ap("t", ap)}}}}),
                     {"instruction 0", "'I-5'", "field 'ins'"});
  expect_input_error(module({t}, {{{"opcode", "TensorCopy"}, {"name", "I-5"}, {"ins", {phys_ap("t", ap)}}}}),
                     {"instruction 0", "'I-5'", "field 'outs'"});
  json no_ap = phys_ap("t", ap);
  no_ap.erase("ap");
  expect_input_error(
      module({t},
             {{{"opcode", "TensorCopy"}, {"name", "I-6"}, {"ins", {no_ap}}, {"outs", {phys_ap("t", ap)}}}}),
      {"instruction 0", "'I-6'", "field 'ins[0]'", "'ap'"});
  json bad_alloc = t;
  bad_alloc.erase("memorylocations");
  expect_input_error(module({bad_alloc}, json::array()), {"test.bir.json", "allocations[0].memorylocations"});
  expect_input_error(json{{"version", 2}}, {"test.bir.json", "'functions'"});
}

TEST(BirJson, UnknownAllocationReference) {
  json ap = {{4, 1}, {1, 4}};
  json m =
      module({alloc("t", "SB", {1, 4})}, {{{"opcode", "TensorCopy"},
                                           {"name", "I-3"},
                                           {"ins", {phys_ap("t", ap)}},
                                           {"outs", {sym_ap("nope_set", ap, {cst(0), cst(0)}, {1, 4})}}}});
  expect_input_error(m, {"instruction 0", "'I-3'", "field 'outs[0].memsetref'", "'nope_set'"});
}

TEST(BirJson, LoopStrideZero) {
  json m = module({alloc("t", "SB", {1, 4})}, {loop("i", 0, 4, 0, {{{"opcode", "NoOp"}, {"name", "n"}}})});
  expect_input_error(m, {"test.bir.json", "Loop 'i'", "field 'LoopAxis.stride'", "stride is 0"});
}

TEST(BirJson, WrongTypesAndUnknownNames) {
  json ap = {{4, 1}, {1, 4}};
  json t = alloc("t", "SB", {1, 4});
  auto ts = [&](json extra) {
    // Every required key present (reference json-schema-catalog.md: TensorScalar requires all six), so that each
    // case fails on the one value it breaks.
    json i = {{"opcode", "TensorScalar"},
              {"name", "I-8"},
              {"op0", "add"},
              {"const0", 1.0},
              {"reverse0", false},
              {"op1", "bypass"},
              {"const1", 0.0},
              {"reverse1", false},
              {"ins", {phys_ap("t", ap)}},
              {"outs", {phys_ap("t", ap)}}};
    i.update(extra);
    return module({t}, {i});
  };
  expect_input_error(ts({{"op0", 3}}), {"instruction 0", "'I-8'", "field 'op0'", "expected a string"});
  expect_input_error(ts({{"const0", "one"}}), {"field 'const0'", "expected a number"});
  expect_input_error(ts({{"reverse0", 1}}), {"field 'reverse0'", "true/false"});
  expect_input_error(ts({{"op0", "frobnicate"}}), {"field 'op0'", "'frobnicate'"});
  expect_input_error(ts({{"engine", "GPU"}}), {"field 'engine'", "'GPU'"});
  expect_input_error(ts({{"dependencies", {"I-77"}}}), {"'I-8'", "dependencies[0]", "'I-77'"});
  expect_input_error(ts({{"ins", {sym_ap("t_set", ap, {cst(0), aff({{aff_iv("q"), 1}}, 0)}, {1, 4})}}}),
                     {"'I-8'", "ins[0].addrs[1].terms[0].idx.axis", "unknown loop variable 'q'"});
  expect_input_error(ts({{"ins", {{{"kind", "fancy_ap"}}}}}), {"field 'ins[0].kind'", "'fancy_ap'"});
  expect_input_error(ts({{"ins", 5}}), {"field 'ins'", "expected an array"});
  // A null required key is an error (it would otherwise run with the default); an unknown key is ignored with a
  // warning naming it.
  expect_input_error(ts({{"const0", nullptr}}), {"'I-8'", "field 'const0'", "required key 'const0' is null"});
  Program p = load(ts({{"op0", "mult"}, {"some_future_key", {1, 2}}}));
  EXPECT_TRUE(p.insts[0].has(Field::op0));
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("field 'some_future_key': unknown key for TensorScalar, ignored"), std::string::npos);
  expect_input_error(json{{"version", 3}, {"functions", json::array()}}, {"field 'version'"});
  expect_input_error(json::array({1, 2}), {"test.bir.json", "expected an object"});
}

// Robustness: every value of the real compiler sample, replaced by values of every JSON type (or removed),
// either still loads or gives an InputError -- never another exception or a crash.
TEST(BirJson, MutatedKernel1NeverCrashes) {
  std::ifstream f(kKernel1);
  json base = json::parse(f);
  json flat = base.flatten();
  // Every container path too, so whole objects/arrays get replaced as well as leaves.
  std::vector<std::string> paths;
  for (auto it = flat.begin(); it != flat.end(); ++it) {
    std::string p = it.key();
    while (!p.empty()) {
      paths.push_back(p);
      p = p.substr(0, p.rfind('/'));
    }
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  const std::vector<json> replacements = {
      nullptr, 0, -1, 1.5, "x", json::array(), json::object(), true, json::array({json::array({1, 2})})};
  int loaded = 0, rejected = 0;
  for (const auto &p : paths) {
    json::json_pointer ptr(p);
    for (size_t r = 0; r <= replacements.size(); ++r) {
      json doc = base;
      if (r == replacements.size()) {
        json &parent = doc.at(ptr.parent_pointer());
        if (parent.is_object())
          parent.erase(ptr.back());
        else
          continue;
      } else {
        doc.at(ptr) = replacements[r];
      }
      try {
        Program prog = parse_bir(doc, "mutated.json");
        ++loaded;
        (void)to_bir_json(prog);
      } catch (const InputError &) {
        ++rejected;
      } catch (const std::exception &e) {
        ADD_FAILURE() << p << " <- " << (r < replacements.size() ? replacements[r].dump() : "(removed)")
                      << ": " << e.what();
      }
    }
  }
  EXPECT_GT(loaded, 0);
  EXPECT_GT(rejected, 0);
}
