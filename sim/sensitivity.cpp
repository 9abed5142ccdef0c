// The headline parameters and the reruns of --sensitivity (sensitivity.hpp).
#include "neuronsim/sim/sensitivity.hpp"

#include <algorithm>
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
      {"DMA descriptor cost /2", "dma_queue_descriptor_ns", 0.5},
      {"DMA transfer overhead /2", "dma_transfer_overhead_ns", 0.5},
      {"HBM rate x2", "hbm_bytes_per_ns", 2.0},
      {"PE clock x2", "pe_ghz", 2.0},
      {"ACT clock x2", "act_ghz", 2.0},
      {"POOL clock x2", "pool_ghz", 2.0},
      {"DVE clock x2", "dve_ghz", 2.0},
      {"SP clock x2", "sp_ghz", 2.0},
  };
  return kTable;
}

std::vector<Sensitivity> sensitivity(const Kernel &k, const RunSettings &s, double base_ns,
                                     const std::function<void(size_t, size_t)> &progress) {
  const engines::ArchParams base = engines::load_arch(s.options.arch);
  const auto &table = headline_parameters();
  std::vector<Sensitivity> out;
  for (size_t i = 0; i < table.size(); ++i) {
    const HeadlineParameter &h = table[i];
    if (progress)
      progress(i, table.size());
    char value[64];
    std::snprintf(value, sizeof value, "%.15g", engines::arch_param_value(base, h.key) * h.factor);
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
        std::remove_if(spec.sets.begin(), spec.sets.end(), [&](const auto &kv) { return kv.first == h.key; }),
        spec.sets.end());
    spec.sets.emplace_back(h.key, engines::arch_setting_value(s.options.arch, h.key, value));
    r.options.arch = engines::arch_spec_text(spec);
    Run run = run_kernel(k, r);
    const double t = run.device ? run.device_result.total_ns : run.result.total_ns;
    out.push_back({h.label, r.options.arch, t, t > 0 ? base_ns / t : 0.0});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Sensitivity &a, const Sensitivity &b) { return a.speedup > b.speedup; });
  return out;
}

} // namespace neuronsim::sim
