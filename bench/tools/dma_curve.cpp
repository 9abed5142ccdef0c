// The DMA efficiency curve (issue 13 item 9; README "DMA efficiency"): for each architecture and payload size,
// 64 back-to-back HBM -> SBUF loads of [128 partitions, B bytes] fp32 on one DMA queue (qSyncIO0, triggered from SP
// with prebuilt descriptors, into four rotating SBUF buffers), timed by the same core as `neuronsim run
// --timing-only`. Throughput is the steady state: the bytes of loads 2..64 over the time between the first and the
// last completion. Columns: B per partition, GB/s, and that rate per engine against the documented saturated
// per-engine rate (sim/arch/<arch>.json dma_engine_saturated_bytes_per_ns, [DMABW]).
//
//   build/neuronsim_dma_curve            (Markdown table on stdout)
#include <iomanip>
#include <iostream>
#include <systemc>
#include <vector>

#include "neuronsim/builder.hpp"
#include "neuronsim/sim/simulator.hpp"

using namespace neuronsim;

namespace {

double steady_gbps(const std::string &arch, int64_t bytes_per_partition) {
  constexpr int kLoads = 64, kBuffers = 4;
  const int64_t cols = bytes_per_partition / 4;
  builder::Builder b("dma_curve");
  auto src = b.input("src", {128 * kLoads, cols});
  auto buf = b.sbuf("buf", {128, kBuffers * cols});
  for (int i = 0; i < kLoads; ++i)
    b.add(isa::InstructionType::Load, {b.ap(src.tile(128 * i, 128, 0, cols))},
          {b.ap(buf.tile(0, 128, (i % kBuffers) * cols, cols))})
        .engine(isa::Engine::SP)
        .queue("qSyncIO0");
  isa::Program p = b.finish();
  sim::RunOptions o;
  o.arch = arch;
  o.timing_only = true;
  sim::Simulator s(p, o);
  const sim::RunResult r = s.run();
  double first = 1e300, last = 0;
  for (const auto &e : r.events)
    if (e.queue >= sim::kNumEngines) first = std::min(first, e.finish_ns), last = std::max(last, e.finish_ns);
  return static_cast<double>((kLoads - 1) * 128 * bytes_per_partition) / (last - first);  // B/ns = GB/s
}

} // namespace

// SystemC's library defines main() and calls sc_main(); its banner is not this program's output.
const bool kQuietSystemC = [] { return setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0; }();

int sc_main(int, char **) {
  const std::vector<int64_t> sizes = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
  const std::vector<std::string> archs = {"trn1", "trn2", "trn3"};
  std::cout << "| bytes per partition |";
  for (const auto &a : archs) std::cout << " " << a << " GB/s | " << a << " % of saturated |";
  std::cout << "\n|---:|";
  for (size_t i = 0; i < archs.size(); ++i) std::cout << "---:|---:|";
  std::cout << "\n";
  std::vector<double> saturated;
  for (const auto &a : archs) {
    const engines::ArchParams ap = engines::builtin_arch(a);
    saturated.push_back(ap.dma_engine_saturated_bytes_per_ns * ap.dma_engines);
  }
  for (int64_t bpp : sizes) {
    std::cout << "| " << bpp << " |";
    for (size_t i = 0; i < archs.size(); ++i) {
      const double g = steady_gbps(archs[i], bpp);
      std::cout << " " << std::fixed << std::setprecision(1) << g << " | " << std::setprecision(0)
                << 100.0 * g / saturated[i] << "% |";
    }
    std::cout << "\n";
  }
  return 0;
}
