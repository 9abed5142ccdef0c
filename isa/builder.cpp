#include "neuronsim/builder.hpp"

#include <algorithm>

namespace neuronsim::builder {

isa::Expr Aff::to_expr() const {
  const bool no_regs = std::all_of(regs.begin(), regs.end(), [](const auto &r) { return r.second == 0; });
  if (terms.empty() && no_regs) return isa::Expr::constant(c);
  isa::Expr e;
  e.kind = isa::Expr::Kind::Affine;
  e.c = c;
  for (const auto &[v, k] : terms) {
    isa::Expr iv;
    iv.kind = v == kShard ? isa::Expr::Kind::ShardId : isa::Expr::Kind::LoopVar;
    if (v == kShard) iv.k = shards;
    else iv.var = v;
    e.kids.push_back(iv);
    e.coeffs.push_back(k);
  }
  for (const auto &[name, k] : regs) {
    if (k == 0) continue;
    isa::Expr r;
    r.kind = isa::Expr::Kind::Register;
    r.regref = name;
    e.kids.push_back(r);
    e.coeffs.push_back(k);
  }
  return e;
}

Aff operator+(Aff a, const Aff &b) {
  a.c += b.c;
  a.shards = std::max(a.shards, b.shards);
  for (const auto &[v, k] : b.terms) a.terms[v] += k;
  for (const auto &[r, k] : b.regs) a.regs[r] += k;
  return a;
}

Aff operator*(Aff a, int64_t k) {
  a.c *= k;
  for (auto &t : a.terms) t.second *= k;
  for (auto &r : a.regs) r.second *= k;
  return a;
}

int64_t TensorHandle::row() const {
  int64_t r = 1;
  for (size_t i = 1; i < shape.size(); ++i) r *= shape[i];
  return r;
}

Ap TensorHandle::all() const {
  Ap a{id, dtype, Aff(0), {}};
  a.dims.push_back(ApDim{row(), shape.empty() ? 1 : shape[0]});
  a.dims.push_back(ApDim{1, row()});
  return a;
}

Ap TensorHandle::tile(Aff p0, int64_t np, Aff f0, int64_t nf) const {
  return Ap{id, dtype, p0 * row() + f0, {ApDim{row(), np}, ApDim{1, nf}}};
}

Ap TensorHandle::at(Aff start, std::vector<ApDim> dims) const { return Ap{id, dtype, std::move(start), std::move(dims)}; }

isa::Inst &InstRef::inst() { return b_->prog_.insts[static_cast<size_t>(index_)]; }
InstRef &InstRef::engine(isa::Engine e) {
  inst().engine = e;
  return *this;
}
InstRef &InstRef::name(const std::string &n) {
  inst().name = n;
  return *this;
}
InstRef &InstRef::nki(isa::NkiInfo info) {
  inst().nki = std::make_shared<const isa::NkiInfo>(std::move(info));
  return *this;
}

void Builder::tensor_nki(int id, isa::NkiTile tile) {
  prog_.tensors.at(static_cast<size_t>(id)).nki = std::make_shared<const isa::NkiTile>(std::move(tile));
}

InstRef &InstRef::source(const std::string &file, int line) {
  inst().source_file = file;
  inst().source_line = line;
  return *this;
}

TensorHandle Builder::tensor(const std::string &name, std::vector<int64_t> shape, Dtype dt, isa::TensorKind kind,
                             isa::MemoryType mem) {
  isa::Tensor t;
  t.name = name;
  t.set_name = name + "_set";
  t.kind = kind;
  t.mem = mem;
  t.dtype = dt;
  t.shape = shape;
  t.partitions = shape.empty() ? 1 : shape[0];
  int64_t row = 1;
  for (size_t i = 1; i < shape.size(); ++i) row *= shape[i];
  t.bytes_per_partition = row * isa::dtype_size(dt);
  prog_.tensors.push_back(t);
  return TensorHandle{static_cast<int>(prog_.tensors.size()) - 1, std::move(shape), dt};
}

TensorHandle Builder::input(const std::string &n, std::vector<int64_t> s, Dtype d) {
  return tensor(n, std::move(s), d, isa::TensorKind::ExternalInput, isa::MemoryType::DRAM);
}
TensorHandle Builder::output(const std::string &n, std::vector<int64_t> s, Dtype d) {
  return tensor(n, std::move(s), d, isa::TensorKind::ExternalOutput, isa::MemoryType::DRAM);
}
TensorHandle Builder::inout(const std::string &n, std::vector<int64_t> s, Dtype d) {
  TensorHandle h = output(n, std::move(s), d);
  prog_.tensors[static_cast<size_t>(h.id)].inout = true;
  return h;
}
TensorHandle Builder::dram(const std::string &n, std::vector<int64_t> s, Dtype d) {
  return tensor(n, std::move(s), d, isa::TensorKind::Internal, isa::MemoryType::DRAM);
}
TensorHandle Builder::sbuf(const std::string &n, std::vector<int64_t> s, Dtype d) {
  return tensor(n, std::move(s), d, isa::TensorKind::Internal, isa::MemoryType::SB);
}
TensorHandle Builder::psum(const std::string &n, std::vector<int64_t> s, Dtype d) {
  return tensor(n, std::move(s), d, isa::TensorKind::Internal, isa::MemoryType::PSUM);
}

isa::Arg Builder::ap(const Ap &a) {
  isa::Arg g;
  g.kind = isa::ArgKind::AccessPattern;
  g.dtype = a.dtype;
  g.tensor = a.tensor;
  g.ap = a.dims;
  g.start = a.start.to_expr();
  g.json_kind = a.start.terms.empty() && a.start.regs.empty() ? "physical_ap" : "symbolic_ap";
  return g;
}

isa::Arg Builder::imm(double v, Dtype dt) {
  isa::Arg g;
  g.kind = isa::ArgKind::Immediate;
  g.dtype = dt;
  g.imm = v;
  g.json_kind = "imm_value";
  return g;
}

isa::Arg Builder::shard_id(int64_t shards) {
  isa::Arg g = imm(0.0, Dtype::int32);
  g.json_kind = "symbolic_imm_value";
  for (int64_t s = 0; s < shards; ++s) g.imm_array.push_back(static_cast<double>(s));
  g.start = Aff::shard(shards).to_expr();
  return g;
}

isa::Arg Builder::reg(const std::string &name, Dtype dt) {
  isa::Arg g;
  g.kind = isa::ArgKind::Register;
  g.dtype = dt;
  g.reg = name;
  g.json_kind = "register_access";
  return g;
}

void Builder::block(const std::string &name) {
  if (stack_.size() != 1) throw SemanticError({prog_.file, -1, "", "block"}, "blocks can only start outside loops");
  prog_.blocks.push_back(isa::Program::Block{name, prog_.body.size()});
}

InstRef Builder::add(InstructionType t, std::vector<isa::Arg> ins, std::vector<isa::Arg> outs) {
  isa::Inst i;
  i.type = t;
  i.index = static_cast<int>(prog_.insts.size());
  i.name = "I-" + std::to_string(i.index + 1);
  i.ins = std::move(ins);
  i.outs = std::move(outs);
  prog_.insts.push_back(std::move(i));
  isa::Node n;
  n.kind = isa::Node::Kind::Inst;
  n.inst = static_cast<int>(prog_.insts.size()) - 1;
  stack_.back()->push_back(n);
  return InstRef(this, n.inst);
}

void Builder::loop(const std::string &var, int64_t lb, int64_t ub, int64_t stride,
                   const std::function<void(Aff)> &body) {
  prog_.loop_vars.push_back(var);
  isa::Node n;
  n.kind = isa::Node::Kind::Loop;
  n.var = static_cast<int>(prog_.loop_vars.size()) - 1;
  n.lb = lb, n.ub = ub, n.stride = stride;
  stack_.back()->push_back(std::move(n));
  isa::Node &ref = stack_.back()->back();
  stack_.push_back(&ref.body);
  body(Aff::var(ref.var));
  stack_.pop_back();
}

namespace {
isa::Expr register_expr(const std::string &reg) {
  isa::Expr r;
  r.kind = isa::Expr::Kind::Register;
  r.regref = reg;
  return r;
}
} // namespace

void Builder::dynamic_loop(const std::string &var, int64_t lb, const std::string &ub_reg, int64_t ub_coef,
                           int64_t ub_const, int64_t stride, const std::function<void(Aff)> &body) {
  prog_.loop_vars.push_back(var);
  isa::Node n;
  n.kind = isa::Node::Kind::DynamicForLoop;
  n.var = static_cast<int>(prog_.loop_vars.size()) - 1;
  n.lb_expr = isa::Expr::constant(lb);
  n.ub_expr.kind = isa::Expr::Kind::Affine;
  n.ub_expr.c = ub_const;
  n.ub_expr.kids.push_back(register_expr(ub_reg));
  n.ub_expr.coeffs.push_back(ub_coef);
  n.stride_expr = isa::Expr::constant(stride);
  stack_.back()->push_back(std::move(n));
  isa::Node &ref = stack_.back()->back();
  stack_.push_back(&ref.body);
  body(Aff::var(ref.var));
  stack_.pop_back();
}

void Builder::dynamic_loop(const std::string &var, const Aff &lb, const Aff &ub, int64_t stride,
                           const std::function<void(Aff)> &body) {
  prog_.loop_vars.push_back(var);
  isa::Node n;
  n.kind = isa::Node::Kind::DynamicForLoop;
  n.var = static_cast<int>(prog_.loop_vars.size()) - 1;
  n.lb_expr = lb.to_expr();
  n.ub_expr = ub.to_expr();
  n.stride_expr = isa::Expr::constant(stride);
  stack_.back()->push_back(std::move(n));
  isa::Node &ref = stack_.back()->back();
  stack_.push_back(&ref.body);
  body(Aff::var(ref.var));
  stack_.pop_back();
}

void Builder::do_while(const std::string &cond_reg, const std::function<void()> &body) {
  isa::Node n;
  n.kind = isa::Node::Kind::DoWhile;
  n.cond = register_expr(cond_reg);
  stack_.back()->push_back(std::move(n));
  isa::Node &ref = stack_.back()->back();
  stack_.push_back(&ref.body);
  body();
  stack_.pop_back();
}

} // namespace neuronsim::builder
