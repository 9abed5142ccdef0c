// Control and sync types through the scheduler and the SystemC core, with hand-checked times and values: Drain
// orders every queue like AllEngineBarrier (sim/schedule.cpp), Exit ends the run (reference
// neuronx-cc/bir/sim-control-sync-customop.md 4: birsim throws InstExitException, unwinding the whole simulation),
// a DynamicForLoop read from BIR JSON takes its upper bound from a register (sim-control-sync-customop.md 1.2,
// isa/bir/regions.cpp read_region), GroupResetSemaphores zeroes its semaphore group, and Break leaves only the
// innermost region (sim-control-sync-customop.md 2.3).
// Cost figures, trn1 (engines/cost/cost.cpp; see tests/sim/test_simulator.cpp):
//   DVE memset [128, 512] fp32: 512 cycles / 1.12 GHz = 457.14 ns, + latency 160 / 1.12 = 142.86 -> done at 600 ns
//   ACT memset [128, 512] fp32: 512 cycles / 1.4 GHz = 365.71 ns, + latency 160 / 1.4 = 114.29 -> 480 ns
//   a control/sync slot on SP: 1 cycle / 1.4 GHz = 0.714 ns, no latency
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "neuronsim/builder.hpp"
#include "neuronsim/engines/arch.hpp"
#include "neuronsim/engines/memory.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/stream_form.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "neuronsim/sim/validate.hpp"
#include "support/temp_dir.hpp"

// The helpers below live in namespace test_control_sync, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_control_sync {

using namespace neuronsim;
using builder::Builder;
using isa::InstructionType;
using json = nlohmann::json;

namespace {

const sim::TraceEvent &event_of(const sim::RunResult &r, int inst) {
  for (const auto &e : r.events)
    if (e.inst == inst) return e;
  throw std::runtime_error("no event");
}

void memset_on(Builder &b, const builder::TensorHandle &t, double v, isa::Engine e) {
  b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(v).engine(e);
}

// An SBUF tensor read back whole ([P, row] fp32); sim::tensor_f32 reads DRAM tensors only.
std::vector<float> sbuf_f32(sim::Simulator &s, const builder::TensorHandle &t) {
  engines::Access a;
  a.tensor = t.id;
  a.dtype = t.dtype;
  a.start = 0;
  a.ap = {{t.row(), t.shape[0]}, {1, t.row()}};
  std::vector<float> v(static_cast<size_t>(t.shape[0] * t.row()));
  s.memory().read_f32(a, v.data());
  return v;
}

void fill_dram(sim::Simulator &s, int tensor, float v, int n) {
  auto &d = s.memory().dram(tensor);
  for (int i = 0; i < n; ++i) std::memcpy(&d[static_cast<size_t>(i) * 4], &v, 4);
}

} // namespace

// DVE memset t1 (done at 600 ns) and ACT memset t2 (done at 508.57 ns) run in parallel; then ACT memset t3, which
// depends on neither. Without a Drain it follows t2 on ACT's in-order queue: it starts when ACT frees, at 479.29 ns
// (act_fixed_cycles 159 + 512 cycles at 1.4 GHz; t2's results are visible 41 cycles later, at 508.57 ns).
// With a Drain between them the Drain (SP) waits for everything issued before it -- it starts at 600 ns, after
// the later of the two completions -- and t3 starts after the Drain completes, 600 + 0.714 ns; the run ends
// 508.57 ns later at 1109.29 ns. The Drain touches no memory: t1, t2, t3 hold 1, 2, 3.
TEST(ControlSync, DrainOrdersEveryQueueLikeAllEngineBarrier) {
  std::vector<builder::TensorHandle> ts;
  auto build = [&](bool drain) {
    Builder b("drain");
    auto t1 = b.sbuf("t1", {128, 512}), t2 = b.sbuf("t2", {128, 512}), t3 = b.sbuf("t3", {128, 512});
    ts = {t1, t2, t3};
    memset_on(b, t1, 1.0, isa::Engine::DVE);
    memset_on(b, t2, 2.0, isa::Engine::Activation);
    if (drain) b.add(InstructionType::Drain, {}, {});
    memset_on(b, t3, 3.0, isa::Engine::Activation);
    return b.finish();
  };
  isa::Program free_p = build(false), drain_p = build(true);
  auto r0 = sim::Simulator(free_p, {}).run();
  EXPECT_NEAR(event_of(r0, 2).start_ns, (159 + 512) / 1.4, 0.01);  // 479.29: right behind t2 on ACT

  sim::Simulator s(drain_p, {});
  EXPECT_EQ(s.schedule().insts[2].queue, 4);  // Drain runs on SP, queue 4 (engine_policy.cpp default for sync types)
  auto r1 = s.run();
  const auto &d = event_of(r1, 2), &after = event_of(r1, 3);
  EXPECT_NEAR(d.start_ns, 600.0, 0.01);
  EXPECT_GE(d.start_ns, event_of(r1, 0).finish_ns - 1e-6);
  EXPECT_GE(d.start_ns, event_of(r1, 1).finish_ns - 1e-6);
  EXPECT_GE(after.start_ns, d.finish_ns - 1e-6);
  EXPECT_NEAR(after.start_ns, 600.0 + 1 / 1.4, 0.01);
  EXPECT_NEAR(r1.total_ns, 600.0 + 1 / 1.4 + 512 / 1.4 + 200 / 1.4, 0.01);  // ACT 512 cycles + latency 60 + 140
  EXPECT_EQ(r1.dynamic_instructions, 4);
  int k = 0;
  for (const auto &t : ts) {
    ++k;
    for (float v : sbuf_f32(s, t)) ASSERT_EQ(v, float(k));
  }
}

// Exit at the top level: memset t = 1, save t -> o, Exit; the memset t = 9 and the second save after it never
// run. o keeps 1, t keeps 1, and 3 dynamic instructions ran (memset, save, exit).
TEST(ControlSync, ExitEndsTheRunAtTheTopLevel) {
  Builder b("exit");
  auto o = b.output("o", {4, 4});
  auto t = b.sbuf("t", {4, 4});
  memset_on(b, t, 1.0, isa::Engine::DVE);
  b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.all())});
  b.add(InstructionType::Exit, {}, {});
  memset_on(b, t, 9.0, isa::Engine::DVE);
  b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.all())});
  isa::Program p = b.finish();
  sim::Simulator s(p, {});
  auto r = s.run();
  EXPECT_EQ(r.dynamic_instructions, 3);
  for (float v : sim::tensor_f32(p, s.memory(), 0)) EXPECT_EQ(v, 1.0f);
  for (float v : sbuf_f32(s, t)) EXPECT_EQ(v, 1.0f);
}

// Exit inside a loop ends the whole run, not just the loop (Flow::Stop, unlike Break): t = 0; for i in 0..4
// { t += 1; Exit } ; save t -> o. Only iteration 0 runs: t = 1, and the save after the loop never writes o, which
// keeps the 5.0 it was given. Dynamic instructions: memset, add, exit = 3 (an Exit that only left the loop would
// give 1 + 4 x 2 + 1 = 10, or 1 + 2 + 1 = 4 had it acted like Break).
// The same program read back from BIR JSON behaves the same.
TEST(ControlSync, ExitInsideALoopEndsTheWholeRun) {
  Builder b("exitloop");
  auto o = b.output("o", {2, 4});
  auto t = b.sbuf("t", {2, 4});
  memset_on(b, t, 0.0, isa::Engine::DVE);
  b.loop("i", 0, 4, 1, [&](builder::Aff) {
    b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), Builder::imm(1.0)}, {b.ap(t.all())})
        .op0(isa::AluOp::add).op1(isa::AluOp::bypass);
    b.add(InstructionType::Exit, {}, {});
  });
  b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.all())});
  for (const isa::Program &p : {b.program(), isa::parse_bir(isa::to_bir_json(b.program()), "exitloop.bir.json")}) {
    sim::Simulator s(p, {});
    fill_dram(s, 0, 5.0f, 8);
    auto r = s.run();
    EXPECT_EQ(r.dynamic_instructions, 3);
    for (float v : sim::tensor_f32(p, s.memory(), 0)) EXPECT_EQ(v, 5.0f);
    for (float v : sbuf_f32(s, t)) EXPECT_EQ(v, 1.0f);
  }
}

namespace {

json aff_i(int64_t coef, int64_t c) {
  return {{"kind", "AffExprKind"},
          {"terms", json::array({{{"idx", {{"kind", "AffIVKind"}, {"axis", "i"}}}, {"coeff", coef}}})},
          {"c", c}};
}
json cst(int64_t c) { return {{"kind", "AffExprKind"}, {"terms", json::array()}, {"c", c}}; }

json alloc(const std::string &name, const std::string &kind, const std::string &type) {
  return {{"Skind", "memory_location_set"},
          {"name", name + "_set"},
          {"kind", kind},
          {"dtype", "float32"},
          {"tensor_shape", {2, 6}},
          {"memorylocations",
           json::array({{{"Skind", "memory_location"}, {"name", name}, {"type", type}, {"dims", {2, 24}}}})}};
}

json whole(const std::string &t) {
  return {{"kind", "physical_ap"}, {"memref", t}, {"ap", {{6, 2}, {1, 6}}}, {"offset", 0}, {"dtype", "float32"}};
}

// A hand-written module: n = <n>; t = 0; DynamicForLoop i in [lb, n) step stride { t[:, i] += 1 }; o = t.
json dynfor_module(int64_t n, int64_t lb, int64_t stride) {
  json column = {{"kind", "symbolic_ap"},
                 {"dtype", "float32"},
                 {"memsetref", "t_set"},
                 {"ap", {{6, 2}, {1, 1}}},
                 {"addrs", json::array({cst(0), aff_i(1, 0)})},
                 {"access_shape", {2, 6}}};
  json add = {{"name", "add"},   {"opcode", "TensorScalarPtr"}, {"engine", "Unassigned"}, {"op0", "add"},
              {"op1", "bypass"}, {"reverse0", false}, {"reverse1", false}, {"ins", json::array({column, {{"kind", "imm_value"}, {"dtype", "float32"}, {"value", 1.0}}})},
              {"outs", json::array({column})}};
  json loop = {{"opcode", "DynamicForLoop"},
               {"name", "DynamicForLoop-i"},
               {"DynamicForLoopAxis",
                {{"name", "i"}, {"lb", lb}, {"ub", {{"kind", "IntRuntimeValueKind"}, {"regref", "n"}}}, {"stride", stride}}},
               {"blocks", json::array({{{"name", "body"}, {"instructions", json::array({add})}}})}};
  json insts = json::array(
      {{{"name", "setn"}, {"opcode", "RegisterMove"}, {"engine", "Unassigned"},
        {"ins", json::array({{{"kind", "imm_value"}, {"dtype", "int32"}, {"value", n}}})},
        {"outs", json::array({{{"kind", "register_access"}, {"dtype", "int32"}, {"regref", "n"}}})}},
       {{"name", "zero"}, {"opcode", "Memset"}, {"engine", "Unassigned"}, {"mode", "Const"}, {"constant", 0},
        {"ins", json::array()}, {"outs", json::array({whole("t")})}},
       loop,
       {{"name", "save"}, {"opcode", "Save"}, {"engine", "Unassigned"}, {"ins", json::array({whole("t")})},
        {"outs", json::array({whole("o")})}}});
  json allocs = json::array({alloc("o", "ExternalOutput", "DRAM"), alloc("t", "Internal", "SB"),
                             {{"Skind", "register"}, {"name", "n"}}});
  return {{"version", 2},
          {"functions", json::array({{{"name", "main"}, {"allocations", allocs},
                                      {"blocks", json::array({{{"name", "b0"}, {"instructions", insts}}})}}})}};
}

} // namespace

// `"opcode": "DynamicForLoop"` with `"ub": {"kind": "IntRuntimeValueKind", "regref": "n"}`: the trip count is read
// from register n when the loop is reached.
//   n = 3, lb 0, stride 1: i = 0, 1, 2 -> each row 1 1 1 0 0 0; 2 + 3 + 1 = 6 dynamic instructions.
//   n = 5, lb 1, stride 2: i = 1, 3   -> each row 0 1 0 1 0 0; 2 + 2 + 1 = 5.
//   n = 0: no iteration               -> all 0;                 2 + 0 + 1 = 3.
TEST(ControlSync, DynamicForLoopFromBirJsonReadsItsRegisterUpperBound) {
  struct Case {
    int64_t n, lb, stride;
    std::vector<float> row;
    int64_t dyn;
  };
  for (const Case &c : {Case{3, 0, 1, {1, 1, 1, 0, 0, 0}, 6}, Case{5, 1, 2, {0, 1, 0, 1, 0, 0}, 5},
                        Case{0, 0, 1, {0, 0, 0, 0, 0, 0}, 3}}) {
    isa::Program p = isa::parse_bir(dynfor_module(c.n, c.lb, c.stride), "dynfor.bir.json");
    ASSERT_EQ(p.body.size(), 4u);
    EXPECT_EQ(p.body[2].kind, isa::Node::Kind::DynamicForLoop);
    EXPECT_EQ(p.body[2].ub_expr.kind, isa::Expr::Kind::Register);
    EXPECT_EQ(p.body[2].ub_expr.regref, "n");
    sim::Simulator s(p, {});
    auto r = s.run();
    EXPECT_EQ(r.dynamic_instructions, c.dyn) << "n = " << c.n;
    std::vector<float> want = c.row;
    want.insert(want.end(), c.row.begin(), c.row.end());
    EXPECT_EQ(sim::tensor_f32(p, s.memory(), 0), want) << "n = " << c.n;
  }
}

namespace {

// SP adds 5 to semaphore 9; GroupResetSemaphores {9} (when `reset`); SP adds 2. DVE waits for semaphore 9 == 2:
// with the reset the value goes 5 -> 0 -> 2 and DVE runs; without it, 5 -> 7 and DVE never runs (deadlock).
isa::Program semaphore_program(bool reset) {
  builder::Builder b("sema");
  auto t = b.sbuf("t", {4, 4});
  b.add(InstructionType::EventSemaphore, {}, {}).engine(isa::Engine::SP).inst().updates.push_back(
      isa::SemUpdate{9, isa::SemUpdate::Mode::Add, 5});
  if (reset) b.add(InstructionType::GroupResetSemaphores, {}, {}).engine(isa::Engine::SP).sema_group({9});
  b.add(InstructionType::EventSemaphore, {}, {}).engine(isa::Engine::SP).inst().updates.push_back(
      isa::SemUpdate{9, isa::SemUpdate::Mode::Add, 2});
  auto m = b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(1.0)
               .engine(isa::Engine::DVE);
  m.inst().waits.push_back(isa::SemWait{9, isa::SemWait::Mode::EqImm, 2, ""});
  return b.finish();
}

} // namespace

TEST(Semaphores, GroupResetSemaphoresZeroesItsGroup) {
  isa::Program p = semaphore_program(true);
  sim::Simulator s(p, {});
  EXPECT_EQ(s.run().dynamic_instructions, 4);
  isa::Program q = semaphore_program(false);
  sim::Simulator s2(q, {});
  try {
    s2.run();
    FAIL() << "expected a deadlock without the reset";
  } catch (const SimulationError &e) {
    EXPECT_NE(std::string(e.what()).find("semaphore 9 == 2 (is 7)"), std::string::npos) << e.what();
  }
}

TEST(Semaphores, GroupIdsOutOfRangeAreRefused) {
  builder::Builder b("sema");
  b.add(InstructionType::GroupResetSemaphores, {}, {}).sema_group({3, 300});
  isa::Program p = b.finish();
  try {
    sim::Simulator s(p, {});
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "sema_group[1]");
  }
}

// Break (reference sim-control-sync-customop.md 2.3: it nulls the successor slot, which the region walk reads as
// "leave the enclosing region"): for i in 0..4 { for j in 0..3 { t += 1; Break } ; t += 10 }. The inner loop stops
// after its first iteration each time, the outer loop runs on: t = 4 x (1 + 10) = 44. Dynamic instructions:
// memset + 4 x (add + Break + add) + save = 14.
TEST(Control, BreakLeavesOnlyTheInnermostRegion) {
  builder::Builder b("break");
  auto o = b.output("o", {4, 4});
  auto t = b.sbuf("t", {4, 4});
  b.add(InstructionType::Memset, {}, {b.ap(t.all())}).memset_mode(isa::MemsetMode::Const).constant(0.0);
  b.loop("i", 0, 4, 1, [&](builder::Aff) {
    b.loop("j", 0, 3, 1, [&](builder::Aff) {
      b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), builder::Builder::imm(1.0)}, {b.ap(t.all())})
          .op0(isa::AluOp::add).op1(isa::AluOp::bypass);
      b.add(InstructionType::Break, {}, {});
    });
    b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), builder::Builder::imm(10.0)}, {b.ap(t.all())})
        .op0(isa::AluOp::add).op1(isa::AluOp::bypass);
  });
  b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.all())});
  for (const isa::Program &p : {b.program(), isa::parse_bir(isa::to_bir_json(b.program()), "break.bir.json")}) {
    sim::Simulator s(p, {});
    auto r = s.run();
    EXPECT_EQ(r.dynamic_instructions, 14);
    for (float v : sim::tensor_f32(p, s.memory(), 0)) EXPECT_EQ(v, 44.0f);
  }
  // In a bundle stream each Break executed keeps its place as a sync carrier (Break has no opcode), and the
  // streams agree with the BIR.
  const std::string dir = neuronsim::testing::temp_dir("bundles");
  const isa::Program low = sim::to_stream_form(b.program(), engines::builtin_arch("trn2"), {});
  isa::write_bundle_dir(low, isa::CoreGen::V3, dir);
  const sim::ValidateReport v = sim::validate_bundles(b.program(), dir, {});
  EXPECT_TRUE(v.agree) << v.summary;
  EXPECT_EQ(v.lint_errors, 0) << v.summary;
  std::filesystem::remove_all(dir);
}

}  // namespace test_control_sync
