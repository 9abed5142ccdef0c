// Iota and TensorScalarAffineSelect: values from an affine function of the element coordinates.
// reference neuronx-cc/bir/sim-elementwise-datamove.md 5.4 (doIota) and the public NKI ISA docs
// (nki.isa.iota / nki.isa.affine_select): for partition (channel) c and the 4-D free pattern
// [[step_w,num_w],[step_z,num_z],[step_y,num_y],[step_x,num_x]] (fewer dims are padded with leading unit dims),
//   value = base + c * channel_multiplier + w*step_w + z*step_z + y*step_y + x*step_x      (int32)
// Iota writes the value (cast to the output dtype). AffineSelect keeps ins[0] where compare_op(value, 0) holds,
// else writes fill_value; compare_op defaults to is_equal when absent (NKI affine_select's cmp_op default).
#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

namespace {

// The affine values for every output element in walk order (partitions x pattern elements).
std::vector<int32_t> affine_values(const DynInst &d, const Memory &m, const Access &out) {
  const auto &pat = d.inst->f.pattern;
  if (pat.size() > 4) unsupported(m, "pattern", "at most 4 pattern dims (W, Z, Y, X)");
  isa::ApDim dims[4] = {{0, 1}, {0, 1}, {0, 1}, {0, 1}};
  for (size_t i = 0; i < pat.size(); ++i) dims[4 - pat.size() + i] = pat[i];
  const int64_t per = dims[0].num * dims[1].num * dims[2].num * dims[3].num;
  const int64_t parts = out.partitions();
  if (per * parts != elems(out))
    unsupported(m, "pattern",
                "pattern covers " + std::to_string(per) + " elements per partition, the output has " +
                    std::to_string(out.free_elements()));
  std::vector<int32_t> v;
  v.reserve(static_cast<size_t>(per * parts));
  const int64_t base = d.inst->f.base, cm = d.inst->f.channel_multiplier;
  for (int64_t c = 0; c < parts; ++c)
    for (int64_t w = 0; w < dims[0].num; ++w)
      for (int64_t z = 0; z < dims[1].num; ++z)
        for (int64_t y = 0; y < dims[2].num; ++y)
          for (int64_t x = 0; x < dims[3].num; ++x)
            v.push_back(static_cast<int32_t>(base + c * cm + w * dims[0].step + z * dims[1].step +
                                             y * dims[2].step + x * dims[3].step));
  return v;
}

} // namespace

void exec_iota(const DynInst &d, Memory &m, EngineState &) {
  const Access &out = out_ap(d, m, 0);
  std::vector<int32_t> v = affine_values(d, m, out);
  if (is_int_dtype(out.dtype)) {
    m.write_i32(out, v.data());
  } else {
    std::vector<float> f(v.begin(), v.end());
    m.write_f32(out, f.data());
  }
}

void exec_affine_select(const DynInst &d, Memory &m, EngineState &) {
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, in, out, "outs[0]");
  std::vector<int32_t> v = affine_values(d, m, out);
  const isa::AluOp cmp = d.inst->has(isa::Field::compare_op) ? d.inst->f.compare_op : isa::AluOp::is_equal;
  // reference 5.4: the predicate is an integer compare (ts_int_cmp_ops) of the affine value against 0.
  std::vector<int32_t> pred(v.size());
  alu_vs_i32(cmp, v.data(), 0, pred.data(), static_cast<int64_t>(v.size()));
  Tile t = read_tile(m, in);
  const float fill = float(d.inst->f.fill_value);
  float *p = t.data();
  for (size_t i = 0; i < v.size(); ++i)
    if (!pred[i]) p[i] = fill;
  m.write_f32(out, t.data());
}

} // namespace neuronsim::engines::ops
