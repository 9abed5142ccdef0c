// Per-instruction cost model: how long one instruction occupies its engine, and when its results become visible.
// Each formula lives in engines/cost/cost.cpp with its source (reference neuron-arch.md section 2, the NKI ISA
// cost formulas); which formula an instruction type gets is one row of engines/cost/cost_rules.def. DMA transfers
// are timed by the DMA engine model (neuronsim/engines/dma.hpp); docs/timing-model.md explains both.
#pragma once

#include <cstdint>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/engines/memory.hpp"
#include "neuronsim/engines/ops.hpp"

namespace neuronsim::engines {

// An instruction occupies its engine for `ns`; its results become visible to dependent instructions `latency_ns`
// later. Independent instructions pipeline behind each other at the occupancy rate; a dependent chain pays
// occupancy + latency per link (STYLE.md 4: occupancy and latency are two numbers).
struct Cost {
  int64_t cycles = 0;       // occupancy in the engine's own clock (0 for DMA transfers)
  double ns = 0.0;          // occupancy
  double latency_ns = 0.0;  // completion latency after the occupancy
  int64_t bytes = 0;        // DMA transfers: bytes written
  // A PE matmul's LoadStationary (weight load), not part of `ns`: the core charges the part of it that cannot
  // hide behind the previous matmul's MultiplyMoving (sim/core_issue.cpp; reference neuron-arch.md 2.1).
  double weight_load_ns = 0.0;
  int64_t weight_load_cycles = 0;
  // A matmul after an idle PE also fills and drains the array (calibration.md E4), charged by the core only then:
  // cycles, with their ns; and the least LoadStationary time before its MultiplyMoving.
  int64_t fill_drain_cycles = 0;
  double fill_drain_ns = 0.0;
  int64_t isolated_ls_cycles = 0;
  double isolated_ls_ns = 0.0;
  // The instruction runs in the v3+ DVE perf mode, which uses the memory bus DVE shares with POOL [ARCH3].
  bool dve_perf_mode = false;
};

// `engine` is the resolved engine (never Unassigned): PE, Activation, Pool, DVE, SP, or DMA for an instruction on a
// DMA queue (then only `bytes` is set: sim/core_dma.cpp times the transfer with engines::DmaEngines).
Cost instruction_cost(const DynInst &d, isa::Engine engine, const ArchParams &arch, const Memory &mem);

// The work an instruction does, for the stats' achieved-against-peak rates (docs/profiling.md): a PE matmul's
// floating-point operations, 2 K M N for a stationary [K, M] and a moving [K, N] (reference
// neuron-arch.md 2.1); every other instruction's output elements (partitions x free elements of its first
// output).
struct Work {
  int64_t elements = 0;
  int64_t flops = 0;
};
Work instruction_work(const DynInst &d);
// The peak rates the stats measure against: PE 2 x partitions x partitions FLOP per cycle (a
// partitions-square array, one moving column per cycle, reference neuron-arch.md 2.1); ACT, POOL, DVE one
// element per partition per cycle (the base rate: the DVE perf modes and ACT's narrow dtypes go past it).
double peak_flops_per_ns(const ArchParams &arch);
double peak_elements_per_ns(isa::Engine engine, const ArchParams &arch);
// The clock of an engine in GHz (DMA queues report ns only and return 1.0).
double engine_ghz(isa::Engine engine, const ArchParams &arch);

// The name of the cost rule instruction type `t` was given in engines/cost/cost_rules.def, or nullptr when it has
// none (tests/engines/test_cost.cpp checks that every type the engines execute has one).
const char *cost_rule_name(isa::InstructionType t);
// The row's "why this rule" text (its formula and source), or nullptr.
const char *cost_rule_why(isa::InstructionType t);

} // namespace neuronsim::engines
