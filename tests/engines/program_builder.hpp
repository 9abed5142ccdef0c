// Test helper for the engines tests: build a small isa::Program with neuronsim::builder::Builder, place it in an
// engines::Memory, fill tensors, execute instructions in program order (no SystemC, no scheduler) and read
// tensors back. Immediates and access-pattern starts are evaluated with every loop variable at 0.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "neuronsim/builder.hpp"
#include "neuronsim/engines/arch.hpp"
#include "neuronsim/engines/memory.hpp"
#include "neuronsim/engines/ops.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::testing {

using builder::Ap;
using builder::Builder;
using builder::TensorHandle;
using engines::Access;
using engines::DynInst;
using engines::EngineState;
using engines::Memory;
using isa::ApDim;
using isa::Dtype;
using isa::InstructionType;

// An access for a builder Ap with a constant start.
inline Access access(const Ap &a) {
  Access x;
  x.tensor = a.tensor;
  x.dtype = a.dtype;
  x.start = a.start.to_expr().eval(nullptr);
  x.ap = a.dims;
  return x;
}

// The whole tensor as a [P, row] access.
inline Access whole(const TensorHandle &t) { return access(t.all()); }

// Operand shorthands: an access pattern, an fp32 immediate, a register.
inline isa::Arg P(const Ap &a) { return Builder::ap(a); }
inline isa::Arg I(double v) { return Builder::imm(v); }
inline isa::Arg R(const std::string &name) {
  isa::Arg a;
  a.kind = isa::ArgKind::Register;
  a.reg = name;
  a.json_kind = "register_access";
  return a;
}

// A whole tensor of a Simulator's memory as fp32 values, and back.
inline std::vector<float> read(sim::Simulator &s, const TensorHandle &t) {
  Access a = whole(t);
  std::vector<float> v(static_cast<size_t>(a.partitions() * a.free_elements()));
  s.memory().read_f32(a, v.data());
  return v;
}
inline void write(sim::Simulator &s, const TensorHandle &t, const std::vector<float> &v) {
  s.memory().write_f32(whole(t), v.data());
}

inline DynInst dyn(const isa::Program &p, int index) {
  DynInst d;
  d.inst = &p.insts.at(static_cast<size_t>(index));
  d.seq = index;
  auto res = [](const isa::Arg &a) {
    Access x;
    if (a.kind != isa::ArgKind::AccessPattern) return x;
    x.tensor = a.tensor;
    x.dtype = a.dtype;
    x.start = a.start.eval(nullptr);
    x.ap = a.ap;
    return x;
  };
  for (const auto &a : d.inst->ins) {
    d.ins.push_back(res(a));
    d.imm.push_back(a.immediate(nullptr));
  }
  for (const auto &a : d.inst->outs) d.outs.push_back(res(a));
  return d;
}

// A program under test: Builder while building, then Memory + EngineState to run it.
struct Harness {
  Builder b{"test"};
  isa::Program prog;
  engines::ArchParams arch = engines::builtin_arch("trn1");
  std::unique_ptr<Memory> mem;
  EngineState st;

  // Freezes the program and places its tensors.
  Memory &place() {
    prog = b.finish();
    for (size_t i = 0; i < prog.insts.size(); ++i) prog.insts[i].index = static_cast<int>(i);
    mem = std::make_unique<Memory>(prog, arch);
    return *mem;
  }
  void set(const TensorHandle &t, const std::vector<float> &v) { mem->write_f32(whole(t), v.data()); }
  std::vector<float> get(const TensorHandle &t) const {
    Access a = whole(t);
    std::vector<float> v(static_cast<size_t>(a.partitions() * a.free_elements()));
    mem->read_f32(a, v.data());
    return v;
  }
  void exec(int index) {
    mem->set_context(ErrorContext{prog.file, index, prog.insts[static_cast<size_t>(index)].name, ""});
    engines::execute(dyn(prog, index), *mem, st);
  }
  void run() {
    for (size_t i = 0; i < prog.insts.size(); ++i) exec(static_cast<int>(i));
  }
};

} // namespace neuronsim::testing
