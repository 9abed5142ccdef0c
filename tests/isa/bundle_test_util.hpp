// Helpers shared by the bundle codec tests.
#pragma once

#include <utility>
#include <vector>

#include "neuronsim/isa/program.hpp"

namespace bundletest {

// An access-pattern argument on `tensor` with a constant start.
inline neuronsim::isa::Arg ap(int tensor, neuronsim::isa::Dtype dt, std::vector<neuronsim::isa::ApDim> dims,
                              int64_t start = 0) {
  neuronsim::isa::Arg a;
  a.kind = neuronsim::isa::ArgKind::AccessPattern;
  a.tensor = tensor;
  a.dtype = dt;
  a.ap = std::move(dims);
  a.start = neuronsim::isa::Expr::constant(start);
  return a;
}

} // namespace bundletest
