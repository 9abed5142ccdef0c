// The module: its version, the function it runs ("main", else the first), the other functions and the
// nki_functions as callees of Call / NKIKernel, and the loader's second pass over names (DMABlocks,
// dependencies; reference neuronx-cc/bir/json-loader.md). parse_bir and read_bir_file enter here.
#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "isa/bir/reader.hpp"
#include "neuronsim/isa/file_input.hpp"

namespace neuronsim::isa::bir {

Program Reader::run() {
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

namespace {

struct LevelKeys {
  const char *level;
  const char *what;
  std::vector<std::string> keys;
  std::unordered_set<std::string> known;  // the same keys, for the lookup of every key of every object
};

std::vector<std::string> words(const char *list) {
  std::vector<std::string> v;
  std::string w;
  for (const char *c = list;; ++c) {
    if (*c == ' ' || *c == 0) {
      if (!w.empty())
        v.push_back(w);
      w.clear();
      if (!*c)
        break;
    } else {
      w += *c;
    }
  }
  return v;
}

const std::vector<LevelKeys> &level_keys() {
  static const std::vector<LevelKeys> rows = [] {
    std::vector<LevelKeys> v = {
#define NS_BIR_KEYS(level, what, keys) {#level, what, words(keys), {}},
#include "isa/tables/bir_keys.def"
#undef NS_BIR_KEYS
    };
    for (auto &r : v)
      r.known.insert(r.keys.begin(), r.keys.end());
    return v;
  }();
  return rows;
}

// How many elements a block holds, nested blocks and regions' blocks included (each region counted too): at
// least the instructions they read as, short of callees. Bounded in depth as the reader is.
int64_t block_elements(const json &block, int depth) {
  if (!block.is_object() || depth > kMaxBlockNesting)
    return 0;
  const auto list = block.find("instructions");
  if (list == block.end() || !list->is_array())
    return 0;
  int64_t n = 0;
  for (const auto &e : *list) {
    if (e.is_object() && e.contains("instructions")) {
      n += block_elements(e, depth + 1);
      continue;
    }
    ++n;
    if (const auto sub = e.is_object() ? e.find("blocks") : e.end(); sub != e.end() && sub->is_array())
      for (const auto &b : *sub)
        n += block_elements(b, depth + 1);
  }
  return n;
}

} // namespace

void Reader::warn_unknown_level_keys(const json &o, const char *level, const std::string &field) {
  if (!o.is_object())
    return;
  const LevelKeys *row = nullptr;
  for (const auto &r : level_keys())
    if (std::strcmp(r.level, level) == 0)
      row = &r;
  if (!row)
    throw std::logic_error(std::string("bir_keys.def has no level ") + level);
  for (auto it = o.begin(); it != o.end(); ++it) {
    const std::string &k = it.key();
    if (row->known.count(k))
      continue;
    if (!warned_levels_.insert({level, k}).second)
      continue;
    const std::string near = did_you_mean(k, row->keys);
    const std::string f = field.empty() ? k : field + "." + k;
    const std::string text = "unknown key of " + std::string(row->what) + ", ignored" + near;
    p_.warnings.push_back(Error::format(ctx(f), text));
    if (structural_note_.empty())
      structural_note_ = "note: the unknown key '" + f + "' of " + row->what + " was ignored" + near;
  }
}

void Reader::read_module() {
  as_obj(root_, "");
  warn_unknown_level_keys(root_, "module", "");
  // The version selects only the QuasiAffineExpr encoding (reference neuronx-cc/bir/wire-versioning.md); the
  // forms are told apart by shape here, but a version other than 1 or 2 is rejected as the compiler does.
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
  // reference neuronx-cc/bir/json-loader.md D8: the loader looks up "main" and falls back to the first
  // function.
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
  warn_unknown_level_keys(fn, "function", "");
  if (const json *al = get(fn, "allocations")) {
    const json &a = as_arr(*al, "allocations");
    for (size_t i = 0; i < a.size(); ++i)
      read_allocation(a[i], "allocations[" + std::to_string(i) + "]");
  }
  const json &blocks = as_arr(need(fn, "blocks", "blocks"), "blocks");
  // Room for the instructions up front: an isa::Inst is ~2 KB, and moving every instruction read so far each time
  // the vector grew was a third of reading a 10,000-instruction program (perf). A callee's are not counted.
  int64_t elements = 0;
  for (const auto &b : blocks)
    elements += block_elements(b, 0);
  p_.insts.reserve(static_cast<size_t>(std::min(elements, kMaxStaticInstructions + 1)));
  for (size_t b = 0; b < blocks.size(); ++b) {
    // Branch targets name these blocks (reference neuronx-cc/bir/sim-control-sync-customop.md section 2).
    p_.blocks.push_back(Program::Block{block_name(blocks[b]), p_.body.size()});
    read_block(blocks[b], "blocks[" + std::to_string(b) + "]", p_.body);
  }
  // Pass 2 (reference neuronx-cc/bir/json-loader.md): a DMATrigger's blocks must exist ("Block does not
  // exist!"), and so must the block a queue-instance reset names.
  auto has_block = [&](const std::string &n) {
    for (const auto &o : p_.insts)
      if (o.type == InstructionType::DMABlock && o.name == n)
        return true;
    return false;
  };
  for (const auto &inst : p_.insts) {
    cur_index_ = inst.index;
    cur_name_ = inst.name;
    if (inst.type == InstructionType::DMATrigger) {
      if (inst.f.dma_blocks.empty())
        fail("dma_blocks", "a DMATrigger needs at least one DMABlock to fire");
      for (size_t i = 0; i < inst.f.dma_blocks.size(); ++i)
        if (!has_block(inst.f.dma_blocks[i]))
          fail("dma_blocks[" + std::to_string(i) + "]", "no DMABlock named '" + inst.f.dma_blocks[i] + "'");
    }
    if ((inst.type == InstructionType::SwitchQueueInstance ||
         inst.type == InstructionType::ResetQueueInstance) &&
        !inst.f.instance_name.empty() && !has_block(inst.f.instance_name))
      fail("instance_name", "no DMABlock named '" + inst.f.instance_name + "'");
  }
  cur_index_ = -1;
  cur_name_.clear();
  check_dependencies();
}

// Pass 2 (reference neuronx-cc/bir/json-loader.md): `dependencies` may name instructions defined later; each
// must exist. They are the order the compiler wrote down within an iteration (a loop's carried edges are the
// separate `loop_carried_dependencies`), so they cannot form a cycle: an instruction that waits for itself, or
// two that wait for each other, has no order to run in, and is refused naming the instructions of the cycle.
// Names are looked up in a table and the cycle found by an iterative depth-first walk: linear in the program,
// never recursing on its depth.
void Reader::check_dependencies() {
  std::unordered_map<std::string, std::vector<int>> by_name;
  for (const auto &inst : p_.insts)
    by_name[inst.name].push_back(inst.index);
  std::vector<std::vector<std::pair<int, size_t>>> edges(p_.insts.size());  // (instruction, dependency index)
  for (const auto &inst : p_.insts) {
    for (size_t i = 0; i < inst.dependencies.size(); ++i) {
      const auto it = by_name.find(inst.dependencies[i]);
      cur_index_ = inst.index;
      cur_name_ = inst.name;
      const std::string field = "dependencies[" + std::to_string(i) + "]";
      if (it == by_name.end())
        fail(field, "unknown dependency '" + inst.dependencies[i] + "'");
      for (const int d : it->second) {
        if (d == inst.index)
          fail(field, "'" + inst.dependencies[i] + "' is this instruction: it would wait for itself (a "
                                                       "dependency cycle)");
        edges[static_cast<size_t>(inst.index)].emplace_back(d, i);
      }
    }
  }
  cur_index_ = -1;
  cur_name_.clear();
  enum : char { New, Open, Done };
  std::vector<char> state(p_.insts.size(), New);
  struct Frame {
    int inst;
    size_t next;
  };
  std::vector<Frame> stack;
  for (size_t root = 0; root < p_.insts.size(); ++root) {
    if (state[root] != New)
      continue;
    stack.push_back({static_cast<int>(root), 0});
    state[root] = Open;
    while (!stack.empty()) {
      Frame &f = stack.back();
      const auto &out = edges[static_cast<size_t>(f.inst)];
      if (f.next == out.size()) {
        state[static_cast<size_t>(f.inst)] = Done;
        stack.pop_back();
        continue;
      }
      const auto [to, dep] = out[f.next++];
      if (state[static_cast<size_t>(to)] == New) {
        state[static_cast<size_t>(to)] = Open;
        stack.push_back({to, 0});
      } else if (state[static_cast<size_t>(to)] == Open) {
        // The frames from `to` to the top are the cycle: each waits for the next, the last for `to`.
        std::string cycle;
        size_t k = stack.size();
        while (stack[k - 1].inst != to)
          --k;
        for (size_t j = k - 1; j < stack.size(); ++j)
          cycle += "'" + p_.insts[static_cast<size_t>(stack[j].inst)].name + "' -> ";
        cycle += "'" + p_.insts[static_cast<size_t>(to)].name + "'";
        cur_index_ = f.inst;
        cur_name_ = p_.insts[static_cast<size_t>(f.inst)].name;
        fail("dependencies[" + std::to_string(dep) + "]",
             "a dependency cycle: " + cycle + " (each waits for the next, so none can run)");
      }
    }
  }
}

// Call (target = a function of `functions`) and NKIKernel (func = a function of `nki_functions.functions`, or
// of `functions`) run the callee in place: birsim recurses its visitor over the callee's blocks
// (reference neuronx-cc/bir/sim-control-sync-customop.md 2.4) and expands NKIKernel into a synthetic Call +
// Return (6.2). The reference does not give the JSON form of the argument map (FunctionArgumentMap); this
// reader binds by position, as a call passes arguments: the callee's input allocations (kind ExternalInput /
// ExternalInputParameter / Input / Const), in allocation order, are the tensors of the call's `ins`, its
// output allocations the tensors of its `outs`. Each actual must be an access pattern over a whole tensor of
// the same dtype and element count. The callee's other allocations become tensors "<function>/<name>" shared
// by its call sites.
void Reader::expand_call(Node &node) {
  const Inst &call = p_.insts[static_cast<size_t>(node.inst)];
  const bool nki = call.type == InstructionType::NKIKernel;
  const char *key = nki ? "func" : "target";
  const std::string &callee = nki ? call.f.nki_func : call.f.target;
  // birsim: "I.getFunc() != nullptr" (NeuronAssertion 250).
  if (callee.empty())
    fail(key, "an NKIKernel needs its sub-function: missing 'func'");
  const FnRef *ref = nullptr;
  for (int pass = 0; pass < 2 && !ref; ++pass) // NKIKernel looks in nki_functions first
    for (const auto &f : fns_)
      if (f.first == callee && (pass == 1 || f.second.nki == nki)) {
        ref = &f.second;
        break;
      }
  if (!ref)
    fail(key, "no function named '" + callee + "' in the module");
  // Each call expands its callee in place: a call graph that doubles at every level would take exponential
  // time and memory to read, so its size is counted first.
  if (static_cast<int64_t>(p_.insts.size()) + expanded_size(callee, 0) > kMaxStaticInstructions)
    fail(key, "calling '" + callee + "' expands to more than " + std::to_string(kMaxStaticInstructions) +
                  " instructions (calls expand their callee in place)");
  for (const auto &c : call_stack_)
    if (c == callee)
      fail(key, "function '" + callee + "' calls itself (recursion is not supported)");
  const json &fn = *ref->fn;
  const std::string ffield =
      std::string(ref->nki ? "nki_functions.functions" : "functions") + " '" + callee + "'";

  // The callee's allocations: parameters bind to the call's operands, the rest are its own tensors.
  std::unordered_map<std::string, int> bind;
  const bool first = fn_locals_.find(callee) == fn_locals_.end();
  auto &locals = fn_locals_[callee];
  size_t n_in = 0, n_out = 0;
  warn_unknown_level_keys(fn, "function", ffield);
  const json *al = get(fn, "allocations");
  const json empty = json::array();
  const json &allocs = al ? as_arr(*al, ffield + ".allocations") : empty;
  Program scratch; // read each allocation with the usual rules, then place it
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
        fail(af, "parameter '" + t.name + "' of '" + callee + "' is " + std::string(enum_name(t.dtype)) +
                     " x " + std::to_string(t.num_elements()) + ", the call passes '" + actual.name + "' (" +
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
         "the call passes " + std::to_string(call.ins.size()) + " inputs and " +
             std::to_string(call.outs.size()) + " outputs; function '" + callee + "' takes " +
             std::to_string(n_in) + " and " + std::to_string(n_out));
  for (const auto &l : locals)
    bind.emplace(l.first, l.second);
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

// The instructions a function expands to (its own plus, per call, its callee's expansion), saturating just
// past kMaxStaticInstructions; memoized per function. Deeper than kMaxBlockNesting counts nothing more
// (reading it fails on the nesting limit).
int64_t Reader::expanded_size(const std::string &fname, int depth) {
  if (auto it = sizes_.find(fname); it != sizes_.end())
    return it->second;
  if (depth > kMaxBlockNesting)
    return 0;
  const json *fn = nullptr;
  for (const auto &f : fns_)
    if (f.first == fname)
      fn = f.second.fn;
  if (!fn)
    return 0;
  sizes_[fname] = 0; // while it is counted: a call cycle counts nothing more (reading it is refused anyway)
  int64_t n = 0;
  const std::function<void(const json &)> count = [&](const json &blocks) {
    if (!blocks.is_array())
      return;
    for (const auto &b : blocks) {
      const json *list = get(b, "instructions");
      if (!list || !list->is_array())
        continue;
      for (const auto &i : *list) {
        if (n > kMaxStaticInstructions)
          return;
        if (!i.is_object())
          continue;
        if (get(i, "instructions")) {
          count(json::array({i}));
          continue;
        }
        if (const json *sub = get(i, "blocks"))
          count(*sub);
        ++n;
        const json *op = get(i, "opcode");
        const char *key = op && op->is_string() && *op == "NKIKernel" ? "func" : "target";
        if (op && op->is_string() && (*op == "Call" || *op == "NKIKernel"))
          if (const json *t = get(i, key); t && t->is_string())
            n += expanded_size(t->get<std::string>(), depth + 1);
      }
    }
  };
  if (const json *blocks = get(*fn, "blocks"))
    count(*blocks);
  return sizes_[fname] = std::min(n, kMaxStaticInstructions + 1);
}

} // namespace neuronsim::isa::bir

namespace neuronsim::isa {

Program parse_bir(const nlohmann::json &j, const std::string &file_for_messages) {
  return bir::Reader(j, file_for_messages).run();
}

Program read_bir_file(const std::string &path) {
  // A regular file of bounded size, parsed with a bounded depth; errors name the byte offset or JSON path.
  return parse_bir(read_json_file(path, "kernel"), path);
}

} // namespace neuronsim::isa
