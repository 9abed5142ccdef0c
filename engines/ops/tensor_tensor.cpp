// TensorTensor: out = in0 op in1, elementwise in walk order (reference neuronx-cc/bir/sim-elementwise-datamove.md
// 2.3 doTensorTensor: a flat loop over numElems). in0 is the accumulator / LHS of the ALU op (spec 000
// "Commutativity": acc op x). Bit-vector ops, and ops whose operands and output are all integers, run in the
// int32 lane (the ts_int_ops map); everything else in fp32 (ts_ops).
// `acc` folds the output rows into the DVE accumulator registers with add (TensorTensor has no reduce-op field;
// INFERRED), through the machine in accumulator.cpp; ins[2], when present, is the LoadAccumulate seed
// (immediate or [P, 1]); outs[1], when present, receives the registers (the fused DveReadAccumulator drain).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "engines/ops/common.hpp"
#include "neuronsim/engines/dtype.hpp"

namespace neuronsim::engines::ops {

namespace {

bool is_fp32_storage(isa::Dtype t) { return t == isa::Dtype::float32 || t == isa::Dtype::float32r; }

// The fp32 lane without dense tiles: walks the three accesses' chunks together and computes block by block
// (fp32 operands straight from memory, others converted through a small buffer), writing each block as it is
// done. Same values in the same order as read, read, compute, write -- provided the output does not overlap an
// input (a write could then land before a read of the same bytes); false when it does, or when the memory
// tracks uninitialised reads, and the caller takes the tile path. Profiled (bench/bench_sim.cpp (a), fp32
// 128x2048): the tile path spent its time copying three 1 MiB tiles and allocating them per instruction.
bool stream_vv(Memory &m, isa::AluOp op, const Access &a, const Access &b, const Access &out) {
  thread_local std::vector<Memory::Chunk> ca, cb, co;
  if (!m.chunks(a, ca) || !m.chunks(b, cb) || !m.chunks(out, co)) return false;
  const Footprint fo = m.footprint(out);
  if (fo.overlaps(m.footprint(a)) || fo.overlaps(m.footprint(b))) return false;
  constexpr int64_t kBlock = 2048;
  thread_local std::vector<float> buf(3 * kBlock);
  float *ba = buf.data(), *bb = ba + kBlock, *bo = bb + kBlock;
  const bool fa = is_fp32_storage(a.dtype), fb = is_fp32_storage(b.dtype), fo32 = is_fp32_storage(out.dtype);
  const int64_t esz_o = isa::dtype_size(out.dtype), esz_a = isa::dtype_size(a.dtype), esz_b = isa::dtype_size(b.dtype);
  size_t ia = 0, ib = 0, io = 0;
  int64_t oa = 0, ob = 0, oo = 0;  // elements already consumed of the current chunk of each
  while (io < co.size()) {
    if (ia >= ca.size() || ib >= cb.size()) break;  // counts are equal (checked by the caller)
    const Memory::Chunk &xa = ca[ia], &xb = cb[ib], &xo = co[io];
    const int64_t n = std::min({kBlock, xa.n - oa, xb.n - ob, xo.n - oo});
    uint8_t *pa = xa.data + oa * esz_a, *pb = xb.data + ob * esz_b, *po = xo.data + oo * esz_o;
    const bool da = fa && reinterpret_cast<uintptr_t>(pa) % alignof(float) == 0;
    const bool db = fb && reinterpret_cast<uintptr_t>(pb) % alignof(float) == 0;
    const bool dout = fo32 && reinterpret_cast<uintptr_t>(po) % alignof(float) == 0;
    const float *va = da ? reinterpret_cast<const float *>(pa) : ba;
    const float *vb = db ? reinterpret_cast<const float *>(pb) : bb;
    float *vo = dout ? reinterpret_cast<float *>(po) : bo;
    if (!da) load_f32(a.dtype, pa, ba, n);
    if (!db) load_f32(b.dtype, pb, bb, n);
    alu_vv(op, va, vb, vo, n);
    if (!dout) store_f32(out.dtype, bo, po, n);
    if (xo.shadow) std::memset(xo.shadow + oo * esz_o, 1, static_cast<size_t>(n * esz_o));
    if ((oa += n) == xa.n) ++ia, oa = 0;
    if ((ob += n) == xb.n) ++ib, ob = 0;
    if ((oo += n) == xo.n) ++io, oo = 0;
  }
  return true;
}

} // namespace

void exec_tensor_tensor(const DynInst &d, Memory &m, EngineState &st) {
  const Access &a = in_ap(d, m, 0);
  const Access &b = in_ap(d, m, 1);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, a, b, "ins[1]");
  require_same_count(m, a, out, "outs[0]");
  const isa::AluOp op = d.inst->f.op;
  const int64_t n = elems(a);
  const auto acc = d.inst->f.acc;
  if (acc != isa::EngineAccumulationType::Idle) {
    if (is_bitvec(op)) unsupported(m, "acc", "accumulation of a bit-vector TensorTensor");
    Tile x = read_tile(m, a), y = read_tile(m, b);
    alu_vv(op, x.data(), y.data(), x.data(), n);
    std::vector<float> load;
    if (has_in(d, 2)) load = per_partition(d, m, 2, a.partitions());
    engine_accumulate(m, st, acc, isa::AluOp::add, x, has_in(d, 2) ? &load : nullptr, "acc");
    m.write_f32(out, x.data());
    if (d.outs.size() > 1) drain_accumulator(m, st, out_ap(d, m, 1), false, "outs[1]");
    return;
  }
  if (is_bitvec(op) || (is_int_dtype(a.dtype) && is_int_dtype(b.dtype) && is_int_dtype(out.dtype))) {
    TileI x = read_tile_i32(m, a), y = read_tile_i32(m, b);
    alu_vv_i32(op, x.data(), y.data(), x.data(), n);
    m.write_i32(out, x.data());
    return;
  }
  if (stream_vv(m, op, a, b, out)) return;
  Tile x = read_tile(m, a), y = read_tile(m, b);
  alu_vv(op, x.data(), y.data(), x.data(), n);
  m.write_f32(out, x.data());
}

} // namespace neuronsim::engines::ops
