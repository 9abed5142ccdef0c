// What the BIR JSON reader checks of a module's structure before anything runs: a tensor's tensor_shape and
// dtype agree with its memory location's dims (naming file, tensor and both shapes), and an unknown key warns
// at every level (module, function, allocation, memory location, block, operand), one line each with the
// nearest known key (isa/tables/bir_keys.def), noted again in a later error it may explain.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/file_input.hpp"

using namespace neuronsim;
using json = nlohmann::json;

namespace {

// The real compiler's kernel1 (a copy of reference bir-samples/kernel1.bir.json): a [10, 10] float32 input a,
// output b, tiles tile.7 and tile.9.
json sample() {
  return isa::read_json_file(std::string(NEURONSIM_SOURCE_DIR) + "/tests/isa/data/kernel1.bir.json",
                             "kernel");
}
json &fn(json &m) {
  return m["functions"][0];
}
json &alloc(json &m, const std::string &set) {
  for (auto &a : fn(m)["allocations"])
    if (a["name"] == set)
      return a;
  throw std::runtime_error("no allocation " + set);
}

std::string read_error(const json &m) {
  try {
    isa::parse_bir(m, "k.json");
  } catch (const InputError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(BirDeclarations, DimsThatDisagreeWithTheShapeAreRefused) {
  json m = sample();
  alloc(m, "b_set")["memorylocations"][0]["dims"] = {10, 80}; // [10, 10] float32 holds 40 bytes a partition
  EXPECT_EQ(read_error(m),
            "k.json: field 'allocations[1].memorylocations[0].dims': function 'sg0000': tensor 'b' is "
            "declared [10, 10] float32 (10 partitions x 40 bytes), but its memory location's dims are "
            "[10, 80] (10 partitions x 80 bytes): tensor_shape and dims must describe the same tensor");
  json p = sample();
  alloc(p, "a_set")["memorylocations"][0]["dims"] = {5, 40}; // partitions
  EXPECT_NE(
      read_error(p).find("tensor 'a' is declared [10, 10] float32 (10 partitions x 40 bytes), but its memory "
                         "location's dims are [5, 40]"),
      std::string::npos)
      << read_error(p);
  json d = sample();
  alloc(d, "tile.9_set")["dtype"] = "bfloat16"; // dims [10, 40] are float32's 10 elements
  EXPECT_NE(read_error(d).find("tensor 'tile.9' is declared [10, 10] bfloat16 (10 partitions x 20 bytes)"),
            std::string::npos)
      << read_error(d);
  EXPECT_EQ(read_error(sample()), ""); // the compiler's own output agrees
}

TEST(BirDeclarations, UnknownKeysWarnAtEveryLevel) {
  json m = sample();
  m["versoin"] = 2;
  fn(m)["atributes"] = json::array();
  alloc(m, "a_set")["tensorshape"] = {10, 10};
  alloc(m, "a_set")["memorylocations"][0]["addrr"] = 0;
  fn(m)["blocks"][0]["nmae"] = "x";
  fn(m)["blocks"][0]["instructions"][0]["ins"][0]["dtpye"] = "float32";
  const isa::Program p = isa::parse_bir(m, "k.json");
  const std::vector<std::string> want = {
      "k.json: field 'versoin': unknown key of the module, ignored (did you mean 'version'?)",
      "k.json: field 'atributes': unknown key of a function, ignored (did you mean 'attributes'?)",
      "k.json: field 'allocations[0].tensorshape': unknown key of an allocation, ignored (did you mean "
      "'tensor_shape'?)",
      "k.json: field 'allocations[0].memorylocations[0].addrr': unknown key of a memory location, ignored "
      "(did you "
      "mean 'addr'?)",
      "k.json: field 'blocks[0].nmae': unknown key of a block, ignored (did you mean 'name'?)",
      "k.json: instruction 0 'I-2' field 'ins[0].dtpye': unknown key of an operand, ignored (did you mean "
      "'dtype'?) "
      "(/home/ec2-user/bug/kernel1.py:9)"}; // an instruction's message ends with its source line
  for (const auto &w : want)
    EXPECT_NE(std::find(p.warnings.begin(), p.warnings.end(), w), p.warnings.end()) << "missing: " << w;
  EXPECT_EQ(p.warnings.size(), want.size());
}

TEST(BirDeclarations, AnErrorAfterAnIgnoredKeyNamesIt) {
  json m = sample();
  fn(m)["allocatons"] = fn(m)["allocations"];
  fn(m).erase("allocations");
  const std::string e = read_error(m);
  EXPECT_NE(e.find("no allocation named 'a_set'"), std::string::npos) << e;
  EXPECT_NE(
      e.find("(note: the unknown key 'allocatons' of a function was ignored (did you mean 'allocations'?))"),
      std::string::npos)
      << e;
}
