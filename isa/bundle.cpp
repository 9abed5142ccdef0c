// 64-byte bundle codec. Every layout fact is a row of isa/tables/bundle_fields.def; this file only walks rows.
// reference neuronx-cc/isa/instruction-bundle.md: zero-filled 64 bytes, header {opcode, 0x10, 0, 0}.
#include "neuronsim/isa/bundle.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace neuronsim::isa {

// Equality for the `pattern` field when comparing InstFields generically (this translation unit only).
static bool same_dims(const std::vector<ApDim> &a, const std::vector<ApDim> &b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].step != b[i].step || a[i].num != b[i].num) return false;
  return true;
}

namespace {

// ------------------------------------------------------------------------------------------- generic fields
template <class T> bool field_eq(const T &a, const T &b) { return a == b; }
bool field_eq(const std::vector<ApDim> &a, const std::vector<ApDim> &b) { return same_dims(a, b); }

template <class T> int64_t to_i64(const T &v) {
  if constexpr (std::is_enum_v<T> || std::is_arithmetic_v<T>)
    return static_cast<int64_t>(v);
  else
    throw std::logic_error("bundle_fields.def: not an integer field");
}
template <class T> void from_i64(T &v, int64_t x) {
  if constexpr (std::is_enum_v<T> || std::is_arithmetic_v<T>)
    v = static_cast<T>(x);
  else
    throw std::logic_error("bundle_fields.def: not an integer field");
}
template <class T> double to_dbl(const T &v) {
  if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>)
    return static_cast<double>(v);
  else
    throw std::logic_error("bundle_fields.def: not a numeric field");
}
template <class T> void from_dbl(T &v, double x) {
  if constexpr (std::is_enum_v<T>)
    v = static_cast<T>(static_cast<int64_t>(x));
  else if constexpr (std::is_arithmetic_v<T>)
    v = static_cast<T>(x);
  else
    throw std::logic_error("bundle_fields.def: not a numeric field");
}

int64_t get_i(const InstFields &f, Field k) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
  case Field::member: return to_i64(f.member);
#include "tables/inst_fields.def"
#undef NS_FIELD
  default: break;
  }
  throw std::logic_error("bad field");
}
void set_i(InstFields &f, Field k, int64_t x) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
  case Field::member: from_i64(f.member, x); return;
#include "tables/inst_fields.def"
#undef NS_FIELD
  default: break;
  }
}
double get_d(const InstFields &f, Field k) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
  case Field::member: return to_dbl(f.member);
#include "tables/inst_fields.def"
#undef NS_FIELD
  default: break;
  }
  throw std::logic_error("bad field");
}
void set_d(InstFields &f, Field k, double x) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
  case Field::member: from_dbl(f.member, x); return;
#include "tables/inst_fields.def"
#undef NS_FIELD
  default: break;
  }
}
bool field_same(const InstFields &a, const InstFields &b, Field k) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
  case Field::member: return field_eq(a.member, b.member);
#include "tables/inst_fields.def"
#undef NS_FIELD
  default: break;
  }
  return true;
}
// INTLIST fields (ILIST rows).
template <class T> std::vector<int64_t> *as_ilist(T &v) {
  if constexpr (std::is_same_v<T, std::vector<int64_t>>)
    return &v;
  else
    return nullptr;
}
std::vector<int64_t> &ilist_field(InstFields &f, Field k) {
  std::vector<int64_t> *p = nullptr;
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
  case Field::member: p = as_ilist(f.member); break;
#include "tables/inst_fields.def"
#undef NS_FIELD
  default: break;
  }
  if (!p) throw std::logic_error("bundle_fields.def: not an integer-list field");
  return *p;
}
const std::vector<int64_t> &ilist_field(const InstFields &f, Field k) { return ilist_field(const_cast<InstFields &>(f), k); }
// STRING fields (STR, SENUM, BLOCK rows) and the pool's field kinds (POOL rows).
template <class T> std::string *as_str(T &v) {
  if constexpr (std::is_same_v<T, std::string>)
    return &v;
  else
    return nullptr;
}
std::string &str_field(InstFields &f, Field k) {
  std::string *p = nullptr;
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
  case Field::member: p = as_str(f.member); break;
#include "tables/inst_fields.def"
#undef NS_FIELD
  default: break;
  }
  if (!p) throw std::logic_error("bundle_fields.def: not a string field");
  return *p;
}
const std::string &str_field(const InstFields &f, Field k) { return str_field(const_cast<InstFields &>(f), k); }
// A field's value as a pool entry; nullopt when the field's type has no pool form.
template <class T> std::optional<PoolEntry> to_pool(const T &v) {
  PoolEntry e;
  if constexpr (std::is_same_v<T, std::string>) {
    e.kind = PoolEntry::Kind::Text, e.text = v;
    return e;
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    e.kind = PoolEntry::Kind::TextList, e.texts = v;
    return e;
  } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    e.kind = PoolEntry::Kind::IntList, e.ints = {v};
    return e;
  } else if constexpr (std::is_same_v<T, std::vector<std::vector<int64_t>>>) {
    e.kind = PoolEntry::Kind::IntListList, e.ints = v;
    return e;
  } else {
    return std::nullopt;
  }
}
template <class T> bool from_pool(T &v, const PoolEntry &e) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (e.kind != PoolEntry::Kind::Text) return false;
    v = e.text;
    return true;
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (e.kind != PoolEntry::Kind::TextList) return false;
    v = e.texts;
    return true;
  } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    if (e.kind != PoolEntry::Kind::IntList || e.ints.size() != 1) return false;
    v = e.ints[0];
    return true;
  } else if constexpr (std::is_same_v<T, std::vector<std::vector<int64_t>>>) {
    if (e.kind != PoolEntry::Kind::IntListList) return false;
    v = e.ints;
    return true;
  } else {
    return false;
  }
}
std::optional<PoolEntry> field_to_pool(const InstFields &f, Field k) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
  case Field::member: return to_pool(f.member);
#include "tables/inst_fields.def"
#undef NS_FIELD
  default: break;
  }
  return std::nullopt;
}
bool field_from_pool(InstFields &f, Field k, const PoolEntry &e) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
  case Field::member: return from_pool(f.member, e);
#include "tables/inst_fields.def"
#undef NS_FIELD
  default: break;
  }
  return false;
}
const char *field_member_name(Field k) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
  case Field::member: return #member;
#include "tables/inst_fields.def"
#undef NS_FIELD
  default: break;
  }
  return "?";
}
std::optional<Field> field_by_member(const std::string &s) {
  for (int i = 0; i < kNumFields; ++i)
    if (s == field_member_name(static_cast<Field>(i))) return static_cast<Field>(i);
  return std::nullopt;
}
// Scheduling / bookkeeping keys no bundle carries; the generic "not representable" check skips them.
bool is_metadata_field(Field k) {
  return k == Field::queue || k == Field::latency_estimate || k == Field::can_read_uninit ||
         k == Field::sync_type || k == Field::instance_name;
}

// ------------------------------------------------------------------------------------------- the table
enum class K {
  AP, DT, DTLO, DTHI, NPART, ALU, VMAP, BOOL, UINT, INT, F32, BIT, IMMSRC, IMMF32, CONST, DER, PAT, D2SIDE,
  WMODE, WIDX, WVAL, UMODE, UIDX, UVAL, SVAL, SCAL, FILL, ILIST, STR, POOL, ARGS, BLOCK, REG, IMMI, SENUM,
  SRANGE, SMASK
};
enum class CK { FIELD, IN, NOTIN, BITVEC, SAMEDT, NINS, NOUTS, ENGINE, ARGK };
// SCAL source byte, low nibble (bundle_fields.def header): the operand is absent (the dword carries the fallback
// field, if any), an inline immediate, a register number, or an SBUF/PSUM pointer (ADDR4 word of a [P, 1] access).
// High nibble: the operand's dtype wire tag.
constexpr int kScalAbsent = 0, kScalImm = 1, kScalReg = 2, kScalPtr = 3;
enum class SyncKind { SHARED, OWN, NONE };

constexpr int kOut = 100;  // role numbering: in0..in2 = 0..2, out0 = 100

struct Row {
  std::string name;
  int off = 0, width = 0;
  K kind = K::CONST;
  int arg = 0;
  int role = -1;                 // operand rows
  std::optional<Field> field;    // field rows
  std::string map;               // VMAP
  int src_off = -1;              // SCAL: the source byte (-1: none, the operand must be a pointer)
  int elem_w = 1;                // ILIST: bytes per element
};
struct Cond {
  CK kind;
  std::vector<Field> fields;
  std::vector<int> roles;
  int64_t value;
};
struct Form {
  std::string name;
  uint8_t l2 = 0;
  unsigned gens = 0;
  int part = 0, nparts = 1;
  SyncKind sync = SyncKind::SHARED;
  std::string layout;
  std::vector<InstructionType> types;
  std::vector<bool> extra;
  std::vector<Cond> conds;
  std::vector<Row> rows;
  bool has(InstructionType t) const { return std::find(types.begin(), types.end(), t) != types.end(); }
  bool on(CoreGen g) const { return (gens >> static_cast<int>(g)) & 1u; }
};
struct Tables {
  std::vector<Form> forms;
  std::vector<Row> sync_rows;
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> maps;
  std::map<std::string, std::vector<std::pair<std::string, int64_t>>> smaps;  // NS_BSMAP: spelling -> byte
};

int parse_role(const std::string &s) {
  if (s.size() == 3 && s.compare(0, 2, "in") == 0) return s[2] - '0';
  if (s.size() == 4 && s.compare(0, 3, "out") == 0) return kOut + (s[3] - '0');
  return -1;
}

std::vector<std::string> split_ws(const std::string &s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  for (std::string w; is >> w;) out.push_back(w);
  return out;
}

Field must_field(const std::string &form, const std::string &s) {
  auto f = field_by_member(s);
  if (!f) throw std::logic_error("bundle_fields.def form " + form + ": unknown field '" + s + "'");
  return *f;
}

Tables build_tables() {
  Tables t;
  constexpr unsigned G2 = 1u << 2, G3 = 1u << 3, G4 = 1u << 4;
  (void)G2, (void)G3, (void)G4;
  auto find = [&t](const char *name) -> Form & {
    for (auto &f : t.forms)
      if (f.name == name) return f;
    throw std::logic_error(std::string("bundle_fields.def: row before its NS_BFORM: ") + name);
  };
  auto add_row = [&](const char *form, const char *name, int off, int width, K kind, const std::string &src,
                     int arg) {
    Row r;
    r.name = name, r.off = off, r.width = width, r.kind = kind, r.arg = arg;
    if (off < 4 || off + width > 64) throw std::logic_error(std::string("bundle_fields.def: row out of bundle: ") + name);
    switch (kind) {
    case K::AP: case K::DT: case K::DTLO: case K::DTHI: case K::NPART: case K::IMMSRC: case K::IMMF32:
    case K::D2SIDE: case K::REG: case K::IMMI:
      r.role = parse_role(src);
      if (r.role < 0) throw std::logic_error(std::string("bundle_fields.def: bad operand role ") + src);
      break;
    case K::SCAL: {
      // "in1" or "in1|field": the operand role and the field the dword carries when the operand is absent.
      const auto bar = src.find('|');
      r.role = parse_role(src.substr(0, bar));
      if (r.role < 0) throw std::logic_error(std::string("bundle_fields.def: bad operand role ") + src);
      if (bar != std::string::npos) r.field = must_field(form, src.substr(bar + 1));
      r.src_off = arg;
      if (arg >= 0 && (arg < 4 || arg >= 64)) throw std::logic_error(std::string("bundle_fields.def: bad SCAL source byte ") + name);
      break;
    }
    case K::FILL:
      r.role = kOut;
      r.field = must_field(form, src);
      break;
    case K::ILIST:
      r.field = must_field(form, src);
      r.src_off = arg & 0xFF;  // count byte
      r.elem_w = arg >> 8;
      if (r.elem_w != 1 && r.elem_w != 2 && r.elem_w != 4) throw std::logic_error(std::string("bundle_fields.def: bad ILIST element width ") + name);
      break;
    case K::VMAP: case K::SENUM: {
      auto c = src.find(':');
      r.field = must_field(form, src.substr(0, c));
      r.map = src.substr(c + 1);
      break;
    }
    case K::ALU: case K::BOOL: case K::UINT: case K::INT: case K::F32: case K::BIT: case K::PAT: case K::STR:
    case K::POOL: case K::BLOCK: case K::SRANGE: case K::SMASK:
      r.field = must_field(form, src);
      if ((kind == K::POOL || kind == K::BLOCK) && width != 2 && width != 4 && width != 8)
        throw std::logic_error(std::string("bundle_fields.def: POOL/BLOCK rows are 2, 4 or 8 bytes: ") + name);
      break;
    case K::ARGS:
      if (width != 2 && width != 4) throw std::logic_error(std::string("bundle_fields.def: ARGS rows are 2 or 4 bytes: ") + name);
      break;
    default: break;
    }
    if (std::string(form) == "SYNC")
      t.sync_rows.push_back(r);
    else
      find(form).rows.push_back(r);
  };
#define NS_BFORM(form, l2_, gens_, part_, nparts_, sync_, layout_)                                           \
  {                                                                                                          \
    for (const auto &g : t.forms)                                                                            \
      if (g.name == #form) throw std::logic_error("bundle_fields.def: two forms named " #form);             \
    Form f;                                                                                                  \
    f.name = #form, f.l2 = l2_, f.gens = gens_, f.part = part_, f.nparts = nparts_;                          \
    f.sync = SyncKind::sync_, f.layout = layout_;                                                            \
    t.forms.push_back(f);                                                                                    \
  }
#define NS_BUSE(form, it_, extra_)                                                                           \
  find(#form).types.push_back(InstructionType::it_), find(#form).extra.push_back(extra_ != 0);
#define NS_BCOND(form, kind_, src_, value_)                                                                   \
  {                                                                                                          \
    Cond cd{CK::kind_, {}, {}, static_cast<int64_t>(value_)};                                                \
    for (const auto &w : split_ws(src_)) {                                                                   \
      if (CK::kind_ == CK::SAMEDT || CK::kind_ == CK::ARGK) cd.roles.push_back(parse_role(w));               \
      else cd.fields.push_back(must_field(#form, w));                                                        \
    }                                                                                                        \
    find(#form).conds.push_back(cd);                                                                         \
  }
#define NS_BFIELD(form, name, off, width, kind, src, arg) add_row(#form, name, off, width, K::kind, src, arg);
#define NS_BVMAP(map, from, to) t.maps[#map].push_back({from, to});
#define NS_BSMAP(map, spelling, to) t.smaps[#map].push_back({spelling, to});
#include "tables/bundle_fields.def"
  // No two rows of a form may claim one byte, except BIT rows sharing a byte and DTLO / DTHI nibble pairs.
  for (const auto &f : t.forms) {
    std::vector<const Row *> owner(64, nullptr);
    std::vector<Row> rows = t.sync_rows;
    if (f.sync != SyncKind::SHARED) rows.clear();
    rows.insert(rows.end(), f.rows.begin(), f.rows.end());
    for (const Row &r : rows) {
      std::vector<int> bytes;
      for (int i = 0; i < r.width; ++i) bytes.push_back(r.off + i);
      if (r.kind == K::SCAL && r.src_off >= 0) bytes.push_back(r.src_off);
      if (r.kind == K::ILIST) bytes.push_back(r.src_off);
      for (int by : bytes) {
        const Row *o = owner[static_cast<size_t>(by)];
        const bool shared = o && ((o->kind == K::BIT && r.kind == K::BIT) ||
                                  ((o->kind == K::DTLO || o->kind == K::DTHI) && (r.kind == K::DTLO || r.kind == K::DTHI)));
        if (o && !shared)
          throw std::logic_error("bundle_fields.def form " + f.name + ": rows " + o->name + " and " + r.name +
                                 " overlap at byte " + std::to_string(by));
        owner[static_cast<size_t>(by)] = &r;
      }
    }
  }
  // The opcode facts live in instruction_wire.def: every form's byte must be listed there for its types and
  // generations, unless the row says EXTRA.
  for (const auto &f : t.forms) {
    if (f.types.empty()) throw std::logic_error("bundle_fields.def: form " + f.name + " has no NS_BUSE");
    for (size_t i = 0; i < f.types.size(); ++i) {
      if (f.extra[i]) continue;
      const auto &info = inst_type_info(f.types[i]);
      for (CoreGen g : kCoreGens) {
        if (!f.on(g)) continue;
        const auto &l2 = info.l2_for(g);
        if (std::find(l2.begin(), l2.end(), f.l2) == l2.end())
          throw std::logic_error("bundle_fields.def form " + f.name + ": opcode byte not listed for " +
                                 info.name + " on " + core_gen_name(g) + " in instruction_wire.def");
      }
    }
  }
  return t;
}

const Tables &tables() {
  static const Tables t = build_tables();
  return t;
}

std::string hex(uint64_t v, int digits = 2) {
  std::ostringstream os;
  os << "0x" << std::hex;
  os.fill('0');
  os.width(digits);
  os << v;
  return os.str();
}

const std::vector<std::pair<int64_t, int64_t>> &vmap(const std::string &name) {
  auto it = tables().maps.find(name);
  if (it == tables().maps.end()) throw std::logic_error("bundle_fields.def: no value map " + name);
  return it->second;
}
std::optional<int64_t> map_fwd(const std::string &name, int64_t from) {
  for (const auto &p : vmap(name))
    if (p.first == from) return p.second;
  // Activation functions the reference does not name: neuronsim codes 0xA0 + ordinal (bundle_fields.def).
  if (name == "actfunc" && from >= 0 && from < 0x40) return 0xA0 + from;
  return std::nullopt;
}
std::optional<int64_t> map_back(const std::string &name, int64_t to) {
  for (const auto &p : vmap(name))
    if (p.second == to) return p.first;
  if (name == "actfunc" && to >= 0xA0 && to < 0xE0 && enum_from_ordinal<ActivationFunctionType>(int(to - 0xA0)))
    return to - 0xA0;
  return std::nullopt;
}
const char *dtype_map(CoreGen g) { return g == CoreGen::V4 ? "dtype_v4" : "dtype_v2"; }
const char *update_map(const CodecOptions &o) {
  return o.update_mode == UpdateModeReading::Lut ? "update_mode_lut" : "update_mode_raw";
}

// little-endian stores / loads
void put(uint8_t *b, int off, int width, uint64_t v) {
  for (int i = 0; i < width; ++i) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get(const uint8_t *b, int off, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= static_cast<uint64_t>(b[off + i]) << (8 * i);
  return v;
}
int64_t sext(uint64_t v, int width) {
  const int bits = 8 * width;
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t sign = 1ull << (bits - 1);
  return static_cast<int64_t>((v ^ sign) - sign);
}
uint32_t f32_bits(double d) {
  float f = static_cast<float>(d);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
double f32_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// ------------------------------------------------------------------------------------------- placement
// ADDR4 (reference isa/addr4.md, tensor-descriptors.md "Partition-axis folding"): SBUF = partition << 18 | byte,
// PSUM = 0x2000000 + (partition << 15) + byte. The byte address inside a partition follows the tensor's `addr`
// (PSUM: bank * 2 KiB + addr when addr is bank-relative, as engines/memory.cpp places it).
constexpr int64_t kSbPartShift = 18, kPsumPartShift = 15, kPsumBase = 0x2000000, kPsumBank = 2048;

int64_t onchip_addr(const Tensor &t) {
  int64_t a = t.addr;
  if (t.mem == MemoryType::PSUM && t.bank > 0 && a < kPsumBank) a += t.bank * kPsumBank;
  return a;
}
int64_t elems_per_partition(const Tensor &t) {
  const int esz = dtype_size(t.dtype);
  return esz > 0 ? t.bytes_per_partition / esz : 0;
}

struct Ctx {
  const Program &prog;
  CoreGen gen;
  const CodecOptions &opt;
  ErrorContext ectx;
  BundlePool *pool = nullptr;         // encode: where out-of-line values go
  const BundlePool *cpool = nullptr;  // decode: where they are read from
  ErrorContext at(const std::string &field) const {
    ErrorContext c = ectx;
    c.field = field;
    return c;
  }
};

const Tensor &tensor_of(const Ctx &c, const Arg &a, const std::string &what) {
  if (a.kind != ArgKind::AccessPattern)
    throw SemanticError(c.at(what), "operand is not an access pattern (bundle descriptors carry tensors only)");
  if (a.tensor < 0 || a.tensor >= static_cast<int>(c.prog.tensors.size()))
    throw SemanticError(c.at(what), "operand names no tensor of the program");
  return c.prog.tensors[static_cast<size_t>(a.tensor)];
}
int64_t const_start(const Ctx &c, const Arg &a, const std::string &what) {
  if (!a.start.is_const())
    throw SemanticError(c.at(what), "start offset depends on a loop variable: a bundle needs a constant address");
  return a.start.c;
}

uint32_t addr4_of(const Ctx &c, const Tensor &t, int64_t e, const std::string &what) {
  const int64_t F = elems_per_partition(t);
  if (F <= 0) throw SemanticError(c.at(what), "tensor '" + t.name + "' has no elements per partition");
  if (e < 0 || e >= t.partitions * F)
    throw SemanticError(c.at(what), "start element " + std::to_string(e) + " outside tensor '" + t.name + "'");
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

// ADDR4 word -> (tensor, start element). InputError when the word is not a static SBUF/PSUM address of a tensor.
std::pair<int, int64_t> tensor_at(const Ctx &c, uint32_t w, const std::string &what) {
  if (w & 0x80000000u) throw InputError(c.at(what), "register-mode ADDR4 word " + hex(w, 8) + " is not supported");
  if (w & 0x60000000u) throw InputError(c.at(what), "indirect/dynamic ADDR4 word " + hex(w, 8) + " is not supported");
  const int64_t a = w & 0x1FFFFFFF;
  bool psum = a >= kPsumBase && a - kPsumBase <= 0x3FFFFF;
  if (!psum && (a & 0x1E000000))
    throw InputError(c.at(what), "ADDR4 word " + hex(w, 8) + " is neither SBUF nor in the PSUM window");
  const int64_t part = psum ? (a - kPsumBase) >> kPsumPartShift : a >> kSbPartShift;
  const int64_t byte = psum ? (a - kPsumBase) & ((1 << kPsumPartShift) - 1) : a & ((1 << kSbPartShift) - 1);
  const MemoryType mem = psum ? MemoryType::PSUM : MemoryType::SB;
  for (size_t i = 0; i < c.prog.tensors.size(); ++i) {
    const Tensor &t = c.prog.tensors[i];
    if (t.mem != mem) continue;
    const int64_t base = onchip_addr(t);
    if (part < t.base_partition || part >= t.base_partition + t.partitions) continue;
    if (byte < base || byte >= base + t.bytes_per_partition) continue;
    const int esz = dtype_size(t.dtype);
    if ((byte - base) % esz != 0)
      throw InputError(c.at(what), "ADDR4 word " + hex(w, 8) + " is not aligned to an element of '" + t.name + "'");
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
const Arg *role_arg(const Inst &in, int role) { return role_arg(const_cast<Inst &>(in), role); }
Arg &role_arg_make(Inst &in, int role) {
  auto &v = role >= kOut ? in.outs : in.ins;
  const size_t i = static_cast<size_t>(role >= kOut ? role - kOut : role);
  if (v.size() <= i) v.resize(i + 1);
  return v[i];
}
std::string role_name(int role) { return role >= kOut ? "outs[" + std::to_string(role - kOut) + "]" : "ins[" + std::to_string(role) + "]"; }

bool cond_holds(const Cond &c, const Inst &in) {
  switch (c.kind) {
  case CK::FIELD: return get_i(in.f, c.fields[0]) == c.value;
  case CK::IN: case CK::NOTIN: {
    const int64_t v = get_i(in.f, c.fields[0]);
    const bool inside = v >= 0 && v < 63 && ((c.value >> v) & 1);
    return c.kind == CK::IN ? inside : !inside;
  }
  case CK::BITVEC: {
    bool any = false;
    for (Field f : c.fields) any = any || alu_info(static_cast<AluOp>(get_i(in.f, f))).bitvec;
    return any == (c.value != 0);
  }
  case CK::SAMEDT: {
    const Arg *a = role_arg(in, c.roles[0]), *b = role_arg(in, c.roles[1]);
    if (!a || !b) return false;
    return (a->dtype == b->dtype) == (c.value != 0);
  }
  case CK::NINS: return static_cast<int64_t>(in.ins.size()) == c.value;
  case CK::NOUTS: return static_cast<int64_t>(in.outs.size()) == c.value;
  case CK::ENGINE: return static_cast<int64_t>(in.engine) == c.value;
  case CK::ARGK: {
    const Arg *a = role_arg(in, c.roles[0]);
    return a && static_cast<int64_t>(a->kind) == c.value;
  }
  }
  return false;
}

// ------------------------------------------------------------------------------------------- out-of-line values
const std::vector<std::pair<std::string, int64_t>> &smap(const std::string &name) {
  auto it = tables().smaps.find(name);
  if (it == tables().smaps.end()) throw std::logic_error("bundle_fields.def: no string map " + name);
  return it->second;
}
uint64_t all_ones(int width) { return width >= 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * width)) - 1; }

// An operand list as a pool entry: access patterns on tensors of the program with constant starts.
PoolEntry operands_entry(const Ctx &c, const Inst &in) {
  PoolEntry e;
  e.kind = PoolEntry::Kind::Operands;
  auto take = [&](const std::vector<Arg> &v, std::vector<Arg> &out, int base) {
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string what = role_name(base + static_cast<int>(i));
      const Arg &a = v[i];
      (void)tensor_of(c, a, what);
      Arg x;
      x.kind = ArgKind::AccessPattern;
      x.tensor = a.tensor;
      x.dtype = a.dtype;
      x.start = Expr::constant(const_start(c, a, what));
      x.ap = a.ap;
      out.push_back(x);
    }
  };
  take(in.ins, e.ins, 0);
  take(in.outs, e.outs, kOut);
  return e;
}
const PoolEntry &pool_at(const Ctx &c, uint64_t idx, const std::string &what) {
  if (!c.cpool) throw InputError(c.at(what), "pool index " + std::to_string(idx) + " but the stream has no pool");
  if (idx >= c.cpool->entries.size())
    throw InputError(c.at(what), "pool index " + std::to_string(idx) + " past the stream pool (" +
                                     std::to_string(c.cpool->entries.size()) + " entries)");
  return c.cpool->entries[static_cast<size_t>(idx)];
}
const char *pool_kind_name(PoolEntry::Kind k) {
  switch (k) {
  case PoolEntry::Kind::Text: return "a string";
  case PoolEntry::Kind::TextList: return "a string list";
  case PoolEntry::Kind::IntList: return "an integer list";
  case PoolEntry::Kind::IntListList: return "a list of integer lists";
  case PoolEntry::Kind::Operands: return "an operand list";
  }
  return "?";
}
// Semaphore ids of a group (sema_group): 0..255, no repeats (the bitmask and the range keep a set).
std::vector<int64_t> sema_set(const Ctx &c, const std::vector<int64_t> &l, const std::string &what) {
  std::vector<int64_t> v = l;
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] > 255) throw SemanticError(c.at(what), "semaphore id " + std::to_string(v[i]) + " not in 0..255");
    if (i && v[i] == v[i - 1]) throw SemanticError(c.at(what), "semaphore id " + std::to_string(v[i]) + " listed twice");
  }
  return v;
}

// ------------------------------------------------------------------------------------------- encode rows
struct EncodeInfo {
  int npart_default = -1;  // partitions of the roles that carry no NPART row of their own
};

void enc_ap(const Ctx &c, uint8_t *b, const Row &r, const Arg &a, const std::string &what) {
  const Tensor &t = tensor_of(c, a, what);
  if (t.is_dram()) throw SemanticError(c.at(what), "DRAM tensor '" + t.name + "' in an SBUF/PSUM descriptor");
  const int n = (r.width - 4) / 4;
  const int64_t F = elems_per_partition(t);
  if (a.ap.empty()) throw SemanticError(c.at(what), "empty access pattern");
  if (a.ap[0].num > 1 && a.ap[0].step != F)
    throw SemanticError(c.at(what), "partition step " + std::to_string(a.ap[0].step) +
                                        " is not one partition (" + std::to_string(F) + " elements)");
  put(b, r.off, 4, addr4_of(c, t, const_start(c, a, what), what));
  // reference isa/tensor-descriptors.md: free dims innermost first, num == 1 dims dropped, spare slots {1, 1}.
  int k = 0;
  for (size_t d = a.ap.size(); d-- > 1;) {
    if (a.ap[d].num == 1) continue;
    if (k >= n)
      throw SemanticError(c.at(what), "access pattern has more than " + std::to_string(n) +
                                          " free dimensions for this descriptor");
    if (a.ap[d].step < -32768 || a.ap[d].step > 32767 || a.ap[d].num < 1 || a.ap[d].num > 65535)
      throw SemanticError(c.at(what), "step/num [" + std::to_string(a.ap[d].step) + ", " +
                                          std::to_string(a.ap[d].num) + "] does not fit i16/u16");
    put(b, r.off + 4 + 2 * k, 2, static_cast<uint16_t>(a.ap[d].step));
    put(b, r.off + 4 + 2 * n + 2 * k, 2, static_cast<uint16_t>(a.ap[d].num));
    ++k;
  }
  for (; k < n; ++k) put(b, r.off + 4 + 2 * k, 2, 1), put(b, r.off + 4 + 2 * n + 2 * k, 2, 1);
}

// DMA DIRECT2D side (reference isa/dma-encoding.md). HW steps are bytes; on chip the partition dimension's HW
// step is the ADDR4 partition stride (neuronsim). Unused step/num pairs are {0, 0} (neuronsim).
void enc_d2(const Ctx &c, uint8_t *b, const Row &r, const Arg &a, const std::string &what) {
  const Tensor &t = tensor_of(c, a, what);
  const int64_t e = const_start(c, a, what);
  const int esz = dtype_size(a.dtype);
  struct D { int64_t step, num; };
  std::vector<D> dims;
  uint32_t addr = 0, varid = 0;
  size_t first_free = 0;
  if (t.is_dram()) {
    addr = static_cast<uint32_t>(e * dtype_size(t.dtype));
    varid = static_cast<uint32_t>(a.tensor + 1);
  } else {
    addr = addr4_of(c, t, e, what);
    const int64_t F = elems_per_partition(t);
    if (a.ap.empty()) throw SemanticError(c.at(what), "empty access pattern");
    if (a.ap[0].num > 1) {
      if (a.ap[0].step != F)
        throw SemanticError(c.at(what), "partition step is not one partition (" + std::to_string(F) + ")");
      dims.push_back({int64_t(1) << (t.mem == MemoryType::SB ? kSbPartShift : kPsumPartShift), a.ap[0].num});
    }
    first_free = 1;
  }
  for (size_t d = first_free; d < a.ap.size(); ++d)
    if (a.ap[d].num != 1) dims.push_back({a.ap[d].step * esz, a.ap[d].num});
  // The decoder reads a byte step equal to the partition stride as the partition dimension: a one-partition
  // pattern with such a free step would come back as a different pattern, so it is refused (fuzz_bundle).
  if (!t.is_dram() && !a.ap.empty() && a.ap[0].num == 1) {
    const int64_t part_stride = int64_t(1) << (t.mem == MemoryType::SB ? kSbPartShift : kPsumPartShift);
    for (const auto &dm : dims)
      if (dm.step == part_stride)
        throw SemanticError(c.at(what), "a free step of " + std::to_string(dm.step) +
                                            " bytes equals the partition stride: not representable on one partition");
  }
  int64_t elem = esz;
  const bool last_free = !a.ap.empty() && (a.ap.size() - 1 >= first_free) && a.ap.back().num != 1;
  if (last_free && a.ap.back().step == 1) {
    elem = esz * a.ap.back().num;
    dims.pop_back();
  }
  if (dims.size() > 2) throw SemanticError(c.at(what), "DMA side has more than two strided dimensions");
  if (elem > 0x10000) throw SemanticError(c.at(what), "contiguous span of " + std::to_string(elem) + " bytes > 64 KiB");
  put(b, r.off, 4, addr);
  put(b, r.off + 4, 2, varid & 0xFFFF);
  b[r.off + 6] = static_cast<uint8_t>(varid >> 16);
  b[r.off + 7] = 0x10;  // static physical address mode
  for (size_t i = 0; i < dims.size(); ++i) {
    const D &d = dims[dims.size() - 1 - i];  // slot 0 = innermost strided dim (dim - 2)
    if (d.num > 65535 || d.step < INT32_MIN || d.step > INT32_MAX)
      throw SemanticError(c.at(what), "DMA step/num does not fit u32/u16");
    put(b, r.off + 8 + 4 * static_cast<int>(i), 4, static_cast<uint32_t>(d.step));
    put(b, r.off + 0x10 + 2 * static_cast<int>(i), 2, static_cast<uint16_t>(d.num));
  }
  put(b, r.off + 0x14, 2, elem == 0x10000 ? 0 : static_cast<uint16_t>(elem));
}

uint32_t reg_id(const Ctx &c, const std::string &reg, const std::string &what) {
  size_t i = 0;
  while (i < reg.size() && !std::isdigit(static_cast<unsigned char>(reg[i]))) ++i;
  if (i == reg.size()) throw SemanticError(c.at(what), "register '" + reg + "' has no number for the bundle");
  return static_cast<uint32_t>(std::stoul(reg.substr(i)));
}

void check_sem(const Ctx &c, int sem, const std::string &what) {
  if (sem < 0 || sem > 255) throw SemanticError(c.at(what), "semaphore index " + std::to_string(sem) + " not in 0..255");
}

// SCAL (bundle_fields.def): one scalar operand in a dword (or a qword when the row is 8 wide) plus a source
// byte. An immediate is stored as float32 / float64 when its dtype is a float type, else as a signed integer; a
// register as its number; a pointer as the ADDR4 word of a [P, 1] SBUF/PSUM access ([[F, P], [1, 1]], P = the
// partition count the form carries). Absent: the dword holds the fallback field (as float32 / float64).
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
  if (static_cast<double>(i) != v || (bits < 64 && (i < -(int64_t(1) << (bits - 1)) || i >= (int64_t(1) << bits))))
    throw SemanticError(c.at(what), "integer " + std::to_string(v) + " does not fit " + std::to_string(bits) + " bits");
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

void enc_scal(const Ctx &c, uint8_t *b, const Row &r, const Inst &in, int64_t npart, const std::string &what) {
  const Arg *a = role_arg(in, r.role);
  int code = kScalAbsent;
  if (!a) {
    if (r.src_off < 0) throw SemanticError(c.at(what), "missing pointer operand " + role_name(r.role));
    if (r.field) put_num(c, b, r, get_d(in.f, *r.field), true, what);
  } else {
    if (r.field) {
      const InstFields dflt;
      if (!field_same(in.f, dflt, *r.field))
        throw SemanticError(c.at(field_key(*r.field)), "field and operand " + role_name(r.role) +
                                                           " both given: the bundle carries one of them");
    }
    switch (a->kind) {
    case ArgKind::Immediate:
      if (a->imm_array.size() > 1) throw SemanticError(c.at(what), "a symbolic immediate (several values) is not encoded");
      code = kScalImm;
      put_num(c, b, r, a->imm, dtype_is_float(a->dtype), what);
      break;
    case ArgKind::Register:
      code = kScalReg;
      put(b, r.off, 4, reg_id(c, a->reg, what));
      if ("r" + std::to_string(reg_id(c, a->reg, what)) != a->reg)
        throw SemanticError(c.at(what), "register '" + a->reg + "' is not named r<N>: the bundle keeps only N");
      break;
    case ArgKind::AccessPattern: {
      code = kScalPtr;
      const Tensor &t = tensor_of(c, *a, what);
      if (t.is_dram()) throw SemanticError(c.at(what), "a scalar pointer must be in SBUF/PSUM");
      const int64_t F = elems_per_partition(t);
      const bool shape_ok = a->ap.size() == 2 && a->ap[0].step == F && a->ap[1].step == 1 && a->ap[1].num == 1;
      if (!shape_ok)
        throw SemanticError(c.at(what), "a scalar pointer must be one element per partition, [[" + std::to_string(F) +
                                            ", P], [1, 1]]");
      const int64_t want = npart < 0 ? 1 : npart;
      if (a->ap[0].num != want)
        throw SemanticError(c.at(what), "scalar pointer partitions " + std::to_string(a->ap[0].num) +
                                            " differ from the " + std::to_string(want) + " the bundle carries");
      if (r.width != 4) throw SemanticError(c.at(what), "pointer in an 8-byte immediate slot");
      put(b, r.off, 4, addr4_of(c, t, const_start(c, *a, what), what));
      break;
    }
    default: throw SemanticError(c.at(what), "operand kind '" + a->json_kind + "' has no bundle form");
    }
  }
  if (r.src_off < 0) {
    if (code != kScalPtr) throw SemanticError(c.at(what), "this slot holds a pointer only");
    return;
  }
  int tag = 0;
  if (a) {
    auto t = map_fwd(dtype_map(c.gen), static_cast<int64_t>(a->dtype));
    if (!t || *t > 0xF) throw SemanticError(c.at(what), std::string("operand dtype ") + enum_name(a->dtype) + " has no nibble tag");
    tag = static_cast<int>(*t);
  }
  b[r.src_off] = static_cast<uint8_t>(code | (tag << 4));
}

void dec_scal(const Ctx &c, const uint8_t *b, const Row &r, Inst &in, const std::string &what) {
  const int src = r.src_off < 0 ? (kScalPtr | 0xF0) : b[r.src_off];
  const int code = src & 0xF;
  if (code == kScalAbsent) {
    if (r.field) set_d(in.f, *r.field, get_num(b, r, true, true));
    return;
  }
  Arg &a = role_arg_make(in, r.role);
  if (r.src_off >= 0) {
    auto d = map_back(dtype_map(c.gen), src >> 4);
    if (!d) throw InputError(c.at(what), "dtype tag " + hex(src >> 4) + " names no dtype");
    a.dtype = static_cast<Dtype>(*d);
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
    if (r.src_off < 0) a.dtype = t.dtype;
    a.start = Expr::constant(e);
    a.ap = {{elems_per_partition(t), -1}, {1, 1}};  // partitions set with the form's NPART default
  } else {
    throw InputError(c.at(what), "scalar source " + hex(src) + " (0 none, 1 immediate, 2 register, 3 pointer)");
  }
}

void encode_rows(const Ctx &c, const Inst &in, const Form &f, const std::vector<Row> &rows, uint8_t *b,
                 const EncodeInfo &info, const std::vector<SemWait> &waits,
                 const std::vector<SemUpdate> &updates) {
  for (const Row &r : rows) {
    const std::string what = r.name + " (+" + hex(r.off) + ")";
    const Arg *a = r.role >= 0 ? role_arg(in, r.role) : nullptr;
    switch (r.kind) {
    case K::AP: enc_ap(c, b, r, *a, what); break;
    case K::D2SIDE: enc_d2(c, b, r, *a, what); break;
    case K::DT: case K::DTLO: case K::DTHI: {
      auto tag = map_fwd(dtype_map(c.gen), static_cast<int64_t>(a->dtype));
      if (!tag) throw SemanticError(c.at(what), std::string("dtype ") + enum_name(a->dtype) + " has no wire tag");
      if (r.kind != K::DT && *tag > 0xF)
        throw SemanticError(c.at(what), std::string("dtype ") + enum_name(a->dtype) + " tag " + hex(*tag) +
                                            " does not fit a nibble");
      if (r.kind == K::DT) b[r.off] = static_cast<uint8_t>(*tag);
      else if (r.kind == K::DTLO) b[r.off] = static_cast<uint8_t>((b[r.off] & 0xF0) | *tag);
      else b[r.off] = static_cast<uint8_t>((b[r.off] & 0x0F) | (*tag << 4));
      break;
    }
    case K::NPART: {
      const int64_t p = a->partitions();
      if (p < 1 || p > 255) throw SemanticError(c.at(what), "partition count " + std::to_string(p) + " not in 1..255");
      b[r.off] = static_cast<uint8_t>(p);
      break;
    }
    case K::ALU: {
      // spec 000: average/elemwise_mul have no ALU byte (their forms never use an ALU row); alu_to_wire raises
      // "Invalid enum variant for enum AluOpType" for them and for ops absent on this generation.
      const uint32_t w = alu_to_wire(static_cast<AluOp>(get_i(in.f, *r.field)), c.gen, c.at(what));
      b[r.off] = static_cast<uint8_t>(w & 0xFF);  // mod_int 0xFFFFFFC8 -> 0xC8
      break;
    }
    case K::VMAP: {
      const int64_t v = get_i(in.f, *r.field);
      auto w = map_fwd(r.map, v);
      if (!w) throw SemanticError(c.at(what), std::string(field_key(*r.field)) + " value " + std::to_string(v) +
                                                  " has no wire form");
      b[r.off] = static_cast<uint8_t>(*w);
      break;
    }
    case K::BOOL: b[r.off] = get_i(in.f, *r.field) ? 1 : 0; break;
    case K::BIT:
      if (get_i(in.f, *r.field)) b[r.off] = static_cast<uint8_t>(b[r.off] | (1u << r.arg));
      break;
    case K::UINT: case K::INT: {
      const double d = get_d(in.f, *r.field);
      const int64_t v = static_cast<int64_t>(d);
      const int bits = 8 * r.width;
      const bool ok = static_cast<double>(v) == d &&
                      (r.kind == K::UINT ? (v >= 0 && (bits >= 64 || v < (int64_t(1) << bits)))
                                         : (v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1))));
      if (!ok) throw SemanticError(c.at(what), std::string(field_key(*r.field)) + " value " + std::to_string(d) +
                                                   " does not fit " + std::to_string(bits) + " bits");
      put(b, r.off, r.width, static_cast<uint64_t>(v));
      break;
    }
    case K::F32: {
      // Every F32 field is read as float32 by its op (engines/ops: float(field)): a double is rounded to float32
      // (docs/bundle-layout.md, exactness contract).
      const double d = get_d(in.f, *r.field);
      if (std::isfinite(d) && std::fabs(d) > 3.4028234663852886e38)
        throw SemanticError(c.at(what), std::string(field_key(*r.field)) + " value overflows float32");
      put(b, r.off, 4, f32_bits(d));
      break;
    }
    case K::IMMSRC: b[r.off] = a ? 1 : 0; break;
    case K::IMMF32:
      if (a) {
        if (a->kind != ArgKind::Immediate || a->imm_array.size() > 1)
          throw SemanticError(c.at(what), "scalar operand must be a single immediate (pointer scalars are not encoded)");
        if (a->dtype != Dtype::float32) throw SemanticError(c.at(what), "immediate dtype must be float32");
        if (static_cast<double>(static_cast<float>(a->imm)) != a->imm)
          throw SemanticError(c.at(what), "immediate is not exactly a float32");
        put(b, r.off, 4, f32_bits(a->imm));
      }
      break;
    case K::CONST: put(b, r.off, r.width, static_cast<uint64_t>(r.arg)); break;
    case K::SCAL: enc_scal(c, b, r, in, info.npart_default, what); break;
    case K::FILL: {
      // The Memset fill dword (reference isa/tensortensor-encoding.md 5: a 32-bit pattern broadcast to every
      // element): the float32 bits of the value for a float output, the integer for an integer output.
      const double v = get_d(in.f, *r.field);
      if (dtype_is_float(a->dtype)) {
        put(b, r.off, 4, f32_bits(v));  // rounded to float32: the engine stores float32 (docs/bundle-layout.md)
      } else {
        const int64_t i = static_cast<int64_t>(v);
        if (static_cast<double>(i) != v || i < INT32_MIN || i > static_cast<int64_t>(UINT32_MAX))
          throw SemanticError(c.at(what), "integer fill " + std::to_string(v) + " does not fit 32 bits");
        put(b, r.off, 4, static_cast<uint32_t>(i));
      }
      break;
    }
    case K::ILIST: {
      const std::vector<int64_t> &l = ilist_field(in.f, *r.field);
      const size_t cap = static_cast<size_t>(r.width / r.elem_w);
      if (l.size() > cap || l.size() > 255)
        throw SemanticError(c.at(what), "list of " + std::to_string(l.size()) + " entries > " + std::to_string(cap));
      b[r.src_off] = static_cast<uint8_t>(l.size());
      const int bits = 8 * r.elem_w;
      for (size_t i = 0; i < l.size(); ++i) {
        if (l[i] < (r.elem_w == 1 ? 0 : -(int64_t(1) << (bits - 1))) || l[i] >= (int64_t(1) << (r.elem_w == 1 ? 8 : bits - 1)))
          throw SemanticError(c.at(what), "entry " + std::to_string(l[i]) + " does not fit " + std::to_string(bits) + " bits");
        put(b, r.off + static_cast<int>(i) * r.elem_w, r.elem_w, static_cast<uint64_t>(l[i]));
      }
      break;
    }
    case K::STR: {
      // reference isa/sp-sync-encoding.md 7a / dma-encoding.md: strncpy into the slot; longer names assert.
      const std::string &v = str_field(in.f, *r.field);
      if (v.size() > static_cast<size_t>(r.width) || v.find('\0') != std::string::npos)
        throw SemanticError(c.at(field_key(*r.field)), "'" + v + "' does not fit the " + std::to_string(r.width) +
                                                           "-byte name slot at +" + hex(r.off));
      std::memcpy(b + r.off, v.data(), v.size());
      break;
    }
    case K::POOL: {
      const InstFields dflt;
      if (field_same(in.f, dflt, *r.field)) {
        put(b, r.off, r.width, all_ones(r.width));  // the field's default value
        break;
      }
      if (!c.pool) throw SemanticError(c.at(field_key(*r.field)), "this value lives in the stream pool: encode with a pool (write_bundle_dir keeps one)");
      const size_t idx = c.pool->add(*field_to_pool(in.f, *r.field));
      if (idx >= all_ones(r.width)) throw SemanticError(c.at(what), "stream pool past " + std::to_string(all_ones(r.width)) + " entries");
      put(b, r.off, r.width, idx);
      break;
    }
    case K::ARGS: {
      if (!c.pool) throw SemanticError(c.at(what), "the operand list lives in the stream pool: encode with a pool (write_bundle_dir keeps one)");
      const size_t idx = c.pool->add(operands_entry(c, in));
      if (idx >= all_ones(r.width)) throw SemanticError(c.at(what), "stream pool past " + std::to_string(all_ones(r.width)) + " entries");
      put(b, r.off, r.width, idx);
      break;
    }
    case K::BLOCK: {
      // neuronsim: 1 + the block's index in the stream's block table (Program::blocks); 0 = no block named (the
      // edge falls through, as the reference's implicit edge does).
      const std::string &name = str_field(in.f, *r.field);
      uint64_t v = 0;
      if (!name.empty()) {
        size_t k = 0;
        while (k < c.prog.blocks.size() && c.prog.blocks[k].name != name) ++k;
        if (k == c.prog.blocks.size())
          throw SemanticError(c.at(field_key(*r.field)), "no basic block named '" + name + "' in the program's block table");
        v = k + 1;
      }
      put(b, r.off, r.width, v);
      break;
    }
    case K::REG: {
      if (!a || a->kind != ArgKind::Register)
        throw SemanticError(c.at(role_name(r.role)), "operand must be a register (" + what + ")");
      const uint32_t id = reg_id(c, a->reg, role_name(r.role));
      if ("r" + std::to_string(id) != a->reg || id > 255)
        throw SemanticError(c.at(role_name(r.role)), "register '" + a->reg + "' is not named r<N> with N < 256: the bundle keeps only N");
      b[r.off] = static_cast<uint8_t>(id);
      break;
    }
    case K::IMMI: {
      if (!a || a->kind != ArgKind::Immediate || a->imm_array.size() > 1)
        throw SemanticError(c.at(role_name(r.role)), "operand must be a single immediate (" + what + ")");
      const bool sgn = dtype_is_signed_int(a->dtype) || dtype_is_float(a->dtype);
      const double v = a->imm;
      const bool ok = std::floor(v) == v && (sgn ? v >= INT32_MIN && v <= INT32_MAX : v >= 0 && v <= UINT32_MAX);
      if (!ok) throw SemanticError(c.at(role_name(r.role)), "immediate " + std::to_string(v) + " is not a " +
                                                                (sgn ? "signed" : "unsigned") + " 32-bit integer");
      put(b, r.off, 4, static_cast<uint32_t>(static_cast<int64_t>(v)));
      break;
    }
    case K::SENUM: {
      const std::string &v = str_field(in.f, *r.field);
      std::optional<int64_t> w;
      std::string known;
      for (const auto &p : smap(r.map)) {
        if (p.first == v) w = p.second;
        if (!p.first.empty()) known += std::string(known.empty() ? "" : ", ") + p.first;
      }
      if (!w) throw SemanticError(c.at(field_key(*r.field)), "'" + v + "' has no wire byte (" + known + ")");
      b[r.off] = static_cast<uint8_t>(*w);
      break;
    }
    case K::SRANGE: case K::SMASK: {
      // reference isa/sp-sync-encoding.md 6b: clear mode 0x01 (SemaphoreZero) = range_first / range_last, any
      // other mode = a 256-bit bitmask. The mode byte (row arg) is written first.
      const bool range = b[r.arg] == 0x01;
      if (range != (r.kind == K::SRANGE)) break;
      const auto v = sema_set(c, ilist_field(in.f, *r.field), field_key(*r.field));
      if (range) {
        if (v.empty()) throw SemanticError(c.at(field_key(*r.field)), "the range form needs at least one semaphore");
        if (v.back() - v.front() + 1 != static_cast<int64_t>(v.size()))
          throw SemanticError(c.at(field_key(*r.field)), "the range form (SemaphoreZero) clears every id in [" +
                                                             std::to_string(v.front()) + ", " + std::to_string(v.back()) +
                                                             "]: this group is not contiguous (use SemaphoreZeroBitmask)");
        b[r.off] = static_cast<uint8_t>(v.front());
        b[r.off + 1] = static_cast<uint8_t>(v.back());
      } else {
        for (int64_t id : v) b[r.off + id / 8] = static_cast<uint8_t>(b[r.off + id / 8] | (1u << (id % 8)));
      }
      break;
    }
    case K::DER: {
      if (r.arg == 1) {
        const Arg *o = role_arg(in, kOut);
        put(b, r.off, r.width, o ? static_cast<uint64_t>(o->free_elements()) : 0);
      } else if (r.arg == 2) {
        double s = 1.0;
        const Arg *i0 = role_arg(in, 0);
        if (in.f.pool_func == PoolFunctionType::Avg && i0 && !i0->ap.empty()) {
          const size_t n = i0->ap.size();
          int64_t w = i0->ap[n - 1].num;
          if (n >= 3) w *= i0->ap[n - 2].num;
          s = 1.0 / static_cast<double>(w);
        }
        put(b, r.off, 4, f32_bits(s));
      } else if (r.arg == 3) {
        const Arg *i0 = role_arg(in, 0);
        const double s = in.f.op == AluOp::average && i0 ? 1.0 / static_cast<double>(i0->partitions()) : 0.0;
        put(b, r.off, 4, f32_bits(s));
      } else if (r.arg == 4 || r.arg == 5) {
        // BNStats Welford count seeds (reference batchnorm-encoding.md): ceil(N/2) even, floor(N/2) odd.
        const Arg *i0 = role_arg(in, 0);
        const int64_t n = i0 ? i0->free_elements() : 0;
        put(b, r.off, 4, f32_bits(static_cast<double>(r.arg == 4 ? (n + 1) / 2 : n / 2)));
      }
      break;
    }
    case K::PAT: {
      const auto &p = in.f.pattern;
      if (static_cast<int>(p.size()) > r.arg)
        throw SemanticError(c.at(what), "pattern has more than " + std::to_string(r.arg) + " pairs");
      for (size_t i = 0; i < p.size(); ++i) {
        if (p[i].step < -32768 || p[i].step > 32767 || p[i].num < 1 || p[i].num > 65535)
          throw SemanticError(c.at(what), "pattern pair does not fit i16/u16 (num >= 1)");
        put(b, r.off + 2 * static_cast<int>(i), 2, static_cast<uint16_t>(p[i].step));
        put(b, r.off + 2 * r.arg + 2 * static_cast<int>(i), 2, static_cast<uint16_t>(p[i].num));
      }
      break;
    }
    case K::WMODE: case K::WIDX: case K::WVAL: {
      if (static_cast<size_t>(r.arg) >= waits.size()) break;
      const SemWait &w = waits[static_cast<size_t>(r.arg)];
      if (r.kind == K::WMODE) {
        if (f.name == "EVSEM" && w.mode == SemWait::Mode::EqImm)
          throw SemanticError(c.at(what), "only two wait modes supported now: SEM_GE_IMM and SEM_GE_REG");
        b[r.off] = static_cast<uint8_t>(*map_fwd("wait_mode", static_cast<int64_t>(w.mode)));
      } else if (r.kind == K::WIDX) {
        check_sem(c, w.sem, what);
        b[r.off] = static_cast<uint8_t>(w.sem);
      } else {
        put(b, r.off, 4, w.mode == SemWait::Mode::GeReg ? reg_id(c, w.reg, what) : static_cast<uint32_t>(w.value));
      }
      break;
    }
    case K::UMODE: case K::UIDX: case K::UVAL: {
      if (updates.empty()) break;
      const SemUpdate &u = updates[0];
      const bool implicit = u.mode == SemUpdate::Mode::Inc || u.mode == SemUpdate::Mode::Dec;
      if (r.kind == K::UMODE) {
        if (implicit && u.value != 1)
          throw SemanticError(c.at(what), "an increment/decrement update carries no value (must be 1)");
        b[r.off] = static_cast<uint8_t>(*map_fwd(update_map(c.opt), static_cast<int64_t>(u.mode)));
      } else if (r.kind == K::UIDX) {
        check_sem(c, u.sem, what);
        b[r.off] = static_cast<uint8_t>(u.sem);
      } else if (!implicit) {
        put(b, r.off, 4, static_cast<uint32_t>(u.value));
      }
      break;
    }
    case K::SVAL: {
      std::optional<uint32_t> v;
      if (!waits.empty())
        v = waits[0].mode == SemWait::Mode::GeReg ? reg_id(c, waits[0].reg, what)
                                                  : static_cast<uint32_t>(waits[0].value);
      if (!updates.empty() && updates[0].mode != SemUpdate::Mode::Inc && updates[0].mode != SemUpdate::Mode::Dec) {
        const uint32_t uv = static_cast<uint32_t>(updates[0].value);
        if (v && *v != uv)
          throw SemanticError(c.at(what), "wait and update values differ but share one dword (+0x08)");
        v = uv;
      }
      if (v) put(b, r.off, 4, *v);
      break;
    }
    }
  }
  (void)info;
}

// Picks the forms (one per bundle) for an instruction: the first form of each part whose conditions hold.
std::vector<const Form *> pick_forms(const Inst &in, CoreGen gen, const ErrorContext &ectx) {
  std::vector<const Form *> out;
  bool any_type = false;
  // Part 0: the first form (table order) whose conditions hold; later parts: the first form of that part with the
  // same bundle count (a drain part may be declared before the forms it follows).
  for (int part = 0; out.empty() || part < out[0]->nparts; ++part) {
    const Form *pick = nullptr;
    for (const Form &f : tables().forms) {
      if (!f.has(in.type) || !f.on(gen)) continue;
      any_type = true;
      if (f.part != part || (!out.empty() && f.nparts != out[0]->nparts)) continue;
      if (!std::all_of(f.conds.begin(), f.conds.end(), [&](const Cond &c) { return cond_holds(c, in); })) continue;
      pick = &f;
      break;
    }
    if (!pick) break;
    out.push_back(pick);
  }
  if (!out.empty() && static_cast<int>(out.size()) == out[0]->nparts) return out;
  const auto &info = inst_type_info(in.type);
  if (!info.encoded_on(gen))
    throw SemanticError(ectx, std::string(inst_type_name(in.type)) + " is not encoded on " + core_gen_name(gen) +
                                  " (instruction_wire.def)");
  if (!any_type)
    throw SemanticError(ectx, std::string("the bundle codec has no layout for ") + inst_type_name(in.type) +
                                  " (bundle_fields.def)");
  throw SemanticError(ectx, std::string("no bundle form of ") + inst_type_name(in.type) + " on " +
                                core_gen_name(gen) + " matches these fields (e.g. a transposed bit-vector op)");
}

// ------------------------------------------------------------------------------------------- decode rows
void dec_ap(const Ctx &c, const uint8_t *b, const Row &r, Arg &a, const std::string &what) {
  const int n = (r.width - 4) / 4;
  auto [ti, e] = tensor_at(c, static_cast<uint32_t>(get(b, r.off, 4)), what);
  const Tensor &t = c.prog.tensors[static_cast<size_t>(ti)];
  a.kind = ArgKind::AccessPattern;
  a.tensor = ti;
  a.start = Expr::constant(e);
  a.ap.assign(1, ApDim{elems_per_partition(t), -1});
  std::vector<ApDim> free;
  for (int k = 0; k < n; ++k) {
    const int64_t num = static_cast<int64_t>(get(b, r.off + 4 + 2 * n + 2 * k, 2));
    if (num == 0) throw InputError(c.at(what), "descriptor count " + std::to_string(k) + " is zero");
    if (num == 1) continue;  // spare {1, 1} slot (or a dropped degenerate dim)
    free.push_back({sext(get(b, r.off + 4 + 2 * k, 2), 2), num});
  }
  a.ap.insert(a.ap.end(), free.rbegin(), free.rend());
}

void dec_d2(const Ctx &c, const uint8_t *b, const Row &r, Arg &a, const std::string &what) {
  const uint32_t addr = static_cast<uint32_t>(get(b, r.off, 4));
  const uint32_t varid = static_cast<uint32_t>(get(b, r.off + 4, 2) | (uint64_t(b[r.off + 6]) << 16));
  if (b[r.off + 7] != 0x10)
    throw InputError(c.at(what), "ADDR8 mode byte " + hex(b[r.off + 7]) + " (only 0x10, static physical, is supported)");
  const int esz = dtype_size(a.dtype);
  a.kind = ArgKind::AccessPattern;
  a.ap.clear();
  int64_t part_stride = 0;
  if (varid != 0) {
    const int ti = static_cast<int>(varid) - 1;
    if (ti >= static_cast<int>(c.prog.tensors.size()) || !c.prog.tensors[static_cast<size_t>(ti)].is_dram())
      throw InputError(c.at(what), "var id " + std::to_string(varid) + " names no DRAM tensor");
    const int tsz = dtype_size(c.prog.tensors[static_cast<size_t>(ti)].dtype);
    if (addr % tsz) throw InputError(c.at(what), "DRAM byte offset not element aligned");
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
  for (int i = 1; i >= 0; --i) {  // slot 1 = outer (dim - 3), slot 0 = dim - 2
    const int64_t num = static_cast<int64_t>(get(b, r.off + 0x10 + 2 * i, 2));
    const int64_t step = sext(get(b, r.off + 8 + 4 * i, 4), 4);
    // Unused (0) and unit (1) counts add no dimension: the encoder drops unit dimensions, so keeping one here
    // would make decode(encode(decode(x))) differ from decode(x) (fuzz_bundle).
    if (num == 0 || num == 1) continue;
    if (part_stride && step == part_stride && a.ap.size() == 1 && a.ap[0].num == 1) {
      a.ap[0].num = num;
      continue;
    }
    if (step % esz) throw InputError(c.at(what), "DMA step " + std::to_string(step) + " not a multiple of the element size");
    a.ap.push_back({step / esz, num});
  }
  int64_t elem = static_cast<int64_t>(get(b, r.off + 0x14, 2));
  if (elem == 0) elem = 0x10000;
  if (elem % esz) throw InputError(c.at(what), "element span not a multiple of the element size");
  if (elem / esz > 1) a.ap.push_back({1, elem / esz});
  if (a.ap.empty()) a.ap.push_back({1, 1});
}

void decode_rows(const Ctx &c, const uint8_t *b, const Form &f, const std::vector<Row> &rows, Inst &in,
                 std::vector<int> &npart_role, std::vector<int64_t> &npart_val) {
  // Pass 1 sets dtypes and which scalar operands exist; pass 2 the rest (descriptors need the dtypes).
  const size_t w0 = in.waits.size(), u0 = in.updates.size();
  for (int pass = 0; pass < 2; ++pass) {
    for (const Row &r : rows) {
      const bool first = r.kind == K::DT || r.kind == K::DTLO || r.kind == K::DTHI || r.kind == K::IMMSRC;
      if (first != (pass == 0)) continue;
      const std::string what = r.name + " (+" + hex(r.off) + ")";
      const uint8_t byte = b[r.off];
      switch (r.kind) {
      case K::DT: case K::DTLO: case K::DTHI: {
        const int tag = r.kind == K::DT ? byte : r.kind == K::DTLO ? (byte & 0xF) : (byte >> 4);
        auto d = map_back(dtype_map(c.gen), tag);
        if (!d) throw InputError(c.at(what), "dtype tag " + hex(tag) + " names no dtype");
        role_arg_make(in, r.role).dtype = static_cast<Dtype>(*d);
        break;
      }
      case K::IMMSRC:
        if (byte == 1) {
          Arg &a = role_arg_make(in, r.role);
          a.kind = ArgKind::Immediate;
          a.dtype = Dtype::float32;
        } else if (byte != 0) {
          throw InputError(c.at(what), "immediate source " + hex(byte) + " (only 0 = none, 1 = inline)");
        }
        break;
      case K::AP: {
        Arg &a = role_arg_make(in, r.role);
        const Dtype keep = a.dtype;
        dec_ap(c, b, r, a, what);
        a.dtype = keep;
        break;
      }
      case K::D2SIDE: dec_d2(c, b, r, role_arg_make(in, r.role), what); break;
      case K::NPART:
        npart_role.push_back(r.role);
        npart_val.push_back(byte);
        break;
      case K::ALU: {
        auto op = alu_from_wire(byte, c.gen);
        if (!op)
          throw InputError(c.at(what), "ALU byte " + hex(byte) + " maps to no AluOpType on " + core_gen_name(c.gen));
        set_i(in.f, *r.field, static_cast<int64_t>(*op));
        break;
      }
      case K::VMAP: {
        auto v = map_back(r.map, byte);
        if (!v) throw InputError(c.at(what), "byte " + hex(byte) + " is no " + field_key(*r.field) + " value");
        set_i(in.f, *r.field, *v);
        break;
      }
      case K::BOOL:
        if (byte > 1) throw InputError(c.at(what), "boolean byte " + hex(byte));
        set_i(in.f, *r.field, byte);
        break;
      case K::BIT: set_i(in.f, *r.field, (byte >> r.arg) & 1); break;
      case K::UINT: set_d(in.f, *r.field, static_cast<double>(get(b, r.off, r.width))); break;
      case K::INT: set_d(in.f, *r.field, static_cast<double>(sext(get(b, r.off, r.width), r.width))); break;
      case K::F32: set_d(in.f, *r.field, f32_of(static_cast<uint32_t>(get(b, r.off, 4)))); break;
      case K::IMMF32: {
        Arg *a = role_arg(in, r.role);
        if (a && a->kind == ArgKind::Immediate) a->imm = f32_of(static_cast<uint32_t>(get(b, r.off, 4)));
        break;
      }
      case K::PAT: {
        std::vector<ApDim> p;
        for (int i = 0; i < r.arg; ++i) {
          const int64_t num = static_cast<int64_t>(get(b, r.off + 2 * r.arg + 2 * i, 2));
          if (num == 0) break;
          p.push_back({sext(get(b, r.off + 2 * i, 2), 2), num});
        }
        in.f.pattern = p;
        break;
      }
      case K::WMODE: {
        if (byte == 0) break;
        auto m = map_back("wait_mode", byte);
        if (!m) throw InputError(c.at(what), "wait mode byte " + hex(byte) + " is not a semaphore wait");
        const size_t wi = w0 + static_cast<size_t>(r.arg);  // waits of this bundle follow earlier bundles'
        if (in.waits.size() <= wi) in.waits.resize(wi + 1);
        in.waits[wi].mode = static_cast<SemWait::Mode>(*m);
        break;
      }
      case K::WIDX:
        if (w0 + static_cast<size_t>(r.arg) < in.waits.size()) in.waits[w0 + static_cast<size_t>(r.arg)].sem = byte;
        break;
      case K::WVAL:
        if (w0 + static_cast<size_t>(r.arg) < in.waits.size()) {
          SemWait &w = in.waits[w0 + static_cast<size_t>(r.arg)];
          const uint32_t v = static_cast<uint32_t>(get(b, r.off, 4));
          if (w.mode == SemWait::Mode::GeReg) w.reg = "r" + std::to_string(v), w.value = 0;
          else w.value = v;
        }
        break;
      case K::UMODE: {
        if (byte == 0) break;
        auto m = map_back(update_map(c.opt), byte);
        if (!m) throw InputError(c.at(what), "update mode byte " + hex(byte) + " is no supported semaphore update");
        SemUpdate u;
        u.mode = static_cast<SemUpdate::Mode>(*m);
        u.value = 1;
        in.updates.push_back(u);
        break;
      }
      case K::UIDX:
        if (in.updates.size() > u0) in.updates.back().sem = byte;
        break;
      case K::UVAL:
        if (in.updates.size() > u0 && in.updates.back().mode != SemUpdate::Mode::Inc &&
            in.updates.back().mode != SemUpdate::Mode::Dec)
          in.updates.back().value = static_cast<uint32_t>(get(b, r.off, 4));
        break;
      case K::SVAL: {
        const uint32_t v = static_cast<uint32_t>(get(b, r.off, 4));
        if (in.waits.size() > w0) {
          SemWait &w = in.waits.back();
          if (w.mode == SemWait::Mode::GeReg) w.reg = "r" + std::to_string(v), w.value = 0;
          else w.value = v;
        }
        if (in.updates.size() > u0 && in.updates.back().mode != SemUpdate::Mode::Inc &&
            in.updates.back().mode != SemUpdate::Mode::Dec)
          in.updates.back().value = v;
        break;
      }
      case K::SCAL: dec_scal(c, b, r, in, what); break;
      case K::FILL: {
        const Arg *o = role_arg(in, kOut);
        const Dtype dt = o ? o->dtype : Dtype::float32;
        const uint32_t u = static_cast<uint32_t>(get(b, r.off, 4));
        set_d(in.f, *r.field, dtype_is_float(dt) ? f32_of(u) : dtype_is_signed_int(dt) ? double(int32_t(u)) : double(u));
        break;
      }
      case K::ILIST: {
        const int n = b[r.src_off];
        if (n * r.elem_w > r.width) throw InputError(c.at(what), "list count " + std::to_string(n) + " exceeds the field");
        auto &l = ilist_field(in.f, *r.field);
        l.clear();
        for (int i = 0; i < n; ++i) {
          const uint64_t u = get(b, r.off + i * r.elem_w, r.elem_w);
          l.push_back(r.elem_w == 1 ? static_cast<int64_t>(u) : sext(u, r.elem_w));
        }
        break;
      }
      case K::STR: {
        size_t n = 0;
        while (n < static_cast<size_t>(r.width) && b[r.off + static_cast<int>(n)]) ++n;
        str_field(in.f, *r.field).assign(reinterpret_cast<const char *>(b + r.off), n);
        break;
      }
      case K::POOL: {
        const uint64_t idx = get(b, r.off, r.width);
        if (idx == all_ones(r.width)) break;  // the field's default
        const PoolEntry &e = pool_at(c, idx, what);
        if (!field_from_pool(in.f, *r.field, e))
          throw InputError(c.at(what), "pool entry " + std::to_string(idx) + " is " + pool_kind_name(e.kind) +
                                           ", not a value of field " + field_key(*r.field));
        break;
      }
      case K::ARGS: {
        const uint64_t idx = get(b, r.off, r.width);
        const PoolEntry &e = pool_at(c, idx, what);
        if (e.kind != PoolEntry::Kind::Operands)
          throw InputError(c.at(what), "pool entry " + std::to_string(idx) + " is " + pool_kind_name(e.kind) +
                                           ", not an operand list");
        for (const auto *v : {&e.ins, &e.outs})
          for (const Arg &a : *v)
            if (a.tensor < 0 || a.tensor >= static_cast<int>(c.prog.tensors.size()))
              throw InputError(c.at(what), "pool entry " + std::to_string(idx) + " names tensor " +
                                               std::to_string(a.tensor) + ", not a tensor of the stream");
        in.ins = e.ins;
        in.outs = e.outs;
        break;
      }
      case K::BLOCK: {
        const uint64_t v = get(b, r.off, r.width);
        std::string &name = str_field(in.f, *r.field);
        if (v == 0) {
          name.clear();
          break;
        }
        if (v - 1 >= c.prog.blocks.size())
          throw InputError(c.at(what), "block index " + std::to_string(v - 1) + " past the block table (" +
                                           std::to_string(c.prog.blocks.size()) + " blocks)");
        name = c.prog.blocks[static_cast<size_t>(v - 1)].name;
        break;
      }
      case K::REG: {
        Arg &a = role_arg_make(in, r.role);
        a.kind = ArgKind::Register;
        a.reg = "r" + std::to_string(byte);
        break;
      }
      case K::IMMI: {
        Arg &a = role_arg_make(in, r.role);
        a.kind = ArgKind::Immediate;
        const uint64_t u = get(b, r.off, 4);
        const bool sgn = dtype_is_signed_int(a.dtype) || dtype_is_float(a.dtype);
        a.imm = sgn ? static_cast<double>(sext(u, 4)) : static_cast<double>(u);
        break;
      }
      case K::SENUM: {
        const std::string *v = nullptr;
        for (const auto &p : smap(r.map))
          if (p.second == byte) v = &p.first;
        if (!v) throw InputError(c.at(what), "byte " + hex(byte) + " is no " + field_key(*r.field) + " value");
        str_field(in.f, *r.field) = *v;
        break;
      }
      case K::SRANGE: case K::SMASK: {
        const bool range = b[r.arg] == 0x01;
        if (range != (r.kind == K::SRANGE)) break;
        auto &l = ilist_field(in.f, *r.field);
        l.clear();
        if (range) {
          if (b[r.off] > b[r.off + 1])
            throw InputError(c.at(what), "range_first " + std::to_string(b[r.off]) + " > range_last " +
                                             std::to_string(b[r.off + 1]));
          for (int id = b[r.off]; id <= b[r.off + 1]; ++id) l.push_back(id);
        } else {
          for (int id = 0; id < 8 * r.width; ++id)
            if ((b[r.off + id / 8] >> (id % 8)) & 1) l.push_back(id);
        }
        break;
      }
      case K::CONST: case K::DER: break;
      }
    }
  }
  (void)f;
}

// The shared sync band's rows, with the wait index and update index read relative to their own bytes.
const std::vector<Row> &sync_rows() { return tables().sync_rows; }

std::vector<Row> rows_for(const Form &f) {
  std::vector<Row> rows;
  if (f.sync == SyncKind::SHARED) rows = sync_rows();
  rows.insert(rows.end(), f.rows.begin(), f.rows.end());
  return rows;
}

} // namespace

// ============================================================================================= public API
bool bundle_carries(InstructionType type, Field fk) {
  for (const Form &f : tables().forms) {
    if (!f.has(type)) continue;
    for (const Row &r : f.rows)
      if (r.field && *r.field == fk) return true;
    for (const Cond &cd : f.conds)
      if (cd.kind == CK::FIELD && cd.fields[0] == fk) return true;
  }
  return false;
}

namespace {
using nlohmann::json;
json entry_json(const PoolEntry &e) {
  auto args = [](const std::vector<Arg> &v) {
    json a = json::array();
    for (const Arg &x : v) {
      json dims = json::array();
      for (const auto &d : x.ap) dims.push_back({d.step, d.num});
      a.push_back({{"tensor", x.tensor}, {"dtype", enum_name(x.dtype)}, {"start", x.start.c}, {"ap", dims}});
    }
    return a;
  };
  switch (e.kind) {
  case PoolEntry::Kind::Text: return {{"text", e.text}};
  case PoolEntry::Kind::TextList: return {{"texts", e.texts}};
  case PoolEntry::Kind::IntList: return {{"ints", e.ints.empty() ? std::vector<int64_t>{} : e.ints[0]}};
  case PoolEntry::Kind::IntListList: return {{"int_lists", e.ints}};
  case PoolEntry::Kind::Operands: return {{"ins", args(e.ins)}, {"outs", args(e.outs)}};
  }
  return json();
}
} // namespace

size_t BundlePool::add(const PoolEntry &e) {
  const json key = entry_json(e);
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].kind == e.kind && entry_json(entries[i]) == key) return i;
  entries.push_back(e);
  return entries.size() - 1;
}

std::string pool_to_json(const BundlePool &pool) {
  json a = json::array();
  for (const auto &e : pool.entries) a.push_back(entry_json(e));
  return a.dump();
}

BundlePool pool_from_json(const std::string &text, const Program &prog, const ErrorContext &where) {
  BundlePool pool;
  json a;
  try {
    a = json::parse(text);
  } catch (const json::exception &e) {
    throw InputError(where, std::string("pool: invalid JSON: ") + e.what());
  }
  if (!a.is_array()) throw InputError(where, "pool: not a JSON array");
  for (size_t i = 0; i < a.size(); ++i) {
    ErrorContext c = where;
    c.field = "pool[" + std::to_string(i) + "]";
    const json &j = a[i];
    PoolEntry e;
    try {
      if (!j.is_object() || j.size() < 1) throw InputError(c, "not an object with one value");
      if (j.contains("text")) {
        e.kind = PoolEntry::Kind::Text, e.text = j.at("text").get<std::string>();
      } else if (j.contains("texts")) {
        e.kind = PoolEntry::Kind::TextList, e.texts = j.at("texts").get<std::vector<std::string>>();
      } else if (j.contains("ints")) {
        e.kind = PoolEntry::Kind::IntList, e.ints = {j.at("ints").get<std::vector<int64_t>>()};
      } else if (j.contains("int_lists")) {
        e.kind = PoolEntry::Kind::IntListList, e.ints = j.at("int_lists").get<std::vector<std::vector<int64_t>>>();
      } else if (j.contains("ins") && j.contains("outs")) {
        e.kind = PoolEntry::Kind::Operands;
        for (const char *side : {"ins", "outs"})
          for (const json &ja : j.at(side)) {
            Arg x;
            x.kind = ArgKind::AccessPattern;
            x.tensor = ja.at("tensor").get<int>();
            if (x.tensor < 0 || x.tensor >= static_cast<int>(prog.tensors.size()))
              throw InputError(c, std::string(side) + ": tensor " + std::to_string(x.tensor) + " is not a tensor of the stream");
            x.dtype = parse_dtype(ja.at("dtype").get<std::string>(), c);
            x.start = Expr::constant(ja.at("start").get<int64_t>());
            for (const json &d : ja.at("ap")) {
              const auto p = d.get<std::vector<int64_t>>();
              if (p.size() != 2) throw InputError(c, std::string(side) + ": an access-pattern dimension is [step, num]");
              x.ap.push_back({p[0], p[1]});
            }
            (std::string(side) == "ins" ? e.ins : e.outs).push_back(x);
          }
      } else {
        throw InputError(c, "unknown entry (text, texts, ints, int_lists or ins/outs)");
      }
    } catch (const json::exception &ex) {
      throw InputError(c, std::string("malformed entry: ") + ex.what());
    }
    pool.entries.push_back(std::move(e));
  }
  return pool;
}

std::vector<BundleFormInfo> bundle_forms() {
  std::vector<BundleFormInfo> out;
  for (const Form &f : tables().forms) {
    bool extra = std::any_of(f.extra.begin(), f.extra.end(), [](bool e) { return e; });
    out.push_back({f.name, f.l2, f.gens, f.part, f.nparts, f.layout, f.types, extra});
  }
  return out;
}

std::vector<Bundle> encode(const Inst &in, const Program &prog, CoreGen gen, const CodecOptions &opt,
                           BundlePool *pool) {
  ErrorContext ectx{prog.file, in.index, in.name.empty() ? inst_type_name(in.type) : in.name, ""};
  Ctx c{prog, gen, opt, ectx, pool, nullptr};
  auto forms = pick_forms(in, gen, ectx);

  // Every field the instruction sets must be carried by one of its forms (rows or FIELD conditions), so that
  // decode(encode(x)) == x whenever encode succeeds.
  std::set<int> declared;
  std::set<int> roles, ap_roles, npart_roles;
  bool all_operands = false;  // an ARGS row carries every operand (through the pool)
  for (const Form *f : forms) {
    for (const Row &r : f->rows) {
      if (r.kind == K::ARGS) all_operands = true;
      if (r.field) declared.insert(static_cast<int>(*r.field));
      if (r.role >= 0) roles.insert(r.role);
      if (r.kind == K::AP) ap_roles.insert(r.role);
      if (r.kind == K::NPART) npart_roles.insert(r.role);
    }
    for (const Cond &cd : f->conds)
      if (cd.kind == CK::FIELD) declared.insert(static_cast<int>(cd.fields[0]));
  }
  // IndirectSaveAccumulate: an absent `op` means add (bir-json.md 2.2), a present bypass overwrites; the bundle holds
  // the op byte only, and bypass is also the field's table default, so an explicit bypass would decode as absent.
  if (in.type == InstructionType::IndirectSaveAccumulate && in.has(Field::op) && in.f.op == AluOp::bypass)
    throw SemanticError(c.at("op"), "an explicit op 'bypass' (overwrite) cannot be told apart from an absent op "
                                    "(add) in the bundle");
  const InstFields defaults;
  for (int k = 0; k < kNumFields; ++k) {
    const Field fk = static_cast<Field>(k);
    if (declared.count(k) || is_metadata_field(fk)) continue;
    if (!field_same(in.f, defaults, fk))
      throw SemanticError(c.at(field_key(fk)), std::string("not representable in bundle form ") + forms[0]->name +
                                                   " (only the default value can be encoded)");
  }
  for (size_t i = 0; i < in.ins.size() && !all_operands; ++i)
    if (!roles.count(static_cast<int>(i)))
      throw SemanticError(c.at(role_name(static_cast<int>(i))), std::string("operand not carried by form ") + forms[0]->name);
  for (size_t i = 0; i < in.outs.size() && !all_operands; ++i)
    if (!roles.count(kOut + static_cast<int>(i)))
      throw SemanticError(c.at(role_name(kOut + static_cast<int>(i))), std::string("operand not carried by form ") + forms[0]->name);
  for (const Form *f : forms)
    for (const Row &r : f->rows)
      if (r.role >= 0 && r.kind != K::IMMSRC && r.kind != K::IMMF32 && r.kind != K::SCAL && !role_arg(in, r.role))
        throw SemanticError(c.at(role_name(r.role)), std::string("missing operand for ") + r.name);
  // Operands whose partition count has no byte of its own share the form's first one.
  int64_t npart_default = -1;
  for (const Form *f : forms)
    for (const Row &r : f->rows)
      if (r.kind == K::NPART && npart_default < 0) npart_default = role_arg(in, r.role)->partitions();
  for (int role : ap_roles)
    if (!npart_roles.count(role) && role_arg(in, role)->partitions() != npart_default)
      throw SemanticError(c.at(role_name(role)), "partition count differs from the one the bundle carries (" +
                                                     std::to_string(npart_default) + ")");
  // Operands without a dtype byte must use the tensor's dtype.
  std::set<int> dt_roles;
  for (const Form *f : forms)
    for (const Row &r : f->rows)
      if (r.kind == K::DT || r.kind == K::DTLO || r.kind == K::DTHI) dt_roles.insert(r.role);
  for (int role : ap_roles)
    if (!dt_roles.count(role)) {
      const Arg *a = role_arg(in, role);
      if (a->tensor >= 0 && a->tensor < static_cast<int>(prog.tensors.size()) &&
          a->dtype != prog.tensors[static_cast<size_t>(a->tensor)].dtype)
        throw SemanticError(c.at(role_name(role)), "operand dtype differs from its tensor's and no byte carries it");
    }
  // Sync (reference isa/sp-sync-encoding.md): SHARED band = one wait + one update; EventSemaphore = 2 + 1.
  const SyncKind sk = forms[0]->sync;
  const size_t max_w = sk == SyncKind::OWN ? 2 : sk == SyncKind::SHARED ? 1 : 0;
  const size_t max_u = sk == SyncKind::NONE ? 0 : 1;
  if (in.waits.size() > max_w || in.updates.size() > max_u)
    throw SemanticError(c.at("sync"), "at most " + std::to_string(max_w) + " wait(s) and " + std::to_string(max_u) +
                                          " update(s) fit this bundle");

  std::vector<Bundle> out;
  EncodeInfo info{static_cast<int>(npart_default)};
  for (size_t p = 0; p < forms.size(); ++p) {
    const Form &f = *forms[p];
    Bundle b{};
    // spec 003 INV-1: header word (0x10 << 8) | L2, bytes {opcode, 0x10, 0, 0}.
    const uint16_t word = l3_word(f.l2);
    b[0] = static_cast<uint8_t>(word & 0xFF);
    b[1] = static_cast<uint8_t>(word >> 8);
    const std::vector<SemWait> none_w;
    const std::vector<SemUpdate> none_u;
    encode_rows(c, in, f, rows_for(f), b.data(), info, p == 0 ? in.waits : none_w,
                p + 1 == forms.size() ? in.updates : none_u);
    out.push_back(b);
  }
  return out;
}

DecodedBundle decode(const uint8_t *b, CoreGen gen, int engine_id, const Program &prog, DecodeState *state,
                     std::optional<InstructionType> hint, const CodecOptions &opt, const ErrorContext &where,
                     const BundlePool *pool) {
  Ctx c{prog, gen, opt, where, nullptr, pool};
  DecodeState local;
  DecodeState &st = state ? *state : local;
  const uint16_t word = static_cast<uint16_t>(b[0] | (b[1] << 8));
  auto hdr = parse_l3_word(word);
  if (!hdr || b[2] != 0 || b[3] != 0)
    throw InputError(c.at("header (+0x00)"), "header word " + hex(word, 4) + " " + hex(b[2]) + hex(b[3]).substr(2) +
                                                 " is not (0x10 << 8) | L2 followed by 0x0000");
  const uint8_t l2 = hdr->l2;
  std::vector<const Form *> cand;
  for (const Form &f : tables().forms)
    if (f.l2 == l2 && f.on(gen)) cand.push_back(&f);
  if (cand.empty()) {
    auto its = inst_types_for_l2(l2, gen);
    std::string known;
    for (auto t : its) known += std::string(known.empty() ? "" : ", ") + inst_type_name(t);
    throw InputError(c.at("opcode (+0x00)"), "unknown opcode byte " + hex(l2) + " on " + core_gen_name(gen) +
                                                 (known.empty() ? "" : " (" + known + ": no bundle layout yet)"));
  }
  const int want_part = st.pending ? tables().forms[static_cast<size_t>(st.form)].part + 1 : 0;
  std::vector<const Form *> sel;
  for (const Form *f : cand) {
    if (f->part != want_part) continue;
    if (st.pending && !f->has(st.inst.type)) continue;
    if (hint && !f->has(*hint)) continue;
    sel.push_back(f);
  }
  if (sel.empty()) {
    if (st.pending)
      throw InputError(c.at("opcode (+0x00)"), std::string("opcode ") + hex(l2) + " does not continue the pending " +
                                                   inst_type_name(st.inst.type) + " bundles");
    throw InputError(c.at("opcode (+0x00)"), std::string("opcode ") + hex(l2) + " does not start an instruction" +
                                                 (hint ? std::string(" of type ") + inst_type_name(*hint) : ""));
  }
  // [col] separation inside the bundle: a form whose engine condition names another engine, or whose constant
  // bytes (CONST rows, e.g. a "drain follows" flag) differ from the bundle, is not this bundle's form.
  if (sel.size() > 1) {
    std::vector<const Form *> keep;
    for (const Form *f : sel) {
      bool ok = true;
      for (const Cond &cd : f->conds)
        if (cd.kind == CK::ENGINE && cd.value != engine_id) ok = false;
      for (const Row &r : f->rows) {
        if (r.kind == K::CONST && r.width <= 8 && get(b, r.off, r.width) != static_cast<uint64_t>(r.arg)) ok = false;
        if (r.kind == K::VMAP && !map_back(r.map, b[r.off])) ok = false;  // e.g. accum vs accum_d (drain follows)
      }
      if (ok) keep.push_back(f);
    }
    if (!keep.empty()) sel = keep;
  }
  if (sel.size() > 1) {
    std::string names;
    for (const Form *f : sel)
      for (auto t : f->types) names += std::string(names.empty() ? "" : ", ") + inst_type_name(t);
    throw InputError(c.at("opcode (+0x00)"), "opcode " + hex(l2) + " is shared by " + names +
                                                 " ([col]); the bundle alone cannot tell them apart");
  }
  const Form &f = *sel[0];
  Inst fresh;
  Inst &in = st.pending ? st.inst : fresh;
  if (!st.pending) {
    in.type = hint ? *hint : f.types[0];
    in.engine = static_cast<Engine>(engine_id);
  }
  for (const Cond &cd : f.conds)
    if (cd.kind == CK::FIELD) set_i(in.f, cd.fields[0], cd.value);
  std::vector<int> np_role;
  std::vector<int64_t> np_val;
  decode_rows(c, b, f, rows_for(f), in, np_role, np_val);
  // Partition counts: each NPART row sets its operand; operands without one take the first.
  auto fix = [&](int role, int64_t v) {
    Arg *a = role_arg(in, role);
    if (a && a->kind == ArgKind::AccessPattern && !a->ap.empty()) a->ap[0].num = v;
  };
  for (size_t i = 0; i < np_role.size(); ++i) fix(np_role[i], np_val[i]);
  int64_t dflt = -1;
  for (const Row &r : f.rows)
    if (r.kind == K::AP || r.kind == K::SCAL) {
      Arg *a = role_arg(in, r.role);
      if (a && !a->ap.empty() && a->ap[0].num < 0) {
        if (dflt < 0) {
          // first NPART of this instruction (for multi-bundle ops, possibly from an earlier bundle)
          for (size_t i = 0; i < np_val.size() && dflt < 0; ++i) dflt = np_val[i];
          if (dflt < 0) dflt = 1;
        }
        a->ap[0].num = dflt;
      }
    }
  if (!hint && f.types.size() > 1 && f.name == "DMA2D") {
    // Load / Save / DMACopy share 0xD4 ([col]): the direction separates Load (DRAM -> on chip) and Save.
    const Arg *s = role_arg(in, 0), *d = role_arg(in, kOut);
    const bool sd = prog.tensors[static_cast<size_t>(s->tensor)].is_dram();
    const bool dd = prog.tensors[static_cast<size_t>(d->tensor)].is_dram();
    in.type = sd && !dd ? InstructionType::Load : !sd && dd ? InstructionType::Save : InstructionType::DMACopy;
  }
  DecodedBundle out;
  out.form = f.name;
  out.part = f.part;
  out.parts = f.nparts;
  if (f.part + 1 < f.nparts) {
    if (!st.pending) st.inst = in;
    st.pending = true;
    st.form = static_cast<int>(&f - tables().forms.data());
    return out;
  }
  out.complete = true;
  // `given` bits: ops read some keys only when present (TensorScalarAffineSelect's compare_op defaults to
  // is_equal when absent); a decoded field is present when it differs from the InstFields default.
  {
    const InstFields defaults;
    for (int k = 0; k < kNumFields; ++k)
      if (!field_same(in.f, defaults, static_cast<Field>(k))) in.given.set(static_cast<size_t>(k));
  }
  out.inst = in;
  st = DecodeState{};
  return out;
}

std::string disasm_line(const uint8_t *b, CoreGen gen, const CodecOptions &opt) {
  std::ostringstream os;
  const uint16_t word = static_cast<uint16_t>(b[0] | (b[1] << 8));
  os << hex(word, 4);
  // The first form of this opcode whose constant bytes and value maps read the bundle (the decoder's [col]
  // separation: CompareAndBranch vs UnconditionalBranch by comp_op, ...), else the first form of the opcode.
  const Form *form = nullptr, *first = nullptr;
  for (const Form &f : tables().forms) {
    if (f.l2 != b[0] || !f.on(gen)) continue;
    if (!first) first = &f;
    bool ok = true;
    for (const Row &r : f.rows) {
      if (r.kind == K::CONST && r.width <= 8 && get(b, r.off, r.width) != static_cast<uint64_t>(r.arg)) ok = false;
      if (r.kind == K::VMAP && !map_back(r.map, b[r.off])) ok = false;
    }
    if (ok) {
      form = &f;
      break;
    }
  }
  if (!form) form = first;
  if (!form || !parse_l3_word(word)) {
    os << " ?";
    for (int i = 4; i < 64; ++i)
      if (b[i]) os << " +" << hex(i) << "=" << hex(b[i]);
    return os.str();
  }
  os << " " << form->name;
  if (form->types.size() == 1) os << " (" << inst_type_name(form->types[0]) << ")";
  for (const Row &r : rows_for(*form)) {
    const uint64_t v = get(b, r.off, std::min(r.width, 8));
    os << " " << r.name << "=";
    switch (r.kind) {
    case K::DT: case K::DTLO: case K::DTHI: {
      const int tag = r.kind == K::DT ? b[r.off] : r.kind == K::DTLO ? (b[r.off] & 0xF) : (b[r.off] >> 4);
      auto d = map_back(dtype_map(gen), tag);
      os << (d ? enum_name(static_cast<Dtype>(*d)) : hex(tag).c_str());
      break;
    }
    case K::ALU: {
      auto op = alu_from_wire(b[r.off], gen);
      os << (op ? alu_name(*op) : hex(b[r.off]).c_str());
      break;
    }
    case K::AP: {
      const int n = (r.width - 4) / 4;
      os << "[" << hex(get(b, r.off, 4), 8);
      for (int k = 0; k < n; ++k)
        os << " (" << sext(get(b, r.off + 4 + 2 * k, 2), 2) << "," << get(b, r.off + 4 + 2 * n + 2 * k, 2) << ")";
      os << "]";
      break;
    }
    case K::D2SIDE:
      os << "[" << hex(get(b, r.off, 4), 8) << " var " << (get(b, r.off + 4, 2) | (uint64_t(b[r.off + 6]) << 16))
         << " mode " << hex(b[r.off + 7]) << " (" << sext(get(b, r.off + 8, 4), 4) << "," << get(b, r.off + 0x10, 2)
         << ") (" << sext(get(b, r.off + 12, 4), 4) << "," << get(b, r.off + 0x12, 2) << ") span "
         << get(b, r.off + 0x14, 2) << "]";
      break;
    case K::F32: case K::IMMF32: os << f32_of(static_cast<uint32_t>(get(b, r.off, 4))); break;
    case K::SCAL: {
      const int src = r.src_off < 0 ? kScalPtr : b[r.src_off];
      static const char *kinds[] = {"none", "imm", "reg", "ptr"};
      os << ((src & 0xF) < 4 ? kinds[src & 0xF] : "?") << ":" << hex(get(b, r.off, r.width), 2 * r.width);
      break;
    }
    case K::INT: os << sext(v, r.width); break;
    case K::STR: {
      size_t n = 0;
      while (n < static_cast<size_t>(r.width) && b[r.off + static_cast<int>(n)]) ++n;
      os << "'" << std::string(reinterpret_cast<const char *>(b + r.off), n) << "'";
      break;
    }
    case K::POOL: os << (v == all_ones(r.width) ? std::string("default") : "pool[" + std::to_string(v) + "]"); break;
    case K::ARGS: os << "pool[" << v << "]"; break;
    case K::BLOCK: os << (v == 0 ? std::string("next") : "block[" + std::to_string(v - 1) + "]"); break;
    case K::REG: os << "r" << v; break;
    case K::IMMI: os << sext(v, 4); break;
    case K::SENUM: {
      std::string name = hex(b[r.off]);
      for (const auto &p : smap(r.map))
        if (p.second == b[r.off]) name = p.first.empty() ? "none" : p.first;
      os << name;
      break;
    }
    case K::SRANGE: os << (b[r.arg] == 0x01 ? std::to_string(b[r.off]) + ".." + std::to_string(b[r.off + 1]) : "-"); break;
    case K::SMASK: {
      if (b[r.arg] == 0x01) {
        os << "-";
        break;
      }
      std::string ids;
      for (int id = 0; id < 8 * r.width; ++id)
        if ((b[r.off + id / 8] >> (id % 8)) & 1) ids += (ids.empty() ? "" : ",") + std::to_string(id);
      os << "{" << ids << "}";
      break;
    }
    case K::BIT: os << ((b[r.off] >> r.arg) & 1); break;
    case K::VMAP: {
      auto o = map_back(r.map, b[r.off]);
      os << (o ? std::to_string(*o) : hex(b[r.off]));
      break;
    }
    case K::UMODE: {
      auto o = b[r.off] ? map_back(update_map(opt), b[r.off]) : std::nullopt;
      static const char *names[] = {"inc", "dec", "set", "add"};
      os << (o && *o >= 0 && *o < 4 ? names[*o] : hex(b[r.off]).c_str());
      break;
    }
    default: os << (r.width == 1 ? hex(v) : hex(v, 2 * r.width)); break;
    }
  }
  return os.str();
}

bool same_bundle_content(const Inst &a, const Inst &b, std::string *diff) {
  auto fail = [&](const std::string &m) {
    if (diff) *diff = m;
    return false;
  };
  if (a.type != b.type) return fail(std::string("type ") + inst_type_name(a.type) + " vs " + inst_type_name(b.type));
  if (a.engine != b.engine) return fail(std::string("engine ") + enum_name(a.engine) + " vs " + enum_name(b.engine));
  auto args = [&](const std::vector<Arg> &x, const std::vector<Arg> &y, const char *what) -> bool {
    if (x.size() != y.size()) return fail(std::string(what) + " count " + std::to_string(x.size()) + " vs " + std::to_string(y.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const Arg &p = x[i], &q = y[i];
      const std::string w = std::string(what) + "[" + std::to_string(i) + "]";
      if (p.kind != q.kind) return fail(w + " kind");
      if (p.dtype != q.dtype) return fail(w + " dtype " + enum_name(p.dtype) + " vs " + enum_name(q.dtype));
      if (p.kind == ArgKind::AccessPattern) {
        if (p.tensor != q.tensor) return fail(w + " tensor");
        if (!p.start.is_const() || !q.start.is_const() || p.start.c != q.start.c) return fail(w + " start");
        if (!same_dims(p.ap, q.ap)) {
          std::string s = w + " ap";
          for (auto d : p.ap) s += " [" + std::to_string(d.step) + "," + std::to_string(d.num) + "]";
          s += " vs";
          for (auto d : q.ap) s += " [" + std::to_string(d.step) + "," + std::to_string(d.num) + "]";
          return fail(s);
        }
      } else if (p.kind == ArgKind::Immediate) {
        if (p.imm != q.imm) return fail(w + " immediate");
      }
    }
    return true;
  };
  if (!args(a.ins, b.ins, "ins") || !args(a.outs, b.outs, "outs")) return false;
  for (int k = 0; k < kNumFields; ++k) {
    const Field fk = static_cast<Field>(k);
    if (is_metadata_field(fk) && !bundle_carries(a.type, fk)) continue;
    if (fk == Field::sema_group) {  // a set: the bitmask / range keep no order
      auto x = a.f.sema_group, y = b.f.sema_group;
      std::sort(x.begin(), x.end());
      std::sort(y.begin(), y.end());
      if (x != y) return fail("field sema_group");
      continue;
    }
    if (!field_same(a.f, b.f, fk)) return fail(std::string("field ") + field_key(fk));
  }
  if (a.waits.size() != b.waits.size()) return fail("wait count");
  for (size_t i = 0; i < a.waits.size(); ++i)
    if (a.waits[i].sem != b.waits[i].sem || a.waits[i].mode != b.waits[i].mode ||
        a.waits[i].value != b.waits[i].value || a.waits[i].reg != b.waits[i].reg)
      return fail("wait " + std::to_string(i));
  if (a.updates.size() != b.updates.size()) return fail("update count");
  for (size_t i = 0; i < a.updates.size(); ++i)
    if (a.updates[i].sem != b.updates[i].sem || a.updates[i].mode != b.updates[i].mode ||
        a.updates[i].value != b.updates[i].value)
      return fail("update " + std::to_string(i));
  return true;
}

} // namespace neuronsim::isa
