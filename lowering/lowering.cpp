// The lowering library's rules (include/neuronsim/lowering.hpp).
#include "neuronsim/lowering.hpp"

#include <algorithm>

namespace neuronsim::lowering {

int64_t sbuf_buffers(int64_t trips, int64_t slot_bytes, int64_t fixed_bytes) {
  for (int64_t n : {4, 2})
    if (trips >= n && fixed_bytes + n * slot_bytes <= kUsableSbufBytes) return n;
  return 1;
}

int64_t psum_buffers(int64_t trips, int64_t banks_per_tile, int64_t other_banks) {
  constexpr int64_t kBanks = 8;  // reference neuron-arch.md 1.4: 8 PSUM banks per partition
  for (int64_t n : {8, 4, 2})
    if (trips >= n && other_banks + n * banks_per_tile <= kBanks) return n;
  return 1;
}

Rotating rotating_sbuf(builder::Builder &b, const std::string &name, int64_t rows, int64_t cols, isa::Dtype dt,
                       int64_t buffers) {
  return Rotating{b.sbuf(name, {rows, buffers * cols}, dt), rows, cols, buffers};
}

Rotating rotating_psum(builder::Builder &b, const std::string &name, int64_t rows, int64_t cols, isa::Dtype dt,
                       int64_t buffers) {
  return Rotating{b.psum(name, {rows, buffers * cols}, dt), rows, cols, buffers};
}

namespace {

// The groups of B trips that run as a BIR loop: every load they trigger (B - 1 trips ahead) falls inside the
// trip count, i.e. group g with g * B + 2B - 2 <= trips - 1.
int64_t looped_groups(int64_t trips, int64_t B) { return std::max<int64_t>(0, (trips + 1) / B - 1); }

}  // namespace

void pipelined_loop(builder::Builder &b, const std::string &var, int64_t trips, int64_t buffers,
                    const std::function<void(builder::Aff, int64_t)> &load,
                    const std::function<void(builder::Aff, int64_t)> &body) {
  const int64_t B = buffers;
  if (B == 1) {  // one buffer: nothing to run ahead
    b.loop(var, 0, trips, 1, [&](builder::Aff i) {
      load(i, 0);
      body(i, 0);
    });
    return;
  }
  for (int64_t k = 0; k + 1 < B; ++k) load(builder::Aff(k), k);
  const int64_t groups = looped_groups(trips, B);
  if (groups > 0)
    b.loop(var, 0, groups, 1, [&](builder::Aff i0) {
      for (int64_t k = 0; k < B; ++k) {
        const builder::Aff i = i0 * B + builder::Aff(k);
        load(i + builder::Aff(B - 1), (k + B - 1) % B);
        body(i, k);
      }
    });
  // The trips after the loop, one by one: the last group and, when B does not divide the trip count, the
  // remainder (peeled, as a compiler peels it): trip i still uses buffer i mod B and triggers the load of trip
  // i + B - 1 while there is one, so the remainder keeps the overlap of the loop.
  for (int64_t i = groups * B; i < trips; ++i) {
    if (i + B - 1 < trips) load(builder::Aff(i + B - 1), (i + B - 1) % B);
    body(builder::Aff(i), i % B);
  }
}

void pipelined_loop_first(builder::Builder &b, const std::string &var, int64_t trips, int64_t buffers,
                          const std::function<void(builder::Aff, int64_t)> &load,
                          const std::function<void(builder::Aff, int64_t, bool)> &body) {
  const int64_t B = buffers;
  if (B == 1) {  // one buffer: tile 0 peeled, then a plain loop
    load(builder::Aff(0), 0);
    body(builder::Aff(0), 0, true);
    if (trips > 1)
      b.loop(var, 1, trips, 1, [&](builder::Aff i) {
        load(i, 0);
        body(i, 0, false);
      });
    return;
  }
  auto one = [&](int64_t i) {  // trip i on its own, as pipelined_loop's trips after the loop
    if (i + B - 1 < trips) load(builder::Aff(i + B - 1), (i + B - 1) % B);
    body(builder::Aff(i), i % B, i == 0);
  };
  for (int64_t k = 0; k + 1 < B; ++k) load(builder::Aff(k), k);
  for (int64_t i = 0; i < B; ++i) one(i);  // the first group, whose first trip starts the group
  const int64_t groups = looped_groups(trips, B);
  if (groups > 1)
    b.loop(var, 1, groups, 1, [&](builder::Aff i0) {
      for (int64_t k = 0; k < B; ++k) {
        const builder::Aff i = i0 * B + builder::Aff(k);
        load(i + builder::Aff(B - 1), (k + B - 1) % B);
        body(i, k, false);
      }
    });
  for (int64_t i = std::max(B, groups * B); i < trips; ++i) one(i);
}

builder::InstRef load(builder::Builder &b, const builder::Ap &src, const builder::Ap &dst) {
  return b.add(isa::InstructionType::Load, {b.ap(src)}, {b.ap(dst)}).engine(isa::Engine::SP).queue("qSyncIO0");
}

builder::InstRef store(builder::Builder &b, const builder::Ap &src, const builder::Ap &dst) {
  return b.add(isa::InstructionType::Save, {b.ap(src)}, {b.ap(dst)}).engine(isa::Engine::Pool).queue("qGpSimdIO1");
}

std::string lowering_note(int64_t buffers) {
  return " Lowered as the compiler lowers it (workloads/gen/workload.hpp): the loop-local tiles rotate over " +
         std::to_string(buffers) + " buffers and the loads (SP, queue qSyncIO0) run " + std::to_string(buffers - 1) +
         " tiles ahead of the compute that consumes them; the stores are triggered from GpSimd on their own queue, "
         "qGpSimdIO1.";
}

}  // namespace neuronsim::lowering
