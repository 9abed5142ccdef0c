// SCAL rows, the scalar operands of the tensor-scalar forms (and of every other form whose operand may be an
// immediate, a register or a per-partition pointer: registers, batch norm, search, random numbers).
// neuronsim (bundle_fields.def): one scalar operand in a dword (or a qword when the row is 8 wide) plus a
// source byte. An immediate is stored as float32 / float64 when its dtype is a float type, else as a signed
// integer; a register as its number; a pointer as the ADDR4 word of a [P, 1] SBUF/PSUM access ([[F, P], [1,
// 1]], P = the partition count the form carries). Absent: the dword holds the fallback field (as float32 /
// float64).
#include <cmath>

#include "isa/bundle/codec.hpp"

namespace neuronsim::isa::codec {
namespace {

// The source byte, low nibble: the operand is absent (the dword carries the fallback field, if any), an
// inline immediate, a register number, or an SBUF/PSUM pointer (ADDR4 word of a [P, 1] access). High nibble:
// the operand's dtype wire tag.
constexpr int kScalAbsent = 0, kScalImm = 1, kScalReg = 2, kScalPtr = 3;

void put_num(const Ctx &c, uint8_t *b, const Row &r, double v, bool is_float, const std::string &what) {
  if (is_float) {
    if (r.width == 8) {
      uint64_t u;
      std::memcpy(&u, &v, 8);
      put(b, r.off, 8, u);
      return;
    }
    // The engines read scalars as float32 (engines/ops: float(imm)), so a fraction is rounded to float32; an
    // integral value must be exact (bit-vector ops take it as an integer).
    if (static_cast<double>(static_cast<float>(v)) != v && std::floor(v) == v)
      throw SemanticError(c.at(what), "integral value " + std::to_string(v) + " is not exactly a float32");
    put(b, r.off, 4, f32_bits(v));
    return;
  }
  const int64_t i = static_cast<int64_t>(v);
  const int bits = 8 * r.width;
  if (static_cast<double>(i) != v ||
      (bits < 64 && (i < -(int64_t(1) << (bits - 1)) || i >= (int64_t(1) << bits))))
    throw SemanticError(c.at(what),
                        "integer " + std::to_string(v) + " does not fit " + std::to_string(bits) + " bits");
  put(b, r.off, r.width, static_cast<uint64_t>(i));
}
double get_num(const uint8_t *b, const Row &r, bool is_float, bool is_signed) {
  if (is_float) {
    if (r.width == 8) {
      const uint64_t u = get(b, r.off, 8);
      double d;
      std::memcpy(&d, &u, 8);
      return d;
    }
    return f32_of(static_cast<uint32_t>(get(b, r.off, 4)));
  }
  const uint64_t u = get(b, r.off, r.width);
  return is_signed ? static_cast<double>(sext(u, r.width)) : static_cast<double>(u);
}

} // namespace

void enc_scal(const EncodeRow &e) {
  const Ctx &c = e.c;
  const Row &r = e.r;
  const Inst &in = e.in;
  uint8_t *b = e.b;
  const int64_t npart = e.npart_default;
  const std::string &what = e.what;
  const Arg *a = role_arg(in, r.role);
  int code = kScalAbsent;
  if (!a) {
    if (r.src_off < 0)
      throw SemanticError(c.at(what), "missing pointer operand " + role_name(r.role));
    if (r.field)
      put_num(c, b, r, get_d(in.f, *r.field), true, what);
  } else {
    if (r.field) {
      const InstFields dflt;
      if (!field_same(in.f, dflt, *r.field))
        throw SemanticError(c.at(field_key(*r.field)), "field and operand " + role_name(r.role) +
                                                           " both given: the bundle carries one of them");
    }
    switch (a->kind) {
    case ArgKind::Immediate:
      if (a->imm_array.size() > 1)
        throw SemanticError(c.at(what), "a symbolic immediate (several values) is not encoded");
      code = kScalImm;
      put_num(c, b, r, a->imm, dtype_is_float(a->dtype), what);
      break;
    case ArgKind::Register:
      code = kScalReg;
      put(b, r.off, 4, reg_id(c, a->reg, what));
      if ("r" + std::to_string(reg_id(c, a->reg, what)) != a->reg)
        throw SemanticError(c.at(what),
                            "register '" + a->reg + "' is not named r<N>: the bundle keeps only N");
      break;
    case ArgKind::AccessPattern: {
      code = kScalPtr;
      const Tensor &t = tensor_of(c, *a, what);
      if (t.is_dram())
        throw SemanticError(c.at(what), "a scalar pointer must be in SBUF/PSUM");
      const int64_t F = elems_per_partition(t);
      const bool shape_ok =
          a->ap.size() == 2 && a->ap[0].step == F && a->ap[1].step == 1 && a->ap[1].num == 1;
      if (!shape_ok)
        throw SemanticError(c.at(what), "a scalar pointer must be one element per partition, [[" +
                                            std::to_string(F) + ", P], [1, 1]]");
      const int64_t want = npart < 0 ? 1 : npart;
      if (a->ap[0].num != want)
        throw SemanticError(c.at(what), "scalar pointer partitions " + std::to_string(a->ap[0].num) +
                                            " differ from the " + std::to_string(want) +
                                            " the bundle carries");
      if (r.width != 4)
        throw SemanticError(c.at(what), "pointer in an 8-byte immediate slot");
      put(b, r.off, 4, addr4_of(c, t, const_start(c, *a, what), what));
      break;
    }
    default:
      throw SemanticError(c.at(what), "operand kind '" + a->json_kind + "' has no bundle form");
    }
  }
  if (r.src_off < 0) {
    if (code != kScalPtr)
      throw SemanticError(c.at(what), "this slot holds a pointer only");
    return;
  }
  int tag = 0;
  if (a) {
    auto t = map_fwd(dtype_map(c.gen), static_cast<int64_t>(a->dtype));
    if (!t || *t > 0xF)
      throw SemanticError(c.at(what),
                          std::string("operand dtype ") + enum_name(a->dtype) + " has no nibble tag");
    tag = static_cast<int>(*t);
  }
  b[r.src_off] = static_cast<uint8_t>(code | (tag << 4));
}

void dec_scal(const DecodeRow &d) {
  const Ctx &c = d.c;
  const Row &r = d.r;
  Inst &in = d.in;
  const uint8_t *b = d.b;
  const std::string &what = d.what;
  const int src = r.src_off < 0 ? (kScalPtr | 0xF0) : b[r.src_off];
  const int code = src & 0xF;
  if (code == kScalAbsent) {
    if (r.field)
      set_d(in.f, *r.field, get_num(b, r, true, true));
    return;
  }
  Arg &a = role_arg_make(in, r.role);
  if (r.src_off >= 0) {
    auto dt = map_back(dtype_map(c.gen), src >> 4);
    if (!dt)
      throw InputError(c.at(what), "dtype tag " + hex(src >> 4) + " names no dtype");
    a.dtype = static_cast<Dtype>(*dt);
  }
  if (code == kScalImm) {
    a.kind = ArgKind::Immediate;
    a.imm = get_num(b, r, dtype_is_float(a.dtype), dtype_is_signed_int(a.dtype));
  } else if (code == kScalReg) {
    a.kind = ArgKind::Register;
    a.reg = "r" + std::to_string(get(b, r.off, 4));
  } else if (code == kScalPtr) {
    auto [ti, e] = tensor_at(c, static_cast<uint32_t>(get(b, r.off, 4)), what);
    const Tensor &t = c.prog.tensors[static_cast<size_t>(ti)];
    a.kind = ArgKind::AccessPattern;
    a.tensor = ti;
    if (r.src_off < 0)
      a.dtype = t.dtype;
    a.start = Expr::constant(e);
    a.ap = {{elems_per_partition(t), -1}, {1, 1}}; // partitions set with the form's NPART default
  } else {
    throw InputError(c.at(what),
                     "scalar source " + hex(src) + " (0 none, 1 immediate, 2 register, 3 pointer)");
  }
}
void dis_scal(const DisasmRow &d) {
  const int src = d.r.src_off < 0 ? kScalPtr : d.b[d.r.src_off];
  static const char *kinds[] = {"none", "imm", "reg", "ptr"};
  d.os << ((src & 0xF) < 4 ? kinds[src & 0xF] : "?") << ":"
       << hex(get(d.b, d.r.off, d.r.width), 2 * d.r.width);
}

} // namespace neuronsim::isa::codec
