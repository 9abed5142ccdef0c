// `neuronsim run --sensitivity`: how much each headline parameter of the architecture, made 2x better, would
// speed the kernel up (timing-only reruns).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "neuronsim/sim/kernel.hpp"
#include "neuronsim/sim/run_kernel.hpp"
#include "neuronsim/sim/run_settings.hpp"

namespace neuronsim::sim {

// `--sensitivity`: the first answer to "what should I change". Each headline parameter of the run's
// architecture (DMA rate, DMA fixed latency, DMA per-row cost, HBM rate, each engine clock) scaled 2x in its
// favour, the kernel rerun timing-only with that one setting (`--set`), and the speed-up it gives over `base`'s
// total, sorted fastest first (ties in the table's order), then the parameters `base` does not use (an engine
// that ran no instruction, DMA without transfers, the DMA write rate without a transfer into DRAM, HBM without
// DRAM traffic): those are not rerun and say so ("not used by this run", never 1.000x). A multi-core run's HBM
// rate is the device's (hbm_device_bytes_per_ns). `s` is the completed run's settings (its arch named as run;
// timing-only reruns take no inputs or expectations). `progress` is called before each row with its index and
// the count.
struct Sensitivity {
  std::string parameter; // "DMA latency /2"
  std::string arch;      // the rerun's architecture, "trn2+{dma_latency_ns=425}"
  double total_ns = 0.0;
  double speedup = 0.0; // base total / total_ns
  bool used = true;     // false: the run does not use the parameter (not rerun; arch, total_ns, speedup empty)
};
std::vector<Sensitivity> sensitivity(const Kernel &k, const RunSettings &s, const Run &base,
                                     const std::function<void(size_t, size_t)> &progress = {});
// The headline parameters, as (label, key, factor): `sensitivity` scales each key by its factor.
struct HeadlineParameter {
  const char *label, *key;
  double factor;
};
const std::vector<HeadlineParameter> &headline_parameters();
// The key a run scales for `h`: its own, except HBM in a multi-core run (hbm_device_bytes_per_ns).
const char *headline_key(const HeadlineParameter &h, bool multi_core);

} // namespace neuronsim::sim
