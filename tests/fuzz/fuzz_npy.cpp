// libFuzzer target: .npy bytes -> io::parse_npy -> loading into tensors of several dtypes -> serialize_npy ->
// parse_npy again. Any input either parses or throws neuronsim::Error; a parsed array must survive its own
// writer unchanged (same dtype, shape and bytes). Everything else (another exception, a crash, a sanitizer
// report) is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "neuronsim/error.hpp"
#include "neuronsim/engines/npy_dtype.hpp"
#include "neuronsim/io/npy.hpp"

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
  const std::vector<uint8_t> bytes(data, data + size);
  io::NpyArray a;
  try {
    a = io::parse_npy(bytes, "fuzz.npy");
  } catch (const Error &) {
    return 0;
  } catch (const std::exception &e) {
    finding("parse_npy threw a non-neuronsim exception", e.what());
  }
  if (a.data.size() > (1u << 20)) return 0;  // conversions of big arrays are slow, not more interesting
  for (isa::Dtype t : {isa::Dtype::float32, isa::Dtype::bfloat16, isa::Dtype::float16, isa::Dtype::float8e4,
                       isa::Dtype::int32, isa::Dtype::uint8, isa::Dtype::int64, isa::Dtype::float8_e8m0fnu}) {
    try {
      const auto out = engines::npy_to_dtype(a, t, "fuzz.npy");
      if (out.size() != static_cast<size_t>(a.numel()) * static_cast<size_t>(isa::dtype_size(t)))
        finding("npy_to_dtype returned the wrong size", isa::enum_name(t));
    } catch (const Error &) {
    } catch (const std::exception &e) {
      finding("npy_to_dtype threw a non-neuronsim exception", e.what());
    }
  }
  try {
    const io::NpyArray b = io::parse_npy(io::serialize_npy(a), "roundtrip.npy");
    if (b.dtype != a.dtype || b.shape != a.shape || b.data != a.data)
      finding("serialize_npy/parse_npy round trip changed the array", "");
  } catch (const std::exception &e) {
    finding("the reader rejects what the writer wrote", e.what());
  }
  return 0;
}
