// The SP sync and control rows: semaphore waits and updates (the shared sync band of every SHARED form, and
// EventSemaphore's own rows), register and integer-immediate operands (branches), string enums (clear modes,
// collective kinds) and semaphore sets (GroupResetSemaphores). Sources: reference isa/sp-sync-encoding.md,
// isa/instruction-bundle.md (the band: +0x04 wait mode, +0x05 wait idx, +0x06 update mode, +0x07 update idx,
// +0x08 one value dword shared by the wait and the update).
#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>

#include "isa/bundle/codec.hpp"

namespace neuronsim::isa::codec {

uint32_t reg_id(const Ctx &c, const std::string &reg, const std::string &what) {
  size_t i = 0;
  while (i < reg.size() && !std::isdigit(static_cast<unsigned char>(reg[i])))
    ++i;
  if (i == reg.size())
    throw SemanticError(c.at(what), "register '" + reg + "' has no number for the bundle");
  return static_cast<uint32_t>(std::stoul(reg.substr(i)));
}

namespace {
void check_sem(const Ctx &c, int sem, const std::string &what) {
  if (sem < 0 || sem > 255)
    throw SemanticError(c.at(what), "semaphore index " + std::to_string(sem) + " not in 0..255");
}
bool implicit_value(SemUpdate::Mode m) {
  return m == SemUpdate::Mode::Inc || m == SemUpdate::Mode::Dec;
}
} // namespace

// ------------------------------------------------------------------------------------------- WMODE / WIDX /
// WVAL Semaphore wait `arg` (0 or 1) of the bundle: mode byte (value map wait_mode), index, value dword (a
// register wait: the register's number). A bundle carries the instruction's waits on its first bundle.
void enc_wait(const EncodeRow &e) {
  const Row &r = e.r;
  if (static_cast<size_t>(r.arg) >= e.waits.size())
    return;
  const SemWait &w = e.waits[static_cast<size_t>(r.arg)];
  if (r.kind == K::WMODE) {
    if (e.form.name == "EVSEM" && w.mode == SemWait::Mode::EqImm)
      throw SemanticError(e.c.at(e.what), "only two wait modes supported now: SEM_GE_IMM and SEM_GE_REG");
    e.b[r.off] = static_cast<uint8_t>(*map_fwd("wait_mode", static_cast<int64_t>(w.mode)));
  } else if (r.kind == K::WIDX) {
    check_sem(e.c, w.sem, e.what);
    e.b[r.off] = static_cast<uint8_t>(w.sem);
  } else {
    put(e.b, r.off, 4,
        w.mode == SemWait::Mode::GeReg ? reg_id(e.c, w.reg, e.what) : static_cast<uint32_t>(w.value));
  }
}
// Mode byte 0: no wait. The waits of this bundle follow those earlier bundles of the instruction decoded
// (w0).
void dec_wait_mode(const DecodeRow &d) {
  const uint8_t byte = d.b[d.r.off];
  if (byte == 0)
    return;
  auto m = map_back("wait_mode", byte);
  if (!m)
    throw InputError(d.c.at(d.what), "wait mode byte " + hex(byte) + " is not a semaphore wait");
  const size_t wi = d.w0 + static_cast<size_t>(d.r.arg);
  if (d.in.waits.size() <= wi)
    d.in.waits.resize(wi + 1);
  d.in.waits[wi].mode = static_cast<SemWait::Mode>(*m);
}
void dec_wait_idx(const DecodeRow &d) {
  const size_t wi = d.w0 + static_cast<size_t>(d.r.arg);
  if (wi < d.in.waits.size())
    d.in.waits[wi].sem = d.b[d.r.off];
}
void dec_wait_val(const DecodeRow &d) {
  const size_t wi = d.w0 + static_cast<size_t>(d.r.arg);
  if (wi >= d.in.waits.size())
    return;
  SemWait &w = d.in.waits[wi];
  const uint32_t v = static_cast<uint32_t>(get(d.b, d.r.off, 4));
  if (w.mode == SemWait::Mode::GeReg)
    w.reg = "r" + std::to_string(v), w.value = 0;
  else
    w.value = v;
}

// ------------------------------------------------------------------------------------------- UMODE / UIDX /
// UVAL The semaphore update of the bundle (the instruction's last bundle carries it): mode byte (value map
// update_mode_lut or update_mode_raw, CodecOptions), index, value dword (skipped for increment / decrement).
void enc_update(const EncodeRow &e) {
  const Row &r = e.r;
  if (e.updates.empty())
    return;
  const SemUpdate &u = e.updates[0];
  const bool implicit = implicit_value(u.mode);
  if (r.kind == K::UMODE) {
    if (implicit && u.value != 1)
      throw SemanticError(e.c.at(e.what), "an increment/decrement update carries no value (must be 1)");
    e.b[r.off] = static_cast<uint8_t>(*map_fwd(update_map(e.c.opt), static_cast<int64_t>(u.mode)));
  } else if (r.kind == K::UIDX) {
    check_sem(e.c, u.sem, e.what);
    e.b[r.off] = static_cast<uint8_t>(u.sem);
  } else if (!implicit) {
    put(e.b, r.off, 4, static_cast<uint32_t>(u.value));
  }
}
void dec_update_mode(const DecodeRow &d) {
  const uint8_t byte = d.b[d.r.off];
  if (byte == 0)
    return;
  auto m = map_back(update_map(d.c.opt), byte);
  if (!m)
    throw InputError(d.c.at(d.what), "update mode byte " + hex(byte) + " is no supported semaphore update");
  SemUpdate u;
  u.mode = static_cast<SemUpdate::Mode>(*m);
  u.value = 1;
  d.in.updates.push_back(u);
}
void dec_update_idx(const DecodeRow &d) {
  if (d.in.updates.size() > d.u0)
    d.in.updates.back().sem = d.b[d.r.off];
}
void dec_update_val(const DecodeRow &d) {
  if (d.in.updates.size() > d.u0 && !implicit_value(d.in.updates.back().mode))
    d.in.updates.back().value = static_cast<uint32_t>(get(d.b, d.r.off, 4));
}
void dis_update_mode(const DisasmRow &d) {
  const uint8_t byte = d.b[d.r.off];
  auto o = byte ? map_back(update_map(d.opt), byte) : std::nullopt;
  static const char *names[] = {"inc", "dec", "set", "add"};
  d.os << (o && *o >= 0 && *o < 4 ? names[*o] : hex(byte).c_str());
}

// ------------------------------------------------------------------------------------------- SVAL
// The SHARED band's one value dword: the wait's value (or register number) and the update's value must agree.
void enc_sync_value(const EncodeRow &e) {
  std::optional<uint32_t> v;
  if (!e.waits.empty())
    v = e.waits[0].mode == SemWait::Mode::GeReg ? reg_id(e.c, e.waits[0].reg, e.what)
                                                : static_cast<uint32_t>(e.waits[0].value);
  if (!e.updates.empty() && !implicit_value(e.updates[0].mode)) {
    const uint32_t uv = static_cast<uint32_t>(e.updates[0].value);
    if (v && *v != uv)
      throw SemanticError(e.c.at(e.what), "wait and update values differ but share one dword (+0x08)");
    v = uv;
  }
  if (v)
    put(e.b, e.r.off, 4, *v);
}
void dec_sync_value(const DecodeRow &d) {
  const uint32_t v = static_cast<uint32_t>(get(d.b, d.r.off, 4));
  if (d.in.waits.size() > d.w0) {
    SemWait &w = d.in.waits.back();
    if (w.mode == SemWait::Mode::GeReg)
      w.reg = "r" + std::to_string(v), w.value = 0;
    else
      w.value = v;
  }
  if (d.in.updates.size() > d.u0 && !implicit_value(d.in.updates.back().mode))
    d.in.updates.back().value = v;
}

// ------------------------------------------------------------------------------------------- REG / IMMI
// A register operand r<N> as the byte N; an integer immediate as 32 bits, signed unless its dtype is
// unsigned.
void enc_reg(const EncodeRow &e) {
  const Arg *a = e.a;
  const int role = e.r.role;
  if (!a || a->kind != ArgKind::Register)
    throw SemanticError(e.c.at(role_name(role)), "operand must be a register (" + e.what + ")");
  const uint32_t id = reg_id(e.c, a->reg, role_name(role));
  if ("r" + std::to_string(id) != a->reg || id > 255)
    throw SemanticError(e.c.at(role_name(role)),
                        "register '" + a->reg + "' is not named r<N> with N < 256: the bundle keeps only N");
  e.b[e.r.off] = static_cast<uint8_t>(id);
}
void dec_reg(const DecodeRow &d) {
  Arg &a = role_arg_make(d.in, d.r.role);
  a.kind = ArgKind::Register;
  a.reg = "r" + std::to_string(d.b[d.r.off]);
}
void dis_reg(const DisasmRow &d) {
  d.os << "r" << get(d.b, d.r.off, std::min(d.r.width, 8));
}

void enc_immi(const EncodeRow &e) {
  const Arg *a = e.a;
  const int role = e.r.role;
  if (!a || a->kind != ArgKind::Immediate || a->imm_array.size() > 1)
    throw SemanticError(e.c.at(role_name(role)), "operand must be a single immediate (" + e.what + ")");
  const bool sgn = dtype_is_signed_int(a->dtype) || dtype_is_float(a->dtype);
  const double v = a->imm;
  const bool ok = std::floor(v) == v && (sgn ? v >= INT32_MIN && v <= INT32_MAX : v >= 0 && v <= UINT32_MAX);
  if (!ok)
    throw SemanticError(e.c.at(role_name(role)), "immediate " + std::to_string(v) + " is not a " +
                                                     (sgn ? "signed" : "unsigned") + " 32-bit integer");
  put(e.b, e.r.off, 4, static_cast<uint32_t>(static_cast<int64_t>(v)));
}
void dec_immi(const DecodeRow &d) {
  Arg &a = role_arg_make(d.in, d.r.role);
  a.kind = ArgKind::Immediate;
  const uint64_t u = get(d.b, d.r.off, 4);
  const bool sgn = dtype_is_signed_int(a.dtype) || dtype_is_float(a.dtype);
  a.imm = sgn ? static_cast<double>(sext(u, 4)) : static_cast<double>(u);
}
void dis_immi(const DisasmRow &d) {
  d.os << sext(get(d.b, d.r.off, std::min(d.r.width, 8)), 4);
}

// ------------------------------------------------------------------------------------------- SENUM
// A STRING field through the string map `map` (NS_BSMAP rows).
void enc_senum(const EncodeRow &e) {
  const std::string &v = str_field(e.in.f, *e.r.field);
  std::optional<int64_t> w;
  std::string known;
  for (const auto &p : smap(e.r.map)) {
    if (p.first == v)
      w = p.second;
    if (!p.first.empty())
      known += std::string(known.empty() ? "" : ", ") + p.first;
  }
  if (!w)
    throw SemanticError(e.c.at(field_key(*e.r.field)), "'" + v + "' has no wire byte (" + known + ")");
  e.b[e.r.off] = static_cast<uint8_t>(*w);
}
void dec_senum(const DecodeRow &d) {
  const uint8_t byte = d.b[d.r.off];
  const std::string *v = nullptr;
  for (const auto &p : smap(d.r.map))
    if (p.second == byte)
      v = &p.first;
  if (!v)
    throw InputError(d.c.at(d.what), "byte " + hex(byte) + " is no " + field_key(*d.r.field) + " value");
  str_field(d.in.f, *d.r.field) = *v;
}
void dis_senum(const DisasmRow &d) {
  std::string name = hex(d.b[d.r.off]);
  for (const auto &p : smap(d.r.map))
    if (p.second == d.b[d.r.off])
      name = p.first.empty() ? "none" : p.first;
  d.os << name;
}

// ------------------------------------------------------------------------------------------- SRANGE / SMASK
// reference isa/sp-sync-encoding.md 6b: clear mode 0x01 (SemaphoreZero) = range_first / range_last, any other
// mode = a 256-bit bitmask. The mode byte (row arg; an SENUM row earlier in the form) is written first.
namespace {
// Semaphore ids of a group (sema_group): 0..255, no repeats (the bitmask and the range keep a set).
std::vector<int64_t> sema_set(const Ctx &c, const std::vector<int64_t> &l, const std::string &what) {
  std::vector<int64_t> v = l;
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] > 255)
      throw SemanticError(c.at(what), "semaphore id " + std::to_string(v[i]) + " not in 0..255");
    if (i && v[i] == v[i - 1])
      throw SemanticError(c.at(what), "semaphore id " + std::to_string(v[i]) + " listed twice");
  }
  return v;
}
} // namespace
void enc_sema_set(const EncodeRow &e) {
  const Row &r = e.r;
  uint8_t *b = e.b;
  const bool range = b[r.arg] == 0x01;
  if (range != (r.kind == K::SRANGE))
    return;
  const std::string key = field_key(*r.field);
  const auto v = sema_set(e.c, ilist_field(e.in.f, *r.field), key);
  if (range) {
    if (v.empty())
      throw SemanticError(e.c.at(key), "the range form needs at least one semaphore");
    if (v.back() - v.front() + 1 != static_cast<int64_t>(v.size()))
      throw SemanticError(e.c.at(key), "the range form (SemaphoreZero) clears every id in [" +
                                           std::to_string(v.front()) + ", " + std::to_string(v.back()) +
                                           "]: this group is not contiguous (use SemaphoreZeroBitmask)");
    b[r.off] = static_cast<uint8_t>(v.front());
    b[r.off + 1] = static_cast<uint8_t>(v.back());
  } else {
    for (int64_t id : v)
      b[r.off + id / 8] = static_cast<uint8_t>(b[r.off + id / 8] | (1u << (id % 8)));
  }
}
void dec_sema_set(const DecodeRow &d) {
  const Row &r = d.r;
  const uint8_t *b = d.b;
  const bool range = b[r.arg] == 0x01;
  if (range != (r.kind == K::SRANGE))
    return;
  auto &l = ilist_field(d.in.f, *r.field);
  l.clear();
  if (range) {
    if (b[r.off] > b[r.off + 1])
      throw InputError(d.c.at(d.what), "range_first " + std::to_string(b[r.off]) + " > range_last " +
                                           std::to_string(b[r.off + 1]));
    for (int id = b[r.off]; id <= b[r.off + 1]; ++id)
      l.push_back(id);
  } else {
    for (int id = 0; id < 8 * r.width; ++id)
      if ((b[r.off + id / 8] >> (id % 8)) & 1)
        l.push_back(id);
  }
}
void dis_sema_range(const DisasmRow &d) {
  const uint8_t *b = d.b;
  const int off = d.r.off;
  d.os << (b[d.r.arg] == 0x01 ? std::to_string(b[off]) + ".." + std::to_string(b[off + 1]) : "-");
}
void dis_sema_mask(const DisasmRow &d) {
  if (d.b[d.r.arg] == 0x01) {
    d.os << "-";
    return;
  }
  std::string ids;
  for (int id = 0; id < 8 * d.r.width; ++id)
    if ((d.b[d.r.off + id / 8] >> (id % 8)) & 1)
      ids += (ids.empty() ? "" : ",") + std::to_string(id);
  d.os << "{" << ids << "}";
}

} // namespace neuronsim::isa::codec
