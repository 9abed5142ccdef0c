// Address and bound expressions: a pelican QuasiAffineExpr as version 1 writes it (a flat affine sum over
// named loop axes, optionally wrapped by op Div / Mod) or version 2 does (a {kind: ...} tree). The form is
// recognised by shape, term by term, not by the module's version (reference
// neuronx-cc/bir/wire-versioning.md; per-kind keys from the public pelican-wire page). Loop axes resolve
// against the enclosing loops, innermost first.
#include "isa/bir/reader.hpp"

namespace neuronsim::isa::bir {

int Reader::resolve_axis(const std::string &name, const std::string &field) const {
  for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
    if (p_.loop_vars[static_cast<size_t>(*it)] == name)
      return *it;
  fail(field, "unknown loop variable '" + name + "' (no enclosing Loop has this LoopAxis name)");
}

Expr Reader::loop_var(int v) {
  Expr e;
  e.kind = Expr::Kind::LoopVar;
  e.var = v;
  return e;
}

// One affine term's index: v2 nests an expression under "idx" (normally {kind: AffIVKind, axis}); v1 names
// the loop axis under "AxisLabel". The coefficient is "coeff" in v2 and "coef" in v1 (reference
// neuronx-cc/bir/wire-versioning.md). The form is recognised by shape, term by term, rather than by the
// module version.
void Reader::read_term(const json &t, const std::string &field, Expr &aff) const {
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

Expr Reader::read_affine_body(const json &e, const std::string &field) const {
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

Expr Reader::unary(Expr::Kind kind, Expr operand, int64_t k) const {
  Expr e;
  e.kind = kind;
  e.k = k;
  e.kids.push_back(std::move(operand));
  return e;
}

int64_t Reader::denominator(const json &e, const char *key, const std::string &field) const {
  int64_t d = as_int(need(e, key, field), field + "." + key);
  if (d == 0)
    fail(field + "." + key, "division by zero in expression");
  return d;
}

// A pelican QuasiAffineExpr, v2 {kind: ...} tree or v1 flat affine with optional {op, op_param}
// (reference neuronx-cc/bir/wire-versioning.md; per-kind keys from the public pelican-wire page).
Expr Reader::read_expr(const json &e, const std::string &field) const {
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
        s.c = add(s.c, t.c,
                  field + ".terms"); // constants fold into Sum::c (the writer emits c as a constant term)
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
  // ShardIDKind {kind, ub}: the running core's shard id on a logical core (reference
  // neuronx-cc/bir/wire-versioning.md, ShardId(13), byte-identical in v1 and v2); ub is the shard count.
  if (k == "ShardIDKind") {
    Expr s;
    s.kind = Expr::Kind::ShardId;
    if (const json *ub = get(e, "ub")) s.k = as_int(*ub, field + ".ub");
    return s;
  }
  // CCGetRankKind {op_param, channel_id}: the rank the runtime's TP permutation table gives (reference
  // neuronx-cc/bir/sim-bn-rng-collective-dma.md 4.3 traces only the table's index formula, not what fills it).
  if (k == "CCGetRankKind")
    fail(field + ".kind", "CCGetRankKind is not modelled: its value comes from the runtime's rank permutation "
                          "table, which the reference does not give (use a constant, ShardIDKind or an affine form)");
  // CCDivKind, IndirectArgId: collective/indirect values the simulator has no model for yet.
  fail(field + ".kind", "unsupported expression kind '" + k + "'");
}

} // namespace neuronsim::isa::bir
