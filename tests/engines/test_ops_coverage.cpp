// engines/ops coverage families: batch norm, search (top-8), random, shuffles, indirect, registers,
// collectives, DMA CCE. Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;

namespace {
using V = std::vector<float>;
} // namespace

// x = 1 2 3 4: lane A {1, 3} (n 2, mean 2, M2 2), lane B {2, 4} (n 2, mean 3, M2 2); the Chan merge gives the
// population mean 2.5 and variance 1.25.
TEST(OpsBatchNorm, StatsAndAggregateWelfordChan) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 4}), s = h.b.sbuf("s", {1, 6}), g = h.b.sbuf("g", {1, 2});
  h.b.add(InstructionType::BNStats, {P(x.all())}, {P(s.all())});
  h.b.add(InstructionType::BNStatsAggregate, {P(s.all())}, {P(g.all())});
  h.place();
  h.set(x, {1, 2, 3, 4});
  h.run();
  EXPECT_EQ(h.get(s), (V{2, 2, 2, 2, 3, 2}));
  EXPECT_EQ(h.get(g), (V{2.5f, 1.25f}));
}

// apply_transpose reduces over partitions: [4, 1] transposed to [1, 4].
TEST(OpsBatchNorm, StatsApplyTranspose) {
  Harness h;
  auto x = h.b.sbuf("x", {4, 1}), s = h.b.sbuf("s", {1, 6});
  h.b.add(InstructionType::BNStats, {P(x.all())}, {P(s.all())}).apply_transpose(true);
  h.place();
  h.set(x, {1, 2, 3, 4});
  h.run();
  EXPECT_EQ(h.get(s), (V{2, 2, 2, 2, 3, 2}));
}

// BNGradients: x 1 2 3 4, dy 0 0 1 1, mean 2.5, vf 2: t = (x - 2.5) * dy * 2 = 0 0 1 3 ->
// (sum dy, sum t*vf, sum t) = (2, 8, 4). Backprop: dx = (dy * N - ((x - m) * Bc + A)) * scale with N = 2,
// x 1 2, dy 1 2, m 1, (scale, A, Bc) = (0.5, 1, 2): (2 - 1) * 0.5 = 0.5, (4 - 3) * 0.5 = 0.5.
TEST(OpsBatchNorm, GradientsBackpropAndBackprop2) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 4}), dy = h.b.sbuf("dy", {1, 4}), gr = h.b.sbuf("gr", {1, 3});
  auto x2 = h.b.sbuf("x2", {1, 2}), dy2 = h.b.sbuf("dy2", {1, 2}), c = h.b.sbuf("c", {1, 3});
  auto ca = h.b.sbuf("ca", {1, 1}), cb = h.b.sbuf("cb", {1, 2}), o1 = h.b.sbuf("o1", {1, 2}), o2 = h.b.sbuf("o2", {1, 2});
  h.b.add(InstructionType::BNGradients, {P(x.all()), P(dy.all()), I(2.5), I(2)}, {P(gr.all())});
  h.b.add(InstructionType::BNBackprop, {P(x2.all()), P(dy2.all()), P(c.all()), I(1)}, {P(o1.all())})
      .total_elements(2);
  h.b.add(InstructionType::BNBackprop2, {P(x2.all()), P(dy2.all()), P(ca.all()), P(cb.all()), I(1)}, {P(o2.all())})
      .total_elements(2);
  h.place();
  h.set(x, {1, 2, 3, 4});
  h.set(dy, {0, 0, 1, 1});
  h.set(x2, {1, 2});
  h.set(dy2, {1, 2});
  h.set(c, {0.5f, 1, 2});
  h.set(ca, {0.5f});
  h.set(cb, {1, 2});
  h.run();
  EXPECT_EQ(h.get(gr), (V{2, 8, 4}));
  EXPECT_EQ(h.get(o1), (V{0.5f, 0.5f}));
  EXPECT_EQ(h.get(o2), (V{0.5f, 0.5f}));
}

// data 5 1 9 9 3 7 2 8 6 4: top 8 = 9 9 8 7 6 5 4 3; first-occurrence indices one-to-one: 2 3 7 5 8 0 9 4.
TEST(OpsSearch, Max8MaxIndexMatchReplace) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 10}), mx = h.b.sbuf("mx", {1, 8}), ix = h.b.sbuf("ix", {1, 8}, Dtype::uint32);
  auto mr = h.b.sbuf("mr", {1, 10}), mr2 = h.b.sbuf("mr2", {1, 10}), ix2 = h.b.sbuf("ix2", {1, 8}, Dtype::uint32);
  h.b.add(InstructionType::Max, {P(x.all())}, {P(mx.all())});
  h.b.add(InstructionType::MaxIndex, {P(mx.all()), P(x.all())}, {P(ix.all())});
  h.b.add(InstructionType::MatchReplace, {P(mx.all()), P(x.all())}, {P(mr.all())}).imm_value(-100);
  h.b.add(InstructionType::MaxIndexAndMatchReplace, {P(mx.all()), P(x.all())}, {P(mr2.all()), P(ix2.all())})
      .imm_value(-100);
  h.place();
  h.set(x, {5, 1, 9, 9, 3, 7, 2, 8, 6, 4});
  h.run();
  EXPECT_EQ(h.get(mx), (V{9, 9, 8, 7, 6, 5, 4, 3}));
  std::vector<uint32_t> idx(8);
  h.mem->read_raw(whole(ix), reinterpret_cast<uint8_t *>(idx.data()));
  EXPECT_EQ(idx, (std::vector<uint32_t>{2, 3, 7, 5, 8, 0, 9, 4}));
  EXPECT_EQ(h.get(mr), (V{-100, 1, -100, -100, -100, -100, 2, -100, -100, -100}));
  EXPECT_EQ(h.get(mr2), h.get(mr));
  // MatchReplace walks vals from slot 7 down to 0 (nki.isa.nc_match_replace8): the two 9s are paired with their
  // matches highest slot first, slot 1 takes position 2 and slot 0 position 3 (MaxIndex above: ascending).
  h.mem->read_raw(whole(ix2), reinterpret_cast<uint8_t *>(idx.data()));
  EXPECT_EQ(idx, (std::vector<uint32_t>{3, 2, 7, 5, 8, 0, 9, 4}));
}

// The public nki.isa.nc_match_replace8 page's duplicate-vals example: data [1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8],
// vals [3, 8, 8, 8, 8, 8, 8, 8] -> dst_idx [2, 10, 9, 8, 7, 6, 5, 4] (vals walked from slot 7 down: slot 7 takes
// the first 8 at position 4, slot 1 the last at 10; slot 0's 3 is at 2). Every match is replaced by imm.
TEST(OpsSearch, MatchReplace8DuplicateValsFollowTheDocumentedExample) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 11}), v = h.b.sbuf("v", {1, 8});
  auto mr = h.b.sbuf("mr", {1, 11}), ix = h.b.sbuf("ix", {1, 8}, Dtype::uint32);
  h.b.add(InstructionType::MaxIndexAndMatchReplace, {P(v.all()), P(x.all())}, {P(mr.all()), P(ix.all())})
      .imm_value(-1);
  h.place();
  h.set(x, {1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8});
  h.set(v, {3, 8, 8, 8, 8, 8, 8, 8});
  h.run();
  std::vector<uint32_t> idx(8);
  h.mem->read_raw(whole(ix), reinterpret_cast<uint8_t *>(idx.data()));
  EXPECT_EQ(idx, (std::vector<uint32_t>{2, 10, 9, 8, 7, 6, 5, 4}));
  EXPECT_EQ(h.get(mr), (V{1, 2, -1, 4, -1, -1, -1, -1, -1, -1, -1}));
}

TEST(OpsSearch, MaxIndexMissIsAllOnes) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 8}), v = h.b.sbuf("v", {1, 8}), ix = h.b.sbuf("ix", {1, 8}, Dtype::uint32);
  h.b.add(InstructionType::MaxIndex, {P(v.all()), P(x.all())}, {P(ix.all())});
  h.place();
  h.set(x, {0, 1, 2, 3, 4, 5, 6, 7});
  h.set(v, {7, 42, 0, 0, 7, 7, 7, 7});  // 42 absent; the second 0 and the later 7s find no unused occurrence
  h.run();
  std::vector<uint32_t> idx(8);
  h.mem->read_raw(whole(ix), reinterpret_cast<uint8_t *>(idx.data()));
  EXPECT_EQ(idx, (std::vector<uint32_t>{7, 0xFFFFFFFFu, 0, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu,
                                        0xFFFFFFFFu}));
}

// nonzero of 0 3 0 5 with offset 10: 11 13, padding -1 -1, count 2. Sequence bounds of ids 1 1 2 0 2:
// starts 0 0 2 5(pad: n) 4, ends (exclusive) 2 2 3 -1 5.
TEST(OpsSearch, NonzeroWithCountAndSequenceBounds) {
  Harness h;
  auto x = h.b.sbuf("x", {1, 4}), o = h.b.sbuf("o", {1, 5}, Dtype::int32);
  auto ids = h.b.sbuf("ids", {1, 5}), b = h.b.sbuf("b", {1, 10}, Dtype::int32);
  h.b.add(InstructionType::NonzeroWithCount, {P(x.all()), I(10)}, {P(o.all())});
  h.b.add(InstructionType::GetSequenceBounds, {P(ids.all())}, {P(b.all())});
  h.place();
  h.set(x, {0, 3, 0, 5});
  h.set(ids, {1, 1, 2, 0, 2});
  h.run();
  EXPECT_EQ(h.get(o), (V{11, 13, -1, -1, 2}));
  EXPECT_EQ(h.get(b), (V{0, 0, 2, 5, 4, 2, 2, 3, -1, 5}));
}

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
  std::fill(h.st.rng1.begin(), h.st.rng1.begin() + 6, 0u);
  h.exec(1);
  std::fill(h.st.rng1.begin(), h.st.rng1.begin() + 6, 0u);
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
  EXPECT_EQ(h.st.rng(), ref());
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

// StreamShuffle: output partition i takes input partition 31 - i, except mask 255 at i = 5 (untouched).
// StreamTranspose of [2, 3] (inside one 32x32 tile) is the plain transpose.
TEST(OpsShuffle, StreamShuffleAndTranspose) {
  Harness h;
  auto x = h.b.sbuf("x", {32, 1}), y = h.b.sbuf("y", {32, 1});
  auto a = h.b.sbuf("a", {2, 3}), t = h.b.sbuf("t", {3, 2});
  std::vector<int64_t> mask(32);
  for (int i = 0; i < 32; ++i) mask[static_cast<size_t>(i)] = 31 - i;
  mask[5] = 255;
  h.b.add(InstructionType::StreamShuffle, {P(x.all())}, {P(y.all())}).mask(mask);
  h.b.add(InstructionType::StreamTranspose, {P(a.all())}, {P(t.all())});
  h.place();
  V xs(32), ys(32, -1);
  for (int i = 0; i < 32; ++i) xs[static_cast<size_t>(i)] = float(i);
  h.set(x, xs);
  h.set(y, ys);
  h.set(a, {1, 2, 3, 4, 5, 6});
  h.run();
  V want(32);
  for (int i = 0; i < 32; ++i) want[static_cast<size_t>(i)] = float(31 - i);
  want[5] = -1;
  EXPECT_EQ(h.get(y), want);
  EXPECT_EQ(h.get(t), (V{1, 4, 2, 5, 3, 6}));
}

// IndirectLoad rows 2, skip, 0; IndirectSaveAccumulate with a duplicate index adds in list order;
// IndirectSave keeps the last writer; Gather per partition.
TEST(OpsIndirect, LoadSaveAccumulateGather) {
  Harness h;
  auto tab = h.b.sbuf("tab", {4, 2}), idx = h.b.sbuf("idx", {1, 3}, Dtype::int32), out = h.b.sbuf("out", {3, 2});
  auto acc = h.b.sbuf("acc", {1, 4}), vals = h.b.sbuf("vals", {1, 3}), idx2 = h.b.sbuf("idx2", {1, 3}, Dtype::int32);
  auto sv = h.b.sbuf("sv", {1, 4});
  auto data = h.b.sbuf("data", {2, 4}), gi = h.b.sbuf("gi", {2, 2}, Dtype::int32), go = h.b.sbuf("go", {2, 2});
  h.b.add(InstructionType::IndirectLoad, {P(tab.all()), P(idx.all())}, {P(out.all())});
  h.b.add(InstructionType::IndirectSaveAccumulate, {P(vals.all()), P(idx2.all())}, {P(acc.all())});
  h.b.add(InstructionType::IndirectSave, {P(vals.all()), P(idx2.all())}, {P(sv.all())});
  h.b.add(InstructionType::Gather, {P(data.all()), P(gi.all())}, {P(go.all())});
  h.place();
  h.set(tab, {0, 1, 10, 11, 20, 21, 30, 31});
  h.set(idx, {2, -1, 0});
  h.set(out, {9, 9, 9, 9, 9, 9});
  h.set(acc, {0, 0, 0, 0});
  h.set(sv, {0, 0, 0, 0});
  h.set(vals, {1, 2, 3});
  h.set(idx2, {1, 1, 3});
  h.set(data, {10, 11, 12, 13, 20, 21, 22, 23});
  h.set(gi, {3, 0, 1, 1});
  h.run();
  EXPECT_EQ(h.get(out), (V{20, 21, 9, 9, 0, 1}));
  EXPECT_EQ(h.get(acc), (V{0, 3, 0, 3}));
  EXPECT_EQ(h.get(sv), (V{0, 2, 0, 3}));
  EXPECT_EQ(h.get(go), (V{13, 10, 21, 21}));
}

// IndirectSaveAccumulate's `op` goes through AluOpType2MemoryReduction ({copy, add}): bypass overwrites (the last
// duplicate wins: 2 at entry 1, 3 at entry 3 over a table of 5s), explicit add accumulates onto the 5s
// (5 + 1 + 2 = 8, 5 + 3 = 8), max is refused naming `op`.
TEST(OpsIndirect, SaveAccumulateFollowsItsOp) {
  for (AluOp op : {AluOp::bypass, AluOp::add, AluOp::max}) {
    Harness h;
    auto acc = h.b.sbuf("acc", {1, 4}), vals = h.b.sbuf("vals", {1, 3}), idx = h.b.sbuf("idx", {1, 3}, Dtype::int32);
    h.b.add(InstructionType::IndirectSaveAccumulate, {P(vals.all()), P(idx.all())}, {P(acc.all())}).op(op);
    h.place();
    h.set(acc, {5, 5, 5, 5});
    h.set(vals, {1, 2, 3});
    h.set(idx, {1, 1, 3});
    if (op == AluOp::max) {
      try {
        h.run();
        FAIL();
      } catch (const SemanticError &e) {
        EXPECT_EQ(e.context().field, "op");
      }
      continue;
    }
    h.run();
    EXPECT_EQ(h.get(acc), op == AluOp::add ? (V{5, 8, 5, 8}) : (V{5, 2, 5, 3})) << alu_name(op);
  }
}

// GenericIndirectLoad on a [2, 3] table (dims padded to [1, 1, 2, 3]: coef Y = 3, X = 1): (y, x) = (1, 2) -> 5,
// (0, 1) -> 1. TensorCopyDynamicSrc: the source start moves by the register value (2 elements).
TEST(OpsIndirect, GenericIndirectAndDynamicCopy) {
  Harness h;
  auto tab = h.b.sbuf("tab", {2, 3}), iy = h.b.sbuf("iy", {1, 2}, Dtype::int32), ix = h.b.sbuf("ix", {1, 2}, Dtype::int32);
  auto o = h.b.sbuf("o", {1, 2}), src = h.b.sbuf("src", {1, 6}), dst = h.b.sbuf("dst", {1, 2});
  h.b.add(InstructionType::GenericIndirectLoad, {P(tab.all()), P(iy.all()), P(ix.all())}, {P(o.all())})
      .indirect_dims({2, 3});
  h.b.add(InstructionType::RegisterMove, {I(2)}, {R("off")});
  h.b.add(InstructionType::TensorCopyDynamicSrc, {P(src.tile(0, 1, 0, 2)), R("off")}, {P(dst.all())});
  h.place();
  h.set(tab, {0, 1, 2, 3, 4, 5});
  h.set(iy, {1, 0});
  h.set(ix, {2, 1});
  h.set(src, {0, 10, 20, 30, 40, 50});
  h.run();
  EXPECT_EQ(h.get(o), (V{5, 1}));
  EXPECT_EQ(h.get(dst), (V{20, 30}));
}

// DMA CCE: add with constants 2 and 0.5 -> 2a + 0.5b; max folds from the first input. DMADescriptorCopy copies.
TEST(OpsDma, CceAddMaxAndDescriptorCopy) {
  Harness h;
  auto a = h.b.sbuf("a", {1, 3}), b = h.b.sbuf("b", {1, 3}), s = h.b.sbuf("s", {1, 3}), mx = h.b.sbuf("mx", {1, 3});
  auto c = h.b.sbuf("c", {1, 3});
  h.b.add(InstructionType::DMACopy, {P(a.all()), P(b.all())}, {P(s.all())})
      .copy_mode(isa::CopyMode::CCE).cce_op(AluOp::add).constants({2.0, 0.5});
  h.b.add(InstructionType::DMACopy, {P(a.all()), P(b.all())}, {P(mx.all())})
      .copy_mode(isa::CopyMode::CCE).cce_op(AluOp::max);
  h.b.add(InstructionType::DMADescriptorCopy, {P(b.all())}, {P(c.all())});
  // The descriptor form names its reduction `op`: 2a + 0.5b again.
  auto sd = h.b.sbuf("sd", {1, 3});
  h.b.add(InstructionType::DMADescriptorCCE, {P(a.all()), P(b.all())}, {P(sd.all())}).op(AluOp::add).constants({2.0, 0.5});
  h.place();
  h.set(a, {-1, 2, -3});
  h.set(b, {-4, 4, -2});
  h.run();
  EXPECT_EQ(h.get(s), (V{-4, 6, -7}));
  EXPECT_EQ(h.get(sd), (V{-4, 6, -7}));
  EXPECT_EQ(h.get(mx), (V{-1, 4, -2}));
  EXPECT_EQ(h.get(c), (V{-4, 4, -2}));
}

// Registers: r0 = 7; r1 = r0 + 5 = 12; r1 saved to a tensor, loaded back into r2, r3 = r2 << 2 = 48, saved.
TEST(OpsRegisters, MoveAluLoadSaveAndRankIds) {
  Harness h;
  auto t = h.b.sbuf("t", {1, 1}, Dtype::int32), u = h.b.sbuf("u", {1, 1}, Dtype::int32);
  auto rk = h.b.sbuf("rk", {1, 2});
  h.b.add(InstructionType::RegisterMove, {I(7)}, {R("r0")});
  h.b.add(InstructionType::RegisterAlu, {R("r0"), I(5)}, {R("r1")}).op(AluOp::add);
  h.b.add(InstructionType::TensorSave, {R("r1")}, {P(t.all())});
  h.b.add(InstructionType::TensorLoad, {P(t.all())}, {R("r2")});
  h.b.add(InstructionType::RegisterAlu, {R("r2"), I(2)}, {R("r3")}).op(AluOp::logical_shift_left);
  h.b.add(InstructionType::TensorSave, {R("r3")}, {P(u.all())});
  h.b.add(InstructionType::GetGlobalRankId, {}, {P(rk.all())});
  h.place();
  h.set(rk, {5, 5});
  h.run();
  EXPECT_EQ(h.get(t), (V{12}));
  EXPECT_EQ(h.get(u), (V{48}));
  EXPECT_EQ(h.get(rk), (V{0, 0}));
}

TEST(OpsRegisters, UnsetRegisterIsSimulationError) {
  Harness h;
  h.b.add(InstructionType::RegisterMove, {R("nope")}, {R("r0")});
  h.place();
  EXPECT_THROW(h.run(), SimulationError);
}

// One rank: AllReduce is a copy; a two-member replica group is refused naming replica_groups.
TEST(OpsCollective, SingleRankAllReduceAndMultiRankRefusal) {
  Harness h;
  auto a = h.b.sbuf("a", {1, 2}), b = h.b.sbuf("b", {1, 2});
  h.b.add(InstructionType::CollectiveCompute, {P(a.all())}, {P(b.all())}).op(AluOp::add).replica_groups({{0}});
  h.b.add(InstructionType::CoreBarrier, {}, {});
  h.b.add(InstructionType::CollectiveCompute, {P(a.all())}, {P(b.all())}).op(AluOp::add).replica_groups({{0, 1}});
  h.place();
  h.set(a, {3, 4});
  h.exec(0);
  h.exec(1);
  EXPECT_EQ(h.get(b), (V{3, 4}));
  try {
    h.exec(2);
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "replica_groups");
    EXPECT_NE(std::string(e.what()).find("one NeuronCore"), std::string::npos);
  }
}
