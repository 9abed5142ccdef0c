// Helpers shared by the bundle codec tests.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/isa/program.hpp"

namespace bundletest {

// An access-pattern argument on `tensor` with a constant start.
inline neuronsim::isa::Arg ap(int tensor, neuronsim::isa::Dtype dt, std::vector<neuronsim::isa::ApDim> dims,
                              int64_t start = 0) {
  neuronsim::isa::Arg a;
  a.kind = neuronsim::isa::ArgKind::AccessPattern;
  a.tensor = tensor;
  a.dtype = dt;
  a.ap = std::move(dims);
  a.start = neuronsim::isa::Expr::constant(start);
  return a;
}

// Inst -> bundles -> Inst as a stream does it: encoded with a stream pool, the pool written to its manifest JSON
// and read back, then decoded with the type hint (and, when `no_hint`, once more without it: the bundle alone must
// name its form). Returns "" on success, else what went wrong.
inline std::string round_trip(const neuronsim::isa::Inst &in, const neuronsim::isa::Program &p,
                              neuronsim::isa::CoreGen g, bool no_hint = false) {
  using namespace neuronsim::isa;
  std::vector<Bundle> bundles;
  BundlePool pool;
  try {
    bundles = encode(in, p, g, {}, &pool);
  } catch (const std::exception &e) {
    return std::string("encode: ") + e.what();
  }
  BundlePool back;
  try {
    back = pool_from_json(pool_to_json(pool), p, {});
  } catch (const std::exception &e) {
    return std::string("pool: ") + e.what();
  }
  for (int pass = 0; pass < (no_hint ? 2 : 1); ++pass) {
    const std::optional<InstructionType> hint = pass == 0 ? std::optional<InstructionType>(in.type) : std::nullopt;
    DecodeState st;
    std::optional<Inst> got;
    try {
      for (size_t i = 0; i < bundles.size(); ++i) {
        auto d = decode(bundles[i].data(), g, static_cast<int>(in.engine), p, &st, hint, {}, {}, &back);
        if (d.complete != (i + 1 == bundles.size())) return "decode: completion at bundle " + std::to_string(i);
        if (d.complete) got = d.inst;
        if (disasm_line(bundles[i].data(), g).empty()) return "empty disassembly";
      }
    } catch (const std::exception &e) {
      return std::string(pass ? "decode without hint: " : "decode: ") + e.what();
    }
    if (!got) return "decode: no instruction";
    std::string why;
    if (!same_bundle_content(in, *got, &why)) return std::string(pass ? "differs without hint: " : "differs: ") + why;
  }
  return "";
}

} // namespace bundletest
