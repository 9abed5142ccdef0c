// Call / NKIKernel (callee expanded in place), DMATrigger / DMABlock (software-DGE descriptor lists), Switch- /
// ResetQueueInstance (trigger cursors) and branches between the blocks of a loop body, written as BIR JSON and run
// end to end through the BIR reader, the scheduler and the SystemC core. Reference
// neuronx-cc/bir/sim-control-sync-customop.md 2.4, 2.5, 5.1, 5.2, 6.2 and sim-bn-rng-collective-dma.md. Every
// expected value below is worked out by hand in its comment.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "neuronsim/builder.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/simulator.hpp"

using namespace neuronsim;
using json = nlohmann::json;
using isa::InstructionType;

namespace {

// A 2 x 4 fp32 allocation of the given kind in DRAM (or SB).
json alloc(const std::string &name, const std::string &kind, const std::string &type = "DRAM") {
  return {{"Skind", "memory_location_set"},
          {"name", name + "_set"},
          {"kind", kind},
          {"dtype", "float32"},
          {"tensor_shape", {2, 4}},
          {"memorylocations",
           json::array({{{"Skind", "memory_location"}, {"name", name}, {"type", type}, {"dims", {2, 16}}}})}};
}

json ap(const std::string &t, int64_t offset = 0, int64_t n = 4) {
  return {{"kind", "physical_ap"}, {"memref", t}, {"ap", {{4, 2}, {1, n}}}, {"offset", offset}, {"dtype", "float32"}};
}

json inst(const std::string &name, const std::string &opcode, json ins, json outs) {
  return {{"name", name}, {"opcode", opcode}, {"engine", "Unassigned"}, {"ins", ins}, {"outs", outs}};
}

json imm(double v) { return {{"kind", "imm_value"}, {"value", v}, {"dtype", "float32"}}; }

// out = in * k: load into an SBUF tile, multiply by an immediate, save.
json scale_function(const std::string &fname, double k, bool with_return) {
  json insts = json::array({inst("ld", "Load", json::array({ap("x")}), json::array({ap("t")})),
                            inst("mul", "TensorScalarPtr", json::array({ap("t"), imm(k)}), json::array({ap("t")})),
                            inst("st", "Save", json::array({ap("t")}), json::array({ap("y")}))});
  insts[1]["op0"] = "mult";
  insts[1]["op1"] = "bypass";
  insts[1]["reverse0"] = insts[1]["reverse1"] = false;
  if (with_return) insts.push_back(inst("ret", "Return", json::array(), json::array()));
  return {{"name", fname},
          {"allocations", json::array({alloc("x", "ExternalInput"), alloc("y", "ExternalOutput"), alloc("t", "Internal", "SB")})},
          {"blocks", json::array({{{"name", "entry"}, {"instructions", insts}}})}};
}

json module(json main_insts, json main_allocs, json others = json::array(), json nki = json()) {
  json m = {{"version", 2},
            {"functions", json::array({{{"name", "main"}, {"allocations", main_allocs},
                                        {"blocks", json::array({{{"name", "b0"}, {"instructions", main_insts}}})}}})}};
  for (auto &f : others) m["functions"].push_back(f);
  if (!nki.is_null()) m["nki_functions"] = {{"functions", nki}};
  return m;
}

void fill(sim::Simulator &s, int tensor, float base) {
  auto &v = s.memory().dram(tensor);
  for (int i = 0; i < 8; ++i) {
    const float x = base + static_cast<float>(i);
    std::memcpy(&v[static_cast<size_t>(i) * 4], &x, 4);
  }
}

std::string error_of(const json &m) {
  try {
    isa::Program p = isa::parse_bir(m, "t.json");
    sim::Simulator s(p, {});
    s.run();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

// Two calls of one function with different arguments, and an NKIKernel whose sub-function ends in Return.
//   o1 = scale2(a) = 2a = {2, 4, ..., 16} (a = 1..8), o2 = scale2(b) = 2b = {20, 22, ..., 34} (b = 10..17),
//   o3 = nki scale3(a) = 3a = {3, 6, ..., 24}.
TEST(Calls, CallAndNkiKernelRunTheirCalleeWithTheCallersTensors) {
  json main_insts = json::array({inst("c1", "Call", json::array({ap("a")}), json::array({ap("o1")})),
                                 inst("c2", "Call", json::array({ap("b")}), json::array({ap("o2")})),
                                 inst("k1", "NKIKernel", json::array({ap("a")}), json::array({ap("o3")}))});
  main_insts[0]["target"] = "scale2";
  main_insts[1]["target"] = "scale2";
  main_insts[2]["func"] = "scale3";
  json m = module(main_insts,
                  json::array({alloc("a", "ExternalInput"), alloc("b", "ExternalInput"), alloc("o1", "ExternalOutput"),
                               alloc("o2", "ExternalOutput"), alloc("o3", "ExternalOutput")}),
                  json::array({scale_function("scale2", 2.0, false)}), json::array({scale_function("scale3", 3.0, true)}));
  isa::Program p = isa::parse_bir(m, "calls.json");
  ASSERT_EQ(p.body.size(), 3u);
  EXPECT_EQ(p.body[0].kind, isa::Node::Kind::Call);
  EXPECT_EQ(p.body[2].kind, isa::Node::Kind::Call);
  EXPECT_EQ(p.insts[static_cast<size_t>(p.body[0].body[1].inst)].name, "c1/mul");
  sim::Simulator s(p, {});
  fill(s, 0, 1.0f);
  fill(s, 1, 10.0f);
  auto r = s.run();
  // 3 call instructions + 3 + 3 + 4 callee instructions.
  EXPECT_EQ(r.dynamic_instructions, 13);
  const auto o1 = sim::tensor_f32(p, s.memory(), 2), o2 = sim::tensor_f32(p, s.memory(), 3),
             o3 = sim::tensor_f32(p, s.memory(), 4);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(o1[static_cast<size_t>(i)], 2.0f * static_cast<float>(1 + i)) << i;
    EXPECT_EQ(o2[static_cast<size_t>(i)], 2.0f * static_cast<float>(10 + i)) << i;
    EXPECT_EQ(o3[static_cast<size_t>(i)], 3.0f * static_cast<float>(1 + i)) << i;
  }
  // Written back, the callees come along and the program reads the same.
  isa::Program again = isa::parse_bir(isa::to_bir_json(p), "again.json");
  EXPECT_EQ(again.insts.size(), p.insts.size());
  EXPECT_EQ(again.tensors.size(), p.tensors.size());
  EXPECT_EQ(again.callees.size(), 2u);
}

// The callee has its own CFG: entry branches over `mid` (the doubling) to `tail`, whose Return ends the call
// before a second multiply; the caller then goes on. o1 = a (1..8, not doubled), o2 = a copied after the call.
TEST(Calls, ACalleesBranchesNameItsOwnBlocksAndReturnEndsOnlyTheCall) {
  json f = scale_function("f", 2.0, false);
  json insts = f["blocks"][0]["instructions"];
  json br = inst("br", "UnconditionalBranch", json::array(), json::array());
  br["target"] = "tail";
  json mul2 = insts[1];
  mul2["name"] = "mul2";
  f["blocks"] = json::array({{{"name", "entry"}, {"instructions", json::array({insts[0], br})}},
                             {{"name", "mid"}, {"instructions", json::array({insts[1]})}},
                             {{"name", "tail"}, {"instructions", json::array({insts[2], inst("ret", "Return", json::array(), json::array()), mul2})}}});
  json c = inst("c", "Call", json::array({ap("a")}), json::array({ap("o1")}));
  c["target"] = "f";
  json after = inst("after", "DMACopy", json::array({ap("a")}), json::array({ap("o2")}));
  json m = module(json::array({c, after}),
                  json::array({alloc("a", "ExternalInput"), alloc("o1", "ExternalOutput"), alloc("o2", "ExternalOutput")}),
                  json::array({f}));
  isa::Program p = isa::parse_bir(m, "cfg.json");
  sim::Simulator s(p, {});
  fill(s, 0, 1.0f);
  auto r = s.run();
  // call, ld, br, st, ret, then the caller's copy.
  EXPECT_EQ(r.dynamic_instructions, 6);
  const auto o1 = sim::tensor_f32(p, s.memory(), 1), o2 = sim::tensor_f32(p, s.memory(), 2);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(o1[static_cast<size_t>(i)], static_cast<float>(1 + i)) << i;
    EXPECT_EQ(o2[static_cast<size_t>(i)], static_cast<float>(1 + i)) << i;
  }
}

TEST(Calls, BadCallsNameTheField) {
  json allocs = json::array({alloc("a", "ExternalInput"), alloc("o1", "ExternalOutput")});
  json c = inst("c1", "Call", json::array({ap("a")}), json::array({ap("o1")}));
  c["target"] = "nowhere";
  std::string e = error_of(module(json::array({c}), allocs));
  EXPECT_NE(e.find("instruction 0 'c1'"), std::string::npos) << e;
  EXPECT_NE(e.find("target"), std::string::npos) << e;
  EXPECT_NE(e.find("no function named 'nowhere'"), std::string::npos) << e;
  // One argument short.
  c["target"] = "scale2";
  c["outs"] = json::array();
  e = error_of(module(json::array({c}), allocs, json::array({scale_function("scale2", 2.0, false)})));
  EXPECT_NE(e.find("unbound"), std::string::npos) << e;
  // A partial tensor as an argument.
  c["outs"] = json::array({ap("o1", 0, 2)});
  e = error_of(module(json::array({c}), allocs, json::array({scale_function("scale2", 2.0, false)})));
  EXPECT_NE(e.find("outs[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("whole tensor"), std::string::npos) << e;
  // A function that calls itself.
  json f = scale_function("scale2", 2.0, false);
  json self = inst("again", "Call", json::array({ap("x")}), json::array({ap("y")}));
  self["target"] = "scale2";
  f["blocks"][0]["instructions"].push_back(self);
  c["outs"] = json::array({ap("o1")});
  e = error_of(module(json::array({c}), allocs, json::array({f})));
  EXPECT_NE(e.find("calls itself"), std::string::npos) << e;
  // An NKIKernel without its function (birsim: "I.getFunc() != nullptr").
  json k = inst("k", "NKIKernel", json::array({ap("a")}), json::array({ap("o1")}));
  e = error_of(module(json::array({k}), allocs));
  EXPECT_NE(e.find("'func'"), std::string::npos) << e;
}

namespace {

// DRAM a (2 x 4) holds 1..8; three DMABlocks each copy one element column into o:
//   blk0: o[:, 0] = a[:, 0], blk1: o[:, 1] = a[:, 1], blk2: o[:, 2] = a[:, 2].
json block(const std::string &name, int col) {
  json b = {{"name", name}, {"opcode", "DMABlock"}, {"queue", "q0"}};
  json d = inst(name + ".d", "DMADescriptorCopy", json::array({ap("a", col, 1)}), json::array({ap("o", col, 1)}));
  b["blocks"] = json::array({{{"name", name + "-body"}, {"instructions", json::array({d})}}});
  return b;
}

json trigger(const std::string &name) {
  json t = inst(name, "DMATrigger", json::array(), json::array());
  t["queue"] = "q0";
  t["dma_blocks"] = {"blk0", "blk1", "blk2"};
  return t;
}

std::vector<float> run_triggers(json insts, int64_t *dynamic = nullptr) {
  json body = json::array({block("blk0", 0), block("blk1", 1), block("blk2", 2)});
  for (auto &i : insts) body.push_back(i);
  json m = module(body, json::array({alloc("a", "ExternalInput"), alloc("o", "ExternalOutput")}));
  isa::Program p = isa::parse_bir(m, "dma.json");
  sim::Simulator s(p, {});
  fill(s, 0, 1.0f);
  // o starts at -1 everywhere, so an element no block copied shows.
  auto &o = s.memory().dram(1);
  for (int i = 0; i < 8; ++i) {
    const float x = -1.0f;
    std::memcpy(&o[static_cast<size_t>(i) * 4], &x, 4);
  }
  auto r = s.run();
  if (dynamic) *dynamic = r.dynamic_instructions;
  return sim::tensor_f32(p, s.memory(), 1);
}

} // namespace

// Two fires of one trigger run blk0 then blk1: columns 0 and 1 copied ({1, 2, -1, -1, 5, 6, -1, -1}); the
// blocks do nothing where they are defined (a trigger names them).
TEST(DmaTrigger, EachFireRunsTheNextBlock) {
  int64_t n = 0;
  const auto o = run_triggers(json::array({trigger("t0"), trigger("t0b")}), &n);
  // Both instructions are distinct triggers with their own cursors: each fires blk0.
  EXPECT_EQ(o, (std::vector<float>{1, -1, -1, -1, 5, -1, -1, -1}));
  // 2 triggers + 2 x (block marker + descriptor).
  EXPECT_EQ(n, 6);
}

TEST(DmaTrigger, ALoopedTriggerWalksItsBlocksRoundRobinAndResetRewinds) {
  // for j in 0..2: { for i in 0..2: t0 fires; <between> }. The one trigger instruction fires four times:
  // blk0, blk1, then (cursor rewound by the reset) blk0, blk1 again: column 2 is never copied.
  // Without a rewind the third and fourth fires are blk2, blk0: column 2 is copied.
  auto program = [](json between) {
    json inner = {{"opcode", "Loop"},
                  {"LoopAxis", {{"name", "i"}, {"lb", 0}, {"ub", 2}, {"stride", 1}}},
                  {"blocks", json::array({{{"name", "li"}, {"instructions", json::array({trigger("t0")})}}})}};
    json body = json::array({inner});
    if (!between.is_null()) body.push_back(between);
    return json::array({{{"opcode", "Loop"},
                         {"LoopAxis", {{"name", "j"}, {"lb", 0}, {"ub", 2}, {"stride", 1}}},
                         {"blocks", json::array({{{"name", "lj"}, {"instructions", body}}})}}});
  };
  const std::vector<float> rewound{1, 2, -1, -1, 5, 6, -1, -1}, on{1, 2, 3, -1, 5, 6, 7, -1};
  json reset = inst("rst", "ResetQueueInstance", json::array(), json::array());
  reset["queue"] = "q0";
  int64_t n = 0;
  EXPECT_EQ(run_triggers(program(reset), &n), rewound);
  EXPECT_EQ(n, 4 * 3 + 2);  // 4 x (trigger + block marker + descriptor) + 2 resets
  EXPECT_EQ(run_triggers(program(json())), on);
  // SwitchQueueInstance naming one of the trigger's blocks rewinds it too, unless no_rearm.
  json sw = inst("sw", "SwitchQueueInstance", json::array(), json::array());
  sw["instance_name"] = "blk1";
  EXPECT_EQ(run_triggers(program(sw)), rewound);
  sw["no_rearm"] = true;
  EXPECT_EQ(run_triggers(program(sw)), on);
  // A reset on another queue leaves q0's trigger alone.
  reset["queue"] = "q7";
  EXPECT_EQ(run_triggers(program(reset)), on);
}

TEST(DmaTrigger, BlocksAndTriggersRoundTripThroughBirJson) {
  json body = json::array({block("blk0", 0), block("blk1", 1), block("blk2", 2), trigger("t0")});
  json m = module(body, json::array({alloc("a", "ExternalInput"), alloc("o", "ExternalOutput")}));
  isa::Program p = isa::parse_bir(m, "dma.json");
  isa::Program q = isa::parse_bir(isa::to_bir_json(p), "again.json");
  ASSERT_EQ(q.body.size(), 4u);
  EXPECT_EQ(q.body[1].kind, isa::Node::Kind::DMABlock);
  EXPECT_EQ(q.body[1].name, "blk1");
  ASSERT_EQ(q.body[1].body.size(), 1u);
  EXPECT_EQ(q.insts[static_cast<size_t>(q.body[1].body[0].inst)].type, InstructionType::DMADescriptorCopy);
  EXPECT_EQ(q.insts[static_cast<size_t>(q.body[3].inst)].f.dma_blocks, (std::vector<std::string>{"blk0", "blk1", "blk2"}));
}

TEST(DmaTrigger, ABlockNoTriggerNamesRunsInPlace) {
  json body = json::array({block("blk0", 0)});
  json m = module(body, json::array({alloc("a", "ExternalInput"), alloc("o", "ExternalOutput")}));
  isa::Program p = isa::parse_bir(m, "dma.json");
  sim::Simulator s(p, {});
  fill(s, 0, 1.0f);
  s.run();
  const auto o = sim::tensor_f32(p, s.memory(), 1);
  EXPECT_EQ(o[0], 1.0f);
  EXPECT_EQ(o[4], 5.0f);
}

TEST(DmaTrigger, UnknownBlocksAreRefusedByName) {
  json t = trigger("t0");
  t["dma_blocks"] = {"blk0", "nope"};
  json m = module(json::array({block("blk0", 0), t}), json::array({alloc("a", "ExternalInput"), alloc("o", "ExternalOutput")}));
  std::string e = error_of(m);
  EXPECT_NE(e.find("dma_blocks[1]"), std::string::npos) << e;
  EXPECT_NE(e.find("no DMABlock named 'nope'"), std::string::npos) << e;
  // A compute instruction inside a DMABlock.
  json b = block("blk0", 0);
  b["blocks"][0]["instructions"].push_back(inst("x", "TensorTensor", json::array({ap("a"), ap("a")}), json::array({ap("o")})));
  b["blocks"][0]["instructions"].back()["op"] = "add";
  e = error_of(module(json::array({b}), json::array({alloc("a", "ExternalInput"), alloc("o", "ExternalOutput")})));
  EXPECT_NE(e.find("only DMA instructions"), std::string::npos) << e;
}

namespace {

// t (2 x 4, SB) += k, as a TensorScalarPtr.
json add_to(const std::string &name, double k) {
  json i = inst(name, "TensorScalarPtr", json::array({ap("t"), imm(k)}), json::array({ap("t")}));
  i["op0"] = "add";
  i["op1"] = "bypass";
  i["reverse0"] = i["reverse1"] = false;
  return i;
}

json reg_arg(const std::string &r) { return {{"kind", "register_access"}, {"regref", r}, {"dtype", "int32"}}; }

} // namespace

// Branches between the blocks of a loop body (birsim runs a loop's blocks under its CFG driver, reference
// sim-control-sync-customop.md 2.5). r = 0; t = 0; for i in 0..4 {
//   head: r += 1; t += 10; CompareAndBranch r > 2 ? tail : mid
//   mid:  t += 1; UnconditionalBranch tail
//   skip: t += 100            (never reached)
//   tail: t += 1000 }
// Iterations r = 1, 2 take mid, r = 3, 4 jump to tail: t = 4 x 10 + 2 x 1 + 4 x 1000 = 4042.
TEST(Control, BranchesBetweenTheBlocksOfALoopBody) {
  json cb = inst("cb", "CompareAndBranch", json::array({reg_arg("r1"), {{"kind", "imm_value"}, {"value", 2}, {"dtype", "int32"}}}),
                 json::array());
  cb["comp_op"] = "IS_GTIMM";
  cb["on_true"] = "tail";
  cb["on_false"] = "mid";
  json inc = inst("inc", "RegisterAlu", json::array({reg_arg("r1"), {{"kind", "imm_value"}, {"value", 1}, {"dtype", "int32"}}}),
                  json::array({reg_arg("r1")}));
  inc["op"] = "add";
  json br = inst("br", "UnconditionalBranch", json::array(), json::array());
  br["target"] = "tail";
  json loop = {{"opcode", "Loop"},
               {"LoopAxis", {{"name", "i"}, {"lb", 0}, {"ub", 4}, {"stride", 1}}},
               {"blocks", json::array({{{"name", "head"}, {"instructions", json::array({inc, add_to("a10", 10), cb})}},
                                      {{"name", "mid"}, {"instructions", json::array({add_to("a1", 1), br})}},
                                      {{"name", "skip"}, {"instructions", json::array({add_to("a100", 100)})}},
                                      {{"name", "tail"}, {"instructions", json::array({add_to("a1000", 1000)})}}})}};
  json r0 = inst("r0", "RegisterMove", json::array({{{"kind", "imm_value"}, {"value", 0}, {"dtype", "int32"}}}),
                 json::array({reg_arg("r1")}));
  json zero = inst("z", "Memset", json::array(), json::array({ap("t")}));
  zero["mode"] = "Const";
  zero["constant"] = 0.0;
  json save = inst("save", "Save", json::array({ap("t")}), json::array({ap("o")}));
  json m = module(json::array({r0, zero, loop, save}), json::array({alloc("o", "ExternalOutput"), alloc("t", "Internal", "SB")}));
  // First (an exception thrown after SystemC ran in this process trips ASan, .ci/run): a branch out of the loop to
  // a block it does not hold is refused, naming the field.
  json bad = m;
  bad["functions"][0]["blocks"][0]["instructions"][2]["blocks"][1]["instructions"][1]["target"] = "b0";
  const std::string e = error_of(bad);
  EXPECT_NE(e.find("field 'target'"), std::string::npos) << e;
  EXPECT_NE(e.find("no basic block named 'b0' in the enclosing region"), std::string::npos) << e;
  isa::Program p = isa::parse_bir(m, "loopcfg.json");
  for (const isa::Program &q : {p, isa::parse_bir(isa::to_bir_json(p), "again.json")}) {
    sim::Simulator s(q, {});
    auto r = s.run();
    // 2 + 2 x (3 + 2 + 1) + 2 x (3 + 1) + 1 = 23.
    EXPECT_EQ(r.dynamic_instructions, 23);
    for (float v : sim::tensor_f32(q, s.memory(), 0)) EXPECT_EQ(v, 4042.0f);
  }
}
