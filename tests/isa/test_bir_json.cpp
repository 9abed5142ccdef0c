// BIR JSON reader (isa/bir/): the real compiler sample, loops and their expressions, every argument kind.
#include <gtest/gtest.h>

#include <cmath>

#include "isa/bir_json_support.hpp"

using namespace neuronsim;
using namespace neuronsim::isa;
using namespace bir_json_test;
using json = nlohmann::json;

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
