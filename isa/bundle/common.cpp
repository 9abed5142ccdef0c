// The slots every bundle family uses: tensor descriptors and their ADDR4 placement, operand dtype tags,
// partition counts, ALU bytes, value maps, plain integers / floats / bits, constants and integer lists. For
// each row kind the encoder and the decoder sit together, then the disassembler when the row reads as more
// than hex.
#include <cmath>

#include "isa/bundle/codec.hpp"

namespace neuronsim::isa::codec {

// ------------------------------------------------------------------------------------------- placement
// The byte address inside a partition follows the tensor's `addr` (PSUM: bank * 2 KiB + addr when addr is
// bank-relative, as engines/memory.cpp places it).
namespace {
int64_t onchip_addr(const Tensor &t) {
  int64_t a = t.addr;
  if (t.mem == MemoryType::PSUM && t.bank > 0 && a < kPsumBank)
    a += t.bank * kPsumBank;
  return a;
}
} // namespace
int64_t elems_per_partition(const Tensor &t) {
  const int esz = dtype_size(t.dtype);
  return esz > 0 ? t.bytes_per_partition / esz : 0;
}

const Tensor &tensor_of(const Ctx &c, const Arg &a, const std::string &what) {
  if (a.kind != ArgKind::AccessPattern)
    throw SemanticError(c.at(what),
                        "operand is not an access pattern (bundle descriptors carry tensors only)");
  if (a.tensor < 0 || a.tensor >= static_cast<int>(c.prog.tensors.size()))
    throw SemanticError(c.at(what), "operand names no tensor of the program");
  return c.prog.tensors[static_cast<size_t>(a.tensor)];
}
int64_t const_start(const Ctx &c, const Arg &a, const std::string &what) {
  if (!a.start.is_const())
    throw SemanticError(c.at(what),
                        "start offset depends on a loop variable: a bundle needs a constant address");
  return a.start.c;
}

uint32_t addr4_of(const Ctx &c, const Tensor &t, int64_t e, const std::string &what) {
  const int64_t F = elems_per_partition(t);
  if (F <= 0)
    throw SemanticError(c.at(what), "tensor '" + t.name + "' has no elements per partition");
  if (e < 0 || e >= t.partitions * F)
    throw SemanticError(c.at(what),
                        "start element " + std::to_string(e) + " outside tensor '" + t.name + "'");
  const int64_t part = t.base_partition + e / F;
  const int64_t byte = onchip_addr(t) + (e % F) * dtype_size(t.dtype);
  if (t.mem == MemoryType::SB) {
    if (part < 0 || part >= 128 || byte < 0 || byte >= (1 << kSbPartShift))
      throw SemanticError(c.at(what), "SBUF address (partition " + std::to_string(part) + ", byte " +
                                          std::to_string(byte) + ") does not fit an ADDR4 word");
    return static_cast<uint32_t>((part << kSbPartShift) | byte);
  }
  if (part < 0 || part >= 128 || byte < 0 || byte >= (1 << kPsumPartShift))
    throw SemanticError(c.at(what), "PSUM address (partition " + std::to_string(part) + ", byte " +
                                        std::to_string(byte) + ") does not fit an ADDR4 word");
  return static_cast<uint32_t>(kPsumBase + (part << kPsumPartShift) + byte);
}

// ADDR4 word -> (tensor, start element). InputError when the word is not a static SBUF/PSUM address of a
// tensor.
std::pair<int, int64_t> tensor_at(const Ctx &c, uint32_t w, const std::string &what) {
  if (w & 0x80000000u)
    throw InputError(c.at(what), "register-mode ADDR4 word " + hex(w, 8) + " is not supported");
  if (w & 0x60000000u)
    throw InputError(c.at(what), "indirect/dynamic ADDR4 word " + hex(w, 8) + " is not supported");
  const int64_t a = w & 0x1FFFFFFF;
  bool psum = a >= kPsumBase && a - kPsumBase <= 0x3FFFFF;
  if (!psum && (a & 0x1E000000))
    throw InputError(c.at(what), "ADDR4 word " + hex(w, 8) + " is neither SBUF nor in the PSUM window");
  const int64_t part = psum ? (a - kPsumBase) >> kPsumPartShift : a >> kSbPartShift;
  const int64_t byte = psum ? (a - kPsumBase) & ((1 << kPsumPartShift) - 1) : a & ((1 << kSbPartShift) - 1);
  const MemoryType mem = psum ? MemoryType::PSUM : MemoryType::SB;
  for (size_t i = 0; i < c.prog.tensors.size(); ++i) {
    const Tensor &t = c.prog.tensors[i];
    if (t.mem != mem)
      continue;
    const int64_t base = onchip_addr(t);
    if (part < t.base_partition || part >= t.base_partition + t.partitions)
      continue;
    if (byte < base || byte >= base + t.bytes_per_partition)
      continue;
    const int esz = dtype_size(t.dtype);
    if ((byte - base) % esz != 0)
      throw InputError(c.at(what),
                       "ADDR4 word " + hex(w, 8) + " is not aligned to an element of '" + t.name + "'");
    return {static_cast<int>(i), (part - t.base_partition) * elems_per_partition(t) + (byte - base) / esz};
  }
  throw InputError(c.at(what), std::string("ADDR4 word ") + hex(w, 8) + " (" + (psum ? "PSUM" : "SBUF") +
                                   " partition " + std::to_string(part) + ", byte " + std::to_string(byte) +
                                   ") lies in no tensor of the program");
}

// ------------------------------------------------------------------------------------------- operands
Arg *role_arg(Inst &in, int role) {
  auto &v = role >= kOut ? in.outs : in.ins;
  const size_t i = static_cast<size_t>(role >= kOut ? role - kOut : role);
  return i < v.size() ? &v[i] : nullptr;
}
const Arg *role_arg(const Inst &in, int role) {
  return role_arg(const_cast<Inst &>(in), role);
}
Arg &role_arg_make(Inst &in, int role) {
  auto &v = role >= kOut ? in.outs : in.ins;
  const size_t i = static_cast<size_t>(role >= kOut ? role - kOut : role);
  if (v.size() <= i)
    v.resize(i + 1);
  return v[i];
}
std::string role_name(int role) {
  return role >= kOut ? "outs[" + std::to_string(role - kOut) + "]" : "ins[" + std::to_string(role) + "]";
}

bool cond_holds(const Cond &c, const Inst &in) {
  switch (c.kind) {
  case CK::FIELD:
    return get_i(in.f, c.fields[0]) == c.value;
  case CK::IN:
  case CK::NOTIN: {
    const int64_t v = get_i(in.f, c.fields[0]);
    const bool inside = v >= 0 && v < 63 && ((c.value >> v) & 1);
    return c.kind == CK::IN ? inside : !inside;
  }
  case CK::BITVEC: {
    bool any = false;
    for (Field f : c.fields)
      any = any || alu_info(static_cast<AluOp>(get_i(in.f, f))).bitvec;
    return any == (c.value != 0);
  }
  case CK::SAMEDT: {
    const Arg *a = role_arg(in, c.roles[0]), *b = role_arg(in, c.roles[1]);
    if (!a || !b)
      return false;
    return (a->dtype == b->dtype) == (c.value != 0);
  }
  case CK::NINS:
    return static_cast<int64_t>(in.ins.size()) == c.value;
  case CK::NOUTS:
    return static_cast<int64_t>(in.outs.size()) == c.value;
  case CK::ENGINE:
    return static_cast<int64_t>(in.engine) == c.value;
  case CK::ARGK: {
    const Arg *a = role_arg(in, c.roles[0]);
    return a && static_cast<int64_t>(a->kind) == c.value;
  }
  }
  return false;
}

// ------------------------------------------------------------------------------------------- AP
// A tensor descriptor: ADDR4 word + N i16 steps + N u16 nums, N = (width - 4) / 4 (reference
// isa/tensor-descriptors.md): free dims innermost first, num == 1 dims dropped, spare slots {1, 1}. The
// partition dimension is the ADDR4 word's.
void enc_ap(const EncodeRow &e) {
  const Ctx &c = e.c;
  const Row &r = e.r;
  const Arg &a = *e.a;
  const std::string &what = e.what;
  const Tensor &t = tensor_of(c, a, what);
  if (t.is_dram())
    throw SemanticError(c.at(what), "DRAM tensor '" + t.name + "' in an SBUF/PSUM descriptor");
  const int n = (r.width - 4) / 4;
  const int64_t F = elems_per_partition(t);
  if (a.ap.empty())
    throw SemanticError(c.at(what), "empty access pattern");
  if (a.ap[0].num > 1 && a.ap[0].step != F)
    throw SemanticError(c.at(what), "partition step " + std::to_string(a.ap[0].step) +
                                        " is not one partition (" + std::to_string(F) + " elements)");
  put(e.b, r.off, 4, addr4_of(c, t, const_start(c, a, what), what));
  int k = 0;
  for (size_t d = a.ap.size(); d-- > 1;) {
    if (a.ap[d].num == 1)
      continue;
    if (k >= n)
      throw SemanticError(c.at(what), "access pattern has more than " + std::to_string(n) +
                                          " free dimensions for this descriptor");
    if (a.ap[d].step < -32768 || a.ap[d].step > 32767 || a.ap[d].num < 1 || a.ap[d].num > 65535)
      throw SemanticError(c.at(what), "step/num [" + std::to_string(a.ap[d].step) + ", " +
                                          std::to_string(a.ap[d].num) + "] does not fit i16/u16");
    put(e.b, r.off + 4 + 2 * k, 2, static_cast<uint16_t>(a.ap[d].step));
    put(e.b, r.off + 4 + 2 * n + 2 * k, 2, static_cast<uint16_t>(a.ap[d].num));
    ++k;
  }
  for (; k < n; ++k)
    put(e.b, r.off + 4 + 2 * k, 2, 1), put(e.b, r.off + 4 + 2 * n + 2 * k, 2, 1);
}
// The operand keeps the dtype its DT row set; its partition count comes from the NPART rows once the whole
// bundle is read (-1 until then).
void dec_ap(const DecodeRow &d) {
  const Row &r = d.r;
  Arg &a = role_arg_make(d.in, r.role);
  const Dtype keep = a.dtype;
  const int n = (r.width - 4) / 4;
  auto [ti, e] = tensor_at(d.c, static_cast<uint32_t>(get(d.b, r.off, 4)), d.what);
  const Tensor &t = d.c.prog.tensors[static_cast<size_t>(ti)];
  a.kind = ArgKind::AccessPattern;
  a.tensor = ti;
  a.start = Expr::constant(e);
  a.ap.assign(1, ApDim{elems_per_partition(t), -1});
  std::vector<ApDim> free;
  for (int k = 0; k < n; ++k) {
    const int64_t num = static_cast<int64_t>(get(d.b, r.off + 4 + 2 * n + 2 * k, 2));
    if (num == 0)
      throw InputError(d.c.at(d.what), "descriptor count " + std::to_string(k) + " is zero");
    if (num == 1)
      continue; // spare {1, 1} slot (or a dropped degenerate dim)
    free.push_back({sext(get(d.b, r.off + 4 + 2 * k, 2), 2), num});
  }
  a.ap.insert(a.ap.end(), free.rbegin(), free.rend());
  a.dtype = keep;
}
void dis_ap(const DisasmRow &d) {
  const int n = (d.r.width - 4) / 4;
  d.os << "[" << hex(get(d.b, d.r.off, 4), 8);
  for (int k = 0; k < n; ++k)
    d.os << " (" << sext(get(d.b, d.r.off + 4 + 2 * k, 2), 2) << ","
         << get(d.b, d.r.off + 4 + 2 * n + 2 * k, 2) << ")";
  d.os << "]";
}

// ------------------------------------------------------------------------------------------- DT / DTLO /
// DTHI An operand's dtype as its wire tag (value map dtype_v2 / dtype_v4): a whole byte, or its low / high
// nibble.
void enc_dtype(const EncodeRow &e) {
  const Row &r = e.r;
  const Arg *a = e.a;
  auto tag = map_fwd(dtype_map(e.c.gen), static_cast<int64_t>(a->dtype));
  if (!tag)
    throw SemanticError(e.c.at(e.what), std::string("dtype ") + enum_name(a->dtype) + " has no wire tag");
  if (r.kind != K::DT && *tag > 0xF)
    throw SemanticError(e.c.at(e.what), std::string("dtype ") + enum_name(a->dtype) + " tag " + hex(*tag) +
                                            " does not fit a nibble");
  uint8_t *b = e.b;
  if (r.kind == K::DT)
    b[r.off] = static_cast<uint8_t>(*tag);
  else if (r.kind == K::DTLO)
    b[r.off] = static_cast<uint8_t>((b[r.off] & 0xF0) | *tag);
  else
    b[r.off] = static_cast<uint8_t>((b[r.off] & 0x0F) | (*tag << 4));
}
namespace {
int dtype_tag(const uint8_t *b, const Row &r) {
  const uint8_t byte = b[r.off];
  return r.kind == K::DT ? byte : r.kind == K::DTLO ? (byte & 0xF) : (byte >> 4);
}
} // namespace
void dec_dtype(const DecodeRow &d) {
  const int tag = dtype_tag(d.b, d.r);
  auto dt = map_back(dtype_map(d.c.gen), tag);
  if (!dt)
    throw InputError(d.c.at(d.what), "dtype tag " + hex(tag) + " names no dtype");
  role_arg_make(d.in, d.r.role).dtype = static_cast<Dtype>(*dt);
}
void dis_dtype(const DisasmRow &d) {
  const int tag = dtype_tag(d.b, d.r);
  auto dt = map_back(dtype_map(d.gen), tag);
  d.os << (dt ? enum_name(static_cast<Dtype>(*dt)) : hex(tag).c_str());
}

// ------------------------------------------------------------------------------------------- NPART
// An operand's partition count ap[0].num (num_active_partitions / num_active_channels / lane).
void enc_npart(const EncodeRow &e) {
  const int64_t p = e.a->partitions();
  if (p < 1 || p > 255)
    throw SemanticError(e.c.at(e.what), "partition count " + std::to_string(p) + " not in 1..255");
  e.b[e.r.off] = static_cast<uint8_t>(p);
}
// An access covers 1 to 128 partitions (reference neuron-arch.md 1.4: SBUF and PSUM have 128 partitions); 0 would run the
// instruction on nothing, so it is refused by name.
void dec_npart(const DecodeRow &d) {
  if (d.b[d.r.off] == 0)
    throw InputError(d.c.at(d.what), "partition count byte is 0; an access covers 1 to 128 partitions");
  d.npart_role.push_back(d.r.role);
  d.npart_val.push_back(d.b[d.r.off]);
}

// ------------------------------------------------------------------------------------------- ALU
// spec 000: average/elemwise_mul have no ALU byte (their forms never use an ALU row); alu_to_wire raises
// "Invalid enum variant for enum AluOpType" for them and for ops absent on this generation.
void enc_alu(const EncodeRow &e) {
  const uint32_t w = alu_to_wire(static_cast<AluOp>(get_i(e.in.f, *e.r.field)), e.c.gen, e.c.at(e.what));
  e.b[e.r.off] = static_cast<uint8_t>(w & 0xFF); // mod_int 0xFFFFFFC8 -> 0xC8
}
void dec_alu(const DecodeRow &d) {
  const uint8_t byte = d.b[d.r.off];
  auto op = alu_from_wire(byte, d.c.gen);
  if (!op)
    throw InputError(d.c.at(d.what),
                     "ALU byte " + hex(byte) + " maps to no AluOpType on " + core_gen_name(d.c.gen));
  set_i(d.in.f, *d.r.field, static_cast<int64_t>(*op));
}
void dis_alu(const DisasmRow &d) {
  auto op = alu_from_wire(d.b[d.r.off], d.gen);
  d.os << (op ? alu_name(*op) : hex(d.b[d.r.off]).c_str());
}

// ------------------------------------------------------------------------------------------- VMAP
// An enum field through the value map `map` (NS_BVMAP rows).
void enc_vmap(const EncodeRow &e) {
  const int64_t v = get_i(e.in.f, *e.r.field);
  auto w = map_fwd(e.r.map, v);
  if (!w)
    throw SemanticError(e.c.at(e.what), std::string(field_key(*e.r.field)) + " value " + std::to_string(v) +
                                            " has no wire form");
  e.b[e.r.off] = static_cast<uint8_t>(*w);
}
void dec_vmap(const DecodeRow &d) {
  const uint8_t byte = d.b[d.r.off];
  auto v = map_back(d.r.map, byte);
  if (!v)
    throw InputError(d.c.at(d.what), "byte " + hex(byte) + " is no " + field_key(*d.r.field) + " value");
  set_i(d.in.f, *d.r.field, *v);
}
void dis_vmap(const DisasmRow &d) {
  auto o = map_back(d.r.map, d.b[d.r.off]);
  d.os << (o ? std::to_string(*o) : hex(d.b[d.r.off]));
}

// ------------------------------------------------------------------------------------------- BOOL / BIT
void enc_bool(const EncodeRow &e) {
  e.b[e.r.off] = get_i(e.in.f, *e.r.field) ? 1 : 0;
}
void dec_bool(const DecodeRow &d) {
  const uint8_t byte = d.b[d.r.off];
  if (byte > 1)
    throw InputError(d.c.at(d.what), "boolean byte " + hex(byte));
  set_i(d.in.f, *d.r.field, byte);
}
// A bool field as bit `arg` of the byte (several BIT rows share one byte).
void enc_bit(const EncodeRow &e) {
  if (get_i(e.in.f, *e.r.field))
    e.b[e.r.off] = static_cast<uint8_t>(e.b[e.r.off] | (1u << e.r.arg));
}
void dec_bit(const DecodeRow &d) {
  set_i(d.in.f, *d.r.field, (d.b[d.r.off] >> d.r.arg) & 1);
}
void dis_bit(const DisasmRow &d) {
  d.os << ((d.b[d.r.off] >> d.r.arg) & 1);
}

// ------------------------------------------------------------------------------------------- UINT / INT
// A numeric field stored as is, little endian; a value that does not fit the row's width is refused.
void enc_int(const EncodeRow &e) {
  const Row &r = e.r;
  const double d = get_d(e.in.f, *r.field);
  const int64_t v = static_cast<int64_t>(d);
  const int bits = 8 * r.width;
  const bool ok = static_cast<double>(v) == d &&
                  (r.kind == K::UINT ? (v >= 0 && (bits >= 64 || v < (int64_t(1) << bits)))
                                     : (v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1))));
  if (!ok)
    throw SemanticError(e.c.at(e.what), std::string(field_key(*r.field)) + " value " + std::to_string(d) +
                                            " does not fit " + std::to_string(bits) + " bits");
  put(e.b, r.off, r.width, static_cast<uint64_t>(v));
}
void dec_uint(const DecodeRow &d) {
  set_d(d.in.f, *d.r.field, static_cast<double>(get(d.b, d.r.off, d.r.width)));
}
void dec_int(const DecodeRow &d) {
  set_d(d.in.f, *d.r.field, static_cast<double>(sext(get(d.b, d.r.off, d.r.width), d.r.width)));
}
void dis_int(const DisasmRow &d) {
  d.os << sext(get(d.b, d.r.off, std::min(d.r.width, 8)), d.r.width);
}

// ------------------------------------------------------------------------------------------- F32
// Every F32 field is read as float32 by its op (engines/ops: float(field)): a double is rounded to float32
// (docs/bundle-layout.md, exactness contract).
void enc_f32(const EncodeRow &e) {
  const double d = get_d(e.in.f, *e.r.field);
  if (std::isfinite(d) && std::fabs(d) > 3.4028234663852886e38)
    throw SemanticError(e.c.at(e.what), std::string(field_key(*e.r.field)) + " value overflows float32");
  put(e.b, e.r.off, 4, f32_bits(d));
}
void dec_f32(const DecodeRow &d) {
  set_d(d.in.f, *d.r.field, f32_of(static_cast<uint32_t>(get(d.b, d.r.off, 4))));
}
void dis_f32(const DisasmRow &d) {
  d.os << f32_of(static_cast<uint32_t>(get(d.b, d.r.off, 4)));
}

// ------------------------------------------------------------------------------------------- CONST
// The constant `arg`: written, not read back (the decoder uses it only to tell forms of one opcode apart).
void enc_const(const EncodeRow &e) {
  put(e.b, e.r.off, e.r.width, static_cast<uint64_t>(e.r.arg));
}
void dec_nothing(const DecodeRow &) {}

// ------------------------------------------------------------------------------------------- ILIST
// An integer-list field: the count at byte `src_off`, entries of `elem_w` bytes little endian from `off` (one
// byte: unsigned; wider: signed).
void enc_ilist(const EncodeRow &e) {
  const Row &r = e.r;
  const std::vector<int64_t> &l = ilist_field(e.in.f, *r.field);
  const size_t cap = static_cast<size_t>(r.width / r.elem_w);
  if (l.size() > cap || l.size() > 255)
    throw SemanticError(e.c.at(e.what),
                        "list of " + std::to_string(l.size()) + " entries > " + std::to_string(cap));
  e.b[r.src_off] = static_cast<uint8_t>(l.size());
  const int bits = 8 * r.elem_w;
  for (size_t i = 0; i < l.size(); ++i) {
    if (l[i] < (r.elem_w == 1 ? 0 : -(int64_t(1) << (bits - 1))) ||
        l[i] >= (int64_t(1) << (r.elem_w == 1 ? 8 : bits - 1)))
      throw SemanticError(e.c.at(e.what), "entry " + std::to_string(l[i]) + " does not fit " +
                                              std::to_string(bits) + " bits");
    put(e.b, r.off + static_cast<int>(i) * r.elem_w, r.elem_w, static_cast<uint64_t>(l[i]));
  }
}
void dec_ilist(const DecodeRow &d) {
  const Row &r = d.r;
  const int n = d.b[r.src_off];
  if (n * r.elem_w > r.width)
    throw InputError(d.c.at(d.what), "list count " + std::to_string(n) + " exceeds the field");
  auto &l = ilist_field(d.in.f, *r.field);
  l.clear();
  for (int i = 0; i < n; ++i) {
    const uint64_t u = get(d.b, r.off + i * r.elem_w, r.elem_w);
    l.push_back(r.elem_w == 1 ? static_cast<int64_t>(u) : sext(u, r.elem_w));
  }
}

} // namespace neuronsim::isa::codec
