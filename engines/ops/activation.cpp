// Activation: out = f(in * scale + bias; alpha), and the dedicated Reciprocal / Exponential opcodes.
// reference neuronx-cc/bir/sim-activation-pwp.md 1 (operand contract) and 5 (the exact closed forms, the
// no-profile numerics of every sim_<fn>; the PWP LUT approximation is deliberately not modelled).
//
// Operand convention (ins indices), following the visitor's operand(inst, 1..3) order -- the roles of its row
// in isa/tables/inst_keys.def, by which the code below finds them (isa::operand_index):
//   ins[0] data
//   ins[1] scale: immediate or per-partition [P, 1] tensor; absent -> field `scale` (1.0 when not given)
//   ins[2] bias:  immediate or per-partition [P, 1] tensor; absent -> 0
//   ins[3] alpha: immediate or per-partition [P, 1] tensor; absent -> field `alpha`
// The pre-scale is two fp32 roundings (x * scale, then + bias); f is evaluated in double with the reference's
// double constants and rounded to fp32. `acc` folds the per-partition row sums of the output into the
// engine's accumulator registers (reference neuron-arch.md 3.2: ACT reduce_regs, add only).
// is_activate2 (birsim's simulateActivate2, reference sim-activation-pwp.md 1; semantics from the public
// nki.isa.activate2 page, reference neuron-arch.md 3.3): ins[1] imm0 and ins[2] imm1 (immediate or [P, 1];
// absent -> 0) enter as val = (data op0 imm0) op1 imm1, reverse0 / reverse1 swapping a stage's operands and
// bypass skipping it, each stage one fp32 rounding; then f(val; alpha); `acc` folds the rows with `reduce_op`
// (add, max, min, abs_max, abs_min; its reset is that op's identity). The imm0 / imm1 operand slots are those of
// scale / bias (INFERRED: the reference names simulateActivate2 but does not list its operands).
#include <cmath>

#include "engines/ops/common.hpp"
#include "neuronsim/isa/inst_rules.hpp"

namespace neuronsim::engines::ops {

namespace {

using AF = isa::ActivationFunctionType;

inline double sigmoid(double x) { return 1.0 / (std::exp(-x) + 1.0); }
inline double softplus(double x) { return std::log1p(std::exp(-std::fabs(x))) + (x <= 0 ? 0.0 : x); }

template <typename Fn> void map_row(float *x, int64_t n, float alpha, Fn fn) {
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(fn(double(x[i]), double(alpha)));
}

// Applies f to a row in place; one switch per row, the loop body is inlined per function.
void apply_fn(const Memory &m, AF f, float *x, int64_t n, float alpha) {
  switch (f) {
  case AF::Identity: case AF::Copy: return;
  case AF::Square: return map_row(x, n, alpha, [](double v, double) { return v * v; });
  case AF::Relu: return map_row(x, n, alpha, [](double v, double) { return double(std::fmax(float(v), 0.0f)); });
  // Lrelu: slope 0.01 hardcoded, alpha unused (reference 5).
  case AF::Lrelu: return map_row(x, n, alpha, [](double v, double) { return v <= 0 ? v * 0.01 : v; });
  case AF::Prelu: return map_row(x, n, alpha, [](double v, double a) { return v <= 0 ? v * a : v; });
  case AF::Sigmoid: return map_row(x, n, alpha, [](double v, double) { return sigmoid(v); });
  case AF::Tanh: return map_row(x, n, alpha, [](double v, double) { return std::tanh(v); });
  case AF::Exp: return map_row(x, n, alpha, [](double v, double) { return std::exp(v); });
  case AF::Softplus: return map_row(x, n, alpha, [](double v, double) { return softplus(v); });
  case AF::Sqrt: return map_row(x, n, alpha, [](double v, double) { return double(std::sqrt(float(v))); });
  case AF::Rsqrt: return map_row(x, n, alpha, [](double v, double) { return 1.0 / std::sqrt(v); });
  // Dsqrt is not in the reference roster: taken as d/dx sqrt(x) = 0.5 / sqrt(x).
  case AF::Dsqrt: return map_row(x, n, alpha, [](double v, double) { return 0.5 / std::sqrt(v); });
  case AF::Ln: return map_row(x, n, alpha, [](double v, double) { return std::log(v); });
  case AF::Ln_prime: return map_row(x, n, alpha, [](double v, double) { return 1.0 / v; });
  case AF::Erf: return map_row(x, n, alpha, [](double v, double) { return std::erf(v); });
  case AF::Sin: return map_row(x, n, alpha, [](double v, double) { return std::sin(v); });
  case AF::Arctan: return map_row(x, n, alpha, [](double v, double) { return std::atan(v); });
  case AF::Sign: return map_row(x, n, alpha, [](double v, double) { return double((v > 0) - (v < 0)); });
  case AF::Gelu:
    return map_row(x, n, alpha, [](double v, double) { return 0.5 * v * (std::erf(v / 1.414213562373095) + 1.0); });
  case AF::Mish: return map_row(x, n, alpha, [](double v, double) { return v * std::tanh(softplus(v)); });
  case AF::Gelu_apprx_tanh:
    return map_row(x, n, alpha, [](double v, double) {
      return 0.5 * v * (std::tanh((0.044715 * v * v * v + v) * 0.7978845608028654) + 1.0);
    });
  case AF::Gelu_apprx_sigmoid: return map_row(x, n, alpha, [](double v, double) { return v * sigmoid(1.702 * v); });
  // Derivative_Gelu_apprx_sigmoid: reference sim-activation-pwp.md 5 (Deriv_Gelu_aps), u = 1.702 x:
  // (u + e^u + 1) e^u / (e^u + 1)^2, the derivative of x * sigmoid(1.702 x).
  case AF::Derivative_Gelu_apprx_sigmoid:
    return map_row(x, n, alpha, [](double v, double) {
      const double u = 1.702 * v, e = std::exp(u);
      return (u + e + 1.0) * e / ((e + 1.0) * (e + 1.0));
    });
  case AF::Derivative_Gelu:
    return map_row(x, n, alpha, [](double v, double) {
      return 0.5 * (std::erf(v * 0.7071067811865476) + 1.0) + v * 0.3989423 * std::exp(-v * v / 2.0);
    });
  case AF::Derivative_Erf:
    return map_row(x, n, alpha, [](double v, double) { return std::exp(-v * v) * 1.1283792; });
  case AF::Abs: return map_row(x, n, alpha, [](double v, double) { return std::fabs(v); });
  case AF::Reciprocal: return map_row(x, n, alpha, [](double v, double) { return 1.0 / v; });
  case AF::Abs_reciprocal_sqrt:
    return map_row(x, n, alpha, [](double v, double) { return 1.0 / std::sqrt(std::fabs(v)); });
  case AF::MemsetZero: return map_row(x, n, alpha, [](double, double) { return 0.0; });
  case AF::Silu: return map_row(x, n, alpha, [](double v, double) { return v / (std::exp(-v) + 1.0); });
  case AF::Derivative_silu:
    return map_row(x, n, alpha, [](double v, double) {
      const double e = std::exp(v);
      return (v * e + 1.0) * e / ((e + 1.0) * (e + 1.0));
    });
  // Is_finite is not in the reference roster: 1.0 for a finite input, else 0.0.
  case AF::Is_finite: return map_row(x, n, alpha, [](double v, double) { return std::isfinite(v) ? 1.0 : 0.0; });
  case AF::Unknown: break;
  }
  unsupported(m, "func", std::string("activation function '") + isa::enum_name(f) + "' has no semantics");
}

// ins[i] as per-partition values, or `dflt` for every partition when absent.
std::vector<float> operand_or(const DynInst &d, const Memory &m, size_t i, int64_t parts, float dflt) {
  if (!has_in(d, i)) return std::vector<float>(static_cast<size_t>(parts), dflt);
  return per_partition(d, m, i, parts);
}

} // namespace

namespace {

// The operand positions, from the type's row of inst_keys.def.
struct ActivationOperands {
  size_t data, scale, bias, alpha, acc_seed, acc_out;
};
const ActivationOperands &activation_operands() {
  static const ActivationOperands o = [] {
    using isa::operand_index;
    constexpr auto A = isa::InstructionType::Activation;
    return ActivationOperands{operand_index(A, "data"),     operand_index(A, "scale"),
                              operand_index(A, "bias"),     operand_index(A, "alpha"),
                              operand_index(A, "acc_seed"), operand_index(A, "acc_out", true)};
  }();
  return o;
}

} // namespace

void exec_activation(const DynInst &d, Memory &m, EngineState &st) {
  const isa::Inst &I = *d.inst;
  const ActivationOperands &op = activation_operands();
  const Access &in = in_ap(d, m, op.data);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, in, out, "outs[0]");
  const int64_t parts = in.partitions(), free = in.free_elements();
  const float scale_field = I.has(isa::Field::scale) ? float(I.f.scale) : 1.0f;
  const std::vector<float> scale = operand_or(d, m, op.scale, parts, scale_field);
  const std::vector<float> bias = operand_or(d, m, op.bias, parts, 0.0f);
  const std::vector<float> alpha = operand_or(d, m, op.alpha, parts, float(I.f.alpha));
  Tile x = read_tile(m, in);
  if (I.f.is_activate2) {
    const std::vector<float> imm0 = operand_or(d, m, op.scale, parts, 0.0f);
    const std::vector<float> imm1 = operand_or(d, m, op.bias, parts, 0.0f);
    for (int64_t p = 0; p < parts; ++p) {
      float *row = x.row(p).data();
      const float a = imm0[static_cast<size_t>(p)], b = imm1[static_cast<size_t>(p)];
      if (I.f.op0 != isa::AluOp::bypass)
        I.f.reverse0 ? alu_sv(I.f.op0, a, row, row, free) : alu_vs(I.f.op0, row, a, row, free);
      if (I.f.op1 != isa::AluOp::bypass)
        I.f.reverse1 ? alu_sv(I.f.op1, b, row, row, free) : alu_vs(I.f.op1, row, b, row, free);
      apply_fn(m, I.f.act_func, row, free, alpha[static_cast<size_t>(p)]);
    }
  } else {
    for (int64_t p = 0; p < parts; ++p) {
      float *row = x.row(p).data();
      const float s = scale[static_cast<size_t>(p)], b = bias[static_cast<size_t>(p)];
      for (int64_t i = 0; i < free; ++i) row[i] = row[i] * s + b;
      apply_fn(m, I.f.act_func, row, free, alpha[static_cast<size_t>(p)]);
    }
  }
  // The accumulator leg: `acc` folds the row sums (reduce_op must be add on ACT, neuron-arch.md 3.2).
  // LoadAccumulate takes its seed from ins[4] (immediate or [P, 1]; INFERRED position, after data/scale/bias/
  // alpha). outs[1], when present, receives the registers after the fold (NKI activation_reduce's reduce_res).
  std::vector<float> load;
  if (has_in(d, op.acc_seed))
    load = per_partition(d, m, op.acc_seed, parts);
  const isa::AluOp reduce = I.f.is_activate2 ? I.f.reduce_op : isa::AluOp::add;
  engine_accumulate(m, st, I.f.acc, reduce, x, has_in(d, op.acc_seed) ? &load : nullptr, "acc");
  m.write_f32(out, x.data());
  if (d.outs.size() > op.acc_out)
    drain_accumulator(m, st, out_ap(d, m, op.acc_out), false, "outs[1]");
}

// reference sim-activation-pwp.md 1 QUIRK: InstReciprocal is inline exact 1.0f / x.
void exec_reciprocal(const DynInst &d, Memory &m, EngineState &) {
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, in, out, "outs[0]");
  Tile x = read_tile(m, in);
  x = 1.0f / x;
  m.write_f32(out, x.data());
}

// reference sim-activation-pwp.md 1 QUIRK: InstExponential is expf(in - rowmax) followed by the accumulator fold
// (the softmax denominator). Operands follow the encoder (reference isa/tensorscalar-encoding.md "Exponential"):
//   ins[0] data; ins[1] imm0, the per-partition value subtracted (row max; immediate or [P, 1]; absent -> 0);
//   ins[2] imm1, the reduce-init loaded by LoadAccumulate (NKI exponential reduce_init).
//   outs[0] exp values; outs[1] (optional) the registers after the fold (the fused DveReadAccumulator drain).
// The command is `reduce_cmd` (spec 000: InstExponential +0xF0) or `acc` when only that key is given; with
// neither the registers are left alone. The reduce op is add.
void exec_exponential(const DynInst &d, Memory &m, EngineState &st) {
  const isa::Inst &I = *d.inst;
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, in, out, "outs[0]");
  const int64_t parts = in.partitions(), free = in.free_elements();
  const std::vector<float> mx = operand_or(d, m, 1, parts, 0.0f);
  Tile x = read_tile(m, in);
  for (int64_t p = 0; p < parts; ++p) {
    float *row = x.row(p).data();
    const float s = mx[static_cast<size_t>(p)];
    for (int64_t i = 0; i < free; ++i) row[i] = std::exp(row[i] - s);
  }
  const auto acc = I.has(isa::Field::reduce_cmd) ? I.f.reduce_cmd : I.f.acc;
  std::vector<float> load;
  if (has_in(d, 2)) load = per_partition(d, m, 2, parts);
  engine_accumulate(m, st, acc, isa::AluOp::add, x, has_in(d, 2) ? &load : nullptr, "reduce_cmd");
  m.write_f32(out, x.data());
  if (d.outs.size() > 1) drain_accumulator(m, st, out_ap(d, m, 1), false, "outs[1]");
}

} // namespace neuronsim::engines::ops
