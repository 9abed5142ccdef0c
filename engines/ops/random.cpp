// Random numbers (reference neuronx-cc/bir/sim-bn-rng-collective-dma.md 2): the generators are bit-exact where
// the reference gives the algorithm. State lives in EngineState (rng1: gen-1, 6 u32 per partition; xorwow:
// gen-2, 4 lanes x 6 u32 per partition; host_rng: the host MT19937-64 seed engine that Memset Random draws from).
// Each partition has its own state and draws its elements in walk order.
//
//   Rand (gen-1)   random_algorithm: LFSR (32-bit Fibonacci, taps {32,22,2,1}, on word 0), PCG32 (PCG-XSH-RR
//                  64/32 on words 0 | 1 << 32, default multiplier/increment), PHILOX_1 (Philox-4x32-10, counter =
//                  words 0..3, key = words 4..5, four outputs per counter step; the word -> key/counter split is
//                  INFERRED, reference 7 leaves it open). Raw 32-bit outputs only: `distribution`, `params` and
//                  `rand_num_steps` are not read (reference 2.2 QUIRK). outs[0] receives the bits (an integer dst
//                  keeps the low bits).
//   Rand2 (gen-2)  XORWOW (cuRAND shifts 2/1/4, Weyl 362437) -> uniform fp32 in [min, max): u = bits(mantissa |
//                  1.0) - 1, min + (max - min) * u. ins[0] min (default 0), ins[1] max (default 1), each an
//                  immediate or a [P, 1] per-partition operand (NKI rand2: "a scalar or vector value"). Lane 0 of
//                  the four drives every element (the 2x1p/2x2p/4x2p lane choice is INFERRED away).
//   Rng            birsim has no kernel (skip-and-note); NKI rng: 32 random bits per element. Drawn from the
//                  XORWOW lane 0 (INFERRED), truncated to the dst by the integer store.
//   Dropout        ins[0] data, ins[1] probability (immediate or [P, 1]); one XORWOW uniform u per element: the
//                  element is dropped (written 0) when u < prob, or, with is_keep_threshold, kept when u < prob.
//                  No rescale (NKI dropout replaces with zero). The generator choice is INFERRED.
//   SetRandState / RandSetState
//                  ins[0] immediate: seeds the MT19937-64 engine (the standard 64-bit init recurrence, reference
//                  2.3); ins[0] an 8-value immediate array: gen-1 wire seed, word0 = (partition << 24) |
//                  (imm[0] & 0xFFFFFF), words 1..5 = imm[1..5], every partition; ins[0] an access of uint32 with 6
//                  (gen-1) or 24 (gen-2, lane-major) elements per partition: the state itself. A restored lane
//                  whose words 0..4 are all zero gets word 4 = 1 (reference 2.3 dead-state guard).
//   GetRandState / RandGetState
//                  with an input access: a copy of it (birsim's IT58 doCopy snapshot); else
//                  outs[0] with 6 (gen-1) or 24 (gen-2) uint32 per partition receives the state.
#include <cstring>

#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

uint32_t xorwow_next(uint32_t *s) {
  const uint32_t t = s[0] ^ (s[0] >> 2);
  s[0] = s[1];
  s[1] = s[2];
  s[2] = s[3];
  s[3] = s[4];
  s[4] = (s[4] ^ (s[4] << 4)) ^ (t ^ (t << 1));
  s[5] += 362437u;
  return s[5] + s[4];
}

namespace {

constexpr int64_t kW1 = 6, kW2 = 24;

float xorwow_uniform(uint32_t *s, float lo, float hi) {
  const uint32_t r = xorwow_next(s);
  const uint32_t bits = (r & 0x7FFFFFu) | 0x3F800000u;
  float u;
  std::memcpy(&u, &bits, 4);
  u -= 1.0f;
  return lo + (hi - lo) * u;
}

uint32_t *gen2_lane(const Memory &m, EngineState &st, int64_t p) {
  std::vector<uint32_t> &s = st.xorwow();
  if ((p + 1) * kW2 > static_cast<int64_t>(s.size())) unsupported(m, "outs[0]", "more than 128 partitions");
  return s.data() + p * kW2;
}

uint32_t lfsr_next(uint32_t &s) {
  const uint32_t b = (s >> 31) ^ (s >> 21) ^ (s >> 1) ^ s;
  s = (s << 1) | (b & 1u);
  return s;
}

uint32_t pcg32_next(uint32_t *w) {
  uint64_t old = uint64_t(w[0]) | (uint64_t(w[1]) << 32);
  const uint64_t next = old * 0x5851F42D4C957F2DULL + 0x14057B7EF767814FULL;
  w[0] = static_cast<uint32_t>(next);
  w[1] = static_cast<uint32_t>(next >> 32);
  const uint32_t xorshifted = static_cast<uint32_t>(((old >> 18) ^ old) >> 27);
  const uint32_t rot = static_cast<uint32_t>(old >> 59);
  return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

// Philox-4x32-10 (Random123 / cuRAND constants) on counter w[0..3], key w[4..5]; advances the counter.
void philox_block(uint32_t *w, uint32_t out[4]) {
  uint32_t c[4] = {w[0], w[1], w[2], w[3]};
  uint32_t k0 = w[4], k1 = w[5];
  for (int r = 0; r < 10; ++r) {
    const uint64_t p0 = uint64_t(0xD2511F53u) * c[0], p1 = uint64_t(0xCD9E8D57u) * c[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c[0] = hi1 ^ c[1] ^ k0;
    c[1] = lo1;
    c[2] = hi0 ^ c[3] ^ k1;
    c[3] = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  std::memcpy(out, c, sizeof(c));
  for (int i = 0; i < 4 && ++w[i] == 0; ++i) {
  }
}

void guard_dead_state(uint32_t *w) {
  if ((w[0] | w[1] | w[2] | w[3] | w[4]) == 0) w[4] = 1;
}

} // namespace

void exec_rand(const DynInst &d, Memory &m, EngineState &st) {
  const Access &out = out_ap(d, m, 0);
  const int64_t parts = out.partitions(), n = out.free_elements();
  std::vector<uint32_t> &s = st.rng1();
  if (parts * kW1 > static_cast<int64_t>(s.size())) unsupported(m, "outs[0]", "more than 128 partitions");
  const auto alg = d.inst->f.random_algorithm;
  TileI o(parts, n);
  for (int64_t p = 0; p < parts; ++p) {
    uint32_t *w = s.data() + p * kW1;
    uint32_t blk[4];
    for (int64_t i = 0; i < n; ++i) {
      uint32_t r = 0;
      switch (alg) {
      case isa::RandomAlgorithmKind::LFSR: r = lfsr_next(w[0]); break;
      case isa::RandomAlgorithmKind::PCG32: r = pcg32_next(w); break;
      case isa::RandomAlgorithmKind::PHILOX_1:
        if (i % 4 == 0) philox_block(w, blk);
        r = blk[i % 4];
        break;
      }
      o(p, i) = static_cast<int32_t>(r);
    }
  }
  m.write_i32(out, o.data());
}

void exec_rand2(const DynInst &d, Memory &m, EngineState &st) {
  const Access &out = out_ap(d, m, 0);
  const int64_t parts = out.partitions(), n = out.free_elements();
  const std::vector<float> lo = has_in(d, 0) ? per_partition(d, m, 0, parts) : std::vector<float>(size_t(parts), 0.0f);
  const std::vector<float> hi = has_in(d, 1) ? per_partition(d, m, 1, parts) : std::vector<float>(size_t(parts), 1.0f);
  Tile o(parts, n);
  for (int64_t p = 0; p < parts; ++p) {
    uint32_t *s = gen2_lane(m, st, p);
    for (int64_t i = 0; i < n; ++i) o(p, i) = xorwow_uniform(s, lo[size_t(p)], hi[size_t(p)]);
  }
  m.write_f32(out, o.data());
}

void exec_rng(const DynInst &d, Memory &m, EngineState &st) {
  const Access &out = out_ap(d, m, 0);
  const int64_t parts = out.partitions(), n = out.free_elements();
  TileI o(parts, n);
  for (int64_t p = 0; p < parts; ++p) {
    uint32_t *s = gen2_lane(m, st, p);
    for (int64_t i = 0; i < n; ++i) o(p, i) = static_cast<int32_t>(xorwow_next(s));
  }
  m.write_i32(out, o.data());
}

void exec_dropout(const DynInst &d, Memory &m, EngineState &st) {
  const Access &in = in_ap(d, m, 0);
  const Access &out = out_ap(d, m, 0);
  require_same_count(m, in, out, "outs[0]");
  const int64_t parts = in.partitions(), n = in.free_elements();
  const std::vector<float> prob = per_partition(d, m, 1, parts);
  const bool keep_thr = d.inst->f.is_keep_threshold;
  Tile x = read_tile(m, in);
  for (int64_t p = 0; p < parts; ++p) {
    uint32_t *s = gen2_lane(m, st, p);
    const float pr = prob[static_cast<size_t>(p)];
    for (int64_t i = 0; i < n; ++i) {
      const bool below = xorwow_uniform(s, 0.0f, 1.0f) < pr;
      if (below != keep_thr) x(p, i) = 0.0f;
    }
  }
  m.write_f32(out, x.data());
}

void exec_set_rand_state(const DynInst &d, Memory &m, EngineState &st) {
  if (!has_in(d, 0)) unsupported(m, "ins[0]", "a seed or a state tensor is required");
  const isa::Arg &a = d.inst->ins[0];
  if (a.kind == isa::ArgKind::Immediate) {
    st.host_rng().seed(static_cast<uint64_t>(static_cast<int64_t>(imm_value(d, 0))));
    return;
  }
  if (a.kind == isa::ArgKind::ImmArray) {
    if (a.imm_array.size() != 8) unsupported(m, "ins[0]", "the gen-1 wire seed is 8 u32 values");
    std::vector<uint32_t> &s = st.rng1();
    const int64_t parts = static_cast<int64_t>(s.size()) / kW1;
    for (int64_t p = 0; p < parts; ++p) {
      uint32_t *w = s.data() + p * kW1;
      w[0] = static_cast<uint32_t>(p << 24) | (static_cast<uint32_t>(static_cast<int64_t>(a.imm_array[0])) & 0xFFFFFFu);
      for (int k = 1; k < kW1; ++k) w[k] = static_cast<uint32_t>(static_cast<int64_t>(a.imm_array[static_cast<size_t>(k)]));
      guard_dead_state(w);
    }
    return;
  }
  const Access &src = in_ap(d, m, 0);
  const int64_t parts = src.partitions(), per = src.free_elements();
  if (per != kW1 && per != kW2)
    unsupported(m, "ins[0]", "a random state has 6 (gen-1) or 24 (gen-2 XORWOW) u32 per partition, got " +
                                 std::to_string(per));
  std::vector<uint32_t> &dst = per == kW1 ? st.rng1() : st.xorwow();
  if (parts * per > static_cast<int64_t>(dst.size())) unsupported(m, "ins[0]", "more than 128 partitions");
  TileI v = read_tile_i32(m, src);
  for (int64_t p = 0; p < parts; ++p) {
    uint32_t *w = dst.data() + p * per;
    for (int64_t k = 0; k < per; ++k) w[k] = static_cast<uint32_t>(v(p, k));
    for (int64_t lane = 0; lane < per / kW1; ++lane) guard_dead_state(w + lane * kW1);
  }
}

void exec_get_rand_state(const DynInst &d, Memory &m, EngineState &st) {
  const Access &out = out_ap(d, m, 0);
  // GetRandState with a state-tensor input is birsim's doCopy snapshot (reference 2: IT58 = doCopy).
  if (has_in_ap(d, 0)) return move_elements(m, in_ap(d, m, 0), out, nullptr);
  const int64_t parts = out.partitions(), per = out.free_elements();
  if (per != kW1 && per != kW2)
    unsupported(m, "outs[0]", "a random state has 6 (gen-1) or 24 (gen-2 XORWOW) u32 per partition, got " +
                                  std::to_string(per));
  const std::vector<uint32_t> &src = per == kW1 ? st.rng1() : st.xorwow();
  if (parts * per > static_cast<int64_t>(src.size())) unsupported(m, "outs[0]", "more than 128 partitions");
  std::vector<int32_t> v(static_cast<size_t>(parts * per));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(src[i]);
  m.write_i32(out, v.data());
}

} // namespace neuronsim::engines::ops
