// The reader's primitives: the context every InputError carries (file, function, instruction index/name,
// key), typed access to JSON values (a wrong JSON type is an error naming the key, never a conversion),
// access-pattern pairs, and the checked 64-bit arithmetic that sizes, offsets and coefficients combine with.
// Follows reference bir-json.md 1.9-1.10 (pairs, KLR's null and non-finite forms) and reference
// neuronx-cc/bir/json-schema-catalog.md "Required vs optional" (a missing required key is an error).
#include <cmath>
#include <limits>

#include "isa/bir/reader.hpp"

namespace neuronsim::isa::bir {

ErrorContext Reader::ctx(const std::string &field) const {
  ErrorContext c;
  c.file = p_.file;
  c.inst_index = cur_index_;
  c.inst_name = cur_name_;
  c.field = field;
  // Messages about an instruction name its source line too (from its BIR debug information).
  if (cur_index_ >= 0 && cur_index_ < static_cast<long>(p_.insts.size()))
    c.source = source_location(p_.insts[static_cast<size_t>(cur_index_)]);
  else if (cur_index_ == static_cast<long>(p_.insts.size()))
    c.source = cur_source_;
  return c;
}

void Reader::fail(const std::string &field, const std::string &msg) const {
  std::string where = func_.empty() ? "" : "function '" + func_ + "': ";
  // A structural key ignored earlier is often the cause ("allocatons": then no allocation is found).
  throw InputError(ctx(field), where + msg + (structural_note_.empty() ? "" : " (" + structural_note_ + ")"));
}

const json &Reader::need(const json &o, const char *key, const std::string &field) const {
  const json *v = get(o, key);
  if (!v)
    fail(field, std::string("missing required key '") + key + "'");
  return *v;
}

int64_t Reader::as_int(const json &v, const std::string &field) const {
  if (v.is_number_integer())
    return v.get<int64_t>();
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(field, "integer out of range");
    return static_cast<int64_t>(u);
  }
  if (v.is_number_float()) { // tolerate 3.0 for 3; a fraction is an error
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18)
      return static_cast<int64_t>(d);
    fail(field, "expected an integer, got " + v.dump());
  }
  fail(field, "expected an integer, got " + type_name_of(v));
}

// Numbers; non-finite values arrive as the strings "nan", "inf", "-inf" (reference bir-json.md 1.10).
double Reader::as_num(const json &v, const std::string &field) const {
  if (v.is_number())
    return v.get<double>();
  if (v.is_string()) {
    const std::string &s = v.get_ref<const std::string &>();
    if (s == "nan" || s == "NaN" || s == "-nan")
      return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf" || s == "+inf" || s == "Infinity" || s == "infinity")
      return std::numeric_limits<double>::infinity();
    if (s == "-inf" || s == "-Infinity" || s == "-infinity")
      return -std::numeric_limits<double>::infinity();
    fail(field, "expected a number, got the string '" + s + "'");
  }
  fail(field, "expected a number, got " + type_name_of(v));
}

bool Reader::as_bool(const json &v, const std::string &field) const {
  if (v.is_boolean())
    return v.get<bool>();
  fail(field, "expected true/false, got " + type_name_of(v));
}

const std::string &Reader::as_str(const json &v, const std::string &field) const {
  if (v.is_string())
    return v.get_ref<const std::string &>();
  fail(field, "expected a string, got " + type_name_of(v));
}

const json &Reader::as_arr(const json &v, const std::string &field) const {
  if (v.is_array())
    return v;
  fail(field, "expected an array, got " + type_name_of(v));
}

const json &Reader::as_obj(const json &v, const std::string &field) const {
  if (v.is_object())
    return v;
  fail(field, "expected an object, got " + type_name_of(v));
}

std::vector<int64_t> Reader::as_int_list(const json &v, const std::string &field) const {
  std::vector<int64_t> out;
  const json &a = as_arr(v, field);
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(as_int(a[i], field + "[" + std::to_string(i) + "]"));
  return out;
}

// One access-pattern pair: [step, num] as the compiler writes it (reference bir-json.md 1.9), or
// {"step":..,"num":..} as KLR writes Core.APPair (reference bir-json.md 1.10).
ApDim Reader::as_pair(const json &v, const std::string &field) const {
  ApDim d;
  if (v.is_array()) {
    if (v.size() != 2)
      fail(field, "an access-pattern pair must be [step, num], got " + v.dump());
    d.step = as_int(v[0], field + "[0]");
    d.num = as_int(v[1], field + "[1]");
  } else if (v.is_object()) {
    d.step = as_int(need(v, "step", field), field + ".step");
    d.num = as_int(need(v, "num", field), field + ".num");
  } else {
    fail(field, "an access-pattern pair must be [step, num] or {step, num}, got " + type_name_of(v));
  }
  if (d.num < 0)
    fail(field, "negative count " + std::to_string(d.num) + " in access pattern");
  return d;
}

std::vector<ApDim> Reader::as_pattern(const json &v, const std::string &field) const {
  std::vector<ApDim> out;
  const json &a = as_arr(v, field);
  int64_t count = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    out.push_back(as_pair(a[i], field + "[" + std::to_string(i) + "]"));
    if (__builtin_mul_overflow(count, out.back().num, &count))
      fail(field, "the access pattern's element count overflows 64 bits");
  }
  return out;
}

// Sizes, offsets and coefficients combine with checked arithmetic: a document with absurd values gives an
// error naming the field, not signed overflow.
int64_t Reader::mul(int64_t a, int64_t b, const std::string &field) const {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    fail(field, std::to_string(a) + " * " + std::to_string(b) + " overflows 64 bits");
  return r;
}

int64_t Reader::add(int64_t a, int64_t b, const std::string &field) const {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    fail(field, std::to_string(a) + " + " + std::to_string(b) + " overflows 64 bits");
  return r;
}

} // namespace neuronsim::isa::bir
