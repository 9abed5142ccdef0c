// The tensors fuzz_bundle decodes addresses against (DRAM in/out, two SBUF tiles, a PSUM tile); shared with the
// regression tests that replay its findings (tests/isa/test_bundle_regressions.cpp), so addresses decode alike.
#pragma once

#include "neuronsim/builder.hpp"

inline const neuronsim::isa::Program &fuzz_bundle_program() {
  using neuronsim::isa::InstructionType;
  static const neuronsim::isa::Program p = [] {
    neuronsim::builder::Builder b("fuzz_bundle");
    auto a = b.input("a", {8, 16}), c = b.output("c", {8, 16});
    auto t = b.sbuf("t", {8, 16}), u = b.sbuf("u", {128, 64});
    auto ps = b.psum("p", {8, 16});
    b.add(InstructionType::Load, {b.ap(a.all())}, {b.ap(t.all())});
    b.add(InstructionType::TensorTensor, {b.ap(t.all()), b.ap(t.all())}, {b.ap(ps.all())})
        .op(neuronsim::isa::AluOp::add);
    b.add(InstructionType::TensorCopy, {b.ap(ps.all())}, {b.ap(u.all())});
    b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(c.all())});
    return b.finish();
  }();
  return p;
}
