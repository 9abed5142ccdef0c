// The shared resources an engine instruction waits for after its dependencies: PSUM bank writers, the ports and
// buses engines share (docs/timing-model.md 3), granted in program order among the requests made in the same
// delta cycle, so that contention never depends on SystemC's thread order (the module: sim/core_module.hpp).
#include <algorithm>

#include "sim/core_module.hpp"

namespace neuronsim::sim::core_detail {

// The wait reason a shared resource stands for (WaitReason).
WaitReason resource_reason(int id) {
  if ((id >= kPsumBankWriter && id < kPsumBankWriter + kPsumBanks) || id == kPsumWriterFence ||
      (id >= kPsumBankActDve && id < kPsumBankActDve + kPsumBanks))
    return WaitReason::PsumBank;
  return WaitReason::SharedPort;
}

// Grants every claim made before the current delta cycle, in program order: each starts when all its resources
// are free and holds the ones it holds for its occupancy.
void arbitrate(Job &j) {
  const uint64_t delta = sc_core::sc_delta_count();
  // Two buffers kept in the job: no allocation per arbitration.
  std::vector<Claim *> &batch = j.claim_batch, &later = j.claim_later;
  batch.clear(), later.clear();
  for (Claim *c : j.claims) (c->delta < delta ? batch : later).push_back(c);
  j.claims.swap(later);
  std::sort(batch.begin(), batch.end(), [](const Claim *a, const Claim *b) { return a->seq < b->seq; });
  const int64_t now = static_cast<int64_t>(sc_core::sc_time_stamp().value());
  for (Claim *c : batch) {
    int64_t start = now;
    for (const auto &r : *c->resources) {
      const int64_t t = j.resource_free[static_cast<size_t>(r.id)];
      if (t > start) start = t, c->limiting = r.id;
    }
    const int64_t end = start + c->occupancy_ps;
    for (const auto &r : *c->resources)
      if (r.hold) j.resource_free[static_cast<size_t>(r.id)] = end;
    c->start = start, c->end = end, c->granted = true;
  }
}

// The shared resources an engine instruction uses while it occupies its queue (docs/timing-model.md 3).
void resources_of(const Job &j, const ScheduledInst &si, int q, const engines::Cost &cost, std::vector<ResourceUse> &out) {
  out.clear();
  if (si.trigger) return;  // a sequencer instruction (and descriptor generation) touches no tensor
  const auto &prog = j.memory->program();
  const engines::ArchParams &a = *j.arch;
  const int64_t bank_bytes = a.psum_bytes_per_partition / std::max<int64_t>(1, a.psum_banks);
  bool touches_sbuf = false, touches_psum = false, writes_psum = false;
  uint32_t banks = 0;  // PSUM banks read or written
  auto psum_banks = [&](const engines::Access &x) {
    const engines::Footprint fp = j.memory->footprint(x);
    uint32_t m = 0;
    for (int64_t b = fp.b0 / bank_bytes; b <= (fp.b1 - 1) / bank_bytes && b < kPsumBanks; ++b) m |= 1u << b;
    return m;
  };
  for (const auto &x : si.d.outs) {
    if (x.tensor < 0) continue;
    const auto mem = prog.tensors[static_cast<size_t>(x.tensor)].mem;
    if (mem == isa::MemoryType::SB) touches_sbuf = true;
    if (mem != isa::MemoryType::PSUM) continue;
    touches_psum = writes_psum = true;
    const uint32_t m = psum_banks(x);
    banks |= m;
    // reference walrus/perfsim-cost-model.md: PSUM banks serialize their writers.
    for (int b = 0; b < kPsumBanks; ++b)
      if (m >> b & 1u) out.push_back({kPsumBankWriter + b, true});
  }
  for (const auto &x : si.d.ins) {
    if (x.tensor < 0) continue;
    const auto mem = prog.tensors[static_cast<size_t>(x.tensor)].mem;
    if (mem == isa::MemoryType::SB) touches_sbuf = true;
    if (mem == isa::MemoryType::PSUM) touches_psum = true, banks |= psum_banks(x);
  }
  const bool act = q == kActQueue, dve = q == kDveQueue, pool = q == kPoolQueue;
  // reference neuron-arch.md 1.4 [ARCH2]: on NeuronCore-v2 "Vector Engine and GpSimd Engine cannot access SBUF in
  // parallel" and "Vector Engine and Scalar Engine cannot access PSUM in parallel".
  if (a.dve_pool_shared_sbuf_port && touches_sbuf && (dve || pool)) out.push_back({kDvePoolSbufPort, true});
  if (a.act_dve_shared_psum_port && touches_psum && (act || dve)) out.push_back({kActDvePsumPort, true});
  // reference walrus/perfsim-cost-model.md determine_start_time: on v2 ACT starts after the DVE/POOL PSUM
  // writers' ends (the compiler's cost model).
  if (a.act_waits_psum_writers && j.dve_pool_psum_writers) {
    if (act) out.push_back({kPsumWriterFence, false});
    if ((dve || pool) && writes_psum) out.push_back({kPsumWriterFence, true});
  }
  // reference neuron-arch.md 1.4 [ARCH3]: ACT and DVE have full PSUM bandwidth unless they collide on a bank; the
  // DVE perf mode uses a memory bus shared with GpSimd.
  if (a.act_dve_psum_bank_collisions && (act || dve))
    for (int b = 0; b < kPsumBanks; ++b)
      if (banks >> b & 1u) out.push_back({kPsumBankActDve + b, true});
  if (a.dve_perf_mode_shares_pool_bus && ((dve && cost.dve_perf_mode) || (pool && touches_sbuf)))
    out.push_back({kPoolBus, true});
}

} // namespace neuronsim::sim::core_detail
