// The per-instruction cost model. Every formula is here, once, with its source: reference neuron-arch.md
// section 2 (the NKI ISA per-instruction cost formulas [ISA226], the architecture guides [ARCH2/3/4]) and
// section 1 (clocks, bandwidths). N is the number of elements per partition of the instruction's main operand.
#include "neuronsim/engines/cost.hpp"

#include <algorithm>

namespace neuronsim::engines {

using isa::Dtype;
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

struct Operands {
  const DynInst &d;
  const Memory &mem;

  const Access *main() const {
    for (const auto &a : d.outs)
      if (a.tensor >= 0) return &a;
    for (const auto &a : d.ins)
      if (a.tensor >= 0) return &a;
    return nullptr;
  }
  int64_t n() const {
    const Access *a = main();
    return a ? a->free_elements() : 1;
  }
  bool psum(const Access &a) const {
    return a.tensor >= 0 && mem.program().tensors[a.tensor].mem == isa::MemoryType::PSUM;
  }
  bool sbuf(const Access &a) const {
    return a.tensor >= 0 && mem.program().tensors[a.tensor].mem == isa::MemoryType::SB;
  }
  int inputs() const {
    int k = 0;
    for (const auto &a : d.ins) k += a.tensor >= 0;
    return k;
  }
  template <typename F> bool all(F f) const {
    for (const auto &a : d.ins)
      if (a.tensor >= 0 && !f(a)) return false;
    for (const auto &a : d.outs)
      if (a.tensor >= 0 && !f(a)) return false;
    return true;
  }
  template <typename F> bool any(F f) const { return !all([&](const Access &a) { return !f(a); }); }
};

bool half_float(Dtype t) { return t == Dtype::bfloat16 || t == Dtype::float16; }
bool fp8(Dtype t) {
  return t == Dtype::float8e3 || t == Dtype::float8e4 || t == Dtype::float8e5 || t == Dtype::float8_e4m3fn;
}
bool innermost_contiguous(const Access &a) { return a.ap.size() < 2 || a.ap.back().step == 1 || a.ap.back().num == 1; }

// reference neuron-arch.md 1.4 [ARCH2]: with an innermost stride above 16 bytes an engine's SBUF bandwidth halves.
bool wide_stride(const Access &a) {
  if (a.ap.size() < 2 || a.ap.back().num <= 1) return false;
  const int64_t step = a.ap.back().step < 0 ? -a.ap.back().step : a.ap.back().step;
  return step * isa::dtype_size(a.dtype) > 16;
}

int64_t dma_bytes(const DynInst &d) {
  int64_t b = 0;
  for (const auto &o : d.outs)
    if (o.tensor >= 0) b += o.partitions() * o.free_elements() * isa::dtype_size(o.dtype);
  return b;
}

// DVE cycles (reference neuron-arch.md 2.2).
int64_t dve_cycles(const Operands &op, const ArchParams &a, int64_t n) {
  const isa::Inst &inst = *op.d.inst;
  const int64_t ii = a.min_ii_cycles;
  const bool v3 = a.gen >= isa::CoreGen::V3;
  auto perf_mode = [&](int64_t cycles) {
    // [ARCH3] v3 DVE perf mode, automatic: 4x for tensor_copy/tensor_scalar with SBUF in and out, BF16/FP16 and
    // innermost-contiguous; 2x when BF16/FP16 but non-contiguous (all SBUF) or contiguous with one side in PSUM.
    if (!v3 || !op.all([](const Access &x) { return half_float(x.dtype); })) return cycles;
    const bool all_sbuf = op.all([&](const Access &x) { return op.sbuf(x); });
    const bool contiguous = op.all(innermost_contiguous);
    if (all_sbuf && contiguous) return std::max(ii, cycles / 4);
    return std::max(ii, cycles / 2);
  };
  switch (inst.type) {
  case InstructionType::TensorTensor: {
    // [ISA226] max(MIN_II, N) with one input in PSUM and the other in SBUF, or all BF16 with add/mult/subtract
    // and both inputs contiguous in SBUF; otherwise max(MIN_II, 2N). [ARCH3] v3: 2x with both inputs in SBUF and
    // all tensors BF16/FP16.
    const auto &in = op.d.ins;
    const bool split = in.size() >= 2 && op.psum(in[0]) != op.psum(in[1]);
    const bool bf16_fast =
        op.all([](const Access &x) { return x.dtype == Dtype::bfloat16; }) &&
        (inst.f.op == isa::AluOp::add || inst.f.op == isa::AluOp::mult || inst.f.op == isa::AluOp::subtract) &&
        in.size() >= 2 && op.sbuf(in[0]) && op.sbuf(in[1]) && innermost_contiguous(in[0]) && innermost_contiguous(in[1]);
    const bool v3_fast = v3 && in.size() >= 2 && op.sbuf(in[0]) && op.sbuf(in[1]) &&
                         op.all([](const Access &x) { return half_float(x.dtype); });
    return (split || bf16_fast || v3_fast) ? std::max(ii, n) : std::max(ii, 2 * n);
  }
  case InstructionType::TensorScalar:
  case InstructionType::TensorScalarPtr:
    // [ISA226] tensor_tensor_scan max(MIN_II, 2N); scalar_tensor_tensor N for BF16 subtract-then-multiply with even
    // N, else 2N; tensor_scalar_reduce (an accumulating tensor_scalar) max(MIN_II, N) + MIN_II; tensor_scalar
    // max(MIN_II, N), with the v3 perf mode.
    if (inst.f.is_tensor_tensor_scan) return std::max(ii, 2 * n);
    if (inst.f.is_scalar_tensor_tensor) {
      const bool fast = op.all([](const Access &x) { return x.dtype == Dtype::bfloat16; }) &&
                        inst.f.op0 == isa::AluOp::subtract && inst.f.op1 == isa::AluOp::mult && n % 2 == 0;
      return std::max(ii, fast ? n : 2 * n);
    }
    if (inst.f.acc != isa::EngineAccumulationType::Idle) return std::max(ii, n) + ii;
    return perf_mode(std::max(ii, n));
  case InstructionType::TensorCopy:
    return perf_mode(std::max(ii, n));
  case InstructionType::TensorScalarCache:
    return std::max(ii, n);  // tensor_scalar_cumulative: the tensor_scalar rate (INFERRED)
  case InstructionType::TensorReduce: {
    // [ISA226] N/2 for BF16 in and out with add or max, otherwise N (floored at MIN_II, INFERRED).
    const bool fast = op.all([](const Access &x) { return x.dtype == Dtype::bfloat16; }) &&
                      (inst.f.op == isa::AluOp::add || inst.f.op == isa::AluOp::max);
    const int64_t in_n = !op.d.ins.empty() && op.d.ins[0].tensor >= 0 ? op.d.ins[0].free_elements() : n;
    return std::max(ii, fast ? in_n / 2 : in_n);
  }
  case InstructionType::Reciprocal: return std::max(ii, 8 * n);           // [ISA226] 8N
  case InstructionType::BNStatsAggregate: return std::max(ii, 13 * (n / 3));  // [ISA226] bn_aggr 13*(N/3)
  case InstructionType::Memset: {
    // [ISA226] max(MIN_II, N/2) for value 0 into BF16/FP16, else max(MIN_II, N).
    const bool fast = inst.f.constant == 0.0 && op.all([](const Access &x) { return half_float(x.dtype); });
    return std::max(ii, fast ? n / 2 : n);
  }
  case InstructionType::CopyPredicated: {
    // [ISA226] max(MIN_II, N) when source and predicate are in different memories, 2N when both are in SBUF.
    const auto &in = op.d.ins;
    const bool both_sbuf = in.size() >= 2 && op.sbuf(in[0]) && op.sbuf(in[1]);
    return std::max(ii, both_sbuf ? 2 * n : n);
  }
  case InstructionType::TensorCopyDynamicSrc:
  case InstructionType::TensorCopyDynamicDst:
    return std::max<int64_t>(600, n);  // [ISA226] MIN_II_DYNAMIC ~600
  case InstructionType::Max:
  case InstructionType::MaxIndex:
  case InstructionType::MatchReplace:
  case InstructionType::MaxIndexAndMatchReplace: {
    // [ISA226] max8 / nc_find_index8 N; nc_match_replace8 printed as min(MIN_II, N) (sic): we take the input's N.
    const int64_t in_n = !op.d.ins.empty() && op.d.ins[0].tensor >= 0 ? op.d.ins[0].free_elements() : n;
    return std::max(ii, in_n);
  }
  case InstructionType::Exponential:
  case InstructionType::QuantizeMx:
  case InstructionType::Rng:
    // [ARCH4] v4 DVE: exponential at 4x ACT exp throughput, quantize_mx 4 input elements per partition per cycle,
    // XORWOW 4 x 32-bit values per lane per cycle.
    if (a.gen >= isa::CoreGen::V4) return std::max(ii, n / 4);
    return std::max(ii, n);
  default:
    // [ISA226] tensor_scalar, tensor_copy, nc_stream_shuffle, range_select, dropout, bn_stats: max(MIN_II, N).
    return std::max(ii, n);
  }
}

} // namespace

Cost instruction_cost(const DynInst &d, Engine engine, const ArchParams &a, const Memory &mem) {
  const isa::Inst &inst = *d.inst;
  const Operands op{d, mem};
  const int64_t ii = a.min_ii_cycles;

  if (engine == Engine::DMA) {
    // reference neuron-arch.md 1.5 / 2.4: ~1300 ns fixed per transfer (descriptor setup, synchronization,
    // semaphore-to-start) plus bytes over the bandwidth of the 16 DMA engines that a transfer is spread over,
    // capped by HBM. The fixed part is a latency: transfers queued behind each other overlap it. HWDGE
    // instructions cost ~600 ns [DGE]. DMA transpose (v3) reaches ~90% of DMA throughput [ARCH3].
    Cost c;
    c.bytes = dma_bytes(d);
    double bw = std::min(a.dma_engine_bytes_per_ns * a.dma_engines, a.hbm_bytes_per_ns);
    if (inst.type == InstructionType::DMACopy && inst.f.copy_mode == isa::CopyMode::Transpose) bw *= 0.9;
    c.ns = static_cast<double>(c.bytes) / bw;
    c.latency_ns = inst.f.dge_type == isa::DGEType::HWDGE ? 600.0 : a.dma_fixed_ns;
    return c;
  }

  if (inst.type == InstructionType::CustomOp || inst.type == InstructionType::BIRKernel ||
      inst.type == InstructionType::DevicePrint) {
    // No documented cost: an external kernel (CustomOp / BIRKernel, run out of process by engines/ops/kernel.cpp)
    // and a device print (its tensor copied out to a host-visible buffer). neuronsim's ESTIMATE: the engine the
    // instruction names is occupied for one DMA transfer of every operand byte it reads and writes -- the fixed
    // ~1300 ns per transfer plus the bytes over the DMA bandwidth (16 engines, capped by HBM), as for a DMA --
    // and completes with that engine's usual latency. The kernel's own compute is not modelled.
    Cost c;
    int64_t bytes = 0;
    for (const auto &x : d.ins)
      if (x.tensor >= 0) bytes += x.partitions() * x.free_elements() * isa::dtype_size(x.dtype);
    if (inst.type != InstructionType::DevicePrint) bytes += dma_bytes(d);
    const double bw = std::min(a.dma_engine_bytes_per_ns * a.dma_engines, a.hbm_bytes_per_ns);
    c.ns = a.dma_fixed_ns + static_cast<double>(bytes) / bw;
    const double ghz = engine_ghz(engine, a);
    c.cycles = static_cast<int64_t>(c.ns * ghz + 0.5);
    if (engine != Engine::SP)
      c.latency_ns = static_cast<double>(a.sbuf_access_startup_cycles + a.dependent_overhead_cycles) / ghz;
    return c;
  }

  int64_t n = op.n();
  // Half bandwidth for an innermost stride above 16 bytes: the streaming term doubles.
  if (engine != Engine::PE && engine != Engine::SP && op.any(wide_stride)) n *= 2;

  int64_t cycles = 0;
  switch (engine) {
  case Engine::PE:
    if (inst.type == InstructionType::Matmult && inst.f.is_transpose) {
      // [ISA226] PE transpose max(P, min(64, F)).
      const Access *in = d.ins.empty() ? nullptr : &d.ins[0];
      const int64_t p = in ? in->partitions() : 1, f = in ? in->free_elements() : 1;
      cycles = std::max(p, std::min<int64_t>(a.pe_mm_init_cycles, f));
    } else if (inst.type == InstructionType::Matmult || inst.type == InstructionType::MatmultSparse ||
               inst.type == InstructionType::MatmultMx) {
      // [ISA226] back-to-back matmul max(min(64, N_stationary), N_moving); 4x for FP32 operands.
      const int64_t n_stat = d.ins.size() > 0 ? d.ins[0].free_elements() : 1;
      const int64_t n_mov = d.ins.size() > 1 ? d.ins[1].free_elements() : n;
      cycles = std::max(std::min<int64_t>(a.pe_mm_init_cycles, n_stat), n_mov);
      bool fp32_in = false;
      for (const auto &x : d.ins)
        fp32_in |= x.tensor >= 0 && (x.dtype == Dtype::float32 || x.dtype == Dtype::float32r);
      if (fp32_in) cycles *= 4;
    } else {
      cycles = std::max(ii, n);
    }
    break;
  case Engine::Activation:
    if (inst.type == InstructionType::ReadActivationAccumulator ||
        inst.type == InstructionType::ActivationReadAccumulator) {
      cycles = ii;  // [ARCH2] ActReadAccumulator "roughly 64 ScalarE cycles on NeuronCore-v2"
      break;
    }
    // [ISA226] activation max(MIN_II, N), the same with or without scale/bias [ARCH2]; activation_reduce adds an
    // accumulator read-out of MIN_II. [ARCH4] v4 ACT streams 256 BF16/FP16/FP8 elements per cycle (128 others).
    if (a.gen >= isa::CoreGen::V4 && op.all([](const Access &x) { return half_float(x.dtype) || fp8(x.dtype); }))
      n = (n + 1) / 2;
    cycles = std::max(ii, n);
    if (inst.type == InstructionType::Activation && inst.f.acc != isa::EngineAccumulationType::Idle) cycles += ii;
    break;
  case Engine::DVE:
    cycles = dve_cycles(op, a, n);
    break;
  case Engine::Pool:
    // [ISA226] iota 150 + N, affine_select GPSIMD_START (~150) + N; GpSimd has "no rule-of-thumb" [ARCH2], so the
    // same start-up + N is used for its other instructions (INFERRED).
    cycles = a.pool_startup_cycles + n;
    break;
  case Engine::SP:
    cycles = 1;  // control/sync instruction slot (INFERRED: not in the public cost formulas)
    break;
  default:
    cycles = std::max(ii, n);
    break;
  }

  Cost c;
  c.cycles = cycles;
  const double ghz = engine_ghz(engine, a);
  c.ns = static_cast<double>(cycles) / ghz;
  // Completion latency seen by a dependent instruction: the tensor-access start-up (~60 cycles on v2 [ARCH2]) plus
  // the static overhead of dependent back-to-back instructions (~100 cycles [ARCH2]). A chain of dependent
  // 1-element activations then issues every 64 + 160 = 224 ACT cycles; the measured figure is 264 [PERF Opt #5a].
  if (engine != Engine::SP)
    c.latency_ns = static_cast<double>(a.sbuf_access_startup_cycles + a.dependent_overhead_cycles) / ghz;
  return c;
}

} // namespace neuronsim::engines
