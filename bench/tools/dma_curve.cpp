// The DMA efficiency curve (docs/modelled.md "DMA efficiency"; docs/timing-model.md 2.7): for each architecture and payload
// size, back-to-back HBM -> SBUF loads of [128 partitions, B bytes] fp32 on one DMA queue (qSyncIO0, triggered from
// SP with prebuilt descriptors, into four rotating SBUF buffers), timed by the same core as `neuronsim run
// --timing-only`. Throughput: all the loads' bytes over the time from the first byte to the last completion (the
// first load's latency left out; the run is long enough for the start-up and the end to weigh little). Columns: B per partition; per architecture GB/s and that rate against the core's peak, the 16
// engines' read rate or its HBM share if lower (sim/arch/<arch>.json dma_engine_bytes_per_ns x dma_engines,
// hbm_bytes_per_ns); trn2's rate relative to its 32 KiB point beside the silicon curve of calibration.md D4.
//
//   build/neuronsim_dma_curve                  the Markdown table on stdout
//   build/neuronsim_dma_curve --check FILE     exit 1 unless FILE (docs/modelled.md) holds exactly this table (a ctest)
#include <algorithm>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <systemc>
#include <vector>

#include "neuronsim/builder.hpp"
#include "neuronsim/sim/simulator.hpp"

using namespace neuronsim;

namespace {

double steady_gbps(const std::string &arch, int64_t bytes_per_partition) {
  constexpr int kBuffers = 4;
  const int loads = bytes_per_partition >= 16384 ? 16 : 64;
  const int64_t cols = bytes_per_partition / 4;
  builder::Builder b("dma_curve");
  auto src = b.input("src", {128 * loads, cols});
  auto buf = b.sbuf("buf", {128, kBuffers * cols});
  for (int i = 0; i < loads; ++i)
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
    if (e.queue >= sim::kNumEngines) first = std::min(first, e.start_ns), last = std::max(last, e.finish_ns);
  return static_cast<double>(loads * 128 * bytes_per_partition) / (last - first);  // B/ns = GB/s
}

std::string table() {
  const std::vector<int64_t> sizes = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768};
  const std::vector<std::string> archs = {"trn1", "trn2", "trn3"};
  // calibration.md D4: the silicon curve relative to its 32 KiB point.
  const std::map<int64_t, double> d4 = {{64, 0.029},   {128, 0.053},  {256, 0.105},  {512, 0.210},  {1024, 0.423},
                                        {2048, 0.815}, {4096, 0.965}, {8192, 0.983}, {16384, 0.991}, {32768, 1.0}};
  std::ostringstream out;
  out << "| bytes per partition |";
  for (const auto &a : archs) out << " " << a << " GB/s | " << a << " % of peak |";
  out << " trn2 / its 32 KiB rate | silicon (D4) |\n|---:|";
  for (size_t i = 0; i < archs.size(); ++i) out << "---:|---:|";
  out << "---:|---:|\n";
  std::vector<double> peak;
  for (const auto &a : archs) {
    const engines::ArchParams ap = engines::builtin_arch(a);
    peak.push_back(std::min(ap.dma_engine_bytes_per_ns * ap.dma_engines, ap.hbm_bytes_per_ns));
  }
  std::map<int64_t, std::vector<double>> g;
  for (int64_t bpp : sizes)
    for (const auto &a : archs) g[bpp].push_back(steady_gbps(a, bpp));
  for (int64_t bpp : sizes) {
    out << "| " << bpp << " |";
    for (size_t i = 0; i < archs.size(); ++i)
      out << " " << std::fixed << std::setprecision(1) << g[bpp][i] << " | " << std::setprecision(0)
          << 100.0 * g[bpp][i] / peak[i] << "% |";
    out << " " << std::setprecision(3) << g[bpp][1] / g[32768][1] << " | " << d4.at(bpp) << " |\n";
  }
  return out.str();
}

} // namespace

// SystemC's library defines main() and calls sc_main(); its banner is not this program's output.
const bool kQuietSystemC = [] { return setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0; }();

int sc_main(int argc, char **argv) {
  const std::string t = table();
  if (argc == 3 && std::string(argv[1]) == "--check") {
    std::ifstream f(argv[2]);
    std::stringstream s;
    s << f.rdbuf();
    if (s.str().find(t) != std::string::npos) return 0;
    std::cerr << argv[2] << " does not hold the DMA efficiency table the model gives now; replace it with:\n" << t;
    return 1;
  }
  std::cout << t;
  return 0;
}
