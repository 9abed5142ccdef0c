// libFuzzer target: 64-byte instruction bundles -> isa::decode (one stream, multi-bundle state carried across)
// and isa::disasm_line; every instruction decoded completely is encoded again and re-decoded, which must give
// the same content (only with NEURONSIM_FUZZ_ROUNDTRIP=1 in the environment: the codec does not meet it yet --
// see tests/fuzz/findings/README.md -- and CI's run must stay about crashes and error discipline). Input layout: byte 0 = generation (v2/v3/v4), byte 1 = engine id, byte 2 = type hint (0 =
// none, else InstructionType (b-1) % 110), then the bundles (a trailing partial bundle is ignored, as
// read_bundle_dir rejects it before decoding). Any bundle either decodes or throws neuronsim::Error.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "bundle_program.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/bundle.hpp"

using namespace neuronsim;

// SystemC comes in through the libraries (its main() calls the C-linkage sc_main); it is never started here.
extern "C" int sc_main(int, char **) { return 0; }

namespace {

[[noreturn]] void finding(const char *what, const std::string &detail) {
  std::fprintf(stderr, "FINDING: %s: %s\n", what, detail.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3 + 64) return 0;
  const isa::CoreGen gen = isa::kCoreGens[data[0] % 3];
  const int engine = data[1] % 8;
  std::optional<isa::InstructionType> hint;
  if (data[2] != 0) hint = static_cast<isa::InstructionType>((data[2] - 1) % isa::kNumInstructionTypes);
  const isa::Program &prog = fuzz_bundle_program();
  isa::DecodeState st;
  for (size_t off = 3; off + 64 <= size; off += 64) {
    const uint8_t *b = data + off;
    try {
      (void)isa::disasm_line(b, gen);
    } catch (const Error &) {
    } catch (const std::exception &e) {
      finding("disasm_line threw a non-neuronsim exception", e.what());
    }
    isa::DecodedBundle d;
    try {
      d = isa::decode(b, gen, engine, prog, &st, hint);
    } catch (const Error &) {
      st = isa::DecodeState{};
      continue;
    } catch (const std::exception &e) {
      finding("decode threw a non-neuronsim exception", e.what());
    }
    static const bool roundtrip = [] {
      const char *e = std::getenv("NEURONSIM_FUZZ_ROUNDTRIP");
      return e && e[0] == '1';
    }();
    if (!d.complete || !roundtrip) continue;
    std::vector<isa::Bundle> again;
    try {
      again = isa::encode(d.inst, prog, gen);
    } catch (const Error &) {
      continue;  // a decoded instruction the encoder cannot carry exactly: allowed (e.g. a reserved byte set)
    } catch (const std::exception &e) {
      finding("encode threw a non-neuronsim exception", e.what());
    }
    try {
      isa::DecodeState st2;
      isa::DecodedBundle d2;
      for (const auto &bb : again) d2 = isa::decode(bb.data(), gen, engine, prog, &st2, d.inst.type);
      std::string diff;
      if (!d2.complete) finding("re-decoding the encoder's bundles left the instruction incomplete", "");
      if (!isa::same_bundle_content(d.inst, d2.inst, &diff)) finding("decode(encode(x)) != x", diff);
    } catch (const std::exception &e) {
      finding("the decoder rejects what the encoder wrote", e.what());
    }
  }
  return 0;
}
