// Select and CopyPredicated (reference neuronx-cc/bir/sim-elementwise-datamove.md 5.5).
//
// Select: out[i] = pred[i] ? on_true[i] : on_false[i], with a strict 0/1 predicate (any other value is a
// SimulationError, as birsim throws). Operand convention:
//   ins[0] predicate tensor, ins[1] on_true, ins[2] on_false; on_true / on_false are each a full tensor or an
//   immediate broadcast to every element.
// CopyPredicated: out[i] = pred[i] != 0 ? src[i] : out[i] (the destination keeps its value elsewhere);
// reverse_pred inverts the predicate (NKI tensor_copy_predicated). Operand convention:
//   ins[0] source data, ins[1] predicate. src and out share a dtype, so the copy is bit-exact (raw bytes).
#include <cstring>

#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

namespace {
// ins[i] as n values: a tensor of n elements or a broadcast immediate.
std::vector<float> full_or_imm(const DynInst &d, const Memory &m, size_t i, int64_t n) {
  if (is_imm(d, i)) return std::vector<float>(static_cast<size_t>(n), float(imm_value(d, i)));
  const Access &a = in_ap(d, m, i);
  if (elems(a) != n)
    unsupported(m, "ins[" + std::to_string(i) + "]",
                "has " + std::to_string(elems(a)) + " elements, the predicate " + std::to_string(n));
  std::vector<float> v(static_cast<size_t>(n));
  m.read_f32(a, v.data());
  return v;
}
} // namespace

void exec_select(const DynInst &d, Memory &m, EngineState &) {
  const Access &pa = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, pa, out, "outs[0]");
  const int64_t n = elems(pa);
  std::vector<float> pred(static_cast<size_t>(n));
  m.read_f32(pa, pred.data());
  std::vector<float> t = full_or_imm(d, m, 1, n);
  const std::vector<float> f = full_or_imm(d, m, 2, n);
  for (int64_t i = 0; i < n; ++i) {
    const float p = pred[static_cast<size_t>(i)];
    if (p != 0.0f && p != 1.0f)
      throw SimulationError(ctx_field(m, "ins[0]"), "Select predicate element " + std::to_string(i) +
                                                        " is " + std::to_string(p) + ", not 0 or 1");
    if (p == 0.0f) t[static_cast<size_t>(i)] = f[static_cast<size_t>(i)];
  }
  m.write_f32(out, t.data());
}

void exec_copy_predicated(const DynInst &d, Memory &m, EngineState &) {
  const Access &src = in_ap(d, m, 0);
  const Access &pa = in_ap(d, m, 1);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, src, out, "outs[0]");
  require_same_count(m, src, pa, "ins[1]");
  if (src.dtype != out.dtype) unsupported(m, "outs[0]", "CopyPredicated source and destination dtypes differ");
  const int64_t n = elems(src), esz = isa::dtype_size(src.dtype);
  std::vector<uint8_t> s(static_cast<size_t>(n * esz)), o(static_cast<size_t>(n * esz));
  m.read_raw(src, s.data());
  m.read_raw(out, o.data());
  std::vector<int32_t> pred(static_cast<size_t>(n));
  m.read_i32(pa, pred.data());
  const bool rev = d.inst->f.reverse_pred;
  for (int64_t i = 0; i < n; ++i)
    if ((pred[static_cast<size_t>(i)] != 0) != rev)
      std::memcpy(o.data() + i * esz, s.data() + i * esz, static_cast<size_t>(esz));
  m.write_raw(out, o.data());
}

} // namespace neuronsim::engines::ops
