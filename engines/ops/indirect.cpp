// Indirect and dynamic data movement (reference neuronx-cc/bir/sim-elementwise-datamove.md 6: one gather/scatter
// machine, Memory::doCopyIndirect -- a serial, in-order loop over an index list where -1 means "skip"; a
// scatter-add therefore accumulates duplicate indices in list order, and a plain scatter is last-writer-wins).
//
// The entry model used by the Load/Save family: an index tensor of K elements (int32 / uint32 / uint16 / int64,
// read as integers) selects K entries; an entry is E consecutive elements in the walk order of the table access
// (E = the non-table side's element count / K). A negative index (-1, or 0xFFFFFFFF read as int32) is skipped.
// The -0x100000000 rebase of 64-bit address lists is an address-encoding detail of birsim's byte addresses and
// has no counterpart here (indices are entry numbers, not addresses).
//
//   IndirectLoad    ins[0] table, ins[1] indices -> outs[0]: out entry k = table entry idx[k]
//   IndirectCopy    the same, using only the first num_valid_indices indices (when given)
//   IndirectSave    ins[0] values, ins[1] indices -> outs[0] table: table entry idx[k] = values entry k
//   With oob_is_err false (NKI dma_copy oob_mode.skip: "silently skips any operations involving out-of-bounds
//   indices", public NKI docs nki.isa.dma_copy), an IndirectLoad / IndirectCopy / IndirectSave entry beyond the
//   table access is skipped like a negative index; by default it is a run-time error.
//   IndirectSaveAccumulate  the same with table entry idx[k] += values entry k (fp32, or the int32 lane for
//                   integer tables; each step is rounded to the table dtype, as cast_copy_or_accumulate does per
//                   element); entries k >= num_indices are skipped when num_indices is given; entry_step_elements,
//                   when given, places index i at element i * entry_step_elements of the table walk.
//   Gather          NKI nc_n_gather: per partition, out[p][i] = data[p][idx[p][i]] (ins[0] data, ins[1] indices
//                   with the output's shape) -- INFERRED operand order, no birsim body in the reference.
//                   With num_elem_per_idx = E > 0 (neuronsim's key), NKI local_gather (public nki.isa.local_gather
//                   page and its numpy reference): each group of 16 partitions (one GpSimd core) takes its indices
//                   from its 16 partitions of ins[1] in column-major order (index (q, j) at position 16 j + q), the
//                   first num_valid_indices of them (absent: all), and every partition p of the group gathers from
//                   its own row: out[p][k E + e] = data[p][idx[k] + e].
//   GenericIndirectLoad / GenericIndirectSave
//                   ins[0] the table (Load) / the values (Save), ins[1..] one index tensor per indirect dim, named
//                   by `indirect_dims` (W=0, Z=1, Y=2, X=3 of the table access padded to 4 dims). The element
//                   position is sum_d coef_d * idx_d[e] with coef_d the product of the table dims inboard of d.
//                   Save writes with its `op` (default add; reference bir-json.md 2.2 "GenericIndirectSave |
//                   DMA + indirect_dims; op:AluOp?=add", json-schema-catalog.md `op` +0x140): bypass copies, add
//                   accumulates (reference 6.4: only {copy, add} survive AluOpType2MemoryReduction).
//   TensorCopyDynamicSrc / Dst
//                   ins[0] source, outs[0] destination, ins[1] the runtime offset (register, immediate or the
//                   first element of an access) in elements, times `scale` when given; the source (Src) or the
//                   destination (Dst) start moves by it (INFERRED from NKI tensor_copy_dynamic_src/dst: "runtime
//                   offset from a scalar in SBUF").
#include <cstring>

#include "neuronsim/engines/dtype.hpp"
#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

namespace {

std::vector<int64_t> read_indices(const Memory &m, const Access &a) {
  std::vector<int32_t> v(static_cast<size_t>(elems(a)));
  m.read_i32(a, v.data());
  std::vector<int64_t> r(v.size());
  const bool unsigned16 = a.dtype == isa::Dtype::uint16;
  for (size_t i = 0; i < v.size(); ++i) r[i] = unsigned16 ? int64_t(uint16_t(v[i])) : int64_t(v[i]);
  return r;
}

// One (destination element, source element) pair per moved element; `acc` adds instead of copying. Moves are
// applied serially in list order.
struct Moves {
  std::vector<int64_t> dst, src;
  void add_entry(int64_t d0, int64_t s0, int64_t e) {
    for (int64_t j = 0; j < e; ++j) {
      dst.push_back(d0 + j);
      src.push_back(s0 + j);
    }
  }
};

void apply_moves(Memory &m, const Access &src, const Access &dst, const Moves &mv, bool acc) {
  const int64_t ns = elems(src), nd = elems(dst);
  for (size_t i = 0; i < mv.dst.size(); ++i)
    if (mv.dst[i] < 0 || mv.dst[i] >= nd || mv.src[i] < 0 || mv.src[i] >= ns)
      throw SimulationError(ctx_field(m, "ins[1]"),
                            "index selects element " + std::to_string(mv.dst[i] >= nd ? mv.dst[i] : mv.src[i]) +
                                " outside its access (" + std::to_string(mv.dst[i] >= nd ? nd : ns) +
                                " elements)");
  if (!acc && src.dtype == dst.dtype) {  // bit-exact copy
    const int64_t esz = isa::dtype_size(src.dtype);
    std::vector<uint8_t> s(static_cast<size_t>(ns * esz)), o(static_cast<size_t>(nd * esz));
    m.read_raw(src, s.data());
    m.read_raw(dst, o.data());
    for (size_t i = 0; i < mv.dst.size(); ++i)
      std::memcpy(o.data() + mv.dst[i] * esz, s.data() + mv.src[i] * esz, static_cast<size_t>(esz));
    m.write_raw(dst, o.data());
    return;
  }
  if (is_int_dtype(dst.dtype)) {
    std::vector<int32_t> s(static_cast<size_t>(ns)), o(static_cast<size_t>(nd));
    m.read_i32(src, s.data());
    m.read_i32(dst, o.data());
    for (size_t i = 0; i < mv.dst.size(); ++i) {
      int32_t &t = o[static_cast<size_t>(mv.dst[i])];
      const int32_t x = s[static_cast<size_t>(mv.src[i])];
      t = acc ? alu_apply_i32(isa::AluOp::add, t, x) : x;  // integers wrap (sim-core-arithmetic.md)
    }
    m.write_i32(dst, o.data());
    return;
  }
  std::vector<float> s(static_cast<size_t>(ns)), o(static_cast<size_t>(nd));
  m.read_f32(src, s.data());
  m.read_f32(dst, o.data());
  const int64_t esz = isa::dtype_size(dst.dtype);
  std::vector<uint8_t> tmp(static_cast<size_t>(esz));
  for (size_t i = 0; i < mv.dst.size(); ++i) {
    float &t = o[static_cast<size_t>(mv.dst[i])];
    const float x = s[static_cast<size_t>(mv.src[i])];
    t = acc ? alu_apply(isa::AluOp::add, t, x) : x;
    if (acc && dst.dtype != isa::Dtype::float32) {  // round each step to the table dtype
      store_f32(dst.dtype, &t, tmp.data(), 1);
      load_f32(dst.dtype, tmp.data(), &t, 1);
    }
  }
  m.write_f32(dst, o.data());
}

int64_t entry_size(const Memory &m, int64_t n, int64_t k, const char *field) {
  if (k <= 0 || n % k != 0)
    unsupported(m, field,
                std::to_string(n) + " elements do not split into " + std::to_string(k) + " index entries");
  return n / k;
}

// Element strides of the table access padded to [W, Z, Y, X].
void table_coefs(const Access &t, int64_t coef[4]) {
  int64_t dim[4] = {1, 1, 1, 1};
  const size_t nd = std::min<size_t>(t.ap.size(), 4);
  for (size_t i = 0; i < nd; ++i) dim[4 - nd + i] = t.ap[t.ap.size() - nd + i].num;
  coef[3] = 1;
  for (int k = 2; k >= 0; --k) coef[k] = coef[k + 1] * dim[k + 1];
}

Moves generic_moves(const DynInst &d, const Memory &m, const Access &table, int64_t n, bool table_is_dst) {
  const auto &dims = d.inst->f.indirect_dims;
  const size_t nidx = d.ins.size() - 1;
  if (dims.size() != nidx)
    unsupported(m, "indirect_dims", "number of indirect dims must match number of indices vector");
  int64_t coef[4];
  table_coefs(table, coef);
  std::vector<int64_t> pos(static_cast<size_t>(n), 0);
  for (size_t k = 0; k < nidx; ++k) {
    const Access &ia = in_ap(d, m, k + 1);
    if (elems(ia) != n) unsupported(m, "ins[" + std::to_string(k + 1) + "]", "one index per moved element");
    const int64_t dd = dims[k];
    if (dd < 0 || dd > 3) unsupported(m, "indirect_dims", "an indirect dim is W, Z, Y or X (0..3)");
    const std::vector<int64_t> idx = read_indices(m, ia);
    for (int64_t e = 0; e < n; ++e) pos[static_cast<size_t>(e)] += coef[dd] * idx[static_cast<size_t>(e)];
  }
  Moves mv;
  for (int64_t e = 0; e < n; ++e) {
    const int64_t p = pos[static_cast<size_t>(e)];
    table_is_dst ? mv.add_entry(p, e, 1) : mv.add_entry(e, p, 1);
  }
  return mv;
}

// Whether an entry that starts at element `first` of a table of n elements, e long, is skipped: beyond the table
// under oob_is_err false (NKI oob_mode.skip).
bool skip_entry(const DynInst &d, int64_t first, int64_t e, int64_t n) {
  return d.inst->has(isa::Field::oob_is_err) && !d.inst->f.oob_is_err && first + e > n;
}

} // namespace

void exec_indirect_load(const DynInst &d, Memory &m, EngineState &) {
  const Access &table = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  const std::vector<int64_t> idx = read_indices(m, in_ap(d, m, 1));
  const int64_t k = static_cast<int64_t>(idx.size());
  const int64_t e = entry_size(m, elems(out), k, "outs[0]");
  int64_t valid = k;
  if (d.inst->type == isa::InstructionType::IndirectCopy && d.inst->has(isa::Field::num_valid_indices))
    valid = std::min(k, d.inst->f.num_valid_indices);
  Moves mv;
  for (int64_t i = 0; i < valid; ++i) {
    const int64_t j = idx[static_cast<size_t>(i)];
    if (j >= 0 && !skip_entry(d, j * e, e, elems(table))) mv.add_entry(i * e, j * e, e);
  }
  apply_moves(m, table, out, mv, false);
}

void exec_indirect_save(const DynInst &d, Memory &m, EngineState &) {
  const isa::Inst &I = *d.inst;
  const Access &vals = in_ap(d, m, 0);
  const Access &table = out_ap(d, m, 0);
  const std::vector<int64_t> idx = read_indices(m, in_ap(d, m, 1));
  const int64_t k = static_cast<int64_t>(idx.size());
  const int64_t e = entry_size(m, elems(vals), k, "ins[0]");
  const bool acc = I.type == isa::InstructionType::IndirectSaveAccumulate;
  int64_t count = k;
  if (acc && I.has(isa::Field::num_indices)) {
    if (I.f.num_indices > k) unsupported(m, "num_indices", "AddrCount >= I.getNumIndices(): insufficient indices");
    count = I.f.num_indices;
  }
  const int64_t step = (acc && I.f.entry_step_elements > 0) ? I.f.entry_step_elements : e;
  // IndirectSaveAccumulate reduces with its own `op` (default add, bir-json.md 2.2) through
  // AluOpType2MemoryReduction, which keeps only copy and add (reference sim-elementwise-datamove.md 6.2 / 6.4):
  // bypass overwrites, add accumulates.
  bool add = false;
  if (acc) {
    const auto op = I.has(isa::Field::op) ? I.f.op : isa::AluOp::add;
    if (op != isa::AluOp::bypass && op != isa::AluOp::add)
      unsupported(m, "op", "only bypass (copy) and add reach the scatter (AluOpType2MemoryReduction)");
    add = op == isa::AluOp::add;
  }
  Moves mv;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t j = idx[static_cast<size_t>(i)];
    if (j >= 0 && !skip_entry(d, j * step, e, elems(table))) mv.add_entry(j * step, i * e, e);
  }
  apply_moves(m, vals, table, mv, add);
}

namespace {
void local_gather(const DynInst &d, Memory &m) {
  const Access &data = in_ap(d, m, 0);
  const Access &ia = in_ap(d, m, 1);
  const Access &out = out_ap(d, m, 0);
  const int64_t P = data.partitions(), F = data.free_elements(), J = ia.free_elements();
  const int64_t E = d.inst->f.num_elem_per_idx;
  if (ia.partitions() != P || P % 16 != 0)
    unsupported(m, "ins[1]", "the index tile has the data's partitions, a multiple of 16 (one GpSimd core each)");
  const int64_t n = d.inst->f.num_valid_indices > 0 ? d.inst->f.num_valid_indices : 16 * J;
  if (n > 16 * J)
    unsupported(m, "num_valid_indices", "more than the " + std::to_string(16 * J) + " indices a core holds");
  if (out.partitions() != P || out.free_elements() != n * E)
    unsupported(m, "outs[0]", "the output holds num_valid_indices x num_elem_per_idx = " + std::to_string(n * E) +
                                  " elements per partition");
  const std::vector<int64_t> idx = read_indices(m, ia);
  Moves mv;
  for (int64_t p = 0; p < P; ++p) {
    const int64_t g = p / 16 * 16;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t j = idx[static_cast<size_t>((g + k % 16) * J + k / 16)];
      if (j < 0 || j + E > F)
        unsupported(m, "ins[1]", "index " + std::to_string(j) + " (+" + std::to_string(E) + " elements) beyond the "
                                     "partition's " + std::to_string(F) + " elements");
      mv.add_entry(p * n * E + k * E, p * F + j, E);
    }
  }
  apply_moves(m, data, out, mv, false);
}
} // namespace

void exec_gather(const DynInst &d, Memory &m, EngineState &) {
  if (d.inst->f.num_elem_per_idx > 0) return local_gather(d, m);
  const Access &data = in_ap(d, m, 0);
  const Access &ia = in_ap(d, m, 1);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, ia, out, "outs[0]");
  if (ia.partitions() != data.partitions()) unsupported(m, "ins[1]", "one index row per data partition");
  const std::vector<int64_t> idx = read_indices(m, ia);
  const int64_t f = data.free_elements(), k = ia.free_elements();
  Moves mv;
  for (int64_t p = 0; p < ia.partitions(); ++p)
    for (int64_t i = 0; i < k; ++i) {
      const int64_t j = idx[static_cast<size_t>(p * k + i)];
      if (j < 0) continue;
      if (j >= f) unsupported(m, "ins[1]", "index " + std::to_string(j) + " beyond the partition's " + std::to_string(f) + " elements");
      mv.add_entry(p * k + i, p * f + j, 1);
    }
  apply_moves(m, data, out, mv, false);
}

void exec_generic_indirect_load(const DynInst &d, Memory &m, EngineState &) {
  const Access &table = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  apply_moves(m, table, out, generic_moves(d, m, table, elems(out), false), false);
}

void exec_generic_indirect_save(const DynInst &d, Memory &m, EngineState &) {
  const Access &vals = in_ap(d, m, 0);
  const Access &table = out_ap(d, m, 0);
  // The reduction is GenericIndirectSave's own `op` key, default add (reference bir-json.md 2.2,
  // json-schema-catalog.md InstGenericIndirectSave `op` +0x140). It was read from `cce_op` (DMACopy's key, default
  // bypass), so a compiler-written "op": "add" scatter overwrote instead of accumulating.
  const auto op = d.inst->has(isa::Field::op) ? d.inst->f.op : isa::AluOp::add;
  if (op != isa::AluOp::bypass && op != isa::AluOp::add)
    unsupported(m, "op", "only bypass (copy) and add reach the scatter (AluOpType2MemoryReduction)");
  apply_moves(m, vals, table, generic_moves(d, m, table, elems(vals), true), op == isa::AluOp::add);
}

void exec_copy_dynamic(const DynInst &d, Memory &m, EngineState &st) {
  Access src = in_ap(d, m, 0);
  Access dst = out_ap(d, m, 0);
  const int64_t scale = d.inst->has(isa::Field::scale) ? static_cast<int64_t>(d.inst->f.scale) : 1;
  const int64_t off = scalar_int(d, m, st, 1) * scale;
  if (d.inst->type == isa::InstructionType::TensorCopyDynamicSrc) src.start += off;
  else dst.start += off;
  move_elements(m, src, dst, nullptr);
}

} // namespace neuronsim::engines::ops
