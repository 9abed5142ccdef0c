// BIR JSON writer (isa/bir/writer.cpp): write -> read round trips with loops, every argument kind and
// expression, and a builder-made program.
#include <gtest/gtest.h>

#include "isa/bir_json_support.hpp"

using namespace neuronsim;
using namespace neuronsim::isa;
using namespace bir_json_test;
using json = nlohmann::json;

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
