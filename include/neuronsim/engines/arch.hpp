// Per-architecture parameters (DESIGN.md section 3: engines/ defines the struct, sim/arch/*.json fills it; the
// JSON files are compiled in). The member defaults are trn1's so that a default-constructed struct is usable in
// unit tests; builtin_arch() is the real source, each number with its source in sim/arch/<arch>.json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "neuronsim/isa/tables.hpp"

namespace neuronsim::engines {

struct ArchParams {
  std::string name = "trn1";
  isa::CoreGen gen = isa::CoreGen::V2;
  // Engine clocks in GHz (reference neuron-arch.md 1.2).
  double pe_ghz = 2.8, act_ghz = 1.4, pool_ghz = 1.4, dve_ghz = 1.12, sp_ghz = 1.4;
  // On-chip memories (reference neuron-arch.md 1.4).
  int64_t partitions = 128;
  int64_t sbuf_bytes_per_partition = 196608;  // 192 KiB
  int64_t psum_bytes_per_partition = 16384;   // 8 banks x 2 KiB
  int64_t psum_banks = 8;
  // DMA (reference neuron-arch.md 1.5).
  int dma_engines = 16;
  int dma_queues = 16;
  double dma_engine_bytes_per_ns = 17.0;
  double dma_fixed_ns = 1300.0;
  double hbm_bytes_per_ns = 410.0;
  // Cost-model constants (reference neuron-arch.md 2): MIN_II, static overheads.
  int64_t min_ii_cycles = 64;
  int64_t pe_mm_init_cycles = 64;
  int64_t pool_startup_cycles = 150;
  int64_t dependent_overhead_cycles = 100;
  int64_t sbuf_access_startup_cycles = 60;
  bool dve_pool_shared_sbuf_port = true;  // NeuronCore-v2 only
};

// The parameters of "trn1", "trn2" or "trn3" from sim/arch/<name>.json; throws InputError for another name.
ArchParams builtin_arch(const std::string &name);
std::vector<std::string> arch_names();

} // namespace neuronsim::engines
