// Random numbers: Rand, Rand2, Rng, Dropout and the random state (engines/ops/random.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <random>

#include "engines/program_builder.hpp"

// The helpers below live in namespace test_ops_random, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_ops_random {

using namespace neuronsim;
using namespace neuronsim::testing;

namespace {
isa::Arg ImmArray(std::vector<double> v) {
  isa::Arg a;
  a.kind = isa::ArgKind::ImmArray;
  a.dtype = Dtype::uint32;
  a.imm_array = std::move(v);
  a.json_kind = "imm_array";
  return a;
}
using V = std::vector<float>;
using U = std::vector<uint32_t>;
U raw_u32(const Harness &h, const TensorHandle &t) {
  Access a = whole(t);
  U v(static_cast<size_t>(a.partitions() * a.free_elements()));
  h.mem->read_raw(a, reinterpret_cast<uint8_t *>(v.data()));
  return v;
}
} // namespace

// XORWOW from the default {1,1,1,1,1,1}: t = 1 ^ (1 >> 2) = 1, s4 = (1 ^ 16) ^ (1 ^ 2) = 18,
// s5 = 1 + 362437 = 362438 -> 362438 + 18 = 362456. Rand2 on [0, 1): mantissa 362456 / 2^23 (362456 < 2^23).
TEST(OpsRandom, XorwowRngAndRand2FirstDraws) {
  Harness h;
  auto r = h.b.sbuf("r", {1, 1}, Dtype::uint32), u = h.b.sbuf("u", {1, 1}), w = h.b.sbuf("w", {1, 1});
  h.b.add(InstructionType::Rng, {}, {P(r.all())});
  h.b.add(InstructionType::Rand2, {I(2), I(4)}, {P(w.all())});
  h.place();
  h.run();
  uint32_t bits = 0;
  h.mem->read_raw(whole(r), reinterpret_cast<uint8_t *>(&bits));
  EXPECT_EQ(bits, 362456u);
  // The second draw (state advanced once): recompute the first draw on a fresh engine state for Rand2 on [0, 1).
  Harness g;
  auto u2 = g.b.sbuf("u", {1, 1});
  g.b.add(InstructionType::Rand2, {}, {P(u2.all())});
  g.place();
  g.run();
  EXPECT_EQ(g.get(u2)[0], 362456.0f / 8388608.0f);
  const float v = h.get(w)[0];
  EXPECT_GE(v, 2.0f);
  EXPECT_LT(v, 4.0f);
  (void)u;
}

// Rand2 with per-partition [P, 1] bounds: every partition's lane starts at the default state, so both draw
// u = 362456 / 2^23 first (above): p0 on [0, 1) gives u, p1 on [10, 12) gives 10 + 2u (fp32 arithmetic).
TEST(OpsRandom, Rand2PerPartitionBounds) {
  Harness h;
  auto lo = h.b.sbuf("lo", {2, 1}), hi = h.b.sbuf("hi", {2, 1}), w = h.b.sbuf("w", {2, 1});
  h.b.add(InstructionType::Rand2, {P(lo.all()), P(hi.all())}, {P(w.all())});
  h.place();
  h.set(lo, {0, 10});
  h.set(hi, {1, 12});
  h.run();
  const float u = 362456.0f / 8388608.0f;
  EXPECT_EQ(h.get(w), (V{u, 10.0f + 2.0f * u}));
}

// LFSR taps {32,22,2,1} on word 0 = 1: b = 1 -> 3; b = (3>>1)^3 = 2 -> bit 0 -> 6; b = 3^6 = 5 -> 13.
// Philox-4x32-10 with counter 0 and key 0 is the Random123 known-answer vector.
// PCG32 from state 0 outputs 0 and moves the state to the increment 0x14057B7EF767814F.
TEST(OpsRandom, Gen1LfsrPhiloxPcg32) {
  Harness h;
  auto l = h.b.sbuf("l", {1, 3}, Dtype::uint32), ph = h.b.sbuf("ph", {1, 4}, Dtype::uint32);
  auto pc = h.b.sbuf("pc", {1, 1}, Dtype::uint32), st = h.b.sbuf("st", {1, 6}, Dtype::uint32);
  h.b.add(InstructionType::Rand, {}, {P(l.all())}).random_algorithm(isa::RandomAlgorithmKind::LFSR);
  h.b.add(InstructionType::Rand, {}, {P(ph.all())}).random_algorithm(isa::RandomAlgorithmKind::PHILOX_1);
  h.b.add(InstructionType::Rand, {}, {P(pc.all())}).random_algorithm(isa::RandomAlgorithmKind::PCG32);
  h.b.add(InstructionType::RandGetState, {}, {P(st.all())});
  h.place();
  h.exec(0);
  std::fill(h.st.rng1().begin(), h.st.rng1().begin() + 6, 0u);
  h.exec(1);
  std::fill(h.st.rng1().begin(), h.st.rng1().begin() + 6, 0u);
  h.exec(2);
  h.exec(3);
  std::vector<uint32_t> v(4);
  h.mem->read_raw(whole(l), reinterpret_cast<uint8_t *>(v.data()));
  EXPECT_EQ(std::vector<uint32_t>(v.begin(), v.begin() + 3), (std::vector<uint32_t>{3, 6, 13}));
  h.mem->read_raw(whole(ph), reinterpret_cast<uint8_t *>(v.data()));
  EXPECT_EQ(v, (std::vector<uint32_t>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  h.mem->read_raw(whole(pc), reinterpret_cast<uint8_t *>(v.data()));
  EXPECT_EQ(v[0], 0u);
  std::vector<uint32_t> s(6);
  h.mem->read_raw(whole(st), reinterpret_cast<uint8_t *>(s.data()));
  EXPECT_EQ(s[0], 0xF767814Fu);
  EXPECT_EQ(s[1], 0x14057B7Eu);
}

// State round trip; an all-zero gen-1 state is guarded (word 4 = 1); an immediate seeds MT19937-64.
TEST(OpsRandom, SetGetStateAndSeed) {
  Harness h;
  auto in = h.b.sbuf("in", {2, 24}, Dtype::uint32), out = h.b.sbuf("out", {2, 24}, Dtype::uint32);
  auto z = h.b.sbuf("z", {1, 6}, Dtype::uint32), z2 = h.b.sbuf("z2", {1, 6}, Dtype::uint32);
  h.b.add(InstructionType::RandSetState, {P(in.all())}, {});
  h.b.add(InstructionType::RandGetState, {}, {P(out.all())});
  h.b.add(InstructionType::SetRandState, {P(z.all())}, {});
  h.b.add(InstructionType::RandGetState, {}, {P(z2.all())});
  h.b.add(InstructionType::SetRandState, {I(42)}, {});
  h.place();
  std::vector<uint32_t> seed(48);
  for (uint32_t i = 0; i < 48; ++i) seed[i] = 1000 + i;
  h.mem->write_raw(whole(in), reinterpret_cast<const uint8_t *>(seed.data()));
  std::vector<uint32_t> zeros(6, 0);
  h.mem->write_raw(whole(z), reinterpret_cast<const uint8_t *>(zeros.data()));
  h.run();
  std::vector<uint32_t> got(48);
  h.mem->read_raw(whole(out), reinterpret_cast<uint8_t *>(got.data()));
  EXPECT_EQ(got, seed);
  std::vector<uint32_t> g(6);
  h.mem->read_raw(whole(z2), reinterpret_cast<uint8_t *>(g.data()));
  EXPECT_EQ(g, (std::vector<uint32_t>{0, 0, 0, 0, 1, 0}));
  std::mt19937_64 ref(42);
  EXPECT_EQ(h.st.host_rng()(), ref());
}

// Dropout with probability 1 drops every element; as a keep threshold it keeps every element.
TEST(OpsRandom, DropoutThresholds) {
  Harness h;
  auto x = h.b.sbuf("x", {2, 3}), d = h.b.sbuf("d", {2, 3}), k = h.b.sbuf("k", {2, 3}), z = h.b.sbuf("z", {2, 3});
  h.b.add(InstructionType::Dropout, {P(x.all()), I(1)}, {P(d.all())});
  h.b.add(InstructionType::Dropout, {P(x.all()), I(1)}, {P(k.all())}).is_keep_threshold(true);
  h.b.add(InstructionType::Dropout, {P(x.all()), I(0)}, {P(z.all())});
  h.place();
  h.set(x, {1, 2, 3, 4, 5, 6});
  h.run();
  EXPECT_EQ(h.get(d), (V{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(h.get(k), (V{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(h.get(z), (V{1, 2, 3, 4, 5, 6}));
}

// SetRandState with an 8-value immediate array is the gen-1 wire seed (random.cpp, reference
// sim-bn-rng-collective-dma.md 2.3): per partition p, word0 = (p << 24) | (imm[0] & 0xFFFFFF), words 1..5 = imm[1..5].
// Seed {0x12345678, 2, 3, 4, 5, 6, 7, 8} on 2 partitions:
//   p0: 0x00345678 2 3 4 5 6      p1: 0x01345678 2 3 4 5 6
// Seed {0, 0, 0, 0, 0, 7, 0, 0}: p0 words 0..4 are all zero -> the dead-state guard sets word 4 = 1:
//   p0: 0 0 0 0 1 7               p1: 0x01000000 0 0 0 0 7
// One LFSR step on word 0 of the first seed (taps {32,22,2,1}: b = s>>31 ^ s>>21 ^ s>>1 ^ s, s = s << 1 | b & 1):
//   p0 s = 0x00345678: bit0 of (0 ^ 0x1 ^ 0x1A2B3C ^ 0x345678) = 1 ^ 0 ^ 0 = 1 -> 0x0068ACF1
// GetRandState with an input access is birsim's doCopy snapshot (IT58 = doCopy): it copies the access.
TEST(OpsRandom, GetRandStateAfterAKnownSeed) {
  Harness h;
  auto s1 = h.b.sbuf("s1", {2, 6}, Dtype::uint32), s2 = h.b.sbuf("s2", {2, 6}, Dtype::uint32);
  auto r = h.b.sbuf("r", {1, 1}, Dtype::uint32), s3 = h.b.sbuf("s3", {1, 6}, Dtype::uint32);
  auto snap = h.b.sbuf("snap", {2, 6}, Dtype::uint32);
  h.b.add(InstructionType::SetRandState, {ImmArray({0x12345678, 2, 3, 4, 5, 6, 7, 8})}, {});
  h.b.add(InstructionType::GetRandState, {}, {P(s1.all())});
  h.b.add(InstructionType::Rand, {}, {P(r.all())}).random_algorithm(isa::RandomAlgorithmKind::LFSR);
  h.b.add(InstructionType::GetRandState, {}, {P(s3.all())});
  h.b.add(InstructionType::SetRandState, {ImmArray({0, 0, 0, 0, 0, 7, 0, 0})}, {});
  h.b.add(InstructionType::GetRandState, {}, {P(s2.all())});
  h.b.add(InstructionType::GetRandState, {P(s1.all())}, {P(snap.all())});
  h.place();
  h.run();
  EXPECT_EQ(raw_u32(h, s1), (U{0x00345678u, 2, 3, 4, 5, 6, 0x01345678u, 2, 3, 4, 5, 6}));
  EXPECT_EQ(raw_u32(h, r), (U{0x0068ACF1u}));
  EXPECT_EQ(raw_u32(h, s3), (U{0x0068ACF1u, 2, 3, 4, 5, 6}));
  EXPECT_EQ(raw_u32(h, s2), (U{0, 0, 0, 0, 1, 7, 0x01000000u, 0, 0, 0, 0, 7}));
  EXPECT_EQ(raw_u32(h, snap), raw_u32(h, s1));
}

TEST(OpsRandom, GetRandStateRefusesAStateThatIsNeither6Nor24Words) {
  Harness h;
  auto s = h.b.sbuf("s", {1, 5}, Dtype::uint32);
  h.b.add(InstructionType::GetRandState, {}, {P(s.all())});
  h.place();
  try {
    h.run();
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "outs[0]");
  }
}

}  // namespace test_ops_random
