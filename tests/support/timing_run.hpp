// Shared by the timing tests (tests/sim/test_timing_mechanisms.cpp, test_dma_calibration.cpp,
// test_engine_calibration.cpp, test_profile.cpp): a timing-only run and the trace events of one instruction.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "neuronsim/builder.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::test {

// A timing-only run on `arch` (a name or an architecture file).
inline sim::RunOptions timing_opts(const std::string &arch) {
  sim::RunOptions o;
  o.arch = arch;
  o.timing_only = true;
  return o;
}

// The event of instruction `inst`'s work: for a DMA instruction its transfer (on a DMA queue), not its trigger;
// otherwise its one event on its engine.
inline const sim::TraceEvent &work_event(const sim::RunResult &r, int inst) {
  const sim::TraceEvent *found = nullptr;
  for (const auto &e : r.events)
    if (e.inst == inst && (!found || e.queue >= sim::kNumEngines)) found = &e;
  if (!found) throw std::runtime_error("no event for instruction " + std::to_string(inst));
  return *found;
}

// The trigger of DMA instruction `inst` (on its issuing engine).
inline const sim::TraceEvent &trigger_event(const sim::RunResult &r, int inst) {
  for (const auto &e : r.events)
    if (e.inst == inst && e.queue < sim::kNumEngines) return e;
  throw std::runtime_error("no trigger for instruction " + std::to_string(inst));
}

// `n` [128, bpp / 4] fp32 HBM -> SBUF loads back to back on one queue from SP, into four rotating buffers: the
// stream bench/tools/dma_curve.cpp measures.
inline isa::Program back_to_back_loads(int n, int64_t bpp) {
  const int64_t cols = bpp / 4;
  builder::Builder b("stream");
  auto src = b.input("src", {128 * n, cols});
  auto buf = b.sbuf("buf", {128, 4 * cols});
  for (int i = 0; i < n; ++i)
    b.add(isa::InstructionType::Load, {b.ap(src.tile(128 * i, 128, 0, cols))},
          {b.ap(buf.tile(0, 128, (i % 4) * cols, cols))})
        .engine(isa::Engine::SP);
  return b.finish();
}

} // namespace neuronsim::test
