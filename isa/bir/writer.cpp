// The BIR JSON writer: a Program as a version-2 module (one function "sg0000"; allocations as
// memory_location_set with one memory_location; Loop / DynamicForLoop / DoWhile / DMABlock regions with their
// blocks; v2 QuasiAffineExpr trees), in the form the reader reads back: parse_bir(to_bir_json(p)) reproduces
// p. Non-finite numbers are written as the strings KLR uses (reference bir-json.md 1.10).
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

#include "isa/bir/reader.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/inst_rules.hpp"

namespace neuronsim::isa {

namespace {

using json = nlohmann::json;
namespace only_sel = bir::only_sel;

json num_json(double v) {
  // Non-finite numbers as strings, as KLR writes them (reference bir-json.md 1.10).
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
// Iota-style `pattern` fields are written as {step, num} objects, as KLR's Core.APPair (reference
// bir-json.md 1.10).
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
  // reread_program: each instruction node is written as its index, its JSON made when the reader reads it.
  bool by_index = false;

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
        j["addrs"] = std::move(addrs);
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
        j["value_list"] = std::move(vl);
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
    j["ins"] = std::move(ins);
    j["outs"] = std::move(outs);
    const int type = static_cast<int>(in.type);
    (void)type;
    // Given fields, and every key the type requires (inst_keys.def) with its value, so that the reader, which
    // insists on required keys, reads back what was written.
    const auto &required = inst_keys(in.type).required;
    const auto is_required = [&](const char *key) {
      return std::find(required.begin(), required.end(), key) != required.end();
    };
#define NS_FIELD(member, key, kind, ctype, def, only, ...)                                                   \
  if ((only_sel::only < 0 || only_sel::only == type) && (in.has(Field::member) || is_required(key)))         \
    j[key] = write_value(in.f.member);
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
    // The QuasiAffineExpr-valued keys (isa::Inst::recv_from_rank, send_to_rank, iter_id_expr).
    if (!in.recv_from_rank.empty()) {
      json r = json::array();
      for (const auto &e : in.recv_from_rank) r.push_back(expr_to_json(e, p.loop_vars));
      j["recv_from_rank"] = std::move(r);
    }
    if (!in.send_to_rank.empty()) j["send_to_rank"] = expr_to_json(in.send_to_rank[0], p.loop_vars);
    if (!in.iter_id_expr.empty()) j["iter_id"] = expr_to_json(in.iter_id_expr[0], p.loop_vars);
    j["dependencies"] = in.dependencies;
    if (in.source_line >= 0) j["debug"]["lineno"] = in.source_line;
    if (!in.source_file.empty()) j["debug"]["filename"] = in.source_file;
    if (in.nki) j["debug"]["nki"] = nki_json(*in.nki);
    return j;
  }

  // debug.nki of an instruction (isa::NkiInfo; read by isa/bir/nki_debug.cpp).
  json nki_json(const NkiInfo &n) const {
    json loops = json::array();
    for (const auto &l : n.loops) {
      json o = {{"id", l.id}, {"kind", NkiInfo::kind_name(l.kind)}, {"trip", expr_to_json(l.trip, p.loop_vars)}};
      if (l.line >= 0) o["lineno"] = l.line;
      if (!l.var.empty()) o["var"] = l.var;
      if (l.start != 0) o["start"] = l.start;
      if (l.step != 1) o["step"] = l.step;
      loops.push_back(std::move(o));
    }
    json j = json::object();
    j["loops"] = std::move(loops);
    if (!n.local.empty()) j["local"] = n.local;
    if (!n.reduce.empty()) j["reduce"] = n.reduce, j["reduce_in"] = n.reduce_in;
    return j;
  }

  json nodes(const std::vector<Node> &body, int &block_counter) const {
    json a = json::array();
    for (const auto &n : body) {
      // A call is written as its instruction: its callee is written with the module's functions.
      if (n.kind == Node::Kind::Inst || n.kind == Node::Kind::Call) {
        if (n.inst >= 0 && n.inst < static_cast<int>(p.insts.size()))
          a.push_back(by_index ? json(static_cast<size_t>(n.inst)) : inst(p.insts[static_cast<size_t>(n.inst)]));
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
        blk["blocks"] = json::array();
        blk["blocks"].push_back(std::move(block));
        a.push_back(std::move(blk));
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
        blocks.push_back(std::move(block));
        from = to;
      };
      bool named = false;
      for (const auto &b : n.blocks)
        named = named || !b.first.empty();
      if (!named) {
        emit("", n.body.size());
      } else {
        if (n.blocks.front().second > 0)
          emit("", n.blocks.front().second);
        for (size_t b = 0; b < n.blocks.size(); ++b)
          emit(n.blocks[b].first, b + 1 < n.blocks.size() ? n.blocks[b + 1].second : n.body.size());
      }
      loop["blocks"] = std::move(blocks);
      a.push_back(std::move(loop));
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
    json a = {{"Skind", "memory_location_set"},
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
    if (t.inout) a["inout"] = true;
    if (t.nki) {
      json n = {{"shape", t.nki->shape}, {"pdim", t.nki->pdim}, {"buffers", t.nki->buffers}, {"cols", t.nki->cols}};
      if (t.nki->argument) n["argument"] = true;
      a["debug"]["nki"] = n;
    }
    return a;
  }

  json module() const {
    json allocs = json::array();
    for (const auto &t : p.tensors)
      if (t.owner.empty())
        allocs.push_back(tensor_json(t));
    int block_counter = 1;
    json fn = {{"name", "sg0000"}, {"attributes", json::array()}};
    fn["allocations"] = std::move(allocs);
    if (p.blocks.empty()) {
      json block = {{"name", "Block1"}};
      block["instructions"] = nodes(p.body, block_counter);
      fn["blocks"] = json::array();
      fn["blocks"].push_back(std::move(block));
    } else {
      // Named top-level blocks (branch targets) are written as the function's basic blocks; nodes before the
      // first named block go into a leading block of their own.
      json blocks = json::array();
      auto emit = [&](const std::string &name, size_t from, size_t to) {
        std::vector<Node> part(p.body.begin() + static_cast<std::ptrdiff_t>(from),
                               p.body.begin() + static_cast<std::ptrdiff_t>(to));
        json block = {{"name", name}};
        block["instructions"] = nodes(part, block_counter);
        blocks.push_back(std::move(block));
      };
      if (p.blocks.front().first > 0)
        emit("Block0", 0, p.blocks.front().first);
      for (size_t b = 0; b < p.blocks.size(); ++b)
        emit(p.blocks[b].name, p.blocks[b].first,
             b + 1 < p.blocks.size() ? p.blocks[b + 1].first : p.body.size());
      fn["blocks"] = std::move(blocks);
    }
    json m = {
        {"arch", p.arch.empty() ? "gen3" : p.arch}, {"version", 2}, {"attributes", {{"neuron_core_id", 0}}}};
    m["functions"] = json::array();
    m["functions"].push_back(std::move(fn));
    json nki = json::array();
    for (const auto &c : p.callees)
      (c.nki ? nki : m["functions"]).push_back(json::parse(c.json));
    if (!nki.empty())
      m["nki_functions"]["functions"] = std::move(nki);
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
    json j = {{"kind", "AffExprKind"}, {"c", e.c}};
    j["terms"] = std::move(terms);
    return j;
  }
  case Expr::Kind::Sum: {
    json terms = json::array();
    for (const auto &k : e.kids)
      terms.push_back(expr_to_json(k, loop_vars));
    if (e.c != 0)
      terms.push_back(expr_to_json(Expr::constant(e.c), loop_vars));
    json j = {{"kind", "SumKind"}, {"n_terms", terms.size()}};
    j["terms"] = std::move(terms);
    return j;
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
  case Expr::Kind::ShardId:
    return {{"kind", "ShardIDKind"}, {"ub", e.k}};
  }
  return {{"kind", "AffExprKind"}, {"terms", json::array()}, {"c", 0}};
}

json to_bir_json(const Program &p) {
  return Writer{p}.module();
}

Program reread_program(const Program &p, const std::string &file_for_messages) {
  Writer w{p, true};
  const json skeleton = w.module();
  bir::Reader r(skeleton, file_for_messages);
  r.expand_with([&w](size_t i) { return w.inst(w.p.insts.at(i)); });
  return r.run();
}

} // namespace neuronsim::isa
