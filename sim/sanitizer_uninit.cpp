// The sanitizer's written shadow (sim/sanitizer.hpp): a byte per granule of SBUF, PSUM and every DRAM tensor that
// is not an input, set when an instruction writes it; a read of a granule still clear is an uninitialized read
// (birsim keeps the same per-byte written shadow, reference neuronx-cc/bir/sim-dispatch-state.md). Kernel inputs,
// constants and in-place arguments count as written from the start.
#include <cstring>

#include "sim/sanitizer_core.hpp"

namespace neuronsim::sim {

void Sanitizer::uninit_read(CoreState &c, const isa::Inst &inst, const OperandPlan &op, const engines::Access &a) {
  Pending *p = nullptr;
  for (const auto &[e, n] : runs_) {
    const Span s = span_of(c, a, e, n);
    if (!s.sh || s.sh->written.empty()) continue;
    const uint8_t *w = s.sh->written.data();
    for (int64_t g = s.g0; g < s.g1;) {
      const void *z = std::memchr(w + g, 0, static_cast<size_t>(s.g1 - g));
      if (!z) break;
      g = static_cast<const uint8_t *>(z) - w;
      int64_t h = g + 1;
      while (h < s.g1 && !w[h]) ++h;
      if (!p) {
        // Once per (instruction, tensor): every dynamic instance adds its unwritten elements to the region.
        const std::string key = "u|" + std::to_string(c.core) + "|" + std::to_string(inst.index) + "|" +
                                std::to_string(a.tensor);
        p = &pending(key, c.core, a.tensor);
        if (p->f.kind.empty()) {
          p->f.kind = "uninitialized-read";
          p->f.first = access_of(c.core, inst.index, op.slot, c.queue);
          p->f.first.tensor = c.prog->tensors[static_cast<size_t>(a.tensor)].name;
          p->f.first.write = false;
        }
      }
      add_span(p->region, c, a.tensor, s, g, h);
      g = h;
    }
  }
}

void Sanitizer::mark_written(CoreState &c, const OperandPlan &op, const engines::Access &a) {
  if (!op.mark) return;
  for (const auto &[e, n] : runs_) {
    const Span s = span_of(c, a, e, n);
    if (s.sh && !s.sh->written.empty())
      std::memset(s.sh->written.data() + s.g0, 1, static_cast<size_t>(s.g1 - s.g0));
  }
}

// Every byte of the tensor counts as written: an in-place argument given data, or a destination that run-time data
// move (TensorCopyDynamicDst, the indirect saves).
void Sanitizer::mark_tensor(CoreState &c, int tensor) {
  const isa::Tensor &t = c.prog->tensors[static_cast<size_t>(tensor)];
  if (t.is_dram()) {
    Shadow *s = dram_shadow(c, tensor, true);
    if (!s->written.empty()) std::memset(s->written.data(), 1, s->written.size());
    return;
  }
  Shadow &s = t.mem == isa::MemoryType::PSUM ? c.psum : c.sbuf;
  const int64_t cap = t.mem == isa::MemoryType::PSUM ? c.psum_cap : c.sbuf_cap;
  const int64_t p0 = c.mem->placed_partition(tensor), addr = c.mem->placed_addr(tensor);
  for (int64_t p = p0; p < p0 + t.partitions && p < c.partitions; ++p) {
    const int64_t g0 = (p * cap + addr) / s.granule, g1 = (p * cap + addr + t.bytes_per_partition) / s.granule;
    std::memset(s.written.data() + g0, 1, static_cast<size_t>(g1 - g0));
  }
}

} // namespace neuronsim::sim
