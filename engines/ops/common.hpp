// The small helper vocabulary every engines/ops/<family>.cpp is written in (DESIGN.md 8: Spike's insns/*.h
// style): operand access, tiles, per-partition scalars and typed errors. Internal to engines/ops.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "neuronsim/engines/alu.hpp"
#include "neuronsim/engines/memory.hpp"
#include "neuronsim/engines/ops.hpp"

namespace neuronsim::engines::ops {

using OpFn = void (*)(const DynInst &, Memory &, EngineState &);

// A dense partitions x free tile in fp32, row-major (the walk order of an access).
using Tile = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using TileI = Eigen::Array<int32_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Error context for the current instruction with `field` filled in.
ErrorContext ctx_field(const Memory &m, const std::string &field);
// SemanticError naming the field: an unsupported field value or operand combination.
[[noreturn]] void unsupported(const Memory &m, const std::string &field, const std::string &msg);

// Whether ins[i] / outs[i] exists and is an access pattern.
bool has_in_ap(const DynInst &d, size_t i);
bool has_in(const DynInst &d, size_t i);
// The value of immediate ins[i] for this dynamic instance (DynInst::imm, else the static Arg::imm).
double imm_value(const DynInst &d, size_t i);
bool is_imm(const DynInst &d, size_t i);
// ins[i] / outs[i] as an access pattern; SemanticError ("ins[i]") when missing or not an AP.
const Access &in_ap(const DynInst &d, const Memory &m, size_t i);
const Access &out_ap(const DynInst &d, const Memory &m, size_t i);

Tile read_tile(const Memory &m, const Access &a);
TileI read_tile_i32(const Memory &m, const Access &a);
// Writes n = a.partitions()*a.free_elements() values in walk order; SemanticError when the counts differ.
void write_flat(Memory &m, const Access &a, const float *v, int64_t n, const char *field = "outs[0]");
void write_flat_i32(Memory &m, const Access &a, const int32_t *v, int64_t n, const char *field = "outs[0]");
inline int64_t elems(const Access &a) { return a.partitions() * a.free_elements(); }
// SemanticError unless the two accesses have the same number of elements.
void require_same_count(const Memory &m, const Access &a, const Access &b, const char *field);

// A scalar operand per partition: an immediate (broadcast to every partition) or an access with one element
// per partition ([P, 1]) or a single element ([1, 1], broadcast). Returns `parts` values.
std::vector<float> per_partition(const DynInst &d, const Memory &m, size_t i, int64_t parts);

bool is_int_dtype(isa::Dtype t);
bool is_bitvec(isa::AluOp op);

// Engine accumulator fold (EngineAccumulationType, reference neuron-arch.md 3.2): Zero resets, Accumulate adds
// the per-partition row sums, ZeroAccumulate resets then adds. `rows` is a partitions x free tile.
void fold_accumulator(const Memory &m, EngineState &st, isa::EngineAccumulationType acc, const Tile &rows,
                      const char *field);

// The per-family entry points registered in dispatch.cpp.
void exec_copy(const DynInst &, Memory &, EngineState &);
void exec_dma_copy(const DynInst &, Memory &, EngineState &);
void exec_memset(const DynInst &, Memory &, EngineState &);
void exec_iota(const DynInst &, Memory &, EngineState &);
void exec_affine_select(const DynInst &, Memory &, EngineState &);
void exec_tensor_tensor(const DynInst &, Memory &, EngineState &);
void exec_tensor_scalar(const DynInst &, Memory &, EngineState &);
void exec_tensor_reduce(const DynInst &, Memory &, EngineState &);
void exec_pool(const DynInst &, Memory &, EngineState &);
void exec_activation(const DynInst &, Memory &, EngineState &);
void exec_reciprocal(const DynInst &, Memory &, EngineState &);
void exec_exponential(const DynInst &, Memory &, EngineState &);
void exec_select(const DynInst &, Memory &, EngineState &);
void exec_copy_predicated(const DynInst &, Memory &, EngineState &);
void exec_matmult(const DynInst &, Memory &, EngineState &);
void exec_noop(const DynInst &, Memory &, EngineState &);

} // namespace neuronsim::engines::ops

namespace neuronsim::engines::ops {
// Moves the elements of `src` to `dst` in walk order; with `src_of_dst`, destination element i takes source
// element src_of_dst[i]. Same dtype: raw bytes (bit-exact, NKI tensor_copy / DMA). Different dtypes: cast through
// int32 when both are integers, else through fp32 with the documented rounding (reference
// sim-elementwise-datamove.md 5.1: a differing dst dtype is a cast-on-copy).
void move_elements(Memory &m, const Access &src, const Access &dst, const std::vector<int64_t> *src_of_dst,
                   const char *field = "outs[0]");
} // namespace neuronsim::engines::ops
