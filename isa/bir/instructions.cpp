// One instruction: its opcode and engine (checked against the type's table row), its operands, the typed
// fields of isa/tables/inst_fields.def, its required and unknown keys (inst_keys.def) and its dependencies. A
// Call or NKIKernel expands its callee in place (document.cpp). Follows reference bir-json.md 1.7 (the
// instruction object), reference neuronx-cc/bir/json-schema-catalog.md (per-type keys, required vs optional)
// and reference neuronx-cc/bir/json-loader.md (engines, dependencies).
#include <algorithm>
#include <cstring>

#include "isa/bir/reader.hpp"
#include "neuronsim/isa/inst_rules.hpp"

namespace neuronsim::isa::bir {

const char *inst_family(InstructionType t) {
#define NS_IT(ord, name, family) family,
  static const char *families[] = {
#include "neuronsim/isa/tables/instruction_types.def"
  };
#undef NS_IT
  int i = static_cast<int>(t);
  return (i >= 0 && i < kNumInstructionTypes) ? families[i] : "";
}

namespace {

// Instructions that carry no operands may omit ins/outs; every other opcode moves or computes data and must
// say what (reference bir-json.md 1.7: `ins`/`outs` are part of every instruction KLR and the compiler
// write).
bool needs_operands(InstructionType t) {
  std::string f = inst_family(t);
  return f != "control" && f != "sync" && f != "region";
}

} // namespace

// One overload per C++ type a row of inst_fields.def can have; the generic loop in read_fields picks by
// type.
void Reader::read_value(const json &v, bool &out, const std::string &f) const {
  out = as_bool(v, f);
}

void Reader::read_value(const json &v, int64_t &out, const std::string &f) const {
  out = as_int(v, f);
}

void Reader::read_value(const json &v, double &out, const std::string &f) const {
  out = as_num(v, f);
}

void Reader::read_value(const json &v, std::string &out, const std::string &f) const {
  out = as_str(v, f);
}

void Reader::read_value(const json &v, std::vector<int64_t> &out, const std::string &f) const {
  out = as_int_list(v, f);
}

void Reader::read_value(const json &v, std::vector<double> &out, const std::string &f) const {
  out.clear();
  const json &a = as_arr(v, f);
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(as_num(a[i], f + "[" + std::to_string(i) + "]"));
}

void Reader::read_value(const json &v, std::vector<std::string> &out, const std::string &f) const {
  out.clear();
  const json &a = as_arr(v, f);
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(as_str(a[i], f + "[" + std::to_string(i) + "]"));
}

void Reader::read_value(const json &v, std::vector<std::vector<int64_t>> &out, const std::string &f) const {
  out.clear();
  const json &a = as_arr(v, f);
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(as_int_list(a[i], f + "[" + std::to_string(i) + "]"));
}

void Reader::read_value(const json &v, std::vector<ApDim> &out, const std::string &f) const {
  out = as_pattern(v, f);
}

void Reader::read_value(const json &v, AluOp &out, const std::string &f) const {
  out = parse_alu(as_str(v, f), ctx(f));
}

template <typename E, typename> void Reader::read_value(const json &v, E &out, const std::string &f) const {
  out = parse_enum<E>(as_str(v, f), ctx(f));
}

void Reader::read_fields(const json &j, Inst &inst) const {
  const int type = static_cast<int>(inst.type);
  (void)type;
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  if (only_sel::only < 0 || only_sel::only == type) {                                                        \
    if (const json *v = get(j, key)) {                                                                       \
      if (!maybe_affine_expr(*v, key))                                                                       \
        read_value(*v, inst.f.member, key);                                                                  \
      inst.given.set(static_cast<int>(Field::member));                                                       \
    }                                                                                                        \
  }
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  read_rank_exprs(j, inst);
}

// GetCurProcessingRankID's iter_id / channel_id are MaybeAffine<uint> (reference
// neuronx-cc/bir/json-schema-catalog.md: "a scalar or an affine-expr object under the same key"): an object
// is read by read_rank_exprs, not as a number.
bool Reader::maybe_affine_expr(const json &v, const char *key) {
  return v.is_object() && (std::strcmp(key, "iter_id") == 0 || std::strcmp(key, "channel_id") == 0);
}

// A rank expression is evaluated once per core when the instruction executes (engines/ops/collective.cpp), with
// the core's shard id and registers but no loop iteration: a loop variable in it is refused.
static bool has_loop_var(const Expr &e) {
  if (e.kind == Expr::Kind::LoopVar) return true;
  for (const auto &k : e.kids)
    if (has_loop_var(k)) return true;
  return false;
}

Expr Reader::rank_expr(const json &v, const std::string &field) const {
  Expr e = read_expr(v, field);
  if (has_loop_var(e))
    fail(field, "a loop variable in a rank expression is not supported (it is evaluated once per core, with its "
                "shard id and registers)");
  return e;
}

// CollectiveCompute recv_from_rank [QAE] / send_to_rank QAE (reference bir-json.md 2.2) and GetCurProcessingRankID
// iter_id / channel_id given as expressions.
void Reader::read_rank_exprs(const json &j, Inst &inst) const {
  if (inst.type == InstructionType::CollectiveCompute) {
    if (const json *r = get(j, "recv_from_rank")) {
      const json &a = as_arr(*r, "recv_from_rank");
      for (size_t i = 0; i < a.size(); ++i)
        inst.recv_from_rank.push_back(rank_expr(a[i], "recv_from_rank[" + std::to_string(i) + "]"));
    }
    if (const json *s = get(j, "send_to_rank")) inst.send_to_rank.push_back(rank_expr(*s, "send_to_rank"));
  }
  if (inst.type == InstructionType::GetCurProcessingRankID) {
    if (const json *it = get(j, "iter_id"); it && it->is_object()) inst.iter_id_expr.push_back(rank_expr(*it, "iter_id"));
    if (const json *c = get(j, "channel_id"); c && c->is_object()) (void)rank_expr(*c, "channel_id");  // unused
  }
}

// Keys the table does not list for the type: one warning per key name, naming the closest known key.
void Reader::warn_unknown_keys(const json &j, InstructionType type) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string &k = it.key();
    if (is_known_key(type, k) || !warned_.insert(k).second)
      continue;
    const std::string near = closest_key(type, k);
    p_.warnings.push_back(Error::format(ctx(k), std::string("unknown key for ") + inst_type_name(type) +
                                                    ", ignored" +
                                                    (near.empty() ? "" : " (did you mean '" + near + "'?)")));
  }
}

// Required keys (inst_keys.def, after reference neuronx-cc/bir/json-schema-catalog.md "Required vs
// optional"): the compiler's loader reads them with json.at(), so a missing or null one is an error here too,
// never a default. A present key that is one edit away is named as the likely misspelling.
void Reader::check_required_keys(const json &j, InstructionType type) const {
  for (const auto &key : inst_keys(type).required) {
    if (get(j, key.c_str()))
      continue;
    std::string hint;
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!is_known_key(type, it.key()) && closest_key(type, it.key()) == key)
        hint = it.key();
    const bool null = j.contains(key);
    fail(key,
         std::string(null ? "required key '" + key + "' is null" : "missing required key '" + key + "'") +
             " (" + inst_type_name(type) + " requires: " + join(inst_keys(type).required) + ")" +
             (hint.empty() ? "" : "; the instruction has '" + hint + "': misspelt?"));
  }
}

std::string Reader::join(const std::vector<std::string> &v) {
  std::string s;
  for (const auto &x : v)
    s += (s.empty() ? "" : ", ") + x;
  return s;
}

// An engine the type's table row does not list (instruction_wire.def + engines_allowed.def).
void Reader::check_engine(InstructionType type, Engine e) const {
  if (!engine_allowed(type, e))
    fail("engine", std::string(inst_type_name(type)) + " cannot run on " + enum_name(e) + " (it runs on " +
                       allowed_engines_text(type) + ")");
}

void Reader::read_instruction(const json &j, std::vector<Node> &out) {
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
  // The debug information first, so that every message about this instruction can name its source line.
  cur_source_.clear();
  if (const json *dbg = get(j, "debug")) {
    if (const json *ln = get(*dbg, "lineno"))
      inst.source_line = static_cast<int>(as_int(*ln, "debug.lineno"));
    if (const json *fn = get(*dbg, "filename")) inst.source_file = as_str(*fn, "debug.filename");
  }
  cur_source_ = source_location(inst);
  const std::string &opcode = as_str(need(j, "opcode", "opcode"), "opcode");
  auto type = inst_type_from_name(opcode);
  if (!type) {
    std::vector<std::string> names;
    for (int i = 0; i < kNumInstructionTypes; ++i)
      names.push_back(inst_type_name(static_cast<InstructionType>(i)));
    fail("opcode", "unknown opcode '" + opcode + "'" + did_you_mean(opcode, names) +
                       " (`neuronsim isa --explain` lists the types)");
  }
  inst.type = *type;
  if (const json *e = get(j, "engine"))
    inst.engine = parse_enum<Engine>(as_str(*e, "engine"), ctx("engine"));
  check_engine(inst.type, inst.engine);
  bool need_ops = needs_operands(inst.type);
  inst.ins = read_args(j, "ins", need_ops);
  inst.outs = read_args(j, "outs", need_ops);
  if (const json *dbg = get(j, "debug"))
    if (const json *nki = get(*dbg, "nki")) inst.nki = read_nki_info(*nki, inst);
  for (const char *side : {"ins", "outs"})
    if (const json *list = get(j, side))
      for (size_t i = 0; i < list->size(); ++i)
        warn_unknown_level_keys((*list)[i], "argument", std::string(side) + "[" + std::to_string(i) + "]");
  read_fields(j, inst);
  check_required_keys(j, inst.type);
  // IndirectCopy uses the first num_valid_indices of the indices ins[1] holds (engines/ops/indirect.cpp): a negative
  // count is no count, refused here; the upper bound needs the indices' shape and is checked when the schedule is
  // made (sim/schedule_queues.cpp).
  if (inst.type == InstructionType::IndirectCopy && inst.has(Field::num_valid_indices) && inst.f.num_valid_indices < 0)
    fail("num_valid_indices", "num_valid_indices " + std::to_string(inst.f.num_valid_indices) +
                                  " is not within the indices ins[1] holds (a count of 0 or more)");
  // birsim models PermuteReduce (kind 8) as an identity copy (reference neuronx-cc/bir/sim-bn-rng-collective-dma.md
  // 4, QUIRK); so does neuronsim (engines/ops/collective.cpp): say so once per instruction.
  if (inst.type == InstructionType::CollectiveCompute && inst.f.collective_kind == "PermuteReduce")
    p_.warnings.push_back(Error::format(ctx("kind"), "CollectiveCompute kind PermuteReduce follows birsim: an identity "
                                                     "copy of each rank's input to its output, no reduction"));
  warn_unknown_keys(j, inst.type);
  // dependencies: a bare name (a Flow edge) or [name, kind] (reference neuronx-cc/bir/json-loader.md, pass
  // 2); {id|name, kind} objects as the writer page describes them are accepted too. Only the names are kept.
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

} // namespace neuronsim::isa::bir
