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

// The fp32 lane without dense tiles (stream, common.hpp): block by block, fp32 operands straight from memory,
// others converted through a small buffer, each block written as it is done. Same values as the tile path below
// (see stream for when it applies; false sends the caller there). Profiled (bench/bench_sim.cpp (a), fp32
// 128x2048): the tile path spent its time copying three 1 MiB tiles and allocating them per instruction.
bool stream_vv(Memory &m, isa::AluOp op, const Access &a, const Access &b, const Access &out) {
  constexpr int64_t kBlock = 2048;
  thread_local std::vector<float> buf(3 * kBlock);
  float *ba = buf.data(), *bb = ba + kBlock, *bo = bb + kBlock;
  const isa::Dtype ta = a.dtype, tb = b.dtype, to = out.dtype;
  const bool fa = is_fp32_storage(ta), fb = is_fp32_storage(tb), fo = is_fp32_storage(to);
  auto direct = [](bool fp32, const uint8_t *p) {
    return fp32 && reinterpret_cast<uintptr_t>(p) % alignof(float) == 0;
  };
  return stream<2>(m, {&a, &b, &out}, kBlock, [&](const std::array<uint8_t *, 3> &p, int64_t n) {
    const bool da = direct(fa, p[0]), db = direct(fb, p[1]), dout = direct(fo, p[2]);
    if (!da) load_f32(ta, p[0], ba, n);
    if (!db) load_f32(tb, p[1], bb, n);
    float *vo = dout ? reinterpret_cast<float *>(p[2]) : bo;
    alu_vv(op, da ? reinterpret_cast<const float *>(p[0]) : ba, db ? reinterpret_cast<const float *>(p[1]) : bb, vo,
           n);
    if (!dout) store_f32(to, bo, p[2], n);
  });
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
