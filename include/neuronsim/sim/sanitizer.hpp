// The sanitizer's findings (`--sanitize`, RunOptions::sanitize; docs/sanitizer.md). A sanitized run keeps shadow
// state beside the memory and vector clocks beside the semaphores (sim/sanitizer.hpp, private) and reports:
//   uninitialized-read       an instruction reads SBUF, PSUM, internal DRAM or output bytes nothing wrote since the
//                            run started (inputs, in-place arguments and constants count as written);
//   loop-carried-dependency  two trips of one nl.affine_range loop (the kernel's own, from the BIR's debug.nki)
//                            touch the same element, one writing, outside an associative reduction;
//   race                     two accesses to the same bytes, one a write, from different queues or cores with no
//                            happens-before between them (programs whose synchronisation is explicit: bundle
//                            streams, cores sharing DRAM).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace neuronsim::sim {

// One access a finding names: the instruction (its BIR name and opcode, its kernel source line when the BIR has
// debug information), the tensor and the region it touched (numpy slices over the tensor's logical shape, or the
// NKI tile's when the front end says which), the core, the engine or DMA queue, and its NKI trip of the loop a
// loop-carried dependency is about.
struct SanitizerAccess {
  std::string instruction, opcode, file;
  int line = -1;
  std::string tensor;
  std::string range;  // "[96:128, 0:40]"
  int core = 0;
  std::string queue;  // "DVE", "qSyncIO0", ...
  std::optional<int64_t> trip;
  bool write = false;
};

struct Finding {
  std::string kind;  // "uninitialized-read", "loop-carried-dependency", "race"
  SanitizerAccess first;
  std::optional<SanitizerAccess> other;  // the second access (loop-carried-dependency, race)
  std::string message;  // the text after "sanitizer: KIND: "
};

// The finding's line on stderr: "sanitizer: KIND: message".
std::string finding_line(const Finding &f);
// The stats document's "sanitizer" list: per finding {"kind", "instruction", "opcode", "file", "line", "tensor",
// "range", "core", "trip", "other": {the same keys but kind, for the second access}}, null where a key does not
// apply (the source line of an instruction without debug information, the trip outside a loop-carried
// dependency, "other" of an uninitialized read).
nlohmann::json findings_json(const std::vector<Finding> &findings);

class Sanitizer;  // sim/sanitizer.hpp: the shadow state of one run (all its cores)

} // namespace neuronsim::sim
