// The access-pattern walker and the layout constants of the NeuronCore memories: private to engines/memory*.cpp
// (split from memory.cpp to keep each file readable; the model is described at the top of memory.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "neuronsim/engines/dtype.hpp"
#include "neuronsim/engines/memory.hpp"

namespace neuronsim::engines {

inline int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
inline int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

inline const char *mem_name(isa::MemoryType m) { return isa::enum_name(m); }

// SBUF tensors are placed on 64-byte boundaries (a DMA-friendly granule; the real allocator's alignment is not
// documented in the reference, so this only matters for pre-allocation BIR).
constexpr int64_t kSbufAlign = 64;
constexpr int64_t kPsumAlign = 4;
// A host cache line: the row stride of the SBUF/PSUM buffers is a multiple of it, and it is the granule of the
// written shadow's summary (Memory::sbuf_lines_).
constexpr int64_t kLine = 64;
// SBUF/PSUM buffers from this size up are whole huge pages (x86-64 and arm64 Linux: 2 MiB).
constexpr size_t kHugePage = size_t{2} << 20;
// Written rectangles: how many are remembered, and the smallest worth remembering (below it, marking the shadow
// costs less than looking the rectangle up).
constexpr size_t kWrittenRects = 8;
constexpr int64_t kRectMinBytes = 4096;
// Walk limits (an input can ask for any size; a step-0 broadcast stays in bounds at any count). Far above any
// real access -- an SBUF partition holds 192 KiB, a DMA moves whole tensors as few long runs -- yet small enough
// that checking, walking and buffering one access cannot hang the run or exhaust host memory.
constexpr int64_t kMaxRunsPerPartition = int64_t(1) << 24;
constexpr int64_t kMaxAccessElements = int64_t(1) << 30;

struct Box {
  int64_t p0, p1, b0, b1;
};


using Runs = std::vector<std::pair<int64_t, int64_t>>;
// One run list per thread, reused by every walker: a list per walk was an allocation per operand of every
// instruction. A walker created while another one holds it (no walk starts another today) uses its own.
struct RunBuffer {
  Runs v;
  bool busy = false;
};
inline thread_local RunBuffer tl_runs;

// The walker: resolved geometry of one access plus its free-dim runs.
struct MemoryWalker {
  const Memory &m;
  const Access &a;
  Runs own_runs;
  const bool borrowed = !tl_runs.busy;
  Runs &runs = borrowed ? tl_runs.v : own_runs;  // (free offset in elements, length)
  const isa::Tensor *t = nullptr;
  bool onchip = false;
  int64_t esz = 4;
  int64_t F = 0;          // elements per partition (on-chip); unused for DRAM
  int64_t total = 0;      // addressable elements of the tensor
  int64_t nparts = 1;     // ap[0].num
  int64_t pstep_e = 0;    // partition step in elements of the logical layout
  int64_t minoff = 0, maxoff = 0;
  int64_t count = 0;      // elements walked
  // On-chip placement.
  int64_t row_stride = 0, p_base = 0, b_base = 0;

  MemoryWalker(const Memory &mem, const Access &acc) : m(mem), a(acc) {
    if (borrowed) tl_runs.busy = true;
  }
  ~MemoryWalker() {
    if (borrowed) tl_runs.busy = false;
  }
  MemoryWalker(const MemoryWalker &) = delete;
  MemoryWalker &operator=(const MemoryWalker &) = delete;

  [[noreturn]] void fail(const std::string &msg) const { throw SimulationError(m.context(), msg); }

  std::string tname() const { return t ? "tensor '" + t->name + "'" : "tensor"; }

  // Validates the access and computes its runs (only its element count and offset range when `with_runs` is
  // false: enough for check() and footprint(), which the scheduler and the core call for every dynamic
  // instruction). Throws SimulationError on anything out of bounds.
  void resolve(bool with_runs = true) {
    const auto &tensors = m.program().tensors;
    if (a.tensor < 0 || a.tensor >= static_cast<int>(tensors.size()))
      fail("access does not name a tensor (index " + std::to_string(a.tensor) + ")");
    t = &tensors[static_cast<size_t>(a.tensor)];
    onchip = !t->is_dram();
    esz = isa::dtype_size(a.dtype);
    if (esz <= 0) fail(tname() + ": access dtype has no element size");
    if (onchip) {
      F = t->bytes_per_partition / esz;
      if (F <= 0)
        fail(tname() + " has " + std::to_string(t->bytes_per_partition) + " bytes per partition, less than one " +
             isa::enum_name(a.dtype) + " element");
      total = t->partitions * F;
      const auto &pl = m.place_[static_cast<size_t>(a.tensor)];
      p_base = pl.partition;
      b_base = pl.addr;
      row_stride = t->mem == isa::MemoryType::PSUM ? m.psum_row_ : m.sbuf_row_;
    } else {
      total = static_cast<int64_t>(m.dram_bytes_[static_cast<size_t>(a.tensor)]) / esz;
    }
    // Partition dim. On-chip: a step that is a multiple of F advances step/F partitions (the row-major form the
    // compiler writes, reference bir-json.md 1.9); any other step counts partitions (the NKI [1, P] form).
    nparts = a.ap.empty() ? 1 : a.ap[0].num;
    const int64_t step0 = a.ap.empty() ? 0 : a.ap[0].step;
    // The partition step in elements, the span and the offset range are computed in 128 bits: the input's steps
    // and start may be anywhere in int64, and an overflowed bound would pass the check below (the bounds check
    // is what keeps every later pointer inside its buffer).
    const __int128 pstep = onchip && step0 % F != 0 ? static_cast<__int128>(step0) * F : step0;
    if (nparts < 0) fail(tname() + ": negative partition count " + std::to_string(nparts));
    check_size();
    const int64_t per_part = free_extent();
    count = 0;
    pstep_e = 0;
    if (nparts == 0 || per_part == 0) {
      runs.clear();
      return;
    }
    count = nparts * per_part;  // <= kMaxAccessElements (check_size)
    // Every element lies within [emin, emax] and both ends are attained, so this bounds check is exact.
    const __int128 span = static_cast<__int128>(nparts - 1) * pstep;
    const __int128 emin = a.start + std::min<__int128>(0, span) + lo_;
    const __int128 emax = a.start + std::max<__int128>(0, span) + hi_;
    if (emin < 0 || emax >= total) {
      const __int128 bad = emin < 0 ? emin : emax;
      std::ostringstream os;
      os << "access out of bounds of " << tname() << " (" << mem_name(t->mem) << ", ";
      if (onchip && bad >= INT64_MIN && bad <= INT64_MAX)
        os << t->partitions << " partitions x " << F << " " << isa::enum_name(a.dtype) << " elements): element "
           << i128(bad) << " = partition " << floor_div(static_cast<int64_t>(bad), F) << ", free element "
           << floor_mod(static_cast<int64_t>(bad), F);
      else
        os << (onchip ? t->partitions * F : total) << " " << isa::enum_name(a.dtype) << " elements): element "
           << i128(bad);
      os << " (start " << a.start << ", ap [";
      for (size_t i = 0; i < a.ap.size(); ++i) os << (i ? ", " : "") << "[" << a.ap[i].step << ", " << a.ap[i].num << "]";
      os << "])";
      fail(os.str());
    }
    // In bounds: every offset below lies in [emin - start, emax - start] and fits in int64.
    pstep_e = nparts > 1 ? static_cast<int64_t>(pstep) : 0;
    minoff = static_cast<int64_t>(lo_);
    maxoff = static_cast<int64_t>(hi_);
    if (with_runs) build_runs();
  }

  // A 128-bit integer as decimal text (out-of-range bounds in messages).
  static std::string i128(__int128 v) {
    if (v >= INT64_MIN && v <= INT64_MAX) return std::to_string(static_cast<int64_t>(v));
    const bool neg = v < 0;
    unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
    std::string s;
    while (u) s.insert(s.begin(), char('0' + int(u % 10))), u /= 10;
    return (neg ? "-" : "") + s;
  }

  // Refuses a pattern too big to walk (see kMaxRunsPerPartition) before build_runs starts on it.
  void check_size() const {
    int64_t runs_n = 1, elems = nparts;
    bool over = false;
    for (size_t i = 1; i < a.ap.size(); ++i) {
      const int64_t n = a.ap[i].num;
      if (n <= 0) return;  // nothing to walk (a negative count is reported by build_runs)
      over = over || __builtin_mul_overflow(elems, n, &elems);
      const bool merged = i + 1 == a.ap.size() && a.ap[i].step == 1;  // the innermost stride-1 dim is one run
      if (!merged) over = over || __builtin_mul_overflow(runs_n, n, &runs_n);
    }
    if (!over && runs_n <= kMaxRunsPerPartition && elems <= kMaxAccessElements) return;
    std::ostringstream os;
    os << tname() << ": access pattern too large to simulate (";
    if (over) os << "its element count overflows 64 bits";
    else if (runs_n > kMaxRunsPerPartition) os << runs_n << " separate runs per partition, limit " << kMaxRunsPerPartition;
    else os << elems << " elements, limit " << kMaxAccessElements;
    os << "; ap [";
    for (size_t i = 0; i < a.ap.size(); ++i) os << (i ? ", " : "") << "[" << a.ap[i].step << ", " << a.ap[i].num << "]";
    os << "])";
    fail(os.str());
  }

  // What build_runs derives from the runs, without listing them: elements per partition (0 when a count is 0)
  // and the offset range [lo_, hi_] (128-bit: steps may be anywhere in int64). Every combination of free-dim
  // indices is walked, so the offset range is the sum of each dim's own range.
  int64_t free_extent() {
    const size_t nd = a.ap.size();
    lo_ = hi_ = 0;
    if (nd <= 1) return 1;
    for (size_t i = 1; i < nd; ++i) {
      if (a.ap[i].num < 0) fail(tname() + ": negative count in ap pair " + std::to_string(i));
      if (a.ap[i].num == 0) return 0;
    }
    int64_t n = 1;
    for (size_t i = 1; i < nd; ++i) {
      const __int128 ext = static_cast<__int128>(a.ap[i].step) * (a.ap[i].num - 1);
      (ext < 0 ? lo_ : hi_) += ext;
      n *= a.ap[i].num;  // <= kMaxAccessElements (check_size ran first)
    }
    return n;
  }
  __int128 lo_ = 0, hi_ = 0;

  // The free-dim element offsets (relative to the partition base), as maximal contiguous runs. Computed once
  // per access and reused for every partition.
  void build_runs() {
    runs.clear();
    const size_t nd = a.ap.size();
    if (nd <= 1) {
      runs.emplace_back(0, 1);
      minoff = maxoff = 0;
      return;
    }
    for (size_t i = 1; i < nd; ++i) {
      if (a.ap[i].num < 0) fail(tname() + ": negative count in ap pair " + std::to_string(i));
      if (a.ap[i].num == 0) return;
    }
    // Innermost dim with step 1 is a run; otherwise single elements. Dims [1, nd-1) form an odometer.
    const int64_t in_step = a.ap[nd - 1].step, in_num = a.ap[nd - 1].num;
    int64_t idx_small[8] = {};
    std::vector<int64_t> idx_big(nd > 8 ? nd : 0, 0);
    int64_t *idx = nd > 8 ? idx_big.data() : idx_small;
    int64_t base = 0;
    minoff = INT64_MAX;
    maxoff = INT64_MIN;
    auto push = [&](int64_t off, int64_t len) {
      if (!runs.empty() && runs.back().first + runs.back().second == off)
        runs.back().second += len;
      else
        runs.emplace_back(off, len);
      minoff = std::min(minoff, off);
      maxoff = std::max(maxoff, off + len - 1);
    };
    while (true) {
      if (in_step == 1)
        push(base, in_num);
      else
        for (int64_t k = 0; k < in_num; ++k) push(base + k * in_step, 1);
      bool done = true;
      for (size_t d = nd - 1; d > 1;) {
        --d;
        if (++idx[d] < a.ap[d].num) {
          base += a.ap[d].step;
          done = false;
          break;
        }
        base -= a.ap[d].step * (a.ap[d].num - 1);
        idx[d] = 0;
      }
      if (done) break;
    }
  }

  // Byte offset of (partition p, free element f) of the tensor in its memory's data and shadow buffers.
  int64_t offset(int64_t p, int64_t f) const { return (p_base + p) * row_stride + b_base + f * esz; }

  // Calls fn(data, shadow (nullptr for DRAM), n elements, position in walk order) for each contiguous chunk.
  template <typename Fn> void walk(Fn &&fn) const {
    if (count == 0) return;
    int64_t pos = 0;
    if (!onchip) {
      const Memory &d = m.dram_owner_ ? *m.dram_owner_ : m;  // a device's cores share one DRAM
      d.materialize(static_cast<size_t>(a.tensor));
      uint8_t *base = const_cast<uint8_t *>(d.dram_[static_cast<size_t>(a.tensor)].data());
      uint8_t *shadow =
          d.dram_shadow(static_cast<size_t>(a.tensor)); // outputs only (Memory::unwritten_elements)
      for (int64_t i0 = 0; i0 < nparts; ++i0) {
        const int64_t pe = a.start + i0 * pstep_e;
        for (const auto &r : runs) {
          const int64_t o = (pe + r.first) * esz;
          fn(base + o, shadow ? shadow + o : nullptr, r.second, pos);
          pos += r.second;
        }
      }
      return;
    }
    // Partition i0 starts at element start + i0 * pstep_e = pp * F + pf: pstep_e is a multiple of F (resolve), so
    // pf is the same for every partition and pp advances by pstep_e / F (no division per chunk). Every element
    // is in bounds (resolve), so e >= 0 below.
    const bool psum = t->mem == isa::MemoryType::PSUM;
    uint8_t *data = const_cast<uint8_t *>((psum ? m.psum_ : m.sbuf_).data());
    uint8_t *shadow = const_cast<uint8_t *>((psum ? m.psum_written_ : m.sbuf_written_).data());
    const int64_t pf = a.start % F, pstep = pstep_e / F;
    int64_t pp = a.start / F;
    for (int64_t i0 = 0; i0 < nparts; ++i0, pp += pstep) {
      for (const auto &r : runs) {
        const int64_t f0 = pf + r.first;
        if (f0 >= 0 && f0 + r.second <= F) {  // the run lies in one partition row
          const int64_t o = offset(pp, f0);
          fn(data + o, shadow + o, r.second, pos);
          pos += r.second;
          continue;
        }
        int64_t e = pp * F + f0, len = r.second;
        while (len > 0) {  // a run may cross into the next partition of the row-major layout
          const int64_t p = e / F, f = e % F;
          const int64_t take = std::min(len, F - f);
          const int64_t o = offset(p, f);
          fn(data + o, shadow + o, take, pos);
          pos += take;
          e += take;
          len -= take;
        }
      }
    }
  }

  // The whole access as one Chunk when it is one run per partition at a constant stride (row-major on chip, any
  // DRAM access with a single run); false otherwise (walk then lists the runs). The walk reaches the same bytes.
  bool regular(Memory::Chunk &c) const {
    if (count == 0 || runs.size() != 1) return false;
    const int64_t first = runs[0].first, len = runs[0].second;
    if (!onchip) {
      const Memory &d = m.dram_owner_ ? *m.dram_owner_ : m;  // a device's cores share one DRAM
      d.materialize(static_cast<size_t>(a.tensor));
      uint8_t *base = const_cast<uint8_t *>(d.dram_[static_cast<size_t>(a.tensor)].data());
      uint8_t *shadow = d.dram_shadow(static_cast<size_t>(a.tensor));
      const int64_t o = (a.start + first) * esz;
      c = Memory::Chunk{base + o, shadow ? shadow + o : nullptr, len, nparts, pstep_e * esz};
      return true;
    }
    const int64_t pp = a.start / F, f0 = a.start % F + first;  // as in walk
    if (f0 < 0 || f0 + len > F) return false;  // the run crosses a partition row
    const bool psum = t->mem == isa::MemoryType::PSUM;
    const int64_t o = offset(pp, f0);
    c = Memory::Chunk{const_cast<uint8_t *>((psum ? m.psum_ : m.sbuf_).data()) + o,
                      const_cast<uint8_t *>((psum ? m.psum_written_ : m.sbuf_written_).data()) + o, len, nparts,
                      pstep_e / F * row_stride};
    return true;
  }

  Box box() const {
    if (count == 0) return {0, 0, 0, 0};
    const int64_t span = (nparts - 1) * pstep_e;
    const int64_t emin = a.start + std::min<int64_t>(0, span) + minoff;
    const int64_t emax = a.start + std::max<int64_t>(0, span) + maxoff;
    if (!onchip) return {0, 1, emin * esz, (emax + 1) * esz};
    const int64_t r = floor_mod(a.start, F);  // the same for every partition: pstep_e is a multiple of F
    if (r + minoff >= 0 && r + maxoff < F) {
      const int64_t pf = floor_div(a.start, F), pspan = span / F;
      return {p_base + pf + std::min<int64_t>(0, pspan), p_base + pf + std::max<int64_t>(0, pspan) + 1,
              b_base + (r + minoff) * esz, b_base + (r + maxoff + 1) * esz};
    }
    return {p_base + floor_div(emin, F), p_base + floor_div(emax, F) + 1, b_base, b_base + F * esz};
  }
};
} // namespace neuronsim::engines
