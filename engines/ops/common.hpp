// The small helper vocabulary every engines/ops/<family>.cpp is written in (DESIGN.md 8: Spike's insns/*.h
// style): operand access, tiles, per-partition scalars and typed errors. Internal to engines/ops.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
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
using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

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
// An unsupported-shape error unless `a` has `cols` elements per partition.
void require_cols(const Memory &m, const Access &a, int64_t cols, const char *field);

// Streaming, the fast path of the elementwise families (no dense tiles). stream<K>(m, {in_0 .. in_K-1, out},
// block, fn) walks the chunks of the K inputs and the output together in walk order and calls fn(ptr, n) for
// each block of n <= block elements: ptr[k] points at the block's first element of access k (ptr[K]: the
// output). fn writes the output elements (it may read an output element before writing it); stream marks them
// written. Per element this is the same read,
// compute, write as the tile path (read every input whole, compute, write the output), provided no output byte
// is also an input byte. stream returns false, having done nothing, when one may be (their footprints overlap),
// or when uninitialised-read tracking is on (the reads must be counted): the caller then takes the tile path.
// The element counts must be equal (callers check them first). Bounds are checked like read_f32.
//
// stream_chunks: the chunk lists of n <= 4 accesses (the last one the output), or nullptr in those two cases.
const std::vector<Memory::Chunk> *stream_chunks(Memory &m, const Access *const *acc, size_t n);

// Where stream is in one access's chunk list: `left` elements to go in the current run (at p) of Chunk `cur`.
struct StreamCursor {
  const Memory::Chunk *cur = nullptr, *end = nullptr;
  uint8_t *run = nullptr, *p = nullptr;
  int64_t left = 0, runs_left = 0, esz = 0;
  void start(const std::vector<Memory::Chunk> &c, int64_t elem_size) {
    cur = c.data();
    end = c.data() + c.size();
    esz = elem_size;
    load();
  }
  void load() {
    if (cur == end) return;
    run = p = cur->data;
    left = cur->n;
    runs_left = cur->count;
  }
  void advance(int64_t n) {
    p += n * esz;
    if ((left -= n) > 0) return;
    if (--runs_left > 0) {
      run += cur->stride;
      p = run;
      left = cur->n;
      return;
    }
    ++cur;
    load();
  }
};

template <size_t K, typename Fn>
bool stream(Memory &m, const std::array<const Access *, K + 1> &acc, int64_t block, Fn &&fn) {
  const std::vector<Memory::Chunk> *c = stream_chunks(m, acc.data(), K + 1);
  if (!c) return false;
  std::array<StreamCursor, K + 1> cs;
  for (size_t k = 0; k <= K; ++k) cs[k].start(c[k], isa::dtype_size(acc[k]->dtype));
  StreamCursor &o = cs[K];
  // An output that is one rectangle already known to be written needs no marking (Memory::chunk_written).
  const bool one = c[K].size() == 1, known = one && m.chunk_written(c[K][0], o.esz);
  std::array<uint8_t *, K + 1> ptr{};
  while (o.cur != o.end) {
    int64_t n = block;
    for (size_t k = 0; k <= K; ++k) {
      if (cs[k].cur == cs[k].end) return true;  // counts are equal (checked by the caller)
      n = std::min(n, cs[k].left);
      ptr[k] = cs[k].p;
    }
    fn(ptr, n);
    if (!known) m.mark_written(o.cur->shadow ? o.cur->shadow + (o.p - o.cur->data) : nullptr, n * o.esz);
    for (size_t k = 0; k <= K; ++k) cs[k].advance(n);
  }
  if (one && !known) m.note_written(c[K][0], o.esz);
  return true;
}

// A scalar operand per partition: an immediate (broadcast to every partition) or an access with one element
// per partition ([P, 1]) or a single element ([1, 1], broadcast). Returns `parts` values.
std::vector<float> per_partition(const DynInst &d, const Memory &m, size_t i, int64_t parts);

bool is_int_dtype(isa::Dtype t);
bool is_bitvec(isa::AluOp op);

// Engine accumulator fold with `add` and no load operand (see engine_accumulate in accumulator.cpp).
void fold_accumulator(const Memory &m, EngineState &st, isa::EngineAccumulationType acc, const Tile &rows,
                      const char *field);

// The accumulator-register state machine of ACT and DVE (engines/ops/accumulator.cpp): applies `cmd` to the
// per-partition registers st.acc[0..rows.rows()) folding each row of `rows` with `op` (acc = acc op x).
// `load` is the per-partition LoadAccumulate value (nullptr when the instruction has none).
void engine_accumulate(const Memory &m, EngineState &st, isa::EngineAccumulationType cmd, isa::AluOp op,
                       const Tile &rows, const std::vector<float> *load, const char *field);
// The value a reset puts in the registers for reduce op `op` (reference neuron-arch.md 3.2).
float acc_reset_value(isa::AluOp op);
// Writes st.acc[0..out.partitions()) to `out` (one element per partition), negated when asked.
void drain_accumulator(Memory &m, const EngineState &st, const Access &out, bool negate, const char *field);
// The per-partition seed of the registers before the fold of `cmd` (Accumulate: their current value).
std::vector<float> accumulator_seed(const Memory &m, EngineState &st, isa::EngineAccumulationType cmd,
                                    isa::AluOp op, int64_t parts, const std::vector<float> *load, const char *field);

// Registers (EngineState::regs) by name; reading an unset register is a SimulationError.
int64_t reg_read(const Memory &m, const EngineState &st, const std::string &name, const char *field);
void reg_write(EngineState &st, const std::string &name, int64_t v);
// ins[i] as an integer scalar: a register, an immediate or the first element of an access pattern.
int64_t scalar_int(const DynInst &d, const Memory &m, const EngineState &st, size_t i);

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
// accumulator.cpp
void exec_read_accumulator(const DynInst &, Memory &, EngineState &);
// tensor_scalar_cache.cpp
void exec_tensor_scalar_cache(const DynInst &, Memory &, EngineState &);
// batchnorm.cpp
void exec_bn_stats(const DynInst &, Memory &, EngineState &);
void exec_bn_stats_aggregate(const DynInst &, Memory &, EngineState &);
void exec_bn_gradients(const DynInst &, Memory &, EngineState &);
void exec_bn_backprop(const DynInst &, Memory &, EngineState &);
void exec_bn_backprop2(const DynInst &, Memory &, EngineState &);
// search.cpp
void exec_range_select(const DynInst &, Memory &, EngineState &);
void exec_max8(const DynInst &, Memory &, EngineState &);
void exec_max_index(const DynInst &, Memory &, EngineState &);
void exec_match_replace(const DynInst &, Memory &, EngineState &);
void exec_nonzero_with_count(const DynInst &, Memory &, EngineState &);
void exec_get_sequence_bounds(const DynInst &, Memory &, EngineState &);
// random.cpp
void exec_rand(const DynInst &, Memory &, EngineState &);
void exec_rand2(const DynInst &, Memory &, EngineState &);
void exec_rng(const DynInst &, Memory &, EngineState &);
void exec_dropout(const DynInst &, Memory &, EngineState &);
void exec_set_rand_state(const DynInst &, Memory &, EngineState &);
void exec_get_rand_state(const DynInst &, Memory &, EngineState &);
// shuffle.cpp
void exec_stream_shuffle(const DynInst &, Memory &, EngineState &);
void exec_stream_transpose(const DynInst &, Memory &, EngineState &);
// indirect.cpp
void exec_gather(const DynInst &, Memory &, EngineState &);
void exec_indirect_load(const DynInst &, Memory &, EngineState &);
void exec_indirect_save(const DynInst &, Memory &, EngineState &);
void exec_generic_indirect_load(const DynInst &, Memory &, EngineState &);
void exec_generic_indirect_save(const DynInst &, Memory &, EngineState &);
void exec_copy_dynamic(const DynInst &, Memory &, EngineState &);
// dma_copy.cpp
void exec_dma_descriptor(const DynInst &, Memory &, EngineState &);
// registers.cpp
void exec_register_alu(const DynInst &, Memory &, EngineState &);
void exec_register_move(const DynInst &, Memory &, EngineState &);
void exec_read_var_addr(const DynInst &, Memory &, EngineState &);
void exec_tensor_load(const DynInst &, Memory &, EngineState &);
void exec_tensor_save(const DynInst &, Memory &, EngineState &);
void exec_rank_id(const DynInst &, Memory &, EngineState &);
// collective.cpp
void exec_collective_compute(const DynInst &, Memory &, EngineState &);
void exec_collective_send_recv(const DynInst &, Memory &, EngineState &);
void exec_core_barrier(const DynInst &, Memory &, EngineState &);
// kernel.cpp: CustomOp / BIRKernel through the external kernel program, DevicePrint to the print sink
// (engines/host.hpp)
void exec_external_kernel(const DynInst &, Memory &, EngineState &);
void exec_device_print(const DynInst &, Memory &, EngineState &);
// tonga_reduce.cpp
void exec_tonga_reduce(const DynInst &, Memory &, EngineState &);
// matmult.cpp / mx.cpp
void exec_matmult_sparse(const DynInst &, Memory &, EngineState &);
void exec_matmult_mx(const DynInst &, Memory &, EngineState &);
void exec_quantize_mx(const DynInst &, Memory &, EngineState &);
// The PSUM write of every matmul: group head copies, group body accumulates (matmult.cpp).
void psum_writeback(Memory &m, const isa::Inst &I, const Access &out, const Mat &result);
// One step of cuRAND XORWOW on a 6-word state (random.cpp; used by Memset Random on a per-partition state too).
uint32_t xorwow_next(uint32_t *s);

} // namespace neuronsim::engines::ops

namespace neuronsim::engines::ops {
// Moves the elements of `src` to `dst` in walk order; with `src_of_dst`, destination element i takes source
// element src_of_dst[i]. Same dtype: raw bytes (bit-exact, NKI tensor_copy / DMA). Different dtypes: cast through
// int32 when both are integers, else through fp32 with the documented rounding (reference
// sim-elementwise-datamove.md 5.1: a differing dst dtype is a cast-on-copy).
void move_elements(Memory &m, const Access &src, const Access &dst, const std::vector<int64_t> *src_of_dst,
                   const char *field = "outs[0]");
} // namespace neuronsim::engines::ops
