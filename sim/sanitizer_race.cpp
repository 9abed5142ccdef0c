// Races (sim/sanitizer.hpp; docs/sanitizer.md): vector clocks over every (core, queue) pair of the run, kept beside
// the semaphores. An instruction's clock is its queue's, joined with what it waited for: the producers' clocks of
// its inferred waits (a queue position's clock at its issue), the clocks its semaphores' updates released (applied
// when the updating instruction completes: a DMA transfer's at its completion), and at a collective, barrier, send
// or receive of several cores every member's clock at its arrival. Its own component is its position + 1. Per
// range of granules the race shadow keeps the last write and the last read (FastTrack's epochs, the read not
// widened to a clock: a missed race rather than a false one); an access unordered with the write, or a write
// unordered with the read, from another queue or core, is a race.
#include <algorithm>

#include "sim/sanitizer_core.hpp"

namespace neuronsim::sim {

// Into `into`, the clock of queue q of `core` at position pos (every component its last change left, its own one
// pos + 1); `changed` is set when a component of another queue than `mine` grew.
void Sanitizer::join_snapshot(std::vector<uint32_t> &into, int core, int q, int64_t pos, bool &changed) const {
  if (pos < 0) return;
  const Clock &cl = core_[static_cast<size_t>(core)]->clocks[static_cast<size_t>(q)];
  const size_t own = static_cast<size_t>(core * kMaxQueues + q);
  const auto it = std::upper_bound(cl.at.begin(), cl.at.end(), pos);
  if (it != cl.at.begin()) {
    const std::vector<uint32_t> &s = cl.snap[static_cast<size_t>(it - cl.at.begin() - 1)];
    for (size_t k = 0; k < into.size(); ++k)
      if (s[k] > into[k]) into[k] = s[k], changed = true;
  }
  const uint32_t mine = static_cast<uint32_t>(pos + 1);
  if (mine > into[own]) into[own] = mine, changed = true;
}

void Sanitizer::tick(CoreState &c, int q, int64_t pos, const ScheduledInst &si) {
  Clock &cl = c.clocks[static_cast<size_t>(q)];
  std::vector<uint32_t> &now = cl.now;
  const size_t own = static_cast<size_t>(c.core * kMaxQueues + q);
  bool changed = false;
  for (const auto &w : si.waits)
    if (w.queue != q) join_snapshot(now, c.core, w.queue, w.count - 1, changed);
  for (const auto &w : si.d.inst->waits) {
    if (w.sem < 0 || static_cast<size_t>(w.sem) >= c.sem.size() || c.sem[static_cast<size_t>(w.sem)].empty()) continue;
    const std::vector<uint32_t> &s = c.sem[static_cast<size_t>(w.sem)];
    for (size_t k = 0; k < now.size(); ++k)
      if (s[k] > now[k] && k != own) now[k] = s[k], changed = true;
  }
  now[own] = static_cast<uint32_t>(pos + 1);
  if (changed || cl.at.empty()) {
    cl.at.push_back(pos);
    cl.snap.push_back(now);
  }
}

void Sanitizer::on_release(int core, int q, int64_t pos, const isa::Inst &inst) {
  CoreState &c = *core_[static_cast<size_t>(core)];
  if (!(c.race_onchip || c.race_dram)) return;
  if (c.sem.empty()) c.sem.resize(static_cast<size_t>(kNumSemaphores));
  auto release = [&](int64_t sem) {
    if (sem < 0 || sem >= kNumSemaphores) return;
    std::vector<uint32_t> &s = c.sem[static_cast<size_t>(sem)];
    if (s.empty()) s.assign(c.clocks[0].now.size(), 0);
    bool changed = false;
    join_snapshot(s, core, q, pos, changed);
  };
  for (const auto &u : inst.updates) release(u.sem);
  for (int64_t id : inst.f.sema_group) release(id);
}

void Sanitizer::on_arrive(int core, int q, int64_t pos, const ScheduledInst &si, const void *rendezvous) {
  CoreState &c = *core_[static_cast<size_t>(core)];
  if (!(c.race_onchip || c.race_dram)) return;
  tick(c, q, pos, si);
  if (!rendezvous) return;
  auto &m = meetings_[rendezvous];
  const std::vector<uint32_t> &now = c.clocks[static_cast<size_t>(q)].now;
  if (m.first.empty()) m.first.assign(now.size(), 0);
  for (size_t k = 0; k < now.size(); ++k) m.first[k] = std::max(m.first[k], now[k]);
  ++m.second;
}

void Sanitizer::on_meet(int core, int q, int64_t pos, const ScheduledInst &si, const void *rendezvous) {
  CoreState &c = *core_[static_cast<size_t>(core)];
  if ((c.race_onchip || c.race_dram) && rendezvous) {
    auto it = meetings_.find(rendezvous);
    if (it != meetings_.end()) {
      Clock &cl = c.clocks[static_cast<size_t>(q)];
      for (size_t k = 0; k < cl.now.size(); ++k) cl.now[k] = std::max(cl.now[k], it->second.first[k]);
      // The clock at this position is the joined one (what waits for the collective's completion sees).
      if (!cl.at.empty() && cl.at.back() == pos) cl.snap.back() = cl.now;
      else cl.at.push_back(pos), cl.snap.push_back(cl.now);
      if (--it->second.second <= 0) meetings_.erase(it);
    }
  }
  check(c, q, pos, si);
}

// Two cores writing the same bytes with the same instruction of their program: an SPMD kernel's replicated store
// (each shard saving the result of a collective they all hold, workloads/multicore/tp_mlp). Not reported: which
// one lands last does not matter when they store the same values, which a timing-only run cannot see.
bool Sanitizer::replicated(const CoreState &c, uint32_t mine, uint32_t theirs) const {
  const RaceRec &a = race_recs_[mine], &b = race_recs_[theirs];
  if (a.core == b.core || a.inst != b.inst) return false;
  const CoreState &o = *core_[b.core];
  return c.prog->insts[static_cast<size_t>(a.inst)].name == o.prog->insts[static_cast<size_t>(b.inst)].name;
}

bool Sanitizer::ordered(const std::vector<uint32_t> &now, int core, int q, uint32_t rec) const {
  if (!rec) return true;
  const RaceRec &r = race_recs_[rec];
  if (r.core == core && r.queue == q) return true;  // program order on one queue
  return now[static_cast<size_t>(r.core * kMaxQueues + r.queue)] >= r.pos + 1;
}

void Sanitizer::race_access(CoreState &c, int q, uint32_t rec, const OperandPlan &op, const engines::Access &a) {
  const std::vector<uint32_t> &now = c.clocks[static_cast<size_t>(q)].now;
  const Entry mine{rec, op.slot, 0, kPlain};
  for (const auto &[e, n] : runs_) {
    const Span s = span_of(c, a, e, n);
    if (!s.sh || !s.sh->race) continue;
    // Consecutive granules unordered with the same access are one finding's region.
    Entry open{};
    bool open_write = false;
    int64_t from = 0;
    uint32_t ok_w = 0, ok_r = 0;  // the last entries found ordered (runs of granules share them)
    auto flush = [&](int64_t to) {
      if (open.rec) race_finding(c, q, mine, op.write, open, open_write, a.tensor, s, from, to);
      open = Entry{};
    };
    s.sh->race_ranges.update(s.g0, s.g1, [&](int64_t g, int64_t, const sanitizer_detail::RaceCell &cell) {
      Entry bad{};
      bool bad_write = false;
      const Entry w = cell.w;
      if (w.rec && w.rec != ok_w && w.rec != rec) {
        if (ordered(now, c.core, q, w.rec) || (op.write && replicated(c, rec, w.rec))) ok_w = w.rec;
        else bad = w, bad_write = true;
      }
      if (op.write && !bad.rec) {
        const Entry r = cell.r;
        if (r.rec && r.rec != ok_r && r.rec != rec) {
          if (ordered(now, c.core, q, r.rec)) ok_r = r.rec;
          else bad = r;
        }
      }
      if (!(bad == open) || bad_write != open_write) {
        flush(g);
        if (bad.rec) open = bad, open_write = bad_write, from = g;
      }
      return op.write ? sanitizer_detail::RaceCell{mine, Entry{}} : sanitizer_detail::RaceCell{cell.w, mine};
    });
    flush(s.g1);
  }
}

void Sanitizer::race_finding(CoreState &c, int q, const Entry &mine, bool my_write, const Entry &theirs,
                             bool their_write, int tensor, const Span &s, int64_t g0, int64_t g1) {
  const RaceRec &m = race_recs_[mine.rec], &o = race_recs_[theirs.rec];
  const std::string a = std::to_string(m.core) + "|" + std::to_string(m.inst) + "|" + std::to_string(mine.slot);
  const std::string b = std::to_string(o.core) + "|" + std::to_string(o.inst) + "|" + std::to_string(theirs.slot);
  const std::string key = "r|" + std::min(a, b) + "|" + std::max(a, b);
  Pending &p = pending(key, c.core, tensor);
  CoreState &oc = *core_[o.core];
  const isa::Inst &oi = oc.prog->insts[static_cast<size_t>(o.inst)];
  const size_t os = theirs.slot;
  const isa::Arg *oarg = os < oi.ins.size()                     ? &oi.ins[os]
                         : os - oi.ins.size() < oi.outs.size() ? &oi.outs[os - oi.ins.size()]
                                                               : nullptr;
  const int other_tensor = oarg ? oarg->tensor : -1;
  if (p.f.kind.empty()) {
    p.f.kind = "race";
    p.f.first = access_of(m.core, m.inst, mine.slot, q);
    p.f.first.tensor = c.prog->tensors[static_cast<size_t>(tensor)].name;
    p.f.first.write = my_write;
    p.f.other = access_of(o.core, o.inst, theirs.slot, o.queue);
    p.f.other->write = their_write;
    if (other_tensor >= 0 && other_tensor != tensor) {
      p.other_tensor = other_tensor;
      p.other_core = o.core;
      init_region(p.other_region, oc.prog->tensors[static_cast<size_t>(other_tensor)]);
    }
  }
  add_span(p.region, c, tensor, s, g0, g1);
  if (p.other_tensor >= 0) add_span(p.other_region, oc, p.other_tensor, s, g0, g1);
}

} // namespace neuronsim::sim
