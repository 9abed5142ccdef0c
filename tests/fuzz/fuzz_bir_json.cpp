// libFuzzer target: BIR JSON text -> isa::parse_bir -> (to_bir_json -> parse_bir again) -> memory placement,
// schedule and, for small programs, every instruction's semantics and cost without SystemC.
//
// The contract under test (DESIGN.md section 4, "never abort or crash on input"): any input either parses or
// throws neuronsim::Error. Anything else -- another exception type (the CLI would print "internal error"), a
// crash, a sanitizer report, a hang -- is a finding. A program the reader accepted must also survive the writer:
// re-reading its own output must not fail.
//
// Build: cmake -DNEURONSIM_FUZZ=ON with clang (see the end of CMakeLists.txt); run:
//   build-fuzz/fuzz_bir_json tests/fuzz/corpus/fuzz_bir_json -max_total_time=600
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/engines/cost.hpp"
#include "neuronsim/engines/memory.hpp"
#include "neuronsim/engines/ops.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/sim/simulator.hpp"

using namespace neuronsim;

// The SystemC library linked through neuronsim_engines wants an sc_main; the fuzzer never starts SystemC.
extern "C" int sc_main(int, char **) { return 0; }

namespace {

// Dynamic instruction count of a body, saturating at `cap` (loops unroll in the scheduler).
int64_t dynamic_count(const std::vector<isa::Node> &body, int64_t cap) {
  int64_t n = 0;
  for (const auto &nd : body) {
    if (nd.kind == isa::Node::Kind::Inst) {
      ++n;
    } else {
      // In 128 bits: bounds near 2^63 are valid input (the reader refuses them later) and must not overflow here.
      __int128 trips = 0;
      const __int128 lb = nd.lb, ub = nd.ub, stride = nd.stride;
      if (stride > 0 && ub > lb) trips = (ub - lb + stride - 1) / stride;
      if (stride < 0 && lb > ub) trips = (lb - ub - stride - 1) / -stride;
      if (trips > cap) return cap + 1;
      const int64_t inner = dynamic_count(nd.body, cap);
      if (trips > 0 && inner > cap / trips) return cap + 1;
      n += trips * inner;
    }
    if (n > cap) return cap + 1;
  }
  return n;
}

// Small enough to place and run quickly: memory the simulator would allocate stays below a few MiB. (Limits of
// the harness, not of the simulator: bigger programs are valid, just slow to fuzz.)
bool small(const isa::Program &p) {
  if (dynamic_count(p.body, 64) > 64) return false;
  for (const auto &t : p.tensors) {
    int64_t bytes = 0, elems = 1;
    if (t.partitions < 0 || t.partitions > 128 || t.bytes_per_partition < 0 || t.bytes_per_partition > 65536)
      return false;
    for (auto s : t.shape)
      if (s < 0 || s > 65536 || __builtin_mul_overflow(elems, s, &elems)) return false;
    if (__builtin_mul_overflow(t.partitions, t.bytes_per_partition, &bytes) || bytes > (1 << 22)) return false;
    if (elems > (1 << 20)) return false;
    if (t.addr < 0 || t.addr > (1 << 20)) return false;
  }
  return true;
}

bool small_access(const engines::Access &a) {
  int64_t n = 1;
  for (const auto &d : a.ap)
    if (d.num < 0 || __builtin_mul_overflow(n, d.num, &n) || n > (1 << 16)) return false;
  return true;
}

[[noreturn]] void finding(const char *what, const std::string &detail) {
  std::fprintf(stderr, "FINDING: %s: %s\n", what, detail.c_str());
  std::abort();
}

void run_small(const isa::Program &p) {
  const engines::ArchParams arch = engines::builtin_arch("trn1");
  engines::Memory mem(p, arch);
  sim::Schedule s = sim::build_schedule(p, mem, arch);
  engines::EngineState st;
  for (const auto &si : s.insts) {
    bool ok = true;
    for (const auto &a : si.d.ins) ok = ok && small_access(a);
    for (const auto &a : si.d.outs) ok = ok && small_access(a);
    if (!ok) continue;
    engines::instruction_cost(si.d, sim::queue_engine(si.queue), arch, mem);
    mem.set_context(ErrorContext{p.file, si.d.inst->index, si.d.inst->name, ""});
    try {
      engines::execute(si.d, mem, st);
    } catch (const Error &) {
      // an unsupported combination or a run-time fault: the documented outcome; go on with the next
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The bounded parser read_bir_file uses (depth limit, numbers that overflow a double, error paths).
  nlohmann::json j;
  try {
    j = isa::parse_json_text(std::string(reinterpret_cast<const char *>(data), size), "fuzz.bir.json");
  } catch (const Error &) {
    return 0;
  } catch (const std::exception &e) {
    finding("parse_json_text threw a non-neuronsim exception", e.what());
  }
  isa::Program p;
  try {
    p = isa::parse_bir(j, "fuzz.bir.json");
  } catch (const Error &) {
    return 0;
  } catch (const std::exception &e) {
    finding("parse_bir threw a non-neuronsim exception", e.what());
  }
  try {
    const isa::Program q = isa::parse_bir(isa::to_bir_json(p), "roundtrip.bir.json");
    (void)q;
  } catch (const std::exception &e) {
    finding("the reader rejects what the writer wrote for an accepted program", e.what());
  }
  if (!small(p)) return 0;
  try {
    run_small(p);
  } catch (const Error &) {
  } catch (const std::exception &e) {
    finding("placement/schedule/execute threw a non-neuronsim exception", e.what());
  }
  return 0;
}
