// Pool: a window reduce over the two innermost access-pattern dims, whatever their steps (reference
// neuronx-cc/bir/sim-elementwise-datamove.md 3.2 visitInstPool): window = num[-1] * num[-2].
//   Avg: sum of the window (fp32 adds in order) times (1.0 / (double)window), rounded to fp32.
//   Max: fold with max from -FLT_MAX.
#include <cfloat>

#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

void exec_pool(const DynInst &d, Memory &m, EngineState &) {
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  if (in.ap.size() < 3)
    unsupported(m, "ins[0].ap", "Pool needs a partition dim and two window dims");
  const int64_t window = in.ap[in.ap.size() - 1].num * in.ap[in.ap.size() - 2].num;
  Tile x = read_tile(m, in);
  const int64_t n_out = window ? x.size() / window : 0;
  std::vector<float> r(static_cast<size_t>(n_out));
  const auto func = d.inst->f.pool_func;
  for (int64_t k = 0; k < n_out; ++k) {
    const float *w = x.data() + k * window;
    if (func == isa::PoolFunctionType::Avg) {
      const float sum = alu_fold(isa::AluOp::add, 0.0f, w, window);
      r[static_cast<size_t>(k)] = float(double(sum) * (1.0 / double(window)));
    } else if (func == isa::PoolFunctionType::Max) {
      r[static_cast<size_t>(k)] = alu_fold(isa::AluOp::max, -FLT_MAX, w, window);
    } else {
      unsupported(m, "func", "Unrecognized PoolFunctionType");
    }
  }
  write_flat(m, out, r.data(), n_out);
}

} // namespace neuronsim::engines::ops
