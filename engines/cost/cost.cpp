// The per-instruction cost model. Every formula is here, once, with its source: reference neuron-arch.md
// section 2 (the NKI ISA per-instruction cost formulas [ISA226], the architecture guides [ARCH2/3/4], the
// performance guide [PERF]) and section 1 (clocks). Every constant is a parameter of sim/arch/*.json; which rule an
// instruction type gets is its row of cost_rules.def. N is the number of elements per partition of the
// instruction's main operand.
#include "neuronsim/engines/cost.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "neuronsim/engines/dma.hpp"

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
  case Engine::Unassigned:
  case Engine::DMA:
  case Engine::ALL: return 1.0;
  }
  return 1.0;
}

namespace {

bool half_float(Dtype t) { return t == Dtype::bfloat16 || t == Dtype::float16; }
bool fp8(Dtype t) {
  return t == Dtype::float8e3 || t == Dtype::float8e4 || t == Dtype::float8e5 || t == Dtype::float8_e4m3fn;
}
bool fp32(Dtype t) { return t == Dtype::float32 || t == Dtype::float32r; }
bool innermost_contiguous(const Access &a) { return a.ap.size() < 2 || a.ap.back().step == 1 || a.ap.back().num == 1; }

// What a rule sees: the instruction's operands, the engine that runs it, the architecture, and N.
struct Ctx {
  const DynInst &d;
  const Memory &mem;
  const ArchParams &a;
  Engine engine;
  int64_t n = 1;  // elements per partition of the main operand (doubled for a wide innermost stride)

  const isa::Inst &inst() const { return *d.inst; }
  int64_t ii() const { return a.min_ii_cycles; }
  const Access *main() const {
    for (const auto &x : d.outs)
      if (x.tensor >= 0) return &x;
    for (const auto &x : d.ins)
      if (x.tensor >= 0) return &x;
    return nullptr;
  }
  // N of the first input (reductions and the max8 family stream their input, not their small output).
  int64_t input_n() const { return !d.ins.empty() && d.ins[0].tensor >= 0 ? d.ins[0].free_elements() : n; }
  isa::MemoryType mem_of(const Access &x) const { return mem.program().tensors[static_cast<size_t>(x.tensor)].mem; }
  bool psum(const Access &x) const { return x.tensor >= 0 && mem_of(x) == isa::MemoryType::PSUM; }
  bool sbuf(const Access &x) const { return x.tensor >= 0 && mem_of(x) == isa::MemoryType::SB; }
  template <typename F> bool all(F f) const {
    for (const auto &x : d.ins)
      if (x.tensor >= 0 && !f(x)) return false;
    for (const auto &x : d.outs)
      if (x.tensor >= 0 && !f(x)) return false;
    return true;
  }
  template <typename F> bool any(F f) const { return !all([&](const Access &x) { return !f(x); }); }
};

// reference neuron-arch.md 1.4 [ARCH2]: with an innermost stride above 16 bytes an engine's SBUF bandwidth halves.
bool wide_stride(const Access &x, const ArchParams &a) {
  if (x.ap.size() < 2 || x.ap.back().num <= 1) return false;
  const int64_t step = x.ap.back().step < 0 ? -x.ap.back().step : x.ap.back().step;
  return step * isa::dtype_size(x.dtype) > a.sbuf_wide_stride_bytes;
}

Cost cycles(int64_t c) {
  Cost r;
  r.cycles = c;
  return r;
}

// ScalarE streaming: max(MIN_II, N) [ISA226]; [ARCH4] v4 streams 256 BF16/FP16/FP8 elements per cycle.
int64_t act_stream(const Ctx &c) {
  int64_t n = c.n;
  if (c.a.act_narrow_dtype_speedup > 1 && c.all([](const Access &x) { return half_float(x.dtype) || fp8(x.dtype); }))
    n = (n + c.a.act_narrow_dtype_speedup - 1) / c.a.act_narrow_dtype_speedup;
  return std::max(c.ii(), n);
}

// One pass over the main operand on the engine that runs it: max(MIN_II, N) on DVE and PE, the ScalarE stream on
// ACT, GPSIMD_START + N on POOL ([ISA226] iota 150 + N, affine_select GPSIMD_START + N; GpSimd has "no
// rule-of-thumb" [ARCH2], so its other instructions take the same start-up + N, INFERRED).
Cost stream(const Ctx &c) {
  switch (c.engine) {
  case Engine::Activation: return cycles(act_stream(c));
  case Engine::Pool: return cycles(c.a.pool_startup_cycles + c.n);
  case Engine::PE:
  case Engine::DVE: return cycles(std::max(c.ii(), c.n));
  case Engine::SP:
  case Engine::Unassigned:
  case Engine::DMA:
  case Engine::ALL: return cycles(c.a.sequencer_instruction_cycles);
  }
  return cycles(c.a.sequencer_instruction_cycles);
}

// [ARCH3] the v3 DVE perf mode, automatic: 4x for tensor_copy / tensor_scalar with SBUF in and out, BF16/FP16 and
// innermost-contiguous; 2x when BF16/FP16 but non-contiguous (all SBUF) or contiguous with one side in PSUM.
Cost perf_mode(const Ctx &c, int64_t base) {
  Cost r = cycles(base);
  if (c.a.dve_perf_mode_speedup <= 1 || !c.all([](const Access &x) { return half_float(x.dtype); })) return r;
  const bool all_sbuf = c.all([&](const Access &x) { return c.sbuf(x); });
  const bool contiguous = c.all(innermost_contiguous);
  const int64_t f = all_sbuf && contiguous ? c.a.dve_perf_mode_fast_speedup : c.a.dve_perf_mode_speedup;
  r.cycles = std::max(c.ii(), base / f);
  r.dve_perf_mode = true;
  return r;
}

// ---- the rules (cost_rules.def) -------------------------------------------------------------------------------

Cost tensor_tensor(const Ctx &c) {
  if (c.engine != Engine::DVE) return stream(c);
  // [ISA226] max(MIN_II, N) with one input in PSUM and the other in SBUF, or all BF16 with add/mult/subtract and
  // both inputs contiguous in SBUF; otherwise max(MIN_II, 2N). [ARCH3] v3: 2x with both inputs in SBUF and all
  // tensors BF16/FP16.
  const auto &in = c.d.ins;
  const isa::AluOp op = c.inst().f.op;
  const bool two = in.size() >= 2;
  const bool split = two && c.psum(in[0]) != c.psum(in[1]);
  const bool bf16_fast = two && c.all([](const Access &x) { return x.dtype == Dtype::bfloat16; }) &&
                         (op == isa::AluOp::add || op == isa::AluOp::mult || op == isa::AluOp::subtract) &&
                         c.sbuf(in[0]) && c.sbuf(in[1]) && innermost_contiguous(in[0]) && innermost_contiguous(in[1]);
  if (split || bf16_fast) return cycles(std::max(c.ii(), c.n));
  Cost r = cycles(std::max(c.ii(), 2 * c.n));
  if (c.a.dve_perf_mode_speedup > 1 && two && c.sbuf(in[0]) && c.sbuf(in[1]) &&
      c.all([](const Access &x) { return half_float(x.dtype); })) {
    r.cycles = std::max(c.ii(), 2 * c.n / c.a.dve_perf_mode_speedup);
    r.dve_perf_mode = true;
  }
  return r;
}

Cost tensor_scalar(const Ctx &c) {
  if (c.engine != Engine::DVE) return stream(c);
  // [ISA226] tensor_tensor_scan max(MIN_II, 2N); scalar_tensor_tensor N for BF16 subtract-then-multiply with even
  // N, else 2N; tensor_scalar_reduce (an accumulating tensor_scalar) max(MIN_II, N) + MIN_II; tensor_scalar
  // max(MIN_II, N), with the v3 perf mode.
  const isa::Inst &inst = c.inst();
  if (inst.f.is_tensor_tensor_scan) return cycles(std::max(c.ii(), 2 * c.n));
  if (inst.f.is_scalar_tensor_tensor) {
    const bool fast = c.all([](const Access &x) { return x.dtype == Dtype::bfloat16; }) &&
                      inst.f.op0 == isa::AluOp::subtract && inst.f.op1 == isa::AluOp::mult && c.n % 2 == 0;
    return cycles(std::max(c.ii(), fast ? c.n : 2 * c.n));
  }
  if (inst.f.acc != isa::EngineAccumulationType::Idle) return cycles(std::max(c.ii(), c.n) + c.ii());
  return perf_mode(c, std::max(c.ii(), c.n));
}

Cost tensor_copy(const Ctx &c) {
  if (c.engine != Engine::DVE) return stream(c);
  return perf_mode(c, std::max(c.ii(), c.n));  // [ISA226] max(MIN_II, N), with the v3 perf mode
}

Cost tensor_scalar_cache(const Ctx &c) {
  if (c.engine != Engine::DVE) return stream(c);
  return cycles(std::max(c.ii(), c.n));  // tensor_scalar_cumulative: the tensor_scalar rate (INFERRED)
}

Cost tensor_reduce(const Ctx &c) {
  if (c.engine != Engine::DVE) return stream(c);
  // [ISA226] N/2 for BF16 in and out with add or max, otherwise N (floored at MIN_II, INFERRED).
  const isa::AluOp op = c.inst().f.op;
  const bool fast = c.all([](const Access &x) { return x.dtype == Dtype::bfloat16; }) &&
                    (op == isa::AluOp::add || op == isa::AluOp::max);
  return cycles(std::max(c.ii(), fast ? c.input_n() / 2 : c.input_n()));
}

Cost reciprocal(const Ctx &c) {
  if (c.engine != Engine::DVE) return stream(c);  // [SHARED] ACT reciprocal max(MIN_II, N)
  return cycles(std::max(c.ii(), 8 * c.n));       // [ISA226] DVE reciprocal 8N
}

Cost bn_aggr(const Ctx &c) {
  if (c.engine != Engine::DVE) return stream(c);
  return cycles(std::max(c.ii(), 13 * (c.n / 3)));  // [ISA226] bn_aggr max(MIN_II, 13 * (N / 3))
}

Cost memset(const Ctx &c) {
  if (c.engine != Engine::DVE) return stream(c);
  // [ISA226] max(MIN_II, N/2) for value 0 into BF16/FP16, else max(MIN_II, N).
  const bool fast = c.inst().f.constant == 0.0 && c.all([](const Access &x) { return half_float(x.dtype); });
  return cycles(std::max(c.ii(), fast ? c.n / 2 : c.n));
}

Cost copy_predicated(const Ctx &c) {
  if (c.engine != Engine::DVE) return stream(c);
  // [ISA226] max(MIN_II, N) when source and predicate are in different memories, 2N when both are in SBUF.
  const auto &in = c.d.ins;
  const bool both_sbuf = in.size() >= 2 && c.sbuf(in[0]) && c.sbuf(in[1]);
  return cycles(std::max(c.ii(), both_sbuf ? 2 * c.n : c.n));
}

Cost dynamic_copy(const Ctx &c) {
  // [ISA226] tensor_copy_dynamic_src/dst on DVE, ACT or POOL: max(MIN_II_DYNAMIC, N).
  if (c.engine == Engine::SP) return stream(c);
  return cycles(std::max(c.a.min_ii_dynamic_cycles, c.n));
}

Cost top8(const Ctx &c) {
  if (c.engine != Engine::DVE) return stream(c);
  // [ISA226] max8 / nc_find_index8 N; nc_match_replace8 printed as min(MIN_II, N) (sic): the input's N.
  return cycles(std::max(c.ii(), c.input_n()));
}

Cost exponential(const Ctx &c) {
  if (c.engine != Engine::DVE) return stream(c);
  return cycles(std::max(c.ii(), c.n / c.a.dve_exponential_speedup));  // [ARCH4] 4x ACT exp throughput
}

Cost quantize_mx(const Ctx &c) {
  if (c.engine != Engine::DVE) return stream(c);
  return cycles(std::max(c.ii(), c.n / c.a.dve_quantize_mx_elements_per_cycle));  // [ARCH4] 4 elements / cycle
}

Cost rng(const Ctx &c) {
  if (c.engine != Engine::DVE) return stream(c);
  return cycles(std::max(c.ii(), c.n / c.a.dve_rng_values_per_cycle));  // [ARCH4] XORWOW 4 values / lane / cycle
}

Cost activation(const Ctx &c) {
  if (c.engine != Engine::Activation) return stream(c);
  // [ISA226] activation max(MIN_II, N), the same with or without scale/bias [ARCH2]; activation_reduce adds an
  // accumulator read-out [ARCH2].
  int64_t k = act_stream(c);
  if (c.inst().f.acc != isa::EngineAccumulationType::Idle) k += c.a.act_read_accumulator_cycles;
  return cycles(k);
}

Cost act_read_accumulator(const Ctx &c) {
  if (c.engine != Engine::Activation) return stream(c);
  return cycles(c.a.act_read_accumulator_cycles);  // [ARCH2] "roughly 64 ScalarE cycles on NeuronCore-v2"
}

Cost matmul(const Ctx &c) {
  if (c.engine != Engine::PE) return stream(c);
  const isa::Inst &inst = c.inst();
  const auto &in = c.d.ins;
  bool fp32_in = false, fp8_fast = true;
  for (const auto &x : in) {
    if (x.tensor < 0) continue;
    fp32_in |= fp32(x.dtype);
    fp8_fast &= fp8(x.dtype) && x.dtype != Dtype::float8e3;  // [ARCH3] FP8_E3 gets no DoubleRow speedup
  }
  if (inst.type == InstructionType::Matmult && inst.f.is_transpose) {
    // [ISA226] PE transpose max(P, min(64, F)); FP32 pays its passes (4 on v2; [ARCH3] v3 transpose mode: 2x).
    const int64_t p = in.empty() ? 1 : in[0].partitions(), f = in.empty() ? 1 : in[0].free_elements();
    return cycles(std::max(p, std::min(c.a.pe_mm_init_cycles, f)) * (fp32_in ? c.a.pe_fp32_transpose_passes : 1));
  }
  // [ARCH2, PERF Opt #7] each nc_matmul is a LoadStationary (LS) and a MultiplyMoving (MM): MM issues every
  // max(N_moving, MM_INIT_LATENCY) cycles; Fast LoadStationary takes N_stationary / 4 and loads in the
  // background of the previous MM, so back to back the array runs at max(LS, MM) per matmul: with the LS hidden
  // this is [ISA226] max(min(64, N_stationary), N_moving) except that a short stationary (< 64) no longer speeds
  // up the MM ([PERF Opt #7]: MM_II ~ max(1, MM_INIT_LATENCY)). FP32 runs as passes ([ISA226] 4x).
  // [ARCH3] FP8 DoubleRow: K = 256 per instruction (the moving free size holds the two rows) in the time of K = 128.
  const int64_t n_stat = !in.empty() && in[0].tensor >= 0 ? in[0].free_elements() : 1;
  const int64_t n_mov = in.size() > 1 && in[1].tensor >= 0 ? in[1].free_elements() : c.n;
  // [ISA] is_stationary_onezero / is_moving_onezero (BIR is_weight_onezero / is_fmap_onezero): an operand of only
  // zeros and ones "could lead to 2x better performance if ... float32": half the FP32 passes.
  const bool onezero = inst.f.is_weight_onezero || inst.f.is_fmap_onezero;
  const int64_t passes = fp32_in ? (onezero ? std::max<int64_t>(1, c.a.pe_fp32_passes / 2) : c.a.pe_fp32_passes) : 1;
  const bool double_row = inst.f.perf_mode == isa::MatmultPerfMode::DoubleRow && c.a.pe_fp8_double_row && fp8_fast;
  const int64_t moving = double_row ? (n_mov + 1) / 2 : n_mov;
  Cost r = cycles(std::max(moving, c.a.pe_mm_init_cycles) * passes);
  const int64_t ls = (n_stat + c.a.pe_fast_weight_load_speedup - 1) / c.a.pe_fast_weight_load_speedup;
  r.weight_load_cycles = ls * passes;
  // calibration.md E4: a lone MultiplyMoving lasts its moving columns + one cycle per stationary column + the
  // array's fill and drain; its LoadStationary starts ~26 ns before it.
  r.fill_drain_cycles = (c.a.pe_fill_drain_cycles + std::min<int64_t>(n_stat, 128)) * passes;
  r.isolated_ls_cycles = c.a.pe_isolated_ls_cycles;
  return r;
}

Cost sequencer(const Ctx &c) { return cycles(c.a.sequencer_instruction_cycles); }

// calibration.md E1: loading the activation table (a LoadActFuncSet) takes ~1287 ns of ACT. The core charges the
// same occupancy to an activation whose function the resident set lacks (sim/core_issue.cpp).
Cost act_table_load(const Ctx &c) {
  if (c.engine != Engine::Activation) return stream(c);
  Cost r;
  r.ns = c.a.act_table_load_ns;
  r.cycles = static_cast<int64_t>(r.ns * c.a.act_ghz + 0.5);
  return r;
}

Cost dma_transfer(const Ctx &c) {
  if (c.engine != Engine::DMA) return stream(c);  // not reached: the scheduler puts DMA types on DMA queues
  Cost r;
  for (const auto &o : c.d.outs)
    if (o.tensor >= 0) r.bytes += o.partitions() * o.free_elements() * isa::dtype_size(o.dtype);
  return r;
}

Cost host_transfer(const Ctx &c) {
  // No documented cost: an external kernel (CustomOp / BIRKernel / NKIKLIRKernel, run out of process by
  // engines/ops/kernel.cpp) and a device print (its tensor copied out to a host-visible buffer). neuronsim's
  // ESTIMATE: the engine the instruction names is occupied for one DMA transfer of every operand byte it reads
  // and writes -- the DMA latency plus the bytes over the DMA engines' read rate, capped by the core's HBM share --
  // and completes with that engine's usual latency. The kernel's own compute is not modelled.
  int64_t bytes = 0;
  for (const auto &x : c.d.ins)
    if (x.tensor >= 0) bytes += x.partitions() * x.free_elements() * isa::dtype_size(x.dtype);
  if (c.inst().type != InstructionType::DevicePrint)
    for (const auto &o : c.d.outs)
      if (o.tensor >= 0) bytes += o.partitions() * o.free_elements() * isa::dtype_size(o.dtype);
  const double bw = std::min(c.a.dma_engine_bytes_per_ns * c.a.dma_engines, c.a.hbm_bytes_per_ns);
  Cost r;
  r.ns = c.a.dma_latency_ns + static_cast<double>(bytes) / bw;
  r.cycles = static_cast<int64_t>(r.ns * engine_ghz(c.engine, c.a) + 0.5);
  return r;
}

using Rule = Cost (*)(const Ctx &);
struct RuleRow {
  Rule fn = nullptr;
  const char *name = nullptr;
  const char *why = nullptr;
};

const std::array<RuleRow, isa::kNumInstructionTypes> &rules() {
  static const std::array<RuleRow, isa::kNumInstructionTypes> t = [] {
    std::array<RuleRow, isa::kNumInstructionTypes> a{};
#define NS_COST(type, rule, why) a[static_cast<size_t>(InstructionType::type)] = RuleRow{&rule, #rule, why};
#include "engines/cost/cost_rules.def"
#undef NS_COST
    return a;
  }();
  return t;
}

} // namespace

const char *cost_rule_name(InstructionType t) {
  const auto i = static_cast<size_t>(t);
  return i < rules().size() ? rules()[i].name : nullptr;
}

const char *cost_rule_why(InstructionType t) {
  const auto i = static_cast<size_t>(t);
  return i < rules().size() ? rules()[i].why : nullptr;
}

Cost instruction_cost(const DynInst &d, Engine engine, const ArchParams &a, const Memory &mem) {
  const isa::Inst &inst = *d.inst;
  const auto i = static_cast<size_t>(inst.type);
  const RuleRow *row = i < rules().size() ? &rules()[i] : nullptr;
  if (!row || !row->fn)
    throw std::logic_error(std::string("no cost rule for ") + isa::inst_type_name(inst.type) +
                           " (add its row to engines/cost/cost_rules.def)");
  Ctx c{d, mem, a, engine};
  if (engine == Engine::DMA) return dma_transfer(c);  // every instruction on a DMA queue is a transfer
  const bool host = row->fn == &host_transfer;
  if (engine == Engine::SP && !host) {
    // The Sync engine has no data path: an instruction it runs is a sequencer instruction.
    Cost r = cycles(a.sequencer_instruction_cycles);
    r.ns = static_cast<double>(r.cycles) / a.sp_ghz;
    return r;
  }
  if (const Access *m = c.main()) c.n = m->free_elements();
  // Half bandwidth for an innermost stride above 16 bytes: the streaming term doubles.
  if (engine != Engine::PE && c.any([&](const Access &x) { return wide_stride(x, a); }))
    c.n *= a.sbuf_wide_stride_slowdown;
  Cost r = row->fn(c);
  const double ghz = engine_ghz(engine, a);
  // calibration.md E1 / E3: every ACT data-path instruction occupies ACT for a fixed time besides its stream (its
  // access start-up included): a lone exp on 128 elements lasts 400 ns on trn2, a lone 1-element ACTIVATE 159 ns
  // on NC-v2. Sequencer instructions and the table load have their own rules.
  const bool act_fixed = engine == Engine::Activation && !host && row->fn != &sequencer && row->fn != &act_table_load;
  if (act_fixed) r.cycles += a.act_fixed_cycles;
  if (!host && row->fn != &act_table_load) r.ns = static_cast<double>(r.cycles) / ghz;
  r.weight_load_ns = static_cast<double>(r.weight_load_cycles) / ghz;
  r.fill_drain_ns = static_cast<double>(r.fill_drain_cycles) / ghz;
  r.isolated_ls_ns = static_cast<double>(r.isolated_ls_cycles) / ghz;
  // Completion latency seen by a dependent instruction: the tensor-access start-up (~60 cycles on v2 [ARCH2]) plus
  // the static overhead of a dependent instruction ([ARCH2] ~100 cycles). ACT's fixed occupancy holds its access
  // start-up, so its latency is what the interval of dependent 1-element instructions shows beyond their
  // occupancy (calibration.md E3: 264 cycles = 64 + 159 + 41; docs/timing-model.md 4).
  if (engine == Engine::Activation) {
    r.latency_ns = static_cast<double>(a.act_dependent_overhead_cycles) / ghz;
  } else if (engine != Engine::SP) {
    r.latency_ns = static_cast<double>(a.sbuf_access_startup_cycles + a.dependent_overhead_cycles) / ghz;
  }
  return r;
}

Work instruction_work(const DynInst &d) {
  Work w;
  const isa::Inst &inst = *d.inst;
  const bool matmul = inst.type == InstructionType::Matmult || inst.type == InstructionType::MatmultBase ||
                      inst.type == InstructionType::MatmultSparse || inst.type == InstructionType::MatmultMx;
  if (matmul && !inst.f.is_transpose && d.ins.size() > 1 && d.ins[0].tensor >= 0 && d.ins[1].tensor >= 0) {
    w.flops = 2 * d.ins[0].partitions() * d.ins[0].free_elements() * d.ins[1].free_elements();
    return w;
  }
  for (const auto &o : d.outs)
    if (o.tensor >= 0)
      return w.elements = o.partitions() * o.free_elements(), w;
  return w;
}

double peak_flops_per_ns(const ArchParams &arch) {
  return 2.0 * static_cast<double>(arch.partitions * arch.partitions) * arch.pe_ghz;
}

double peak_elements_per_ns(isa::Engine engine, const ArchParams &arch) {
  return static_cast<double>(arch.partitions) * engine_ghz(engine, arch);
}

} // namespace neuronsim::engines
