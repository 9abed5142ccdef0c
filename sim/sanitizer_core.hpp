// The state of one core in the sanitizer (sim/sanitizer.hpp), shared by the sanitizer's files. Private to sim/.
#pragma once

#include <array>
#include <cstring>

#include "sim/sanitizer.hpp"

namespace neuronsim::sim {

struct Sanitizer::CoreState {
  int core = 0, rank = 0;
  const isa::Program *prog = nullptr;
  const engines::Memory *mem = nullptr;
  bool explicit_sync = false;          // the program carries its own semaphores
  bool race_onchip = false, race_dram = false;
  int64_t partitions = 128, sbuf_cap = 0, psum_cap = 0;
  std::vector<int64_t> granule;        // per tensor: the gcd of its accesses' element sizes
  std::vector<bool> loaded;            // per tensor: holds data when the run starts (inputs aside: in-place)
  std::vector<sanitizer_detail::InstPlan> plans;  // per static instruction
  sanitizer_detail::Shadow sbuf, psum;
  std::array<sanitizer_detail::Clock, kMaxQueues> clocks;  // race mode
  std::vector<std::vector<uint32_t>> sem;  // per semaphore, the clock its updates released (race mode)
  int queue = 0;                       // the queue of the instruction being checked
};

namespace sanitizer_detail {
// The finding's text after "sanitizer: KIND: " (sanitizer_text.cpp); for a loop-carried dependency, its loop's
// variable ("i", or "") and place ("the nl.affine_range at k.py:10").
std::string message_of(const Finding &f, const Pending &p);
} // namespace sanitizer_detail

} // namespace neuronsim::sim
