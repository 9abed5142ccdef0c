// The cores a kernel needs and the check of a run's cores against them
// (include/neuronsim/sim/core_needs.hpp).
#include "neuronsim/sim/core_needs.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include "neuronsim/sim/device.hpp"

namespace neuronsim::sim {

namespace {

using isa::InstructionType;

// Needs are counted up to this: a run refuses anything past sim::kMaxCores anyway.
constexpr int64_t kNamedLimit = 1 << 20;

// Calls fn(shard ub, field) for every ShardIDKind in `e`.
void each_shard(const isa::Expr &e, const std::string &field,
                const std::function<void(int64_t, const std::string &)> &fn) {
  if (e.kind == isa::Expr::Kind::ShardId)
    fn(e.k, field);
  for (const auto &k : e.kids)
    each_shard(k, field, fn);
}

// Calls fn(shard ub, instruction, field) for every ShardIDKind of the program: operands' addresses and
// selectors, rank and iteration expressions, dynamic loop bounds and predicates (the loop's own instruction).
void each_shard_use(const isa::Program &p,
                    const std::function<void(int64_t, const isa::Inst *, const std::string &)> &fn) {
  for (const auto &inst : p.insts) {
    const auto at = [&](int64_t ub, const std::string &f) { fn(ub, &inst, f); };
    for (const char *side : {"ins", "outs"}) {
      const auto &args = std::string(side) == "ins" ? inst.ins : inst.outs;
      for (size_t i = 0; i < args.size(); ++i)
        each_shard(args[i].start, std::string(side) + "[" + std::to_string(i) + "]", at);
    }
    for (const auto &e : inst.recv_from_rank)
      each_shard(e, "recv_from_rank", at);
    for (const auto &e : inst.send_to_rank)
      each_shard(e, "send_to_rank", at);
    for (const auto &e : inst.iter_id_expr)
      each_shard(e, "iter_id", at);
  }
  std::function<void(const std::vector<isa::Node> &)> walk = [&](const std::vector<isa::Node> &body) {
    for (const auto &n : body) {
      const isa::Inst *inst = n.inst >= 0 ? &p.insts[static_cast<size_t>(n.inst)] : nullptr;
      const auto at = [&](int64_t ub, const std::string &f) { fn(ub, inst, f); };
      each_shard(n.lb_expr, "lb", at);
      each_shard(n.ub_expr, "ub", at);
      each_shard(n.stride_expr, "stride", at);
      each_shard(n.cond, "cond", at);
      walk(n.body);
    }
  };
  walk(p.body);
}

ErrorContext at(const isa::Program &p, const isa::Inst *inst, const std::string &field) {
  return inst ? ErrorContext{p.file, inst->index, inst->name, field} : ErrorContext{p.file, -1, "", field};
}

// A constant rank expression's value, or -1 (ShardIDKind, registers: known per core only).
int64_t constant_rank(const isa::Expr &e) {
  if (e.kind == isa::Expr::Kind::Const)
    return e.c;
  if (e.kind == isa::Expr::Kind::Affine && e.kids.empty())
    return e.c;
  return -1;
}

bool is_collective_compute(const isa::Inst &inst) {
  return inst.type == InstructionType::CollectiveCompute;
}

// Calls fn(core, field) for every physical core the instruction names.
void each_named_core(const isa::Inst &inst, const std::function<void(int64_t, const std::string &)> &fn) {
  for (size_t g = 0; g < inst.f.replica_groups.size(); ++g)
    for (int64_t c : inst.f.replica_groups[g])
      fn(c, "replica_groups");
  if (inst.type == InstructionType::CollectiveSend || inst.type == InstructionType::CollectiveRecv)
    fn(inst.f.peer_id, "peer_id");
  if (inst.type == InstructionType::CoreBarrier)
    for (int64_t c : inst.f.cores)
      fn(c, "cores");
  // SendRecv's peers are members of its group, physical cores (engines/ops/collective.cpp send_recv): with LNC=2
  // the two shards of a logical core (nisa.sendrecv's send_to_rank / recv_from_rank 0 or 1).
  for (const auto &e : inst.recv_from_rank)
    if (const int64_t r = constant_rank(e); r >= 0)
      fn(r, "recv_from_rank");
  for (const auto &e : inst.send_to_rank)
    if (const int64_t r = constant_rank(e); r >= 0)
      fn(r, "send_to_rank");
}

// Calls fn(rank, field) for every rank the instruction names.
void each_named_rank(const isa::Inst &inst, const std::function<void(int64_t, const std::string &)> &fn) {
  if (is_collective_compute(inst))
    for (const auto &pr : inst.f.src_target_pairs)
      for (int64_t r : pr)
        fn(r, "src_target_pairs");
}

std::string run_text(int cores, int lnc, const CoreSettingNames &n) {
  return "the run has " + std::to_string(cores) + " core" + (cores == 1 ? "" : "s") +
         " with LNC=" + std::to_string(lnc) + " (" + n.cores + " " + std::to_string(cores) + ", " + n.lnc +
         " " + std::to_string(lnc) + ")";
}

} // namespace

int CoreNeeds::min_cores(int l) const {
  const int64_t lnc = std::max(l, 1);  // in 64 bits: ranks and lnc are each up to kNamedLimit
  return static_cast<int>(std::min<int64_t>(std::max<int64_t>({cores, ranks * lnc, lnc, 1}), kNamedLimit));
}

CoreNeeds core_needs(const isa::Program &p) {
  CoreNeeds n;
  for (const auto &inst : p.insts) {
    each_named_core(inst, [&](int64_t c, const std::string &f) {
      n.highest_core = std::max(n.highest_core, c);
      if (c >= n.cores && n.cores < kNamedLimit)  // not c + 1 > ...: an entry may be any int64 of the input
        n.cores = static_cast<int>(std::min<int64_t>(c, kNamedLimit - 1) + 1), n.cores_at = at(p, &inst, f);
    });
    each_named_rank(inst, [&](int64_t r, const std::string &f) {
      n.highest_rank = std::max(n.highest_rank, r);
      if (r >= n.ranks && n.ranks < kNamedLimit)
        n.ranks = static_cast<int>(std::min<int64_t>(r, kNamedLimit - 1) + 1), n.ranks_at = at(p, &inst, f);
    });
  }
  each_shard_use(p, [&](int64_t ub, const isa::Inst *inst, const std::string &f) {
    if (ub > 1 && ub > n.lnc)
      n.lnc = static_cast<int>(std::min<int64_t>(ub, kNamedLimit)), n.lnc_at = at(p, inst, f);
  });
  return n;
}

void check_kernel_cores(const isa::Program &p, int cores, int lnc, const CoreSettingNames &names) {
  const int ranks = std::max(cores / std::max(lnc, 1), 1);
  each_shard_use(p, [&](int64_t ub, const isa::Inst *inst, const std::string &f) {
    if (ub > 1 && ub != lnc)
      throw InputError(at(p, inst, f), "ShardIDKind with ub " + std::to_string(ub) +
                                           ": the kernel is written for logical cores of " +
                                           std::to_string(ub) + " physical cores (LNC=" + std::to_string(ub) +
                                           "), " + run_text(cores, lnc, names) + ": run it with " +
                                           names.lnc + " " + std::to_string(ub));
  });
  for (const auto &inst : p.insts) {
    // The highest core the instruction names (a negative one first): the fewest cores it needs.
    int64_t worst = 0;
    std::string field;
    each_named_core(inst, [&](int64_t c, const std::string &f) {
      const bool negative_seen = !field.empty() && worst < 0;
      if (!negative_seen && (field.empty() || c < 0 || c > worst))
        worst = c, field = f;
    });
    if (!field.empty() && (worst < 0 || worst >= cores)) {
      std::string fix;  // (worst + 1 only below kMaxCores: an entry may be any int64 of the input)
      if (worst >= 0 && worst < kMaxCores)
        fix = ": run it with " + names.cores + " " + std::to_string(worst + 1) + " or more";
      else if (worst >= kMaxCores)
        fix = " (a run has at most " + std::to_string(kMaxCores) + " cores)";
      throw InputError(at(p, &inst, field),
                       "names core " + std::to_string(worst) + ", " + run_text(cores, lnc, names) + fix);
    }
    each_named_rank(inst, [&](int64_t r, const std::string &f) {
      if (r < 0 || r >= ranks)
        throw InputError(at(p, &inst, f), "names rank " + std::to_string(r) + ", " +
                                              run_text(cores, lnc, names) + ", which has " +
                                              std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s"));
    });
    if (!is_collective_compute(inst) || inst.f.replica_groups.empty())
      continue;
    // The groups of one collective partition the run's cores (reference sim-bn-rng-collective-dma.md 4: each
    // core's collective meets its group's members); a core in none would skip the collective (its output
    // unwritten).
    std::set<int64_t> seen;
    for (const auto &g : inst.f.replica_groups)
      for (int64_t c : g)
        if (!seen.insert(c).second)
          throw InputError(at(p, &inst, "replica_groups"),
                           "core " + std::to_string(c) + " is in two replica groups of one collective");
    const bool from_zero = !seen.empty() && *seen.rbegin() + 1 == static_cast<int64_t>(seen.size());
    for (int c = 0; c < cores; ++c)
      if (!seen.count(c))
        throw InputError(at(p, &inst, "replica_groups"),
                         "core " + std::to_string(c) + " is in none of the replica groups, and " +
                             run_text(cores, lnc, names) +
                             ": its collective would do nothing (give every core a "
                             "group" +
                             (from_zero
                                  ? ", or run it with " + names.cores + " " + std::to_string(seen.size())
                                  : std::string()) +
                             ")");
  }
}

} // namespace neuronsim::sim
