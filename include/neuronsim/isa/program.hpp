// isa::Program / isa::Inst: the ONE instruction representation. Both decoders (BIR JSON, 64-byte bundles)
// produce it and every engine consumes it; nothing downstream knows which format an instruction came from.
#pragma once

#include <bitset>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/tables.hpp"

namespace neuronsim::isa {

// ---------------------------------------------------------------------------------------------- expressions
// A pelican QuasiAffineExpr (reference neuronx-cc/bir/wire-versioning.md): v2 {kind:...} trees, v1 flat affine.
// Loop variables are resolved to indices into Program::loop_vars when the program is read.
struct Expr {
  enum class Kind { Const, Affine, Sum, Mult, LoopVar, FloorDiv, Mod, Register, ShardId };
  Kind kind = Kind::Const;
  int64_t c = 0;                // Const value; Affine constant term
  std::vector<Expr> kids;       // Affine: term indices; Sum: addends; Mult/FloorDiv/Mod: kids[0] = operand
  std::vector<int64_t> coeffs;  // Affine: one coefficient per kid
  int64_t k = 1;                // Mult: scale; FloorDiv/Mod: denominator
  int var = -1;                 // LoopVar: index into Program::loop_vars
  std::string regref;           // Register: register name (runtime value)
  // ShardId: the shard of the core running the program (0..k-1 on a logical core of k physical cores; reference
  // neuronx-cc/bir/wire-versioning.md, `{kind: ShardIDKind, ub}`); k holds `ub`.

  static Expr constant(int64_t v) {
    Expr e;
    e.c = v;
    return e;
  }
  bool is_const() const { return kind == Kind::Const; }
  // Evaluates with the current value of every loop variable (indexed like Program::loop_vars) on the core whose
  // shard id is `shard` (0 on a single core).
  int64_t eval(const int64_t *loop_values, int64_t shard = 0) const;
  // Whether a Register leaf occurs in it (a value known only when the instruction runs).
  bool reads_register() const {
    if (kind == Kind::Register) return true;
    for (const auto &k : kids)
      if (k.reads_register()) return true;
    return false;
  }
};

// ---------------------------------------------------------------------------------------------- arguments
// One [step, num] pair of an access pattern, in elements (reference bir-json.md 1.9).
struct ApDim {
  int64_t step = 0;
  int64_t num = 0;
};
inline bool operator==(const ApDim &a, const ApDim &b) { return a.step == b.step && a.num == b.num; }
inline bool operator!=(const ApDim &a, const ApDim &b) { return !(a == b); }

enum class ArgKind { AccessPattern, Immediate, ImmArray, Register };

struct Arg {
  ArgKind kind = ArgKind::AccessPattern;
  Dtype dtype = Dtype::float32;
  // AccessPattern: the tensor (index into Program::tensors), the [step, num] list with the partition dim first
  // and the free dims outermost first (innermost fastest), and the start element offset into the tensor's
  // logical row-major layout. physical_ap: `offset`; symbolic_ap: sum over tensor dims of addrs[d] * row-major
  // stride[d], an expression of the loop variables.
  int tensor = -1;
  // Immediate (imm_value, symbolic_imm_value) and ImmArray (imm_array). Next to `kind`: the schedule reads both
  // for every operand of every dynamic instruction, and one cache line of the operand is then enough.
  double imm = 0.0;
  std::vector<ApDim> ap;
  Expr start;
  std::vector<double> imm_array;
  // Register (register_access, register_ap): the register name.
  std::string reg;
  std::string json_kind;  // the BIR spelling it came from ("symbolic_ap", "imm_value", ...), for messages

  // Saturates at INT64_MAX (the reader refuses patterns whose count overflows; a built program may not).
  int64_t num_elements() const {
    int64_t n = 1;
    for (const auto &d : ap)
      if (__builtin_mul_overflow(n, d.num, &n)) return INT64_MAX;
    return n;
  }
  // Immediate value for the current loop values on the core of shard id `shard`: a symbolic_imm_value with
  // several values keeps them in imm_array and its selector expression (loop variables, ShardIDKind) in `start`
  // (isa/bir/access_patterns.cpp); otherwise `imm`. Out-of-range -> clamped.
  double immediate(const int64_t *loop_values, int64_t shard = 0) const {
    if (kind != ArgKind::Immediate || imm_array.size() < 2) return imm;
    int64_t i = start.eval(loop_values, shard);
    if (i < 0) i = 0;
    if (i >= static_cast<int64_t>(imm_array.size())) i = static_cast<int64_t>(imm_array.size()) - 1;
    return imm_array[static_cast<size_t>(i)];
  }
  int64_t partitions() const { return ap.empty() ? 1 : ap[0].num; }
  int64_t free_elements() const { return ap.empty() ? 0 : num_elements() / ap[0].num; }
};

// ---------------------------------------------------------------------------------------------- fields
enum class Field : int {
#define NS_FIELD(member, key, kind, ctype, def, only, ...) member,
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
  kCount
};
inline constexpr int kNumFields = static_cast<int>(Field::kCount);

struct InstFields {
#define NS_FIELD(member, key, kind, ctype, def, only, ...) ctype member = def;
#include "neuronsim/isa/tables/inst_fields.def"
#undef NS_FIELD
};

// Explicit synchronization carried by scheduled input (bundles, post-scheduler BIR): wait for a semaphore
// to reach a value, then update semaphores when done (reference neuronx-cc/arch/execution-sync-model.md).
struct SemWait {
  int sem = -1;
  enum class Mode { GeImm, GeReg, EqImm } mode = Mode::GeImm;
  int64_t value = 0;
  std::string reg;
};
struct SemUpdate {
  int sem = -1;
  enum class Mode { Inc, Dec, Set, Add } mode = Mode::Inc;
  int64_t value = 1;
};

// ---------------------------------------------------------------------------------------------- NKI debug info
// What the NKI front end knows about an instruction that the BIR itself does not say (BIR `debug.nki`,
// docs/bir-format.md section 6): the kernel's loops around it, which of its tiles are declared inside them, and
// whether it is one step of an associative reduction. The sanitizer judges loop-carried dependencies of
// `nl.affine_range` loops with it, per trip of the kernel's own loops however the lowering pipelined or unrolled
// them (docs/sanitizer.md).
struct NkiLoop {
  enum class Kind { Affine, Sequential, Static };
  int id = 0;         // the kernel's loop, numbered by the front end (one number per traced or unrolled loop)
  Kind kind = Kind::Affine;
  int line = -1;      // its `for` line in the instruction's source file
  std::string var;    // its variable's name in the kernel, when known
  int64_t start = 0, step = 1;  // the variable's value in trip t is start + t * step
  Expr trip;          // the instruction's trip of it (0, 1, ...): an expression of the BIR loop variables
};
struct NkiInfo {
  std::vector<NkiLoop> loops;  // outermost first
  // Per operand (ins, then outs): how many of `loops`, outermost first, the tile it names is declared inside (a
  // tile declared inside a loop's body is that trip's own). Missing entries are 0.
  std::vector<int> local;
  // "add", "max", "min" or "mult": the instruction reads outs[0]'s region, folds it with this associative and
  // commutative op and writes it back (`acc += ...`, `acc[...] = nl.maximum(acc, x)`, a matmul accumulating into
  // PSUM). reduce_in: the ins operand reading the accumulator, -1 when outs[0] is read implicitly (PSUM).
  std::string reduce;
  int reduce_in = -1;
  static const char *kind_name(NkiLoop::Kind k) {
    return k == NkiLoop::Kind::Affine ? "affine" : k == NkiLoop::Kind::Sequential ? "sequential" : "static";
  }
};

// ---------------------------------------------------------------------------------------------- instruction
struct Inst {
  InstructionType type = InstructionType::NoOp;
  std::string name;                 // "I-4"
  Engine engine = Engine::Unassigned;
  std::vector<Arg> ins;
  std::vector<Arg> outs;
  InstFields f;
  std::bitset<kNumFields> given;    // which fields were present in the input
  std::vector<SemWait> waits;
  std::vector<SemUpdate> updates;
  std::vector<std::string> dependencies;  // names of instructions this one depends on (BIR `dependencies`)
  int index = -1;                   // position in Program::insts
  int source_line = -1;             // debug.lineno when known
  std::string source_file;          // debug.filename when known
  // QuasiAffineExpr-valued keys (reference bir-json.md 2.2; neuronx-cc/bir/json-schema-catalog.md, Collective
  // family): CollectiveCompute `recv_from_rank` [QAE] and `send_to_rank` QAE (0 or 1 entry), and
  // GetCurProcessingRankID `iter_id` (a MaybeAffine<uint>) when it is given as an expression rather than a number.
  // Empty when absent. Evaluated per core (constants, ShardIDKind, registers; engines/ops/collective.cpp).
  std::vector<Expr> recv_from_rank, send_to_rank, iter_id_expr;
  // debug.nki: the NKI front end's loops, local tiles and reduction of this instruction; null when absent.
  std::shared_ptr<const NkiInfo> nki;

  bool has(Field fld) const { return given.test(static_cast<int>(fld)); }
};

// ---------------------------------------------------------------------------------------------- tensors
// The NKI tile an SBUF / PSUM tensor holds (BIR allocation `debug.nki`), for messages in the kernel's terms: the
// front end's tensor is `buffers` rotating copies of the tile side by side, `cols` elements of every partition
// each (docs/nki-lowering.md 2); the tile's shape has its partition dim at `pdim`.
// `argument`: a DRAM tensor that is an argument of the kernel the kernel writes (in place): the caller's data are
// in it when the run starts (no shape then).
struct NkiTile {
  std::vector<int64_t> shape;
  int pdim = 0;
  int64_t buffers = 1;
  int64_t cols = 0;
  bool argument = false;
};

struct Tensor {
  std::string name;        // memory_location name ("a"); arguments' memref
  std::string set_name;    // memory_location_set name ("a_set"); arguments' memsetref
  TensorKind kind = TensorKind::Internal;
  MemoryType mem = MemoryType::DRAM;  // DRAM (also Input/Output), SB or PSUM
  Dtype dtype = Dtype::float32;
  std::vector<int64_t> shape;          // tensor_shape, partition dim first
  int64_t partitions = 1;              // dims[0]
  int64_t bytes_per_partition = 0;     // product of dims[1..]
  // Placement in SBUF/PSUM: byte address within each partition and the base partition. When `allocated` is
  // false the simulator places the tensor itself (pre-allocation BIR leaves addr = 0, reference bir-json.md 1.5).
  int64_t addr = 0;
  int64_t base_partition = 0;
  int64_t bank = 0;
  bool allocated = false;
  // A callee's own (non-parameter) allocation, named "<function>/<name>": the function it belongs to. The writer
  // leaves these out (they are written with the callee's function).
  std::string owner;
  // An output the run also fills as an input (allocation key `inout`, neuronsim's own: docs/bir-format.md): a
  // kernel argument the kernel reads and writes in place, as NKI kernels that write their results into their
  // arguments do. It starts with the data given for it (or generated, as any input) and is written out after.
  bool inout = false;
  std::shared_ptr<const NkiTile> nki;  // debug.nki: the NKI tile it holds, when the front end says

  bool is_dram() const { return mem != MemoryType::SB && mem != MemoryType::PSUM; }
  bool is_input() const {
    return kind == TensorKind::ExternalInput || kind == TensorKind::ExternalInputParameter ||
           kind == TensorKind::Input || kind == TensorKind::Const || (inout && is_output());
  }
  bool is_output() const {
    return kind == TensorKind::ExternalOutput || kind == TensorKind::ExternalOutputParameter ||
           kind == TensorKind::Output;
  }
  // Saturates at INT64_MAX (the reader refuses shapes whose byte size overflows; a built program may not).
  int64_t num_elements() const {
    int64_t n = 1;
    for (auto s : shape)
      if (__builtin_mul_overflow(n, s, &n)) return INT64_MAX;
    return n;
  }
};

// ---------------------------------------------------------------------------------------------- program
// The body is a tree of instructions and loops; the simulator walks it, evaluating expressions per iteration.
// Regions (reference neuronx-cc/bir/sim-control-sync-customop.md section 1): Loop has constant bounds;
// DynamicForLoop's bounds are expressions, its upper bound read from a register at run time; DoWhile runs its
// body, then repeats while a register is non-zero.
// Call / NKIKernel (sim-control-sync-customop.md 2.4, 6.2): `inst` is the call instruction and `body` the callee
// function's blocks, expanded in place when the program is read (its tensors bound to the call's operands), with
// `blocks` saying where each callee block starts in `body` for the callee's own branches.
// DMABlock (sim-bn-rng-collective-dma.md, sim-elementwise-datamove.md: SW-DGE descriptor lists): `inst` is the
// DMABlock instruction, `name` its name and `body` its descriptors; a DMATrigger that names it runs the body.
struct Node {
  enum class Kind { Inst, Loop, DynamicForLoop, DoWhile, Call, DMABlock } kind = Kind::Inst;
  int inst = -1;              // Kind::Inst / Call / DMABlock: index into Program::insts
  std::string name;           // Kind::DMABlock: the block's name
  // Kind::Call and the loop regions: each block's name -> where it starts in body (branch targets of the branches
  // in it).
  std::vector<std::pair<std::string, size_t>> blocks;
  int var = -1;               // Kind::Loop / DynamicForLoop: index into Program::loop_vars
  int64_t lb = 0, ub = 0, stride = 1;
  Expr lb_expr, ub_expr, stride_expr;  // Kind::DynamicForLoop
  Expr cond;                  // Kind::DoWhile: the register predicate
  std::vector<Node> body;     // regions: their blocks' contents, in order
};

struct Program {
  std::string file;                 // where it was read from, for messages
  std::string arch;                 // BIR "arch" ("sunda", "gen3", ...) when given
  std::vector<Tensor> tensors;
  std::vector<Inst> insts;          // every static instruction, in program order
  std::vector<std::string> loop_vars;
  std::vector<Node> body;           // top-level nodes in program order
  // Where each top-level basic block of the function starts in `body` (branch targets name blocks).
  struct Block {
    std::string name;
    size_t first = 0;
  };
  std::vector<Block> blocks;
  // The module's other functions (`functions` besides the entry, `nki_functions.functions`) as read, JSON text, so
  // that writing the program back keeps the callees of Call / NKIKernel. `nki` says which list each came from.
  struct Callee {
    std::string name;
    bool nki = false;
    std::string json;
  };
  std::vector<Callee> callees;
  // What the reader ignored and why, one line each ("file: instruction 3 'I-4' field 'opp': unknown key ...");
  // the CLI prints them as warnings before running.
  std::vector<std::string> warnings;

  int find_tensor(const std::string &name) const;  // by memory-location or set name, -1 when absent
  // Number of dynamic instruction instances (loops unrolled).
  int64_t dynamic_count() const;
};

const char *field_key(Field f);

// Where an instruction comes from in the user's source, from its BIR debug information: "kernel.py:42", "line
// 42" (no file name), "kernel.py" (no line), or "" when it carries none.
std::string source_location(const Inst &inst);
// The source location of the instruction an error context names in `p` (same file, index in range, and the
// same name when the context gives one), or "".
std::string source_location(const Program &p, const ErrorContext &ctx);

} // namespace neuronsim::isa
