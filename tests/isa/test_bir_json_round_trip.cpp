// BIR JSON writer (isa/bir/writer.cpp): write -> read round trips with loops, every argument kind and
// expression, and a builder-made program.
#include <algorithm>
#include <tuple>
#include <utility>

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

// debug.nki (docs/bir-format.md section 6): the NKI front end's loops, local tiles and reduction on an instruction,
// the tile an allocation holds, are read and written back unchanged, so a re-written BIR is sanitized as the
// original (docs/sanitizer.md).
TEST(BirJson, NkiDebugInfoRoundTrips) {
  json t = alloc("t", "SB", {4, 8});
  t["debug"]["nki"] = {{"shape", {4, 8}}, {"pdim", 0}, {"buffers", 2}, {"cols", 8}};
  json ap = {{8, 4}, {1, 8}};
  json nki = {{"loops",
               {{{"id", 3}, {"kind", "affine"}, {"lineno", 12}, {"var", "k"}, {"start", 1}, {"step", 2},
                 {"trip", aff({{aff_iv("i"), 1}}, 0)}},
                {{"id", 4}, {"kind", "sequential"}, {"trip", 5}}}},
              {"local", {0, 2}},
              {"reduce", "max"},
              {"reduce_in", 0}};
  json body = {{{"opcode", "GenericCopy"},
                {"name", "G"},
                {"ins", {phys_ap("t", ap)}},
                {"outs", {phys_ap("t", ap)}},
                {"debug", {{"lineno", 14}, {"filename", "k.py"}, {"nki", nki}}}}};
  const Program p = load(module({t}, {loop("i", 0, 3, 1, body)}));
  const auto it = std::find_if(p.insts.begin(), p.insts.end(), [](const Inst &i) { return i.name == "G"; });
  ASSERT_NE(it, p.insts.end());
  const Inst &g = *it;
  ASSERT_TRUE(g.nki);
  ASSERT_EQ(g.nki->loops.size(), 2u);
  EXPECT_EQ(g.nki->loops[0].id, 3);
  EXPECT_EQ(g.nki->loops[0].kind, NkiLoop::Kind::Affine);
  EXPECT_EQ((std::tuple(g.nki->loops[0].line, g.nki->loops[0].var, g.nki->loops[0].start, g.nki->loops[0].step)),
            (std::tuple(12, std::string("k"), int64_t(1), int64_t(2))));
  EXPECT_EQ(g.nki->loops[1].kind, NkiLoop::Kind::Sequential);
  EXPECT_EQ(g.nki->local, (std::vector<int>{0, 2}));
  EXPECT_EQ((std::pair(g.nki->reduce, g.nki->reduce_in)), (std::pair(std::string("max"), 0)));
  ASSERT_TRUE(p.tensors[0].nki);
  EXPECT_EQ(p.tensors[0].nki->buffers, 2);
  const json j = to_bir_json(p);
  const json &w = j["functions"][0]["blocks"][0]["instructions"][0]["blocks"][0]["instructions"][0];
  EXPECT_EQ(w["debug"]["nki"]["local"], nki["local"]);
  EXPECT_EQ(w["debug"]["nki"]["reduce"], "max");
  EXPECT_EQ(j["functions"][0]["allocations"][0]["debug"]["nki"], t["debug"]["nki"]);
  // The re-read program writes the same document.
  EXPECT_EQ(to_bir_json(parse_bir(j, "rt.json")), j);
}
