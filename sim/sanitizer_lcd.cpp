// Loop-carried dependencies of nl.affine_range loops (sim/sanitizer.hpp; docs/sanitizer.md). Every access the plan
// tracks carries its NKI context: its trip of each of the kernel's loops around it (debug.nki, evaluated from the
// BIR loop variables by the scheduler, so pipelining, unrolling and peeling change nothing). The shadow of a tracked
// tensor is byte ranges (a tile stored whole is one range, whatever its size), each with the last write, the write
// before it when another trip made it, and the last two reads of different trips. Two accesses of different trips
// of one instance of an affine loop depend on each other when
//   - a trip reads what another trip wrote (flow);
//   - a trip writes what another trip read as a value from outside its own trip (anti: the reader needed the
//     value from before, or from its own trip, and gets the other's);
//   - two trips write it and something after the loop reads it, or it is a kernel output (output: the value left
//     depends on their order);
//   - a trip reads an associative reduction's partial result (the order of the other trips' folds shows).
// Not a dependency: a tile declared inside the loop's body (each trip's own, rotating buffers included); two folds
// of one associative reduction (matmul accumulation into PSUM, acc = nl.add(acc, x), max, min, multiply: the NKI
// nl.affine_range documentation exempts them); trips that write an element before reading it (the trip's own use
// of a shared tile).
#include <algorithm>

#include "sim/sanitizer_core.hpp"

namespace neuronsim::sim {

namespace sanitizer_detail {

struct LcdDiv {
  size_t d = 0;        // loops (outermost first) in which both are in the same trip
  bool split = false;  // at depth d both are in the same loop, different trips
};

LcdDiv lcd_divergence(const std::vector<std::pair<int32_t, int64_t>> &a,
                      const std::vector<std::pair<int32_t, int64_t>> &b) {
  LcdDiv v;
  while (v.d < a.size() && v.d < b.size() && a[v.d] == b[v.d]) ++v.d;
  v.split = v.d < a.size() && v.d < b.size() && a[v.d].first == b[v.d].first;
  return v;
}

} // namespace sanitizer_detail

void Sanitizer::lcd_access(CoreState &c, int32_t rec, const isa::Inst &inst, const OperandPlan &op,
                           const engines::Access &a) {
  const isa::Tensor &t = c.prog->tensors[static_cast<size_t>(a.tensor)];
  const auto key = std::make_pair(t.is_dram() ? kDramOwner + c.rank : c.core, a.tensor);
  auto found = lcd_.find(key);
  if (found == lcd_.end()) found = lcd_.emplace(key, std::make_unique<LcdShadow>()).first;
  auto &ranges = found->second->ranges;
  const auto &C = contexts_[static_cast<size_t>(lcd_recs_[static_cast<size_t>(rec)].ctx)];
  auto ctx_of = [&](const Entry &e) -> const std::vector<std::pair<int32_t, int64_t>> & {
    return contexts_[static_cast<size_t>(lcd_recs_[e.rec].ctx)];
  };
  // A loop at depth d of this access is checked when it is an affine_range and the tile is not declared inside it.
  auto checked = [&](size_t d) {
    if (d >= C.size() || static_cast<int>(d) < op.local) return false;
    const auto l = loops_.find(C[d].first);
    return l != loops_.end() && l->second.kind == isa::NkiLoop::Kind::Affine;
  };
  const Entry mine{static_cast<uint32_t>(rec), op.slot, 0, op.reduce};
  const int64_t esz = isa::dtype_size(a.dtype);
  const int64_t F = t.is_dram() ? 0 : t.bytes_per_partition / esz;
  (void)inst;
  // Findings of consecutive byte ranges with the same other access are one region (one open run per finding slot
  // of a step).
  struct Open {
    const char *what = nullptr;
    Entry mine, theirs;
    size_t depth = 0;
    int64_t b0 = 0, b1 = 0;
  } open[3];
  auto flush = [&](Open &o) {
    if (o.what) lcd_finding(c, o.what, o.mine, o.theirs, static_cast<int>(o.depth), a.tensor, o.b0, o.b1);
    o.what = nullptr;
  };
  auto note = [&](int k, const char *what, const Entry &m, const Entry &theirs, size_t depth, int64_t b0,
                  int64_t b1) {
    Open &o = open[k];
    if (o.what == what && o.theirs == theirs && o.mine == m && o.b1 == b0) {
      o.b1 = b1;
      return;
    }
    flush(o);
    o = Open{what, m, theirs, depth, b0, b1};
  };
  // One range's step: the findings it makes (at most three) and its new cell. The ranges an access covers mostly
  // hold the same cell (an access writes whole tiles), so the step is remembered for the last cell seen.
  struct Note {
    const char *what;
    Entry m, theirs;
    size_t depth;
  };
  struct Step {
    LcdCell in{}, out{};
    Note notes[3];
    int n = 0;
    bool valid = false;
  } memo;
  auto step = [&](const LcdCell &cell, Step &st) {
    st.in = cell;
    st.out = cell;
    st.n = 0;
    st.valid = true;
    LcdCell &o = st.out;
    auto add = [&st](const char *what, const Entry &m, const Entry &theirs, size_t depth) {
      st.notes[st.n++] = Note{what, m, theirs, depth};
    };
    if (!op.write) {
      Entry rd = mine;
      if (cell.w.rec) {
        const sanitizer_detail::LcdDiv dw = sanitizer_detail::lcd_divergence(ctx_of(cell.w), C);
        if (dw.split && checked(dw.d) && !(mine.op && cell.w.op == mine.op)) {
          add("raw", mine, cell.w, dw.d);
        } else if (!dw.split && cell.w2.rec) {
          // The value has writes of two trips of a loop: a read inside that loop's instance sees a partial
          // reduction; one after it sees an order-dependent value unless both were folds of one reduction.
          const sanitizer_detail::LcdDiv d2 = sanitizer_detail::lcd_divergence(ctx_of(cell.w2), ctx_of(cell.w));
          const bool folds = cell.w.op && cell.w2.op == cell.w.op;
          if (d2.split && checked(d2.d)) {
            if (dw.d > d2.d && !mine.op && folds) add("partial", mine, cell.w2, d2.d);
            else if (dw.d <= d2.d && !folds) add("waw", cell.w, cell.w2, d2.d);
          }
        }
        rd.depth = static_cast<uint8_t>(std::min<size_t>(dw.d, 255));
      }
      if (cell.r.rec && ctx_of(cell.r) != C) o.r2 = cell.r;
      o.r = rd;
      return;
    }
    for (const Entry *r : {&cell.r, &cell.r2}) {
      if (!r->rec || r->rec == mine.rec) continue;
      const sanitizer_detail::LcdDiv dr = sanitizer_detail::lcd_divergence(ctx_of(*r), C);
      if (dr.split && checked(dr.d) && dr.d >= r->depth && !(mine.op && r->op == mine.op))
        add("war", mine, *r, dr.d);
    }
    if (cell.w.rec) {
      // w2 keeps the write of another trip the value depends on: as a fold of the same reduction while this write
      // continues it (acc += x), as a plain write once something overwrote it (the order of the two writes then
      // decides what is left).
      const bool fold = mine.op && !op.start && cell.w.op == mine.op;
      const sanitizer_detail::LcdDiv dw = sanitizer_detail::lcd_divergence(ctx_of(cell.w), C);
      if (dw.split && checked(dw.d)) {
        o.w2 = cell.w;
        if (!fold) o.w2.op = kPlain;
      } else if (cell.w2.rec) {
        // Still inside the loop instance where the two trips wrote: the value still depends on their order.
        const sanitizer_detail::LcdDiv d2 = sanitizer_detail::lcd_divergence(ctx_of(cell.w2), ctx_of(cell.w));
        if (!(d2.split && dw.d > d2.d)) o.w2 = Entry{};
        else if (!fold) o.w2.op = kPlain;
      }
    }
    o.w = mine;
  };
  for (const auto &[e, n] : runs_) {
    const int64_t b0 = t.is_dram() ? e * esz : (e / F) * t.bytes_per_partition + (e % F) * esz;
    ranges.update(b0, b0 + n * esz, [&](int64_t first, int64_t end, const LcdCell &cell) {
      if (!memo.valid || !(cell == memo.in)) step(cell, memo);
      for (int k = 0; k < memo.n; ++k)
        note(k, memo.notes[k].what, memo.notes[k].m, memo.notes[k].theirs, memo.notes[k].depth, first, end);
      return memo.out;
    });
  }
  for (Open &o : open) flush(o);
}

// A dependency between `mine` and `theirs` (loop-carried shadow entries) through the tensor's logical bytes
// [b0, b1), at loop depth `depth` of their contexts.
void Sanitizer::lcd_finding(CoreState &c, const char *what, const Entry &mine, const Entry &theirs, int depth,
                            int tensor, int64_t b0, int64_t b1) {
  const LcdRec &m = lcd_recs_[mine.rec], &o = lcd_recs_[theirs.rec];
  // Once per pair of accesses and tensor: a flow and an anti dependency between the same two are one finding, and
  // so are the copies of one kernel line that a loop's rotating buffers or its peeled trips emit (an access is its
  // source line's operand when the instruction has one, else the instruction's).
  auto site = [&](const LcdRec &r, const Entry &e) {
    const isa::Inst &in = core_[static_cast<size_t>(r.core)]->prog->insts[static_cast<size_t>(r.inst)];
    const std::string at = in.source_line > 0 ? in.source_file + ":" + std::to_string(in.source_line)
                                              : "#" + std::to_string(r.inst);
    return at + "|" + std::to_string(e.slot);
  };
  const std::string a = site(m, mine);
  const std::string b = site(o, theirs);
  const std::string key = "l|" + std::to_string(m.core) + "|" + std::min(a, b) + "|" + std::max(a, b) + "|" +
                          std::to_string(tensor);
  Pending &p = pending(key, c.core, tensor);
  const auto &cm = contexts_[static_cast<size_t>(m.ctx)], &co = contexts_[static_cast<size_t>(o.ctx)];
  if (p.f.kind.empty()) {
    p.f.kind = "loop-carried-dependency";
    p.f.first = access_of(m.core, m.inst, mine.slot, -1);
    p.f.other = access_of(o.core, o.inst, theirs.slot, -1);
    p.f.first.write = std::string(what) == "war" || std::string(what) == "waw";
    p.f.other->write = std::string(what) != "war";
    const size_t d = static_cast<size_t>(depth);
    if (d < cm.size()) p.f.first.trip = cm[d].second;
    if (d < co.size()) p.f.other->trip = co[d].second;
    if (d < cm.size()) {
      const auto l = loops_.find(cm[d].first);
      if (l != loops_.end()) {
        p.var = l->second.var;
        p.start = l->second.start;
        p.step = l->second.step;
        const std::string &file = loop_file_[cm[d].first];
        p.loop = "the nl.affine_range at " + (file.empty() ? "line " + std::to_string(l->second.line)
                                                         : file + ":" + std::to_string(l->second.line));
      }
    }
  }
  const isa::Tensor &t = c.prog->tensors[static_cast<size_t>(tensor)];
  const int64_t esz = std::max<int64_t>(1, isa::dtype_size(t.dtype));
  add_elements(p.region, t, b0 / esz, (b1 - 1) / esz);
}

// At the end of the run: a kernel output whose last value two trips of an affine loop wrote (not as folds of one
// reduction) is order-dependent.
void Sanitizer::lcd_end() {
  for (auto &[key, sh] : lcd_) {
    if (key.first < kDramOwner) continue;
    const int rank = key.first - kDramOwner, tensor = key.second;
    CoreState *c = nullptr;
    for (auto &cs : core_)
      if (cs && cs->rank == rank) {
        c = cs.get();
        break;
      }
    if (!c || !c->prog->tensors[static_cast<size_t>(tensor)].is_output()) continue;
    for (const auto &[b0, range] : sh->ranges.ranges()) {
      const LcdCell &cell = range.cell;
      if (!cell.w.rec || !cell.w2.rec) continue;
      const auto &a = contexts_[static_cast<size_t>(lcd_recs_[cell.w.rec].ctx)];
      const auto &b = contexts_[static_cast<size_t>(lcd_recs_[cell.w2.rec].ctx)];
      const sanitizer_detail::LcdDiv d = sanitizer_detail::lcd_divergence(b, a);
      const bool folds = cell.w.op && cell.w2.op == cell.w.op;
      if (!d.split || folds) continue;
      const auto l = loops_.find(a[d.d].first);
      if (l == loops_.end() || l->second.kind != isa::NkiLoop::Kind::Affine) continue;
      lcd_finding(*c, "waw", cell.w, cell.w2, static_cast<int>(d.d), tensor, b0, range.end);
    }
  }
}

} // namespace neuronsim::sim
