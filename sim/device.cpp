// Several NeuronCores in one SystemC simulation, and the rendezvous registry of their collectives
// (include/neuronsim/sim/device.hpp).
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <systemc>

#include "neuronsim/engines/collective.hpp"
#include "neuronsim/sim/io.hpp"
#include "sim/core_job.hpp"
#include "sim/sanitizer.hpp"

namespace neuronsim::sim {

namespace {

std::string list(const std::vector<int> &v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

} // namespace

Device::Device(const isa::Program &program, const RunOptions &options, int cores, int lnc)
    : Device(std::vector<const isa::Program *>(static_cast<size_t>(std::max(cores, 1)), &program), options, lnc) {
  if (cores < 1) throw InputError({program.file, -1, "", "cores"}, "a run has at least 1 core, got " + std::to_string(cores));
}

std::string multicore_control_flow_refusal(const isa::Program &program, int lnc, ErrorContext *where) {
  *where = ErrorContext{program.file, -1, "", ""};
  const std::string head = "a kernel with data-dependent control flow runs on several cores only when each core's "
                           "path depends on its own data alone: ";
  if (lnc > 1)
    return head + "with LNC=" + std::to_string(lnc) + " the shards of a logical core share its DRAM, so one shard's "
                  "writes can change the other's branches (run it with --lnc 1, or on one core)";
  for (const auto &inst : program.insts) {
    const auto t = inst.type;
    if (t == isa::InstructionType::CollectiveCompute || t == isa::InstructionType::CollectiveSend ||
        t == isa::InstructionType::CollectiveRecv || t == isa::InstructionType::CoreBarrier) {
      *where = ErrorContext{program.file, inst.index, inst.name, "opcode"};
      return head + isa::inst_type_name(t) + " brings other cores' data (or timing) in, and a core's path is "
                    "learnt by executing it alone before the run (run it on one core)";
    }
  }
  return "";
}

Device::Device(const std::vector<const isa::Program *> &programs, const RunOptions &options, int lnc)
    : program_(*programs.at(0)), lnc_(lnc) {
  const isa::Program &program = program_;
  const int cores = static_cast<int>(programs.size());
  const engines::ArchParams arch = engines::load_arch(options.arch);
  if (cores < 1 || cores > kMaxCores)
    throw InputError({program.file, -1, "", "cores"},
                     "a run has 1 to " + std::to_string(kMaxCores) + " cores, got " + std::to_string(cores));
  if (lnc < 1 || lnc > arch.lnc_max)
    throw InputError({program.file, -1, "", "lnc"},
                     "arch " + arch.name + " has logical cores of at most " + std::to_string(arch.lnc_max) +
                         " physical core" + (arch.lnc_max == 1 ? "" : "s") + " (lnc_max), got LNC=" +
                         std::to_string(lnc));
  if (cores % lnc != 0)
    throw InputError({program.file, -1, "", "cores"},
                     std::to_string(cores) + " cores do not make logical cores of " + std::to_string(lnc));
  // One sanitizer for every core: one list of findings, and the clocks of cores that meet.
  std::shared_ptr<Sanitizer> sanitizer = options.sanitize ? std::make_shared<Sanitizer>(cores, lnc) : nullptr;
  for (int i = 0; i < cores; ++i) {
    RunOptions o = options;
    o.shard = i % lnc;
    o.rank = i / lnc;
    o.core = i;
    o.sanitizer = sanitizer;
    o.schedule = ScheduleMode::Whole;  // the streamed schedule is single-core (issue 18); a core's schedule is small
    if (i > 0) {  // the run's hooks follow core 0 (progress, cancel, trace events)
      o.progress = nullptr;
      o.on_event = nullptr;
      o.on_dma_slices = nullptr;
      o.after_instruction = nullptr;
    }
    const isa::Program &pi = *programs[static_cast<size_t>(i)];
    bool same = pi.tensors.size() == program.tensors.size();
    for (size_t t = 0; same && t < pi.tensors.size(); ++t)
      same = pi.tensors[t].name == program.tensors[t].name && pi.tensors[t].shape == program.tensors[t].shape &&
             pi.tensors[t].dtype == program.tensors[t].dtype && pi.tensors[t].mem == program.tensors[t].mem;
    if (!same)
      throw InputError({pi.file, -1, "", "tensors"}, "core " + std::to_string(i) +
                                                         "'s program declares other tensors than core 0's (one DRAM)");
    // The schedule depends on the program, the arch, the run's options and the shard id (ShardIDKind in
    // addresses and loop bounds), not on the rank or anything else of the core: cores of the same program and
    // shard share the first one's (built once: 8 cores of LNC=1 build one schedule, not 8).
    // GetCurProcessingRankID with a replica group under LNC > 1: the collectives read a group's entries as cores
    // (birsim's single-process regime walks cores 0..n-1, reference neuronx-cc/bir/sim-bn-rng-collective-dma.md
    // 4.1) while the register returns a rank (NKI collective_permute_implicit_current_processing_rank_id); which
    // numbering the runtime's table uses for a logical core of several is not documented, so refuse it.
    if (lnc > 1)
      for (const auto &inst : pi.insts)
        if (inst.type == isa::InstructionType::GetCurProcessingRankID && !inst.f.replica_groups.empty())
          throw InputError({pi.file, inst.index, inst.name, "replica_groups"},
                           "GetCurProcessingRankID with a replica group runs with --lnc 1 only: with LNC=" +
                               std::to_string(lnc) + " the collectives read the group as cores and this register "
                               "as ranks, and the runtime's numbering for a logical core is not documented");
    const Simulator *share = nullptr;
    for (int j = 0; j < i && !share; ++j)
      if (programs[static_cast<size_t>(j)] == &pi && j % lnc == i % lnc) share = sims_[static_cast<size_t>(j)].get();
    sims_.push_back(std::unique_ptr<Simulator>(new Simulator(pi, o, share)));
    // Data-dependent control flow: each core learns its path by executing its program alone before the timed
    // run (Simulator::begin_run, its own schedule, never shared). That is exact only when nothing another core
    // does reaches it: no collective, send/recv or barrier, and a DRAM of its own (LNC=1).
    if (sims_.back()->schedule_deferred_) {
      ErrorContext where;
      const std::string why = multicore_control_flow_refusal(pi, lnc, &where);
      if (!why.empty()) throw InputError(where, why);
    }
    // DRAM per rank: the physical cores of one logical core share its DRAM (shard s > 0 reads and writes its
    // shard 0's tensors); each rank has its own copy of the kernel's tensors (docs/multicore.md).
    if (i == 0) primary_ = sims_.back().get();
    if (i % lnc != 0) sims_.back()->memory().share_dram(&core(i - i % lnc).memory());
  }
  wake_.resize(static_cast<size_t>(cores));
  ordinal_.resize(static_cast<size_t>(cores));
  device_cores_ = std::max(1, arch.device_cores);
  hbm_.resize(static_cast<size_t>((cores + device_cores_ - 1) / device_cores_));
}

Device::~Device() = default;

void Device::set_after_instruction(int c, std::function<void(const ScheduledInst &, const engines::Memory &)> f) {
  core(c).options_.after_instruction = std::move(f);
}

// The cores a collective on `core` meets: its replica group (or the cores a CoreBarrier lists, or the Send/Recv
// pair); empty when the core is in none of the groups.
std::vector<int> Device::group_of(int core, const ScheduledInst &si) const {
  const isa::Inst &inst = *si.d.inst;
  std::vector<int> all(static_cast<size_t>(cores()));
  for (int i = 0; i < cores(); ++i) all[static_cast<size_t>(i)] = i;
  auto check = [&](int64_t c, const char *field) {
    if (c < 0 || c >= cores())
      throw SemanticError({program_.file, inst.index, inst.name, field},
                          "names core " + std::to_string(c) + ", the run has " + std::to_string(cores()) +
                              " (--cores)");
    return static_cast<int>(c);
  };
  if (inst.type == isa::InstructionType::CollectiveSend || inst.type == isa::InstructionType::CollectiveRecv) {
    const int peer = check(inst.f.peer_id, "peer_id");
    if (peer == core) return {core};
    const bool send = inst.type == isa::InstructionType::CollectiveSend;
    return send ? std::vector<int>{core, peer} : std::vector<int>{peer, core};  // sender first
  }
  if (inst.type == isa::InstructionType::CoreBarrier) {
    if (inst.f.cores.empty()) return all;
    std::vector<int> g;
    for (int64_t c : inst.f.cores) g.push_back(check(c, "cores"));
    std::sort(g.begin(), g.end());
    g.erase(std::unique(g.begin(), g.end()), g.end());
    if (std::find(g.begin(), g.end(), core) == g.end()) return {};
    return g;
  }
  if (inst.f.replica_groups.empty()) return all;
  for (const auto &grp : inst.f.replica_groups) {
    std::vector<int> g;
    for (int64_t c : grp) g.push_back(check(c, "replica_groups"));
    if (std::find(g.begin(), g.end(), core) != g.end()) return g;
  }
  return {};
}

Rendezvous *Device::arrive(int core, const ScheduledInst &si, int64_t ps) {
  const isa::Inst &inst = *si.d.inst;
  std::vector<int> g;
  try {
    g = group_of(core, si);
  } catch (const Error &) {
    auto rv = std::make_unique<Rendezvous>();
    rv->error = std::current_exception();
    rv->done = true;
    Rendezvous *p = rv.get();
    open_["error " + std::to_string(core) + " " + std::to_string(si.d.seq)] = std::move(rv);
    return p;
  }
  if (g.empty()) return nullptr;
  if (g.size() == 1) {  // a group of this core alone (a loopback Send/Recv): nothing to wait for
    auto rv = std::make_unique<Rendezvous>();
    rv->what = isa::inst_type_name(inst.type);
    rv->members = g;
    rv->arrived = {&si};
    rv->arrive_ps = {ps};
    rv->count = 1;
    Rendezvous *p = rv.get();
    open_["self " + std::to_string(core) + " " + std::to_string(si.d.seq)] = std::move(rv);
    complete(*p);
    return p;
  }
  std::string what = isa::inst_type_name(inst.type);
  if (inst.type == isa::InstructionType::CollectiveCompute) what += " " + inst.f.collective_kind;
  // The k-th collective of this kind with this group on each member lines up (a Send with its k-th Recv).
  const std::string group_key = (inst.type == isa::InstructionType::CollectiveCompute ? std::string("cc") :
                                 inst.type == isa::InstructionType::CoreBarrier ? std::string("barrier") :
                                 std::string("p2p")) + " [" + list(g) + "]";
  const int64_t k = ordinal_[static_cast<size_t>(core)][group_key]++;
  const std::string key = group_key + " #" + std::to_string(k);
  std::unique_ptr<Rendezvous> &slot = open_[key];
  if (!slot) {
    slot = std::make_unique<Rendezvous>();
    slot->what = what;
    slot->members = g;
    slot->arrived.assign(g.size(), nullptr);
    slot->arrive_ps.assign(g.size(), 0);
  }
  Rendezvous &rv = *slot;
  const size_t at = static_cast<size_t>(std::find(g.begin(), g.end(), core) - g.begin());
  rv.arrived[at] = &si;
  rv.arrive_ps[at] = ps;
  if (++rv.count == static_cast<int>(g.size())) complete(rv);
  return &rv;
}

void Device::complete(Rendezvous &rv) {
  const ScheduledInst &first = *rv.arrived[0];
  const isa::Inst &inst = *first.d.inst;
  const int64_t n = static_cast<int64_t>(rv.members.size());
  const int64_t last = *std::max_element(rv.arrive_ps.begin(), rv.arrive_ps.end());
  std::vector<engines::CollectiveRank> ranks;
  for (size_t i = 0; i < rv.members.size(); ++i) {
    Simulator &s = core(rv.members[i]);
    ranks.push_back({&rv.arrived[i]->d, &s.memory(), rv.members[i]});
  }
  engines::LinkPattern pattern = engines::LinkPattern::Barrier;
  int64_t bytes = 0;
  auto bytes_of = [](const engines::Access &a) {
    return a.partitions() * a.free_elements() * static_cast<int64_t>(isa::dtype_size(a.dtype));
  };
  if (inst.type == isa::InstructionType::CollectiveCompute) {
    pattern = engines::link_pattern(inst.f.collective_kind);
    // The ring's buffer: the AllReduce / ReduceScatter input, the AllGather output, the routed input otherwise.
    if (pattern == engines::LinkPattern::AllGather) {
      if (!first.d.outs.empty()) bytes = bytes_of(first.d.outs[0]);
    } else if (!first.d.ins.empty()) {
      bytes = bytes_of(first.d.ins[0]);
    }
    // SendRecvCCE: the receiver takes one buffer from each rank it lists (engines::link_pattern).
    if (inst.f.collective_kind == "SendRecvCCE" && inst.recv_from_rank.size() > 1)
      bytes *= static_cast<int64_t>(inst.recv_from_rank.size());
  } else if (inst.type != isa::InstructionType::CoreBarrier) {
    pattern = engines::LinkPattern::PointToPoint;
    if (!first.d.ins.empty() && first.d.ins[0].tensor >= 0) bytes = bytes_of(first.d.ins[0]);
  }
  for (size_t i = 1; i < rv.arrived.size(); ++i) {
    const isa::Inst &o = *rv.arrived[i]->d.inst;
    const bool cc = inst.type == isa::InstructionType::CollectiveCompute;
    const bool p2p = !cc && inst.type != isa::InstructionType::CoreBarrier;
    if ((cc || inst.type == isa::InstructionType::CoreBarrier) && (o.type != inst.type || (cc && o.f.collective_kind != inst.f.collective_kind)))
      rv.error = std::make_exception_ptr(SemanticError(
          {program_.file, o.index, o.name, "kind"},
          "core " + std::to_string(rv.members[i]) + "'s collective does not match core " +
              std::to_string(rv.members[0]) + "'s " + rv.what + " ('" + inst.name + "') it meets"));
    if (p2p && (inst.type != isa::InstructionType::CollectiveSend || o.type != isa::InstructionType::CollectiveRecv))
      rv.error = std::make_exception_ptr(SemanticError(
          {program_.file, o.index, o.name, "peer_id"},
          "core " + std::to_string(rv.members[0]) + " and core " + std::to_string(rv.members[i]) +
              " both " + (o.type == isa::InstructionType::CollectiveSend ? "send to" : "receive from") +
              " each other: a CollectiveSend pairs with a CollectiveRecv"));
  }
  const engines::ArchParams &arch = core(rv.members[0]).arch();
  bool inter = false;
  for (int m : rv.members) inter = inter || m / arch.device_cores != rv.members[0] / arch.device_cores;
  rv.link_ns = engines::collective_link_ns(arch, pattern, n, bytes, inter);
  rv.finish_ps = last + static_cast<int64_t>(rv.link_ns * 1000.0 + 0.5);
  // Its ring traffic on the HBM of each device it spans: each member sends steps x step_bytes at most at the link
  // bandwidth, so a device with m members carries m x steps x step_bytes at most at m x the link bandwidth.
  const engines::LinkSteps ls = engines::collective_link_steps(pattern, n, bytes);
  rv.last_ps = last;
  rv.latency_ns = ls.steps * (inter ? arch.link_inter_latency_ns : arch.link_intra_latency_ns);
  if (!rv.error && ls.steps * ls.step_bytes > 0) {
    const double bw = inter ? arch.link_inter_bytes_per_ns : arch.link_intra_bytes_per_ns;
    std::map<int, int> per_device;
    for (int m : rv.members) ++per_device[m / device_cores_];
    for (const auto &kv : per_device)
      rv.hbm.emplace_back(kv.first, hbm_[static_cast<size_t>(kv.first)].add(
                                        static_cast<double>(last) / 1000.0, static_cast<double>(last) / 1000.0,
                                        kv.second * ls.steps * ls.step_bytes, kv.second * bw));
  }
  if (!rv.error && !core(rv.members[0]).options_.timing_only) {
    try {
      if (inst.type == isa::InstructionType::CollectiveCompute) engines::execute_collective_compute(ranks);
      else if (inst.type != isa::InstructionType::CoreBarrier && n == 2) engines::execute_send_recv(ranks[0], ranks[1]);
      else if (inst.type == isa::InstructionType::CollectiveRecv && !first.d.ins.empty() && first.d.ins[0].tensor >= 0)
        engines::execute_send_recv(ranks[0], ranks[0]);  // loopback: its own input
    } catch (const Error &) {
      rv.error = std::current_exception();
    }
  }
  rv.done = true;
  ++completed_;
  link_ns_ += rv.link_ns;
  for (int m : rv.members)
    if (wake_[static_cast<size_t>(m)]) wake_[static_cast<size_t>(m)]();
}

int64_t Device::finish_ps(const Rendezvous &rv) {
  // Uncontended, each device's stream takes steps x step_bytes / bandwidth: the closed form, as computed above.
  double slowest = -1;
  for (const auto &h : rv.hbm) {
    engines::HbmShare &share = hbm_[static_cast<size_t>(h.first)];
    if (share.uncontended(h.second)) continue;
    slowest = std::max(slowest, share.finish_ns(h.second) - static_cast<double>(rv.last_ps) / 1000.0);
  }
  if (slowest < 0) return rv.finish_ps;
  return std::max(rv.finish_ps, rv.last_ps + static_cast<int64_t>((rv.latency_ns + slowest) * 1000.0 + 0.5));
}

int Device::hbm_add(int core, int64_t now_ps, int64_t start_ps, double bytes, double cap) {
  return hbm_[static_cast<size_t>(core / device_cores_)].add(static_cast<double>(now_ps) / 1000.0,
                                                               static_cast<double>(start_ps) / 1000.0, bytes, cap);
}

int64_t Device::hbm_finish_ps(int core, int handle) {
  const double ns = hbm_[static_cast<size_t>(core / device_cores_)].finish_ns(handle);
  return static_cast<int64_t>(std::ceil(ns * 1000.0 - 1e-6));
}

void Device::hbm_release(int core, int handle) { hbm_[static_cast<size_t>(core / device_cores_)].release(handle); }

DeviceResult Device::run() {
  open_.clear();
  const double hbm_rate = core(0).arch().hbm_device_bytes_per_ns;
  for (auto &h : hbm_) h.reset(hbm_rate);
  for (auto &o : ordinal_) o.clear();
  completed_ = 0;
  link_ns_ = 0;
  for (int i = 0; i < cores(); ++i) core(i).begin_run(this, i);
  core_detail::start_simulation();
  DeviceResult r;
  std::exception_ptr first_error;
  std::string blocked;
  for (int i = 0; i < cores(); ++i) {
    std::exception_ptr e;
    std::string b;
    r.cores.push_back(core(i).end_run(&e, &b));
    if (e && !first_error) first_error = e;
    if (!b.empty()) blocked += (blocked.empty() ? "" : "; ") + ("core " + std::to_string(i) + ": " + b);
  }
  if (first_error) {
    core_detail::clear_stack_shadow();
    std::rethrow_exception(first_error);
  }
  if (!blocked.empty()) {
    for (const auto &kv : open_) {
      const Rendezvous &rv = *kv.second;
      if (rv.done) continue;
      std::vector<int> missing;
      for (size_t i = 0; i < rv.members.size(); ++i)
        if (!rv.arrived[i]) missing.push_back(rv.members[i]);
      blocked += "; " + rv.what + " of cores [" + list(rv.members) + "] waits for core" +
                 (missing.size() == 1 ? " " : "s ") + list(missing);
    }
    core_detail::clear_stack_shadow();
    throw SimulationError({program_.file, -1, "", ""}, "deadlock across cores: " + blocked);
  }
  for (const auto &c : r.cores) {
    r.total_ns = std::max(r.total_ns, c.total_ns);
    r.dynamic_instructions += c.dynamic_instructions;
  }
  if (const std::shared_ptr<Sanitizer> &s = core(0).options_.sanitizer) {
    for (auto &c : r.cores) c.sanitized = true;
    r.cores[0].findings = s->findings();  // every core's, in one list
  }
  r.collectives = completed_;
  r.link_busy_ns = link_ns_;
  r.devices = static_cast<int>(hbm_.size());
  r.hbm_device_bytes_per_ns = hbm_rate;
  for (const auto &h : hbm_) r.hbm_bytes += h.bytes();
  for (const auto &c : r.cores) {
    for (const auto &e : c.dma_engines) r.dma_busy_ns += e.busy_ns;
    r.dma_engines += static_cast<int>(c.dma_engines.size());
  }
  return r;
}

// Bytes through the devices' HBM over what they could move in the run's time; the DMA engines' busy time over
// their number times the run's time.
double device_hbm_utilization(const DeviceResult &r) {
  const double can = r.devices * r.hbm_device_bytes_per_ns * r.total_ns;
  return can > 0 ? r.hbm_bytes / can : 0.0;
}
double device_dma_utilization(const DeviceResult &r) {
  const double can = r.dma_engines * r.total_ns;
  return can > 0 ? r.dma_busy_ns / can : 0.0;
}

void print_device_summary(std::ostream &out, Device &device, const DeviceResult &r) {
  // Each core's table comes before (sim::summary_text, labelled "core i (shard s, rank r):"); here the
  // device's.
  std::ostringstream o;
  o << std::fixed << std::setprecision(1);
  o << "device: " << device.cores() << " cores (LNC=" << device.lnc() << "), " << human_time(r.total_ns)
    << " (" << r.total_ns << " ns), " << r.dynamic_instructions << " dynamic instructions, " << r.collectives
    << " collectives, link model " << human_time(r.link_busy_ns) << "\n";
  for (int i = 0; i < device.cores(); ++i) {
    const RunResult &c = r.cores[static_cast<size_t>(i)];
    o << "  core " << i << " (shard " << i % device.lnc() << ", rank " << i / device.lnc()
      << "): " << human_time(c.total_ns) << ", " << c.dynamic_instructions << " dynamic instructions\n";
  }
  o << std::setprecision(2) << "device HBM: " << static_cast<int64_t>(r.hbm_bytes) << " bytes over "
    << r.devices << " device" << (r.devices == 1 ? "" : "s") << " of " << r.hbm_device_bytes_per_ns
    << " B/ns, " << 100.0 * device_hbm_utilization(r) << "% utilization; DMA engines "
    << 100.0 * device_dma_utilization(r) << "% busy\n";
  out << o.str();
}

nlohmann::json device_stats_json(Device &device, const DeviceResult &r,
                                 const std::vector<std::string> &command_line, bool with_profile) {
  // Each core's own program: the cores of a multi-core bundle folder run programs of their own (core<i>/).
  nlohmann::json doc =
      stats_json(r.cores[0], device.core(0).schedule(), device.core(0).program(), command_line, with_profile);
  nlohmann::json cores = nlohmann::json::array();
  for (int i = 0; i < device.cores(); ++i) {
    nlohmann::json c = stats_json(r.cores[static_cast<size_t>(i)], device.core(i).schedule(),
                                  device.core(i).program(), command_line, with_profile);
    c.erase("command_line");
    c["core"] = i;
    c["shard"] = i % device.lnc();
    c["rank"] = i / device.lnc();
    cores.push_back(std::move(c));
  }
  doc["cores"] = std::move(cores);
  doc["device"] = {{"cores", device.cores()},
                   {"lnc", device.lnc()},
                   {"total_ns", r.total_ns},
                   {"dynamic_instructions", r.dynamic_instructions},
                   {"collectives", r.collectives},
                   {"link_busy_ns", r.link_busy_ns},
                   {"devices", r.devices},
                   {"hbm_device_bytes_per_ns", r.hbm_device_bytes_per_ns},
                   {"hbm_bytes", r.hbm_bytes},
                   {"hbm_utilization", device_hbm_utilization(r)},
                   {"dma_engines", r.dma_engines},
                   {"dma_busy_ns", r.dma_busy_ns},
                   {"dma_utilization", device_dma_utilization(r)}};
  return doc;
}

} // namespace neuronsim::sim
