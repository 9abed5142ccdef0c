// Instruction operands (`ins` / `outs`, reference bir-json.md 1.8-1.9, neuronx-cc/bir/value-model.md):
// physical, symbolic and register access patterns over an allocation, register values, and immediates
// (single, array, or selected from a value_list by an expression).
#include "isa/bir/reader.hpp"

namespace neuronsim::isa::bir {

int Reader::tensor_ref(const json &a, const std::string &field) const {
  // memref names the memory location, memsetref the allocation (reference bir-json.md 1.8); either identifies
  // the tensor.
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
      if (t < 0) {
        std::vector<std::string> names;
        if (bind_)
          for (const auto &kv : *bind_)
            names.push_back(kv.first);
        else
          for (const auto &tn : p_.tensors)
            names.push_back(std::string(key) == "memref" ? tn.name : tn.set_name);
        fail(field + "." + key, "no allocation named '" + name + "'" + did_you_mean(name, names));
      }
      return t;
    }
  }
  fail(field, "missing required key 'memsetref' (or 'memref')");
}

Dtype Reader::arg_dtype(const json &a, const std::string &field, Dtype dflt) const {
  if (const json *d = get(a, "dtype"))
    return parse_dtype(as_str(*d, field + ".dtype"), ctx(field + ".dtype"));
  return dflt;
}

std::vector<int64_t> Reader::row_major_strides(const std::vector<int64_t> &shape,
                                               const std::string &field) const {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = mul(s[i], shape[i], field);
  return s;
}

// addrs[d] * stride, folded into `constant` when it is a constant, otherwise appended as a term.
void Reader::add_scaled(Expr e, int64_t stride, int64_t &constant, std::vector<Expr> &terms,
                        const std::string &f) const {
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
Expr Reader::symbolic_start(const json &a, const Tensor &t, const std::string &field) const {
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

Arg Reader::read_arg(const json &a, const std::string &field) const {
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
             kind == "symbolic_pwap") { // one class, two spellings (reference neuronx-cc/bir/value-model.md)
    arg.kind = ArgKind::AccessPattern;
    arg.tensor = tensor_ref(a, field);
    const Tensor &t = p_.tensors[static_cast<size_t>(arg.tensor)];
    arg.dtype = arg_dtype(a, field, t.dtype);
    arg.ap = as_pattern(need(a, "ap", field), field + ".ap");
    arg.start = symbolic_start(a, t, field);
  } else if (kind == "register_ap") {
    // A dynamic AP: the start comes from a register at run time (reference neuronx-cc/bir/value-model.md,
    // RegisterAccessPattern).
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
    // value_list entries are {"value": x} in the compiler dump and bare numbers in KLR (reference
    // bir-json.md 1.8).
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
    fail(field + ".kind", unknown_name("argument kind", kind,
                                       {"physical_ap", "symbolic_ap", "symbolic_pwap", "register_ap",
                                        "register_access", "imm_value", "imm_array", "symbolic_imm_value"}));
  }
  return arg;
}

std::vector<Arg> Reader::read_args(const json &j, const char *key, bool required) const {
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

} // namespace neuronsim::isa::bir
