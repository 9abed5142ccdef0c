// The collective kinds with semantics from the public NKI docs (engines/ops/collective.cpp) on several
// NeuronCores: permutes, the ring's processing rank, AllToAllV, SendRecv and SendRecvCCE, their refusals, each
// kind on one core, their times and the rank expression keys -- numerics by hand-checked vectors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "neuronsim/builder.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/sim/device.hpp"
#include "support/device_tensors.hpp"

using namespace neuronsim;
using builder::Builder;
using builder::TensorHandle;
using isa::AluOp;
using isa::InstructionType;

// The helpers below live in namespace test_device_collectives, so this file shares a unity batch with the other tests of its
// target without its file-local names clashing with theirs (docs/dev/build-time.md).
namespace test_device_collectives {

using test::device::V;
using test::device::expect_same;
using test::device::kNaN;
using test::device::opts;
using test::device::read;
using test::device::whole;
using test::device::write;

namespace {

// A one-instruction program: CollectiveCompute `kind` from the [1, n] SBUF tiles of `in_sizes` (ins[0], ins[1],
// ...) to a [1, out_n] tile, replica group `group`. The tiles are a, b, ... and o.
struct CcProgram {
  isa::Program p;
  std::vector<TensorHandle> ins;
  TensorHandle o;
};
CcProgram cc_program(const std::string &kind, AluOp op, const std::vector<int64_t> &in_sizes, int64_t out_n,
                     const std::vector<std::vector<int64_t>> &groups, isa::Dtype second_dtype = isa::Dtype::float32) {
  Builder b("cc");
  std::vector<TensorHandle> ins;
  std::vector<isa::Arg> args;
  for (size_t i = 0; i < in_sizes.size(); ++i) {
    ins.push_back(b.sbuf(std::string(1, static_cast<char>('a' + i)), {1, in_sizes[i]},
                         i == 1 ? second_dtype : isa::Dtype::float32));
    args.push_back(Builder::ap(ins.back().all()));
  }
  auto o = b.sbuf("o", {1, out_n});
  b.add(InstructionType::CollectiveCompute, args, {Builder::ap(o.all())}).collective_kind(kind).op(op)
      .replica_groups(groups);  // empty: every core of the run
  return {b.finish(), ins, o};
}

isa::Expr shard_expr() {
  isa::Expr s;
  s.kind = isa::Expr::Kind::ShardId;
  s.k = 2;
  return s;
}

// The error of running `d`, or "" when it runs.
template <typename Run> std::string error_of(Run run) {
  try {
    run();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

// PermuteImplicit (NKI collective_permute_implicit): in the rank list [0, 2, 1], a ring in list order, each rank
// receives its predecessor's input: 0 -> 2 -> 1 -> 0. Core i holds {i + 1, 10 (i + 1)}.
//   core 2 <- core 0: {1, 10};  core 1 <- core 2: {3, 30};  core 0 <- core 1: {2, 20}
// (rank order would have given core 1 <- core 0: the list order is what decides.)
TEST(DeviceCollectives, PermuteImplicitReceivesFromThePredecessorInListOrder) {
  CcProgram c = cc_program("PermuteImplicit", AluOp::bypass, {2}, 2, {{0, 2, 1}});
  sim::Device d(c.p, opts(), 3, 1);
  for (int i = 0; i < 3; ++i) write(d.core(i), c.ins[0], {i + 1.0f, 10.0f * (i + 1)});
  d.run();
  EXPECT_EQ(read(d.core(2), c.o), (V{1, 10}));
  EXPECT_EQ(read(d.core(1), c.o), (V{3, 30}));
  EXPECT_EQ(read(d.core(0), c.o), (V{2, 20}));
}

// PermuteReduceImplicit (NKI collective_permute_implicit_reduce): each rank folds its two inputs with doReduction
// (res = ins[0], then op ins[1], the accumulator kept on a NaN), then the ring of two swaps the results.
//   core 0: a {1, -2, NaN, 5},   b {3, 4, 7, NaN}
//   core 1: a {10, 20, 30, 40},  b {1, NaN, 50, -1}
//   add: core 0's {4, 2, NaN, NaN}; core 1's {11, NaN, 80, 39}
//   max (x > acc ? x : acc): core 0's {3, 4, NaN, 5}; core 1's {10, 20 (NaN > 20 false), 50, 40}
//   min (x < acc ? x : acc): core 0's {1, -2, NaN, 5}; core 1's {1, 20, 30, -1}
// Core 0 receives core 1's result and core 1 core 0's.
TEST(DeviceCollectives, PermuteReduceImplicitFoldsTwoInputsAndPassesThemOn) {
  const struct {
    AluOp op;
    V res0, res1;
  } cases[] = {{AluOp::add, {4, 2, kNaN, kNaN}, {11, kNaN, 80, 39}},
               {AluOp::max, {3, 4, kNaN, 5}, {10, 20, 50, 40}},
               {AluOp::min, {1, -2, kNaN, 5}, {1, 20, 30, -1}}};
  for (const auto &k : cases) {
    CcProgram c = cc_program("PermuteReduceImplicit", k.op, {4, 4}, 4, {{0, 1}});
    sim::Device d(c.p, opts(), 2, 1);
    write(d.core(0), c.ins[0], {1, -2, kNaN, 5});
    write(d.core(0), c.ins[1], {3, 4, 7, kNaN});
    write(d.core(1), c.ins[0], {10, 20, 30, 40});
    write(d.core(1), c.ins[1], {1, kNaN, 50, -1});
    d.run();
    expect_same(read(d.core(0), c.o), k.res1, std::string(isa::alu_name(k.op)) + " core 0");
    expect_same(read(d.core(1), c.o), k.res0, std::string(isa::alu_name(k.op)) + " core 1");
  }
  CcProgram bad = cc_program("PermuteReduceImplicit", AluOp::mult, {4, 4}, 4, {{0, 1}});
  sim::Device d(bad.p, opts(), 2, 1);
  EXPECT_NE(error_of([&] { d.run(); }).find("Unsupported OP type 'mult'"), std::string::npos);
}

// GetCurProcessingRankID (NKI collective_permute_implicit_current_processing_rank_id): at iteration k the rank
// group[(pos - k) mod n]. Rank list [0, 2, 1]: core 0 at pos 0, core 2 at pos 1, core 1 at pos 2.
//   k = 0: its own rank: core 0 -> 0, core 1 -> 1, core 2 -> 2
//   k = 1: core 0 -> group[2] = 1, core 2 -> group[0] = 0, core 1 -> group[1] = 2
//   k = 2: core 0 -> group[1] = 2, core 2 -> group[2] = 1, core 1 -> group[0] = 0
//   k = 4 = 1 (mod 3): as k = 1
//   k = register r (RegisterMove 1): as k = 1
TEST(DeviceCollectives, CurProcessingRankFollowsTheRingBackwards) {
  Builder b("cur");
  auto o = b.sbuf("o", {1, 5}, isa::Dtype::int32);
  const int64_t ks[] = {0, 1, 2, 4};
  for (int i = 0; i < 4; ++i)
    b.add(InstructionType::GetCurProcessingRankID, {}, {Builder::ap(o.tile(0, 1, i, 1))})
        .iter_id(ks[i]).channel_id(0).replica_groups({{0, 2, 1}});
  b.add(InstructionType::RegisterMove, {Builder::imm(1, isa::Dtype::int32)}, {Builder::reg("r")});
  b.add(InstructionType::GetCurProcessingRankID, {}, {Builder::ap(o.tile(0, 1, 4, 1))})
      .channel_id(0).replica_groups({{0, 2, 1}});
  isa::Program p = b.finish();
  isa::Expr r;
  r.kind = isa::Expr::Kind::Register;
  r.regref = "r";
  p.insts[5].iter_id_expr.push_back(r);
  sim::Device d(p, opts(), 3, 1);
  d.run();
  EXPECT_EQ(read(d.core(0), o), (V{0, 1, 2, 1, 1}));
  EXPECT_EQ(read(d.core(1), o), (V{1, 2, 0, 2, 2}));
  EXPECT_EQ(read(d.core(2), o), (V{2, 0, 1, 0, 0}));
}

// The refusals around GetCurProcessingRankID, in a test of their own that simulates nothing first (under ASan an
// exception after a SystemC run is misreported, .ci/run): the same program under LNC=2, and an expression-valued
// iter_id at encode.
TEST(DeviceCollectives, CurProcessingRankRefusals) {
  Builder b("cur");
  auto o = b.sbuf("o", {1, 5}, isa::Dtype::int32);
  b.add(InstructionType::GetCurProcessingRankID, {}, {Builder::ap(o.tile(0, 1, 0, 1))})
      .iter_id(1).channel_id(0).replica_groups({{0, 2, 1}});
  const isa::Program p = b.finish();
  isa::Expr r;
  r.kind = isa::Expr::Kind::Register;
  r.regref = "r";
  // Under LNC=2 the group's numbering (cores for the collectives, ranks here) is undocumented: refused, naming it.
  try {
    sim::Device d2(p, opts(), 4, 2);
    ADD_FAILURE() << "GetCurProcessingRankID with a replica group ran under LNC=2";
  } catch (const Error &x) {
    EXPECT_NE(std::string(x.what()).find("instruction 0"), std::string::npos) << x.what();
    EXPECT_NE(std::string(x.what()).find("field 'replica_groups'"), std::string::npos) << x.what();
    EXPECT_NE(std::string(x.what()).find("--lnc 1 only"), std::string::npos) << x.what();
  }

  // No bundle form carries an expression-valued iter_id: encode refuses it naming the field rather than writing
  // the form's plain iter_id (0), which would make the streams part from the BIR.
  Builder b2("enc");
  auto o2 = b2.sbuf("o", {1, 1}, isa::Dtype::int32);
  b2.add(InstructionType::GetCurProcessingRankID, {}, {Builder::ap(o2.tile(0, 1, 0, 1))}).channel_id(0);
  isa::Program pe = b2.finish();
  ASSERT_NO_THROW(isa::encode(pe.insts[0], pe, isa::CoreGen::V3));  // a plain iter_id encodes
  pe.insts[0].iter_id_expr.push_back(r);
  try {
    isa::encode(pe.insts[0], pe, isa::CoreGen::V3);
    ADD_FAILURE() << "an expression-valued iter_id was encoded";
  } catch (const Error &x) {
    EXPECT_NE(std::string(x.what()).find("field 'iter_id'"), std::string::npos) << x.what();
    EXPECT_NE(std::string(x.what()).find("has no bundle form"), std::string::npos) << x.what();
  }
}

// AllToAllV (NKI all_to_all_v): flat buffers, metadata ins[1] of uint32 rows x 2 ranks. Inputs: core 0
// {1, 2, 3, 4, 5}, core 1 {10, 20, 30, 40, 50}; outputs of 5 prefilled with -1.
// Two rows: core 0 send counts {2, 3}, displs {0, 2}: {1, 2} to rank 0, {3, 4, 5} to rank 1;
//           core 1 send counts {1, 2}, displs {4, 0}: {50} to rank 0, {10, 20} to rank 1.
//   recv counts = each sender's count to it, displs = their running sum:
//   core 0: {1, 2} at 0, {50} at 2, the rest kept: {1, 2, 50, -1, -1}
//   core 1: {3, 4, 5} at 0, {10, 20} at 3: {3, 4, 5, 10, 20}
// Four rows: core 0 recv counts {2, 1}, displs {3, 0}: {50, -1, -1, 1, 2};
//            core 1 recv counts {3, 2}, displs {2, 0}: {10, 20, 3, 4, 5}.
namespace {

// Runs the AllToAllV above with each core's metadata (rows x 2, row-major); returns the outputs, or the error.
struct A2avRun {
  std::vector<V> out;
  std::string error;
};
A2avRun all_to_all_v2(const V &meta0, const V &meta1) {
  const int64_t m = static_cast<int64_t>(meta0.size());
  CcProgram c = cc_program("AllToAllV", AluOp::bypass, {5, m}, 5, {{0, 1}}, isa::Dtype::uint32);
  sim::Device d(c.p, opts(), 2, 1);
  write(d.core(0), c.ins[0], {1, 2, 3, 4, 5});
  write(d.core(1), c.ins[0], {10, 20, 30, 40, 50});
  write(d.core(0), c.ins[1], meta0);
  write(d.core(1), c.ins[1], meta1);
  for (int i = 0; i < 2; ++i) write(d.core(i), c.o, {-1, -1, -1, -1, -1});
  A2avRun r;
  r.error = error_of([&] { d.run(); });
  if (r.error.empty()) r.out = {read(d.core(0), c.o), read(d.core(1), c.o)};
  return r;
}

} // namespace

TEST(DeviceCollectives, AllToAllVRoutesVariableChunksByTheMetadata) {
  A2avRun two = all_to_all_v2({2, 3, 0, 2}, {1, 2, 4, 0});
  ASSERT_EQ(two.error, "");
  EXPECT_EQ(two.out[0], (V{1, 2, 50, -1, -1}));
  EXPECT_EQ(two.out[1], (V{3, 4, 5, 10, 20}));
  A2avRun four = all_to_all_v2({2, 3, 0, 2, 2, 1, 3, 0}, {1, 2, 4, 0, 3, 2, 2, 0});
  ASSERT_EQ(four.error, "");
  EXPECT_EQ(four.out[0], (V{50, -1, -1, 1, 2}));
  EXPECT_EQ(four.out[1], (V{10, 20, 3, 4, 5}));
  // Three rows whose recv counts agree with the senders ({2, 1} and {3, 2}) give the two-row result.
  A2avRun three = all_to_all_v2({2, 3, 0, 2, 2, 1}, {1, 2, 4, 0, 3, 2});
  ASSERT_EQ(three.error, "");
  EXPECT_EQ(three.out[0], (V{1, 2, 50, -1, -1}));
}

// Inconsistent metadata is refused naming the core, the instruction and the field.
//  - core 1's recv count from rank 0 says 2, rank 0 sends it 3;
//  - core 0 sends 3 from displacement 3 of its 5 elements (3 + 3 > 5);
//  - core 1 receives 3 + 2 = 6 elements into 5 (four rows, displacement 3 for the 3 from rank 0);
//  - metadata of 5 elements is not 2-4 rows of 2.
TEST(DeviceCollectives, AllToAllVRefusesInconsistentMetadata) {
  std::string e = all_to_all_v2({2, 3, 0, 2, 2, 1}, {1, 2, 4, 0, 2, 2}).error;
  EXPECT_NE(e.find("core 1's metadata recv count from rank 0 is 2, that rank sends it 3"), std::string::npos) << e;
  EXPECT_NE(e.find("ins[1]"), std::string::npos) << e;
  e = all_to_all_v2({2, 3, 0, 3}, {1, 2, 4, 0}).error;
  EXPECT_NE(e.find("core 0's metadata column 1: send displacement 3 + count 3 is beyond its input's 5"),
            std::string::npos) << e;
  e = all_to_all_v2({2, 3, 0, 2, 2, 1, 3, 0}, {1, 2, 4, 0, 3, 2, 3, 0}).error;
  EXPECT_NE(e.find("core 1's recv displacements from rank 0: 3 + 3 is beyond its output's 5"), std::string::npos)
      << e;
  CcProgram c = cc_program("AllToAllV", AluOp::bypass, {5, 5}, 5, {{0, 1}}, isa::Dtype::uint32);
  sim::Device d(c.p, opts(), 2, 1);
  for (int i = 0; i < 2; ++i) write(d.core(i), c.ins[1], {0, 0, 0, 0, 0});
  e = error_of([&] { d.run(); });
  EXPECT_NE(e.find("metadata has 5 elements, not 2, 3 or 4 rows of 2"), std::string::npos) << e;
}

namespace {

// A SendRecv / SendRecvCCE program for one core: recv_from_rank the constants `from`.
CcProgram send_recv_program(const std::string &kind, AluOp op, const std::vector<int64_t> &from,
                            const std::vector<std::vector<int64_t>> &groups) {
  CcProgram c = cc_program(kind, op, {2}, 2, groups);
  for (int64_t r : from) c.p.insts[0].recv_from_rank.push_back(isa::Expr::constant(r));
  return c;
}

} // namespace

// SendRecv: each core's output <- the input of the rank its recv_from_rank names; core i holds {i + 1, -(i + 1)}.
//   core 0 from 2: {3, -3};  core 1 from 0: {1, -1};  core 2 from 0: {1, -1}
// SendRecvCCE add: core 0 from [1, 2]: {2 + 3, -2 - 3} = {5, -5}; core 1 from [0]: {1, -1}; core 2 from
// [2, 0, 1]: {3 + 1 + 2, -3 - 1 - 2} = {6, -6}. max: core 0 {max(2, 3), max(-2, -3)} = {3, -2}; core 2 {3, -1}.
TEST(DeviceCollectives, SendRecvTakesThePeersInputAndSendRecvCceFoldsTheListedRanks) {
  {
    CcProgram p0 = send_recv_program("SendRecv", AluOp::bypass, {2}, {}), p1 = send_recv_program("SendRecv", AluOp::bypass, {0}, {}),
              p2 = send_recv_program("SendRecv", AluOp::bypass, {0}, {});
    sim::Device d({&p0.p, &p1.p, &p2.p}, opts(), 1);
    for (int i = 0; i < 3; ++i) write(d.core(i), p0.ins[0], {i + 1.0f, -(i + 1.0f)});
    d.run();
    EXPECT_EQ(read(d.core(0), p0.o), (V{3, -3}));
    EXPECT_EQ(read(d.core(1), p0.o), (V{1, -1}));
    EXPECT_EQ(read(d.core(2), p0.o), (V{1, -1}));
  }
  const struct {
    AluOp op;
    V out0, out2;
  } cases[] = {{AluOp::add, {5, -5}, {6, -6}}, {AluOp::max, {3, -2}, {3, -1}}};
  for (const auto &k : cases) {
    CcProgram p0 = send_recv_program("SendRecvCCE", k.op, {1, 2}, {}), p1 = send_recv_program("SendRecvCCE", k.op, {0}, {}),
              p2 = send_recv_program("SendRecvCCE", k.op, {2, 0, 1}, {});
    sim::Device d({&p0.p, &p1.p, &p2.p}, opts(), 1);
    for (int i = 0; i < 3; ++i) write(d.core(i), p0.ins[0], {i + 1.0f, -(i + 1.0f)});
    d.run();
    EXPECT_EQ(read(d.core(0), p0.o), k.out0) << isa::alu_name(k.op);
    EXPECT_EQ(read(d.core(1), p0.o), (V{1, -1})) << isa::alu_name(k.op);
    EXPECT_EQ(read(d.core(2), p0.o), k.out2) << isa::alu_name(k.op);
  }
}

// One program on a logical core of 2 (LNC=2, shards 0 and 1): recv_from_rank = 1 - ShardIDKind (an affine form)
// swaps the cores' inputs {1, 2} and {3, 4}; send_to_rank the same expression agrees with it.
TEST(DeviceCollectives, SendRecvPeerIsAnAffineFormOfTheShard) {
  CcProgram c = cc_program("SendRecv", AluOp::bypass, {2}, 2, {{0, 1}});
  isa::Expr peer;
  peer.kind = isa::Expr::Kind::Affine;
  peer.c = 1;
  peer.kids.push_back(shard_expr());
  peer.coeffs.push_back(-1);
  c.p.insts[0].recv_from_rank.push_back(peer);
  c.p.insts[0].send_to_rank.push_back(peer);
  sim::Device d(c.p, opts(), 2, 2);
  write(d.core(0), c.ins[0], {1, 2});
  write(d.core(1), c.ins[0], {3, 4});
  d.run();
  EXPECT_EQ(read(d.core(0), c.o), (V{3, 4}));
  EXPECT_EQ(read(d.core(1), c.o), (V{1, 2}));
}

// A peer outside the group, a send its receiver does not expect, shapes that differ: errors naming the core, the
// instruction and the field.
TEST(DeviceCollectives, SendRecvMismatchesNameTheCoreInstructionAndField) {
  CcProgram c = send_recv_program("SendRecv", AluOp::bypass, {5}, {{0, 1}});
  c.p.insts[0].name = "sr";
  sim::Device d(c.p, opts(), 2, 1);
  std::string e = error_of([&] { d.run(); });
  EXPECT_NE(e.find("core 0 names rank 5, outside its replica group {0, 1}"), std::string::npos) << e;
  EXPECT_NE(e.find("'sr'"), std::string::npos) << e;
  EXPECT_NE(e.find("recv_from_rank[0]"), std::string::npos) << e;

  CcProgram p0 = send_recv_program("SendRecv", AluOp::bypass, {1}, {}), p1 = send_recv_program("SendRecv", AluOp::bypass, {1}, {});
  // Core 1 receives from itself, so core 0's send to it has no receive (core 1's send to core 0 is matched).
  p1.p.insts[0].send_to_rank.push_back(isa::Expr::constant(0));
  p0.p.insts[0].send_to_rank.push_back(isa::Expr::constant(1));
  sim::Device d2({&p0.p, &p1.p}, opts(), 1);
  e = error_of([&] { d2.run(); });
  EXPECT_NE(e.find("core 0 sends to rank 1, whose recv_from_rank does not name it"), std::string::npos) << e;
  EXPECT_NE(e.find("send_to_rank"), std::string::npos) << e;

  CcProgram s0 = send_recv_program("SendRecv", AluOp::bypass, {1}, {});
  Builder b1("cc");  // the same tensors, core 1's input access one element of a
  auto a1 = b1.sbuf("a", {1, 2}), o1 = b1.sbuf("o", {1, 2});
  b1.add(InstructionType::CollectiveCompute, {Builder::ap(a1.tile(0, 1, 0, 1))}, {Builder::ap(o1.all())})
      .collective_kind("SendRecv").op(AluOp::bypass).replica_groups({});
  isa::Program s1 = b1.finish();
  s1.insts[0].recv_from_rank.push_back(isa::Expr::constant(0));
  sim::Device d3({&s0.p, &s1}, opts(), 1);
  e = error_of([&] { d3.run(); });
  EXPECT_NE(e.find("core 1's input has 1 elements, core 0's 2"), std::string::npos) << e;
  EXPECT_NE(e.find("ins[0]"), std::string::npos) << e;
}

// PermuteReduce follows birsim's identity copy: each core's output is its own input.
TEST(DeviceCollectives, PermuteReduceIsBirsimsIdentityCopy) {
  CcProgram c = cc_program("PermuteReduce", AluOp::add, {2}, 2, {{0, 1}});
  sim::Device d(c.p, opts(), 2, 1);
  write(d.core(0), c.ins[0], {1, 2});
  write(d.core(1), c.ins[0], {3, 4});
  d.run();
  EXPECT_EQ(read(d.core(0), c.o), (V{1, 2}));
  EXPECT_EQ(read(d.core(1), c.o), (V{3, 4}));
}

// Each kind on one core, naming only that rank:
//   PermuteImplicit / PermuteReduce: out = in = {1, 2, 3}
//   PermuteReduceImplicit max: max({1, 2, 3}, {3, 2, 1}) = {3, 2, 3} passed to itself
//   SendRecv from 0 / SendRecvCCE from [0]: out = in
//   AllToAllV metadata {2 | 1} (send count 2 from displacement 1): {2, 3} at 0 of the output of 2
TEST(DeviceCollectives, EachKindOnOneCore) {
  auto one = [](CcProgram &c, const std::vector<V> &ins) {
    sim::Simulator s(c.p, opts());
    for (size_t i = 0; i < ins.size(); ++i) s.memory().write_f32(whole(c.ins[i]), ins[i].data());
    s.run();
    return read(s, c.o);
  };
  for (const char *k : {"PermuteImplicit", "PermuteReduce"}) {
    CcProgram c = cc_program(k, AluOp::bypass, {3}, 3, {});
    EXPECT_EQ(one(c, {{1, 2, 3}}), (V{1, 2, 3})) << k;
  }
  CcProgram pri = cc_program("PermuteReduceImplicit", AluOp::max, {3, 3}, 3, {{0}});
  EXPECT_EQ(one(pri, {{1, 2, 3}, {3, 2, 1}}), (V{3, 2, 3}));
  CcProgram sr = send_recv_program("SendRecv", AluOp::bypass, {0}, {});
  EXPECT_EQ(one(sr, {{7, 8}}), (V{7, 8}));
  CcProgram cce = send_recv_program("SendRecvCCE", AluOp::add, {0}, {});
  EXPECT_EQ(one(cce, {{7, 8}}), (V{7, 8}));
  CcProgram a2av = cc_program("AllToAllV", AluOp::bypass, {3, 2}, 2, {}, isa::Dtype::uint32);
  EXPECT_EQ(one(a2av, {{1, 2, 3}, {2, 1}}), (V{2, 3}));
  // A peer other than the one core is refused naming the field.
  CcProgram far = send_recv_program("SendRecv", AluOp::bypass, {1}, {});
  sim::Simulator s(far.p, opts());
  const std::string e = error_of([&] { s.run(); });
  EXPECT_NE(e.find("recv_from_rank[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("core 0 names rank 1, outside its replica group {0}"), std::string::npos) << e;
}

// Timing through the link model (trn2): a [1, 1024] fp32 buffer is 4096 B.
//  - PermuteImplicit on 2 ranks: each sends its buffer to its successor at once: one point-to-point step,
//    1300 + 4096 / 360 = 1311.377778 ns.
//  - AllToAllV on 2 ranks: AllToAll's N-1 = 1 step of 4096 / 2 B: 1300 + 2048 / 360 = 1305.688889 ns.
//  - SendRecvCCE receiving from 2 ranks of 3: one step of 2 x 4096 B: 1300 + 8192 / 360 = 1322.755556 ns.
TEST(DeviceCollectives, TimesFollowTheLinkPatterns) {
  CcProgram pi = cc_program("PermuteImplicit", AluOp::bypass, {1024}, 1024, {{0, 1}});
  sim::Device d(pi.p, opts("trn2", true), 2, 1);
  EXPECT_NEAR(d.run().link_busy_ns, 1300.0 + 4096.0 / 360.0, 1e-6);
  CcProgram av = cc_program("AllToAllV", AluOp::bypass, {1024, 4}, 1024, {{0, 1}}, isa::Dtype::uint32);
  sim::Device d2(av.p, opts("trn2", true), 2, 1);
  EXPECT_NEAR(d2.run().link_busy_ns, 1300.0 + 2048.0 / 360.0, 1e-6);
  CcProgram cce = cc_program("SendRecvCCE", AluOp::add, {1024}, 1024, {{0, 1, 2}});
  for (int64_t r : {1, 2}) cce.p.insts[0].recv_from_rank.push_back(isa::Expr::constant(r));
  sim::Device d3(cce.p, opts("trn2", true), 3, 1);
  EXPECT_NEAR(d3.run().link_busy_ns, 1300.0 + 8192.0 / 360.0, 1e-6);
}

// The BIR keys: recv_from_rank [QAE] and send_to_rank QAE (reference bir-json.md 2.2) and iter_id as an expression
// (MaybeAffine<uint>) are read, written back and read again; CCGetRankKind and loop variables are refused naming
// the field; PermuteReduce carries a one-line warning naming the instruction.
TEST(DeviceCollectives, RankExpressionKeysReadWriteAndRefuse) {
  using json = nlohmann::json;
  auto alloc = [](const std::string &n) {
    return json{{"Skind", "memory_location_set"}, {"name", n + "_set"}, {"kind", "Internal"}, {"dtype", "float32"},
                {"tensor_shape", {1, 2}}, {"partition_dim", 0},
                {"memorylocations", {{{"Skind", "memory_location"}, {"name", n}, {"type", "SB"}, {"dims", {1, 8}},
                                      {"addr", 0}, {"base", 0}, {"bank", 0}, {"allocated", false}}}}};
  };
  auto ap = [](const std::string &n) {
    return json{{"kind", "physical_ap"}, {"dtype", "float32"}, {"memref", n}, {"memsetref", n + "_set"},
                {"ap", {{1, 1}, {1, 2}}}, {"offset", 0}};
  };
  const json shard = {{"kind", "ShardIDKind"}, {"ub", 2}};
  const json peer = {{"kind", "AffExprKind"}, {"terms", {{{"idx", shard}, {"coeff", -1}}}}, {"c", 1}};
  auto module = [&](json inst) {
    json fn = {{"name", "sg0000"}, {"allocations", {alloc("a"), alloc("o")}},
               {"blocks", {{{"name", "B"}, {"instructions", {inst}}}}}};
    return json{{"arch", "gen3"}, {"version", 2}, {"functions", {fn}}};
  };
  auto cc = [&](const std::string &kind) {
    return json{{"opcode", "CollectiveCompute"}, {"name", "I-1"}, {"engine", "Pool"}, {"kind", kind},
                {"replica_groups", {{0, 1}}}, {"ins", {ap("a")}}, {"outs", {ap("o")}}};
  };
  json sr = cc("SendRecv");
  sr["recv_from_rank"] = {peer};
  sr["send_to_rank"] = peer;
  isa::Program p = isa::parse_bir(module(sr), "k.json");
  ASSERT_EQ(p.insts[0].recv_from_rank.size(), 1u);
  ASSERT_EQ(p.insts[0].send_to_rank.size(), 1u);
  EXPECT_EQ(p.insts[0].recv_from_rank[0].eval(nullptr, 0), 1);  // 1 - 0
  EXPECT_EQ(p.insts[0].recv_from_rank[0].eval(nullptr, 1), 0);  // 1 - 1
  isa::Program back = isa::parse_bir(isa::to_bir_json(p), "k2.json");
  ASSERT_EQ(back.insts[0].recv_from_rank.size(), 1u);
  EXPECT_EQ(back.insts[0].send_to_rank.at(0).eval(nullptr, 1), 0);

  auto refused = [&](const json &m) {
    try {
      isa::parse_bir(m, "k.json");
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  json rank = sr;
  rank["recv_from_rank"] = {{{"kind", "CCGetRankKind"}, {"op_param", 0}, {"channel_id", 0}}};
  std::string e = refused(module(rank));
  EXPECT_NE(e.find("CCGetRankKind is not modelled"), std::string::npos) << e;
  EXPECT_NE(e.find("recv_from_rank[0]"), std::string::npos) << e;
  json in_loop = sr;
  in_loop["recv_from_rank"] = {{{"kind", "AffIVKind"}, {"axis", "i"}}};
  json lp = {{"opcode", "Loop"}, {"name", "L"}, {"LoopAxis", {{"name", "i"}, {"lb", 0}, {"ub", 2}, {"stride", 1}}},
             {"blocks", {{{"name", "LB"}, {"instructions", {in_loop}}}}}};
  e = refused(module(lp));
  EXPECT_NE(e.find("a loop variable in a rank expression"), std::string::npos) << e;

  json cur = {{"opcode", "GetCurProcessingRankID"}, {"name", "I-2"}, {"engine", "SP"}, {"channel_id", 0},
              {"iter_id", peer}, {"replica_groups", {{0, 1}}}, {"ins", json::array()}, {"outs", {ap("o")}}};
  isa::Program pc = isa::parse_bir(module(cur), "k.json");
  ASSERT_EQ(pc.insts[0].iter_id_expr.size(), 1u);
  EXPECT_EQ(pc.insts[0].iter_id_expr[0].eval(nullptr, 0), 1);
  isa::Program pr = isa::parse_bir(module(cc("PermuteReduce")), "k.json");
  ASSERT_EQ(pr.warnings.size(), 1u);
  EXPECT_NE(pr.warnings[0].find("'I-1'"), std::string::npos) << pr.warnings[0];
  EXPECT_NE(pr.warnings[0].find("PermuteReduce follows birsim: an identity copy"), std::string::npos) << pr.warnings[0];
}

} // namespace test_device_collectives
