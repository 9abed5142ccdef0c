#include "neuronsim/engines/cost.hpp"

#include <algorithm>

namespace neuronsim::engines {

using isa::Engine;
using isa::InstructionType;

double engine_ghz(Engine engine, const ArchParams &a) {
  switch (engine) {
  case Engine::PE: return a.pe_ghz;
  case Engine::Activation: return a.act_ghz;
  case Engine::Pool: return a.pool_ghz;
  case Engine::DVE: return a.dve_ghz;
  case Engine::SP: return a.sp_ghz;
  default: return 1.0;
  }
}

namespace {

// N in the NKI formulas: elements per partition of the instruction's main operand (first output, else first
// input).
int64_t free_size(const DynInst &d) {
  for (const auto &a : d.outs)
    if (a.tensor >= 0) return a.free_elements();
  for (const auto &a : d.ins)
    if (a.tensor >= 0) return a.free_elements();
  return 1;
}

int64_t access_bytes(const Access &a) {
  return a.partitions() * a.free_elements() * isa::dtype_size(a.dtype);
}

bool in_psum(const Memory &mem, const Access &a) {
  return a.tensor >= 0 && mem.program().tensors[a.tensor].mem == isa::MemoryType::PSUM;
}

int count_ap_inputs(const DynInst &d) {
  int n = 0;
  for (const auto &a : d.ins) n += a.tensor >= 0;
  return n;
}

} // namespace

Cost instruction_cost(const DynInst &d, Engine engine, const ArchParams &a, const Memory &mem) {
  const isa::Inst &inst = *d.inst;
  const int64_t n = free_size(d);
  const int64_t min_ii = a.min_ii_cycles;
  int64_t cycles = 0;

  if (engine == Engine::DMA) {
    // reference neuron-arch.md 2.4 (INFERRED composition): ~1300 ns fixed per transfer plus bytes over the
    // per-engine bandwidth, with the 16 DMA engines of the NeuronCore sharing the transfer.
    int64_t bytes = 0;
    for (const auto &o : d.outs)
      if (o.tensor >= 0) bytes += access_bytes(o);
    double bw = a.dma_engine_bytes_per_ns * a.dma_engines;
    bw = std::min(bw, a.hbm_bytes_per_ns);
    return Cost{0, a.dma_fixed_ns + static_cast<double>(bytes) / bw};
  }

  switch (engine) {
  case Engine::PE: {
    // reference neuron-arch.md 2.1: back-to-back matmul costs max(min(64, N_stationary), N_moving) PE cycles,
    // 4x for fp32 operands; PE transpose max(P, min(64, F)).
    if (inst.type == InstructionType::Matmult || inst.type == InstructionType::MatmultSparse ||
        inst.type == InstructionType::MatmultMx) {
      int64_t n_stat = d.ins.size() > 0 ? d.ins[0].free_elements() : 1;
      int64_t n_mov = d.ins.size() > 1 ? d.ins[1].free_elements() : n;
      cycles = std::max(std::min<int64_t>(a.pe_mm_init_cycles, n_stat), n_mov);
      bool fp32 = false;
      for (const auto &in : d.ins)
        fp32 |= in.tensor >= 0 && (in.dtype == isa::Dtype::float32 || in.dtype == isa::Dtype::float32r);
      if (fp32 && !inst.f.is_transpose) cycles *= 4;
    } else {
      cycles = std::max(min_ii, n);
    }
    break;
  }
  case Engine::Activation:
    // reference neuron-arch.md 2.3: activation max(MIN_II, N), same with or without scale/bias.
    cycles = std::max(min_ii, n);
    break;
  case Engine::DVE: {
    // reference neuron-arch.md 2.2 (NKI ISA cost formulas).
    switch (inst.type) {
    case InstructionType::TensorTensor: {
      bool one_psum = d.ins.size() >= 2 && (in_psum(mem, d.ins[0]) != in_psum(mem, d.ins[1]));
      cycles = one_psum ? std::max(min_ii, n) : std::max(min_ii, 2 * n);
      break;
    }
    case InstructionType::Reciprocal: cycles = std::max(min_ii, 8 * n); break;
    case InstructionType::BNStatsAggregate: cycles = std::max(min_ii, 13 * (n / 3)); break;
    case InstructionType::CopyPredicated:
      cycles = count_ap_inputs(d) >= 2 && !in_psum(mem, d.ins[0]) && !in_psum(mem, d.ins[1]) ? std::max(min_ii, 2 * n)
                                                                                            : std::max(min_ii, n);
      break;
    default: cycles = std::max(min_ii, n); break;
    }
    break;
  }
  case Engine::Pool:
    // reference neuron-arch.md 2.4: iota 150 + N, affine_select GPSIMD_START(~150) + N; we apply the same
    // start-up to every GpSimd instruction (INFERRED: "no rule-of-thumb" for the rest).
    cycles = a.pool_startup_cycles + n;
    break;
  case Engine::SP:
    // Control and sync instructions: one SP instruction slot (INFERRED; not in the public cost formulas).
    cycles = 1;
    break;
  default:
    cycles = std::max(min_ii, n);
    break;
  }
  double ns = static_cast<double>(cycles) / engine_ghz(engine, a);
  return Cost{cycles, ns};
}

} // namespace neuronsim::engines
