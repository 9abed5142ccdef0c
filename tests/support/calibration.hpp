// Shared by the calibration tests (tests/sim/test_dma_calibration.cpp, test_engine_calibration.cpp): a simulated
// figure against a silicon one from calibration.md.
#pragma once

#include <gtest/gtest.h>

#include <cmath>

namespace neuronsim::test {

// Within `pct` percent of the calibration figure (issue 27: every item within 10%).
inline ::testing::AssertionResult within(double model, double silicon, double pct = 10.0) {
  const double dev = 100.0 * (model - silicon) / silicon;
  if (std::abs(dev) <= pct) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "model " << model << " vs silicon " << silicon << ": " << dev << "%";
}

} // namespace neuronsim::test
