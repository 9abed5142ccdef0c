// The DMA family's own rows and rules: D2SIDE (one side of a DIRECT2D record, reference isa/dma-encoding.md),
// STR (inline names: DMA queue names, the Call target), the refusal of an IndirectSaveAccumulate the bundle
// cannot tell apart, and the type of a DIRECT2D bundle decoded without a hint (Load / Save / DMACopy).
#include <climits>

#include "isa/bundle/codec.hpp"

namespace neuronsim::isa::codec {

// ------------------------------------------------------------------------------------------- D2SIDE
// ADDR8 (+0 address, +4/+6 var id, +7 mode), +8/+0xC u32 byte steps, +0x10/+0x12 u16 nums, +0x14 u16 element
// span. HW steps are bytes; on chip the partition dimension's HW step is the ADDR4 partition stride
// (neuronsim). Unused step/num pairs are {0, 0} (neuronsim). A DRAM side's var id is tensor index + 1 and its
// address the byte offset in the tensor; an SBUF/PSUM side's var id is 0 and its address the ADDR4 word
// (docs/bundle-layout.md).
void enc_d2(const EncodeRow &en) {
  const Ctx &c = en.c;
  const Row &r = en.r;
  const Arg &a = *en.a;
  uint8_t *b = en.b;
  const std::string &what = en.what;
  const Tensor &t = tensor_of(c, a, what);
  const int64_t e = const_start(c, a, what);
  const int esz = dtype_size(a.dtype);
  struct D {
    int64_t step, num;
  };
  std::vector<D> dims;
  uint32_t addr = 0, varid = 0;
  size_t first_free = 0;
  if (t.is_dram()) {
    addr = static_cast<uint32_t>(e * dtype_size(t.dtype));
    varid = static_cast<uint32_t>(a.tensor + 1);
  } else {
    addr = addr4_of(c, t, e, what);
    const int64_t F = elems_per_partition(t);
    if (a.ap.empty())
      throw SemanticError(c.at(what), "empty access pattern");
    if (a.ap[0].num > 1) {
      if (a.ap[0].step != F)
        throw SemanticError(c.at(what), "partition step is not one partition (" + std::to_string(F) + ")");
      dims.push_back({int64_t(1) << (t.mem == MemoryType::SB ? kSbPartShift : kPsumPartShift), a.ap[0].num});
    }
    first_free = 1;
  }
  for (size_t d = first_free; d < a.ap.size(); ++d)
    if (a.ap[d].num != 1)
      dims.push_back({a.ap[d].step * esz, a.ap[d].num});
  // The decoder reads a byte step equal to the partition stride as the partition dimension: a one-partition
  // pattern with such a free step would come back as a different pattern, so it is refused (fuzz_bundle).
  if (!t.is_dram() && !a.ap.empty() && a.ap[0].num == 1) {
    const int64_t part_stride = int64_t(1) << (t.mem == MemoryType::SB ? kSbPartShift : kPsumPartShift);
    for (const auto &dm : dims)
      if (dm.step == part_stride)
        throw SemanticError(c.at(what),
                            "a free step of " + std::to_string(dm.step) +
                                " bytes equals the partition stride: not representable on one partition");
  }
  int64_t elem = esz;
  const bool last_free = !a.ap.empty() && (a.ap.size() - 1 >= first_free) && a.ap.back().num != 1;
  if (last_free && a.ap.back().step == 1) {
    elem = esz * a.ap.back().num;
    dims.pop_back();
  }
  if (dims.size() > 2)
    throw SemanticError(c.at(what), "DMA side has more than two strided dimensions");
  if (elem > 0x10000)
    throw SemanticError(c.at(what), "contiguous span of " + std::to_string(elem) + " bytes > 64 KiB");
  put(b, r.off, 4, addr);
  put(b, r.off + 4, 2, varid & 0xFFFF);
  b[r.off + 6] = static_cast<uint8_t>(varid >> 16);
  b[r.off + 7] = 0x10; // static physical address mode
  for (size_t i = 0; i < dims.size(); ++i) {
    const D &d = dims[dims.size() - 1 - i]; // slot 0 = innermost strided dim (dim - 2)
    if (d.num > 65535 || d.step < INT32_MIN || d.step > INT32_MAX)
      throw SemanticError(c.at(what), "DMA step/num does not fit u32/u16");
    put(b, r.off + 8 + 4 * static_cast<int>(i), 4, static_cast<uint32_t>(d.step));
    put(b, r.off + 0x10 + 2 * static_cast<int>(i), 2, static_cast<uint16_t>(d.num));
  }
  put(b, r.off + 0x14, 2, elem == 0x10000 ? 0 : static_cast<uint16_t>(elem));
}

void dec_d2(const DecodeRow &d) {
  const Ctx &c = d.c;
  const Row &r = d.r;
  const uint8_t *b = d.b;
  const std::string &what = d.what;
  Arg &a = role_arg_make(d.in, r.role);
  const uint32_t addr = static_cast<uint32_t>(get(b, r.off, 4));
  const uint32_t varid = static_cast<uint32_t>(get(b, r.off + 4, 2) | (uint64_t(b[r.off + 6]) << 16));
  if (b[r.off + 7] != 0x10)
    throw InputError(c.at(what),
                     "ADDR8 mode byte " + hex(b[r.off + 7]) + " (only 0x10, static physical, is supported)");
  const int esz = dtype_size(a.dtype);
  a.kind = ArgKind::AccessPattern;
  a.ap.clear();
  int64_t part_stride = 0;
  if (varid != 0) {
    const int ti = static_cast<int>(varid) - 1;
    if (ti >= static_cast<int>(c.prog.tensors.size()) || !c.prog.tensors[static_cast<size_t>(ti)].is_dram())
      throw InputError(c.at(what), "var id " + std::to_string(varid) + " names no DRAM tensor");
    const int tsz = dtype_size(c.prog.tensors[static_cast<size_t>(ti)].dtype);
    if (addr % tsz)
      throw InputError(c.at(what), "DRAM byte offset not element aligned");
    a.tensor = ti;
    a.start = Expr::constant(addr / tsz);
  } else {
    auto [ti, e] = tensor_at(c, addr, what);
    a.tensor = ti;
    a.start = Expr::constant(e);
    const Tensor &t = c.prog.tensors[static_cast<size_t>(ti)];
    part_stride = int64_t(1) << (t.mem == MemoryType::SB ? kSbPartShift : kPsumPartShift);
    a.ap.push_back({elems_per_partition(t), 1});
  }
  for (int i = 1; i >= 0; --i) { // slot 1 = outer (dim - 3), slot 0 = dim - 2
    const int64_t num = static_cast<int64_t>(get(b, r.off + 0x10 + 2 * i, 2));
    const int64_t step = sext(get(b, r.off + 8 + 4 * i, 4), 4);
    // Unused (0) and unit (1) counts add no dimension: the encoder drops unit dimensions, so keeping one here
    // would make decode(encode(decode(x))) differ from decode(x) (fuzz_bundle).
    if (num == 0 || num == 1)
      continue;
    if (part_stride && step == part_stride && a.ap.size() == 1 && a.ap[0].num == 1) {
      a.ap[0].num = num;
      continue;
    }
    if (step % esz)
      throw InputError(c.at(what),
                       "DMA step " + std::to_string(step) + " not a multiple of the element size");
    a.ap.push_back({step / esz, num});
  }
  int64_t elem = static_cast<int64_t>(get(b, r.off + 0x14, 2));
  if (elem == 0)
    elem = 0x10000;
  if (elem % esz)
    throw InputError(c.at(what), "element span not a multiple of the element size");
  if (elem / esz > 1)
    a.ap.push_back({1, elem / esz});
  if (a.ap.empty())
    a.ap.push_back({1, 1});
}
void dis_d2(const DisasmRow &d) {
  const uint8_t *b = d.b;
  const int off = d.r.off;
  d.os << "[" << hex(get(b, off, 4), 8) << " var " << (get(b, off + 4, 2) | (uint64_t(b[off + 6]) << 16))
       << " mode " << hex(b[off + 7]) << " (" << sext(get(b, off + 8, 4), 4) << "," << get(b, off + 0x10, 2)
       << ") (" << sext(get(b, off + 12, 4), 4) << "," << get(b, off + 0x12, 2) << ") span "
       << get(b, off + 0x14, 2) << "]";
}

// ------------------------------------------------------------------------------------------- STR
// A STRING field inline, NUL padded to the row's width (reference isa/sp-sync-encoding.md 7a /
// dma-encoding.md: strncpy into the slot; longer names assert, so they are refused here).
void enc_str(const EncodeRow &e) {
  const Row &r = e.r;
  const std::string &v = str_field(e.in.f, *r.field);
  if (v.size() > static_cast<size_t>(r.width) || v.find('\0') != std::string::npos)
    throw SemanticError(e.c.at(field_key(*r.field)), "'" + v + "' does not fit the " +
                                                         std::to_string(r.width) + "-byte name slot at +" +
                                                         hex(r.off));
  std::memcpy(e.b + r.off, v.data(), v.size());
}
namespace {
std::string inline_str(const uint8_t *b, const Row &r) {
  size_t n = 0;
  while (n < static_cast<size_t>(r.width) && b[r.off + static_cast<int>(n)])
    ++n;
  return std::string(reinterpret_cast<const char *>(b + r.off), n);
}
} // namespace
void dec_str(const DecodeRow &d) {
  str_field(d.in.f, *d.r.field) = inline_str(d.b, d.r);
}
void dis_str(const DisasmRow &d) {
  d.os << "'" << inline_str(d.b, d.r) << "'";
}

// ------------------------------------------------------------------------------------------- family rules
// IndirectSaveAccumulate: an absent `op` means add (bir-json.md 2.2), a present bypass overwrites; the bundle
// holds the op byte only, and bypass is also the field's table default, so an explicit bypass would decode as
// absent.
void dma_check_encodable(const Ctx &c, const Inst &in) {
  if (in.type == InstructionType::IndirectSaveAccumulate && in.has(Field::op) && in.f.op == AluOp::bypass)
    throw SemanticError(c.at("op"),
                        "an explicit op 'bypass' (overwrite) cannot be told apart from an absent op "
                        "(add) in the bundle");
}

// Load / Save / DMACopy share 0xD4 ([col]): without a type hint the direction separates Load (DRAM -> on
// chip) and Save.
void dma_resolve_type(const Ctx &c, const Form &f, bool hinted, Inst &in) {
  if (hinted || f.types.size() <= 1 || f.name != "DMA2D")
    return;
  const Arg *s = role_arg(in, 0), *d = role_arg(in, kOut);
  const bool sd = c.prog.tensors[static_cast<size_t>(s->tensor)].is_dram();
  const bool dd = c.prog.tensors[static_cast<size_t>(d->tensor)].is_dram();
  in.type = sd && !dd ? InstructionType::Load : !sd && dd ? InstructionType::Save : InstructionType::DMACopy;
}

} // namespace neuronsim::isa::codec
