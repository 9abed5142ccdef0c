// The lowering library: the compiler-like rules that turn tiled loop nests into BIR the way the Neuron compiler
// lowers NKI -- rotating physical buffers for loop-local tiles, PSUM tiles over banks, software pipelining of the
// loads, one DMA per load / store on the queues the compiler uses. It sits on top of the builder
// (neuronsim/builder.hpp) and is used by the workload generator (workloads/gen/) and the NKI front end
// (python/neuronsim/nki/, through the Python module): one copy of each rule. docs/nki-lowering.md states the rules
// with their sources.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "neuronsim/builder.hpp"

namespace neuronsim::lowering {

// ---- Lowering as the compiler lowers NKI (docs/timing-model.md 5) -------------------------------------------
//
// Buffers. A tile declared in a loop body gets several physical buffers, rotated by iteration (the compiler's
// SBUF address rotation, reference neuronx-cc/walrus/address-rotation.md: a ring of period >= 5 for the compute
// classes; NKI's modulo allocation, nki.compiler.sbuf.mod_alloc). The rule here: B = the largest of 4, 2, 1 that
// is at most the loop's trip count and lets the loop-local tiles, B times over, fit in trn1's usable SBUF next to
// the kernel's other tiles (176 KiB per partition, reference neuron-arch.md 1.4 [NKIPY-HW]). 4 is the largest
// power of two within the ring period. B need not divide the trip count: pipelined_loop peels the remainder, so a
// loop of 15 trips rotates 4 buffers as one of 16 does.
// PSUM tiles rotate over the 8 banks the same way (the PSUM ring modulus is the bank count).
inline constexpr int64_t kUsableSbufBytes = 180224;
int64_t sbuf_buffers(int64_t trips, int64_t slot_bytes_per_partition, int64_t fixed_bytes_per_partition);
int64_t psum_buffers(int64_t trips, int64_t banks_per_tile, int64_t other_banks = 0);

// A loop-local tile with B rotating buffers: one SBUF (or PSUM) tensor [rows, B * cols], slot k = columns
// [k * cols, (k + 1) * cols).
struct Rotating {
  builder::TensorHandle t;
  int64_t rows = 0, cols = 0, buffers = 1;
  builder::Ap slot(int64_t k) const { return t.tile(0, rows, k * cols, cols); }
  builder::Ap slot(int64_t k, builder::Aff c0, int64_t n) const { return t.tile(0, rows, c0 + k * cols, n); }
};
Rotating rotating_sbuf(builder::Builder &b, const std::string &name, int64_t rows, int64_t cols, isa::Dtype dt,
                       int64_t buffers);
Rotating rotating_psum(builder::Builder &b, const std::string &name, int64_t rows, int64_t cols, isa::Dtype dt,
                       int64_t buffers);

// Software pipelining as the compiler's scheduler produces it once the buffers rotate
// (separate_load_and_compute + address rotation, reference neuronx-cc/walrus/address-rotation.md): over T tiles
// with B buffers the loads run B - 1 tiles ahead of the compute that consumes them, so the engine that triggers
// the DMAs (in order) never holds a load behind a store that waits for compute:
//   prologue: load(0..B-2); loop i0 over the groups of B tiles whose loads all fall inside T ((T + 1) / B - 1 of
//   them), slot k: load(i + B - 1), body(i); then the remaining tiles one by one, tile i in slot i mod B with the
//   load of tile i + B - 1 while there is one: the last group and, when B does not divide T, the remainder peeled.
// `load(i, slot)` emits tile i's DMA(s) into buffer `slot`; `body(i, slot)` its compute and store.
void pipelined_loop(builder::Builder &b, const std::string &var, int64_t trips, int64_t buffers,
                    const std::function<void(builder::Aff, int64_t)> &load,
                    const std::function<void(builder::Aff, int64_t)> &body);
// The same with the first group of B tiles emitted outside the loop, so that `body` knows tile 0 (`first`): a
// PSUM accumulation group whose first matmul starts the group (start_tensor_calc).
void pipelined_loop_first(builder::Builder &b, const std::string &var, int64_t trips, int64_t buffers,
                          const std::function<void(builder::Aff, int64_t)> &load,
                          const std::function<void(builder::Aff, int64_t, bool first)> &body);

// DMAs as the compiler triggers them for NKI loads and stores, with prebuilt descriptors -- the descriptor source
// every generation has (HWDGE does not exist on trn1, reference neuron-arch.md 1.5 [DGE], and one BIR file runs on
// trn1, trn2 and trn3) -- on the queue of their trigger engine and type ([DMA] "DMA Queues": "the queue ID is
// typically tied to the trigger engine and the method of descriptor generation"):
//  - a load from the Sync engine (SP), "most commonly used to trigger DMA transfers without interfering with compute
//    engine instruction scheduling" [ARCH2], on qSyncIO0; calibration.md D1's load is triggered there, and the
//    public profiles show kernel inputs on qSyncIO0 (nki_perf_guide, fused Mamba);
//  - a store from GpSimd, on qGpSimdIO1: calibration.md D3's stores are triggered on GpSimd ("Store triggers on
//    GpSimd take ~25-90 ns"). Its own queue: its descriptors are processed beside the loads' (a queue processes its
//    descriptors one at a time, docs/timing-model.md 2.1) and a store waiting for its tile's compute holds no load
//    behind it on SP.
builder::InstRef load(builder::Builder &b, const builder::Ap &src, const builder::Ap &dst);
builder::InstRef store(builder::Builder &b, const builder::Ap &src, const builder::Ap &dst);
// The sentence a README gives the lowering of a pipelined loop with B buffers.
std::string lowering_note(int64_t buffers);

}  // namespace neuronsim::lowering
