// The sanitizer (sim/sanitizer.hpp): what each operand of an instruction does (its plan), the cores' state, the
// hook the core calls per dynamic instruction, and the findings.
#include "sim/sanitizer.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "neuronsim/engines/memory.hpp"
#include "sim/sanitizer_core.hpp"

namespace neuronsim::sim {

namespace sanitizer_detail {

using IT = isa::InstructionType;

bool plan_is_matmul(IT t) {
  return t == IT::Matmult || t == IT::MatmultSparse || t == IT::MatmultMx || t == IT::MatmultBase;
}

// Reads at addresses that run-time data choose, or of part of the pattern only: not checked against the written
// shadow, and not tracked (their bytes are not their access pattern's).
bool data_addressed_read(const isa::Inst &inst, size_t k) {
  switch (inst.type) {
  case IT::TensorCopyDynamicSrc:  // src moved by the offset; the offset operand's first element only
  case IT::RegisterMove:          // an access's first element
  case IT::TensorLoad:
  case IT::ReadVarAddr:           // its address, not its data
  case IT::CustomOp:              // an external program: what it reads is its own
  case IT::BIRKernel:
    return true;
  case IT::IndirectCopy:          // the table, at the rows the indices name
  case IT::IndirectLoad:
  case IT::GenericIndirectLoad:
  case IT::Gather:
  case IT::StreamShuffle:         // the source partitions the mask names
    return k == 0;
  case IT::CollectiveCompute:     // AllToAllV: the counts the metadata give
    return inst.f.collective_kind == "AllToAllV";
  default:
    return false;
  }
}

// Writes whose destination run-time data move: the whole tensor counts as written.
bool moved_write(const isa::Inst &inst) {
  return inst.type == IT::TensorCopyDynamicDst || inst.type == IT::IndirectSave ||
         inst.type == IT::GenericIndirectSave || inst.type == IT::IndirectSaveAccumulate;
}

// Writes of part of the pattern (elements kept where a predicate, an index or a mask says): the pattern counts as
// written, but they are not tracked for races or loop-carried dependencies.
bool partial_write(const isa::Inst &inst) {
  switch (inst.type) {
  case IT::IndirectCopy:
  case IT::IndirectLoad:
  case IT::GenericIndirectLoad:
  case IT::CopyPredicated:
  case IT::StreamShuffle:
    return true;
  case IT::CollectiveCompute:
    return inst.f.collective_kind == "AllToAllV";
  default:
    return false;
  }
}

uint8_t reduce_code(const std::string &op) {
  if (op == "add") return kAdd;
  if (op == "max") return kMax;
  if (op == "min") return kMin;
  if (op == "mult") return kMult;
  return kPlain;
}

int64_t gcd_size(int64_t g, int64_t size) { return size > 0 ? std::gcd(g, size) : g; }

} // namespace sanitizer_detail

std::string finding_line(const Finding &f) { return "sanitizer: " + f.kind + ": " + f.message; }

Sanitizer::Sanitizer(int cores, int lnc) : cores_(std::max(1, cores)), lnc_(std::max(1, lnc)) {
  core_.resize(static_cast<size_t>(cores_));
}

Sanitizer::~Sanitizer() = default;

void Sanitizer::attach(int core, const isa::Program &program, const engines::Memory &memory, int rank) {
  if (core < 0 || core >= cores_) throw std::logic_error("Sanitizer::attach: no core " + std::to_string(core));
  auto c = std::make_unique<CoreState>();
  c->core = core;
  c->rank = rank;
  c->prog = &program;
  c->mem = &memory;
  for (const auto &i : program.insts) c->explicit_sync |= !i.waits.empty() || !i.updates.empty();
  // Races: where synchronisation is explicit -- the program's own semaphores (every memory), or cores sharing
  // DRAM (the shards of a logical core: their DRAM). BIR whose synchronisation the simulator infers cannot race
  // within a core: nothing is tracked there.
  c->race_onchip = c->explicit_sync;
  c->race_dram = c->explicit_sync || lnc_ > 1;
  const engines::ArchParams &arch = memory.arch();
  c->partitions = arch.partitions;
  c->sbuf_cap = arch.sbuf_bytes_per_partition;
  c->psum_cap = arch.psum_bytes_per_partition;
  plan(*c);
  const int64_t g = onchip_granule(*c);
  for (Shadow *s : {&c->sbuf, &c->psum}) {
    s->granule = g;
    const int64_t bytes = c->partitions * (s == &c->sbuf ? c->sbuf_cap : c->psum_cap);
    s->written = ZeroArray<uint8_t>(static_cast<size_t>(bytes / g));
    s->race = c->race_onchip;
  }
  if (c->race_onchip || c->race_dram)
    for (auto &cl : c->clocks) cl.now.assign(static_cast<size_t>(cores_ * kMaxQueues), 0);
  for (const auto &inst : program.insts)
    if (inst.nki)
      for (const auto &l : inst.nki->loops)
        if (loops_.emplace(l.id, l).second) loop_file_[l.id] = inst.source_file;
  core_[static_cast<size_t>(core)] = std::move(c);
}

// The per-tensor granule: the gcd of the element sizes every access to the tensor uses (an access starts on an
// element of its own dtype, and is whole elements long), so a granule never straddles two accesses' bytes.
void Sanitizer::plan(CoreState &c) {
  const isa::Program &p = *c.prog;
  c.granule.assign(p.tensors.size(), 8);
  for (size_t t = 0; t < p.tensors.size(); ++t)
    c.granule[t] = sanitizer_detail::gcd_size(8, isa::dtype_size(p.tensors[t].dtype));
  for (const auto &inst : p.insts)
    for (const auto *side : {&inst.ins, &inst.outs})
      for (const auto &a : *side)
        if (a.kind == isa::ArgKind::AccessPattern && a.tensor >= 0 && a.tensor < static_cast<int>(p.tensors.size()))
          c.granule[static_cast<size_t>(a.tensor)] =
              sanitizer_detail::gcd_size(c.granule[static_cast<size_t>(a.tensor)], isa::dtype_size(a.dtype));
  // In-place arguments (an NKI kernel's argument it writes) hold the caller's data when the run starts.
  c.loaded.assign(p.tensors.size(), false);
  for (size_t t = 0; t < p.tensors.size(); ++t)
    if (p.tensors[t].nki && p.tensors[t].nki->argument) c.loaded[t] = true;

  // Loop-carried candidates: tensors some access writes inside an affine loop it is not private to.
  std::vector<bool> candidate(p.tensors.size(), false);
  auto affine_outside = [](const isa::NkiInfo &n, int local) {
    for (size_t d = static_cast<size_t>(std::max(0, local)); d < n.loops.size(); ++d)
      if (n.loops[d].kind == isa::NkiLoop::Kind::Affine) return true;
    return false;
  };
  auto local_of = [](const isa::Inst &inst, size_t slot) {
    return inst.nki && slot < inst.nki->local.size() ? inst.nki->local[slot] : 0;
  };
  for (const auto &inst : p.insts) {
    if (!inst.nki || sanitizer_detail::moved_write(inst) || sanitizer_detail::partial_write(inst)) continue;
    for (size_t k = 0; k < inst.outs.size(); ++k) {
      const isa::Arg &a = inst.outs[k];
      if (a.kind == isa::ArgKind::AccessPattern && a.tensor >= 0 &&
          affine_outside(*inst.nki, local_of(inst, inst.ins.size() + k)))
        candidate[static_cast<size_t>(a.tensor)] = true;
    }
  }

  c.plans.assign(p.insts.size(), InstPlan{});
  for (const auto &inst : p.insts) {
    InstPlan &ip = c.plans[static_cast<size_t>(inst.index)];
    const bool uninit_ok = inst.f.can_read_uninit;
    const uint8_t red = inst.nki ? sanitizer_detail::reduce_code(inst.nki->reduce) : kPlain;
    auto tracked = [&](OperandPlan &op, int tensor) {
      const bool onchip = !p.tensors[static_cast<size_t>(tensor)].is_dram();
      op.lcd = op.exact && inst.nki && candidate[static_cast<size_t>(tensor)] &&
               affine_outside(*inst.nki, op.local);
      ip.lcd |= op.lcd;
      ip.race |= op.exact && (onchip ? c.race_onchip : c.race_dram);
    };
    auto valid = [&](const isa::Arg &a) {
      return a.kind == isa::ArgKind::AccessPattern && a.tensor >= 0 && a.tensor < static_cast<int>(p.tensors.size());
    };
    for (size_t k = 0; k < inst.ins.size(); ++k) {
      if (!valid(inst.ins[k])) continue;
      OperandPlan op;
      op.in = true;
      op.arg = static_cast<int>(k);
      op.slot = static_cast<uint8_t>(std::min<size_t>(k, 255));
      const bool addressed = sanitizer_detail::data_addressed_read(inst, k);
      op.check = !uninit_ok && !addressed;
      op.exact = !addressed;
      op.local = local_of(inst, k);
      if (red != sanitizer_detail::kPlain && inst.nki->reduce_in == static_cast<int>(k)) op.reduce = red;
      tracked(op, inst.ins[k].tensor);
      ip.ops.push_back(op);
    }
    // A matmul that does not start its accumulation group adds to what its PSUM destination holds: it reads it
    // (reference neuronx-cc/bir/sim-matmul-mx.md 5: start_tensor_calc false is a group body).
    const bool accumulates = sanitizer_detail::plan_is_matmul(inst.type) && !inst.f.start_tensor_calc;
    for (size_t k = 0; k < inst.outs.size(); ++k) {
      if (!valid(inst.outs[k])) continue;
      const uint8_t slot = static_cast<uint8_t>(std::min<size_t>(inst.ins.size() + k, 255));
      const int local = local_of(inst, inst.ins.size() + k);
      if (accumulates && k == 0) {
        OperandPlan op;
        op.in = false;
        op.arg = 0;
        op.slot = slot;
        op.check = !uninit_ok;
        op.exact = true;
        op.local = local;
        if (red != sanitizer_detail::kPlain && inst.nki->reduce_in < 0) op.reduce = red;
        tracked(op, inst.outs[0].tensor);
        ip.ops.push_back(op);
      }
      OperandPlan op;
      op.in = false;
      op.arg = static_cast<int>(k);
      op.slot = slot;
      op.write = true;
      op.mark = true;
      op.whole = sanitizer_detail::moved_write(inst);
      op.exact = !op.whole && !sanitizer_detail::partial_write(inst);
      op.local = local;
      if (red != sanitizer_detail::kPlain && k == 0)
        op.reduce = red, op.start = sanitizer_detail::plan_is_matmul(inst.type) && inst.f.start_tensor_calc;
      tracked(op, inst.outs[k].tensor);
      ip.ops.push_back(op);
    }
    // Reads before writes (an in-place instruction reads what was there before it).
    std::stable_partition(ip.ops.begin(), ip.ops.end(), [](const OperandPlan &o) { return !o.write; });
  }
}

int64_t Sanitizer::onchip_granule(const CoreState &c) const {
  int64_t g = 8;
  const isa::Program &p = *c.prog;
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    if (p.tensors[t].is_dram()) continue;
    g = std::gcd(g, c.granule[t]);
    if (const int64_t addr = c.mem->placed_addr(static_cast<int>(t))) g = std::gcd(g, addr);
  }
  g = std::gcd(g, c.sbuf_cap);
  g = std::gcd(g, c.psum_cap);
  return std::max<int64_t>(1, g);
}

void Sanitizer::begin(int core, const engines::Memory &memory) {
  CoreState &c = *core_.at(static_cast<size_t>(core));
  c.mem = &memory;
  // An output tensor that holds data when the run starts was given it (an in-place argument).
  for (size_t t = 0; t < c.prog->tensors.size(); ++t)
    if (c.prog->tensors[t].is_dram() && c.prog->tensors[t].is_output() && memory.dram_loaded(static_cast<int>(t)))
      c.loaded[t] = true;
  for (size_t t = 0; t < c.prog->tensors.size(); ++t)
    if (c.loaded[t]) mark_tensor(c, static_cast<int>(t));
}

Sanitizer::Shadow *Sanitizer::dram_shadow(const CoreState &c, int tensor, bool create) {
  const isa::Tensor &t = c.prog->tensors[static_cast<size_t>(tensor)];
  // Inputs and constants hold data from the start and are never a finding's subject; nor can they race unless
  // written (then they are tracked like any other tensor).
  const auto key = std::make_pair(c.rank, tensor);
  auto it = dram_.find(key);
  if (it != dram_.end()) return it->second.get();
  if (!create) return nullptr;
  auto s = std::make_unique<Shadow>();
  s->granule = c.granule[static_cast<size_t>(tensor)];
  const int64_t bytes = t.num_elements() * isa::dtype_size(t.dtype);
  const size_t n = static_cast<size_t>(bytes / s->granule);
  s->written = ZeroArray<uint8_t>(n);
  if (t.is_input()) std::memset(s->written.data(), 1, n);
  s->race = c.race_dram;
  Shadow *raw = s.get();
  dram_.emplace(key, std::move(s));
  return raw;
}

Sanitizer::Span Sanitizer::span_of(CoreState &c, const engines::Access &a, int64_t e, int64_t n) {
  Span s;
  const isa::Tensor &t = c.prog->tensors[static_cast<size_t>(a.tensor)];
  const int64_t esz = isa::dtype_size(a.dtype);
  if (t.is_dram()) {
    s.sh = dram_shadow(c, a.tensor, true);
    s.g0 = e * esz / s.sh->granule;
    s.g1 = (e + n) * esz / s.sh->granule;
    return s;
  }
  const bool psum = t.mem == isa::MemoryType::PSUM;
  s.sh = psum ? &c.psum : &c.sbuf;
  const int64_t F = t.bytes_per_partition / esz, cap = psum ? c.psum_cap : c.sbuf_cap;
  s.p = c.mem->placed_partition(a.tensor) + e / F;
  const int64_t byte = s.p * cap + c.mem->placed_addr(a.tensor) + (e % F) * esz;
  s.g0 = byte / s.sh->granule;
  s.g1 = (byte + n * esz) / s.sh->granule;
  return s;
}

int32_t Sanitizer::context(const isa::Inst &inst, const int64_t *loop_values, int64_t shard) {
  if (!inst.nki || inst.nki->loops.empty()) return -1;
  key_scratch_.clear();
  for (const auto &l : inst.nki->loops) {
    key_scratch_.push_back(l.id);
    key_scratch_.push_back(l.trip.eval(loop_values, shard));
  }
  auto it = context_ids_.find(key_scratch_);
  if (it != context_ids_.end()) return it->second;
  const int32_t id = static_cast<int32_t>(contexts_.size());
  std::vector<std::pair<int32_t, int64_t>> ctx;
  for (size_t i = 0; i < key_scratch_.size(); i += 2)
    ctx.emplace_back(static_cast<int32_t>(key_scratch_[i]), key_scratch_[i + 1]);
  contexts_.push_back(std::move(ctx));
  context_ids_.emplace(key_scratch_, id);
  return id;
}

void Sanitizer::on_execute(int core, int q, int64_t pos, const ScheduledInst &si) {
  CoreState &c = *core_[static_cast<size_t>(core)];
  c.queue = q;
  if (c.race_onchip || c.race_dram) tick(c, q, pos, si);
  if (!si.trigger) check(c, q, pos, si);
}

// The accesses of one dynamic instruction, reads first: each checked and recorded.
void Sanitizer::check(CoreState &c, int q, int64_t pos, const ScheduledInst &si) {
  const isa::Inst &inst = *si.d.inst;
  const int core = c.core;
  c.queue = q;
  const InstPlan &ip = c.plans[static_cast<size_t>(inst.index)];
  if (ip.ops.empty()) return;
  uint32_t race_rec = 0;
  if (ip.race) {
    race_rec = static_cast<uint32_t>(race_recs_.size());
    race_recs_.push_back(RaceRec{inst.index, static_cast<uint32_t>(pos), static_cast<uint8_t>(core),
                                 static_cast<uint8_t>(q)});
  }
  int32_t lcd_rec = 0;
  if (ip.lcd && si.nki_ctx >= 0) {
    lcd_rec = static_cast<int32_t>(lcd_recs_.size());
    lcd_recs_.push_back(LcdRec{inst.index, si.nki_ctx, static_cast<uint8_t>(core)});
  }
  for (const OperandPlan &op : ip.ops) {
    const engines::Access &a = op.in ? si.d.ins[static_cast<size_t>(op.arg)] : si.d.outs[static_cast<size_t>(op.arg)];
    if (a.tensor < 0) continue;
    const bool dram = c.prog->tensors[static_cast<size_t>(a.tensor)].is_dram();
    const bool race = race_rec && op.exact && (dram ? c.race_dram : c.race_onchip);
    if (op.write) {
      if (op.whole) {
        mark_tensor(c, a.tensor);
        continue;
      }
      c.mem->element_runs(a, runs_);
      if (race) race_access(c, q, race_rec, op, a);
      if (lcd_rec && op.lcd) lcd_access(c, lcd_rec, inst, op, a);
      mark_written(c, op, a);
    } else {
      // A DRAM input is written from the start (its shadow, when it has one, only ever gains marks): nothing to
      // check, and nothing to track unless it races or carries a dependency.
      const bool input = dram && c.prog->tensors[static_cast<size_t>(a.tensor)].is_input();
      if (input && !race && !(lcd_rec && op.lcd)) continue;
      c.mem->element_runs(a, runs_);
      if (op.check && !input) uninit_read(c, inst, op, a);
      if (race) race_access(c, q, race_rec, op, a);
      if (lcd_rec && op.lcd) lcd_access(c, lcd_rec, inst, op, a);
    }
  }
}

Sanitizer::Pending &Sanitizer::pending(const std::string &key, int core, int tensor) {
  auto it = pending_index_.find(key);
  if (it != pending_index_.end()) return pending_[it->second];
  pending_index_.emplace(key, pending_.size());
  Pending &p = pending_.emplace_back();
  p.core = core;
  p.tensor = tensor;
  init_region(p.region, core_[static_cast<size_t>(core)]->prog->tensors[static_cast<size_t>(tensor)]);
  return p;
}

SanitizerAccess Sanitizer::access_of(int core, int inst, int slot, int q) const {
  const CoreState &c = *core_[static_cast<size_t>(core)];
  const isa::Inst &in = c.prog->insts[static_cast<size_t>(inst)];
  SanitizerAccess a;
  a.instruction = in.name;
  a.opcode = isa::inst_type_name(in.type);
  a.file = in.source_file;
  a.line = in.source_line;
  a.core = core;
  a.queue = q >= 0 ? queue_name(q) : "";
  const size_t s = static_cast<size_t>(slot);
  const isa::Arg *arg = s < in.ins.size()                     ? &in.ins[s]
                        : s - in.ins.size() < in.outs.size() ? &in.outs[s - in.ins.size()]
                                                             : nullptr;
  a.write = s >= in.ins.size();
  if (arg && arg->tensor >= 0) a.tensor = c.prog->tensors[static_cast<size_t>(arg->tensor)].name;
  return a;
}

std::vector<Finding> Sanitizer::findings() {
  if (!ended_) {
    ended_ = true;
    lcd_end();
  }
  // An uninitialized read that a race explains: the same instruction reading the same tensor raced with its write.
  std::vector<std::pair<std::string, std::string>> raced;
  for (const auto &p : pending_)
    if (p.f.kind == "race") {
      raced.emplace_back(p.f.first.instruction, p.f.first.tensor);
      if (p.f.other) raced.emplace_back(p.f.other->instruction, p.f.other->tensor);
    }
  std::vector<Finding> out;
  for (const auto &p : pending_) {
    if (p.f.kind == "uninitialized-read" &&
        std::find(raced.begin(), raced.end(), std::make_pair(p.f.first.instruction, p.f.first.tensor)) != raced.end())
      continue;
    Finding f = p.f;
    f.first.range = region_text(p.region);
    if (f.other) f.other->range = p.other_tensor >= 0 ? region_text(p.other_region) : f.first.range;
    f.message = sanitizer_detail::message_of(f, p);
    out.push_back(std::move(f));
  }
  return out;
}

} // namespace neuronsim::sim
