// TensorReduce: fold the innermost access-pattern dims (reference neuronx-cc/bir/sim-elementwise-datamove.md 3.1,
// visitInstTensorReduce / applyEngReduce<float>).
//   axis -> number of innermost AP dims reduced: X 1, XY 2, XYZ 3, XYZW 4 (the partition dim too when the pattern
//   has 4 dims), C 1 (the table's channel path); XYZWC reduces every dim. The op is `op` (or `reduce_op` when only
//   that key is given).
//   acc = x0; acc = op(acc, x_j) for j = 1..N-1 via alu_fold; `negate` negates the folded scalar afterwards.
//   average is not an ALU op in the simulator: the seed is x0 / N (divide first) and each step adds (1/N) * x_j,
//   a running mean.
//   apply_transpose: the [P, F] input is transposed first (the 32-lane copy of the reference; tiles up to 32x32).
// Bit-vector ops fold in the int32 lane; negate is arithmetic only (NKI tensor_reduce).
#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

void exec_tensor_reduce(const DynInst &d, Memory &m, EngineState &) {
  const isa::Inst &I = *d.inst;
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  const isa::AluOp op = (!I.has(isa::Field::op) && I.has(isa::Field::reduce_op)) ? I.f.reduce_op : I.f.op;
  const size_t nd = std::max<size_t>(in.ap.size(), 1);
  size_t num_dims = 1;
  switch (I.f.axis) {
  case isa::AxisListType::X: num_dims = 1; break;
  case isa::AxisListType::XY: num_dims = 2; break;
  case isa::AxisListType::XYZ: num_dims = 3; break;
  case isa::AxisListType::XYZW: num_dims = 4; break;
  case isa::AxisListType::XYZWC: num_dims = nd; break;
  case isa::AxisListType::C: num_dims = 1; break;
  }
  if (num_dims > nd)
    unsupported(m, "axis",
                std::string("Input AP dimension should be larger than num_dims, which is ") +
                    std::to_string(num_dims) + " (axis " + isa::enum_name(I.f.axis) + ", the pattern has " +
                    std::to_string(in.ap.size()) + " dims)");

  if (is_bitvec(op)) {
    if (I.f.negate) unsupported(m, "negate", "negate is arithmetic only; the op is bit-vector");
    if (I.f.apply_transpose) unsupported(m, "apply_transpose", "not implemented for bit-vector reductions");
    TileI x = read_tile_i32(m, in);
    int64_t extent = 1;
    for (size_t i = in.ap.size() - num_dims; i < in.ap.size(); ++i) extent *= in.ap[i].num;
    const int64_t n_out = extent ? x.size() / extent : 0;
    std::vector<int32_t> r(static_cast<size_t>(n_out));
    for (int64_t k = 0; k < n_out; ++k)
      r[static_cast<size_t>(k)] = alu_fold_i32(op, x.data()[k * extent], x.data() + k * extent + 1, extent - 1);
    write_flat_i32(m, out, r.data(), n_out);
    return;
  }

  Tile x = read_tile(m, in);
  int64_t extent = 1;
  if (I.f.apply_transpose) {
    if (in.ap.size() != 2 || num_dims != 1 || x.rows() > 32 || x.cols() > 32)
      unsupported(m, "apply_transpose", "implemented for 2-dim tiles up to 32x32 reduced over X");
    Tile t = x.transpose();
    x = t;
    extent = x.cols();
  } else {
    for (size_t i = in.ap.size() - num_dims; i < in.ap.size(); ++i) extent *= in.ap[i].num;
  }
  const int64_t n_out = extent ? x.size() / extent : 0;
  std::vector<float> r(static_cast<size_t>(n_out));
  const float *px = x.data();
  for (int64_t k = 0; k < n_out; ++k) {
    const float *row = px + k * extent;
    float acc;
    if (op == isa::AluOp::average) {
      // reference 3.1: divide-first seed, then redFn(acc, x) = acc + (1/N) * x.
      const float inv = 1.0f / float(extent);
      acc = row[0] / float(extent);
      for (int64_t j = 1; j < extent; ++j) acc = acc + inv * row[j];
    } else {
      acc = alu_fold(op, row[0], row + 1, extent - 1);
    }
    if (I.f.negate) acc = -acc;  // reference 3.1: negate AFTER the fold
    r[static_cast<size_t>(k)] = acc;
  }
  write_flat(m, out, r.data(), n_out);
}

} // namespace neuronsim::engines::ops
