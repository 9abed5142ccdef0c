// Selection and search: RangeSelect (+ its accumulator), the DVE top-8 set (Max, MaxIndex, MatchReplace,
// MaxIndexAndMatchReplace), NonzeroWithCount and GetSequenceBounds. Values are compared in fp32 (reference
// neuronx-cc/bir/sim-bn-rng-collective-dma.md 3: every input is widened to fp32 first).
//
// Operand conventions:
//   RangeSelect  ins[0] on_true tile, ins[1] bound0, ins[2] bound1 (immediate or [P, 1]); optional ins[3] the
//                LoadAccumulate seed. Element (p, j) is kept when compare_op0(j + base, bound0) and
//                compare_op1(j + base, bound1) hold (j = free index, `base` = NKI range_start, compared in fp32),
//                else `fill_value` (NKI range_select). The kept/filled row is folded into the DVE registers
//                with `reduce_op` (default max) under `reduce_cmd`; outs[1], when present, receives the registers.
//   Max          ins[0] data [P, N] -> outs[0] [P, 8] descending (8-slot insertion sort, strict '>': the earliest
//                equal value keeps its slot; NaN never displaces and is never displaced -- reference 3.1).
//   MaxIndex     ins[0] vals [P, 8], ins[1] data [P, N] -> outs[0] [P, 8] uint32: first-occurrence index per
//                value, one-to-one over duplicates, 0xFFFFFFFF when absent (reference 3.2).
//   MatchReplace ins[0] vals [P, 8], ins[1] data -> outs[0] data with each matched value struck out by
//                `imm_value` (or an immediate ins[2]); MaxIndexAndMatchReplace also writes outs[1] = the uint32
//                indices of the matches (reference 3.3: the data loop is outer). The vals loop runs k = 7 down to 0
//                (reference neuron-arch.md 3.3 "walks vals from i = 7 down to 0"; the public nki.isa.nc_match_replace8
//                page's example: data [1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8], vals [3, 8 x 7] -> dst_idx
//                [2, 10, 9, 8, 7, 6, 5, 4]), so duplicate vals take their matches highest slot first.
//   NonzeroWithCount  ins[0] [P, T] -> outs[0] [P, T+1] int32: indices of nonzero elements (+ index_offset =
//                immediate ins[1], default 0), then padding (immediate ins[2], default -1), then the count (NKI
//                nonzero_with_count; birsim has no kernel). INFERRED: every given partition is processed (the
//                hardware restriction to partitions 0, 16, ..., 112 is a placement rule, not modelled).
//   GetSequenceBounds ins[0] segment ids [1, n] -> outs[0] [1, 2n]: starts (n values) then ends (n values);
//                id 0 is padding (start n, end -1) (NKI sequence_bounds). INFERRED: end is exclusive (last
//                index + 1) -- the public page's NumPy listing is cut before it defines max_bounds.
#include <cstdint>
#include <limits>

#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

namespace {

constexpr int64_t kTop = 8;

// Integer results to an integer output as integers, to a float output as their values (not their bits).
void write_ints(Memory &m, const Access &a, const int32_t *v, int64_t n, const char *field) {
  if (is_int_dtype(a.dtype)) return write_flat_i32(m, a, v, n, field);
  std::vector<float> f(v, v + n);
  write_flat(m, a, f.data(), n, field);
}

// The shared MatchReplace body (reference doInstMatchReplaceWithOptionalMaxIndex).
void match_replace(const DynInst &d, Memory &m, bool with_indices) {
  const Access &va = in_ap(d, m, 0);
  const Access &da = in_ap(d, m, 1);
  const Access &out = out_ap(d, m, 0);
  require_cols(m, va, kTop, "ins[0]");
  require_same_count(m, da, out, "outs[0]");
  const float sentinel = (!d.inst->has(isa::Field::imm_value) && is_imm(d, 2)) ? float(imm_value(d, 2))
                                                                               : float(d.inst->f.imm_value);
  const Tile vals = read_tile(m, va);
  Tile x = read_tile(m, da);
  const int64_t parts = x.rows(), n = x.cols();
  if (vals.rows() != parts) unsupported(m, "ins[0]", "one row of values per data partition");
  TileI idx = TileI::Constant(parts, kTop, -1);
  for (int64_t p = 0; p < parts; ++p) {
    bool matched[kTop] = {};
    for (int64_t i = 0; i < n; ++i) {
      const float v = x(p, i);
      for (int64_t k = kTop - 1; k >= 0; --k) {
        if (matched[k] || !(v == vals(p, k))) continue;
        matched[k] = true;
        x(p, i) = sentinel;
        idx(p, k) = static_cast<int32_t>(i);
        break;
      }
    }
  }
  m.write_f32(out, x.data());
  if (with_indices) {
    const Access &io = out_ap(d, m, 1);
    require_cols(m, io, kTop, "outs[1]");
    write_ints(m, io, idx.data(), idx.size(), "outs[1]");
  }
}

} // namespace

void exec_range_select(const DynInst &d, Memory &m, EngineState &st) {
  const auto &f = d.inst->f;
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, in, out, "outs[0]");
  const int64_t parts = in.partitions(), n = in.free_elements();
  const std::vector<float> b0 = per_partition(d, m, 1, parts), b1 = per_partition(d, m, 2, parts);
  std::vector<float> load;
  if (has_in(d, 3)) load = per_partition(d, m, 3, parts);
  // The index row j + base in fp32 (NKI: "Compared in FP32 (keep indices < 2^24)").
  std::vector<float> index(static_cast<size_t>(n)), c0(index), c1(index);
  for (int64_t j = 0; j < n; ++j) index[static_cast<size_t>(j)] = float(j + f.base);
  const float fill = float(f.fill_value);
  Tile x = read_tile(m, in);
  for (int64_t p = 0; p < parts; ++p) {
    alu_vs(f.compare_op0, index.data(), b0[static_cast<size_t>(p)], c0.data(), n);
    alu_vs(f.compare_op1, index.data(), b1[static_cast<size_t>(p)], c1.data(), n);
    float *row = x.row(p).data();
    for (int64_t j = 0; j < n; ++j)
      if (!(c0[static_cast<size_t>(j)] != 0.0f && c1[static_cast<size_t>(j)] != 0.0f)) row[j] = fill;
  }
  engine_accumulate(m, st, f.reduce_cmd, f.reduce_op, x, has_in(d, 3) ? &load : nullptr, "reduce_cmd");
  m.write_f32(out, x.data());
  if (d.outs.size() > 1) drain_accumulator(m, st, out_ap(d, m, 1), false, "outs[1]");
}

void exec_max8(const DynInst &d, Memory &m, EngineState &) {
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  require_cols(m, out, kTop, "outs[0]");
  const Tile x = read_tile(m, in);
  const int64_t parts = x.rows(), n = x.cols();
  if (n < kTop) unsupported(m, "ins[0]", "Max needs at least 8 elements per partition (8 <= N <= 16384)");
  if (out.partitions() != parts) unsupported(m, "outs[0]", "one output row per input partition");
  Tile o(parts, kTop);
  for (int64_t p = 0; p < parts; ++p) {
    float slot[kTop];
    int64_t used = 0;
    for (int64_t i = 0; i < n; ++i) {
      float carry = x(p, i);
      for (int64_t k = 0; k < kTop; ++k) {
        if (k == used) {
          slot[k] = carry;
          ++used;
          break;
        }
        if (carry > slot[k]) std::swap(carry, slot[k]);  // strict '>' (comiss/jbe)
      }
    }
    for (int64_t k = 0; k < kTop; ++k) o(p, k) = slot[k];
  }
  m.write_f32(out, o.data());
}

void exec_max_index(const DynInst &d, Memory &m, EngineState &) {
  const Access &va = in_ap(d, m, 0);
  const Access &da = in_ap(d, m, 1);
  const Access &out = out_ap(d, m, 0);
  require_cols(m, va, kTop, "ins[0]");
  require_cols(m, out, kTop, "outs[0]");
  const Tile vals = read_tile(m, va), x = read_tile(m, da);
  const int64_t parts = x.rows(), n = x.cols();
  if (vals.rows() != parts) unsupported(m, "ins[0]", "one row of values per data partition");
  TileI idx = TileI::Constant(parts, kTop, -1);  // 0xFFFFFFFF as uint32
  for (int64_t p = 0; p < parts; ++p) {
    bool matched[kTop] = {};
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < kTop; ++k) {
        if (matched[k] || !(x(p, i) == vals(p, k))) continue;
        matched[k] = true;
        idx(p, k) = static_cast<int32_t>(i);
        break;
      }
  }
  write_ints(m, out, idx.data(), idx.size(), "outs[0]");
}

void exec_match_replace(const DynInst &d, Memory &m, EngineState &) {
  match_replace(d, m, d.inst->type == isa::InstructionType::MaxIndexAndMatchReplace);
}

void exec_nonzero_with_count(const DynInst &d, Memory &m, EngineState &) {
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  const int64_t parts = in.partitions(), T = in.free_elements();
  require_cols(m, out, T + 1, "outs[0]");
  const int32_t offset = is_imm(d, 1) ? static_cast<int32_t>(imm_value(d, 1)) : 0;
  const int32_t pad = is_imm(d, 2) ? static_cast<int32_t>(imm_value(d, 2)) : -1;
  const Tile x = read_tile(m, in);
  TileI o = TileI::Constant(parts, T + 1, pad);
  for (int64_t p = 0; p < parts; ++p) {
    int32_t c = 0;
    for (int64_t i = 0; i < T; ++i)
      if (x(p, i) != 0.0f) o(p, c++) = static_cast<int32_t>(i) + offset;
    o(p, T) = c;
  }
  write_ints(m, out, o.data(), o.size(), "outs[0]");
}

void exec_get_sequence_bounds(const DynInst &d, Memory &m, EngineState &) {
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  const int64_t n = elems(in);
  if (in.partitions() != 1) unsupported(m, "ins[0]", "the partition dimension must be 1 (NKI sequence_bounds)");
  if (elems(out) != 2 * n) unsupported(m, "outs[0]", "the output holds a start and an end per element");
  const Tile s = read_tile(m, in);  // ids compared by value (fp32 or int32 input)
  std::vector<int32_t> o(static_cast<size_t>(2 * n));
  const int32_t N = static_cast<int32_t>(n);
  for (int64_t i = 0; i < n; ++i) {
    const float id = s(0, i);
    if (id == 0.0f) {
      o[static_cast<size_t>(i)] = N;
      o[static_cast<size_t>(n + i)] = -1;
      continue;
    }
    o[static_cast<size_t>(i)] = (i > 0 && s(0, i - 1) == id) ? o[static_cast<size_t>(i - 1)] : int32_t(i);
  }
  for (int64_t i = n - 1; i >= 0; --i) {
    const float id = s(0, i);
    if (id == 0.0f) continue;
    o[static_cast<size_t>(n + i)] =
        (i + 1 < n && s(0, i + 1) == id) ? o[static_cast<size_t>(n + i + 1)] : int32_t(i + 1);
  }
  write_ints(m, out, o.data(), 2 * n, "outs[0]");
}

} // namespace neuronsim::engines::ops
