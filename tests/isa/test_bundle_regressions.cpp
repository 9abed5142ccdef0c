// Regressions found by fuzz_bundle (tests/fuzz): bundles that decode, whose instruction the encoder must either
// carry exactly (decode(encode(x)) == x) or refuse with a SemanticError -- never silently change.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "fuzz/bundle_program.hpp"
#include "neuronsim/isa/bundle.hpp"

using namespace neuronsim;

TEST(BundleRegressions, OnePartitionPatternWithAPartitionSizedStepIsRefusedNotChanged) {
  // Input layout of fuzz_bundle: generation byte, engine byte, type-hint byte, then bundles.
  std::ifstream f(std::string(NEURONSIM_SOURCE_DIR) + "/tests/isa/bundle_data/roundtrip_partition_pair.bin",
                  std::ios::binary);
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_GE(data.size(), 3u + 64u);
  const isa::CoreGen gen = isa::kCoreGens[data[0] % 3];
  const int engine = data[1] % 8;
  const isa::Program &prog = fuzz_bundle_program();
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
