// Single-rank collectives: CollectiveCompute, CollectiveSend / CollectiveRecv (engines/ops/collective.cpp).
// Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "engines/program_builder.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;

namespace {
using V = std::vector<float>;
} // namespace

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

// collective.cpp, single rank: CollectiveRecv from peer 0 (this rank) is a loopback copy of ins[0] to outs[0];
// CollectiveSend to peer 0 has no local effect (its output-less form touches nothing: b keeps 9 9).
TEST(OpsCollective, SendRecvSingleRankLoopback) {
  Harness h;
  auto a = h.b.sbuf("a", {1, 2}), b = h.b.sbuf("b", {1, 2}), c = h.b.sbuf("c", {1, 2});
  h.b.add(InstructionType::CollectiveSend, {P(a.all())}, {}).peer_id(0);
  h.b.add(InstructionType::CollectiveRecv, {P(a.all())}, {P(c.all())}).peer_id(0);
  h.place();
  h.set(a, {3, -4});
  h.set(b, {9, 9});
  h.set(c, {0, 0});
  h.exec(0);
  EXPECT_EQ(h.get(a), (V{3, -4}));
  EXPECT_EQ(h.get(b), (V{9, 9}));
  EXPECT_EQ(h.get(c), (V{0, 0}));
  h.exec(1);
  EXPECT_EQ(h.get(c), (V{3, -4}));
}

// A peer other than rank 0 needs another NeuronCore's buffers: refused naming peer_id.
TEST(OpsCollective, SendRecvToAnotherRankIsRefused) {
  for (auto type : {InstructionType::CollectiveSend, InstructionType::CollectiveRecv}) {
    Harness h;
    auto a = h.b.sbuf("a", {1, 2}), c = h.b.sbuf("c", {1, 2});
    h.b.add(type, {P(a.all())}, {P(c.all())}).peer_id(1);
    h.place();
    try {
      h.run();
      FAIL() << isa::inst_type_name(type);
    } catch (const SemanticError &e) {
      EXPECT_EQ(e.context().field, "peer_id");
      const std::string m = e.what();
      EXPECT_NE(m.find("peer 1"), std::string::npos) << m;
      EXPECT_NE(m.find("one NeuronCore"), std::string::npos) << m;
    }
  }
}
