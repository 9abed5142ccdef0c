// BIR JSON <-> isa::Program (see include/neuronsim/isa/bir_json.hpp for the decisions this file makes).
//
// The reader never trusts the document: every value's JSON type is checked before it is converted, and every
// problem becomes an InputError carrying the file, the instruction index/name and the key. Nulls count as
// absent (reference bir-json.md 1.10: KLR writes `Option` fields as null). An instruction's keys are checked
// against isa/tables/inst_keys.def: a missing or null required key is an InputError (the compiler's loader reads
// it with json.at() and throws, reference neuronx-cc/bir/json-schema-catalog.md "Required vs optional"); a key
// the table does not list for the type is ignored with one warning per key name (Program::warnings), naming the
// closest known key. The base header's bookkeeping keys (descendants, order, predicates, loopnest, ...) are known.
//
// Depth: loops, blocks and calls nest at most kMaxBlockNesting levels and expressions kMaxExprDepth levels
// (bir_json.hpp); the document itself is parsed with a bounded depth (file_input.hpp). Every size, offset and
// coefficient read is combined with checked 64-bit arithmetic.
#include "neuronsim/isa/bir_json.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <type_traits>

#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/inst_rules.hpp"

namespace neuronsim::isa {

namespace {

using json = nlohmann::json;

// The ONLY column of inst_fields.def names an InstructionType (or ANY); these constants let the generic field
// loop compare it with the instruction's type.
namespace only_sel {
constexpr int ANY = -1;
#define NS_IT(ord, name, family) constexpr int name = ord;
#include "neuronsim/isa/tables/instruction_types.def"
#undef NS_IT
} // namespace only_sel

const char *inst_family(InstructionType t) {
#define NS_IT(ord, name, family) family,
  static const char *families[] = {
#include "neuronsim/isa/tables/instruction_types.def"
  };
#undef NS_IT
  int i = static_cast<int>(t);
  return (i >= 0 && i < kNumInstructionTypes) ? families[i] : "";
}

// Instructions that carry no operands may omit ins/outs; every other opcode moves or computes data and must
// say what (reference bir-json.md 1.7: `ins`/`outs` are part of every instruction KLR and the compiler
// write).
bool needs_operands(InstructionType t) {
  std::string f = inst_family(t);
  return f != "control" && f != "sync" && f != "region";
}

std::string type_name_of(const json &v) {
  return v.type_name();
}

// ------------------------------------------------------------------------------------------------ the reader
class Reader {
public:
  Reader(const json &root, std::string file) : root_(root) { p_.file = std::move(file); }

  Program run() {
    try {
      read_module();
    } catch (const Error &) {
      throw;
    } catch (const std::exception &e) {
      // Defensive: nothing below should throw anything but Error, but a library exception must still carry
      // the context rather than escape as an unexplained failure.
      fail("", std::string("internal error while reading: ") + e.what());
    }
    return std::move(p_);
  }

private:
  const json &root_;
  Program p_;
  std::string func_;    // function being read, for messages
  long cur_index_ = -1; // instruction being read, for messages
  std::string cur_name_;
  std::vector<int> scope_;              // active loop variables, innermost last
  std::vector<std::string> deps_field_; // per instruction: where its dependency list came from
  // Call / NKIKernel callees (reference sim-control-sync-customop.md 2.4, 6.2; json-loader.md: `nki_functions`
  // holds the NKI sub-functions). While a callee is read, its allocation names resolve through `bind_` only.
  struct FnRef {
    const json *fn = nullptr;
    bool nki = false;
  };
  std::vector<std::pair<std::string, FnRef>> fns_;
  std::unordered_map<std::string, int> *bind_ = nullptr;
  std::vector<std::string> call_stack_;                  // functions being expanded (recursion guard)
  std::string name_prefix_;                              // "<call>/" while a callee is read
  std::unordered_map<std::string, std::unordered_map<std::string, int>> fn_locals_;  // per callee: its own tensors
  int block_depth_ = 0;            // read_block nesting (kMaxBlockNesting)
  mutable int expr_depth_ = 0;     // read_expr nesting (kMaxExprDepth)
  std::set<std::string> warned_;   // unknown keys already warned about (one warning per key name)

  // Counts one level of a recursive reader for as long as it is in scope.
  struct Depth {
    int &d;
    explicit Depth(int &x) : d(x) { ++d; }
    ~Depth() { --d; }
    Depth(const Depth &) = delete;
    Depth &operator=(const Depth &) = delete;
  };

  // ---------------------------------------------------------------------------------------- errors
  ErrorContext ctx(const std::string &field) const {
    ErrorContext c;
    c.file = p_.file;
    c.inst_index = cur_index_;
    c.inst_name = cur_name_;
    c.field = field;
    return c;
  }
  [[noreturn]] void fail(const std::string &field, const std::string &msg) const {
    std::string where = func_.empty() ? "" : "function '" + func_ + "': ";
    throw InputError(ctx(field), where + msg);
  }

  // ---------------------------------------------------------------------------------------- typed access
  // A present, non-null member, or nullptr.
  static const json *get(const json &o, const char *key) {
    if (!o.is_object())
      return nullptr;
    auto it = o.find(key);
    if (it == o.end() || it->is_null())
      return nullptr;
    return &*it;
  }
  const json &need(const json &o, const char *key, const std::string &field) const {
    const json *v = get(o, key);
    if (!v)
      fail(field, std::string("missing required key '") + key + "'");
    return *v;
  }
  int64_t as_int(const json &v, const std::string &field) const {
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
  double as_num(const json &v, const std::string &field) const {
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
  bool as_bool(const json &v, const std::string &field) const {
    if (v.is_boolean())
      return v.get<bool>();
    fail(field, "expected true/false, got " + type_name_of(v));
  }
  const std::string &as_str(const json &v, const std::string &field) const {
    if (v.is_string())
      return v.get_ref<const std::string &>();
    fail(field, "expected a string, got " + type_name_of(v));
  }
  const json &as_arr(const json &v, const std::string &field) const {
    if (v.is_array())
      return v;
    fail(field, "expected an array, got " + type_name_of(v));
  }
  const json &as_obj(const json &v, const std::string &field) const {
    if (v.is_object())
      return v;
    fail(field, "expected an object, got " + type_name_of(v));
  }
  std::vector<int64_t> as_int_list(const json &v, const std::string &field) const {
    std::vector<int64_t> out;
    const json &a = as_arr(v, field);
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(as_int(a[i], field + "[" + std::to_string(i) + "]"));
    return out;
  }
  // One access-pattern pair: [step, num] as the compiler writes it (bir-json.md 1.9), or {"step":..,"num":..}
  // as KLR writes Core.APPair (bir-json.md 1.10).
  ApDim as_pair(const json &v, const std::string &field) const {
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
  std::vector<ApDim> as_pattern(const json &v, const std::string &field) const {
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
  int64_t mul(int64_t a, int64_t b, const std::string &field) const {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
      fail(field, std::to_string(a) + " * " + std::to_string(b) + " overflows 64 bits");
    return r;
  }
  int64_t add(int64_t a, int64_t b, const std::string &field) const {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r))
      fail(field, std::to_string(a) + " + " + std::to_string(b) + " overflows 64 bits");
    return r;
  }

  // ---------------------------------------------------------------------------------------- typed fields
  // One overload per C++ type a row of inst_fields.def can have; the generic loop in read_fields picks by
  // type.
  void read_value(const json &v, bool &out, const std::string &f) const { out = as_bool(v, f); }
  void read_value(const json &v, int64_t &out, const std::string &f) const { out = as_int(v, f); }
  void read_value(const json &v, double &out, const std::string &f) const { out = as_num(v, f); }
  void read_value(const json &v, std::string &out, const std::string &f) const { out = as_str(v, f); }
  void read_value(const json &v, std::vector<int64_t> &out, const std::string &f) const {
    out = as_int_list(v, f);
  }
  void read_value(const json &v, std::vector<double> &out, const std::string &f) const {
    out.clear();
    const json &a = as_arr(v, f);
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(as_num(a[i], f + "[" + std::to_string(i) + "]"));
  }
  void read_value(const json &v, std::vector<std::string> &out, const std::string &f) const {
    out.clear();
    const json &a = as_arr(v, f);
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(as_str(a[i], f + "[" + std::to_string(i) + "]"));
  }
  void read_value(const json &v, std::vector<std::vector<int64_t>> &out, const std::string &f) const {
    out.clear();
    const json &a = as_arr(v, f);
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(as_int_list(a[i], f + "[" + std::to_string(i) + "]"));
  }
  void read_value(const json &v, std::vector<ApDim> &out, const std::string &f) const {
    out = as_pattern(v, f);
  }
  void read_value(const json &v, AluOp &out, const std::string &f) const {
    out = parse_alu(as_str(v, f), ctx(f));
  }
  template <typename E, typename = std::enable_if_t<std::is_enum<E>::value>>
  void read_value(const json &v, E &out, const std::string &f) const {
    out = parse_enum<E>(as_str(v, f), ctx(f));
  }

  void read_fields(const json &j, Inst &inst) const {
    const int type = static_cast<int>(inst.type);
    (void)type;
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
  if (only_sel::only < 0 || only_sel::only == type) {                                                        \
    if (const json *v = get(j, key)) {                                                                       \
      read_value(*v, inst.f.member, key);                                                                    \
      inst.given.set(static_cast<int>(Field::member));                                                       \
    }                                                                                                        \
  }
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  }

  // ---------------------------------------------------------------------------------------- expressions
  int resolve_axis(const std::string &name, const std::string &field) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
      if (p_.loop_vars[static_cast<size_t>(*it)] == name)
        return *it;
    fail(field, "unknown loop variable '" + name + "' (no enclosing Loop has this LoopAxis name)");
  }

  static Expr loop_var(int v) {
    Expr e;
    e.kind = Expr::Kind::LoopVar;
    e.var = v;
    return e;
  }

  // One affine term's index: v2 nests an expression under "idx" (normally {kind: AffIVKind, axis}); v1 names
  // the loop axis under "AxisLabel". The coefficient is "coeff" in v2 and "coef" in v1 (wire-versioning.md).
  // The form is recognised by shape, term by term, rather than by the module version.
  void read_term(const json &t, const std::string &field, Expr &aff) const {
    as_obj(t, field);
    Expr idx;
    if (const json *i = get(t, "idx")) {
      idx = read_expr(*i, field + ".idx");
    } else if (const json *a = get(t, "AxisLabel")) {
      idx = loop_var(resolve_axis(as_str(*a, field + ".AxisLabel"), field + ".AxisLabel"));
    } else {
      fail(field, "affine term has neither 'idx' (v2) nor 'AxisLabel' (v1)");
    }
    int64_t coeff = 1;
    if (const json *c = get(t, "coeff"))
      coeff = as_int(*c, field + ".coeff");
    else if (const json *c1 = get(t, "coef"))
      coeff = as_int(*c1, field + ".coef");
    aff.kids.push_back(std::move(idx));
    aff.coeffs.push_back(coeff);
  }

  Expr read_affine_body(const json &e, const std::string &field) const {
    Expr aff;
    aff.kind = Expr::Kind::Affine;
    if (const json *c = get(e, "c"))
      aff.c = as_int(*c, field + ".c");
    if (const json *terms = get(e, "terms")) {
      const json &a = as_arr(*terms, field + ".terms");
      for (size_t i = 0; i < a.size(); ++i)
        read_term(a[i], field + ".terms[" + std::to_string(i) + "]", aff);
    }
    if (aff.kids.empty())
      return Expr::constant(aff.c); // {"terms":[], "c":k} is the constant k
    return aff;
  }

  Expr unary(Expr::Kind kind, Expr operand, int64_t k) const {
    Expr e;
    e.kind = kind;
    e.k = k;
    e.kids.push_back(std::move(operand));
    return e;
  }

  int64_t denominator(const json &e, const char *key, const std::string &field) const {
    int64_t d = as_int(need(e, key, field), field + "." + key);
    if (d == 0)
      fail(field + "." + key, "division by zero in expression");
    return d;
  }

  // A pelican QuasiAffineExpr, v2 {kind: ...} tree or v1 flat affine with optional {op, op_param}
  // (reference neuronx-cc/bir/wire-versioning.md; per-kind keys from the public pelican-wire page).
  Expr read_expr(const json &e, const std::string &field) const {
    Depth depth(expr_depth_);
    if (expr_depth_ > kMaxExprDepth)
      fail(field, "expression nested deeper than " + std::to_string(kMaxExprDepth) + " levels");
    if (e.is_number())
      return Expr::constant(as_int(e, field)); // tolerance: a bare integer
    as_obj(e, field);
    const json *kind = get(e, "kind");
    if (!kind) {
      // v1: flat affine, possibly wrapped by op "Div"/"Mod" with op_param as the denominator.
      Expr base = read_affine_body(e, field);
      const json *op = get(e, "op");
      if (!op)
        return base;
      const std::string &o = as_str(*op, field + ".op");
      if (o == "Div")
        return unary(Expr::Kind::FloorDiv, std::move(base), denominator(e, "op_param", field));
      if (o == "Mod")
        return unary(Expr::Kind::Mod, std::move(base), denominator(e, "op_param", field));
      fail(field + ".op", "unsupported v1 expression op '" + o + "'");
    }
    const std::string &k = as_str(*kind, field + ".kind");
    if (k == "AffExprKind")
      return read_affine_body(e, field);
    if (k == "AffIVKind") {
      const std::string &axis = as_str(need(e, "axis", field), field + ".axis");
      return loop_var(resolve_axis(axis, field + ".axis"));
    }
    if (k == "SumKind") {
      Expr s;
      s.kind = Expr::Kind::Sum;
      const json &a = as_arr(need(e, "terms", field), field + ".terms");
      for (size_t i = 0; i < a.size(); ++i) {
        Expr t = read_expr(a[i], field + ".terms[" + std::to_string(i) + "]");
        if (t.is_const())
          s.c = add(s.c, t.c, field + ".terms"); // constants fold into Sum::c (the writer emits c as a constant term)
        else
          s.kids.push_back(std::move(t));
      }
      if (const json *n = get(e, "n_terms")) {
        if (as_int(*n, field + ".n_terms") != static_cast<int64_t>(a.size()))
          fail(field + ".n_terms", "n_terms does not match the number of terms");
      }
      if (s.kids.empty())
        return Expr::constant(s.c);
      return s;
    }
    if (k == "MultKind") {
      int64_t scale = as_int(need(e, "scale", field), field + ".scale");
      return unary(Expr::Kind::Mult, read_expr(need(e, "var", field), field + ".var"), scale);
    }
    // CCModKind is read as a modulo, as the compiler's reader does (pelican-wire: both tags hit
    // createModuloExpr).
    if (k == "FloorDivKind" || k == "ModuloKind" || k == "CCModKind") {
      Expr numer = read_expr(need(e, "numer", field), field + ".numer");
      return unary(k == "FloorDivKind" ? Expr::Kind::FloorDiv : Expr::Kind::Mod, std::move(numer),
                   denominator(e, "denom", field));
    }
    if (k == "IntRuntimeValueKind") {
      Expr r;
      r.kind = Expr::Kind::Register;
      r.regref = as_str(need(e, "regref", field), field + ".regref");
      return r;
    }
    // ShardIDKind, CCDivKind, CCGetRankKind, IndirectArgId: collective/indirect values the simulator has no
    // model for yet.
    fail(field + ".kind", "unsupported expression kind '" + k + "'");
  }

  // ---------------------------------------------------------------------------------------- arguments
  int tensor_ref(const json &a, const std::string &field) const {
    // memref names the memory location, memsetref the allocation (bir-json.md 1.8); either identifies the
    // tensor.
    for (const char *key : {"memref", "memsetref"}) {
      if (const json *v = get(a, key)) {
        const std::string &name = as_str(*v, field + "." + key);
        int t = -1;
        if (bind_) {
          auto it = bind_->find(name);
          t = it == bind_->end() ? -1 : it->second;
        } else {
          t = p_.find_tensor(name);
        }
        if (t < 0)
          fail(field + "." + key, "no allocation named '" + name + "'");
        return t;
      }
    }
    fail(field, "missing required key 'memsetref' (or 'memref')");
  }

  Dtype arg_dtype(const json &a, const std::string &field, Dtype dflt) const {
    if (const json *d = get(a, "dtype"))
      return parse_dtype(as_str(*d, field + ".dtype"), ctx(field + ".dtype"));
    return dflt;
  }

  std::vector<int64_t> row_major_strides(const std::vector<int64_t> &shape, const std::string &field) const {
    std::vector<int64_t> s(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;)
      s[i - 1] = mul(s[i], shape[i], field);
    return s;
  }

  // addrs[d] * stride, folded into `constant` when it is a constant, otherwise appended as a term.
  void add_scaled(Expr e, int64_t stride, int64_t &constant, std::vector<Expr> &terms, const std::string &f) const {
    if (stride == 0)
      return;
    if (e.is_const()) {
      constant = add(constant, mul(e.c, stride, f), f);
      return;
    }
    if (stride == 1) {
      terms.push_back(std::move(e));
      return;
    }
    if (e.kind == Expr::Kind::Affine) {
      for (auto &c : e.coeffs)
        c = mul(c, stride, f);
      e.c = mul(e.c, stride, f);
      terms.push_back(std::move(e));
      return;
    }
    if (e.kind == Expr::Kind::LoopVar) {
      Expr aff;
      aff.kind = Expr::Kind::Affine;
      aff.kids.push_back(std::move(e));
      aff.coeffs.push_back(stride);
      terms.push_back(std::move(aff));
      return;
    }
    Expr m;
    m.kind = Expr::Kind::Mult;
    m.k = stride;
    m.kids.push_back(std::move(e));
    terms.push_back(std::move(m));
  }

  // The start element offset of a symbolic_ap: sum over dims of addrs[d] * row-major stride[d]. The result is
  // kept as simple as possible so that it is exactly the `start` the writer put into it: a single term with
  // no constant is returned as is, affine terms are merged into one Affine, anything else becomes a Sum.
  Expr symbolic_start(const json &a, const Tensor &t, const std::string &field) const {
    const json *addrs_j = get(a, "addrs");
    if (!addrs_j)
      return Expr::constant(0);
    const json &addrs = as_arr(*addrs_j, field + ".addrs");
    if (addrs.empty())
      return Expr::constant(0);
    std::vector<int64_t> shape = t.shape;
    if (shape.size() != addrs.size()) {
      // The tensor's logical shape normally has one entry per addr (the real compiler dump does); when it
      // does not, fall back to the access_shape.
      std::vector<int64_t> access;
      if (const json *as = get(a, "access_shape"))
        access = as_int_list(*as, field + ".access_shape");
      if (access.size() != addrs.size())
        fail(field + ".addrs", std::to_string(addrs.size()) + " addrs but the tensor shape has " +
                                   std::to_string(shape.size()) + " dims and access_shape " +
                                   std::to_string(access.size()));
      shape = access;
    }
    std::vector<int64_t> strides = row_major_strides(shape, field + ".addrs");
    int64_t constant = 0;
    std::vector<Expr> terms;
    for (size_t d = 0; d < addrs.size(); ++d) {
      const std::string f = field + ".addrs[" + std::to_string(d) + "]";
      add_scaled(read_expr(addrs[d], f), strides[d], constant, terms, f);
    }
    if (terms.empty())
      return Expr::constant(constant);
    if (terms.size() == 1 && constant == 0)
      return std::move(terms[0]);
    bool all_affine = true;
    for (const auto &e : terms)
      all_affine = all_affine && e.kind == Expr::Kind::Affine;
    if (all_affine) {
      Expr aff = std::move(terms[0]);
      for (size_t i = 1; i < terms.size(); ++i) {
        aff.c = add(aff.c, terms[i].c, field + ".addrs");
        for (size_t k = 0; k < terms[i].kids.size(); ++k) {
          aff.kids.push_back(std::move(terms[i].kids[k]));
          aff.coeffs.push_back(terms[i].coeffs[k]);
        }
      }
      aff.c = add(aff.c, constant, field + ".addrs");
      return aff;
    }
    Expr s;
    s.kind = Expr::Kind::Sum;
    s.c = constant;
    s.kids = std::move(terms);
    return s;
  }

  Arg read_arg(const json &a, const std::string &field) const {
    as_obj(a, field);
    Arg arg;
    const std::string &kind = as_str(need(a, "kind", field), field + ".kind");
    arg.json_kind = kind;
    if (kind == "physical_ap") {
      arg.kind = ArgKind::AccessPattern;
      arg.tensor = tensor_ref(a, field);
      arg.dtype = arg_dtype(a, field, p_.tensors[static_cast<size_t>(arg.tensor)].dtype);
      arg.ap = as_pattern(need(a, "ap", field), field + ".ap");
      int64_t offset = 0;
      if (const json *o = get(a, "offset"))
        offset = as_int(*o, field + ".offset");
      arg.start = Expr::constant(offset);
    } else if (kind == "symbolic_ap" ||
               kind == "symbolic_pwap") { // one class, two spellings (value-model.md)
      arg.kind = ArgKind::AccessPattern;
      arg.tensor = tensor_ref(a, field);
      const Tensor &t = p_.tensors[static_cast<size_t>(arg.tensor)];
      arg.dtype = arg_dtype(a, field, t.dtype);
      arg.ap = as_pattern(need(a, "ap", field), field + ".ap");
      arg.start = symbolic_start(a, t, field);
    } else if (kind == "register_ap") {
      // A dynamic AP: the start comes from a register at run time (value-model.md, RegisterAccessPattern).
      arg.kind = ArgKind::Register;
      arg.tensor = tensor_ref(a, field);
      arg.dtype = arg_dtype(a, field, p_.tensors[static_cast<size_t>(arg.tensor)].dtype);
      arg.ap = as_pattern(need(a, "ap", field), field + ".ap");
      arg.reg = as_str(need(a, "regref", field), field + ".regref");
      if (const json *off = get(a, "reg_ap_offset")) {
        arg.start.kind = Expr::Kind::Register;
        arg.start.regref = as_str(*off, field + ".reg_ap_offset");
      } else if (const json *c = get(a, "const_ap_offset")) {
        arg.start = Expr::constant(as_int(*c, field + ".const_ap_offset"));
      }
    } else if (kind == "register_access") {
      arg.kind = ArgKind::Register;
      arg.dtype = arg_dtype(a, field, Dtype::int32);
      arg.reg = as_str(need(a, "regref", field), field + ".regref");
    } else if (kind == "imm_value") {
      arg.kind = ArgKind::Immediate;
      arg.dtype = arg_dtype(a, field, Dtype::float32);
      arg.imm = as_num(need(a, "value", field), field + ".value");
    } else if (kind == "imm_array") {
      arg.kind = ArgKind::ImmArray;
      arg.dtype = arg_dtype(a, field, Dtype::float32);
      const json &va = as_arr(need(a, "value_array", field), field + ".value_array");
      for (size_t i = 0; i < va.size(); ++i)
        arg.imm_array.push_back(as_num(va[i], field + ".value_array[" + std::to_string(i) + "]"));
    } else if (kind == "symbolic_imm_value") {
      // value_list entries are {"value": x} in the compiler dump and bare numbers in KLR (bir-json.md 1.8).
      arg.kind = ArgKind::Immediate;
      arg.dtype = arg_dtype(a, field, Dtype::float32);
      const json &vl = as_arr(need(a, "value_list", field), field + ".value_list");
      if (vl.empty())
        fail(field + ".value_list", "empty value_list");
      std::vector<double> values;
      for (size_t i = 0; i < vl.size(); ++i) {
        std::string f = field + ".value_list[" + std::to_string(i) + "]";
        if (vl[i].is_object())
          values.push_back(as_num(need(vl[i], "value", f), f + ".value"));
        else
          values.push_back(as_num(vl[i], f));
      }
      if (const json *ex = get(a, "expr"))
        arg.start = read_expr(*ex, field + ".expr");
      // The expr selects the value; a constant selector is resolved here, a loop-dependent one is kept in
      // `start` with the list in imm_array (Arg::immediate picks per iteration).
      size_t pick = 0;
      if (arg.start.is_const()) {
        if (values.size() > 1) {
          if (arg.start.c < 0 || arg.start.c >= static_cast<int64_t>(values.size()))
            fail(field + ".expr", "selects value " + std::to_string(arg.start.c) + " of a " +
                                      std::to_string(values.size()) + "-entry value_list");
          pick = static_cast<size_t>(arg.start.c);
        }
      }
      arg.imm = values[pick];
      if (values.size() > 1)
        arg.imm_array = values;
    } else {
      fail(field + ".kind", "unknown argument kind '" + kind + "'");
    }
    return arg;
  }

  std::vector<Arg> read_args(const json &j, const char *key, bool required) const {
    std::vector<Arg> out;
    const json *v = get(j, key);
    if (!v) {
      if (required)
        fail(key, std::string("missing required key '") + key + "'");
      return out;
    }
    const json &a = as_arr(*v, key);
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(read_arg(a[i], std::string(key) + "[" + std::to_string(i) + "]"));
    return out;
  }

  // A block's name (branch targets name blocks), "" when it has none.
  static std::string block_name(const json &b) {
    const json *bn = b.is_object() ? get(b, "name") : nullptr;
    return bn && bn->is_string() ? bn->get<std::string>() : "";
  }

  // ---------------------------------------------------------------------------------------- keys and engines
  // Keys the table does not list for the type: one warning per key name, naming the closest known key.
  void warn_unknown_keys(const json &j, InstructionType type) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string &k = it.key();
      if (is_known_key(type, k) || !warned_.insert(k).second) continue;
      const std::string near = closest_key(type, k);
      p_.warnings.push_back(Error::format(ctx(k), std::string("unknown key for ") + inst_type_name(type) +
                                                      ", ignored" + (near.empty() ? "" : " (did you mean '" + near + "'?)")));
    }
  }

  // Required keys (inst_keys.def, after reference neuronx-cc/bir/json-schema-catalog.md "Required vs optional"):
  // the compiler's loader reads them with json.at(), so a missing or null one is an error here too, never a
  // default. A present key that is one edit away is named as the likely misspelling.
  void check_required_keys(const json &j, InstructionType type) const {
    for (const auto &key : inst_keys(type).required) {
      if (get(j, key.c_str())) continue;
      std::string hint;
      for (auto it = j.begin(); it != j.end(); ++it)
        if (!is_known_key(type, it.key()) && closest_key(type, it.key()) == key) hint = it.key();
      const bool null = j.contains(key);
      fail(key, std::string(null ? "required key '" + key + "' is null" : "missing required key '" + key + "'") +
                    " (" + inst_type_name(type) + " requires: " + join(inst_keys(type).required) + ")" +
                    (hint.empty() ? "" : "; the instruction has '" + hint + "': misspelt?"));
    }
  }
  static std::string join(const std::vector<std::string> &v) {
    std::string s;
    for (const auto &x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  // An engine the type's table row does not list (instruction_wire.def + engines_allowed.def).
  void check_engine(InstructionType type, Engine e) const {
    if (!engine_allowed(type, e))
      fail("engine", std::string(inst_type_name(type)) + " cannot run on " + enum_name(e) + " (it runs on " +
                         allowed_engines_text(type) + ")");
  }

  // ---------------------------------------------------------------------------------------- instructions
  void read_instruction(const json &j, std::vector<Node> &out) {
    if (static_cast<int64_t>(p_.insts.size()) >= kMaxStaticInstructions)
      fail("", "more than " + std::to_string(kMaxStaticInstructions) +
                   " instructions (calls expand their callee in place): refusing to read further");
    Inst inst;
    inst.index = static_cast<int>(p_.insts.size());
    cur_index_ = inst.index;
    cur_name_.clear();
    if (const json *n = get(j, "name"))
      cur_name_ = as_str(*n, "name");
    inst.name = name_prefix_ + cur_name_;
    const std::string &opcode = as_str(need(j, "opcode", "opcode"), "opcode");
    auto type = inst_type_from_name(opcode);
    if (!type)
      fail("opcode", "unknown opcode '" + opcode + "'");
    inst.type = *type;
    if (const json *e = get(j, "engine"))
      inst.engine = parse_enum<Engine>(as_str(*e, "engine"), ctx("engine"));
    check_engine(inst.type, inst.engine);
    bool need_ops = needs_operands(inst.type);
    inst.ins = read_args(j, "ins", need_ops);
    inst.outs = read_args(j, "outs", need_ops);
    read_fields(j, inst);
    check_required_keys(j, inst.type);
    warn_unknown_keys(j, inst.type);
    // dependencies: a bare name (a Flow edge) or [name, kind] (json-loader.md, pass 2); {id|name, kind}
    // objects as the writer page describes them are accepted too. Only the names are kept.
    if (const json *d = get(j, "dependencies")) {
      const json &a = as_arr(*d, "dependencies");
      for (size_t i = 0; i < a.size(); ++i) {
        std::string f = "dependencies[" + std::to_string(i) + "]";
        const json &e = a[i];
        if (e.is_string())
          inst.dependencies.push_back(name_prefix_ + e.get<std::string>());
        else if (e.is_array() && !e.empty())
          inst.dependencies.push_back(name_prefix_ + as_str(e[0], f + "[0]"));
        else if (e.is_object() && get(e, "name"))
          inst.dependencies.push_back(name_prefix_ + as_str(*get(e, "name"), f + ".name"));
        else if (e.is_object() && get(e, "id"))
          inst.dependencies.push_back(name_prefix_ + as_str(*get(e, "id"), f + ".id"));
        else
          fail(f, "a dependency must be a name or [name, kind], got " + e.dump());
      }
    }
    if (const json *dbg = get(j, "debug")) {
      if (const json *ln = get(*dbg, "lineno"))
        inst.source_line = static_cast<int>(as_int(*ln, "debug.lineno"));
    }
    Node node;
    node.kind = Node::Kind::Inst;
    node.inst = inst.index;
    const bool call = (inst.type == InstructionType::Call && !inst.f.target.empty()) ||
                      inst.type == InstructionType::NKIKernel;
    p_.insts.push_back(std::move(inst));
    if (call) {
      node.kind = Node::Kind::Call;
      expand_call(node);
    }
    out.push_back(std::move(node));
    cur_index_ = -1;
    cur_name_.clear();
  }

  // Call (target = a function of `functions`) and NKIKernel (func = a function of `nki_functions.functions`, or
  // of `functions`) run the callee in place: birsim recurses its visitor over the callee's blocks
  // (sim-control-sync-customop.md 2.4) and expands NKIKernel into a synthetic Call + Return (6.2). The reference
  // does not give the JSON form of the argument map (FunctionArgumentMap); this reader binds by position, as a
  // call passes arguments: the callee's input allocations (kind ExternalInput / ExternalInputParameter / Input /
  // Const), in allocation order, are the tensors of the call's `ins`, its output allocations the tensors of its
  // `outs`. Each actual must be an access pattern over a whole tensor of the same dtype and element count. The
  // callee's other allocations become tensors "<function>/<name>" shared by its call sites.
  void expand_call(Node &node) {
    const Inst &call = p_.insts[static_cast<size_t>(node.inst)];
    const bool nki = call.type == InstructionType::NKIKernel;
    const char *key = nki ? "func" : "target";
    const std::string &callee = nki ? call.f.nki_func : call.f.target;
    // birsim: "I.getFunc() != nullptr" (NeuronAssertion 250).
    if (callee.empty()) fail(key, "an NKIKernel needs its sub-function: missing 'func'");
    const FnRef *ref = nullptr;
    for (int pass = 0; pass < 2 && !ref; ++pass)  // NKIKernel looks in nki_functions first
      for (const auto &f : fns_)
        if (f.first == callee && (pass == 1 || f.second.nki == nki)) {
          ref = &f.second;
          break;
        }
    if (!ref) fail(key, "no function named '" + callee + "' in the module");
    // Each call expands its callee in place: a call graph that doubles at every level would take exponential
    // time and memory to read, so its size is counted first.
    if (static_cast<int64_t>(p_.insts.size()) + expanded_size(callee, 0) > kMaxStaticInstructions)
      fail(key, "calling '" + callee + "' expands to more than " + std::to_string(kMaxStaticInstructions) +
                    " instructions (calls expand their callee in place)");
    for (const auto &c : call_stack_)
      if (c == callee) fail(key, "function '" + callee + "' calls itself (recursion is not supported)");
    const json &fn = *ref->fn;
    const std::string ffield = std::string(ref->nki ? "nki_functions.functions" : "functions") + " '" + callee + "'";

    // The callee's allocations: parameters bind to the call's operands, the rest are its own tensors.
    std::unordered_map<std::string, int> bind;
    const bool first = fn_locals_.find(callee) == fn_locals_.end();
    auto &locals = fn_locals_[callee];
    size_t n_in = 0, n_out = 0;
    const json *al = get(fn, "allocations");
    const json empty = json::array();
    const json &allocs = al ? as_arr(*al, ffield + ".allocations") : empty;
    Program scratch;  // read each allocation with the usual rules, then place it
    std::swap(scratch.tensors, p_.tensors);
    std::vector<Tensor> callee_tensors;
    std::string saved_func = func_;
    func_ = callee;
    try {
      for (size_t i = 0; i < allocs.size(); ++i) {
        const json &a = allocs[i];
        if (a.is_object() && get(a, "Skind") && get(a, "Skind")->is_string() &&
            get(a, "Skind")->get<std::string>() == "register")
          continue;
        read_allocation(a, ffield + ".allocations[" + std::to_string(i) + "]");
      }
    } catch (...) {
      std::swap(scratch.tensors, p_.tensors);
      func_ = saved_func;
      throw;
    }
    std::swap(scratch.tensors, p_.tensors);
    func_ = saved_func;
    for (auto &t : scratch.tensors) {
      const bool in = t.is_input(), outp = t.is_output();
      if (in || outp) {
        const std::vector<Arg> &actuals = in ? call.ins : call.outs;
        size_t &k = in ? n_in : n_out;
        const std::string af = std::string(in ? "ins[" : "outs[") + std::to_string(k) + "]";
        if (k >= actuals.size())
          fail(in ? "ins" : "outs", "function '" + callee + "' takes more " + (in ? "inputs" : "outputs") +
                                        " than the call passes (parameter '" + t.name + "' is unbound)");
        const Arg &a = actuals[k++];
        if (a.kind != ArgKind::AccessPattern || a.tensor < 0)
          fail(af, "a call argument must be a tensor access pattern");
        const Tensor &actual = p_.tensors[static_cast<size_t>(a.tensor)];
        if (!a.start.is_const() || a.start.c != 0 || a.num_elements() != actual.num_elements())
          fail(af, "a call argument must cover its whole tensor '" + actual.name + "'");
        if (actual.dtype != t.dtype || actual.num_elements() != t.num_elements())
          fail(af, "parameter '" + t.name + "' of '" + callee + "' is " + std::string(enum_name(t.dtype)) + " x " +
                       std::to_string(t.num_elements()) + ", the call passes '" + actual.name + "' (" +
                       enum_name(actual.dtype) + " x " + std::to_string(actual.num_elements()) + ")");
        bind[t.name] = a.tensor;
        bind[t.set_name] = a.tensor;
        continue;
      }
      if (first) {
        t.owner = callee;
        const std::string name = t.name, set = t.set_name;
        t.name = callee + "/" + name;
        t.set_name = callee + "/" + set;
        locals[name] = locals[set] = static_cast<int>(p_.tensors.size());
        p_.tensors.push_back(std::move(t));
      }
    }
    if (n_in != call.ins.size() || n_out != call.outs.size())
      fail(n_in != call.ins.size() ? "ins" : "outs",
           "the call passes " + std::to_string(call.ins.size()) + " inputs and " + std::to_string(call.outs.size()) +
               " outputs; function '" + callee + "' takes " + std::to_string(n_in) + " and " + std::to_string(n_out));
    for (const auto &l : locals) bind.emplace(l.first, l.second);
    if (first)
      p_.callees.push_back(Program::Callee{callee, ref->nki, fn.dump()});

    // Its blocks, read with the callee's names.
    auto *saved_bind = bind_;
    const std::string saved_prefix = name_prefix_;
    const long saved_index = cur_index_;
    const std::string saved_name = cur_name_;
    bind_ = &bind;
    name_prefix_ = call.name + "/";
    func_ = callee;
    call_stack_.push_back(callee);
    const json &blocks = as_arr(need(fn, "blocks", ffield + ".blocks"), ffield + ".blocks");
    for (size_t b = 0; b < blocks.size(); ++b) {
      node.blocks.emplace_back(block_name(blocks[b]), node.body.size());
      read_block(blocks[b], ffield + ".blocks[" + std::to_string(b) + "]", node.body);
    }
    call_stack_.pop_back();
    bind_ = saved_bind;
    name_prefix_ = saved_prefix;
    func_ = saved_func;
    cur_index_ = saved_index;
    cur_name_ = saved_name;
  }

  // The instructions a function expands to (its own plus, per call, its callee's expansion), saturating just past
  // kMaxStaticInstructions; memoized per function. Deeper than kMaxBlockNesting counts nothing more (reading it
  // fails on the nesting limit).
  int64_t expanded_size(const std::string &fname, int depth) {
    if (auto it = sizes_.find(fname); it != sizes_.end()) return it->second;
    if (depth > kMaxBlockNesting) return 0;
    const json *fn = nullptr;
    for (const auto &f : fns_)
      if (f.first == fname) fn = f.second.fn;
    if (!fn) return 0;
    sizes_[fname] = 0;  // while it is counted: a call cycle counts nothing more (reading it is refused anyway)
    int64_t n = 0;
    const std::function<void(const json &)> count = [&](const json &blocks) {
      if (!blocks.is_array()) return;
      for (const auto &b : blocks) {
        const json *list = get(b, "instructions");
        if (!list || !list->is_array()) continue;
        for (const auto &i : *list) {
          if (n > kMaxStaticInstructions) return;
          if (!i.is_object()) continue;
          if (get(i, "instructions")) {
            count(json::array({i}));
            continue;
          }
          if (const json *sub = get(i, "blocks")) count(*sub);
          ++n;
          const json *op = get(i, "opcode");
          const char *key = op && op->is_string() && *op == "NKIKernel" ? "func" : "target";
          if (op && op->is_string() && (*op == "Call" || *op == "NKIKernel"))
            if (const json *t = get(i, key); t && t->is_string())
              n += expanded_size(t->get<std::string>(), depth + 1);
        }
      }
    };
    if (const json *blocks = get(*fn, "blocks")) count(*blocks);
    return sizes_[fname] = std::min(n, kMaxStaticInstructions + 1);
  }
  std::unordered_map<std::string, int64_t> sizes_;

  // DMABlock {name, queue, blocks | instructions}: a software-DGE descriptor list (reference
  // sim-bn-rng-collective-dma.md: "DMATrigger -> DMABlock -> descriptors"; json-schema-catalog.md InstDMABlock).
  // The reference does not give the key of its body; this reader takes `blocks` (as a Loop's) or `instructions`.
  void read_dma_block(const json &j, std::vector<Node> &out) {
    Inst inst;
    inst.index = static_cast<int>(p_.insts.size());
    inst.type = InstructionType::DMABlock;
    cur_index_ = inst.index;
    cur_name_ = get(j, "name") ? as_str(*get(j, "name"), "name") : "";
    if (cur_name_.empty()) fail("name", "a DMABlock needs a name (DMATrigger.dma_blocks names it)");
    inst.name = name_prefix_ + cur_name_;
    inst.engine = Engine::DMA;
    read_fields(j, inst);
    warn_unknown_keys(j, InstructionType::DMABlock);
    Node node;
    node.kind = Node::Kind::DMABlock;
    node.inst = inst.index;
    node.name = inst.name;
    for (const auto &n : p_.insts)
      if (n.type == InstructionType::DMABlock && n.name == inst.name) fail("name", "duplicate DMABlock '" + inst.name + "'");
    p_.insts.push_back(std::move(inst));
    const std::string region = cur_name_;
    if (const json *blocks = get(j, "blocks")) {
      const json &b = as_arr(*blocks, "blocks");
      for (size_t i = 0; i < b.size(); ++i) read_block(b[i], "blocks[" + std::to_string(i) + "]", node.body);
    } else {
      read_block(j, "DMABlock '" + region + "'", node.body);
    }
    for (const auto &n : node.body) {
      const InstructionType t = n.kind == Node::Kind::Inst ? p_.insts[static_cast<size_t>(n.inst)].type
                                                           : InstructionType::DMABlock;
      const std::string fam = inst_family(t);
      const bool descriptor = t != InstructionType::DMATrigger && t != InstructionType::DMABlock &&
                              (fam == "dma" || fam == "memory/dma");
      if (!descriptor) {
        cur_index_ = n.inst;
        cur_name_ = n.inst >= 0 ? p_.insts[static_cast<size_t>(n.inst)].name : region;
        fail("opcode", "DMABlock '" + region + "' may hold only DMA instructions (descriptors, copies)");
      }
    }
    out.push_back(std::move(node));
    cur_index_ = -1;
    cur_name_.clear();
  }

  // A loop variable for a LoopAxis name: reuse the first variable of that name that is not live in an
  // enclosing loop (so a program that reuses names round-trips), else add one (nested loops of the same name
  // shadow).
  int loop_var_for(const std::string &name) {
    for (size_t i = 0; i < p_.loop_vars.size(); ++i) {
      if (p_.loop_vars[i] != name)
        continue;
      bool live = false;
      for (int s : scope_)
        live = live || s == static_cast<int>(i);
      if (!live)
        return static_cast<int>(i);
    }
    p_.loop_vars.push_back(name);
    return static_cast<int>(p_.loop_vars.size()) - 1;
  }

  // DynamicForLoop {DynamicForLoopAxis {name, lb, ub, stride}, blocks} with bounds as integers or expressions (the
  // upper bound typically an IntRuntimeValueKind register), and DoWhile {cond, blocks} (reference
  // neuronx-cc/bir/json-schema-catalog.md: InstDynamicForLoop `name`, `DynamicForLoopAxis`, `lb`/`ub`/`stride`;
  // InstDoWhile `cond`; sim-control-sync-customop.md 1.2/1.3 for their meaning).
  void read_region(const json &j, const std::string &opcode, std::vector<Node> &out) {
    Node node;
    cur_index_ = -1;
    auto bound = [&](const json &v, const std::string &f) {
      return v.is_number_integer() ? Expr::constant(as_int(v, f)) : read_expr(v, f);
    };
    if (opcode == "DynamicForLoop") {
      node.kind = Node::Kind::DynamicForLoop;
      const json *ax = get(j, "DynamicForLoopAxis");
      if (!ax) ax = get(j, "LoopAxis");
      cur_name_ = "DynamicForLoop";
      if (!ax) fail("DynamicForLoopAxis", "missing required key 'DynamicForLoopAxis'");
      as_obj(*ax, "DynamicForLoopAxis");
      const std::string name = as_str(need(*ax, "name", "DynamicForLoopAxis.name"), "DynamicForLoopAxis.name");
      cur_name_ = "DynamicForLoop '" + name + "'";
      node.lb_expr = get(*ax, "lb") ? bound(*get(*ax, "lb"), "DynamicForLoopAxis.lb") : Expr::constant(0);
      node.ub_expr = bound(need(*ax, "ub", "DynamicForLoopAxis.ub"), "DynamicForLoopAxis.ub");
      node.stride_expr = get(*ax, "stride") ? bound(*get(*ax, "stride"), "DynamicForLoopAxis.stride") : Expr::constant(1);
      if (node.stride_expr.is_const() && node.stride_expr.c <= 0)
        fail("DynamicForLoopAxis.stride",
             "loop stride is " + std::to_string(node.stride_expr.c) + ": it must be positive");
      node.var = loop_var_for(name);
      warn_unknown_keys(j, InstructionType::DynamicForLoop);
    } else {
      node.kind = Node::Kind::DoWhile;
      cur_name_ = "DoWhile";
      node.cond = read_expr(need(j, "cond", "cond"), "cond");
      warn_unknown_keys(j, InstructionType::DoWhile);
    }
    const json &blocks = as_arr(need(j, "blocks", "blocks"), "blocks");
    const std::string region = cur_name_;
    cur_name_.clear();
    if (node.var >= 0) scope_.push_back(node.var);
    for (size_t b = 0; b < blocks.size(); ++b) {
      node.blocks.emplace_back(block_name(blocks[b]), node.body.size());
      read_block(blocks[b], "blocks[" + std::to_string(b) + "]", node.body);
    }
    if (node.var >= 0) scope_.pop_back();
    out.push_back(std::move(node));
  }

  void read_loop(const json &j, std::vector<Node> &out) {
    std::string axis_name;
    const json *ax = get(j, "LoopAxis");
    if (ax && get(*ax, "name"))
      axis_name = as_str(*get(*ax, "name"), "LoopAxis.name");
    cur_index_ = -1;
    cur_name_ = "Loop '" + axis_name + "'";
    if (!ax)
      fail("LoopAxis", "missing required key 'LoopAxis'");
    as_obj(*ax, "LoopAxis");
    if (axis_name.empty())
      fail("LoopAxis.name", "a loop axis needs a name");
    // lb/stride default as KLR writes them when unset (lb 0); stride absent means 1; ub is required.
    Node node;
    node.kind = Node::Kind::Loop;
    if (const json *lb = get(*ax, "lb"))
      node.lb = as_int(*lb, "LoopAxis.lb");
    node.ub = as_int(need(*ax, "ub", "LoopAxis.ub"), "LoopAxis.ub");
    if (const json *st = get(*ax, "stride"))
      node.stride = as_int(*st, "LoopAxis.stride");
    // A Loop counts up (the compiler writes lb < ub with a positive stride); a stride of 0 never ends and a
    // negative one is refused rather than guessed at.
    if (node.stride <= 0)
      fail("LoopAxis.stride", "loop stride is " + std::to_string(node.stride) + ": it must be positive");
    node.var = loop_var_for(axis_name);
    warn_unknown_keys(j, InstructionType::Loop);
    const json &blocks = as_arr(need(j, "blocks", "blocks"), "blocks");
    cur_name_.clear();
    scope_.push_back(node.var);
    for (size_t b = 0; b < blocks.size(); ++b) {
      node.blocks.emplace_back(block_name(blocks[b]), node.body.size());
      read_block(blocks[b], "blocks[" + std::to_string(b) + "]", node.body);
    }
    scope_.pop_back();
    out.push_back(std::move(node));
  }

  // Block elements: an object with "instructions" is a nested block, opcode "Loop" a loop, anything else an
  // instruction (the KLR reader's rule, bir-json.md 1.1).
  void read_block(const json &b, const std::string &field, std::vector<Node> &out) {
    Depth depth(block_depth_);
    if (block_depth_ > kMaxBlockNesting)
      fail(field, "loops, blocks and calls nested deeper than " + std::to_string(kMaxBlockNesting) + " levels");
    as_obj(b, field);
    const json &insts = as_arr(need(b, "instructions", field), field + ".instructions");
    for (size_t i = 0; i < insts.size(); ++i) {
      const json &e = insts[i];
      std::string f = field + ".instructions[" + std::to_string(i) + "]";
      if (!e.is_object()) {
        cur_index_ = static_cast<long>(p_.insts.size());
        fail(f, "expected an instruction object, got " + type_name_of(e));
      }
      if (const json *op = get(e, "opcode");
          op && op->is_string() && op->get_ref<const std::string &>() == "DMABlock") {
        read_dma_block(e, out);
      } else if (get(e, "instructions")) {
        read_block(e, f, out);
      } else if (const json *op = get(e, "opcode");
                 op && op->is_string() && op->get_ref<const std::string &>() == "Loop") {
        read_loop(e, out);
      } else if (op && op->is_string() &&
                 (op->get_ref<const std::string &>() == "DynamicForLoop" ||
                  op->get_ref<const std::string &>() == "DoWhile")) {
        read_region(e, op->get_ref<const std::string &>(), out);
      } else {
        read_instruction(e, out);
      }
    }
  }

  // ---------------------------------------------------------------------------------------- allocations
  void read_allocation(const json &al, const std::string &field) {
    as_obj(al, field);
    std::string skind = "memory_location_set";
    if (const json *s = get(al, "Skind"))
      skind = as_str(*s, field + ".Skind");
    // Registers are function-level storages referenced by name (value-model.md); they hold no tensor data.
    if (skind == "register")
      return;
    Tensor t;
    const json *loc = &al;
    if (skind == "memory_location_set") {
      t.set_name = as_str(need(al, "name", field + ".name"), field + ".name");
      const json &locs =
          as_arr(need(al, "memorylocations", field + ".memorylocations"), field + ".memorylocations");
      if (locs.empty())
        fail(field + ".memorylocations", "an allocation needs one memory location");
      loc = &as_obj(locs[0], field + ".memorylocations[0]");
      if (const json *k = get(al, "kind"))
        t.kind = parse_enum<TensorKind>(as_str(*k, field + ".kind"), ctx(field + ".kind"));
      if (const json *d = get(al, "dtype"))
        t.dtype = parse_dtype(as_str(*d, field + ".dtype"), ctx(field + ".dtype"));
      if (const json *s = get(al, "tensor_shape"))
        t.shape = as_int_list(*s, field + ".tensor_shape");
    } else if (skind != "memory_location") {
      fail(field + ".Skind", "unknown storage kind '" + skind + "'");
    }
    std::string lf = loc == &al ? field : field + ".memorylocations[0]";
    t.name = as_str(need(*loc, "name", lf + ".name"), lf + ".name");
    if (t.set_name.empty())
      t.set_name = t.name + "_set";
    MemoryType mt = MemoryType::Unallocated;
    if (const json *ty = get(*loc, "type"))
      mt = parse_enum<MemoryType>(as_str(*ty, lf + ".type"), ctx(lf + ".type"));
    // Input/Output/Unallocated locations live in DRAM (bir-json.md 1.5: KLR's Input/Output = the compiler's
    // DRAM).
    t.mem = (mt == MemoryType::Input || mt == MemoryType::Output || mt == MemoryType::Unallocated)
                ? MemoryType::DRAM
                : mt;
    std::vector<int64_t> dims;
    if (const json *d = get(*loc, "dims"))
      dims = as_int_list(*d, lf + ".dims");
    for (auto d : dims)
      if (d < 0)
        fail(lf + ".dims", "negative dimension");
    if (const json *v = get(*loc, "addr"))
      t.addr = as_int(*v, lf + ".addr");
    if (const json *v = get(*loc, "base"))
      t.base_partition = as_int(*v, lf + ".base");
    if (const json *v = get(*loc, "bank"))
      t.bank = as_int(*v, lf + ".bank");
    if (const json *v = get(*loc, "allocated"))
      t.allocated = as_bool(*v, lf + ".allocated");
    const int64_t esize = dtype_size(t.dtype);
    // dims = [partitions, bytes per partition...] (bir-json.md 1.5); the product of dims[1..] is the
    // partition size.
    if (!dims.empty()) {
      t.partitions = dims[0];
      t.bytes_per_partition = 1;
      for (size_t i = 1; i < dims.size(); ++i)
        t.bytes_per_partition = mul(t.bytes_per_partition, dims[i], lf + ".dims");
      if (dims.size() == 1)
        t.bytes_per_partition = esize;
    }
    if (t.shape.empty()) {
      if (dims.empty())
        fail(field, "allocation '" + t.set_name + "' has neither tensor_shape nor dims");
      if (esize <= 0 || t.bytes_per_partition % esize != 0)
        fail(lf + ".dims", "bytes per partition " + std::to_string(t.bytes_per_partition) +
                               " is not a multiple of the dtype size");
      t.shape = {t.partitions, t.bytes_per_partition / esize};
    } else if (dims.empty()) {
      t.partitions = t.shape[0];
      int64_t n = 1;
      for (size_t i = 1; i < t.shape.size(); ++i)
        n = mul(n, t.shape[i], field + ".tensor_shape");
      t.bytes_per_partition = mul(n, esize, field + ".tensor_shape");
    }
    for (auto s : t.shape)
      if (s < 0)
        fail(field + ".tensor_shape", "negative dimension");
    // The tensor's byte size must be a 64-bit number (every later size computation relies on it).
    int64_t elems = 1, bytes = 0;
    for (auto s : t.shape)
      if (__builtin_mul_overflow(elems, s, &elems)) fail(field + ".tensor_shape", "the element count overflows 64 bits");
    if (__builtin_mul_overflow(elems, esize, &bytes))
      fail(field + ".tensor_shape", "the byte size overflows 64 bits");
    if (p_.find_tensor(t.name) >= 0 || p_.find_tensor(t.set_name) >= 0)
      fail(field + ".name", "duplicate allocation '" + t.set_name + "'");
    p_.tensors.push_back(std::move(t));
  }

  // ---------------------------------------------------------------------------------------- module
  void read_module() {
    as_obj(root_, "");
    // The version selects only the QuasiAffineExpr encoding (wire-versioning.md); the forms are told apart by
    // shape here, but a version other than 1 or 2 is rejected as the compiler does.
    if (const json *v = get(root_, "version")) {
      int64_t ver = as_int(*v, "version");
      if (ver != 1 && ver != 2)
        fail("version", "BIR JSON version must be 1 or 2, got " + std::to_string(ver));
    }
    if (const json *a = get(root_, "arch"))
      p_.arch = as_str(*a, "arch");
    const json &fns = as_arr(need(root_, "functions", "functions"), "functions");
    if (fns.empty())
      fail("functions", "the module has no function");
    // json-loader.md D8: the loader looks up "main" and falls back to the first function.
    size_t pick = 0;
    for (size_t i = 0; i < fns.size(); ++i)
      if (fns[i].is_object() && get(fns[i], "name") && get(fns[i], "name")->is_string() &&
          get(fns[i], "name")->get<std::string>() == "main")
        pick = i;
    const json &fn = as_obj(fns[pick], "functions[" + std::to_string(pick) + "]");
    // The other functions are callees of Call / NKIKernel (read when a call names them).
    for (size_t i = 0; i < fns.size(); ++i)
      if (i != pick && fns[i].is_object() && get(fns[i], "name") && get(fns[i], "name")->is_string())
        fns_.emplace_back(get(fns[i], "name")->get<std::string>(), FnRef{&fns[i], false});
    if (const json *nf = get(root_, "nki_functions")) {
      if (const json *list = get(as_obj(*nf, "nki_functions"), "functions")) {
        const json &a = as_arr(*list, "nki_functions.functions");
        for (size_t i = 0; i < a.size(); ++i)
          if (a[i].is_object() && get(a[i], "name") && get(a[i], "name")->is_string())
            fns_.emplace_back(get(a[i], "name")->get<std::string>(), FnRef{&a[i], true});
      }
    }
    if (const json *n = get(fn, "name"))
      func_ = as_str(*n, "name");
    if (const json *al = get(fn, "allocations")) {
      const json &a = as_arr(*al, "allocations");
      for (size_t i = 0; i < a.size(); ++i)
        read_allocation(a[i], "allocations[" + std::to_string(i) + "]");
    }
    const json &blocks = as_arr(need(fn, "blocks", "blocks"), "blocks");
    for (size_t b = 0; b < blocks.size(); ++b) {
      // Branch targets name these blocks (reference neuronx-cc/bir/sim-control-sync-customop.md section 2).
      p_.blocks.push_back(Program::Block{block_name(blocks[b]), p_.body.size()});
      read_block(blocks[b], "blocks[" + std::to_string(b) + "]", p_.body);
    }
    // Pass 2 (json-loader.md): a DMATrigger's blocks must exist ("Block does not exist!"), and so must the block a
    // queue-instance reset names.
    auto has_block = [&](const std::string &n) {
      for (const auto &o : p_.insts)
        if (o.type == InstructionType::DMABlock && o.name == n) return true;
      return false;
    };
    for (const auto &inst : p_.insts) {
      cur_index_ = inst.index;
      cur_name_ = inst.name;
      if (inst.type == InstructionType::DMATrigger) {
        if (inst.f.dma_blocks.empty()) fail("dma_blocks", "a DMATrigger needs at least one DMABlock to fire");
        for (size_t i = 0; i < inst.f.dma_blocks.size(); ++i)
          if (!has_block(inst.f.dma_blocks[i]))
            fail("dma_blocks[" + std::to_string(i) + "]", "no DMABlock named '" + inst.f.dma_blocks[i] + "'");
      }
      if ((inst.type == InstructionType::SwitchQueueInstance || inst.type == InstructionType::ResetQueueInstance) &&
          !inst.f.instance_name.empty() && !has_block(inst.f.instance_name))
        fail("instance_name", "no DMABlock named '" + inst.f.instance_name + "'");
    }
    cur_index_ = -1;
    cur_name_.clear();
    // Pass 2 (json-loader.md): dependencies may name instructions defined later; each must exist.
    for (const auto &inst : p_.insts) {
      for (size_t i = 0; i < inst.dependencies.size(); ++i) {
        bool found = false;
        for (const auto &o : p_.insts)
          found = found || o.name == inst.dependencies[i];
        if (!found) {
          cur_index_ = inst.index;
          cur_name_ = inst.name;
          fail("dependencies[" + std::to_string(i) + "]",
               "unknown dependency '" + inst.dependencies[i] + "'");
        }
      }
    }
  }
};

// ------------------------------------------------------------------------------------------------ the writer
json num_json(double v) {
  // Non-finite numbers as strings, as KLR writes them (bir-json.md 1.10).
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  return v;
}

json write_value(bool v) {
  return v;
}
json write_value(int64_t v) {
  return v;
}
json write_value(double v) {
  return num_json(v);
}
json write_value(const std::string &v) {
  return v;
}
json write_value(const std::vector<int64_t> &v) {
  return v;
}
json write_value(const std::vector<double> &v) {
  json a = json::array();
  for (double d : v)
    a.push_back(num_json(d));
  return a;
}
json write_value(const std::vector<std::string> &v) {
  return v;
}
json write_value(const std::vector<std::vector<int64_t>> &v) {
  return v;
}
// Iota-style `pattern` fields are written as {step, num} objects, as KLR's Core.APPair (bir-json.md 1.10).
json write_value(const std::vector<ApDim> &v) {
  json a = json::array();
  for (const auto &d : v)
    a.push_back({{"step", d.step}, {"num", d.num}});
  return a;
}
json write_value(AluOp v) {
  return alu_name(v);
}
template <typename E, typename = std::enable_if_t<std::is_enum<E>::value>> json write_value(E v) {
  return enum_name(v);
}

json ap_json(const std::vector<ApDim> &ap) {
  json a = json::array();
  for (const auto &d : ap)
    a.push_back(json::array({d.step, d.num}));
  return a;
}

struct Writer {
  const Program &p;

  const Tensor *tensor(int i) const {
    return (i >= 0 && i < static_cast<int>(p.tensors.size())) ? &p.tensors[static_cast<size_t>(i)] : nullptr;
  }
  static std::string set_name(const Tensor &t) { return t.set_name.empty() ? t.name + "_set" : t.set_name; }

  json arg(const Arg &a) const {
    json j;
    j["dtype"] = enum_name(a.dtype);
    const Tensor *t = tensor(a.tensor);
    switch (a.kind) {
    case ArgKind::AccessPattern: {
      bool physical = a.json_kind == "physical_ap" || (a.json_kind.empty() && a.start.is_const());
      if (!a.start.is_const())
        physical = false; // only a symbolic_ap can carry a loop-dependent start
      j["ap"] = ap_json(a.ap);
      if (physical) {
        j["kind"] = "physical_ap";
        j["offset"] = a.start.c;
        if (t)
          j["memref"] = t->name, j["memsetref"] = set_name(*t);
      } else {
        j["kind"] = a.json_kind == "symbolic_pwap" ? "symbolic_pwap" : "symbolic_ap";
        // addrs: the whole start on the innermost (stride-1) dim, zeros elsewhere; the reader's
        // symbolic_start returns exactly that expression.
        std::vector<int64_t> shape = t ? t->shape : std::vector<int64_t>{};
        if (shape.empty())
          shape = {1};
        json addrs = json::array();
        for (size_t d = 0; d + 1 < shape.size(); ++d)
          addrs.push_back(expr_to_json(Expr::constant(0), p.loop_vars));
        addrs.push_back(expr_to_json(a.start, p.loop_vars));
        j["addrs"] = addrs;
        j["access_shape"] = shape;
        if (t)
          j["memsetref"] = set_name(*t);
      }
      break;
    }
    case ArgKind::Register:
      j["regref"] = a.reg;
      if (t) {
        j["kind"] = "register_ap";
        j["ap"] = ap_json(a.ap);
        j["memsetref"] = set_name(*t);
        if (a.start.kind == Expr::Kind::Register)
          j["reg_ap_offset"] = a.start.regref;
        else if (a.start.is_const() && a.start.c != 0)
          j["const_ap_offset"] = a.start.c;
      } else {
        j["kind"] = "register_access";
      }
      break;
    case ArgKind::Immediate:
      if (a.json_kind == "symbolic_imm_value" || !a.imm_array.empty() || !a.start.is_const() ||
          a.start.c != 0) {
        j["kind"] = "symbolic_imm_value";
        json vl = json::array();
        if (a.imm_array.empty())
          vl.push_back({{"value", num_json(a.imm)}});
        for (double v : a.imm_array)
          vl.push_back({{"value", num_json(v)}});
        j["value_list"] = vl;
        j["expr"] = expr_to_json(a.start, p.loop_vars);
      } else {
        j["kind"] = "imm_value";
        j["value"] = num_json(a.imm);
      }
      break;
    case ArgKind::ImmArray:
      j["kind"] = "imm_array";
      j["value_array"] = write_value(a.imm_array);
      break;
    }
    return j;
  }

  json inst(const Inst &in) const {
    json j;
    j["opcode"] = inst_type_name(in.type);
    j["name"] = in.name;
    j["engine"] = enum_name(in.engine);
    json ins = json::array(), outs = json::array();
    for (const auto &a : in.ins)
      ins.push_back(arg(a));
    for (const auto &a : in.outs)
      outs.push_back(arg(a));
    j["ins"] = ins;
    j["outs"] = outs;
    const int type = static_cast<int>(in.type);
    (void)type;
  // Given fields, and every key the type requires (inst_keys.def) with its value, so that the reader, which
  // insists on required keys, reads back what was written.
  const auto &required = inst_keys(in.type).required;
  const auto is_required = [&](const char *key) {
    return std::find(required.begin(), required.end(), key) != required.end();
  };
#define NS_FIELD(member, key, kind, ctype, def, only)                                                        \
  if ((only_sel::only < 0 || only_sel::only == type) && (in.has(Field::member) || is_required(key)))         \
    j[key] = write_value(in.f.member);
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
    j["dependencies"] = in.dependencies;
    if (in.source_line >= 0)
      j["debug"] = {{"lineno", in.source_line}};
    return j;
  }

  json nodes(const std::vector<Node> &body, int &block_counter) const {
    json a = json::array();
    for (const auto &n : body) {
      // A call is written as its instruction: its callee is written with the module's functions.
      if (n.kind == Node::Kind::Inst || n.kind == Node::Kind::Call) {
        if (n.inst >= 0 && n.inst < static_cast<int>(p.insts.size()))
          a.push_back(inst(p.insts[static_cast<size_t>(n.inst)]));
        continue;
      }
      if (n.kind == Node::Kind::DMABlock) {
        json blk = inst(p.insts[static_cast<size_t>(n.inst)]);
        blk.erase("ins");
        blk.erase("outs");
        blk.erase("dependencies");
        json block;
        block["name"] = n.name + "-body";
        block["instructions"] = nodes(n.body, block_counter);
        blk["blocks"] = json::array({block});
        a.push_back(blk);
        continue;
      }
      std::string var = (n.var >= 0 && n.var < static_cast<int>(p.loop_vars.size()))
                            ? p.loop_vars[static_cast<size_t>(n.var)]
                            : "i" + std::to_string(n.var);
      json loop;
      if (n.kind == Node::Kind::DoWhile) {
        loop["opcode"] = "DoWhile";
        loop["name"] = "DoWhile";
        loop["cond"] = expr_to_json(n.cond, p.loop_vars);
      } else if (n.kind == Node::Kind::DynamicForLoop) {
        loop["opcode"] = "DynamicForLoop";
        loop["name"] = "DynamicForLoop-" + var;
        loop["DynamicForLoopAxis"] = {{"name", var},
                                      {"lb", expr_to_json(n.lb_expr, p.loop_vars)},
                                      {"ub", expr_to_json(n.ub_expr, p.loop_vars)},
                                      {"stride", expr_to_json(n.stride_expr, p.loop_vars)}};
      } else {
        loop["opcode"] = "Loop";
        loop["name"] = "Loop-" + var;
        loop["LoopAxis"] = {{"name", var}, {"lb", n.lb}, {"ub", n.ub}, {"stride", n.stride}};
      }
      // The region's own blocks (branch targets inside it), or one block holding the whole body.
      json blocks = json::array();
      size_t from = 0;
      auto emit = [&](const std::string &name, size_t to) {
        std::vector<Node> part(n.body.begin() + static_cast<std::ptrdiff_t>(from),
                               n.body.begin() + static_cast<std::ptrdiff_t>(to));
        json block;
        block["name"] = name.empty() ? "Block" + std::to_string(++block_counter) : name;
        block["instructions"] = nodes(part, block_counter);
        blocks.push_back(block);
        from = to;
      };
      bool named = false;
      for (const auto &b : n.blocks) named = named || !b.first.empty();
      if (!named) {
        emit("", n.body.size());
      } else {
        if (n.blocks.front().second > 0) emit("", n.blocks.front().second);
        for (size_t b = 0; b < n.blocks.size(); ++b)
          emit(n.blocks[b].first, b + 1 < n.blocks.size() ? n.blocks[b + 1].second : n.body.size());
      }
      loop["blocks"] = blocks;
      a.push_back(loop);
    }
    return a;
  }

  json tensor_json(const Tensor &t) const {
    const char *tclass = t.mem == MemoryType::SB     ? "NeuronSBTensor"
                         : t.mem == MemoryType::PSUM ? "NeuronPSUMTensor"
                                                     : "Tensor";
    json loc = {{"Skind", "memory_location"},
                {"name", t.name},
                {"type", enum_name(t.mem)},
                {"dims", json::array({t.partitions, t.bytes_per_partition})},
                {"addr", t.addr},
                {"base", t.base_partition},
                {"bank", t.bank},
                {"allocated", t.allocated},
                {"pinned", false},
                {"tensor_id", 0}};
    return {{"Skind", "memory_location_set"},
            {"name", set_name(t)},
            {"kind", enum_name(t.kind)},
            {"tensor_class", tclass},
            {"dtype", enum_name(t.dtype)},
            {"partition_dim", 0},
            {"tensor_shape", t.shape},
            {"file", ""},
            {"no_spill", false},
            {"virtual", false},
            {"volatile", false},
            {"tensorId2MemLocSize", 1},
            {"memorylocations", json::array({loc})}};
  }

  json module() const {
    json allocs = json::array();
    for (const auto &t : p.tensors)
      if (t.owner.empty()) allocs.push_back(tensor_json(t));
    int block_counter = 1;
    json fn = {{"name", "sg0000"}, {"attributes", json::array()}, {"allocations", allocs}};
    if (p.blocks.empty()) {
      json block = {{"name", "Block1"}};
      block["instructions"] = nodes(p.body, block_counter);
      fn["blocks"] = json::array({block});
    } else {
      // Named top-level blocks (branch targets) are written as the function's basic blocks; nodes before the
      // first named block go into a leading block of their own.
      json blocks = json::array();
      auto emit = [&](const std::string &name, size_t from, size_t to) {
        std::vector<Node> part(p.body.begin() + static_cast<std::ptrdiff_t>(from),
                               p.body.begin() + static_cast<std::ptrdiff_t>(to));
        json block = {{"name", name}};
        block["instructions"] = nodes(part, block_counter);
        blocks.push_back(block);
      };
      if (p.blocks.front().first > 0) emit("Block0", 0, p.blocks.front().first);
      for (size_t b = 0; b < p.blocks.size(); ++b)
        emit(p.blocks[b].name, p.blocks[b].first, b + 1 < p.blocks.size() ? p.blocks[b + 1].first : p.body.size());
      fn["blocks"] = blocks;
    }
    json m = {
        {"arch", p.arch.empty() ? "gen3" : p.arch}, {"version", 2}, {"attributes", {{"neuron_core_id", 0}}}};
    m["functions"] = json::array({fn});
    json nki = json::array();
    for (const auto &c : p.callees)
      (c.nki ? nki : m["functions"]).push_back(json::parse(c.json));
    if (!nki.empty()) m["nki_functions"] = {{"functions", nki}};
    return m;
  }
};

} // namespace

json expr_to_json(const Expr &e, const std::vector<std::string> &loop_vars) {
  switch (e.kind) {
  case Expr::Kind::Const:
    return {{"kind", "AffExprKind"}, {"terms", json::array()}, {"c", e.c}};
  case Expr::Kind::Affine: {
    json terms = json::array();
    for (size_t i = 0; i < e.kids.size(); ++i)
      terms.push_back(
          {{"idx", expr_to_json(e.kids[i], loop_vars)}, {"coeff", i < e.coeffs.size() ? e.coeffs[i] : 1}});
    return {{"kind", "AffExprKind"}, {"terms", terms}, {"c", e.c}};
  }
  case Expr::Kind::Sum: {
    json terms = json::array();
    for (const auto &k : e.kids)
      terms.push_back(expr_to_json(k, loop_vars));
    if (e.c != 0)
      terms.push_back(expr_to_json(Expr::constant(e.c), loop_vars));
    return {{"kind", "SumKind"}, {"n_terms", terms.size()}, {"terms", terms}};
  }
  case Expr::Kind::Mult:
    return {{"kind", "MultKind"},
            {"var", e.kids.empty() ? expr_to_json(Expr::constant(0), loop_vars)
                                   : expr_to_json(e.kids[0], loop_vars)},
            {"scale", e.k}};
  case Expr::Kind::LoopVar: {
    std::string name = (e.var >= 0 && e.var < static_cast<int>(loop_vars.size()))
                           ? loop_vars[static_cast<size_t>(e.var)]
                           : "i" + std::to_string(e.var);
    return {{"kind", "AffIVKind"}, {"axis", name}};
  }
  case Expr::Kind::FloorDiv:
  case Expr::Kind::Mod:
    return {{"kind", e.kind == Expr::Kind::FloorDiv ? "FloorDivKind" : "ModuloKind"},
            {"numer", e.kids.empty() ? expr_to_json(Expr::constant(0), loop_vars)
                                     : expr_to_json(e.kids[0], loop_vars)},
            {"denom", e.k}};
  case Expr::Kind::Register:
    return {{"kind", "IntRuntimeValueKind"}, {"regref", e.regref}};
  }
  return {{"kind", "AffExprKind"}, {"terms", json::array()}, {"c", 0}};
}

Program parse_bir(const json &j, const std::string &file_for_messages) {
  return Reader(j, file_for_messages).run();
}

Program read_bir_file(const std::string &path) {
  // A regular file of bounded size, parsed with a bounded depth; errors name the byte offset or JSON path.
  return parse_bir(read_json_file(path, "kernel"), path);
}

json to_bir_json(const Program &p) {
  return Writer{p}.module();
}

} // namespace neuronsim::isa
