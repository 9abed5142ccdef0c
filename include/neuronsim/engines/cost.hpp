// Per-instruction cost model: how long one instruction occupies its engine or DMA queue. Each formula lives in
// engines/cost/cost.cpp with its source (reference neuron-arch.md section 2, the NKI ISA cost formulas).
#pragma once

#include <cstdint>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/engines/memory.hpp"
#include "neuronsim/engines/ops.hpp"

namespace neuronsim::engines {

// An instruction occupies its engine (or, for DMA, the shared DMA bandwidth) for `ns`; its results become
// visible to dependent instructions `latency_ns` later. Independent instructions pipeline behind each other at the
// occupancy rate; a dependent chain pays occupancy + latency per link.
struct Cost {
  int64_t cycles = 0;       // occupancy in the engine's own clock (0 for DMA)
  double ns = 0.0;          // occupancy
  double latency_ns = 0.0;  // completion latency after the occupancy
  int64_t bytes = 0;        // DMA: bytes moved
};

// `engine` is the resolved engine (never Unassigned): PE, Activation, Pool, DVE, SP, or DMA for a DMA queue.
Cost instruction_cost(const DynInst &d, isa::Engine engine, const ArchParams &arch, const Memory &mem);

// The clock of an engine in GHz (DMA queues report ns only and return 1.0).
double engine_ghz(isa::Engine engine, const ArchParams &arch);

} // namespace neuronsim::engines
