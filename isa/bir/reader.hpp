// The BIR JSON reader's inside, shared by its files (not a public header). include/neuronsim/isa/bir_json.hpp
// gives the format and the decisions; the reader is one class, Reader, whose members live by concern:
//   values.cpp           errors (the file / instruction / key context of every InputError), typed access to
//                        JSON values, access-pattern pairs, checked 64-bit arithmetic
//   document.cpp         the module: version, the function read and its callees, the second pass over names;
//                        Call / NKIKernel expansion; parse_bir and read_bir_file
//   allocations.cpp      allocations: memory_location_set / memory_location -> Tensor
//   expressions.cpp      QuasiAffineExpr, v1 flat affine and v2 {kind: ...} trees
//   access_patterns.cpp  instruction operands: physical / symbolic / register access patterns, immediates
//   instructions.cpp     one instruction: opcode, engine, operands, the inst_fields.def fields, required and
//                        unknown keys, dependencies
//   regions.cpp          blocks, Loop, DynamicForLoop, DoWhile and DMABlock regions
// writer.cpp holds the writer (Program -> version-2 BIR JSON); it shares only the inst_fields.def selector
// below.
//
// The reader never trusts the document: every value's JSON type is checked before it is converted, and every
// problem becomes an InputError carrying the file, the instruction index/name and the key. Nulls count as
// absent (reference bir-json.md 1.10: KLR writes `Option` fields as null). An instruction's keys are checked
// against isa/tables/inst_keys.def: a missing or null required key is an InputError (the compiler's loader
// reads it with json.at() and throws, reference neuronx-cc/bir/json-schema-catalog.md "Required vs
// optional"); a key the table does not list for the type is ignored with one warning per key name
// (Program::warnings), naming the closest known key. The base header's bookkeeping keys (descendants, order,
// predicates, loopnest, ...) are known.
//
// Depth: loops, blocks and calls nest at most kMaxBlockNesting levels and expressions kMaxExprDepth levels
// (bir_json.hpp); the document itself is parsed with a bounded depth (file_input.hpp). Every size, offset and
// coefficient read is combined with checked 64-bit arithmetic.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/names.hpp"
#include "neuronsim/isa/program.hpp"

namespace neuronsim::isa::bir {

using json = nlohmann::json;

// The ONLY column of inst_fields.def names an InstructionType (or ANY); these constants let the generic field
// loops of the reader and the writer compare it with the instruction's type.
namespace only_sel {
constexpr int ANY = -1;
#define NS_IT(ord, name, family) constexpr int name = ord;
#include "neuronsim/isa/tables/instruction_types.def"
#undef NS_IT
} // namespace only_sel

// The family column of instruction_types.def ("control", "dma", ...), "" for an out-of-range type.
const char *inst_family(InstructionType t);

inline std::string type_name_of(const json &v) {
  return v.type_name();
}

class Reader {
public:
  Reader(const json &root, std::string file) : root_(root) { p_.file = std::move(file); }

  Program run(); // document.cpp
  // reread_program (writer.cpp): a block element that is an unsigned number k stands for instruction k, whose
  // JSON `expand` makes when the reader comes to it (and is freed once it is read). Without it such an element
  // is refused as any non-object is.
  void expand_with(std::function<json(size_t)> expand) { expand_ = std::move(expand); }

private:
  const json &root_;
  std::function<json(size_t)> expand_;
  Program p_;
  std::string func_;    // function being read, for messages
  long cur_index_ = -1; // instruction being read, for messages
  std::string cur_name_;
  std::string cur_source_; // its debug source location while it is read (not yet in p_.insts)
  std::vector<int> scope_; // active loop variables, innermost last
  // Call / NKIKernel callees (reference neuronx-cc/bir/sim-control-sync-customop.md 2.4, 6.2;
  // neuronx-cc/bir/json-loader.md: `nki_functions` holds the NKI sub-functions). While a callee is read, its
  // allocation names resolve through `bind_` only.
  struct FnRef {
    const json *fn = nullptr;
    bool nki = false;
  };
  std::vector<std::pair<std::string, FnRef>> fns_;
  std::unordered_map<std::string, int> *bind_ = nullptr;
  std::vector<std::string> call_stack_; // functions being expanded (recursion guard)
  std::string name_prefix_;             // "<call>/" while a callee is read
  std::unordered_map<std::string, std::unordered_map<std::string, int>> fn_locals_; // per callee: its tensors
  std::unordered_map<std::string, int64_t> sizes_; // expanded_size per function (memo)
  int block_depth_ = 0;                            // read_block nesting (kMaxBlockNesting)
  mutable int expr_depth_ = 0;                     // read_expr nesting (kMaxExprDepth)
  std::set<std::string> warned_; // unknown keys already warned about (one warning per key name)
  std::set<std::pair<std::string, std::string>> warned_levels_; // (level, key) of bir_keys.def, warned about
  // The first unknown structural key ignored so far, as a note for a later error (fail() appends it).
  std::string structural_note_;

  // Counts one level of a recursive reader for as long as it is in scope.
  struct Depth {
    int &d;
    explicit Depth(int &x) : d(x) { ++d; }
    ~Depth() { --d; }
    Depth(const Depth &) = delete;
    Depth &operator=(const Depth &) = delete;
  };

  // A present, non-null member, or nullptr.
  static const json *get(const json &o, const char *key) {
    if (!o.is_object())
      return nullptr;
    auto it = o.find(key);
    if (it == o.end() || it->is_null())
      return nullptr;
    return &*it;
  }

  // ------------------------------------------------------------------------- values.cpp
  ErrorContext ctx(const std::string &field) const;
  [[noreturn]] void fail(const std::string &field, const std::string &msg) const;
  const json &need(const json &o, const char *key, const std::string &field) const;
  int64_t as_int(const json &v, const std::string &field) const;
  double as_num(const json &v, const std::string &field) const;
  bool as_bool(const json &v, const std::string &field) const;
  const std::string &as_str(const json &v, const std::string &field) const;
  const json &as_arr(const json &v, const std::string &field) const;
  const json &as_obj(const json &v, const std::string &field) const;
  std::vector<int64_t> as_int_list(const json &v, const std::string &field) const;
  ApDim as_pair(const json &v, const std::string &field) const;
  std::vector<ApDim> as_pattern(const json &v, const std::string &field) const;
  int64_t mul(int64_t a, int64_t b, const std::string &field) const;
  int64_t add(int64_t a, int64_t b, const std::string &field) const;

  // ------------------------------------------------------------------------- document.cpp
  void read_module();
  // Keys of `o` outside its level's row of isa/tables/bir_keys.def: one warning per (level, key), `field` the
  // object's place ("allocations[2]"; "" for the module).
  void warn_unknown_level_keys(const json &o, const char *level, const std::string &field);
  void expand_call(Node &node);
  // Pass 2 over `dependencies`: each names an instruction, and none forms a cycle.
  void check_dependencies();
  int64_t expanded_size(const std::string &fname, int depth);

  // ------------------------------------------------------------------------- allocations.cpp
  void read_allocation(const json &al, const std::string &field);

  // ------------------------------------------------------------------------- nki_debug.cpp
  // `debug.nki` of an instruction (NkiInfo) and of an allocation (NkiTile).
  std::shared_ptr<const NkiInfo> read_nki_info(const json &nki, const Inst &inst) const;
  std::shared_ptr<const NkiTile> read_nki_tile(const json &nki, const std::string &field) const;

  // ------------------------------------------------------------------------- expressions.cpp
  int resolve_axis(const std::string &name, const std::string &field) const;
  static Expr loop_var(int v);
  void read_term(const json &t, const std::string &field, Expr &aff) const;
  Expr read_affine_body(const json &e, const std::string &field) const;
  Expr unary(Expr::Kind kind, Expr operand, int64_t k) const;
  int64_t denominator(const json &e, const char *key, const std::string &field) const;
  Expr read_expr(const json &e, const std::string &field) const;

  // ------------------------------------------------------------------------- access_patterns.cpp
  int tensor_ref(const json &a, const std::string &field) const;
  Dtype arg_dtype(const json &a, const std::string &field, Dtype dflt) const;
  std::vector<int64_t> row_major_strides(const std::vector<int64_t> &shape, const std::string &field) const;
  void add_scaled(Expr e, int64_t stride, int64_t &constant, std::vector<Expr> &terms,
                  const std::string &f) const;
  Expr symbolic_start(const json &a, const Tensor &t, const std::string &field) const;
  Arg read_arg(const json &a, const std::string &field) const;
  std::vector<Arg> read_args(const json &j, const char *key, bool required) const;

  // ------------------------------------------------------------------------- instructions.cpp
  void read_value(const json &v, bool &out, const std::string &f) const;
  void read_value(const json &v, int64_t &out, const std::string &f) const;
  void read_value(const json &v, double &out, const std::string &f) const;
  void read_value(const json &v, std::string &out, const std::string &f) const;
  void read_value(const json &v, std::vector<int64_t> &out, const std::string &f) const;
  void read_value(const json &v, std::vector<double> &out, const std::string &f) const;
  void read_value(const json &v, std::vector<std::string> &out, const std::string &f) const;
  void read_value(const json &v, std::vector<std::vector<int64_t>> &out, const std::string &f) const;
  void read_value(const json &v, std::vector<ApDim> &out, const std::string &f) const;
  void read_value(const json &v, AluOp &out, const std::string &f) const;
  template <typename E, typename = std::enable_if_t<std::is_enum<E>::value>>
  void read_value(const json &v, E &out, const std::string &f) const;
  void read_fields(const json &j, Inst &inst) const;
  static bool maybe_affine_expr(const json &v, const char *key);
  Expr rank_expr(const json &v, const std::string &field) const;
  void read_rank_exprs(const json &j, Inst &inst) const;
  void warn_unknown_keys(const json &j, InstructionType type);
  void check_required_keys(const json &j, InstructionType type) const;
  static std::string join(const std::vector<std::string> &v);
  void check_engine(InstructionType type, Engine e) const;
  void read_instruction(const json &j, std::vector<Node> &out);

  // ------------------------------------------------------------------------- regions.cpp
  static std::string block_name(const json &b);
  void read_dma_block(const json &j, std::vector<Node> &out);
  int loop_var_for(const std::string &name);
  void read_region(const json &j, const std::string &opcode, std::vector<Node> &out);
  void read_loop(const json &j, std::vector<Node> &out);
  void read_block(const json &b, const std::string &field, std::vector<Node> &out);
};

} // namespace neuronsim::isa::bir
