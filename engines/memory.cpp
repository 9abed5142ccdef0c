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

namespace neuronsim::engines {

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

const char *mem_name(isa::MemoryType m) { return isa::enum_name(m); }

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

} // namespace

using Runs = std::vector<std::pair<int64_t, int64_t>>;
// One run list per thread, reused by every walker: a list per walk was an allocation per operand of every
// instruction. A walker created while another one holds it (no walk starts another today) uses its own.
struct RunBuffer {
  Runs v;
  bool busy = false;
};
static thread_local RunBuffer tl_runs;

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
      m.materialize(static_cast<size_t>(a.tensor));
      uint8_t *base = const_cast<uint8_t *>(m.dram_[static_cast<size_t>(a.tensor)].data());
      for (int64_t i0 = 0; i0 < nparts; ++i0) {
        const int64_t pe = a.start + i0 * pstep_e;
        for (const auto &r : runs) {
          fn(base + (pe + r.first) * esz, static_cast<uint8_t *>(nullptr), r.second, pos);
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
      m.materialize(static_cast<size_t>(a.tensor));
      uint8_t *base = const_cast<uint8_t *>(m.dram_[static_cast<size_t>(a.tensor)].data());
      c = Memory::Chunk{base + (a.start + first) * esz, nullptr, len, nparts, pstep_e * esz};
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

// ------------------------------------------------------------------------------------------------ placement

Memory::Memory(const isa::Program &program, const ArchParams &arch) : program_(program), arch_(arch) {
  const auto &ts = program_.tensors;
  dram_.resize(ts.size());
  dram_bytes_.assign(ts.size(), 0);
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

void Memory::mark_written(uint8_t *shadow, int64_t bytes) {
  if (!shadow || bytes <= 0) return;
  const auto in = [&](const Bytes &v) {
    const auto p = reinterpret_cast<uintptr_t>(shadow), b = reinterpret_cast<uintptr_t>(v.data());
    return p >= b && p - b < v.size();
  };
  const bool psum = in(psum_written_);
  if (!psum && !in(sbuf_written_)) throw std::logic_error("Memory::mark_written: not a shadow pointer");
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
  const bool psum = p >= ps && p - ps < psum_written_.size();
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
