// Control-flow regions: blocks (nested blocks flatten), Loop, DynamicForLoop and DoWhile with their loop
// variables and named blocks (branch targets), and DMABlock descriptor lists. Every recursive reader counts
// its nesting against kMaxBlockNesting. Follows reference bir-json.md 1.1 and 1.6 (nesting; block, loop,
// axis), reference neuronx-cc/bir/json-schema-catalog.md (InstDynamicForLoop, InstDoWhile, InstDMABlock) and
// reference neuronx-cc/bir/sim-control-sync-customop.md 1.2-1.3 (what the regions mean).
#include <string>

#include "isa/bir/reader.hpp"

namespace neuronsim::isa::bir {

// A block's name (branch targets name blocks), "" when it has none.
std::string Reader::block_name(const json &b) {
  const json *bn = b.is_object() ? get(b, "name") : nullptr;
  return bn && bn->is_string() ? bn->get<std::string>() : "";
}

// DMABlock {name, queue, blocks | instructions}: a software-DGE descriptor list (reference
// neuronx-cc/bir/sim-bn-rng-collective-dma.md: "DMATrigger -> DMABlock -> descriptors"; reference
// neuronx-cc/bir/json-schema-catalog.md InstDMABlock). The reference does not give the key of its body; this
// reader takes `blocks` (as a Loop's) or `instructions`.
void Reader::read_dma_block(const json &j, std::vector<Node> &out) {
  Inst inst;
  inst.index = static_cast<int>(p_.insts.size());
  inst.type = InstructionType::DMABlock;
  cur_index_ = inst.index;
  cur_source_.clear();
  cur_name_ = get(j, "name") ? as_str(*get(j, "name"), "name") : "";
  if (cur_name_.empty())
    fail("name", "a DMABlock needs a name (DMATrigger.dma_blocks names it)");
  inst.name = name_prefix_ + cur_name_;
  inst.engine = Engine::DMA;
  read_fields(j, inst);
  warn_unknown_keys(j, InstructionType::DMABlock);
  Node node;
  node.kind = Node::Kind::DMABlock;
  node.inst = inst.index;
  node.name = inst.name;
  for (const auto &n : p_.insts)
    if (n.type == InstructionType::DMABlock && n.name == inst.name)
      fail("name", "duplicate DMABlock '" + inst.name + "'");
  p_.insts.push_back(std::move(inst));
  const std::string region = cur_name_;
  if (const json *blocks = get(j, "blocks")) {
    const json &b = as_arr(*blocks, "blocks");
    for (size_t i = 0; i < b.size(); ++i)
      read_block(b[i], "blocks[" + std::to_string(i) + "]", node.body);
  } else {
    read_block(j, "DMABlock '" + region + "'", node.body);
  }
  for (const auto &n : node.body) {
    const InstructionType t =
        n.kind == Node::Kind::Inst ? p_.insts[static_cast<size_t>(n.inst)].type : InstructionType::DMABlock;
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
int Reader::loop_var_for(const std::string &name) {
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

// DynamicForLoop {DynamicForLoopAxis {name, lb, ub, stride}, blocks} with bounds as integers or expressions
// (the upper bound typically an IntRuntimeValueKind register), and DoWhile {cond, blocks} (reference
// neuronx-cc/bir/json-schema-catalog.md: InstDynamicForLoop `name`, `DynamicForLoopAxis`, `lb`/`ub`/`stride`;
// InstDoWhile `cond`; reference neuronx-cc/bir/sim-control-sync-customop.md 1.2/1.3 for their meaning).
void Reader::read_region(const json &j, const std::string &opcode, std::vector<Node> &out) {
  Node node;
  cur_index_ = -1;
  auto bound = [&](const json &v, const std::string &f) {
    return v.is_number_integer() ? Expr::constant(as_int(v, f)) : read_expr(v, f);
  };
  if (opcode == "DynamicForLoop") {
    node.kind = Node::Kind::DynamicForLoop;
    const json *ax = get(j, "DynamicForLoopAxis");
    if (!ax)
      ax = get(j, "LoopAxis");
    cur_name_ = "DynamicForLoop";
    if (!ax)
      fail("DynamicForLoopAxis", "missing required key 'DynamicForLoopAxis'");
    as_obj(*ax, "DynamicForLoopAxis");
    const std::string name = as_str(need(*ax, "name", "DynamicForLoopAxis.name"), "DynamicForLoopAxis.name");
    cur_name_ = "DynamicForLoop '" + name + "'";
    node.lb_expr = get(*ax, "lb") ? bound(*get(*ax, "lb"), "DynamicForLoopAxis.lb") : Expr::constant(0);
    node.ub_expr = bound(need(*ax, "ub", "DynamicForLoopAxis.ub"), "DynamicForLoopAxis.ub");
    node.stride_expr =
        get(*ax, "stride") ? bound(*get(*ax, "stride"), "DynamicForLoopAxis.stride") : Expr::constant(1);
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
  if (node.var >= 0)
    scope_.push_back(node.var);
  for (size_t b = 0; b < blocks.size(); ++b) {
    node.blocks.emplace_back(block_name(blocks[b]), node.body.size());
    read_block(blocks[b], "blocks[" + std::to_string(b) + "]", node.body);
  }
  if (node.var >= 0)
    scope_.pop_back();
  out.push_back(std::move(node));
}

void Reader::read_loop(const json &j, std::vector<Node> &out) {
  std::string axis_name;
  const json *ax = get(j, "LoopAxis");
  if (ax && get(*ax, "name"))
    axis_name = as_str(*get(*ax, "name"), "LoopAxis.name");
  cur_index_ = -1;
  cur_name_ = "Loop '" + axis_name + "'";
  if (!ax)
    fail("LoopAxis", "missing required key 'LoopAxis'");
  as_obj(*ax, "LoopAxis");
  warn_unknown_level_keys(*ax, "loop_axis", "LoopAxis");
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
// instruction (the KLR reader's rule, reference bir-json.md 1.1).
void Reader::read_block(const json &b, const std::string &field, std::vector<Node> &out) {
  Depth depth(block_depth_);
  if (block_depth_ > kMaxBlockNesting)
    fail(field, "loops, blocks and calls nested deeper than " + std::to_string(kMaxBlockNesting) + " levels");
  as_obj(b, field);
  warn_unknown_level_keys(b, "block", field);
  const json &insts = as_arr(need(b, "instructions", field), field + ".instructions");
  for (size_t i = 0; i < insts.size(); ++i) {
    json held;  // an instruction expand_ made (reread_program): read, then freed with this iteration
    const json *given = &insts[i];
    if (expand_ && given->is_number_unsigned()) {
      held = expand_(given->get<size_t>());
      given = &held;
    }
    const json &e = *given;
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

} // namespace neuronsim::isa::bir
