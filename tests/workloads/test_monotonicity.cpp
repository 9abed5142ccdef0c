// A faster machine never makes a kernel slower: for every committed workload (workloads/<name>, small size) on
// every architecture it runs on, each headline parameter of `--sensitivity` (sim/sensitivity.cpp) made 2x better
// -- a rate or clock doubled, a latency or overhead halved -- leaves the simulated time at most 0.5% above the
// base run's (an arbitration tie may move a little; a mechanism that turns a faster resource into a slower kernel
// is a bug). A failure names the workload, the architecture, the parameter and both times. The NKI kernels of
// workloads/nki simulate the generator's BIR to the same time (tests/python/test_nki_workloads.py), so they are
// covered here; tests/python/test_nki_workloads.py runs the property through `neuronsim nki` as well.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "neuronsim/sim/kernel.hpp"
#include "neuronsim/sim/run_kernel.hpp"
#include "neuronsim/sim/run_settings.hpp"
#include "neuronsim/sim/sensitivity.hpp"
#include "workload.hpp"

// Its own namespace: this file shares a unity batch with tests/workloads/test_workloads.cpp.
namespace test_monotonicity {

using namespace neuronsim;

constexpr double kTolerance = 0.005;

std::vector<std::string> workload_names() {
  std::vector<std::string> v;
  for (const auto &e : workloads::registry()) v.push_back(e.first);
  return v;
}

class Monotone : public ::testing::TestWithParam<std::string> {};

TEST_P(Monotone, NoHeadlineParameterMadeTwiceBetterSlowsTheWorkload) {
  const std::string name = GetParam();
  const workloads::Workload w = (*workloads::find_generator(name))(workloads::Size::Small, false);
  const std::string dir =
      std::string(NEURONSIM_SOURCE_DIR) + "/workloads/" + (w.cores > 1 ? "multicore/" : "") + name;
  const sim::Kernel k = sim::load_kernel(dir);
  for (const char *arch : {"trn1", "trn2", "trn3"}) {
    if (w.lnc > 1 && std::string(arch) == "trn1") continue;  // no logical cores on trn1
    sim::RunSettings s;
    s.options.arch = arch;
    s.options.timing_only = true;
    sim::complete_settings(k, s);
    const sim::Run base = sim::run_kernel(k, s);
    const double t0 = base.device ? base.device_result.total_ns : base.result.total_ns;
    ASSERT_GT(t0, 0.0) << name << " on " << arch;
    for (const auto &row : sim::sensitivity(k, s, base)) {
      if (!row.used) continue;
      EXPECT_LE(row.total_ns, t0 * (1.0 + kTolerance))
          << name << " on " << arch << ": " << row.parameter << " (" << row.arch << ") takes " << row.total_ns
          << " ns against " << t0 << " ns before (+" << (row.total_ns / t0 - 1.0) * 100.0 << "%)";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, Monotone, ::testing::ValuesIn(workload_names()),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

} // namespace test_monotonicity
