// Regressions found by fuzz_bundle (tests/fuzz): bundles that decode, whose instruction the encoder must either
// carry exactly (decode(encode(x)) == x) or refuse with a SemanticError -- never silently change.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "neuronsim/builder.hpp"
#include "neuronsim/isa/bundle.hpp"

using namespace neuronsim;

namespace {

// The same tensors as tests/fuzz/fuzz_bundle.cpp, so that the finding's addresses decode to the same operands.
isa::Program fuzz_program() {
  builder::Builder b("fuzz_bundle");
  auto a = b.input("a", {8, 16}), c = b.output("c", {8, 16});
  auto t = b.sbuf("t", {8, 16}), u = b.sbuf("u", {128, 64});
  auto ps = b.psum("p", {8, 16});
  b.add(isa::InstructionType::Load, {b.ap(a.all())}, {b.ap(t.all())});
  b.add(isa::InstructionType::TensorTensor, {b.ap(t.all()), b.ap(t.all())}, {b.ap(ps.all())}).op(isa::AluOp::add);
  b.add(isa::InstructionType::TensorCopy, {b.ap(ps.all())}, {b.ap(u.all())});
  b.add(isa::InstructionType::Save, {b.ap(t.all())}, {b.ap(c.all())});
  return b.finish();
}

} // namespace

TEST(BundleRegressions, OnePartitionPatternWithAPartitionSizedStepIsRefusedNotChanged) {
  // Input layout of fuzz_bundle: generation byte, engine byte, type-hint byte, then bundles.
  std::ifstream f(std::string(NEURONSIM_SOURCE_DIR) + "/tests/isa/bundle_data/roundtrip_partition_pair.bin",
                  std::ios::binary);
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_GE(data.size(), 3u + 64u);
  const isa::CoreGen gen = isa::kCoreGens[data[0] % 3];
  const int engine = data[1] % 8;
  const isa::Program prog = fuzz_program();
  isa::DecodeState st;
  int checked = 0;
  for (size_t off = 3; off + 64 <= data.size(); off += 64) {
    isa::DecodedBundle d;
    try {
      d = isa::decode(data.data() + off, gen, engine, prog, &st, std::nullopt);
    } catch (const Error &) {
      st = isa::DecodeState{};
      continue;
    }
    if (!d.complete) continue;
    std::vector<isa::Bundle> again;
    try {
      again = isa::encode(d.inst, prog, gen);
    } catch (const SemanticError &) {
      ++checked;  // refused: allowed
      continue;
    }
    isa::DecodeState st2;
    isa::DecodedBundle d2;
    for (const auto &bb : again) d2 = isa::decode(bb.data(), gen, engine, prog, &st2, d.inst.type);
    std::string diff;
    ASSERT_TRUE(d2.complete);
    EXPECT_TRUE(isa::same_bundle_content(d.inst, d2.inst, &diff)) << "bundle at byte " << off << ": " << diff;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}
