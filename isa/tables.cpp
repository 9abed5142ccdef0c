// Lookups over the .def tables. No ISA fact is written here: every value comes from the tables
// (include/neuronsim/isa/tables/*.def, isa/tables/instruction_wire.def).
#include "neuronsim/isa/tables.hpp"

#include "isa/tables/engine_tokens.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

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
#include "neuronsim/isa/tables/alu_ops.def"
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
  std::vector<std::string> names;
  for (const auto &i : alu_ops())
    names.push_back(i.name);
  throw InputError(ctx, unknown_name("AluOpType", name, names, enum_hints("AluOpType")));
}

const std::vector<std::pair<std::string, std::string>> &enum_hints(std::string_view type_name) {
  using Hints = std::vector<std::pair<std::string, std::string>>;
  // NKI's words for the same things: the buffers nl.sbuf / nl.psum / nl.hbm (nki.language memory
  // hierarchy), the engines nki.isa names (tensor, vector, scalar, gpsimd, sync), and nki.language's
  // elementwise operators (nl.multiply, nl.maximum, nl.greater_equal, ...) for the ALU ops they lower to.
  static const std::map<std::string, Hints, std::less<>> hints = {
      {"MemoryType", {{"SBUF", "SB"}, {"HBM", "DRAM"}}},
      {"Engine",
       {{"Tensor", "PE"}, {"TensorEngine", "PE"}, {"Vector", "DVE"}, {"VectorEngine", "DVE"},
        {"Scalar", "Activation"}, {"ScalarEngine", "Activation"}, {"ACT", "Activation"},
        {"GpSimd", "Pool"}, {"GpSimdEngine", "Pool"}, {"Sync", "SP"}, {"SyncEngine", "SP"}}},
      {"AluOpType",
       {{"multiply", "mult"}, {"maximum", "max"}, {"minimum", "min"}, {"equal", "is_equal"},
        {"greater", "is_gt"}, {"greater_equal", "is_ge"}, {"less", "is_lt"}, {"less_equal", "is_le"},
        {"power", "pow"}, {"sub", "subtract"}, {"div", "divide"}}},
  };
  static const Hints none;
  const auto it = hints.find(type_name);
  return it == hints.end() ? none : it->second;
}

const char *core_gen_name(CoreGen gen) {
  switch (gen) {
  case CoreGen::V2: return "v2";
  case CoreGen::V3: return "v3";
  case CoreGen::V4: return "v4";
  }
  return "?";
}

const char *operand_order_name(OperandOrder order) {
  switch (order) {
  case OperandOrder::Unary: return "unary";
  case OperandOrder::Commutative: return "commutative";
  case OperandOrder::OrderSensitive: return "order_sensitive";
  }
  return "?";
}

std::optional<uint32_t> alu_wire(AluOp op, CoreGen gen) { return alu_info(op).wire[static_cast<int>(gen) - 2]; }

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
  throw InputError(ctx, unknown_name("dtype", s, enum_names<Dtype>(), dtype_hints()));
}

const std::vector<std::pair<std::string, std::string>> &dtype_hints() {
  // numpy's and NKI's short names (nl.float32, np.float16, nl.bfloat16 written "bf16", ...).
  static const std::vector<std::pair<std::string, std::string>> h = {
      {"fp32", "float32"}, {"f32", "float32"},    {"float", "float32"},  {"single", "float32"},
      {"fp16", "float16"}, {"f16", "float16"},    {"half", "float16"},   {"bf16", "bfloat16"},
      {"fp8", "float8e4"}, {"fp8e4", "float8e4"}, {"fp8e5", "float8e5"}, {"fp8e3", "float8e3"},
      {"i32", "int32"},    {"int", "int32"},      {"u32", "uint32"},     {"i16", "int16"},
      {"u16", "uint16"},   {"i8", "int8"},        {"u8", "uint8"},       {"i64", "int64"},
      {"u64", "uint64"}};
  return h;
}

namespace {
struct ItNameRow {
  const char *name;
  const char *family;
};
const ItNameRow *it_name_rows() {
#define NS_IT(ord, name, family) ItNameRow{#name, family},
  static const ItNameRow rows[] = {
#include "neuronsim/isa/tables/instruction_types.def"
  };
#undef NS_IT
  static_assert(sizeof(rows) / sizeof(rows[0]) == kNumInstructionTypes, "instruction_types.def must have 110 rows");
  return rows;
}
bool it_in_range(InstructionType t) {
  int i = static_cast<int>(t);
  return i >= 0 && i < kNumInstructionTypes;
}

using namespace engine_tokens;  // instruction_wire.def's engines column

// "Save DMACopy" -> {Save, DMACopy}. An unknown name is a table bug: fail loudly at first use.
std::vector<InstructionType> parse_name_list(const char *owner, const char *list) {
  std::vector<InstructionType> out;
  std::string_view s(list);
  while (!s.empty()) {
    size_t sp = s.find(' ');
    std::string_view tok = s.substr(0, sp);
    if (!tok.empty()) {
      auto t = inst_type_from_name(tok);
      if (!t)
        throw std::logic_error(std::string("instruction_wire.def row ") + owner + ": unknown name '" +
                               std::string(tok) + "'");
      out.push_back(*t);
    }
    if (sp == std::string_view::npos) break;
    s.remove_prefix(sp + 1);
  }
  return out;
}

std::vector<InstTypeInfo> build_inst_type_infos() {
  std::vector<InstTypeInfo> rows;
#define NS_LIST(...) {__VA_ARGS__}
#define NS_ITW(name, kind, engines, engine_text, v2, v3, v4, min_b, max_b, split, col, shared, conf)             \
  rows.push_back(InstTypeInfo{InstructionType::name, #name, "", InstKind::kind, std::vector<Engine> NS_LIST engines, \
                              engine_text,                                                                       \
                              {std::vector<uint8_t> NS_LIST v2, std::vector<uint8_t> NS_LIST v3,                  \
                               std::vector<uint8_t> NS_LIST v4},                                                  \
                              min_b, max_b, split, parse_name_list(#name, col), parse_name_list(#name, shared), conf});
#include "tables/instruction_wire.def"
#undef NS_ITW
#undef NS_LIST
  // Re-index by ordinal and insist on exactly one row per InstructionType.
  std::vector<InstTypeInfo> by_ord;
  by_ord.reserve(kNumInstructionTypes);
  for (int i = 0; i < kNumInstructionTypes; ++i) {
    auto it = std::find_if(rows.begin(), rows.end(),
                           [i](const InstTypeInfo &r) { return static_cast<int>(r.type) == i; });
    if (it == rows.end() || std::count_if(rows.begin(), rows.end(), [i](const InstTypeInfo &r) {
                              return static_cast<int>(r.type) == i;
                            }) != 1)
      throw std::logic_error(std::string("instruction_wire.def: need exactly one row for ") +
                             it_name_rows()[i].name);
    by_ord.push_back(*it);
    by_ord.back().family = it_name_rows()[i].family;
  }
  if (rows.size() != static_cast<size_t>(kNumInstructionTypes))
    throw std::logic_error("instruction_wire.def: expected 110 rows");
  return by_ord;
}
} // namespace

const char *inst_type_name(InstructionType t) { return it_in_range(t) ? it_name_rows()[static_cast<int>(t)].name : "?"; }

const char *inst_type_family(InstructionType t) {
  return it_in_range(t) ? it_name_rows()[static_cast<int>(t)].family : "?";
}

std::optional<InstructionType> inst_type_from_name(std::string_view name) {
  for (int i = 0; i < kNumInstructionTypes; ++i)
    if (name == it_name_rows()[i].name) return static_cast<InstructionType>(i);
  return std::nullopt;
}

InstructionType parse_inst_type(std::string_view name, const ErrorContext &ctx) {
  if (auto t = inst_type_from_name(name)) return *t;
  std::vector<std::string> names;
  for (int i = 0; i < kNumInstructionTypes; ++i)
    names.push_back(it_name_rows()[i].name);
  // 110 names: the nearest and where the list is, not the list itself.
  const std::string near = nearest_name(name, names);
  throw InputError(ctx, "unknown InstructionType '" + std::string(name) + "'" +
                            (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                            "; `neuronsim isa --explain` lists the types");
}

const char *inst_kind_name(InstKind kind) {
  switch (kind) {
  case InstKind::Base: return "abstract_base";
  case InstKind::Lowered: return "lowered";
  case InstKind::Carrier: return "carrier";
  case InstKind::Concrete: return "concrete";
  }
  return "?";
}

std::vector<uint16_t> InstTypeInfo::l3_for(CoreGen gen) const {
  std::vector<uint16_t> out;
  for (uint8_t b : l2_for(gen)) out.push_back(l3_word(b));
  return out;
}

const std::vector<InstTypeInfo> &inst_type_infos() {
  static const std::vector<InstTypeInfo> table = build_inst_type_infos();
  return table;
}

const InstTypeInfo &inst_type_info(InstructionType t) { return inst_type_infos().at(static_cast<size_t>(t)); }

std::vector<InstructionType> inst_types_for_l2(uint8_t l2, CoreGen gen) {
  std::vector<InstructionType> out;
  for (const auto &info : inst_type_infos()) {
    const auto &bytes = info.l2_for(gen);
    if (std::find(bytes.begin(), bytes.end(), l2) != bytes.end()) out.push_back(info.type);
  }
  return out;
}

std::optional<L3Header> parse_l3_word(uint16_t word) {
  const uint8_t hi = static_cast<uint8_t>(word >> 8), lo = static_cast<uint8_t>(word & 0xFF);
  if (hi == kL3LengthByte) return L3Header{lo, false};
  // spec 003 INV-1: QuantizeMx (L2 0xE3) is the only op that sets bit 0 of the length byte (SATURATE).
  if (hi == (kL3LengthByte | 1) && lo == 0xE3) return L3Header{lo, true};
  return std::nullopt;
}

namespace {
struct ActSet {
  const char *name;
  std::vector<ActivationFunctionType> members;
};
const std::vector<ActSet> &act_sets() {
  static const std::vector<ActSet> t = [] {
    std::vector<ActSet> v;
    auto add = [&](const char *name, std::string_view members) {
      ActSet s{name, {}};
      while (!members.empty()) {
        const size_t sp = members.find(' ');
        const std::string_view word = members.substr(0, sp);
        const auto f = enum_from_name<ActivationFunctionType>(word);
        if (!f) throw std::logic_error("act_func_sets.def: no ActivationFunctionType '" + std::string(word) + "'");
        s.members.push_back(*f);
        members = sp == std::string_view::npos ? std::string_view() : members.substr(sp + 1);
      }
      v.push_back(std::move(s));
    };
#define NS_ACT_SET(name, members) add(#name, members);
#include "neuronsim/isa/tables/act_func_sets.def"
#undef NS_ACT_SET
    return v;
  }();
  return t;
}
} // namespace

int act_func_set_count() { return static_cast<int>(act_sets().size()); }

const char *act_func_set_name(int index) {
  return index >= 0 && index < act_func_set_count() ? act_sets()[static_cast<size_t>(index)].name : nullptr;
}

uint32_t act_func_sets_holding(ActivationFunctionType f) {
  // By ordinal, made once: a run asks once per activation instruction.
  static const std::vector<uint32_t> by_ordinal = [] {
    int n = 0;
    for (const auto &e : EnumTraits<ActivationFunctionType>::entries) n = std::max(n, e.ordinal + 1);
    std::vector<uint32_t> v(static_cast<size_t>(n), 0);
    for (size_t i = 0; i < act_sets().size(); ++i)
      for (ActivationFunctionType x : act_sets()[i].members) v[static_cast<size_t>(x)] |= 1u << i;
    return v;
  }();
  const auto o = static_cast<size_t>(f);
  return o < by_ordinal.size() ? by_ordinal[o] : 0;
}

} // namespace neuronsim::isa
