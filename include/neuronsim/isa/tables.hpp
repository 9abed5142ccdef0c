// The ISA facts as C++: every enum and table here is generated from the .def tables, the single source of
// truth read by the BIR JSON codec, the bundle codec, the CLI dump (`neuronsim isa`) and the tests. The tables
// this header expands live next to it (neuronsim/isa/tables/*.def), so the public headers need nothing outside
// include/; the opcode bytes per generation (isa/tables/instruction_wire.def) reach it through tables.cpp.
#pragma once

#include <array>
#include <vector>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/names.hpp"

namespace neuronsim::isa {

// ---------------------------------------------------------------------------------------------- AluOpType
#define NS_ALU(ord, name, cls, bitvec, v2, v3, v4) name = ord,
enum class AluOp : int {
#include "neuronsim/isa/tables/alu_ops.def"
};
#undef NS_ALU
inline constexpr int kNumAluOps = 33;

enum class OperandOrder { Unary, Commutative, OrderSensitive };
enum class CoreGen { V2 = 2, V3 = 3, V4 = 4 };  // NeuronCore-v2 (trn1), v3 (trn2), v4 (trn3)
inline constexpr CoreGen kCoreGens[] = {CoreGen::V2, CoreGen::V3, CoreGen::V4};
// "v2" / "v3" / "v4": the keys of the per-generation columns in `neuronsim isa --json`.
const char *core_gen_name(CoreGen gen);
// "unary" / "commutative" / "order_sensitive".
const char *operand_order_name(OperandOrder order);

struct AluOpInfo {
  AluOp op;
  const char *name;
  OperandOrder order;
  bool bitvec;
  std::optional<uint32_t> wire[3];  // indexed by gen - 2; nullopt = no ALU wire byte
};
const std::array<AluOpInfo, kNumAluOps> &alu_ops();
const AluOpInfo &alu_info(AluOp op);
const char *alu_name(AluOp op);
std::optional<AluOp> alu_from_name(std::string_view name);
// Parses a BIR spelling; an unknown name throws InputError quoting the string.
AluOp parse_alu(std::string_view name, const ErrorContext &ctx = {});
// L1 -> L3 ALU_OP value for a generation. average/elemwise_mul (and ops absent on that generation) throw
// SemanticError "Invalid enum variant for enum AluOpType" (spec 000 GOTCHA).
uint32_t alu_to_wire(AluOp op, CoreGen gen, const ErrorContext &ctx = {});
// L3 -> L1; accepts the full 32-bit value or its low byte (mod_int's 0xC8). nullopt when no op maps to it.
std::optional<AluOp> alu_from_wire(uint32_t wire, CoreGen gen);
// The wire value without throwing: nullopt for average/elemwise_mul and for ops absent on that generation.
std::optional<uint32_t> alu_wire(AluOp op, CoreGen gen);

// ---------------------------------------------------------------------------------------------- mode enums
#define NS_V(name, ord) name = ord,
#define NS_DECL_ENUM(T, key, src) enum class T : int { NEURONSIM_ENUM_##T(NS_V) };
#include "neuronsim/isa/tables/enums.def"
NEURONSIM_ENUMS(NS_DECL_ENUM)
#undef NS_DECL_ENUM
#undef NS_V

struct EnumEntry {
  int ordinal;
  const char *name;
};
struct EnumTableInfo {
  const char *type_name;
  const char *json_key;
  const char *source;
  const EnumEntry *entries;
  int count;
};

template <typename E> struct EnumTraits;
#define NS_V(name, ord) EnumEntry{ord, #name},
#define NS_TRAITS(T, key, src)                                                                                \
  template <> struct EnumTraits<T> {                                                                          \
    static constexpr const char *type_name = #T;                                                              \
    static constexpr const char *json_key = key;                                                              \
    static constexpr const char *source = src;                                                                \
    static constexpr EnumEntry entries[] = {NEURONSIM_ENUM_##T(NS_V)};                                        \
    static constexpr int count = sizeof(entries) / sizeof(entries[0]);                                       \
  };
NEURONSIM_ENUMS(NS_TRAITS)
#undef NS_TRAITS
#undef NS_V

template <typename E> const char *enum_name(E v) {
  for (const auto &e : EnumTraits<E>::entries)
    if (e.ordinal == static_cast<int>(v)) return e.name;
  return "?";
}
template <typename E> std::optional<E> enum_from_name(std::string_view s) {
  for (const auto &e : EnumTraits<E>::entries)
    if (s == e.name) return static_cast<E>(e.ordinal);
  return std::nullopt;
}
template <typename E> std::optional<E> enum_from_ordinal(int ord) {
  for (const auto &e : EnumTraits<E>::entries)
    if (e.ordinal == ord) return static_cast<E>(e.ordinal);
  return std::nullopt;
}
// The spellings of an enum, in table order (the valid values an "unknown" message lists).
template <typename E> std::vector<std::string> enum_names() {
  std::vector<std::string> v;
  for (const auto &e : EnumTraits<E>::entries)
    v.push_back(e.name);
  return v;
}
// Parses an enum spelling; an unknown one throws InputError "unknown <Type> '<s>' (did you mean ...; valid:
// ...)" (isa/names.hpp).
// Another tool's word for a value of the enum named type_name ("SBUF" for MemoryType SB, "Vector" for Engine DVE),
// offered as the nearest when no spelling is close (isa/names.hpp); empty for most enums.
const std::vector<std::pair<std::string, std::string>> &enum_hints(std::string_view type_name);
template <typename E> E parse_enum(std::string_view s, const ErrorContext &ctx = {}) {
  if (auto v = enum_from_name<E>(s)) return *v;
  throw InputError(ctx, unknown_name(EnumTraits<E>::type_name, s, enum_names<E>(),
                                     enum_hints(EnumTraits<E>::type_name)));
}
// Every enum table, for the dump and the tests.
const std::vector<EnumTableInfo> &enum_tables();

// ---------------------------------------------------------------------------------------------- dtypes
// Element size in bytes of one stored element (container size for the x4 packed MX types).
int dtype_size(Dtype d);
bool dtype_is_float(Dtype d);
bool dtype_is_signed_int(Dtype d);
// Accepts the BIR spelling and common aliases written by other tools (documented in tables.cpp).
Dtype parse_dtype(std::string_view s, const ErrorContext &ctx = {});
// Other tools' words for BIR dtypes (numpy, NKI: "fp32" -> "float32"), offered as "did you mean" hints only.
const std::vector<std::pair<std::string, std::string>> &dtype_hints();

// ---------------------------------------------------------------------------------------------- InstructionType
#define NS_IT(ord, name, family) name = ord,
enum class InstructionType : int {
#include "neuronsim/isa/tables/instruction_types.def"
};
#undef NS_IT
inline constexpr int kNumInstructionTypes = 110;

const char *inst_type_name(InstructionType t);
std::optional<InstructionType> inst_type_from_name(std::string_view name);
// Parses a BIR "opcode" string; an unknown one throws InputError "unknown InstructionType '<s>'".
InstructionType parse_inst_type(std::string_view name, const ErrorContext &ctx = {});
// The editorial family of reference neuronx-cc/bir/instruction-type.md ("compute", "dma", ...).
const char *inst_type_family(InstructionType t);

// How an InstructionType reaches the wire (spec 003 section 6).
enum class InstKind {
  Base,     // abstract base IT: its leaves carry the opcode (MatmultBase, DMA, Collective, Terminator, ...)
  Lowered,  // lowered away before codegen, or no encoder at all (Generic, Select, Loop, Rand, ...)
  Carrier,  // kernel / debug / control carrier that emits no 64-byte bundle (BIRKernel, DevicePrint, Break, ...)
  Concrete, // has an encoder that emits bundles
};
// "abstract_base" / "lowered" / "carrier" / "concrete".
const char *inst_kind_name(InstKind kind);

// One row of isa/tables/instruction_wire.def (see the column notes there).
struct InstTypeInfo {
  InstructionType type;
  const char *name;
  const char *family;
  InstKind kind;
  std::vector<Engine> engines;  // BIR EngineType(s); empty when the table pins none
  const char *engine_text;      // spec 003's Eng column verbatim ("Pool/DVE", "CC", "any", ...)
  std::array<std::vector<uint8_t>, 3> l2;  // L2 opcode bytes per generation, indexed by gen - 2; empty = not encoded
  int min_bundles;
  int max_bundles;              // -1 = unbounded (per active engine, per argument, user bytes)
  const char *split;            // [split]/[mb] selector text, "" when none
  std::vector<InstructionType> col;     // spec 003 section 2 [col] partners
  std::vector<InstructionType> shared;  // other ITs sharing one of our bytes, not a spec collision
  const char *confidence;

  const std::vector<uint8_t> &l2_for(CoreGen gen) const { return l2[static_cast<int>(gen) - 2]; }
  bool encoded_on(CoreGen gen) const { return !l2_for(gen).empty(); }
  // The L3 header words (0x10 << 8) | L2 for this generation, in l2 order.
  std::vector<uint16_t> l3_for(CoreGen gen) const;
};
const InstTypeInfo &inst_type_info(InstructionType t);
const std::vector<InstTypeInfo> &inst_type_infos();  // all 110, indexed by ordinal
// Every InstructionType whose encoder may emit this L2 byte on `gen`: more than one for [col]/shared bytes
// (spec 003 GOTCHA: never key a decoder on the bare opcode byte). Ordinal order; empty when none.
std::vector<InstructionType> inst_types_for_l2(uint8_t l2, CoreGen gen);

// spec 003 INV-1: the 16-bit header word at bundle[0:2] is (0x10 << 8) | L2; the high byte 0x10 is the fixed
// 16-dword bundle length. QuantizeMx with SATURATE ORs bit 0 of the high byte (0x11).
inline constexpr uint16_t kL3LengthByte = 0x10;
constexpr uint16_t l3_word(uint8_t l2, bool saturate = false) {
  return static_cast<uint16_t>(((kL3LengthByte | (saturate ? 1 : 0)) << 8) | l2);
}
struct L3Header {
  uint8_t l2;
  bool saturate;
};
// Decodes a header word: high byte 0x10, or 0x11 with the QuantizeMx opcode 0xE3. nullopt otherwise.
std::optional<L3Header> parse_l3_word(uint16_t word);

} // namespace neuronsim::isa
