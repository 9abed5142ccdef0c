// The headline parameters and the reruns of --sensitivity (sensitivity.hpp).
#include "neuronsim/sim/sensitivity.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/sim/run_kernel.hpp"

namespace neuronsim::sim {

const std::vector<HeadlineParameter> &headline_parameters() {
  // The parameters a performance engineer can ask a hardware or compiler change for, each made 2x better: a
  // rate or clock doubled, a latency or overhead halved (arch_params.def names and units).
  static const std::vector<HeadlineParameter> kTable = {
      {"DMA rate x2", "dma_engine_bytes_per_ns", 2.0},
      {"DMA write rate x2", "dma_engine_write_bytes_per_ns", 2.0},
      {"DMA latency /2", "dma_latency_ns", 0.5},
      {"DMA descriptor cost /2", "dma_engine_descriptor_ns", 0.5},
      {"DMA transfer overhead /2", "dma_transfer_overhead_ns", 0.5},
      {"HBM rate x2", "hbm_bytes_per_ns", 2.0},  // a multi-core run's: hbm_device_bytes_per_ns (headline_key)
      {"PE clock x2", "pe_ghz", 2.0},
      {"ACT clock x2", "act_ghz", 2.0},
      {"POOL clock x2", "pool_ghz", 2.0},
      {"DVE clock x2", "dve_ghz", 2.0},
      {"SP clock x2", "sp_ghz", 2.0},
  };
  return kTable;
}

const char *headline_key(const HeadlineParameter &h, bool multi_core) {
  // A multi-core run's cores share the device's HBM (docs/timing-model.md 2.3): hbm_bytes_per_ns, the core's share
  // in a one-core run, is not read there.
  if (multi_core && std::string(h.key) == "hbm_bytes_per_ns") return "hbm_device_bytes_per_ns";
  return h.key;
}

namespace {

// What a run used, so that a parameter it never reads is reported as such (never as a 1.000x speed-up): the engines
// that executed instructions (DMA triggers included) and the DMA queues that moved transfers, over every core; from
// the program, whether a transfer writes DRAM from on chip (the DMA write rate) and whether any instruction touches
// DRAM (HBM).
struct Usage {
  std::array<bool, kNumEngines> engine{};
  bool dma = false, dma_write = false, hbm = false;
};

Usage usage_of(const Kernel &k, const Run &base) {
  Usage u;
  auto add = [&](const RunResult &r) {
    for (int q = 0; q < kMaxQueues; ++q)
      if (r.queues[static_cast<size_t>(q)].instructions > 0) {
        if (q < kNumEngines) u.engine[static_cast<size_t>(q)] = true;
        else u.dma = true;
      }
  };
  if (base.device)
    for (const auto &c : base.device_result.cores) add(c);
  else
    add(base.result);
  auto scan = [&](const isa::Program &p) {
    auto first = [&](const std::vector<isa::Arg> &v) -> const isa::Tensor * {
      for (const auto &a : v)
        if (a.tensor >= 0) return &p.tensors[static_cast<size_t>(a.tensor)];
      return nullptr;
    };
    for (const auto &inst : p.insts) {
      const isa::Tensor *src = first(inst.ins), *dst = first(inst.outs);
      u.hbm |= (src && src->is_dram()) || (dst && dst->is_dram());
      u.dma_write |= dst && dst->is_dram() && src && !src->is_dram();
    }
  };
  scan(k.program);
  for (const auto &p : k.core_programs) scan(p);
  u.hbm &= u.dma;
  u.dma_write &= u.dma;
  return u;
}

bool uses(const Usage &u, const std::string &key) {
  static const char *kClocks[kNumEngines] = {"pe_ghz", "act_ghz", "pool_ghz", "dve_ghz", "sp_ghz"};
  for (int e = 0; e < kNumEngines; ++e)
    if (key == kClocks[e]) return u.engine[static_cast<size_t>(e)];
  if (key == "dma_engine_write_bytes_per_ns") return u.dma_write;
  if (key == "hbm_bytes_per_ns" || key == "hbm_device_bytes_per_ns") return u.hbm;
  return u.dma;  // the DMA rate, latency and per-row costs
}

} // namespace

std::vector<Sensitivity> sensitivity(const Kernel &k, const RunSettings &s, const Run &base,
                                     const std::function<void(size_t, size_t)> &progress) {
  const double base_ns = base.device ? base.device_result.total_ns : base.result.total_ns;
  const engines::ArchParams arch = engines::load_arch(s.options.arch);
  const Usage usage = usage_of(k, base);
  const bool multi_core = static_cast<bool>(base.device);
  const auto &table = headline_parameters();
  std::vector<Sensitivity> out;
  for (size_t i = 0; i < table.size(); ++i) {
    const HeadlineParameter &h = table[i];
    const std::string key = headline_key(h, multi_core);
    if (progress)
      progress(i, table.size());
    if (!uses(usage, key)) {
      out.push_back({h.label, "", 0.0, 0.0, false});
      continue;
    }
    char value[64];
    std::snprintf(value, sizeof value, "%.15g", engines::arch_param_value(arch, key) * h.factor);
    RunSettings r;
    r.options = s.options;
    r.options.timing_only = true;
    r.options.schedule = ScheduleMode::Auto;
    r.options.device_print = nullptr;
    r.options.progress = nullptr;
    r.options.on_event = nullptr;
    r.options.after_instruction = nullptr;
    r.options.record_dma_engine_slices = false;
    r.cores = s.cores, r.lnc = s.lnc;
    // The setting replaces the run's own value of that key, if it set one.
    engines::ArchSpec spec = engines::split_arch_spec(s.options.arch);
    spec.sets.erase(
        std::remove_if(spec.sets.begin(), spec.sets.end(), [&](const auto &kv) { return kv.first == key; }),
        spec.sets.end());
    spec.sets.emplace_back(key, engines::arch_setting_value(s.options.arch, key, value));
    r.options.arch = engines::arch_spec_text(spec);
    Run run = run_kernel(k, r);
    const double t = run.device ? run.device_result.total_ns : run.result.total_ns;
    out.push_back({h.label, r.options.arch, t, t > 0 ? base_ns / t : 0.0, true});
  }
  // Fastest first; the parameters the run does not use last, in the table's order.
  std::stable_sort(out.begin(), out.end(), [](const Sensitivity &a, const Sensitivity &b) {
    return a.used != b.used ? a.used : a.speedup > b.speedup;
  });
  return out;
}

} // namespace neuronsim::sim
