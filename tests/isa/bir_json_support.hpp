// Shared by the BIR JSON reader/writer tests (test_bir_json*.cpp): JSON builders for modules, allocations,
// access patterns and loops, the field-by-field program comparison, and the kernel fixtures.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <cmath>
#include <string>
#include <vector>

#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/inst_rules.hpp"

namespace bir_json_test {

using namespace neuronsim;
using namespace neuronsim::isa;
using json = nlohmann::json;


inline const std::string kKernel1 = std::string(NEURONSIM_SOURCE_DIR) + "/tests/isa/data/kernel1.bir.json";

// ------------------------------------------------------------------------------------------------ builders
inline json alloc(const std::string &name, const std::string &type, std::vector<int64_t> shape,
           const std::string &dtype = "float32", const std::string &kind = "Internal") {
  int64_t free = 1;
  for (size_t i = 1; i < shape.size(); ++i)
    free *= shape[i];
  int64_t esize = dtype == "bfloat16" ? 2 : 4;
  json loc = {{"Skind", "memory_location"},
              {"name", name},
              {"type", type},
              {"dims", {shape[0], free * esize}},
              {"addr", 0},
              {"base", 0},
              {"bank", 0},
              {"allocated", false}};
  return {{"Skind", "memory_location_set"},
          {"name", name + "_set"},
          {"kind", kind},
          {"dtype", dtype},
          {"tensor_shape", shape},
          {"partition_dim", 0},
          {"memorylocations", {loc}}};
}

inline json aff_iv(const std::string &axis) {
  return {{"kind", "AffIVKind"}, {"axis", axis}};
}
inline json aff(std::vector<std::pair<json, int64_t>> terms, int64_t c) {
  json t = json::array();
  for (auto &p : terms)
    t.push_back({{"idx", p.first}, {"coeff", p.second}});
  return {{"kind", "AffExprKind"}, {"terms", t}, {"c", c}};
}
inline json cst(int64_t c) {
  return aff({}, c);
}

inline json sym_ap(const std::string &set, json ap, json addrs, json access_shape) {
  return {{"kind", "symbolic_ap"}, {"dtype", "float32"},          {"memsetref", set}, {"ap", ap},
          {"addrs", addrs},        {"access_shape", access_shape}};
}
inline json phys_ap(const std::string &t, json ap, int64_t offset = 0) {
  return {{"kind", "physical_ap"},   {"dtype", "float32"}, {"memref", t},
          {"memsetref", t + "_set"}, {"ap", ap},           {"offset", offset}};
}

inline json module(json allocations, json instructions, int version = 2) {
  json fn = {{"name", "sg0000"},
             {"allocations", allocations},
             {"blocks", json::array({{{"name", "Block1"}, {"instructions", instructions}}})}};
  return {{"arch", "gen3"}, {"version", version}, {"functions", json::array({fn})}};
}

inline json loop(const std::string &axis, int64_t lb, int64_t ub, int64_t stride, json instructions) {
  return {{"opcode", "Loop"},
          {"LoopAxis", {{"name", axis}, {"lb", lb}, {"ub", ub}, {"stride", stride}}},
          {"blocks", json::array({{{"name", "B" + axis}, {"instructions", instructions}}})}};
}

inline Program load(const json &j) {
  return parse_bir(j, "test.bir.json");
}

// Expects parse_bir to throw InputError whose message contains every needle.
inline void expect_input_error(const json &j, std::vector<std::string> needles) {
  try {
    load(j);
    FAIL() << "expected InputError";
  } catch (const InputError &e) {
    std::string msg = e.what();
    for (const auto &n : needles)
      EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
  }
}

// ------------------------------------------------------------------------------------------------ equality
inline bool same_double(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}
inline bool same_doubles(const std::vector<double> &a, const std::vector<double> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_double(a[i], b[i]))
      return false;
  return true;
}
inline bool same_expr(const Expr &a, const Expr &b) {
  if (a.kind != b.kind || a.c != b.c || a.coeffs != b.coeffs || a.k != b.k || a.var != b.var ||
      a.regref != b.regref || a.kids.size() != b.kids.size())
    return false;
  for (size_t i = 0; i < a.kids.size(); ++i)
    if (!same_expr(a.kids[i], b.kids[i]))
      return false;
  return true;
}
inline void expect_same_arg(const Arg &a, const Arg &b, const std::string &where) {
  EXPECT_EQ(a.kind, b.kind) << where;
  EXPECT_EQ(a.dtype, b.dtype) << where;
  EXPECT_EQ(a.tensor, b.tensor) << where;
  EXPECT_TRUE(a.ap == b.ap) << where;
  EXPECT_TRUE(same_expr(a.start, b.start)) << where;
  EXPECT_TRUE(same_double(a.imm, b.imm)) << where;
  EXPECT_TRUE(same_doubles(a.imm_array, b.imm_array)) << where;
  EXPECT_EQ(a.reg, b.reg) << where;
  EXPECT_EQ(a.json_kind, b.json_kind) << where;
}
template <typename T> bool same_field(const T &a, const T &b) {
  return a == b;
}
inline bool same_field(const double &a, const double &b) {
  return same_double(a, b);
}
inline bool same_field(const std::vector<double> &a, const std::vector<double> &b) {
  return same_doubles(a, b);
}

inline bool same_nodes(const std::vector<Node> &a, const std::vector<Node> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Node &x = a[i], &y = b[i];
    if (x.kind != y.kind || x.inst != y.inst || x.var != y.var || x.lb != y.lb || x.ub != y.ub ||
        x.stride != y.stride || !same_nodes(x.body, y.body))
      return false;
  }
  return true;
}

// The fields of a type's required keys (inst_keys.def): the writer always writes them.
namespace only_sel {
constexpr int ANY = -1;
#define NS_IT(ord, name, family) constexpr int name = ord;
#include "neuronsim/isa/tables/instruction_types.def"
#undef NS_IT
} // namespace only_sel
inline std::bitset<kNumFields> required_fields(InstructionType t) {
  std::bitset<kNumFields> b;
  const auto &req = inst_keys(t).required;
  const int type = static_cast<int>(t);
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  if ((only_sel::only == only_sel::ANY || only_sel::only == type) &&                                         \
      std::find(req.begin(), req.end(), key) != req.end())                                                   \
    b.set(static_cast<int>(Field::member));
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  return b;
}

inline void expect_same_program(const Program &a, const Program &b) {
  EXPECT_EQ(a.arch, b.arch);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const Tensor &x = a.tensors[i], &y = b.tensors[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.set_name, y.set_name);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.mem, y.mem);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.shape, y.shape);
    EXPECT_EQ(x.partitions, y.partitions);
    EXPECT_EQ(x.bytes_per_partition, y.bytes_per_partition);
    EXPECT_EQ(x.addr, y.addr);
    EXPECT_EQ(x.base_partition, y.base_partition);
    EXPECT_EQ(x.bank, y.bank);
    EXPECT_EQ(x.allocated, y.allocated);
  }
  ASSERT_EQ(a.insts.size(), b.insts.size());
  for (size_t i = 0; i < a.insts.size(); ++i) {
    const Inst &x = a.insts[i], &y = b.insts[i];
    std::string w = "inst " + std::to_string(i);
    EXPECT_EQ(x.type, y.type) << w;
    EXPECT_EQ(x.name, y.name) << w;
    EXPECT_EQ(x.engine, y.engine) << w;
    EXPECT_EQ(x.index, y.index) << w;
    EXPECT_EQ(x.source_line, y.source_line) << w;
    EXPECT_EQ(x.dependencies, y.dependencies) << w;
    // The writer also writes every key the type requires (inst_keys.def), so those read back as given.
    EXPECT_EQ(x.given | required_fields(x.type), y.given | required_fields(x.type)) << w;
    EXPECT_EQ(y.given & ~(x.given | required_fields(x.type)), decltype(y.given)()) << w;
    ASSERT_EQ(x.ins.size(), y.ins.size()) << w;
    ASSERT_EQ(x.outs.size(), y.outs.size()) << w;
    for (size_t k = 0; k < x.ins.size(); ++k)
      expect_same_arg(x.ins[k], y.ins[k], w + " ins " + std::to_string(k));
    for (size_t k = 0; k < x.outs.size(); ++k)
      expect_same_arg(x.outs[k], y.outs[k], w + " outs " + std::to_string(k));
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  EXPECT_TRUE(same_field(x.f.member, y.f.member)) << w << " field " << key;
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  }
  EXPECT_EQ(a.loop_vars, b.loop_vars);
  EXPECT_TRUE(same_nodes(a.body, b.body));
}

// ------------------------------------------------------------------------------------------------ fixtures
// Two nested loops over a [8, 64] DRAM tensor: tile (i, j) of [2, 16] elements.
// Load/TensorTensor/Activation/Save.
inline json nested_loop_kernel() {
  json allocs = {alloc("x", "DRAM", {8, 64}, "float32", "ExternalInput"),
                 alloc("y", "DRAM", {8, 64}, "float32", "ExternalOutput"), alloc("t", "SB", {2, 16}),
                 alloc("u", "SB", {2, 16}), alloc("acc", "PSUM", {2, 16})};
  json dram_ap = {{64, 2}, {1, 16}};
  json tile_ap = {{16, 2}, {1, 16}};
  // addrs: row = 2*i, col = 16*j  -> start = 2*i*64 + 16*j = 128 i + 16 j
  json addrs = {aff({{aff_iv("i"), 2}}, 0), aff({{aff_iv("j"), 16}}, 0)};
  json zero = {cst(0), cst(0)};
  json body = {{{"opcode", "Load"},
                {"name", "I-1"},
                {"engine", "Unassigned"},
                {"can_read_uninit", false},
                {"ins", {sym_ap("x_set", dram_ap, addrs, {2, 16})}},
                {"outs", {sym_ap("t_set", tile_ap, zero, {2, 16})}},
                {"debug", {{"lineno", 7}}}},
               {{"opcode", "TensorTensor"},
                {"name", "I-2"},
                {"engine", "DVE"},
                {"op", "add"},
                {"acc", "Idle"},
                {"ins", {phys_ap("t", tile_ap), phys_ap("t", tile_ap)}},
                {"outs", {phys_ap("u", tile_ap)}},
                {"dependencies", {"I-1"}}},
               {{"opcode", "Activation"},
                {"name", "I-3"},
                {"engine", "Activation"},
                {"func", "Relu"},
                {"scale", 1.0},
                {"alpha", 0.0},
                {"acc", "Idle"},
                {"op0", "bypass"},
                {"op1", "bypass"},
                {"reduce_op", "bypass"},
                {"ins", {phys_ap("u", tile_ap)}},
                {"outs", {phys_ap("acc", tile_ap)}},
                {"dependencies", json::array({json::array({"I-2", "Flow"})})}},
               {{"opcode", "Save"},
                {"name", "I-4"},
                {"engine", "Unassigned"},
                {"ins", {phys_ap("acc", tile_ap)}},
                {"outs", {sym_ap("y_set", dram_ap, addrs, {2, 16})}}}};
  return module(allocs, {loop("i", 0, 4, 1, {loop("j", 0, 4, 1, body)})});
}

} // namespace bir_json_test
