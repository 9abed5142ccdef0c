// Why a run took its time (neuronsim/sim/analysis.hpp, docs/profiling.md): the verdict on hand-built kernels
// whose binding limit is known by construction, the time split and rates on stats documents with hand-set
// numbers, the human time units and the summary table's columns at full-size counts.
#include <gtest/gtest.h>

#include <sstream>

#include "neuronsim/builder.hpp"
#include "neuronsim/engines/arch.hpp"
#include "neuronsim/sim/analysis.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/session.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "neuronsim/sim/stats.hpp"

using namespace neuronsim;
using builder::Builder;
using isa::Dtype;
using isa::Engine;
using isa::InstructionType;
using nlohmann::json;

namespace {

json stats_of(const isa::Program &p, const std::string &arch) {
  sim::RunOptions o;
  o.arch = arch;
  o.timing_only = true;
  sim::Simulator s(p, o);
  const sim::RunResult r = s.run();
  return sim::stats_json(r, s.schedule(), p);
}

// 16 matmuls, stationary [128, 128] and moving [128, 512] bf16, each into its own PSUM bank (8 banks of 512
// fp32, reused every 8th), nothing else: PE is busy back to back (512 cycles each, reference
// neuron-arch.md 2.1), so the run is PE-bound by construction.
isa::Program matmuls() {
  Builder b("mm");
  auto w = b.sbuf("w", {128, 128}, Dtype::bfloat16), x = b.sbuf("x", {128, 512}, Dtype::bfloat16);
  auto o = b.psum("o", {128, 8 * 512});
  for (int i = 0; i < 16; ++i)
    b.add(InstructionType::Matmult, {b.ap(w.all()), b.ap(x.all())},
          {b.ap(o.tile(0, 128, (i % 8) * 512, 512))})
        .start_tensor_calc(true);
  return b.finish();
}

// 20 instructions on one element, alternately on DVE and POOL, each reading what the last wrote: every link pays
// the dependent overhead of a result read by another engine (~100 cycles [ARCH2] plus the access start-up) after a
// short occupancy, so POOL (151 cycles each) holds the critical path while busy a fraction of it: dependency-bound.
// (On one engine, DVE reads its own results 6 cycles after them, calibration.md E6: such a chain is DVE-bound.)
isa::Program chain() {
  Builder b("chain");
  auto t = b.sbuf("t", {1, 1});
  for (int i = 0; i < 20; ++i)
    b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), b.imm(1.0)}, {b.ap(t.all())})
        .op0(isa::AluOp::add)
        .op1(isa::AluOp::bypass)
        .engine(i % 2 ? Engine::Pool : Engine::DVE);
  return b.finish();
}

// One 4 MiB load, [128, 8192] fp32, into SBUF: its bytes take ~10x the fixed latency at the DMA engines'
// rate.
isa::Program big_load() {
  Builder b("load");
  auto a = b.input("a", {128, 8192});
  auto t = b.sbuf("t", {128, 8192});
  b.add(InstructionType::Load, {b.ap(a.all())}, {b.ap(t.all())});
  return b.finish();
}

} // namespace

TEST(Analysis, BackToBackMatmulsArePeBound) {
  const json s = stats_of(matmuls(), "trn1");
  const json &a = s["analysis"];
  EXPECT_EQ(a["verdict"]["kind"], "engine") << a["verdict"];
  EXPECT_EQ(a["verdict"]["bottleneck"], "PE");
  EXPECT_EQ(a["verdict"]["text"].get<std::string>().rfind("PE-bound (busy ", 0), 0u) << a["verdict"];
  // Work: 2 K M N = 2 x 128 x 128 x 512 FLOP per matmul; the peak 2 x 128 x 128 FLOP per PE cycle at 2.8 GHz.
  const json &w = a["engines"]["PE"]["work"];
  EXPECT_EQ(w["unit"], "FLOP");
  EXPECT_DOUBLE_EQ(w["amount"].get<double>(), 16.0 * 2 * 128 * 128 * 512);
  EXPECT_DOUBLE_EQ(w["peak_per_ns"].get<double>(), 2.0 * 128 * 128 * 2.8);
  // Busy: 16 x 512 cycles, and what the first matmul pays after the idle array (calibration.md E4, trn1.json):
  // its LoadStationary's lead of pe_isolated_ls_cycles = 73 (more than the fast 128 / 4 = 32), the fill and drain
  // pe_fill_drain_cycles = 397 plus one cycle per stationary column, 128. Over the run the peak rate is reached in
  // the 16 x 512 cycles alone.
  const double total = s["total_ns"].get<double>(), busy = s["engines"]["PE"]["busy_ns"].get<double>();
  EXPECT_NEAR(busy, (16 * 512 + 73 + 397 + 128) / 2.8, 0.01); // each occupancy rounded to a picosecond
  EXPECT_NEAR(w["of_peak"].get<double>(), 16 * 512 / 2.8 / total, 1e-9);
  EXPECT_GT(w["of_peak"].get<double>(), 0.9);
}

TEST(Analysis, AChainOfDependentInstructionsIsDependencyBound) {
  const json s = stats_of(chain(), "trn2");
  const json &a = s["analysis"];
  EXPECT_EQ(a["verdict"]["kind"], "dependency") << a["verdict"];
  EXPECT_EQ(a["verdict"]["bottleneck"], "POOL");
  // The time split adds up: busy + waits by reason + idle = the run, and the chain waits on dependencies.
  const json &e = a["engines"]["POOL"];
  double waited = 0;
  for (const auto &[reason, ns] : e["wait_ns"].items())
    waited += ns.get<double>(), (void)reason;
  EXPECT_NEAR(e["busy_ns"].get<double>() + waited + e["idle_ns"].get<double>(), s["total_ns"].get<double>(),
              1e-6);
  EXPECT_GT(e["wait_ns"]["dependency"].get<double>(), e["busy_ns"].get<double>());
  // One element per instruction, 10 instructions on POOL.
  EXPECT_DOUBLE_EQ(e["work"]["amount"].get<double>(), 10);
}

TEST(Analysis, ALargeLoadIsDmaBandwidthBound) {
  const json s = stats_of(big_load(), "trn1");
  const json &a = s["analysis"];
  EXPECT_EQ(a["verdict"]["kind"], "dma-bandwidth") << a["verdict"];
  const json &q = a["dma_queues"][0];
  EXPECT_EQ(q["bytes"].get<int64_t>(), 128 * 8192 * 4);
  EXPECT_EQ(q["transfers"].get<int64_t>(), 1);
  // One transfer pays the fixed latency once: to its first byte and from its last byte to its completion.
  EXPECT_DOUBLE_EQ(q["fixed_latency_ns"].get<double>(),
                   engines::builtin_arch("trn1").dma_latency_ns + engines::builtin_arch("trn1").dma_completion_ns);
  // Its 16 engines' rate within the core's HBM share (sim/arch/trn1.json).
  const auto arch = engines::builtin_arch("trn1");
  EXPECT_NEAR(q["allowed_gbps"].get<double>(),
              std::min(16 * arch.dma_engine_bytes_per_ns, arch.hbm_bytes_per_ns), 1e-9);
  EXPECT_LE(q["achieved_gbps"].get<double>(), q["allowed_gbps"].get<double>());
}

TEST(Analysis, ManyTinyInstructionsSayTheCompilerCouldMergeThem) {
  // 2048 DVE instructions on [128, 3] (384 elements, under MIN_II 64 x 128 partitions): the verdict says the count
  // is one the compiler may reduce (calibration.md E6); 16 on [128, 512] do not get the note.
  for (const int64_t free : {int64_t{3}, int64_t{512}}) {
    Builder b("tiny");
    auto t = b.sbuf("t", {128, free}), o = b.sbuf("o", {128, free});
    b.loop("i", 0, free == 3 ? 2048 : 16, 1, [&](builder::Aff) {
      b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), b.imm(1.0)}, {b.ap(o.all())})
          .op0(isa::AluOp::add)
          .op1(isa::AluOp::bypass)
          .engine(Engine::DVE);
    });
    const json s = stats_of(b.finish(), "trn1");
    const std::string text = s["analysis"]["verdict"]["text"].get<std::string>();
    const std::string note = "; 2048 tiny instructions, 384 elements each on average, under MIN_II x 128 partitions: "
                             "the compiler may merge such per-iteration instructions, this BIR runs them as written";
    if (free == 3) {
      EXPECT_NE(text.find(note), std::string::npos) << text;
    } else {
      EXPECT_EQ(text.find("tiny"), std::string::npos) << text;
    }
  }
}

TEST(Analysis, ByteCountsPast4GiBStayExactInTheDocumentAndTheWhyTable) {
  // 300 loads of [128, 32768] fp32 (16 MiB each): 5,033,164,800 bytes on one queue, more than 32 bits hold.
  // `--why` once read the count back as an int: -2147483648 or the count modulo 2^32.
  Builder b("big");
  auto a = b.input("a", {128, 32768});
  auto t = b.sbuf("t", {128, 32768});
  b.loop("i", 0, 300, 1, [&](builder::Aff) { b.add(InstructionType::Load, {b.ap(a.all())}, {b.ap(t.all())}); });
  const json s = stats_of(b.finish(), "trn2");
  const int64_t want = int64_t{300} * 128 * 32768 * 4;
  ASSERT_GT(want, int64_t{1} << 32);
  const json &q = s["analysis"]["dma_queues"][0];
  EXPECT_EQ(q["bytes"].get<int64_t>(), want);
  EXPECT_EQ(q["transfers"].get<int64_t>(), 300);
  EXPECT_DOUBLE_EQ(s["analysis"]["dma"]["bytes"].get<double>(), static_cast<double>(want));
  std::ostringstream why;
  sim::print_why(why, s["analysis"]);
  EXPECT_NE(why.str().find(" 5033164800 "), std::string::npos) << why.str();
}

// A stats document with hand-set numbers (the analysis reads nothing else).
json doc(const std::string &bottleneck, double dma_crit, double dma_fixed) {
  json engines = json::object();
  for (const char *e : {"PE", "ACT", "POOL", "DVE", "SP"})
    engines[e] = {{"instructions", 0}, {"busy_ns", 0.0}, {"elements", 0}, {"flops", 0}};
  engines["DVE"] = {{"instructions", 4}, {"busy_ns", 600.0}, {"elements", 128 * 1000}, {"flops", 0}};
  json q = {
      {"name", "q0"},         {"transfers", 2},       {"bytes", 20000},      {"fixed_latency_ns", 2600.0},
      {"per_row_ns", 100.0},  {"transfer_ns", 700.0}, {"allowed_ns", 400.0}, {"first_issue_ns", 0.0},
      {"last_end_ns", 1000.0}};
  json shares = {{"DMA", dma_crit}};
  if (bottleneck != "DMA")
    shares[bottleneck] = 900.0;
  return {{"total_ns", 1000.0},
          {"engines", engines},
          {"dma", {{"queues", json::array({q})}}},
          {"critical_path_ns", shares},
          {"critical_path_dma_fixed_ns", dma_fixed},
          {"bottleneck", bottleneck}};
}

TEST(Analysis, RatesAndSplitFromTheDocument) {
  json d = doc("DVE", 100.0, 0.0);
  // A profile row of DVE that waited 150 ns on a dependency and 50 ns on a semaphore.
  d["profile"]["instructions"] = json::array(
      {{{"engine", "DVE"}, {"queue", "DVE"}, {"wait_ns", {{"dependency", 150.0}, {"semaphore", 50.0}}}}});
  const json a = sim::analysis_json(d, engines::builtin_arch("trn2"));
  const json &e = a["engines"]["DVE"];
  EXPECT_DOUBLE_EQ(e["idle_ns"].get<double>(), 1000.0 - 600.0 - 200.0);
  // 128000 elements in 1000 ns against 128 partitions x 0.96 GHz (trn2 DVE): 1 / 0.96 of peak.
  EXPECT_NEAR(e["work"]["of_peak"].get<double>(), 128.0 / (128 * 0.96), 1e-12);
  // DVE busy 60% of the run: DVE-bound.
  EXPECT_EQ(a["verdict"]["text"], "DVE-bound (busy 60% of the run; 104% of peak elements/s)");
  const json &q = a["dma_queues"][0];
  EXPECT_DOUBLE_EQ(q["achieved_gbps"].get<double>(), 20000.0 / 1000.0); // bytes over first issue -> last end
  EXPECT_DOUBLE_EQ(q["allowed_gbps"].get<double>(),
                   20000.0 / 400.0); // bytes over their time at the allowed rate
  EXPECT_DOUBLE_EQ(q["fixed_latency_ns"].get<double>(), 2600.0);
}

TEST(Analysis, DmaVerdictsByTheirShares) {
  const auto trn2 = engines::builtin_arch("trn2");
  // Fixed latency 610 of 1000 ns of DMA critical time: latency-bound, and the text says 61%.
  EXPECT_EQ(sim::analysis_json(doc("DMA", 1000.0, 610.0), trn2)["verdict"]["text"],
            "DMA latency-bound (fixed latency 61% of DMA critical time)");
  // 20000 bytes over 1000 ns = 20 GB/s against trn2's min(16 x 27.2, 360) = 360 GB/s: 6%, not
  // bandwidth-bound.
  EXPECT_EQ(sim::analysis_json(doc("DMA", 1000.0, 100.0), trn2)["verdict"]["kind"], "dma-transfer");
  json fast = doc("DMA", 1000.0, 100.0);
  fast["dma"]["queues"][0]["bytes"] = 300000; // 300 GB/s: 83% of 360
  const json v = sim::analysis_json(fast, trn2)["verdict"];
  EXPECT_EQ(v["kind"], "dma-bandwidth");
  EXPECT_EQ(v["text"], "DMA bandwidth-bound (300 GB/s, 83% of the 360 GB/s allowed)");
}

TEST(Analysis, TimesInTheUnitThatFits) {
  EXPECT_EQ(sim::human_time(812.04), "812.0 ns");
  EXPECT_EQ(sim::human_time(12345.6), "12.35 us");
  EXPECT_EQ(sim::human_time(4210000.0), "4.210 ms");
  EXPECT_EQ(sim::human_time(1.502e9), "1.502 s");
}

TEST(Analysis, SummaryColumnsNeverRunIntoEachOther) {
  // A full-size run's counts: 8388608 descriptors on a queue at 86% (the line that read "86%8388608 desc").
  sim::RunResult r;
  r.total_ns = 1.0e9;
  r.queues[0].name = "PE", r.queues[0].instructions = 123456789, r.queues[0].busy_ns = 9.9e8,
  r.queues[0].cycles = 2772000000LL;
  r.queues[5].name = "qSyncIO0", r.queues[5].instructions = 8388608, r.queues[5].busy_ns = 1.376e10,
  r.queues[5].descriptors = 8388608;
  r.dma_engines.resize(16);
  for (auto &e : r.dma_engines)
    e.busy_ns = 8.6e8, e.descriptors = 524288;
  sim::Schedule s;
  s.dma_queues = 1;
  std::ostringstream out;
  sim::print_summary(out, r, s);
  const std::string text = out.str();
  EXPECT_NE(text.find("simulated time: 1.000 s (1000000000.0 ns)"), std::string::npos) << text;
  EXPECT_NE(text.find("  86%  8388608 desc"), std::string::npos) << text;
  EXPECT_NE(text.find("  2772000000"), std::string::npos) << text;
  // Every row's cells are separated by at least two spaces: the header's column starts line up with each
  // row's.
  std::istringstream lines(text);
  std::string line, header;
  while (std::getline(lines, line))
    if (line.find("queue") != std::string::npos)
      header = line;
  EXPECT_EQ(header.rfind("  queue", 0), 0u) << text;
}

TEST(Analysis, TheEtaWaitsUntilItMeansSomething) {
  sim::ProgressLine p;
  // The first report at 0.5 s, 1% done (schedule building and start-up before it): silent for the first
  // second.
  EXPECT_EQ(p.line_at(0.5, 10, 1000, 100.0), "");
  // At 1.2 s, 5% done: shown, but no ETA before a tenth of the run is done.
  const std::string early = p.line_at(1.2, 50, 1000, 500.0);
  EXPECT_NE(early.find("50/1000 instructions (5%)"), std::string::npos) << early;
  EXPECT_EQ(early.find("ETA"), std::string::npos) << early;
  // At most five lines a second.
  EXPECT_EQ(p.line_at(1.3, 60, 1000, 600.0), "");
  // At 2.5 s, 51% done: 50% in the 2.0 s since the first report, 0.25 per second: ETA (1 - 0.51) / 0.25
  // = 1.96 s (the naive wall x (1 - f) / f from the start would say 2.4 s; after a slow start it is far
  // further off).
  const std::string later = p.line_at(2.5, 510, 1000, 5100.0);
  EXPECT_NE(later.find("ETA 2.0 s"), std::string::npos) << later;
}
