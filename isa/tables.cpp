// Lookups over the .def tables. No ISA fact is written here: every value comes from isa/tables/*.def.
#include "neuronsim/isa/tables.hpp"

#include <cstring>

namespace neuronsim::isa {

namespace {
constexpr int64_t NS_NOWIRE = -1;
constexpr OperandOrder cls_U = OperandOrder::Unary;
constexpr OperandOrder cls_C = OperandOrder::Commutative;
constexpr OperandOrder cls_O = OperandOrder::OrderSensitive;

std::optional<uint32_t> wire_of(int64_t v) {
  if (v < 0) return std::nullopt;
  return static_cast<uint32_t>(v);
}
} // namespace

const std::array<AluOpInfo, kNumAluOps> &alu_ops() {
#define NS_ALU(ord, name, cls, bitvec, v2, v3, v4)                                                           \
  AluOpInfo{AluOp::name, #name, cls_##cls, bitvec != 0,                                                       \
            {wire_of(int64_t(v2)), wire_of(int64_t(v3)), wire_of(int64_t(v4))}},
  static const std::array<AluOpInfo, kNumAluOps> table = {{
#include "tables/alu_ops.def"
  }};
#undef NS_ALU
  return table;
}

const AluOpInfo &alu_info(AluOp op) { return alu_ops().at(static_cast<size_t>(op)); }
const char *alu_name(AluOp op) { return alu_info(op).name; }

std::optional<AluOp> alu_from_name(std::string_view name) {
  for (const auto &i : alu_ops())
    if (name == i.name) return i.op;
  return std::nullopt;
}

AluOp parse_alu(std::string_view name, const ErrorContext &ctx) {
  if (auto op = alu_from_name(name)) return *op;
  throw InputError(ctx, "unknown AluOpType '" + std::string(name) + "'");
}

uint32_t alu_to_wire(AluOp op, CoreGen gen, const ErrorContext &ctx) {
  const auto &w = alu_info(op).wire[static_cast<int>(gen) - 2];
  if (!w) throw SemanticError(ctx, std::string("Invalid enum variant for enum AluOpType (") + alu_name(op) + ")");
  return *w;
}

std::optional<AluOp> alu_from_wire(uint32_t wire, CoreGen gen) {
  for (const auto &i : alu_ops()) {
    const auto &w = i.wire[static_cast<int>(gen) - 2];
    if (!w) continue;
    if (*w == wire) return i.op;
    // The int32 extended band (mod_int = 0xFFFFFFC8) is also seen as its low byte 0xC8 in the 1-byte field.
    if (*w > 0xFF && (*w & 0xFF) == wire) return i.op;
  }
  return std::nullopt;
}

const std::vector<EnumTableInfo> &enum_tables() {
#define NS_TABLE(T, key, src)                                                                                 \
  EnumTableInfo{EnumTraits<T>::type_name, EnumTraits<T>::json_key, EnumTraits<T>::source,                     \
                EnumTraits<T>::entries, EnumTraits<T>::count},
  static const std::vector<EnumTableInfo> tables = {NEURONSIM_ENUMS(NS_TABLE)};
#undef NS_TABLE
  return tables;
}

int dtype_size(Dtype d) {
  switch (d) {
  case Dtype::uint8: case Dtype::int8: case Dtype::float8e3: case Dtype::float8e4:
  case Dtype::float8_e4m3fn: case Dtype::float8_e8m0fnu: case Dtype::float8e5:
    return 1;
  case Dtype::float4_e2m1fn_x4: case Dtype::uint16: case Dtype::int16: case Dtype::bfloat16:
  case Dtype::float16:
    return 2;
  case Dtype::float8_e4m3fn_x4: case Dtype::float8_e5m2_x4: case Dtype::uint32: case Dtype::int32:
  case Dtype::float32: case Dtype::float32r:
    return 4;
  case Dtype::uint64: case Dtype::int64:
    return 8;
  }
  return 4;
}

bool dtype_is_float(Dtype d) {
  switch (d) {
  case Dtype::uint8: case Dtype::int8: case Dtype::uint16: case Dtype::int16: case Dtype::uint32:
  case Dtype::int32: case Dtype::uint64: case Dtype::int64:
    return false;
  default:
    return true;
  }
}

bool dtype_is_signed_int(Dtype d) {
  return d == Dtype::int8 || d == Dtype::int16 || d == Dtype::int32 || d == Dtype::int64;
}

Dtype parse_dtype(std::string_view s, const ErrorContext &ctx) {
  if (auto d = enum_from_name<Dtype>(s)) return *d;
  // Aliases other writers use for the same types: numpy/ml_dtypes spellings (bir-json.md 2.4: KLR's
  // float8_e4m3 / float8_e5m2 spellings are unconfirmed for the compiler; we map them to the BIR types).
  if (s == "float8_e4m3") return Dtype::float8e4;
  if (s == "float8_e5m2") return Dtype::float8e5;
  if (s == "float8_e3m4") return Dtype::float8e3;
  throw InputError(ctx, "unknown dtype '" + std::string(s) + "'");
}

const char *inst_type_name(InstructionType t) {
#define NS_IT(ord, name, family) #name,
  static const char *names[] = {
#include "tables/instruction_types.def"
  };
#undef NS_IT
  int i = static_cast<int>(t);
  return (i >= 0 && i < kNumInstructionTypes) ? names[i] : "?";
}

std::optional<InstructionType> inst_type_from_name(std::string_view name) {
  for (int i = 0; i < kNumInstructionTypes; ++i)
    if (name == inst_type_name(static_cast<InstructionType>(i))) return static_cast<InstructionType>(i);
  return std::nullopt;
}

} // namespace neuronsim::isa
