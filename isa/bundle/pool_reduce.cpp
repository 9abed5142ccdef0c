// The pool / reduce family's own rows: DER (values the hardware wants that other fields determine) and PAT
// (the `pattern` pairs of Iota and TensorScalarAffineSelect). Every other row of the family is a shared slot
// kind.
#include "isa/bundle/codec.hpp"

namespace neuronsim::isa::codec {

// ------------------------------------------------------------------------------------------- DER
// Written, not read back (the decoder rebuilds them from the fields they come from). arg:
//   1  elements per partition of outs[0]
//   2  the pool scale: 1 / window (the two innermost dims of ins[0]) for PoolFunctionType Avg, else 1.0
//   3  the cross-lane mean 1 / partitions of ins[0] for op average, else 0
//   4, 5  BNStats Welford count seeds (reference batchnorm-encoding.md): ceil(N/2) even, floor(N/2) odd
void enc_derived(const EncodeRow &e) {
  const Row &r = e.r;
  const Inst &in = e.in;
  if (r.arg == 1) {
    const Arg *o = role_arg(in, kOut);
    put(e.b, r.off, r.width, o ? static_cast<uint64_t>(o->free_elements()) : 0);
  } else if (r.arg == 2) {
    double s = 1.0;
    const Arg *i0 = role_arg(in, 0);
    if (in.f.pool_func == PoolFunctionType::Avg && i0 && !i0->ap.empty()) {
      const size_t n = i0->ap.size();
      int64_t w = i0->ap[n - 1].num;
      if (n >= 3)
        w *= i0->ap[n - 2].num;
      s = 1.0 / static_cast<double>(w);
    }
    put(e.b, r.off, 4, f32_bits(s));
  } else if (r.arg == 3) {
    const Arg *i0 = role_arg(in, 0);
    const double s = in.f.op == AluOp::average && i0 ? 1.0 / static_cast<double>(i0->partitions()) : 0.0;
    put(e.b, r.off, 4, f32_bits(s));
  } else if (r.arg == 4 || r.arg == 5) {
    const Arg *i0 = role_arg(in, 0);
    const int64_t n = i0 ? i0->free_elements() : 0;
    put(e.b, r.off, 4, f32_bits(static_cast<double>(r.arg == 4 ? (n + 1) / 2 : n / 2)));
  }
}

// ------------------------------------------------------------------------------------------- PAT
// The `pattern` field as `arg` pairs: arg i16 steps, then arg u16 nums; num 0 = an unused pair.
void enc_pattern(const EncodeRow &e) {
  const Row &r = e.r;
  const auto &p = e.in.f.pattern;
  if (static_cast<int>(p.size()) > r.arg)
    throw SemanticError(e.c.at(e.what), "pattern has more than " + std::to_string(r.arg) + " pairs");
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i].step < -32768 || p[i].step > 32767 || p[i].num < 1 || p[i].num > 65535)
      throw SemanticError(e.c.at(e.what), "pattern pair does not fit i16/u16 (num >= 1)");
    put(e.b, r.off + 2 * static_cast<int>(i), 2, static_cast<uint16_t>(p[i].step));
    put(e.b, r.off + 2 * r.arg + 2 * static_cast<int>(i), 2, static_cast<uint16_t>(p[i].num));
  }
}
void dec_pattern(const DecodeRow &d) {
  const Row &r = d.r;
  std::vector<ApDim> p;
  for (int i = 0; i < r.arg; ++i) {
    const int64_t num = static_cast<int64_t>(get(d.b, r.off + 2 * r.arg + 2 * i, 2));
    if (num == 0)
      break;
    p.push_back({sext(get(d.b, r.off + 2 * i, 2), 2), num});
  }
  d.in.f.pattern = p;
}

} // namespace neuronsim::isa::codec
