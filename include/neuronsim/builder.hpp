// A small C++ API to write BIR modules: declare DRAM/SBUF/PSUM tensors, slice them into access patterns, emit
// instructions by type with their fields, and loops whose variables drive the access patterns. It builds an
// isa::Program directly; isa::to_bir_json() writes it in the compiler's BIR JSON form.
//
//   neuronsim::builder::Builder b("add");
//   auto a = b.input("a", {128, 512}), c = b.output("c", {128, 512});
//   auto t = b.sbuf("t", {128, 512});
//   b.add(InstructionType::Load, {b.ap(a.all())}, {b.ap(t.all())});
//   b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), b.imm(1.0)}, {b.ap(t.all())})
//       .op0(AluOp::add).op1(AluOp::bypass);
//   b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(c.all())});
//   isa::Program p = b.finish();
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "neuronsim/isa/program.hpp"

namespace neuronsim::builder {

using isa::AluOp;
using isa::ApDim;
using isa::Dtype;
using isa::InstructionType;

// An affine expression of loop variables and run-time registers: c + sum coef * var + sum coef * register. A register
// term is written as a pelican IntRuntimeValueKind leaf (reference neuronx-cc/bir/wire-versioning.md): the value the
// register holds on the engine that executes the instruction, read when it runs.
struct Aff {
  std::map<int, int64_t> terms;  // loop-variable index -> coefficient
  std::map<std::string, int64_t> regs;  // register name -> coefficient
  int64_t c = 0;
  Aff(int64_t v = 0) : c(v) {}  // NOLINT: implicit from an integer on purpose
  static Aff var(int v) {
    Aff a;
    a.terms[v] = 1;
    return a;
  }
  // The running core's shard id on a logical core of `shards` physical cores (ShardIDKind, sim/device.hpp).
  static constexpr int kShard = -1;  // its key in `terms`
  static Aff shard(int64_t shards) {
    Aff a;
    a.terms[kShard] = 1;
    a.shards = shards;
    return a;
  }
  static Aff reg(const std::string &name) {
    Aff a;
    a.regs[name] = 1;
    return a;
  }
  int64_t shards = 0;  // the ShardIDKind's ub, when the expression has the shard term
  isa::Expr to_expr() const;
};
Aff operator+(Aff a, const Aff &b);
Aff operator*(Aff a, int64_t k);
inline Aff operator*(int64_t k, Aff a) { return std::move(a) * k; }

// An access pattern on one tensor: start element (row-major) and [step, num] pairs, partition dim first.
struct Ap {
  int tensor = -1;
  Dtype dtype = Dtype::float32;
  Aff start;
  std::vector<ApDim> dims;
};

class Builder;

struct TensorHandle {
  int id = -1;
  std::vector<int64_t> shape;
  Dtype dtype = Dtype::float32;

  int64_t row() const;  // elements per partition (product of shape[1..])
  // The whole tensor: [[row, shape[0]], [1, row]] (reference bir-json.md 1.9: partition step = row length).
  Ap all() const;
  // Partitions [p0, p0+np) x free elements [f0, f0+nf) of a 2-D view.
  Ap tile(Aff p0, int64_t np, Aff f0, int64_t nf) const;
  // Any pattern: start element and pairs.
  Ap at(Aff start, std::vector<ApDim> dims) const;
};

// A handle on an emitted instruction; its setters are generated from neuronsim/isa/tables/inst_fields.def and
// mark the field as given.
class InstRef {
public:
  InstRef(Builder *b, int index) : b_(b), index_(index) {}
  isa::Inst &inst();
  int index() const { return index_; }
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  InstRef &member(ctype v) {                                                                                 \
    inst().f.member = std::move(v);                                                                          \
    inst().given.set(static_cast<int>(isa::Field::member));                                                  \
    return *this;                                                                                            \
  }
  using AluOp = isa::AluOp;
  using EngineAccumulationType = isa::EngineAccumulationType;
  using AxisListType = isa::AxisListType;
  using TSCMode = isa::TSCMode;
  using CopyMode = isa::CopyMode;
  using MemsetMode = isa::MemsetMode;
  using ActivationFunctionType = isa::ActivationFunctionType;
  using PoolFunctionType = isa::PoolFunctionType;
  using Engine = isa::Engine;
  using RandomAlgorithmKind = isa::RandomAlgorithmKind;
  using RandomDistributionKind = isa::RandomDistributionKind;
  using MatmultPerfMode = isa::MatmultPerfMode;
  using DGEType = isa::DGEType;
  using TransposeOps = isa::TransposeOps;
  using BranchCompareOp = isa::BranchCompareOp;
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  InstRef &engine(isa::Engine e);
  InstRef &name(const std::string &n);
  // The user's source line it comes from: the BIR `debug` object ({filename, lineno}) the profile reads.
  InstRef &source(const std::string &file, int line);
  // What the NKI front end knows of it (BIR `debug.nki`, isa::NkiInfo): its kernel loops, local tiles, reduction.
  InstRef &nki(isa::NkiInfo info);

private:
  Builder *b_;
  int index_;
};

class Builder {
public:
  explicit Builder(std::string file = "builder") { prog_.file = std::move(file); }

  TensorHandle input(const std::string &name, std::vector<int64_t> shape, Dtype dt = Dtype::float32);
  TensorHandle output(const std::string &name, std::vector<int64_t> shape, Dtype dt = Dtype::float32);
  // An output the run also fills as an input (isa::Tensor::inout): an argument a kernel writes in place.
  TensorHandle inout(const std::string &name, std::vector<int64_t> shape, Dtype dt = Dtype::float32);
  TensorHandle dram(const std::string &name, std::vector<int64_t> shape, Dtype dt = Dtype::float32);
  TensorHandle sbuf(const std::string &name, std::vector<int64_t> shape, Dtype dt = Dtype::float32);
  TensorHandle psum(const std::string &name, std::vector<int64_t> shape, Dtype dt = Dtype::float32);
  // The NKI tile tensor `id` holds (its allocation's `debug.nki`, isa::NkiTile), for messages in kernel terms.
  void tensor_nki(int id, isa::NkiTile tile);

  static isa::Arg ap(const Ap &a);
  static isa::Arg imm(double v, Dtype dt = Dtype::float32);
  static isa::Arg reg(const std::string &name, Dtype dt = Dtype::int32);
  // The running core's shard id on a logical core of `shards` cores as an immediate: a symbolic_imm_value whose
  // value list 0..shards-1 is selected by ShardIDKind (a CompareAndBranch on it is fixed per core).
  static isa::Arg shard_id(int64_t shards);

  // Starts a new top-level basic block named `name` (a branch target). Only outside loops.
  void block(const std::string &name);

  // Emits an instruction named "I-<n>" (n counts from 1) unless renamed.
  InstRef add(InstructionType t, std::vector<isa::Arg> ins, std::vector<isa::Arg> outs);
  // for var in range(lb, ub, stride): body(var)
  void loop(const std::string &var, int64_t lb, int64_t ub, int64_t stride, const std::function<void(Aff)> &body);
  // DynamicForLoop: for var in range(lb, ub_const + ub_coef * <register ub_reg>, stride), the bound read when the
  // loop starts.
  void dynamic_loop(const std::string &var, int64_t lb, const std::string &ub_reg, int64_t ub_coef, int64_t ub_const,
                    int64_t stride, const std::function<void(Aff)> &body);
  // DynamicForLoop with expression bounds: for var in range(lb, ub, stride), lb and ub read (registers included)
  // when the loop starts.
  void dynamic_loop(const std::string &var, const Aff &lb, const Aff &ub, int64_t stride,
                    const std::function<void(Aff)> &body);
  // DoWhile: do { body } while (<register cond_reg> != 0).
  void do_while(const std::string &cond_reg, const std::function<void()> &body);

  isa::Program &program() { return prog_; }
  isa::Program finish() { return std::move(prog_); }

private:
  friend class InstRef;
  TensorHandle tensor(const std::string &name, std::vector<int64_t> shape, Dtype dt, isa::TensorKind kind,
                      isa::MemoryType mem);
  isa::Program prog_;
  std::vector<std::vector<isa::Node> *> stack_ = {&prog_.body};
};

} // namespace neuronsim::builder
