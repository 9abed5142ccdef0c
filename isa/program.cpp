#include "neuronsim/isa/program.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

namespace neuronsim::isa {

namespace {
// Expressions come from the input: every step is checked, and an overflow is a SemanticError that the caller
// (the scheduler, which knows the instruction and the argument) reports with its context.
[[noreturn]] void overflow(const char *what) {
  throw SemanticError({}, std::string("address expression overflows 64 bits (") + what + ")");
}
int64_t cadd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) overflow("sum");
  return r;
}
int64_t cmul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) overflow("product");
  return r;
}
} // namespace

int64_t Expr::eval(const int64_t *lv, int64_t shard) const {
  switch (kind) {
  case Kind::Const:
    return c;
  case Kind::Affine: {
    int64_t v = c;
    for (size_t i = 0; i < kids.size(); ++i) v = cadd(v, cmul(coeffs[i], kids[i].eval(lv, shard)));
    return v;
  }
  case Kind::Sum: {
    int64_t v = c;
    for (const auto &k : kids) v = cadd(v, k.eval(lv, shard));
    return v;
  }
  case Kind::Mult:
    return cmul(k, kids.at(0).eval(lv, shard));
  case Kind::LoopVar:
    return lv ? lv[var] : 0;
  case Kind::FloorDiv: {
    int64_t n = kids.at(0).eval(lv, shard);
    if (k == 0) overflow("division by zero");
    if (k == -1 && n == INT64_MIN) overflow("quotient");
    int64_t q = n / k;
    if ((n % k != 0) && ((n < 0) != (k < 0))) --q;  // floor, not truncation
    return q;
  }
  case Kind::Mod: {
    if (k == 0) overflow("division by zero");
    if (k == -1) return 0;
    int64_t r = kids.at(0).eval(lv, shard) % k;
    if (r != 0 && ((r < 0) != (k < 0))) r += k;  // Python-style modulo, result has the divisor's sign
    return r;
  }
  case Kind::Register:
    return 0;  // runtime register values are substituted by the simulator before evaluation
  case Kind::ShardId:
    return shard;
  }
  return 0;
}

int Program::find_tensor(const std::string &name) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name || tensors[i].set_name == name) return static_cast<int>(i);
  return -1;
}

namespace {
int64_t count_nodes(const std::vector<Node> &nodes) {
  int64_t n = 0;
  for (const auto &node : nodes) {
    if (node.kind == Node::Kind::Inst) {
      ++n;
    } else if (node.kind == Node::Kind::Call || node.kind == Node::Kind::DMABlock) {
      // The call / block instruction itself, then its body once (a triggered DMABlock may run more often).
      n = std::min<int64_t>(INT64_MAX / 2, n + 1 + count_nodes(node.body));
    } else if (node.kind != Node::Kind::Loop) {
      n = std::min<int64_t>(INT64_MAX / 2, n + count_nodes(node.body));  // a run-time trip count: counted once (a lower bound for DoWhile)
    } else {
      // In __int128 and saturated: a loop bound of 10^12 must give a large count, not an overflowed one.
      __int128 trips = 0;
      if (node.stride > 0 && node.ub > node.lb)
        trips = ((__int128)node.ub - node.lb + node.stride - 1) / node.stride;
      if (node.stride < 0 && node.ub < node.lb)
        trips = ((__int128)node.lb - node.ub - node.stride - 1) / -(__int128)node.stride;
      const __int128 total = (__int128)n + trips * count_nodes(node.body);
      n = total > INT64_MAX / 2 ? INT64_MAX / 2 : static_cast<int64_t>(total);
    }
  }
  return n;
}
} // namespace

int64_t Program::dynamic_count() const { return count_nodes(body); }

std::string source_location(const Inst &inst) {
  if (inst.source_line < 0) return inst.source_file;
  return (inst.source_file.empty() ? "line " : inst.source_file + ":") + std::to_string(inst.source_line);
}

std::string source_location(const Program &p, const ErrorContext &ctx) {
  if (ctx.file != p.file || ctx.inst_index < 0 || ctx.inst_index >= static_cast<long>(p.insts.size())) return "";
  const Inst &inst = p.insts[static_cast<size_t>(ctx.inst_index)];
  if (!ctx.inst_name.empty() && ctx.inst_name != inst.name) return "";
  return source_location(inst);
}

const char *field_key(Field f) {
  static const char *keys[] = {
#define NS_FIELD(member, key, kind, ctype, def, only, ...) key,
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  };
  int i = static_cast<int>(f);
  return (i >= 0 && i < kNumFields) ? keys[i] : "?";
}

} // namespace neuronsim::isa
