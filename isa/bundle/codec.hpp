// The bundle codec's inside, shared by its files (not a public header). The codec walks the rows of
// isa/tables/bundle_fields.def; each row kind has an encoder, a decoder and (where it reads differently from
// a plain hex value) a disassembler, kept side by side in the file of the family that owns the kind:
//   common.cpp         the slots every family uses: tensor descriptors (AP) and their ADDR4 placement, dtype
//                      tags, partition counts, ALU bytes, value maps, plain integers / floats / bits,
//                      constants, integer lists
//   tensor_scalar.cpp  SCAL: a scalar operand (immediate, register or [P, 1] pointer) plus its source byte
//   tensor_tensor.cpp  FILL: the Memset fill dword
//   pool_reduce.cpp    DER (values derived from other fields) and PAT (pattern pairs)
//   dma.cpp            D2SIDE (DIRECT2D records), STR (inline names), the Load / Save / DMACopy direction
//   sp_sync.cpp        the sync band (waits, updates), REG, IMMI, SENUM, SRANGE / SMASK
//   stream_pool.cpp    POOL, ARGS (the stream pool) and BLOCK (the stream's block table)
// tables.cpp builds the forms from the .def, fields.cpp reaches an InstFields member by Field, codec.cpp
// holds the row-kind table and the encode / decode / disassemble drivers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/isa/program.hpp"
#include "neuronsim/isa/tables.hpp"

namespace neuronsim::isa::codec {

// ------------------------------------------------------------------------------------------- fields
// (fields.cpp)
bool same_dims(const std::vector<ApDim> &a, const std::vector<ApDim> &b);
int64_t get_i(const InstFields &f, Field k);
void set_i(InstFields &f, Field k, int64_t x);
double get_d(const InstFields &f, Field k);
void set_d(InstFields &f, Field k, double x);
bool field_same(const InstFields &a, const InstFields &b, Field k);
std::vector<int64_t> &ilist_field(InstFields &f, Field k); // INTLIST fields (ILIST rows)
const std::vector<int64_t> &ilist_field(const InstFields &f, Field k);
std::string &str_field(InstFields &f, Field k); // STRING fields (STR, SENUM, BLOCK)
const std::string &str_field(const InstFields &f, Field k);
std::optional<PoolEntry> field_to_pool(const InstFields &f, Field k); // nullopt: the type has no pool form
bool field_from_pool(InstFields &f, Field k, const PoolEntry &e);
std::optional<Field> field_by_member(const std::string &member);
// Scheduling / bookkeeping keys no bundle carries; the generic "not representable" check skips them.
bool is_metadata_field(Field k);

// ------------------------------------------------------------------------------------------- the table
// (tables.cpp) Row kinds: the column `kind` of NS_BFIELD (bundle_fields.def explains each).
enum class K {
  AP,
  DT,
  DTLO,
  DTHI,
  NPART,
  ALU,
  VMAP,
  BOOL,
  UINT,
  INT,
  F32,
  BIT,
  CONST,
  DER,
  PAT,
  D2SIDE,
  WMODE,
  WIDX,
  WVAL,
  UMODE,
  UIDX,
  UVAL,
  SVAL,
  SCAL,
  FILL,
  ILIST,
  STR,
  POOL,
  ARGS,
  BLOCK,
  REG,
  IMMI,
  SENUM,
  SRANGE,
  SMASK
};
constexpr int kNumRowKinds = static_cast<int>(K::SMASK) + 1;
enum class CK { FIELD, IN, NOTIN, BITVEC, SAMEDT, NINS, NOUTS, ENGINE, ARGK };
enum class SyncKind { SHARED, OWN, NONE };

constexpr int kOut = 100; // role numbering: in0..in2 = 0..2, out0 = 100

struct Row {
  std::string name;
  int off = 0, width = 0;
  K kind = K::CONST;
  int arg = 0;
  int role = -1;              // operand rows
  std::optional<Field> field; // field rows
  std::string map;            // VMAP, SENUM
  int src_off = -1;           // SCAL: the source byte (-1: none, the operand must be a pointer); ILIST: count
  int elem_w = 1;             // ILIST: bytes per element
};
struct Cond {
  CK kind;
  std::vector<Field> fields;
  std::vector<int> roles;
  int64_t value;
};
struct Form {
  std::string name;
  uint8_t l2 = 0;
  unsigned gens = 0;
  int part = 0, nparts = 1;
  SyncKind sync = SyncKind::SHARED;
  std::string layout;
  std::vector<InstructionType> types;
  std::vector<bool> extra;
  std::vector<Cond> conds;
  std::vector<Row> rows;
  bool has(InstructionType t) const { return std::find(types.begin(), types.end(), t) != types.end(); }
  bool on(CoreGen g) const { return (gens >> static_cast<int>(g)) & 1u; }
};
struct Tables {
  std::vector<Form> forms;
  std::vector<Row> sync_rows;
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> maps;
  std::map<std::string, std::vector<std::pair<std::string, int64_t>>> smaps; // NS_BSMAP: spelling -> byte
};
const Tables &tables();
// The rows a bundle of form f carries: the shared sync band (SHARED forms), then the form's own.
std::vector<Row> rows_for(const Form &f);

// Value maps (NS_BVMAP) and string maps (NS_BSMAP) by name.
std::optional<int64_t> map_fwd(const std::string &name, int64_t from);
std::optional<int64_t> map_back(const std::string &name, int64_t to);
const std::vector<std::pair<std::string, int64_t>> &smap(const std::string &name);
const char *dtype_map(CoreGen g);
const char *update_map(const CodecOptions &o);

// ------------------------------------------------------------------------------------------- bytes
std::string hex(uint64_t v, int digits = 2);
// little-endian stores / loads
inline void put(uint8_t *b, int off, int width, uint64_t v) {
  for (int i = 0; i < width; ++i)
    b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint64_t get(const uint8_t *b, int off, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i)
    v |= static_cast<uint64_t>(b[off + i]) << (8 * i);
  return v;
}
inline int64_t sext(uint64_t v, int width) {
  const int bits = 8 * width;
  if (bits >= 64)
    return static_cast<int64_t>(v);
  const uint64_t sign = 1ull << (bits - 1);
  return static_cast<int64_t>((v ^ sign) - sign);
}
inline uint32_t f32_bits(double d) {
  float f = static_cast<float>(d);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline double f32_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint64_t all_ones(int width) {
  return width >= 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * width)) - 1;
}

// ------------------------------------------------------------------------------------------- placement
// (common.cpp) ADDR4 (reference isa/addr4.md, tensor-descriptors.md "Partition-axis folding"): SBUF =
// partition << 18 | byte, PSUM = 0x2000000 + (partition << 15) + byte.
constexpr int64_t kSbPartShift = 18, kPsumPartShift = 15, kPsumBase = 0x2000000, kPsumBank = 2048;

struct Ctx {
  const Program &prog;
  CoreGen gen;
  const CodecOptions &opt;
  ErrorContext ectx;
  BundlePool *pool = nullptr;        // encode: where out-of-line values go
  const BundlePool *cpool = nullptr; // decode: where they are read from
  ErrorContext at(const std::string &field) const {
    ErrorContext c = ectx;
    c.field = field;
    return c;
  }
};

int64_t elems_per_partition(const Tensor &t);
const Tensor &tensor_of(const Ctx &c, const Arg &a, const std::string &what);
int64_t const_start(const Ctx &c, const Arg &a, const std::string &what);
uint32_t addr4_of(const Ctx &c, const Tensor &t, int64_t e, const std::string &what);
// ADDR4 word -> (tensor, start element). InputError when the word is not a static SBUF/PSUM address of a
// tensor.
std::pair<int, int64_t> tensor_at(const Ctx &c, uint32_t w, const std::string &what);

// ------------------------------------------------------------------------------------------- operands
// (common.cpp)
Arg *role_arg(Inst &in, int role);
const Arg *role_arg(const Inst &in, int role);
Arg &role_arg_make(Inst &in, int role);
std::string role_name(int role);
bool cond_holds(const Cond &c, const Inst &in);

// ------------------------------------------------------------------------------------------- row kinds
// What a row's encoder sees: the instruction, the form and row, the bundle being written, and the row's
// operand.
struct EncodeRow {
  const Ctx &c;
  const Inst &in;
  const Form &form;
  const Row &r;
  uint8_t *b;
  const Arg *a;                          // operand `r.role`; null when the row names none or it is absent
  int64_t npart_default;                 // partitions of the operands with no NPART row of their own
  const std::vector<SemWait> &waits;     // what this bundle of the instruction carries (waits: the first,
  const std::vector<SemUpdate> &updates; // updates: the last)
  const std::string &what;               // "name (+0xNN)" for messages
};
// What a row's decoder sees: the bundle and row, the instruction being rebuilt (multi-bundle: across
// bundles).
struct DecodeRow {
  const Ctx &c;
  const uint8_t *b;
  const Row &r;
  Inst &in;
  size_t w0, u0;                // waits / updates the earlier bundles of this instruction decoded
  std::vector<int> &npart_role; // NPART rows seen, set on their operands once every row is decoded
  std::vector<int64_t> &npart_val;
  const std::string &what;
};
// What a row's disassembler sees.
struct DisasmRow {
  std::ostream &os;
  const uint8_t *b;
  const Row &r;
  CoreGen gen;
  const CodecOptions &opt;
};
using EncodeFn = void (*)(const EncodeRow &);
using DecodeFn = void (*)(const DecodeRow &);
using DisasmFn = void (*)(const DisasmRow &);
struct RowCodec {
  K kind;
  EncodeFn enc;
  DecodeFn dec;
  DisasmFn dis; // null: the row's bytes as hex
  int pass;     // decoding pass: 0 = dtypes (descriptors read them), 1 = the rest
};
const RowCodec &row_codec(K kind); // codec.cpp

// common.cpp
void enc_ap(const EncodeRow &e);
void dec_ap(const DecodeRow &d);
void dis_ap(const DisasmRow &d);
void enc_dtype(const EncodeRow &e); // DT / DTLO / DTHI
void dec_dtype(const DecodeRow &d);
void dis_dtype(const DisasmRow &d);
void enc_npart(const EncodeRow &e);
void dec_npart(const DecodeRow &d);
void enc_alu(const EncodeRow &e);
void dec_alu(const DecodeRow &d);
void dis_alu(const DisasmRow &d);
void enc_vmap(const EncodeRow &e);
void dec_vmap(const DecodeRow &d);
void dis_vmap(const DisasmRow &d);
void enc_bool(const EncodeRow &e);
void dec_bool(const DecodeRow &d);
void enc_bit(const EncodeRow &e);
void dec_bit(const DecodeRow &d);
void dis_bit(const DisasmRow &d);
void enc_int(const EncodeRow &e); // UINT / INT
void dec_uint(const DecodeRow &d);
void dec_int(const DecodeRow &d);
void dis_int(const DisasmRow &d);
void enc_f32(const EncodeRow &e);
void dec_f32(const DecodeRow &d);
void dis_f32(const DisasmRow &d);
void enc_const(const EncodeRow &e);
void dec_nothing(const DecodeRow &d); // CONST, DER: written, not read back
void enc_ilist(const EncodeRow &e);
void dec_ilist(const DecodeRow &d);
// tensor_scalar.cpp
void enc_scal(const EncodeRow &e);
void dec_scal(const DecodeRow &d);
void dis_scal(const DisasmRow &d);
// tensor_tensor.cpp
void enc_fill(const EncodeRow &e);
void dec_fill(const DecodeRow &d);
// pool_reduce.cpp
void enc_derived(const EncodeRow &e);
void enc_pattern(const EncodeRow &e);
void dec_pattern(const DecodeRow &d);
// dma.cpp
void enc_d2(const EncodeRow &e);
void dec_d2(const DecodeRow &d);
void dis_d2(const DisasmRow &d);
void enc_str(const EncodeRow &e);
void dec_str(const DecodeRow &d);
void dis_str(const DisasmRow &d);
// sp_sync.cpp
void enc_wait(const EncodeRow &e); // WMODE / WIDX / WVAL
void dec_wait_mode(const DecodeRow &d);
void dec_wait_idx(const DecodeRow &d);
void dec_wait_val(const DecodeRow &d);
void enc_update(const EncodeRow &e); // UMODE / UIDX / UVAL
void dec_update_mode(const DecodeRow &d);
void dec_update_idx(const DecodeRow &d);
void dec_update_val(const DecodeRow &d);
void dis_update_mode(const DisasmRow &d);
void enc_sync_value(const EncodeRow &e);
void dec_sync_value(const DecodeRow &d);
void enc_reg(const EncodeRow &e);
void dec_reg(const DecodeRow &d);
void dis_reg(const DisasmRow &d);
void enc_immi(const EncodeRow &e);
void dec_immi(const DecodeRow &d);
void dis_immi(const DisasmRow &d);
void enc_senum(const EncodeRow &e);
void dec_senum(const DecodeRow &d);
void dis_senum(const DisasmRow &d);
void enc_sema_set(const EncodeRow &e); // SRANGE / SMASK
void dec_sema_set(const DecodeRow &d);
void dis_sema_range(const DisasmRow &d);
void dis_sema_mask(const DisasmRow &d);
// stream_pool.cpp
void enc_pool(const EncodeRow &e);
void dec_pool(const DecodeRow &d);
void dis_pool(const DisasmRow &d);
void enc_args(const EncodeRow &e);
void dec_args(const DecodeRow &d);
void dis_args(const DisasmRow &d);
void enc_block(const EncodeRow &e);
void dec_block(const DecodeRow &d);
void dis_block(const DisasmRow &d);

// ------------------------------------------------------------------------------------------- shared helpers
uint32_t reg_id(const Ctx &c, const std::string &reg, const std::string &what); // sp_sync.cpp

// ------------------------------------------------------------------------------------------- family rules
// dma.cpp: what the DMA forms cannot carry although every row fits (checked before encoding), and the type a
// DIRECT2D bundle decoded without a type hint has (Load / Save / DMACopy share 0xD4 and are told apart by
// their direction).
void dma_check_encodable(const Ctx &c, const Inst &in);
void dma_resolve_type(const Ctx &c, const Form &f, bool hinted, Inst &in);

} // namespace neuronsim::isa::codec
