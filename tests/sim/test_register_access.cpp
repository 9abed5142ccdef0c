// Accesses whose start reads a register (BIR IntRuntimeValueKind leaves in a symbolic_ap, reference
// neuronx-cc/bir/wire-versioning.md; NKI's .ap(scalar_offset=register)): the scheduler resolves the start from the
// registers of the engine that executes the instruction (its issuing engine for a DMA), when the instructions
// before it have executed (sim/schedule.cpp run_time_start); a start out of bounds is a run-time fault naming the
// register values; DynamicForLoop bounds are any expression of registers.
//
// Values: t = iota over [2, 8]: t[p, f] = 10 * p + f.
#include <gtest/gtest.h>

#include "neuronsim/builder.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace test_register_access {

using namespace neuronsim;
using builder::Aff;
using builder::Builder;
using isa::InstructionType;
using V = std::vector<float>;

namespace {

// t[p, f] = 10 p + f over [2, 8]; o [2, 2] filled with -1.
struct CopyKernel {
  Builder b{"regap"};
  builder::TensorHandle t = b.sbuf("t", {2, 8});
  builder::TensorHandle o = b.sbuf("o", {2, 2});
  builder::TensorHandle out = b.output("out", {2, 2});
  CopyKernel() {
    b.add(InstructionType::Iota, {}, {Builder::ap(t.all())}).base(0).channel_multiplier(10).pattern({{1, 8}});
    b.add(InstructionType::Memset, {}, {Builder::ap(o.all())})
        .memset_mode(isa::MemsetMode::Const)
        .constant(-1.0);
  }
  // outs o = t[:, start : start + 2], on DVE
  void copy_at(const Aff &start) {
    b.add(InstructionType::TensorCopy, {Builder::ap(t.at(start, {{8, 2}, {1, 2}}))}, {Builder::ap(o.all())})
        .engine(isa::Engine::DVE);
    b.add(InstructionType::Save, {Builder::ap(o.all())}, {Builder::ap(out.all())});
  }
  void move(const std::string &r, int64_t v, isa::Engine e) {
    b.add(InstructionType::RegisterMove, {Builder::imm(double(v), isa::Dtype::int32)}, {Builder::reg(r)}).engine(e);
  }
};

} // namespace

TEST(RegisterAccess, TheStartReadsTheExecutingEnginesRegister) {
  // r = 3 on DVE; o = t[:, 2 * r - 1 : + 2] = t[:, 5:7] -> 5 6 15 16
  CopyKernel s;
  s.move("r", 3, isa::Engine::DVE);
  s.copy_at(Aff::reg("r") * 2 + Aff(-1));
  const isa::Program built = s.b.program();
  EXPECT_TRUE(sim::has_data_dependent_control(built));
  const isa::Program read = isa::parse_bir(isa::to_bir_json(built), "regap.bir.json");
  for (const isa::Program &p : {built, read}) {
    sim::Simulator sim(p, {});
    sim.run();
    EXPECT_EQ(sim::tensor_f32(p, sim.memory(), s.out.id), (V{5, 6, 15, 16}));
  }
}

TEST(RegisterAccess, ARegisterOfAnotherEngineIsNotSeen) {
  // r is written on SP only: DVE has no register r (each engine sequencer has its own registers).
  CopyKernel s;
  s.move("r", 3, isa::Engine::SP);
  s.copy_at(Aff::reg("r"));
  const isa::Program p = s.b.program();
  try {
    sim::Simulator sim(p, {});
    sim.run();
    ADD_FAILURE() << "a register written on SP was read on DVE";
  } catch (const SimulationError &e) {
    EXPECT_NE(std::string(e.what()).find("register 'r' is read by an access on DVE"), std::string::npos) << e.what();
  }
}

TEST(RegisterAccess, AStartOutOfBoundsIsARunTimeFaultNamingTheRegister) {
  // r = 7: t[:, 7:9] leaves the 8-element rows of t.
  CopyKernel s;
  s.move("r", 7, isa::Engine::DVE);
  s.copy_at(Aff::reg("r"));
  const isa::Program p = s.b.program();
  try {
    sim::Simulator sim(p, {});
    sim.run();
    ADD_FAILURE() << "an access out of bounds ran";
  } catch (const SimulationError &e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("out of bounds"), std::string::npos) << w;
    EXPECT_NE(w.find("reads registers at run time: r = 7"), std::string::npos) << w;
  }
}

TEST(RegisterAccess, ADmaReadsItsIssuingEnginesRegister) {
  // x = 0..9 in DRAM (an iota saved); r = 4 on SP; a Load (triggered from SP) of x[r : r + 3] -> 4 5 6.
  Builder b("dmareg");
  auto xs = b.sbuf("xs", {1, 10});
  auto x = b.dram("x", {1, 10});
  auto y = b.sbuf("y", {1, 3});
  auto out = b.output("out", {1, 3});
  b.add(InstructionType::Iota, {}, {Builder::ap(xs.all())}).base(0).channel_multiplier(0).pattern({{1, 10}});
  b.add(InstructionType::Save, {Builder::ap(xs.all())}, {Builder::ap(x.all())}).engine(isa::Engine::SP);
  b.add(InstructionType::RegisterMove, {Builder::imm(4, isa::Dtype::int32)}, {Builder::reg("r")})
      .engine(isa::Engine::SP);
  b.add(InstructionType::Load, {Builder::ap(x.at(Aff::reg("r"), {{10, 1}, {1, 3}}))}, {Builder::ap(y.all())})
      .engine(isa::Engine::SP);
  b.add(InstructionType::Save, {Builder::ap(y.all())}, {Builder::ap(out.all())});
  const isa::Program p = b.finish();
  sim::Simulator sim(p, {});
  sim.run();
  EXPECT_EQ(sim::tensor_f32(p, sim.memory(), out.id), (V{4, 5, 6}));
}

TEST(RegisterAccess, ADynamicForLoopTakesExpressionBounds) {
  // lo = 2, hi = 5 (registers): for i in range(lo, hi + 1): o[0, i] = 1 over 8 columns -> 0 0 1 1 1 1 0 0
  Builder b("dynbounds");
  auto o = b.sbuf("o", {1, 8});
  auto out = b.output("out", {1, 8});
  b.add(InstructionType::Memset, {}, {Builder::ap(o.all())}).memset_mode(isa::MemsetMode::Const).constant(0.0);
  b.add(InstructionType::RegisterMove, {Builder::imm(2, isa::Dtype::int32)}, {Builder::reg("lo")});
  b.add(InstructionType::RegisterMove, {Builder::imm(5, isa::Dtype::int32)}, {Builder::reg("hi")});
  b.dynamic_loop("i", Aff::reg("lo"), Aff::reg("hi") + Aff(1), 1, [&](Aff i) {
    b.add(InstructionType::Memset, {}, {Builder::ap(o.tile(0, 1, i, 1))})
        .memset_mode(isa::MemsetMode::Const)
        .constant(1.0);
  });
  b.add(InstructionType::Save, {Builder::ap(o.all())}, {Builder::ap(out.all())});
  const isa::Program built = b.finish();
  const isa::Program read = isa::parse_bir(isa::to_bir_json(built), "dynbounds.bir.json");
  for (const isa::Program &p : {built, read}) {
    sim::Simulator sim(p, {});
    sim.run();
    EXPECT_EQ(sim::tensor_f32(p, sim.memory(), out.id), (V{0, 0, 1, 1, 1, 1, 0, 0}));
  }
}

} // namespace test_register_access
