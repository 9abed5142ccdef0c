// The sanitizer's state (include/neuronsim/sim/sanitizer.hpp has the findings; docs/sanitizer.md the checks): shadow
// state beside the memory and vector clocks beside the semaphores, fed by the core as each dynamic instruction
// executes (sim/core.cpp Core::execute, also in timing-only runs: the checks need addresses, not values), by the
// semaphore updates as they apply, and by the rendezvous of collectives. Off unless RunOptions::sanitize; never in
// the engines' ops. Private to sim/. One Sanitizer serves every core of a run (one list of findings).
//
// Files: sanitizer.cpp (what each operand does, the hooks, the findings), sanitizer_uninit.cpp (the written shadow),
// sanitizer_lcd.cpp (NKI trips and loop-carried dependencies), sanitizer_race.cpp (vector clocks and races),
// sanitizer_text.cpp (regions in numpy slices, messages, JSON).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "neuronsim/sim/sanitizer.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

namespace sanitizer_detail {

// A zero-filled array whose pages the kernel supplies on first touch (calloc): a shadow of all of SBUF costs only
// the rows a kernel touches.
template <class T> class ZeroArray {
public:
  ZeroArray() = default;
  explicit ZeroArray(size_t n) : n_(n), p_(n ? static_cast<T *>(std::calloc(n, sizeof(T))) : nullptr) {
    if (n && !p_) throw std::bad_alloc();
  }
  ZeroArray(ZeroArray &&o) noexcept : n_(o.n_), p_(o.p_) { o.n_ = 0, o.p_ = nullptr; }
  ZeroArray &operator=(ZeroArray &&o) noexcept {
    std::swap(n_, o.n_), std::swap(p_, o.p_);
    return *this;
  }
  ZeroArray(const ZeroArray &) = delete;
  ZeroArray &operator=(const ZeroArray &) = delete;
  ~ZeroArray() { std::free(p_); }
  T *data() const { return p_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T &operator[](size_t i) const { return p_[i]; }

private:
  size_t n_ = 0;
  T *p_ = nullptr;
};

// Reduction ops of NKI associative reductions (isa::NkiInfo::reduce): 0 is a plain access.
enum : uint8_t { kPlain = 0, kAdd = 1, kMax = 2, kMin = 3, kMult = 4 };

// What the sanitizer does with one access of a static instruction. An operand that is read and written (a PSUM
// accumulation, a reduction's accumulator) is two of them, the read first.
struct OperandPlan {
  bool in = true;       // ins[arg] or outs[arg]
  int arg = 0;
  uint8_t slot = 0;     // the operand's number: ins first, then outs
  bool write = false;
  bool check = false;   // a read checked against the written shadow (uninitialized-read)
  bool mark = false;    // a write that marks the written shadow
  bool whole = false;   // ... of the whole tensor: a destination moved by run-time data
  bool exact = false;   // its bytes are exactly its access pattern's (race and loop-carried tracking)
  bool lcd = false;     // tracked for loop-carried dependencies
  uint8_t reduce = kPlain;  // its part in the instruction's associative reduction
  bool start = false;   // ... a write that starts it afresh (a matmul with start_tensor_calc: acc = x, not acc += x)
  int local = 0;        // how many of the instruction's NKI loops its tile is declared inside
};
struct InstPlan {
  std::vector<OperandPlan> ops;  // reads first
  bool lcd = false;              // some access is tracked for loop-carried dependencies
  bool race = false;             // some access is tracked for races
};

// One shadow entry of the race and loop-carried shadows: an access's record (0: none), its operand slot, for a read
// the depth from which its value is exposed (loop-carried: not written by its own trip), and its reduction op.
struct Entry {
  uint32_t rec = 0;
  uint16_t slot = 0;
  uint8_t depth = 0;
  uint8_t op = kPlain;
  bool operator==(const Entry &o) const { return rec == o.rec && slot == o.slot && depth == o.depth && op == o.op; }
};
// Shadow state kept per range, not per element: [first, end) ranges of a shadow's units (bytes, granules) by first
// unit, each with one Cell (equality-comparable; Cell{} is "nothing known", the state of units in no range).
// Neighbours with equal cells are one range, so an access to a whole tile is one range whatever its size.
template <class Cell> class Ranges {
public:
  struct Range {
    int64_t end = 0;
    Cell cell{};
  };
  // Calls f(first, end, cell) for the pieces of [b0, b1) in order -- cut where a range starts or ends inside it,
  // the gaps with Cell{} -- and keeps the cell f returns for each piece.
  template <class F> void update(int64_t b0, int64_t b1, F &&f) {
    auto it = m_.upper_bound(b0);
    if (it != m_.begin() && std::prev(it)->second.end > b0) --it;
    for (int64_t at = b0; at < b1;) {
      if (it == m_.end() || it->first > at) {  // a gap
        const int64_t end = it == m_.end() ? b1 : std::min(b1, it->first);
        it = merge_prev(m_.emplace_hint(it, at, Range{end, f(at, end, Cell{})}));
        at = end;
        ++it;
        continue;
      }
      if (it->first < at) {  // cut at the access's first unit
        Range tail = it->second;
        it->second.end = at;
        it = m_.emplace_hint(std::next(it), at, tail);
      }
      if (it->second.end > b1) {  // ... and after its last
        m_.emplace_hint(std::next(it), b1, it->second);
        it->second.end = b1;
      }
      const int64_t end = it->second.end;
      it->second.cell = f(at, end, static_cast<const Cell &>(it->second.cell));
      it = merge_prev(it);
      at = end;
      ++it;
    }
    if (it != m_.end()) merge_prev(it);
  }
  const std::map<int64_t, Range> &ranges() const { return m_; }

private:
  using Iter = typename std::map<int64_t, Range>::iterator;
  Iter merge_prev(Iter at) {
    if (at == m_.begin()) return at;
    const Iter prev = std::prev(at);
    if (prev->second.end != at->first || !(prev->second.cell == at->second.cell)) return at;
    prev->second.end = at->second.end;
    m_.erase(at);
    return prev;
  }
  std::map<int64_t, Range> m_;
};

// What the loop-carried shadow knows of a byte range of a tracked tensor: the last write and the write before it
// when another trip made it (the value's trips), the last read and the latest read of another trip.
struct LcdCell {
  Entry w, w2, r, r2;
  bool operator==(const LcdCell &o) const { return w == o.w && w2 == o.w2 && r == o.r && r2 == o.r2; }
};

// The loop-carried shadow of one tensor: ranges of its logical bytes.
struct LcdShadow {
  Ranges<LcdCell> ranges;
};
// What the race shadow knows of a range of granules: the last write and the last read.
struct RaceCell {
  Entry w, r;
  bool operator==(const RaceCell &o) const { return w == o.w && r == o.r; }
};

// The bytes of one memory (SBUF, PSUM: partitions x capacity; a DRAM tensor: its bytes) in granules of `granule`
// bytes (every access to it starts and ends on one): written marks, and in race mode the last write and read of
// ranges of granules.
struct Shadow {
  int64_t granule = 1;
  ZeroArray<uint8_t> written;
  bool race = false;
  Ranges<RaceCell> race_ranges;
};

// Accesses the race shadow names: the dynamic instruction's queue and position on its core.
struct RaceRec {
  int32_t inst = -1;
  uint32_t pos = 0;
  uint8_t core = 0, queue = 0;
};
// Accesses the loop-carried shadow names: the instruction and its NKI context (its trips).
struct LcdRec {
  int32_t inst = -1;
  int32_t ctx = -1;
  uint8_t core = 0;
};

// A queue's vector clock (race mode), components per (core, queue), and its value at the positions where a join
// changed it (between two, only the queue's own component moves: position + 1).
struct Clock {
  std::vector<uint32_t> now;
  std::vector<int64_t> at;
  std::vector<std::vector<uint32_t>> snap;
};

// A finding being gathered: the first access, the second one, and the regions (per-dim bounding boxes of the
// elements, in the reported shape) over every dynamic instance with the same key.
struct Region {
  std::vector<int64_t> shape, lo, hi;
  bool any = false;
};
struct Pending {
  Finding f;
  std::string var, loop;  // a loop-carried dependency's loop (its variable, its place), for its message
  int64_t start = 0, step = 1;  // ... and its variable's value in trip 0 and per trip
  int core = 0, tensor = -1, other_core = 0, other_tensor = -1;
  Region region, other_region;
};

} // namespace sanitizer_detail

class Sanitizer {
public:
  // `cores` of a run, `lnc` of them per logical core (its shards share its DRAM).
  Sanitizer(int cores, int lnc);
  ~Sanitizer();
  Sanitizer(const Sanitizer &) = delete;
  Sanitizer &operator=(const Sanitizer &) = delete;

  // A core's program and memory, before its schedule is built (Simulator::build); `rank` is its logical core.
  void attach(int core, const isa::Program &program, const engines::Memory &memory, int rank);
  // The run starts on the core (after its inputs are loaded): the memory it runs on (a program with run-time
  // branches gets a fresh one), and which outputs were loaded with data (in-place arguments).
  void begin(int core, const engines::Memory &memory);
  // The scheduler: the NKI context of a dynamic instance of `inst` (its trips of the kernel's loops, from
  // debug.nki), -1 when it has none.
  int32_t context(const isa::Inst &inst, const int64_t *loop_values, int64_t shard);

  // The core, as each schedule entry of queue q at position pos executes (DMA triggers included, which only carry
  // the clock), before its semantics run.
  void on_execute(int core, int q, int64_t pos, const ScheduledInst &si);
  // The semaphore updates of queue q's instruction at pos took effect.
  void on_release(int core, int q, int64_t pos, const isa::Inst &inst);
  // A collective (or barrier, send, receive) of several cores: its member `core` arrived (rendezvous null: the
  // core takes no part), and the rendezvous completed on it (its accesses happen then).
  void on_arrive(int core, int q, int64_t pos, const ScheduledInst &si, const void *rendezvous);
  void on_meet(int core, int q, int64_t pos, const ScheduledInst &si, const void *rendezvous);

  // After the run: the checks at its end (outputs written by two trips of a loop), then every finding, in the order
  // they were first met. Uninitialized reads that a race explains (the same instruction reading the same tensor
  // before the unordered write) are left out.
  std::vector<Finding> findings();

private:
  using Entry = sanitizer_detail::Entry;
  using OperandPlan = sanitizer_detail::OperandPlan;
  using InstPlan = sanitizer_detail::InstPlan;
  using Shadow = sanitizer_detail::Shadow;
  using LcdShadow = sanitizer_detail::LcdShadow;
  using LcdCell = sanitizer_detail::LcdCell;
  using RaceRec = sanitizer_detail::RaceRec;
  using LcdRec = sanitizer_detail::LcdRec;
  using Clock = sanitizer_detail::Clock;
  using Region = sanitizer_detail::Region;
  using Pending = sanitizer_detail::Pending;
  template <class T> using ZeroArray = sanitizer_detail::ZeroArray<T>;
  static constexpr uint8_t kPlain = sanitizer_detail::kPlain;
  struct CoreState;

  // sanitizer.cpp
  void plan(CoreState &c);
  void check(CoreState &c, int q, int64_t pos, const ScheduledInst &si);
  int64_t onchip_granule(const CoreState &c) const;
  sanitizer_detail::Shadow *dram_shadow(const CoreState &c, int tensor, bool create);
  sanitizer_detail::Pending &pending(const std::string &key, int core, int tensor);
  std::string access_text(const CoreState &c, int inst, int slot) const;
  SanitizerAccess access_of(int core, int inst, int slot, int q) const;
  // The granules [g0, g1) of an element run of access `a` in its memory's shadow `sh` (null: not tracked).
  struct Span {
    sanitizer_detail::Shadow *sh = nullptr;
    int64_t g0 = 0, g1 = 0;
    int64_t p = 0;  // on chip: the partition (global); DRAM: 0
  };
  Span span_of(CoreState &c, const engines::Access &a, int64_t e, int64_t n);

  // sanitizer_uninit.cpp
  void uninit_read(CoreState &c, const isa::Inst &inst, const OperandPlan &op, const engines::Access &a);
  void mark_written(CoreState &c, const OperandPlan &op, const engines::Access &a);
  void mark_tensor(CoreState &c, int tensor);

  // sanitizer_lcd.cpp
  void lcd_access(CoreState &c, int32_t rec, const isa::Inst &inst, const OperandPlan &op, const engines::Access &a);
  void lcd_finding(CoreState &c, const char *what, const Entry &mine, const Entry &theirs, int depth, int tensor,
                   int64_t b0, int64_t b1);
  void lcd_end();

  // sanitizer_race.cpp
  void tick(CoreState &c, int q, int64_t pos, const ScheduledInst &si);
  void join_snapshot(std::vector<uint32_t> &into, int core, int q, int64_t pos, bool &changed) const;
  void race_access(CoreState &c, int q, uint32_t rec, const OperandPlan &op, const engines::Access &a);
  bool ordered(const std::vector<uint32_t> &now, int core, int q, uint32_t rec) const;
  bool replicated(const CoreState &c, uint32_t mine, uint32_t theirs) const;
  void race_finding(CoreState &c, int q, const Entry &mine, bool my_write, const Entry &theirs, bool their_write,
                    int tensor, const Span &s, int64_t g0, int64_t g1);

  // sanitizer_text.cpp
  void add_elements(sanitizer_detail::Region &r, const isa::Tensor &t, int64_t first, int64_t last) const;
  void add_span(sanitizer_detail::Region &r, const CoreState &c, int tensor, const Span &s, int64_t g0,
                int64_t g1) const;
  static std::string region_text(const sanitizer_detail::Region &r);
  static void init_region(sanitizer_detail::Region &r, const isa::Tensor &t);

  int cores_ = 1, lnc_ = 1;
  std::vector<std::unique_ptr<CoreState>> core_;
  // DRAM shadows per (rank, tensor): the shards of a logical core share its DRAM.
  std::map<std::pair<int, int>, std::unique_ptr<sanitizer_detail::Shadow>> dram_;
  // Loop-carried shadows per (owner, tensor): the core for SBUF/PSUM tensors, kDramOwner + rank for DRAM ones.
  std::map<std::pair<int, int>, std::unique_ptr<sanitizer_detail::LcdShadow>> lcd_;
  static constexpr int kDramOwner = 1000;
  // NKI contexts: a context is the (loop id, trip) list of a dynamic instance, outermost first.
  std::vector<std::vector<std::pair<int32_t, int64_t>>> contexts_;
  std::map<std::vector<int64_t>, int32_t> context_ids_;
  std::vector<int64_t> key_scratch_;
  std::map<int, isa::NkiLoop> loops_;      // the kernel's loops by id (kind, line, variable)
  std::map<int, std::string> loop_file_;   // and the file of their lines
  std::vector<sanitizer_detail::RaceRec> race_recs_{1};
  std::vector<sanitizer_detail::LcdRec> lcd_recs_{1};
  std::map<const void *, std::pair<std::vector<uint32_t>, int>> meetings_;  // per rendezvous: joined clock, members
  std::vector<sanitizer_detail::Pending> pending_;
  std::unordered_map<std::string, size_t> pending_index_;
  std::vector<std::pair<int64_t, int64_t>> runs_;  // element runs of the access being checked (reused)
  bool ended_ = false;
};

} // namespace neuronsim::sim
