// What an instruction may ask of the process running the simulation, outside the simulated NeuronCore: the
// external kernel program that CustomOp / BIRKernel run (birsim shells out to `kernel_sim`, reference
// neuronx-cc/bir/sim-control-sync-customop.md 6.1) and the sink DevicePrint writes its lines to. The simulator
// (sim/core_run.cpp) fills one from its RunOptions and hands it to the engines through Memory::set_host; the engine
// semantics (engines/ops/kernel.cpp) read it from there. Nothing here is mutable global state.
#pragma once

#include <functional>
#include <string>

#include "neuronsim/isa/program.hpp"

namespace neuronsim::engines {

struct HostEnv {
  // CustomOp / BIRKernel: the program run as `PROG <dir>/config.json` (no shell; a PROG without '/' is looked up
  // on PATH). Empty: such instructions are refused with "pass --kernel-sim PROG".
  std::string kernel_sim;
  // DevicePrint: called with one line per execution. Unset: the lines are dropped.
  std::function<void(const std::string &line)> device_print;
};

// Throws SemanticError (naming `file`, the instruction and its kernel-name field) when `inst` needs a host service
// that `host` does not provide: a CustomOp / BIRKernel without a kernel program, or with one that cannot be found
// or is not executable. Lets a run be refused before it starts instead of part-way through.
void check_host_services(const isa::Inst &inst, const HostEnv *host, const std::string &file);

} // namespace neuronsim::engines
