// The 64-byte instruction bundle codec: isa::Inst <-> bundles per core generation, the per-engine stream files,
// and a one-line disassembler. Every body layout is a row of isa/tables/bundle_fields.def; the opcode bytes are
// cross-checked against isa/tables/instruction_wire.def. Layout notes: docs/bundle-layout.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "neuronsim/isa/program.hpp"

namespace neuronsim::isa {

using Bundle = std::array<uint8_t, 64>;

// The EventSemaphore update-mode byte has two readings in the reference (README note): the LUT of
// isa/sp-sync-encoding.md (0x11 0x15 0x17 0x13 0x14 0x19, written at +0x22 / +0x06) or the raw BIR UpdateMode
// ordinal of isa/isa-enum-ordinals.md ENUM 14. Lut is the default (a CONFIRMED rodata read, and it agrees with
// arch/execution-sync-model.md); Raw is kept until a real bundle settles it.
enum class UpdateModeReading { Lut, Raw };

struct CodecOptions {
  UpdateModeReading update_mode = UpdateModeReading::Lut;
};

// Multi-bundle ops ([mb], e.g. Matmult = LoadStationary 0x01 + MatMul 0x02) are decoded across calls: the first
// bundle opens a pending instruction here, the last one completes it.
struct DecodeState {
  bool pending = false;
  int form = -1;  // index of the last form decoded
  Inst inst;
};

// Values a bundle cannot hold inline (a string or list field with no inline row, a whole operand list) live in a
// per-stream pool, kept in the stream's manifest.json; the bundle holds the entry's index (POOL / ARGS rows of
// bundle_fields.def, docs/bundle-layout.md "Stream pool"). Equal entries are shared.
struct PoolEntry {
  enum class Kind { Text, TextList, IntList, IntListList, Operands } kind = Kind::Text;
  std::string text;                        // Text
  std::vector<std::string> texts;          // TextList
  std::vector<std::vector<int64_t>> ints;  // IntList (one row) / IntListList
  std::vector<Arg> ins, outs;              // Operands: access patterns with constant starts
};
struct BundlePool {
  std::vector<PoolEntry> entries;
  size_t add(const PoolEntry &e);  // index of an equal entry, else appends
};
// The pool as manifest.json writes it (a JSON array), and back. Reading checks every entry's shape and, for
// operand lists, that each tensor index names a tensor of `prog`; errors name `where` and "pool[i]".
std::string pool_to_json(const BundlePool &pool);
BundlePool pool_from_json(const std::string &json_text, const Program &prog, const ErrorContext &where);

struct DecodedBundle {
  bool complete = false;   // false: the bundle opened (or continued) a multi-bundle instruction
  Inst inst;               // valid when complete
  std::string form;        // bundle_fields.def form name ("TT", "MM_LW", ...)
  int part = 0, parts = 1; // position within the instruction's bundles
};

// Encodes one instruction (its [split] form picked from its fields) into one or more bundles. The tensor
// placement (SBUF/PSUM address and base partition, DRAM tensor index) comes from `prog.tensors`. Throws
// SemanticError when the instruction cannot be carried exactly (a field no form of this opcode holds, a
// non-constant start, too many dimensions, average/elemwise_mul on an ALU byte, ...).
// Fields and operands that no bundle can hold inline go to `pool` (SemanticError when the form needs one and it is
// null). Branch targets are written as indices into `prog.blocks` (the stream's block table).
std::vector<Bundle> encode(const Inst &inst, const Program &prog, CoreGen gen, const CodecOptions &opt = {},
                           BundlePool *pool = nullptr);

// Decodes one bundle read from the stream of engine `engine_id` (an Engine ordinal). `prog` supplies the
// placement for mapping addresses back to tensors; `state` is required for multi-bundle ops (a local state is
// used when null, so such ops then fail); `hint` resolves opcode bytes several InstructionTypes share ([col]).
// Throws InputError naming the byte offset and the field (unknown opcode byte, bad header word, an ALU byte no
// op maps to on this generation, an address in no tensor, a pool index past `pool`, a block index past
// `prog.blocks`, ...).
DecodedBundle decode(const uint8_t *bundle64, CoreGen gen, int engine_id, const Program &prog,
                     DecodeState *state = nullptr, std::optional<InstructionType> hint = std::nullopt,
                     const CodecOptions &opt = {}, const ErrorContext &where = {},
                     const BundlePool *pool = nullptr);

// "0x10 TT      op=add in0_dtype=float32 ... dst=[addr 0x00040000 p0 x2 (1,64)]": opcode, form, then every row.
std::string disasm_line(const uint8_t *bundle64, CoreGen gen, const CodecOptions &opt = {});

// The engine file a bundle stream is written to: "<engine>.bin" with the BIR engine spelling ("DVE.bin").
std::string engine_file_name(Engine e);

// One file per engine (`<engine>.bin`, bundles back to back) plus manifest.json (generation, tensors with dtype,
// shape, memory and placement, per instruction: name, type, engine, bundle count, the stream pool and the block
// table: each of prog.blocks with the index of the instruction it starts at). Instructions without an engine go to
// the first engine instruction_wire.def lists for their type.
void write_bundle_dir(const Program &prog, CoreGen gen, const std::string &dir, const CodecOptions &opt = {});
// Reads it back; the manifest's instruction types resolve shared opcode bytes. A truncated stream is an
// InputError naming the file and the byte offset. The generation is returned through `gen` when non-null.
Program read_bundle_dir(const std::string &dir, CoreGen *gen = nullptr, const CodecOptions &opt = {});

// Whether some bundle form of `type` carries field `f` (a row or a FIELD condition). Scheduling keys such as
// `queue` are ignored by the codec unless a form carries them (DMATrigger, the queue-instance ops).
bool bundle_carries(InstructionType type, Field f);

// Compares what a bundle carries: type, engine, operands (kind, tensor, dtype, start, access pattern, immediate),
// every typed field (sema_group as a set: the bitmask keeps no order), semaphore waits/updates. Not the name,
// index, `given` bits or dependencies. When they differ
// and `diff` is non-null it receives the first difference.
bool same_bundle_content(const Inst &a, const Inst &b, std::string *diff = nullptr);

// The forms of bundle_fields.def, for `neuronsim isa` and the tests.
struct BundleFormInfo {
  std::string name;
  uint8_t l2;
  unsigned gens;      // bit (1 << gen)
  int part, parts;
  std::string layout; // "reference" / "mixed" / "neuronsim"
  std::vector<InstructionType> types;
  bool extra;         // the byte is not listed in instruction_wire.def for its type
};
std::vector<BundleFormInfo> bundle_forms();

} // namespace neuronsim::isa
