// The forms of isa/tables/bundle_fields.def as C++ (built once, on first use, and cross-checked: no two rows
// of a form share a byte, every form's opcode byte is listed in instruction_wire.def for its types), the
// value and string maps, and the public views of the table (bundle_forms, bundle_carries).
#include <sstream>
#include <stdexcept>

#include "isa/bundle/codec.hpp"

namespace neuronsim::isa {
namespace codec {
namespace {

int parse_role(const std::string &s) {
  if (s.size() == 3 && s.compare(0, 2, "in") == 0)
    return s[2] - '0';
  if (s.size() == 4 && s.compare(0, 3, "out") == 0)
    return kOut + (s[3] - '0');
  return -1;
}

std::vector<std::string> split_ws(const std::string &s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  for (std::string w; is >> w;)
    out.push_back(w);
  return out;
}

Field must_field(const std::string &form, const std::string &s) {
  auto f = field_by_member(s);
  if (!f)
    throw std::logic_error("bundle_fields.def form " + form + ": unknown field '" + s + "'");
  return *f;
}

// The .def rows as plain data, one array per row kind (the file is included once per kind, every other kind
// expanding to nothing). A table of constants compiles in a moment, where the same rows as ~1300 calls in one
// function took minutes (and longer instrumented under ASan). The order of each array is the file's order.
constexpr unsigned G2 = 1u << 2, G3 = 1u << 3, G4 = 1u << 4;
struct FormDecl {
  const char *name;
  int l2;
  unsigned gens;
  int part, nparts;
  SyncKind sync;
  const char *layout;
};
struct UseDecl {
  const char *form;
  InstructionType type;
  int extra;
};
struct CondDecl {
  const char *form;
  CK kind;
  const char *src;
  int64_t value;
};
struct FieldDecl {
  const char *form, *name;
  int off, width;
  K kind;
  const char *src;
  int arg;
};
struct MapDecl {
  const char *map;
  int64_t from, to;
};
struct StringMapDecl {
  const char *map, *spelling;
  int64_t to;
};

const FormDecl kForms[] = {
#define NS_BFORM(form, l2_, gens_, part_, nparts_, sync_, layout_)                                           \
  {#form, l2_, gens_, part_, nparts_, SyncKind::sync_, layout_},
#include "isa/tables/bundle_fields.def"
};
const UseDecl kUses[] = {
#define NS_BUSE(form, it_, extra_) {#form, InstructionType::it_, extra_},
#include "isa/tables/bundle_fields.def"
};
const CondDecl kConds[] = {
#define NS_BCOND(form, kind_, src_, value_) {#form, CK::kind_, src_, static_cast<int64_t>(value_)},
#include "isa/tables/bundle_fields.def"
};
const FieldDecl kFields[] = {
#define NS_BFIELD(form, name, off, width, kind, src, arg) {#form, name, off, width, K::kind, src, arg},
#include "isa/tables/bundle_fields.def"
};
const MapDecl kMaps[] = {
#define NS_BVMAP(map, from, to) {#map, from, to},
#include "isa/tables/bundle_fields.def"
};
const StringMapDecl kStringMaps[] = {
#define NS_BSMAP(map, spelling, to) {#map, spelling, to},
#include "isa/tables/bundle_fields.def"
};

Tables build_tables() {
  Tables t;
  auto find = [&t](const char *name) -> Form & {
    for (auto &f : t.forms)
      if (f.name == name)
        return f;
    throw std::logic_error(std::string("bundle_fields.def: a row names a form no NS_BFORM declares: ") + name);
  };
  for (const FormDecl &d : kForms) {
    for (const auto &g : t.forms)
      if (g.name == d.name)
        throw std::logic_error(std::string("bundle_fields.def: two forms named ") + d.name);
    Form f;
    f.name = d.name, f.l2 = static_cast<uint8_t>(d.l2), f.gens = d.gens, f.part = d.part, f.nparts = d.nparts;
    f.sync = d.sync, f.layout = d.layout;
    t.forms.push_back(f);
  }
  for (const UseDecl &d : kUses) {
    Form &f = find(d.form);
    f.types.push_back(d.type);
    f.extra.push_back(d.extra != 0);
  }
  for (const CondDecl &d : kConds) {
    Cond cd{d.kind, {}, {}, d.value};
    for (const auto &w : split_ws(d.src)) {
      if (d.kind == CK::SAMEDT || d.kind == CK::ARGK)
        cd.roles.push_back(parse_role(w));
      else
        cd.fields.push_back(must_field(d.form, w));
    }
    find(d.form).conds.push_back(cd);
  }
  for (const FieldDecl &d : kFields) {
    const std::string form = d.form, src = d.src;
    const char *name = d.name;
    const int off = d.off, width = d.width, arg = d.arg;
    const K kind = d.kind;
    Row r;
    r.name = name, r.off = off, r.width = width, r.kind = kind, r.arg = arg;
    if (off < 4 || off + width > 64)
      throw std::logic_error(std::string("bundle_fields.def: row out of bundle: ") + name);
    switch (kind) {
    case K::AP:
    case K::DT:
    case K::DTLO:
    case K::DTHI:
    case K::NPART:
    case K::D2SIDE:
    case K::REG:
    case K::IMMI:
      r.role = parse_role(src);
      if (r.role < 0)
        throw std::logic_error(std::string("bundle_fields.def: bad operand role ") + src);
      break;
    case K::SCAL: {
      // "in1" or "in1|field": the operand role and the field the dword carries when the operand is absent.
      const auto bar = src.find('|');
      r.role = parse_role(src.substr(0, bar));
      if (r.role < 0)
        throw std::logic_error(std::string("bundle_fields.def: bad operand role ") + src);
      if (bar != std::string::npos)
        r.field = must_field(form, src.substr(bar + 1));
      r.src_off = arg;
      if (arg >= 0 && (arg < 4 || arg >= 64))
        throw std::logic_error(std::string("bundle_fields.def: bad SCAL source byte ") + name);
      break;
    }
    case K::FILL:
      r.role = kOut;
      r.field = must_field(form, src);
      break;
    case K::ILIST:
      r.field = must_field(form, src);
      r.src_off = arg & 0xFF; // count byte
      r.elem_w = arg >> 8;
      if (r.elem_w != 1 && r.elem_w != 2 && r.elem_w != 4)
        throw std::logic_error(std::string("bundle_fields.def: bad ILIST element width ") + name);
      break;
    case K::VMAP:
    case K::SENUM: {
      auto c = src.find(':');
      r.field = must_field(form, src.substr(0, c));
      r.map = src.substr(c + 1);
      break;
    }
    case K::ALU:
    case K::BOOL:
    case K::UINT:
    case K::INT:
    case K::F32:
    case K::BIT:
    case K::PAT:
    case K::STR:
    case K::POOL:
    case K::BLOCK:
    case K::SRANGE:
    case K::SMASK:
      r.field = must_field(form, src);
      if ((kind == K::POOL || kind == K::BLOCK) && width != 2 && width != 4 && width != 8)
        throw std::logic_error(std::string("bundle_fields.def: POOL/BLOCK rows are 2, 4 or 8 bytes: ") +
                               name);
      break;
    case K::ARGS:
      if (width != 2 && width != 4)
        throw std::logic_error(std::string("bundle_fields.def: ARGS rows are 2 or 4 bytes: ") + name);
      break;
    default:
      break;
    }
    if (form == "SYNC")
      t.sync_rows.push_back(r);
    else
      find(d.form).rows.push_back(r);
  }
  for (const MapDecl &d : kMaps)
    t.maps[d.map].push_back({d.from, d.to});
  for (const StringMapDecl &d : kStringMaps)
    t.smaps[d.map].push_back({d.spelling, d.to});
  // No two rows of a form may claim one byte, except BIT rows sharing a byte and DTLO / DTHI nibble pairs.
  for (const auto &f : t.forms) {
    std::vector<const Row *> owner(64, nullptr);
    std::vector<Row> rows = t.sync_rows;
    if (f.sync != SyncKind::SHARED)
      rows.clear();
    rows.insert(rows.end(), f.rows.begin(), f.rows.end());
    for (const Row &r : rows) {
      std::vector<int> bytes;
      for (int i = 0; i < r.width; ++i)
        bytes.push_back(r.off + i);
      if (r.kind == K::SCAL && r.src_off >= 0)
        bytes.push_back(r.src_off);
      if (r.kind == K::ILIST)
        bytes.push_back(r.src_off);
      for (int by : bytes) {
        const Row *o = owner[static_cast<size_t>(by)];
        const bool shared =
            o && ((o->kind == K::BIT && r.kind == K::BIT) ||
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
    if (f.types.empty())
      throw std::logic_error("bundle_fields.def: form " + f.name + " has no NS_BUSE");
    for (size_t i = 0; i < f.types.size(); ++i) {
      if (f.extra[i])
        continue;
      const auto &info = inst_type_info(f.types[i]);
      for (CoreGen g : kCoreGens) {
        if (!f.on(g))
          continue;
        const auto &l2 = info.l2_for(g);
        if (std::find(l2.begin(), l2.end(), f.l2) == l2.end())
          throw std::logic_error("bundle_fields.def form " + f.name + ": opcode byte not listed for " +
                                 info.name + " on " + core_gen_name(g) + " in instruction_wire.def");
      }
    }
  }
  return t;
}

} // namespace

const Tables &tables() {
  static const Tables t = build_tables();
  return t;
}

std::vector<Row> rows_for(const Form &f) {
  std::vector<Row> rows;
  if (f.sync == SyncKind::SHARED)
    rows = tables().sync_rows;
  rows.insert(rows.end(), f.rows.begin(), f.rows.end());
  return rows;
}

std::string hex(uint64_t v, int digits) {
  std::ostringstream os;
  os << "0x" << std::hex;
  os.fill('0');
  os.width(digits);
  os << v;
  return os.str();
}

namespace {
const std::vector<std::pair<int64_t, int64_t>> &vmap(const std::string &name) {
  auto it = tables().maps.find(name);
  if (it == tables().maps.end())
    throw std::logic_error("bundle_fields.def: no value map " + name);
  return it->second;
}
} // namespace
std::optional<int64_t> map_fwd(const std::string &name, int64_t from) {
  for (const auto &p : vmap(name))
    if (p.first == from)
      return p.second;
  // Activation functions the reference does not name: neuronsim codes 0xA0 + ordinal (bundle_fields.def).
  if (name == "actfunc" && from >= 0 && from < 0x40)
    return 0xA0 + from;
  return std::nullopt;
}
std::optional<int64_t> map_back(const std::string &name, int64_t to) {
  for (const auto &p : vmap(name))
    if (p.second == to)
      return p.first;
  if (name == "actfunc" && to >= 0xA0 && to < 0xE0 &&
      enum_from_ordinal<ActivationFunctionType>(int(to - 0xA0)))
    return to - 0xA0;
  return std::nullopt;
}
const char *dtype_map(CoreGen g) {
  return g == CoreGen::V4 ? "dtype_v4" : "dtype_v2";
}
const char *update_map(const CodecOptions &o) {
  return o.update_mode == UpdateModeReading::Lut ? "update_mode_lut" : "update_mode_raw";
}

const std::vector<std::pair<std::string, int64_t>> &smap(const std::string &name) {
  auto it = tables().smaps.find(name);
  if (it == tables().smaps.end())
    throw std::logic_error("bundle_fields.def: no string map " + name);
  return it->second;
}

} // namespace codec

using namespace codec;

bool bundle_carries(InstructionType type, Field fk) {
  for (const Form &f : tables().forms) {
    if (!f.has(type))
      continue;
    for (const Row &r : f.rows)
      if (r.field && *r.field == fk)
        return true;
    for (const Cond &cd : f.conds)
      if (cd.kind == CK::FIELD && cd.fields[0] == fk)
        return true;
  }
  return false;
}

std::vector<BundleFormInfo> bundle_forms() {
  std::vector<BundleFormInfo> out;
  for (const Form &f : tables().forms) {
    bool extra = std::any_of(f.extra.begin(), f.extra.end(), [](bool e) { return e; });
    out.push_back({f.name, f.l2, f.gens, f.part, f.nparts, f.layout, f.types, extra});
  }
  return out;
}

} // namespace neuronsim::isa
