// BIR JSON reader/writer (isa/bir/): the real compiler sample, loops and their expressions, every
// argument kind, the error cases, and write -> read round trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "neuronsim/isa/bir_json.hpp"
#include "support/temp_dir.hpp"
#include "neuronsim/isa/inst_rules.hpp"

using namespace neuronsim;
using namespace neuronsim::isa;
using json = nlohmann::json;

namespace {

const std::string kKernel1 = std::string(NEURONSIM_SOURCE_DIR) + "/tests/isa/data/kernel1.bir.json";

// ------------------------------------------------------------------------------------------------ builders
json alloc(const std::string &name, const std::string &type, std::vector<int64_t> shape,
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

json aff_iv(const std::string &axis) {
  return {{"kind", "AffIVKind"}, {"axis", axis}};
}
json aff(std::vector<std::pair<json, int64_t>> terms, int64_t c) {
  json t = json::array();
  for (auto &p : terms)
    t.push_back({{"idx", p.first}, {"coeff", p.second}});
  return {{"kind", "AffExprKind"}, {"terms", t}, {"c", c}};
}
json cst(int64_t c) {
  return aff({}, c);
}

json sym_ap(const std::string &set, json ap, json addrs, json access_shape) {
  return {{"kind", "symbolic_ap"}, {"dtype", "float32"},          {"memsetref", set}, {"ap", ap},
          {"addrs", addrs},        {"access_shape", access_shape}};
}
json phys_ap(const std::string &t, json ap, int64_t offset = 0) {
  return {{"kind", "physical_ap"},   {"dtype", "float32"}, {"memref", t},
          {"memsetref", t + "_set"}, {"ap", ap},           {"offset", offset}};
}

json module(json allocations, json instructions, int version = 2) {
  json fn = {{"name", "sg0000"},
             {"allocations", allocations},
             {"blocks", json::array({{{"name", "Block1"}, {"instructions", instructions}}})}};
  return {{"arch", "gen3"}, {"version", version}, {"functions", json::array({fn})}};
}

json loop(const std::string &axis, int64_t lb, int64_t ub, int64_t stride, json instructions) {
  return {{"opcode", "Loop"},
          {"LoopAxis", {{"name", axis}, {"lb", lb}, {"ub", ub}, {"stride", stride}}},
          {"blocks", json::array({{{"name", "B" + axis}, {"instructions", instructions}}})}};
}

Program load(const json &j) {
  return parse_bir(j, "test.bir.json");
}

// Expects parse_bir to throw InputError whose message contains every needle.
void expect_input_error(const json &j, std::vector<std::string> needles) {
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
bool same_double(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}
bool same_doubles(const std::vector<double> &a, const std::vector<double> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_double(a[i], b[i]))
      return false;
  return true;
}
bool same_expr(const Expr &a, const Expr &b) {
  if (a.kind != b.kind || a.c != b.c || a.coeffs != b.coeffs || a.k != b.k || a.var != b.var ||
      a.regref != b.regref || a.kids.size() != b.kids.size())
    return false;
  for (size_t i = 0; i < a.kids.size(); ++i)
    if (!same_expr(a.kids[i], b.kids[i]))
      return false;
  return true;
}
bool same_ap(const std::vector<ApDim> &a, const std::vector<ApDim> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].step != b[i].step || a[i].num != b[i].num)
      return false;
  return true;
}
void expect_same_arg(const Arg &a, const Arg &b, const std::string &where) {
  EXPECT_EQ(a.kind, b.kind) << where;
  EXPECT_EQ(a.dtype, b.dtype) << where;
  EXPECT_EQ(a.tensor, b.tensor) << where;
  EXPECT_TRUE(same_ap(a.ap, b.ap)) << where;
  EXPECT_TRUE(same_expr(a.start, b.start)) << where;
  EXPECT_TRUE(same_double(a.imm, b.imm)) << where;
  EXPECT_TRUE(same_doubles(a.imm_array, b.imm_array)) << where;
  EXPECT_EQ(a.reg, b.reg) << where;
  EXPECT_EQ(a.json_kind, b.json_kind) << where;
}
template <typename T> bool same_field(const T &a, const T &b) {
  return a == b;
}
bool same_field(const std::vector<ApDim> &a, const std::vector<ApDim> &b) {
  return same_ap(a, b);
}
bool same_field(const double &a, const double &b) {
  return same_double(a, b);
}
bool same_field(const std::vector<double> &a, const std::vector<double> &b) {
  return same_doubles(a, b);
}

bool same_nodes(const std::vector<Node> &a, const std::vector<Node> &b) {
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
std::bitset<kNumFields> required_fields(InstructionType t) {
  std::bitset<kNumFields> b;
  const auto &req = inst_keys(t).required;
  const int type = static_cast<int>(t);
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
  if ((only_sel::only == only_sel::ANY || only_sel::only == type) &&                                         \
      std::find(req.begin(), req.end(), key) != req.end())                                                   \
    b.set(static_cast<int>(Field::member));
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  return b;
}

void expect_same_program(const Program &a, const Program &b) {
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
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
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
json nested_loop_kernel() {
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

} // namespace

// ------------------------------------------------------------------------------------------------ kernel1
TEST(BirJson, Kernel1FromTheCompilerLoads) {
  Program p = read_bir_file(kKernel1);
  EXPECT_EQ(p.file, kKernel1);
  EXPECT_EQ(p.arch, "sunda");
  ASSERT_EQ(p.tensors.size(), 4u);
  EXPECT_EQ(p.tensors[0].name, "a");
  EXPECT_EQ(p.tensors[0].set_name, "a_set");
  EXPECT_EQ(p.tensors[0].kind, TensorKind::ExternalInput);
  EXPECT_EQ(p.tensors[0].mem, MemoryType::DRAM);
  EXPECT_TRUE(p.tensors[0].is_input());
  EXPECT_TRUE(p.tensors[1].is_output());
  EXPECT_EQ(p.tensors[2].name, "tile.7");
  EXPECT_EQ(p.tensors[2].mem, MemoryType::SB);
  for (const auto &t : p.tensors) {
    EXPECT_EQ(t.shape, (std::vector<int64_t>{10, 10}));
    EXPECT_EQ(t.partitions, 10);
    EXPECT_EQ(t.bytes_per_partition, 40);
    EXPECT_EQ(t.dtype, Dtype::float32);
    EXPECT_FALSE(t.allocated);
  }
  ASSERT_EQ(p.insts.size(), 3u);
  EXPECT_EQ(p.insts[0].type, InstructionType::Load);
  EXPECT_EQ(p.insts[1].type, InstructionType::TensorScalarPtr);
  EXPECT_EQ(p.insts[2].type, InstructionType::Save);
  EXPECT_EQ(p.insts[0].name, "I-2");
  EXPECT_EQ(p.insts[0].source_line, 9);
  EXPECT_EQ(p.insts[0].engine, Engine::Unassigned);
  const Inst &ts = p.insts[1];
  EXPECT_EQ(ts.f.op0, AluOp::subtract);
  EXPECT_EQ(ts.f.op1, AluOp::bypass);
  EXPECT_TRUE(ts.has(Field::op0));
  EXPECT_TRUE(ts.has(Field::reverse0));
  EXPECT_FALSE(ts.has(Field::const0));
  ASSERT_EQ(ts.ins.size(), 2u);
  EXPECT_EQ(ts.ins[1].kind, ArgKind::Immediate);
  EXPECT_EQ(ts.ins[1].json_kind, "symbolic_imm_value");
  EXPECT_EQ(ts.ins[1].imm, 1.0);
  EXPECT_EQ(ts.ins[1].immediate(nullptr), 1.0);
  const Arg &src = ts.ins[0];
  EXPECT_EQ(src.kind, ArgKind::AccessPattern);
  EXPECT_EQ(src.tensor, p.find_tensor("tile.9"));
  ASSERT_EQ(src.ap.size(), 3u);
  EXPECT_EQ(src.ap[0].step, 10);
  EXPECT_EQ(src.ap[0].num, 10);
  EXPECT_EQ(src.ap[1].step, 10);
  EXPECT_EQ(src.ap[1].num, 1);
  EXPECT_EQ(src.ap[2].step, 1);
  EXPECT_EQ(src.ap[2].num, 10);
  EXPECT_EQ(src.num_elements(), 100);
  EXPECT_TRUE(src.start.is_const());
  EXPECT_EQ(src.start.c, 0);
  EXPECT_EQ(p.insts[0].ins[0].tensor, p.find_tensor("a"));
  EXPECT_EQ(p.insts[2].outs[0].tensor, p.find_tensor("b"));
  EXPECT_EQ(p.body.size(), 3u);
  EXPECT_EQ(p.dynamic_count(), 3);
}

TEST(BirJson, Kernel1RoundTrips) {
  Program p = read_bir_file(kKernel1);
  Program q = parse_bir(to_bir_json(p), "rt.json");
  expect_same_program(p, q);
}

// ------------------------------------------------------------------------------------------------ loops
TEST(BirJson, LoopVariableDrivesSymbolicStart) {
  json allocs = {alloc("x", "DRAM", {8, 16}, "float32", "ExternalInput"), alloc("t", "SB", {2, 16})};
  json ld = {{"opcode", "Load"},
             {"name", "L"},
             {"engine", "Unassigned"},
             {"ins", {sym_ap("x_set", {{16, 2}, {1, 16}}, {aff({{aff_iv("i"), 2}}, 0), cst(0)}, {2, 16})}},
             {"outs", {sym_ap("t_set", {{16, 2}, {1, 16}}, {cst(0), cst(0)}, {2, 16})}}};
  Program p = load(module(allocs, {loop("i", 0, 4, 1, {ld})}));
  ASSERT_EQ(p.loop_vars, std::vector<std::string>{"i"});
  ASSERT_EQ(p.body.size(), 1u);
  EXPECT_EQ(p.body[0].kind, Node::Kind::Loop);
  EXPECT_EQ(p.body[0].ub, 4);
  EXPECT_EQ(p.dynamic_count(), 4);
  const Expr &start = p.insts[0].ins[0].start;
  EXPECT_FALSE(start.is_const());
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(start.eval(&i), 32 * i); // row 2i of a 16-wide tensor
  EXPECT_TRUE(p.insts[0].outs[0].start.is_const());
}

TEST(BirJson, NestedLoops) {
  Program p = load(nested_loop_kernel());
  ASSERT_EQ(p.loop_vars, (std::vector<std::string>{"i", "j"}));
  ASSERT_EQ(p.insts.size(), 4u);
  EXPECT_EQ(p.dynamic_count(), 4 * 4 * 4);
  ASSERT_EQ(p.body.size(), 1u);
  ASSERT_EQ(p.body[0].body.size(), 1u);
  EXPECT_EQ(p.body[0].body[0].kind, Node::Kind::Loop);
  EXPECT_EQ(p.body[0].body[0].body.size(), 4u);
  const Expr &start = p.insts[0].ins[0].start;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      int64_t lv[2] = {i, j};
      EXPECT_EQ(start.eval(lv), 128 * i + 16 * j);
      EXPECT_EQ(p.insts[3].outs[0].start.eval(lv), 128 * i + 16 * j);
    }
  EXPECT_EQ(p.insts[0].source_line, 7);
  EXPECT_EQ(p.insts[1].engine, Engine::DVE);
  EXPECT_EQ(p.insts[1].f.op, AluOp::add);
  EXPECT_EQ(p.insts[1].dependencies, std::vector<std::string>{"I-1"});
  EXPECT_EQ(p.insts[2].dependencies, std::vector<std::string>{"I-2"});
  EXPECT_EQ(p.insts[2].f.act_func, ActivationFunctionType::Relu);
  EXPECT_TRUE(p.insts[2].has(Field::act_func));
  EXPECT_FALSE(p.insts[2].has(Field::pool_func));
  EXPECT_EQ(p.tensors[4].mem, MemoryType::PSUM);
}

TEST(BirJson, NestedBlockAndPositiveStride) {
  json allocs = {alloc("t", "SB", {4, 8})};
  json ms = {{"opcode", "Memset"},
             {"name", "M"},
             {"mode", "Const"},
             {"constant", 3},
             {"ins", json::array()},
             {"outs", {sym_ap("t_set", {{8, 1}, {1, 8}}, {aff({{aff_iv("k"), 1}}, 0), cst(0)}, {4, 8})}}};
  json inner_block = {{"name", "inner"}, {"instructions", {ms}}};
  Program p = load(module(allocs, {loop("k", 0, 4, 1, {inner_block})}));
  EXPECT_EQ(p.dynamic_count(), 4);
  EXPECT_EQ(p.insts[0].f.memset_mode, MemsetMode::Const);
  EXPECT_TRUE(p.insts[0].has(Field::memset_mode));
  EXPECT_FALSE(p.insts[0].has(Field::tsc_mode));
  EXPECT_EQ(p.insts[0].f.constant, 3.0);
  int64_t k = 2;
  EXPECT_EQ(p.insts[0].outs[0].start.eval(&k), 16);
  // A negative stride is refused by name (a Loop counts up; it is not guessed at).
  expect_input_error(module(allocs, {loop("k", 3, -1, -1, {inner_block})}),
                     {"Loop 'k'", "field 'LoopAxis.stride'", "loop stride is -1: it must be positive"});
}

// ------------------------------------------------------------------------------------------------
// expressions
TEST(BirJson, V2ExpressionKinds) {
  json allocs = {alloc("t", "SB", {1, 1000})};
  auto with_addr = [&](json e) {
    json ms = {
        {"opcode", "Memset"},   {"name", "M"},
        {"mode", "Const"},      {"constant", 0},
        {"ins", json::array()}, {"outs", {sym_ap("t_set", {{1000, 1}, {1, 4}}, {cst(0), e}, {1, 1000})}}};
    return load(module(allocs, {loop("i", 0, 10, 1, {ms})})).insts[0].outs[0].start;
  };
  json iv = aff({{aff_iv("i"), 1}}, 0);
  Expr sum =
      with_addr({{"kind", "SumKind"}, {"n_terms", 2}, {"terms", {aff({{aff_iv("i"), 3}}, 0), cst(5)}}});
  Expr mult = with_addr({{"kind", "MultKind"}, {"var", iv}, {"scale", 7}});
  Expr fdiv = with_addr({{"kind", "FloorDivKind"}, {"numer", iv}, {"denom", 4}});
  Expr mod = with_addr({{"kind", "ModuloKind"}, {"numer", aff({{aff_iv("i"), 1}}, 1)}, {"denom", 3}});
  Expr ccmod = with_addr({{"kind", "CCModKind"}, {"numer", iv}, {"denom", 2}});
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(sum.eval(&i), 3 * i + 5);
    EXPECT_EQ(mult.eval(&i), 7 * i);
    EXPECT_EQ(fdiv.eval(&i), i / 4);
    EXPECT_EQ(mod.eval(&i), (i + 1) % 3);
    EXPECT_EQ(ccmod.eval(&i), i % 2);
  }
  Expr reg = with_addr({{"kind", "IntRuntimeValueKind"}, {"regref", "r3"}});
  EXPECT_EQ(reg.kind, Expr::Kind::Register);
  EXPECT_EQ(reg.regref, "r3");
}

TEST(BirJson, V1ExpressionForms) {
  json allocs = {alloc("t", "SB", {1, 1000})};
  auto with_addr = [&](json e) {
    json ms = {
        {"opcode", "Memset"},   {"name", "M"},
        {"mode", "Const"},      {"constant", 0},
        {"ins", json::array()}, {"outs", {sym_ap("t_set", {{1000, 1}, {1, 4}}, {cst(0), e}, {1, 1000})}}};
    return load(module(allocs, {loop("i", 0, 10, 1, {ms})}, /*version=*/1)).insts[0].outs[0].start;
  };
  Expr affine = with_addr({{"terms", {{{"AxisLabel", "i"}, {"coef", 2}}}}, {"c", 1}});
  Expr mod =
      with_addr({{"terms", {{{"AxisLabel", "i"}, {"coef", 1}}}}, {"c", 0}, {"op", "Mod"}, {"op_param", 4}});
  Expr div =
      with_addr({{"terms", {{{"AxisLabel", "i"}, {"coef", 3}}}}, {"c", 0}, {"op", "Div"}, {"op_param", 2}});
  Expr c = with_addr({{"terms", json::array()}, {"c", 9}});
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(affine.eval(&i), 2 * i + 1);
    EXPECT_EQ(mod.eval(&i), i % 4);
    EXPECT_EQ(div.eval(&i), 3 * i / 2);
  }
  EXPECT_TRUE(c.is_const());
  EXPECT_EQ(c.c, 9);
}

TEST(BirJson, AddrsFallBackToAccessShape) {
  // Three addrs for a 2-D tensor: the strides come from access_shape [2, 4, 8] (the reader's documented
  // fallback).
  json allocs = {alloc("t", "SB", {2, 32})};
  json ms = {{"opcode", "Memset"},
             {"name", "M"},
             {"mode", "Const"},
             {"constant", 0},
             {"ins", json::array()},
             {"outs", {sym_ap("t_set", {{32, 2}, {1, 8}}, {cst(1), cst(2), cst(3)}, {2, 4, 8})}}};
  Program p = load(module(allocs, {ms}));
  EXPECT_EQ(p.insts[0].outs[0].start.c, 1 * 32 + 2 * 8 + 3);
}

// ------------------------------------------------------------------------------------------------ arguments
TEST(BirJson, EveryArgumentKind) {
  json allocs = {alloc("t", "SB", {4, 8}), alloc("o", "SB", {4, 8}), {{"Skind", "register"}, {"name", "r0"}}};
  json ap = {{8, 4}, {1, 8}};
  json ins = {phys_ap("t", ap, 3),
              {{"kind", "symbolic_pwap"},
               {"dtype", "bfloat16"},
               {"memsetref", "t_set"},
               {"ap", {{{"step", 8}, {"num", 4}}, {{"step", 1}, {"num", 8}}}},
               {"addrs", {cst(1), cst(2)}},
               {"access_shape", {4, 8}}},
              {{"kind", "register_ap"},
               {"dtype", "float32"},
               {"memsetref", "t_set"},
               {"ap", ap},
               {"regref", "r0"},
               {"reg_ap_offset", "r1"}},
              {{"kind", "register_access"}, {"dtype", "int32"}, {"regref", "r0"}},
              {{"kind", "imm_value"}, {"dtype", "float32"}, {"value", "nan"}},
              {{"kind", "imm_value"}, {"dtype", "float32"}, {"value", "-inf"}},
              {{"kind", "imm_value"}, {"dtype", "int32"}, {"value", 7}},
              {{"kind", "imm_array"}, {"dtype", "float32"}, {"value_array", {1.5, 2.5, 3}}},
              {{"kind", "symbolic_imm_value"},
               {"dtype", "float32"},
               {"value_list", {10.0, 20.0, 30.0}},
               {"expr", aff({{aff_iv("i"), 1}}, 0)}},
              {{"kind", "symbolic_imm_value"},
               {"dtype", "float32"},
               {"value_list", {{{"value", 4.0}}, {{"value", 5.0}}}},
               {"expr", cst(1)}}};
  json inst = {{"opcode", "GenericCopy"}, {"name", "G"}, {"ins", ins}, {"outs", {phys_ap("o", ap)}}};
  Program p = load(module(allocs, {loop("i", 0, 3, 1, {inst})}));
  const auto &a = p.insts[0].ins;
  ASSERT_EQ(a.size(), 10u);
  EXPECT_EQ(a[0].kind, ArgKind::AccessPattern);
  EXPECT_EQ(a[0].start.c, 3);
  EXPECT_EQ(a[1].json_kind, "symbolic_pwap");
  EXPECT_EQ(a[1].dtype, Dtype::bfloat16);
  EXPECT_EQ(a[1].start.c, 1 * 8 + 2);
  EXPECT_EQ(a[1].ap[0].step, 8);
  EXPECT_EQ(a[2].kind, ArgKind::Register);
  EXPECT_EQ(a[2].reg, "r0");
  EXPECT_EQ(a[2].tensor, 0);
  EXPECT_EQ(a[2].start.kind, Expr::Kind::Register);
  EXPECT_EQ(a[2].start.regref, "r1");
  EXPECT_EQ(a[3].kind, ArgKind::Register);
  EXPECT_EQ(a[3].tensor, -1);
  EXPECT_EQ(a[3].dtype, Dtype::int32);
  EXPECT_TRUE(std::isnan(a[4].imm));
  EXPECT_EQ(a[5].imm, -INFINITY);
  EXPECT_EQ(a[6].imm, 7.0);
  EXPECT_EQ(a[7].kind, ArgKind::ImmArray);
  EXPECT_EQ(a[7].imm_array, (std::vector<double>{1.5, 2.5, 3.0}));
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(a[8].immediate(&i), 10.0 * (i + 1));
  EXPECT_EQ(a[9].imm, 5.0); // a constant selector resolves at read time
}

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

// ------------------------------------------------------------------------------------------------ round trip
TEST(BirJson, WriteReadRoundTripWithLoops) {
  Program p = load(nested_loop_kernel());
  json j = to_bir_json(p);
  EXPECT_EQ(j["version"], 2);
  EXPECT_EQ(j["functions"][0]["blocks"][0]["instructions"][0]["opcode"], "Loop");
  EXPECT_EQ(j["functions"][0]["allocations"][0]["Skind"], "memory_location_set");
  Program q = parse_bir(j, "rt.json");
  expect_same_program(p, q);
  // and the writer is stable: writing the re-read program gives the same document
  EXPECT_EQ(to_bir_json(q), j);
}

TEST(BirJson, RoundTripEveryArgumentKindAndExpression) {
  json allocs = {alloc("t", "SB", {4, 8}), alloc("o", "PSUM", {4, 8})};
  json ap = {{8, 4}, {1, 8}};
  json iv = aff({{aff_iv("i"), 1}}, 0);
  json ins = {
      phys_ap("t", ap, 3),
      sym_ap("t_set", ap,
             {cst(0),
              {{"kind", "SumKind"},
               {"n_terms", 2},
               {"terms", {iv, {{"kind", "MultKind"}, {"var", iv}, {"scale", 3}}}}}},
             {4, 8}),
      sym_ap("t_set", ap, {cst(0), {{"kind", "ModuloKind"}, {"numer", iv}, {"denom", 3}}}, {4, 8}),
      {{"kind", "register_ap"},
       {"dtype", "float32"},
       {"memsetref", "t_set"},
       {"ap", ap},
       {"regref", "r0"},
       {"const_ap_offset", 4}},
      {{"kind", "register_access"}, {"dtype", "int32"}, {"regref", "r0"}},
      {{"kind", "imm_value"}, {"dtype", "float32"}, {"value", "inf"}},
      {{"kind", "imm_array"}, {"dtype", "float32"}, {"value_array", {1.5, 2.5}}},
      {{"kind", "symbolic_imm_value"}, {"dtype", "float32"}, {"value_list", {1.0, 2.0}}, {"expr", iv}}};
  json body = {{{"opcode", "GenericCopy"}, {"name", "G"}, {"ins", ins}, {"outs", {phys_ap("o", ap)}}},
               {{"opcode", "Iota"},
                {"name", "Io"},
                {"pattern", {{{"step", 1}, {"num", 8}}}},
                {"base", 2},
                {"ins", json::array()},
                {"outs", {phys_ap("t", ap)}}},
               {{"opcode", "DMACopy"},
                {"name", "D"},
                {"mode", "Transpose"},
                {"queue", "q0"},
                {"constants", {"nan", 1.0}},
                {"replica_groups", {{0, 1}, {2, 3}}},
                {"ins", {phys_ap("t", ap)}},
                {"outs", {phys_ap("o", ap)}}},
               {{"opcode", "CoreBarrier"}, {"name", "B"}, {"id", 3}, {"cores", {0, 1}}}};
  Program p = load(
      module(allocs, {loop("i", 0, 3, 1, body), loop("i", 0, 2, 1, {{{"opcode", "NoOp"}, {"name", "N"}}})}));
  EXPECT_EQ(p.loop_vars, std::vector<std::string>{"i"}); // sequential loops of one name share the variable
  EXPECT_EQ(p.insts[2].f.copy_mode, CopyMode::Transpose);
  EXPECT_EQ(p.insts[3].f.barrier_id, 3);
  Program q = parse_bir(to_bir_json(p), "rt.json");
  expect_same_program(p, q);
}

TEST(BirJson, BuilderProgramRoundTrips) {
  // A program made in C++ (as the builder API will): no json_kind on its arguments.
  Program p;
  p.arch = "gen3";
  Tensor a;
  a.name = "a";
  a.set_name = "a_set";
  a.kind = TensorKind::ExternalInput;
  a.shape = {4, 8};
  a.partitions = 4;
  a.bytes_per_partition = 32;
  p.tensors.push_back(a);
  p.loop_vars = {"k"};
  Inst in;
  in.type = InstructionType::Activation;
  in.name = "act";
  in.engine = Engine::Activation;
  in.f.act_func = ActivationFunctionType::Exp;
  in.given.set(static_cast<int>(Field::act_func));
  Arg src;
  src.tensor = 0;
  src.ap = {{8, 4}, {1, 2}};
  src.start.kind = Expr::Kind::Affine;
  Expr lv;
  lv.kind = Expr::Kind::LoopVar;
  lv.var = 0;
  src.start.kids = {lv};
  src.start.coeffs = {2};
  Arg dst = src;
  dst.start = Expr::constant(0);
  in.ins = {src};
  in.outs = {dst};
  in.index = 0;
  p.insts.push_back(in);
  Node loopn;
  loopn.kind = Node::Kind::Loop;
  loopn.var = 0;
  loopn.lb = 0;
  loopn.ub = 4;
  Node n;
  n.inst = 0;
  loopn.body = {n};
  p.body = {loopn};
  Program q = parse_bir(to_bir_json(p), "rt.json");
  EXPECT_EQ(q.insts[0].ins[0].json_kind, "symbolic_ap");
  EXPECT_EQ(q.insts[0].outs[0].json_kind, "physical_ap");
  p.insts[0].ins[0].json_kind = "symbolic_ap";
  p.insts[0].outs[0].json_kind = "physical_ap";
  expect_same_program(p, q);
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
