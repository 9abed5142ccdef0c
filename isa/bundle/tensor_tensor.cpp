// FILL rows: the Memset fill dword (reference isa/tensortensor-encoding.md 5: a 32-bit pattern broadcast to
// every element). The other tensor-tensor and copy rows are shared slot kinds (common.cpp).
#include <cstdint>

#include "isa/bundle/codec.hpp"

namespace neuronsim::isa::codec {

// The float32 bits of the value for a float output (rounded to float32: the engine stores float32,
// docs/bundle-layout.md), the integer for an integer output (refused when it does not fit 32 bits).
void enc_fill(const EncodeRow &e) {
  const double v = get_d(e.in.f, *e.r.field);
  if (dtype_is_float(e.a->dtype)) {
    put(e.b, e.r.off, 4, f32_bits(v));
  } else {
    const int64_t i = static_cast<int64_t>(v);
    if (static_cast<double>(i) != v || i < INT32_MIN || i > static_cast<int64_t>(UINT32_MAX))
      throw SemanticError(e.c.at(e.what), "integer fill " + std::to_string(v) + " does not fit 32 bits");
    put(e.b, e.r.off, 4, static_cast<uint32_t>(i));
  }
}
// The output's dtype (read in the first pass) says how to read the dword back.
void dec_fill(const DecodeRow &d) {
  const Arg *o = role_arg(d.in, kOut);
  const Dtype dt = o ? o->dtype : Dtype::float32;
  const uint32_t u = static_cast<uint32_t>(get(d.b, d.r.off, 4));
  set_d(d.in.f, *d.r.field,
        dtype_is_float(dt)        ? f32_of(u)
        : dtype_is_signed_int(dt) ? double(int32_t(u))
                                  : double(u));
}

} // namespace neuronsim::isa::codec
