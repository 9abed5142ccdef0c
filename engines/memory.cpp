// The NeuronCore memories and the access-pattern walker (DESIGN.md 3: engines/memory.*).
//
// Model (reference neuronx-cc/bir/sim-dispatch-state.md 4.2, sim-elementwise-datamove.md 1.3):
//  - DRAM: one flat byte buffer per tensor; element e of an access lives at byte e * dtype_size.
//  - SBUF / PSUM: one array of `partitions` rows per memory. A tensor occupies partitions
//    [base, base + tensor.partitions) and bytes [addr, addr + bytes_per_partition) of each row. Element e of the
//    tensor's logical row-major layout is at partition e / F, free element e % F, F = bytes_per_partition / esz.
//  - New memory is poisoned with 0xFF (birsim's MemoryObject ctor memsets DATA to 0xFF: an uninitialised fp32
//    reads as NaN), and SBUF/PSUM keep a per-byte "written" shadow (memset 0, set on write) so reads of
//    never-written bytes can be counted.
// The walker turns an Access into contiguous element runs once per access (the free-dim offsets are shared by
// every partition, like birsim's linearizedElementIntervals) and converts whole runs with the bulk dtype
// routines, so there is no per-element virtual call.
#include "neuronsim/engines/memory.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <sstream>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "neuronsim/engines/dtype.hpp"
#include "memory_walker.hpp"

namespace neuronsim::engines {

// ------------------------------------------------------------------------------------------------ placement

Memory::Memory(const isa::Program &program, const ArchParams &arch) : program_(program), arch_(arch) {
  const auto &ts = program_.tensors;
  dram_.resize(ts.size());
  dram_bytes_.assign(ts.size(), 0);
  dram_written_.resize(ts.size());
  place_.resize(ts.size());
  const int64_t psum_bank = arch_.psum_banks > 0 ? arch_.psum_bytes_per_partition / arch_.psum_banks : 0;

  auto capacity_error = [&](const isa::Tensor &t, const std::string &what) {
    ErrorContext ctx;
    ctx.file = program_.file;
    throw SemanticError(ctx, "tensor '" + t.name + "' does not fit in " + mem_name(t.mem) + ": " + what);
  };
  struct Used {
    bool psum;
    int64_t p0, p1, b0, b1;
  };
  std::vector<Used> used;
  int64_t sb_hw = 0, ps_hw = 0;

  // Pass 1: DRAM buffers and tensors the BIR already placed.
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto &t = ts[i];
    if (t.is_dram()) {
      // Sizes come from the input: checked arithmetic, and a host allocation failure is this tensor's error.
      int64_t by_dims = 0, elems = 1, by_shape = 0;
      bool over = __builtin_mul_overflow(t.partitions, t.bytes_per_partition, &by_dims);
      for (auto d : t.shape) over = over || __builtin_mul_overflow(elems, d, &elems);
      over = over || __builtin_mul_overflow(elems, static_cast<int64_t>(isa::dtype_size(t.dtype)), &by_shape);
      if (over) capacity_error(t, "its size overflows 64 bits");
      const int64_t n = std::max(by_dims, by_shape);
      // 0xFF poison like every birsim MemoryObject; inputs overwrite it when loaded.
      try {
        dram_bytes_[i] = static_cast<size_t>(std::max<int64_t>(n, 0));
        dram_[i].reserve(dram_bytes_[i]);  // poisoned on first use (materialize)
      } catch (const std::bad_alloc &) {
        capacity_error(t, std::to_string(n) + " bytes cannot be allocated in host memory");
      } catch (const std::length_error &) {
        capacity_error(t, std::to_string(n) + " bytes cannot be allocated in host memory");
      }
      continue;
    }
    const bool psum = t.mem == isa::MemoryType::PSUM;
    const int64_t cap = psum ? arch_.psum_bytes_per_partition : arch_.sbuf_bytes_per_partition;
    if (t.partitions > arch_.partitions)
      capacity_error(t, std::to_string(t.partitions) + " partitions requested, the core has " +
                            std::to_string(arch_.partitions));
    if (t.bytes_per_partition > cap)
      capacity_error(t, std::to_string(t.bytes_per_partition) + " bytes per partition requested, capacity is " +
                            std::to_string(cap));
    if (!t.allocated) continue;
    int64_t addr = t.addr;
    // PSUM: a bank id with a bank-relative address (addr below one bank) names bank * 2 KiB + addr. The reference
    // does not pin which form allocated BIR uses; both read the same way under this rule.
    if (psum && t.bank > 0 && psum_bank > 0 && addr < psum_bank) {
      if (t.bank >= arch_.psum_banks)
        capacity_error(t, "bank " + std::to_string(t.bank) + " does not exist (PSUM has " +
                              std::to_string(arch_.psum_banks) + " banks)");
      addr += t.bank * psum_bank;
    }
    // Compared without forming base + count or addr + size: the input may put them anywhere in int64.
    if (t.base_partition < 0 || t.partitions < 0 || t.base_partition > arch_.partitions - t.partitions)
      capacity_error(t, "base partition " + std::to_string(t.base_partition) + " + " + std::to_string(t.partitions) +
                            " partitions exceed the core's " +
                            std::to_string(arch_.partitions));
    if (addr < 0 || t.bytes_per_partition < 0 || addr > cap - t.bytes_per_partition)
      capacity_error(t, "bytes [" + std::to_string(addr) + ", " + std::to_string(addr) + " + " +
                            std::to_string(t.bytes_per_partition) + ") per partition exceed the capacity of " +
                            std::to_string(cap));
    place_[i] = {addr, t.base_partition};
    used.push_back({psum, t.base_partition, t.base_partition + t.partitions, addr, addr + t.bytes_per_partition});
    (psum ? ps_hw : sb_hw) = std::max(psum ? ps_hw : sb_hw, addr + t.bytes_per_partition);
  }

  // Pass 2: first-fit for pre-allocation BIR, in tensor order, per partition range.
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto &t = ts[i];
    if (t.is_dram() || t.allocated) continue;
    const bool psum = t.mem == isa::MemoryType::PSUM;
    const int64_t cap = psum ? arch_.psum_bytes_per_partition : arch_.sbuf_bytes_per_partition;
    const int64_t align = psum ? kPsumAlign : kSbufAlign;
    const int64_t p0 = std::max<int64_t>(0, t.base_partition);
    if (p0 > arch_.partitions - t.partitions)  // the same bound pass 1 checks for placed tensors
      capacity_error(t, "base partition " + std::to_string(p0) + " + " + std::to_string(t.partitions) +
                            " partitions exceed the core's " + std::to_string(arch_.partitions));
    const int64_t p1 = p0 + t.partitions;
    const int64_t size = std::max<int64_t>(t.bytes_per_partition, 1);
    std::vector<int64_t> cands{0};
    for (const auto &u : used)
      if (u.psum == psum && u.p0 < p1 && p0 < u.p1) cands.push_back((u.b1 + align - 1) / align * align);
    std::sort(cands.begin(), cands.end());
    int64_t chosen = -1;
    for (int64_t c : cands) {
      // A PSUM tile that fits in one 2 KiB bank is not split across banks (matmul writes one bank).
      if (psum && psum_bank > 0 && size <= psum_bank && c / psum_bank != (c + size - 1) / psum_bank)
        c = (c / psum_bank + 1) * psum_bank;
      if (c + size > cap) continue;
      bool clash = false;
      for (const auto &u : used)
        if (u.psum == psum && u.p0 < p1 && p0 < u.p1 && u.b0 < c + size && c < u.b1) {
          clash = true;
          break;
        }
      if (!clash) {
        chosen = c;
        break;
      }
    }
    if (chosen < 0) {
      int64_t in_use = 0;
      for (const auto &u : used)
        if (u.psum == psum && u.p0 < p1 && p0 < u.p1) in_use += u.b1 - u.b0;
      capacity_error(t, "no free range of " + std::to_string(t.bytes_per_partition) +
                            " bytes per partition left in partitions [" + std::to_string(p0) + ", " +
                            std::to_string(p1) + ") (capacity " + std::to_string(cap) + " bytes, " +
                            std::to_string(in_use) + " bytes already placed)");
    }
    place_[i] = {chosen, p0};
    used.push_back({psum, p0, p1, chosen, chosen + size});
    (psum ? ps_hw : sb_hw) = std::max(psum ? ps_hw : sb_hw, chosen + size);
  }

  // Only the rows' high-water mark (rounded up to a cache line) is backed: a small kernel does not pay for 24 MiB
  // of SBUF. Footprints and errors use the architectural (partition, byte) coordinates, never this internal
  // stride.
  sbuf_row_ = (sb_hw + kLine - 1) / kLine * kLine;
  psum_row_ = (ps_hw + kLine - 1) / kLine * kLine;
  sbuf_.assign(static_cast<size_t>(arch_.partitions * sbuf_row_), 0xFF);
  psum_.assign(static_cast<size_t>(arch_.partitions * psum_row_), 0xFF);
  sbuf_written_.assign(sbuf_.size(), 0);
  psum_written_.assign(psum_.size(), 0);
  sbuf_lines_.assign(sbuf_written_.size() / kLine, 0);  // a partial last line is never marked full
  psum_lines_.assign(psum_written_.size() / kLine, 0);
}

// A large SBUF/PSUM buffer is rounded up to whole 2 MiB pages, aligned to one, and advised for transparent huge
// pages (a hint: nothing changes where THP is off or not Linux). Every kernel streams SBUF rows: with 4 KiB pages
// the hardware prefetcher starts over at every page and each page costs a TLB entry. bench (a), whose SBUF is
// 3 MiB, in a stand-alone loop over its layout on the loaded machine: 40.2 -> 38.3 us with huge pages (another
// moment: 41.4 -> 41.0 us, and 39.8 -> 38.8 us with the AVX2 kernel's prefetch, alu.cpp); quiet, no difference.
void *Memory::alloc_buffer(size_t bytes) {
  if (bytes < kHugePage) return ::operator new(bytes, std::align_val_t(kLine));
  const size_t size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void *p = ::operator new(size, std::align_val_t(kHugePage));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(p, size, MADV_HUGEPAGE);  // a hint; failure leaves the ordinary pages
#endif
  return p;
}

void Memory::free_buffer(void *p, size_t bytes) {
  ::operator delete(p, std::align_val_t(bytes < kHugePage ? static_cast<size_t>(kLine) : kHugePage));
}

// ------------------------------------------------------------------------------------------------ accessors

namespace {

template <typename Fn> void for_chunks(const Memory &m, const Access &a, Fn &&fn) {
  MemoryWalker w(m, a);
  w.resolve();
  w.walk(fn);
}

} // namespace

bool Memory::chunks(const Access &a, std::vector<Chunk> &out) {
  out.clear();
  if (track_uninit_) return false;
  MemoryWalker w(*this, a);
  w.resolve();
  Chunk c;
  if (w.regular(c)) {
    out.push_back(c);
    return true;
  }
  // Runs of equal length at a constant stride join one Chunk.
  w.walk([&](uint8_t *p, uint8_t *sh, int64_t n, int64_t) {
    if (!out.empty()) {
      Chunk &l = out.back();
      if (l.n == n && (l.count == 1 || p - l.data == l.count * l.stride)) {
        if (l.count == 1) l.stride = p - l.data;
        ++l.count;
        return;
      }
    }
    out.push_back(Chunk{p, sh, n, 1, 0});
  });
  return true;
}

void Memory::element_runs(const Access &a, std::vector<std::pair<int64_t, int64_t>> &out) const {
  out.clear();
  MemoryWalker w(*this, a);
  w.resolve();
  if (w.count == 0) return;
  auto push = [&out](int64_t e, int64_t n) {
    if (!out.empty() && out.back().first + out.back().second == e)
      out.back().second += n;
    else
      out.emplace_back(e, n);
  };
  if (!w.onchip) {
    for (int64_t i0 = 0; i0 < w.nparts; ++i0)
      for (const auto &r : w.runs) push(a.start + i0 * w.pstep_e + r.first, r.second);
    return;
  }
  // As MemoryWalker::walk: partition i0 starts at element start + i0 * pstep_e, a multiple of F apart; a run that
  // crosses the end of a row continues in the next partition (the row-major layout).
  const int64_t F = w.F, pf = a.start % F, pstep = w.pstep_e / F;
  int64_t pp = a.start / F;
  for (int64_t i0 = 0; i0 < w.nparts; ++i0, pp += pstep)
    for (const auto &r : w.runs) {
      int64_t e = pp * F + pf + r.first, len = r.second;
      while (len > 0) {
        const int64_t take = std::min(len, F - floor_mod(e, F));
        if (!out.empty() && out.back().first + out.back().second == e && floor_mod(e, F) != 0)
          out.back().second += take;
        else
          out.emplace_back(e, take);
        e += take;
        len -= take;
      }
    }
}

void Memory::check(const Access &a) const {
  MemoryWalker w(*this, a);
  w.resolve(false);
}

Footprint Memory::footprint(const Access &a) const {
  MemoryWalker w(*this, a);
  w.resolve(false);
  const Box b = w.box();
  Footprint f;
  if (!w.onchip) {
    f.space = Footprint::Space::Dram;
    f.dram_tensor = a.tensor;
  } else {
    f.space = w.t->mem == isa::MemoryType::PSUM ? Footprint::Space::Psum : Footprint::Space::Sbuf;
  }
  f.p0 = b.p0;
  f.p1 = b.p1;
  f.b0 = b.b0;
  f.b1 = b.b1;
  return f;
}

namespace {
// Counts the elements of a chunk with at least one never-written byte.
int64_t count_unwritten(const uint8_t *shadow, int64_t n, int64_t esz) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t *s = shadow + i * esz;
    for (int64_t b = 0; b < esz; ++b)
      if (!s[b]) {
        ++bad;
        break;
      }
  }
  return bad;
}
} // namespace

bool Memory::in_dram_shadow(const uint8_t *shadow) const {
  const Memory &d = dram_owner_ ? *dram_owner_ : *this;
  const auto p = reinterpret_cast<uintptr_t>(shadow);
  for (const auto &v : d.dram_written_) {
    const auto b = reinterpret_cast<uintptr_t>(v.data());
    if (!v.empty() && p >= b && p - b < v.size())
      return true;
  }
  return false;
}

int64_t Memory::unwritten_elements(int tensor) const {
  const Memory &d = dram_owner_ ? *dram_owner_ : *this;
  if (tensor < 0 || tensor >= static_cast<int>(dram_.size()))
    return -1;
  const isa::Tensor &t = program_.tensors[static_cast<size_t>(tensor)];
  if (!t.is_dram() || !t.is_output() || t.inout)
    return -1;  // an in-out tensor's elements the kernel leaves keep their input values
  const int64_t esz = isa::dtype_size(t.dtype), n = t.num_elements();
  const auto &sh = d.dram_written_[static_cast<size_t>(tensor)];
  if (sh.size() < static_cast<size_t>(n * esz))
    return n; // never touched
  // The usual case, every byte written, is one memchr; the count runs only when some byte is not.
  if (!std::memchr(sh.data(), 0, static_cast<size_t>(n * esz)))
    return 0;
  return count_unwritten(sh.data(), n, esz);
}

void Memory::mark_written(uint8_t *shadow, int64_t bytes) {
  if (!shadow || bytes <= 0) return;
  const auto in = [&](const Bytes &v) {
    const auto p = reinterpret_cast<uintptr_t>(shadow), b = reinterpret_cast<uintptr_t>(v.data());
    return p >= b && p - b < v.size();
  };
  const bool psum = in(psum_written_);
  if (!psum && !in(sbuf_written_)) {
    // An output DRAM tensor's shadow: no line summary (its writes are a kernel's last stores, written once).
    if (!in_dram_shadow(shadow))
      throw std::logic_error("Memory::mark_written: not a shadow pointer");
    std::memset(shadow, 1, static_cast<size_t>(bytes));
    return;
  }
  uint8_t *base = psum ? psum_written_.data() : sbuf_written_.data();
  uint8_t *lines = psum ? psum_lines_.data() : sbuf_lines_.data();
  const int64_t b0 = shadow - base, b1 = b0 + bytes;
  const int64_t l0 = (b0 + kLine - 1) / kLine, l1 = b1 / kLine;  // the lines fully inside
  if (l0 >= l1) {
    std::memset(shadow, 1, static_cast<size_t>(bytes));
    return;
  }
  if (l0 * kLine > b0) std::memset(shadow, 1, static_cast<size_t>(l0 * kLine - b0));
  if (b1 > l1 * kLine) std::memset(base + l1 * kLine, 1, static_cast<size_t>(b1 - l1 * kLine));
  // Full lines: the shadow of each line not yet full, then its summary byte (after the bytes it stands for).
  for (int64_t l = l0; l < l1;) {
    const void *z = std::memchr(lines + l, 0, static_cast<size_t>(l1 - l));
    if (!z) break;
    l = static_cast<const uint8_t *>(z) - lines;
    int64_t e = l;
    while (e < l1 && !lines[e]) ++e;
    std::memset(base + l * kLine, 1, static_cast<size_t>((e - l) * kLine));
    std::memset(lines + l, 1, static_cast<size_t>(e - l));
    l = e;
  }
}

bool Memory::rect_of(const Chunk &c, int64_t esz, Rect &r) const {
  if (!c.shadow || c.count < 1 || c.n * esz * c.count < kRectMinBytes) return false;
  const auto p = reinterpret_cast<uintptr_t>(c.shadow);
  const auto ps = reinterpret_cast<uintptr_t>(psum_written_.data());
  const auto ss = reinterpret_cast<uintptr_t>(sbuf_written_.data());
  const bool psum = p >= ps && p - ps < psum_written_.size();
  if (!psum && !(p >= ss && p - ss < sbuf_written_.size()))
    return false; // a DRAM shadow: no rectangles
  const int64_t row = psum ? psum_row_ : sbuf_row_;
  const int64_t off = c.shadow - (psum ? psum_written_.data() : sbuf_written_.data());
  if (row <= 0 || (c.count > 1 && c.stride != row)) return false;
  r = Rect{psum, off / row, off / row + c.count, off % row, off % row + c.n * esz};
  return r.b1 <= row;
}

bool Memory::chunk_written(const Chunk &c, int64_t esz) const {
  Rect r;
  if (!rect_of(c, esz, r)) return false;
  for (const Rect &w : written_rects_)
    if (w.psum == r.psum && w.p0 <= r.p0 && r.p1 <= w.p1 && w.b0 <= r.b0 && r.b1 <= w.b1) return true;
  return false;
}

void Memory::note_written(const Chunk &c, int64_t esz) {
  Rect r;
  if (!rect_of(c, esz, r) || chunk_written(c, esz)) return;
  if (written_rects_.size() < kWrittenRects) {
    written_rects_.push_back(r);
    return;
  }
  written_rects_[next_rect_] = r;
  next_rect_ = (next_rect_ + 1) % kWrittenRects;
}

namespace {
// The shared body of write_f32 / write_i32 / write_raw: store(data, pos, n) for each chunk, then its shadow
// marked -- unless the access is one rectangle already known to be written (Memory::chunk_written).
template <typename Store> void write_chunks(Memory &m, MemoryWalker &w, Store &&store) {
  Memory::Chunk c{};
  const bool rect = w.count * w.esz >= kRectMinBytes && w.regular(c);
  const bool known = rect && m.chunk_written(c, w.esz);
  w.walk([&](uint8_t *p, uint8_t *sh, int64_t n, int64_t pos) {
    store(p, pos, n);
    if (!known) m.mark_written(sh, n * w.esz);
  });
  if (rect && !known) m.note_written(c, w.esz);
}
} // namespace

void Memory::read_f32(const Access &a, float *out) const {
  const int64_t esz = isa::dtype_size(a.dtype);
  const bool track = track_uninit_;
  for_chunks(*this, a, [&](uint8_t *p, uint8_t *sh, int64_t n, int64_t pos) {
    load_f32(a.dtype, p, out + pos, n);
    if (track && sh) uninit_reads_ += count_unwritten(sh, n, esz);
  });
}

void Memory::write_f32(const Access &a, const float *in) {
  MemoryWalker w(*this, a);
  w.resolve();
  write_chunks(*this, w, [&](uint8_t *p, int64_t pos, int64_t n) { store_f32(a.dtype, in + pos, p, n); });
}

void Memory::read_i32(const Access &a, int32_t *out) const {
  const int64_t esz = isa::dtype_size(a.dtype);
  const bool track = track_uninit_;
  for_chunks(*this, a, [&](uint8_t *p, uint8_t *sh, int64_t n, int64_t pos) {
    load_i32(a.dtype, p, out + pos, n);
    if (track && sh) uninit_reads_ += count_unwritten(sh, n, esz);
  });
}

void Memory::write_i32(const Access &a, const int32_t *in) {
  MemoryWalker w(*this, a);
  w.resolve();
  write_chunks(*this, w, [&](uint8_t *p, int64_t pos, int64_t n) { store_i32(a.dtype, in + pos, p, n); });
}

void Memory::read_raw(const Access &a, uint8_t *out) const {
  const int64_t esz = isa::dtype_size(a.dtype);
  const bool track = track_uninit_;
  for_chunks(*this, a, [&](uint8_t *p, uint8_t *sh, int64_t n, int64_t pos) {
    std::memcpy(out + pos * esz, p, static_cast<size_t>(n * esz));
    if (track && sh) uninit_reads_ += count_unwritten(sh, n, esz);
  });
}

void Memory::write_raw(const Access &a, const uint8_t *in) {
  MemoryWalker w(*this, a);
  w.resolve();
  const int64_t esz = w.esz;
  write_chunks(*this, w, [&](uint8_t *p, int64_t pos, int64_t n) {
    std::memcpy(p, in + pos * esz, static_cast<size_t>(n * esz));
  });
}

std::vector<uint8_t> &Memory::dram(int tensor) {
  if (dram_owner_) return dram_owner_->dram(tensor);
  if (tensor < 0 || tensor >= static_cast<int>(dram_.size()) || !program_.tensors[tensor].is_dram())
    throw SimulationError(ctx_, "tensor index " + std::to_string(tensor) + " is not a DRAM tensor");
  materialize(static_cast<size_t>(tensor));
  return dram_[static_cast<size_t>(tensor)];
}
const std::vector<uint8_t> &Memory::dram(int tensor) const {
  return const_cast<Memory *>(this)->dram(tensor);
}

int64_t Memory::placed_addr(int tensor) const { return place_.at(static_cast<size_t>(tensor)).addr; }
int64_t Memory::placed_partition(int tensor) const { return place_.at(static_cast<size_t>(tensor)).partition; }

} // namespace neuronsim::engines
