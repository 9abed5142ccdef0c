// An InstFields member reached by its Field (include/neuronsim/isa/tables/inst_fields.def): the bundle rows
// name fields, so the codec reads and writes them generically -- as an integer, a number, a list, a string or
// a stream-pool entry.
#include <stdexcept>
#include <type_traits>

#include "isa/bundle/codec.hpp"

namespace neuronsim::isa::codec {

bool same_dims(const std::vector<ApDim> &a, const std::vector<ApDim> &b) { return a == b; }

namespace {

template <class T> bool field_eq(const T &a, const T &b) {
  return a == b;
}
bool field_eq(const std::vector<ApDim> &a, const std::vector<ApDim> &b) {
  return same_dims(a, b);
}

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

} // namespace

int64_t get_i(const InstFields &f, Field k) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  case Field::member:                                                                                        \
    return to_i64(f.member);
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  default:
    break;
  }
  throw std::logic_error("bad field");
}
void set_i(InstFields &f, Field k, int64_t x) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  case Field::member:                                                                                        \
    from_i64(f.member, x);                                                                                   \
    return;
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  default:
    break;
  }
}
double get_d(const InstFields &f, Field k) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  case Field::member:                                                                                        \
    return to_dbl(f.member);
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  default:
    break;
  }
  throw std::logic_error("bad field");
}
void set_d(InstFields &f, Field k, double x) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  case Field::member:                                                                                        \
    from_dbl(f.member, x);                                                                                   \
    return;
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  default:
    break;
  }
}
bool field_same(const InstFields &a, const InstFields &b, Field k) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  case Field::member:                                                                                        \
    return field_eq(a.member, b.member);
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  default:
    break;
  }
  return true;
}
namespace {
template <class T> std::vector<int64_t> *as_ilist(T &v) {
  if constexpr (std::is_same_v<T, std::vector<int64_t>>)
    return &v;
  else
    return nullptr;
}
} // namespace
std::vector<int64_t> &ilist_field(InstFields &f, Field k) {
  std::vector<int64_t> *p = nullptr;
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  case Field::member:                                                                                        \
    p = as_ilist(f.member);                                                                                  \
    break;
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  default:
    break;
  }
  if (!p)
    throw std::logic_error("bundle_fields.def: not an integer-list field");
  return *p;
}
const std::vector<int64_t> &ilist_field(const InstFields &f, Field k) {
  return ilist_field(const_cast<InstFields &>(f), k);
}
namespace {
template <class T> std::string *as_str(T &v) {
  if constexpr (std::is_same_v<T, std::string>)
    return &v;
  else
    return nullptr;
}
} // namespace
std::string &str_field(InstFields &f, Field k) {
  std::string *p = nullptr;
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  case Field::member:                                                                                        \
    p = as_str(f.member);                                                                                    \
    break;
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  default:
    break;
  }
  if (!p)
    throw std::logic_error("bundle_fields.def: not a string field");
  return *p;
}
const std::string &str_field(const InstFields &f, Field k) {
  return str_field(const_cast<InstFields &>(f), k);
}
namespace {
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
    if (e.kind != PoolEntry::Kind::Text)
      return false;
    v = e.text;
    return true;
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (e.kind != PoolEntry::Kind::TextList)
      return false;
    v = e.texts;
    return true;
  } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    if (e.kind != PoolEntry::Kind::IntList || e.ints.size() != 1)
      return false;
    v = e.ints[0];
    return true;
  } else if constexpr (std::is_same_v<T, std::vector<std::vector<int64_t>>>) {
    if (e.kind != PoolEntry::Kind::IntListList)
      return false;
    v = e.ints;
    return true;
  } else {
    return false;
  }
}
} // namespace
std::optional<PoolEntry> field_to_pool(const InstFields &f, Field k) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  case Field::member:                                                                                        \
    return to_pool(f.member);
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  default:
    break;
  }
  return std::nullopt;
}
bool field_from_pool(InstFields &f, Field k, const PoolEntry &e) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  case Field::member:                                                                                        \
    return from_pool(f.member, e);
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  default:
    break;
  }
  return false;
}
namespace {
const char *field_member_name(Field k) {
  switch (k) {
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  case Field::member:                                                                                        \
    return #member;
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  default:
    break;
  }
  return "?";
}
} // namespace
std::optional<Field> field_by_member(const std::string &s) {
  for (int i = 0; i < kNumFields; ++i)
    if (s == field_member_name(static_cast<Field>(i)))
      return static_cast<Field>(i);
  return std::nullopt;
}
bool is_metadata_field(Field k) {
  return k == Field::queue || k == Field::latency_estimate || k == Field::can_read_uninit ||
         k == Field::sync_type || k == Field::instance_name;
}

} // namespace neuronsim::isa::codec
