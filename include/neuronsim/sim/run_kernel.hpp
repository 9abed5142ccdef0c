// One run of a kernel with completed settings (run_settings.hpp): its inputs loaded, the simulator or the
// device run, what it wrote checked (outputs no instruction wrote, outputs against the expected ones).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/kernel.hpp"
#include "neuronsim/sim/run_settings.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

// An output tensor of one rank with elements no instruction wrote in a numeric run (engines::Memory's written
// shadow of output tensors): they hold the 0xFF fill. A warning, or an error with RunSettings::strict.
struct UnwrittenOutput {
  int rank = 0;
  std::string tensor;
  int64_t unwritten = 0, elements = 0;
};

// One run: the simulator (its memory holds the outputs) and its result.
struct Run {
  std::unique_ptr<Device> device;   // several cores (RunSettings::cores > 1); simulator is then its core 0
  DeviceResult device_result;       // per core, and the device's totals
  std::unique_ptr<Simulator> simulator;
  RunResult result;                 // core 0's
  // The memory holding rank r's DRAM tensors (its outputs): the simulator's for one rank.
  engines::Memory &rank_memory(int r) { return device ? device->rank_memory(r) : simulator->memory(); }
  int ranks() const { return device ? device->ranks() : 1; }
  std::vector<std::string> input_lines; // one per input: where its data came from (not for timing-only runs)
  std::vector<std::string> saved_inputs; // the files RunSettings::save_inputs wrote
  std::vector<UnwrittenOutput> unwritten; // a numeric run's outputs with elements no instruction wrote
};
// Loads the inputs (not for a timing-only run) and runs the kernel with completed settings. The kernel must
// outlive the Run (the simulator refers to its program).
Run run_kernel(const Kernel &k, const RunSettings &s);

// Compares the run's outputs with s.expect (compare_outputs); empty when nothing is expected or all agree.
// `checked` receives the names of the tensors compared. With several ranks, each rank's outputs against its
// rank_expect, a mismatch's tensor named "rank<r>/<tensor>".
std::vector<Mismatch> check_outputs(const Kernel &k, Run &run, const RunSettings &s,
                                    std::vector<std::string> *checked = nullptr);

} // namespace neuronsim::sim
