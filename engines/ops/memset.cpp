// Memset: fill the output access (reference neuronx-cc/bir/sim-elementwise-datamove.md 5.4).
//  Const:  every element = `constant` (a value, converted to the output dtype; integer outputs take the
//          integer value, wrapping through uint32 as KLR declares `constant` a uint32). When `constant` is absent
//          and ins[0] is an immediate, that immediate is the value.
//  Random: one 64-bit draw per element from EngineState::host_rng (MT19937-64, like birsim's host generator,
//          sim-dispatch-state.md 6.1, but seeded by the engine state rather than 42), keeping the high 32 bits.
//          Float outputs get uniform [0, 1): (bits >> 8) * 2^-24; integer outputs get the raw 32 bits truncated
//          to the dtype by the integer store.
#include <cmath>

#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

void exec_memset(const DynInst &d, Memory &m, EngineState &st) {
  const Access &out = out_ap(d, m, 0);
  const int64_t n = elems(out);
  const bool int_out = is_int_dtype(out.dtype);
  if (d.inst->f.memset_mode == isa::MemsetMode::Random) {
    std::mt19937_64 &rng = st.host_rng();
    if (int_out) {
      std::vector<int32_t> v(static_cast<size_t>(n));
      for (auto &x : v) x = static_cast<int32_t>(static_cast<uint32_t>(rng() >> 32));
      m.write_i32(out, v.data());
    } else {
      std::vector<float> v(static_cast<size_t>(n));
      for (auto &x : v) x = float(static_cast<uint32_t>(rng() >> 32) >> 8) * (1.0f / 16777216.0f);
      m.write_f32(out, v.data());
    }
    return;
  }
  if (d.inst->f.memset_mode != isa::MemsetMode::Const)
    unsupported(m, "mode", std::string("Memset mode '") + isa::enum_name(d.inst->f.memset_mode) + "'");
  double value = d.inst->f.constant;
  if (!d.inst->has(isa::Field::constant) && is_imm(d, 0)) value = imm_value(d, 0);
  if (int_out) {
    const int32_t iv = value < 0 ? static_cast<int32_t>(static_cast<int64_t>(value))
                                 : static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(value)));
    std::vector<int32_t> v(static_cast<size_t>(n), iv);
    m.write_i32(out, v.data());
  } else {
    std::vector<float> v(static_cast<size_t>(n), float(value));
    m.write_f32(out, v.data());
  }
}

} // namespace neuronsim::engines::ops
