// Shared helpers of engines/ops (see common.hpp).
#include "engines/ops/common.hpp"

#include <algorithm>
#include <stdexcept>

namespace neuronsim::engines::ops {

ErrorContext ctx_field(const Memory &m, const std::string &field) {
  ErrorContext c = m.context();
  c.field = field;
  return c;
}

void unsupported(const Memory &m, const std::string &field, const std::string &msg) {
  throw SemanticError(ctx_field(m, field), msg);
}

bool has_in(const DynInst &d, size_t i) { return i < d.inst->ins.size(); }

double imm_value(const DynInst &d, size_t i) {
  if (i < d.imm.size()) return d.imm[i];
  return d.inst->ins.at(i).imm;
}

bool is_imm(const DynInst &d, size_t i) { return has_in(d, i) && d.inst->ins[i].kind == isa::ArgKind::Immediate; }

bool has_in_ap(const DynInst &d, size_t i) {
  return i < d.ins.size() && i < d.inst->ins.size() && d.inst->ins[i].kind == isa::ArgKind::AccessPattern &&
         d.ins[i].tensor >= 0;
}

const Access &in_ap(const DynInst &d, const Memory &m, size_t i) {
  if (!has_in_ap(d, i))
    unsupported(m, "ins[" + std::to_string(i) + "]",
                i < d.inst->ins.size() ? "expected an access pattern, got '" + d.inst->ins[i].json_kind + "'"
                                       : "missing operand (the instruction has " +
                                             std::to_string(d.inst->ins.size()) + " inputs)");
  return d.ins[i];
}

const Access &out_ap(const DynInst &d, const Memory &m, size_t i) {
  if (!(i < d.outs.size() && i < d.inst->outs.size() && d.inst->outs[i].kind == isa::ArgKind::AccessPattern &&
        d.outs[i].tensor >= 0))
    unsupported(m, "outs[" + std::to_string(i) + "]", "expected an output access pattern");
  return d.outs[i];
}

Tile read_tile(const Memory &m, const Access &a) {
  Tile t(a.partitions(), a.free_elements());
  m.read_f32(a, t.data());
  return t;
}

TileI read_tile_i32(const Memory &m, const Access &a) {
  TileI t(a.partitions(), a.free_elements());
  m.read_i32(a, t.data());
  return t;
}

void write_flat(Memory &m, const Access &a, const float *v, int64_t n, const char *field) {
  if (elems(a) != n)
    unsupported(m, field,
                "output has " + std::to_string(elems(a)) + " elements, the result has " + std::to_string(n));
  m.write_f32(a, v);
}

void write_flat_i32(Memory &m, const Access &a, const int32_t *v, int64_t n, const char *field) {
  if (elems(a) != n)
    unsupported(m, field,
                "output has " + std::to_string(elems(a)) + " elements, the result has " + std::to_string(n));
  m.write_i32(a, v);
}

void require_cols(const Memory &m, const Access &a, int64_t cols, const char *field) {
  if (a.free_elements() != cols)
    unsupported(m, field, "expected " + std::to_string(cols) + " elements per partition, got " +
                              std::to_string(a.free_elements()));
}

void require_same_count(const Memory &m, const Access &a, const Access &b, const char *field) {
  if (elems(a) != elems(b))
    unsupported(m, field,
                "element count " + std::to_string(elems(b)) + " differs from the first input's " +
                    std::to_string(elems(a)));
}

std::vector<float> per_partition(const DynInst &d, const Memory &m, size_t i, int64_t parts) {
  const std::string field = "ins[" + std::to_string(i) + "]";
  if (!has_in(d, i)) unsupported(m, field, "missing scalar operand");
  const isa::Arg &arg = d.inst->ins[i];
  if (arg.kind == isa::ArgKind::Immediate)
    return std::vector<float>(static_cast<size_t>(parts), float(imm_value(d, i)));
  if (arg.kind == isa::ArgKind::ImmArray && arg.imm_array.size() == 1)
    return std::vector<float>(static_cast<size_t>(parts), float(arg.imm_array[0]));
  if (arg.kind != isa::ArgKind::AccessPattern)
    unsupported(m, field, "scalar operand of kind '" + arg.json_kind + "' is not supported");
  const Access &a = in_ap(d, m, i);
  Tile t = read_tile(m, a);
  if (t.size() == 1) return std::vector<float>(static_cast<size_t>(parts), t(0, 0));
  // reference sim-elementwise-datamove.md 2.2: a scalar tensor is one value per partition row ([P, 1]).
  if (t.rows() != parts || t.cols() != 1)
    unsupported(m, field,
                "a per-partition scalar must be [" + std::to_string(parts) + ", 1], got [" +
                    std::to_string(t.rows()) + ", " + std::to_string(t.cols()) + "]");
  return std::vector<float>(t.data(), t.data() + parts);
}

const std::vector<Memory::Chunk> *stream_chunks(Memory &m, const Access *const *acc, size_t n) {
  thread_local std::vector<Memory::Chunk> lists[4];
  if (n < 1 || n > 4) throw std::logic_error("stream_chunks: 1 to 4 accesses");
  for (size_t k = 0; k < n; ++k)
    if (!m.chunks(*acc[k], lists[k])) return nullptr;
  const Footprint fo = m.footprint(*acc[n - 1]);
  for (size_t k = 0; k + 1 < n; ++k)
    if (fo.overlaps(m.footprint(*acc[k]))) return nullptr;
  return lists;
}

bool is_int_dtype(isa::Dtype t) { return !isa::dtype_is_float(t); }
bool is_bitvec(isa::AluOp op) { return isa::alu_info(op).bitvec; }

void fold_accumulator(const Memory &m, EngineState &st, isa::EngineAccumulationType acc, const Tile &rows,
                      const char *field) {
  engine_accumulate(m, st, acc, isa::AluOp::add, rows, nullptr, field);
}

int64_t reg_read(const Memory &m, const EngineState &st, const std::string &name, const char *field) {
  for (const auto &r : st.regs)
    if (r.first == name) return r.second;
  throw SimulationError(ctx_field(m, field), "register '" + name + "' is read before it is written");
}

void reg_write(EngineState &st, const std::string &name, int64_t v) {
  for (auto &r : st.regs)
    if (r.first == name) {
      r.second = v;
      return;
    }
  st.regs.emplace_back(name, v);
}

int64_t scalar_int(const DynInst &d, const Memory &m, const EngineState &st, size_t i) {
  const std::string field = "ins[" + std::to_string(i) + "]";
  if (!has_in(d, i)) unsupported(m, field, "missing scalar operand");
  const isa::Arg &a = d.inst->ins[i];
  if (a.kind == isa::ArgKind::Register) return reg_read(m, st, a.reg, field.c_str());
  if (a.kind == isa::ArgKind::Immediate) return static_cast<int64_t>(imm_value(d, i));
  const Access &ap = in_ap(d, m, i);
  TileI t = read_tile_i32(m, ap);
  if (t.size() < 1) unsupported(m, field, "empty scalar access");
  return t(0, 0);
}

} // namespace neuronsim::engines::ops

namespace neuronsim::engines::ops {

namespace {
template <typename T>
std::vector<T> permute(const std::vector<T> &in, const std::vector<int64_t> *perm, int64_t esz) {
  if (!perm) return in;
  std::vector<T> out(perm->size() * static_cast<size_t>(esz));
  for (size_t i = 0; i < perm->size(); ++i)
    std::copy_n(in.begin() + (*perm)[i] * esz, esz, out.begin() + static_cast<int64_t>(i) * esz);
  return out;
}
} // namespace

void move_elements(Memory &m, const Access &src, const Access &dst, const std::vector<int64_t> *src_of_dst,
                   const char *field) {
  const int64_t ns = elems(src), nd = elems(dst);
  if (!src_of_dst && ns != nd)
    unsupported(m, field,
                "destination has " + std::to_string(nd) + " elements, the source " + std::to_string(ns));
  if (src_of_dst && static_cast<int64_t>(src_of_dst->size()) != nd)
    unsupported(m, field, "destination element count does not match the data-movement pattern");
  if (src.dtype == dst.dtype) {
    const int64_t esz = isa::dtype_size(src.dtype);
    std::vector<uint8_t> buf(static_cast<size_t>(ns * esz));
    m.read_raw(src, buf.data());
    m.write_raw(dst, permute(buf, src_of_dst, esz).data());
  } else if (is_int_dtype(src.dtype) && is_int_dtype(dst.dtype)) {
    std::vector<int32_t> buf(static_cast<size_t>(ns));
    m.read_i32(src, buf.data());
    m.write_i32(dst, permute(buf, src_of_dst, 1).data());
  } else {
    std::vector<float> buf(static_cast<size_t>(ns));
    m.read_f32(src, buf.data());
    m.write_f32(dst, permute(buf, src_of_dst, 1).data());
  }
}

} // namespace neuronsim::engines::ops
