// Instruction semantics: pure functions of (instruction, memory, engine state) -> effects (DESIGN.md 4).
// One file per family in engines/ops/; nothing here knows about SystemC or time.
#pragma once

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "neuronsim/engines/memory.hpp"
#include "neuronsim/isa/program.hpp"

namespace neuronsim::engines {

// One dynamic instance of a static instruction: its access patterns resolved for the current loop iteration.
// Its vectors draw from a memory resource: a schedule places all of them in one arena (no allocation per
// instruction); on its own a DynInst uses the default heap.
struct DynInst {
  DynInst() = default;
  explicit DynInst(std::pmr::memory_resource *r) : ins(r), outs(r), imm(r) {}
  const isa::Inst *inst = nullptr;
  std::pmr::vector<Access> ins;   // parallel to inst->ins (tensor = -1 for non-AP arguments)
  std::pmr::vector<Access> outs;  // parallel to inst->outs
  std::pmr::vector<double> imm;   // parallel to inst->ins: each immediate's value for this iteration
  int64_t seq = 0;           // dynamic sequence number in program order
};

// Architectural state an engine keeps between instructions (accumulators, RNG, registers).
struct EngineState {
  // Per-partition accumulator registers of ACT/DVE (EngineAccumulationType machine), fp32.
  std::vector<float> acc = std::vector<float>(128, 0.0f);
  // Scalar registers (SP RegisterAlu/RegisterMove), by name.
  std::vector<std::pair<std::string, int64_t>> regs;

  // The random-number states are made on first use, in their initial state: most runs draw no random number,
  // and making them (seeding MT19937-64, filling 15 KiB) was a quarter of a one-instruction run's time.
  // Deterministic host RNG (Memset Random), seeded explicitly (DESIGN.md 4: determinism).
  std::mt19937_64 &host_rng() {
    if (!host_rng_) host_rng_.emplace(0x5eed);
    return *host_rng_;
  }
  // Gen-1 hardware RNG (Rand: LFSR / PCG32 / Philox): 6 u32 per partition, partition-major. Gen-2 XORWOW
  // (Rand2, Rng, Dropout, RandSetState/RandGetState): 4 lanes x 6 u32 per partition. Both start at birsim's
  // default seed {1,1,1,1,1,1} per lane (reference neuronx-cc/bir/sim-bn-rng-collective-dma.md 2.2).
  std::vector<uint32_t> &rng1() {
    if (rng1_.empty()) rng1_.assign(128 * 6, 1u);
    return rng1_;
  }
  std::vector<uint32_t> &xorwow() {
    if (xorwow_.empty()) xorwow_.assign(128 * 24, 1u);
    return xorwow_;
  }

private:
  std::optional<std::mt19937_64> host_rng_;
  std::vector<uint32_t> rng1_, xorwow_;
};

// Executes one dynamic instruction. Throws SemanticError for unsupported combinations (naming the field)
// and SimulationError for run-time faults.
void execute(const DynInst &d, Memory &mem, EngineState &st);

// Whether `execute` implements this instruction type (the `executes` column of `neuronsim isa --json`).
bool executes(isa::InstructionType t);
// Whether its semantics touch memory or registers (anything but a no-op / control instruction): such a type's
// operands have roles in isa/tables/inst_keys.def (tests/isa/test_inst_rules.cpp).
bool reads_or_writes_data(isa::InstructionType t);

// Why an instruction type is not executed (empty when it is): one line for error messages and the README.
const char *not_executed_reason(isa::InstructionType t);

// The engine an instruction runs on when the BIR says "Unassigned" (the NKI documentation's choice per
// instruction; one table in engines/ops/engine_policy.cpp).
isa::Engine default_engine(isa::InstructionType t);

} // namespace neuronsim::engines
