// Shared by the multi-core tests (tests/sim/test_device.cpp, test_device_hbm.cpp, test_device_collectives.cpp):
// the run options, a core's tile written and read whole through its builder handle, and NaN-aware equality.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "neuronsim/builder.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::test::device {

using V = std::vector<float>;

inline engines::Access whole(const builder::TensorHandle &t) {
  engines::Access x;
  const builder::Ap a = t.all();
  x.tensor = a.tensor;
  x.dtype = a.dtype;
  x.start = a.start.to_expr().eval(nullptr);
  x.ap = a.dims;
  return x;
}
inline V read(sim::Simulator &s, const builder::TensorHandle &t) {
  const engines::Access a = whole(t);
  V v(static_cast<size_t>(a.partitions() * a.free_elements()));
  s.memory().read_f32(a, v.data());
  return v;
}
inline void write(sim::Simulator &s, const builder::TensorHandle &t, const V &v) { s.memory().write_f32(whole(t), v.data()); }

inline sim::RunOptions opts(const char *arch = "trn2", bool timing_only = false) {
  sim::RunOptions o;
  o.arch = arch;
  o.timing_only = timing_only;
  return o;
}

// NaN-aware equality for the reducer's vectors.
inline void expect_same(const V &got, const V &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got[i])) << what << "[" << i << "] = " << got[i];
    else EXPECT_EQ(got[i], want[i]) << what << "[" << i << "]";
  }
}

inline const float kNaN = std::nanf("");

} // namespace neuronsim::test::device
