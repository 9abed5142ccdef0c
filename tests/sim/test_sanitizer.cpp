// The sanitizer (sim/sanitizer.hpp, docs/sanitizer.md) on small programs whose findings can be worked out by hand:
// uninitialized reads (SBUF, PSUM accumulation, an output read before it is written; inputs count as written,
// can_read_uninit exempts), loop-carried dependencies of NKI affine_range loops (from debug.nki: flow across trips,
// sequential_range, a reduction, a tile private to the trip), and races (explicit semaphores; two cores of a
// logical core sharing DRAM, with and without the barrier that orders them). Each runs numeric and timing-only:
// the checks need addresses, not values.
#include <set>

#include <gtest/gtest.h>

#include "neuronsim/builder.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/sanitizer.hpp"
#include "neuronsim/sim/simulator.hpp"
#include "neuronsim/sim/stream_form.hpp"
#include "support/temp_dir.hpp"

namespace test_sanitizer {

using namespace neuronsim;
using builder::Aff;
using builder::Builder;
using isa::AluOp;
using isa::Engine;
using isa::InstructionType;

namespace {

std::vector<sim::Finding> sanitize(const isa::Program &p, bool timing_only, const std::string &arch = "trn1") {
  sim::RunOptions o;
  o.arch = arch;
  o.timing_only = timing_only;
  o.sanitize = true;
  sim::Simulator s(p, o);
  const sim::RunResult r = s.run();
  EXPECT_TRUE(r.sanitized);
  return r.findings;
}

std::string lines(const std::vector<sim::Finding> &f) {
  std::string s;
  for (const auto &x : f) s += sim::finding_line(x) + "\n";
  return s;
}

isa::NkiInfo nki_loop(const Aff &trip, isa::NkiLoop::Kind kind, std::vector<int> local = {}) {
  isa::NkiInfo n;
  isa::NkiLoop l;
  l.id = 0;
  l.kind = kind;
  l.line = 10;
  l.var = "i";
  l.trip = trip.to_expr();
  n.loops.push_back(l);
  n.local = std::move(local);
  return n;
}

} // namespace

// t [128, 40] fp32: a Load fills partitions 0..95 only, then a TensorScalarPtr reads all of t. Partitions 96..127
// were never written: one finding, t[96:128, 0:40], naming the reading instruction (I-2) and its source line.
TEST(Sanitizer, UninitializedSbufReadNamesTheUnwrittenRegion) {
  Builder b("uninit");
  auto a = b.input("a", {128, 40});
  auto y = b.output("y", {128, 40});
  auto t = b.sbuf("t", {128, 40}), u = b.sbuf("u", {128, 40});
  b.add(InstructionType::Load, {b.ap(a.tile(0, 96, 0, 40))}, {b.ap(t.tile(0, 96, 0, 40))}).source("k.py", 5);
  b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), b.imm(1.0)}, {b.ap(u.all())})
      .op0(AluOp::add)
      .op1(AluOp::bypass)
      .source("k.py", 6);
  b.add(InstructionType::Save, {b.ap(u.all())}, {b.ap(y.all())});
  const isa::Program p = b.finish();
  for (bool timing : {false, true}) {
    const auto f = sanitize(p, timing);
    ASSERT_EQ(f.size(), 1u) << lines(f);
    EXPECT_EQ(f[0].kind, "uninitialized-read");
    EXPECT_EQ(f[0].first.instruction, "I-2");
    EXPECT_EQ(f[0].first.opcode, "TensorScalarPtr");
    EXPECT_EQ(f[0].first.file, "k.py");
    EXPECT_EQ(f[0].first.line, 6);
    EXPECT_EQ(f[0].first.tensor, "t");
    EXPECT_EQ(f[0].first.range, "[96:128, 0:40]");
    EXPECT_FALSE(f[0].other);
    EXPECT_EQ(sim::finding_line(f[0]),
              "sanitizer: uninitialized-read: I-2 (TensorScalarPtr) at k.py:6 reads t[96:128, 0:40], which "
              "nothing wrote since the run started");
  }
}

// The same program with the whole tile loaded: nothing. With can_read_uninit on the reader: nothing either.
TEST(Sanitizer, WrittenOrExemptReadsAreClean) {
  for (bool exempt : {false, true}) {
    Builder b("clean");
    auto a = b.input("a", {128, 40});
    auto y = b.output("y", {128, 40});
    auto t = b.sbuf("t", {128, 40}), u = b.sbuf("u", {128, 40});
    b.add(InstructionType::Load, {b.ap(a.tile(0, exempt ? 96 : 128, 0, 40))},
          {b.ap(t.tile(0, exempt ? 96 : 128, 0, 40))});
    auto r = b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), b.imm(1.0)}, {b.ap(u.all())});
    r.op0(AluOp::add).op1(AluOp::bypass);
    if (exempt) r.can_read_uninit(true);
    b.add(InstructionType::Save, {b.ap(u.all())}, {b.ap(y.all())});
    const isa::Program p = b.finish();
    EXPECT_EQ(lines(sanitize(p, false)), "") << exempt;
    EXPECT_EQ(lines(sanitize(p, true)), "") << exempt;
  }
}

// A matmul that does not start its accumulation group (start_tensor_calc false) reads its PSUM destination: into a
// bank nothing wrote it is an uninitialized read of all of it ([64, 128] fp32 here). Starting the group, it is not.
TEST(Sanitizer, PsumAccumulationIntoUnwrittenBanks) {
  for (bool start : {false, true}) {
    Builder b("psum");
    auto w = b.input("w", {128, 64}), x = b.input("x", {128, 128});
    auto y = b.output("y", {64, 128});
    auto ws = b.sbuf("ws", {128, 64}), xs = b.sbuf("xs", {128, 128}), ys = b.sbuf("ys", {64, 128});
    auto acc = b.psum("acc", {64, 128});
    b.add(InstructionType::Load, {b.ap(w.all())}, {b.ap(ws.all())});
    b.add(InstructionType::Load, {b.ap(x.all())}, {b.ap(xs.all())});
    b.add(InstructionType::Matmult, {b.ap(ws.all()), b.ap(xs.all())}, {b.ap(acc.all())}).start_tensor_calc(start);
    b.add(InstructionType::TensorCopy, {b.ap(acc.all())}, {b.ap(ys.all())});
    b.add(InstructionType::Save, {b.ap(ys.all())}, {b.ap(y.all())});
    const auto f = sanitize(b.finish(), true);
    if (start) {
      EXPECT_EQ(lines(f), "");
      continue;
    }
    ASSERT_EQ(f.size(), 1u) << lines(f);
    EXPECT_EQ(f[0].first.instruction, "I-3");
    EXPECT_EQ(f[0].first.tensor, "acc");
    EXPECT_EQ(f[0].first.range, "[0:64, 0:128]");
  }
}

// An output read before anything wrote it: the Load of y[0:2, 0:128] (rows 0 and 1) is an uninitialized read of
// the output; the later Save writes all of y.
TEST(Sanitizer, OutputReadBeforeItIsWritten) {
  Builder b("early");
  auto a = b.input("a", {4, 128});
  auto y = b.output("y", {4, 128});
  auto t = b.sbuf("t", {2, 128}), s = b.sbuf("s", {4, 128});
  b.add(InstructionType::Load, {b.ap(y.tile(0, 2, 0, 128))}, {b.ap(t.all())});
  b.add(InstructionType::Load, {b.ap(a.all())}, {b.ap(s.all())});
  b.add(InstructionType::Save, {b.ap(s.all())}, {b.ap(y.all())});
  for (bool timing : {false, true}) {
    const auto f = sanitize(b.program(), timing);
    ASSERT_EQ(f.size(), 1u) << lines(f);
    EXPECT_EQ(f[0].first.instruction, "I-1");
    EXPECT_EQ(f[0].first.tensor, "y");
    EXPECT_EQ(f[0].first.range, "[0:2, 0:128]");
  }
}

// An NKI affine_range of 4 trips (debug.nki: loop 0, trip = the BIR loop variable): I-2 reads acc, I-3 writes it, so
// trip 1 reads what trip 0 wrote: one loop-carried dependency naming both instructions and trips (and, through t,
// which every trip writes before it reads it, nothing). As a sequential_range: nothing. With I-3 marked as the
// reduction acc = acc + 1 (an associative step, I-2 reading acc in the same way): nothing.
TEST(Sanitizer, LoopCarriedDependencyAcrossAffineTrips) {
  enum Variant { Affine, Sequential, Reduction };
  for (Variant v : {Affine, Sequential, Reduction}) {
    Builder b("lcd");
    auto y = b.output("y", {128, 1});
    auto acc = b.sbuf("acc", {128, 1}), t = b.sbuf("t", {128, 1});
    b.add(InstructionType::Memset, {}, {b.ap(acc.all())}).memset_mode(isa::MemsetMode::Const).constant(0.0);
    const auto kind = v == Sequential ? isa::NkiLoop::Kind::Sequential : isa::NkiLoop::Kind::Affine;
    b.loop("i", 0, 4, 1, [&](Aff i) {
      if (v == Reduction) {
        isa::NkiInfo n = nki_loop(i, kind);
        n.reduce = "add";
        n.reduce_in = 0;
        b.add(InstructionType::TensorScalarPtr, {b.ap(acc.all()), b.imm(1.0)}, {b.ap(acc.all())})
            .op0(AluOp::add)
            .op1(AluOp::bypass)
            .nki(n)
            .source("k.py", 12);
        return;
      }
      b.add(InstructionType::TensorScalarPtr, {b.ap(acc.all()), b.imm(2.0)}, {b.ap(t.all())})
          .op0(AluOp::mult)
          .op1(AluOp::bypass)
          .nki(nki_loop(i, kind))
          .source("k.py", 12);
      b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), b.imm(1.0)}, {b.ap(acc.all())})
          .op0(AluOp::add)
          .op1(AluOp::bypass)
          .nki(nki_loop(i, kind))
          .source("k.py", 13);
    });
    b.add(InstructionType::Save, {b.ap(acc.all())}, {b.ap(y.all())});
    const isa::Program p = b.finish();
    for (bool timing : {false, true}) {
      const auto f = sanitize(p, timing);
      if (v != Affine) {
        EXPECT_EQ(lines(f), "") << v;
        continue;
      }
      ASSERT_EQ(f.size(), 1u) << lines(f);
      EXPECT_EQ(f[0].kind, "loop-carried-dependency");
      EXPECT_EQ(f[0].first.instruction, "I-2");  // trip 1 reads
      EXPECT_EQ(f[0].first.tensor, "acc");
      EXPECT_EQ(f[0].first.range, "[0:128, 0:1]");
      EXPECT_EQ(f[0].first.trip, 1);
      ASSERT_TRUE(f[0].other);
      EXPECT_EQ(f[0].other->instruction, "I-3");  // what trip 0 wrote
      EXPECT_EQ(f[0].other->trip, 0);
      EXPECT_EQ(sim::finding_line(f[0]),
                "sanitizer: loop-carried-dependency: I-2 (TensorScalarPtr) at k.py:12 reads acc[0:128, 0:1] in trip "
                "1 (i = 1) of the nl.affine_range at k.py:10, and I-3 (TensorScalarPtr) at k.py:13 wrote it in trip "
                "0 (i = 0): the trips of an nl.affine_range may run in any order or overlap; use "
                "nl.sequential_range for a loop whose trips depend on each other");
    }
  }
}

// A tile declared inside the loop body (debug.nki local = 1 for its operands) is each trip's own: the same
// accesses carry nothing.
TEST(Sanitizer, TileDeclaredInsideTheLoopIsPrivate) {
  Builder b("private");
  auto y = b.output("y", {128, 1});
  auto acc = b.sbuf("acc", {128, 1}), t = b.sbuf("t", {128, 1});
  b.loop("i", 0, 4, 1, [&](Aff i) {
    b.add(InstructionType::Memset, {}, {b.ap(acc.all())})
        .memset_mode(isa::MemsetMode::Const)
        .constant(0.0)
        .nki(nki_loop(i, isa::NkiLoop::Kind::Affine, {1}));
    b.add(InstructionType::TensorScalarPtr, {b.ap(acc.all()), b.imm(2.0)}, {b.ap(t.all())})
        .op0(AluOp::mult)
        .op1(AluOp::bypass)
        .nki(nki_loop(i, isa::NkiLoop::Kind::Affine, {1, 0, 1}));
    b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), b.imm(1.0)}, {b.ap(acc.all())})
        .op0(AluOp::add)
        .op1(AluOp::bypass)
        .nki(nki_loop(i, isa::NkiLoop::Kind::Affine, {1, 0, 1}));
  });
  b.add(InstructionType::Save, {b.ap(acc.all())}, {b.ap(y.all())});
  EXPECT_EQ(lines(sanitize(b.finish(), true)), "");
}

// Explicit synchronisation (a program carrying its own semaphores, as bundle streams do): DVE writes t and
// increments semaphore 3 when done; ACT reads t after waiting for semaphore 3 >= 1. Without the wait the two are
// unordered: a race naming both instructions and queues (and no uninitialized read, which the race explains).
TEST(Sanitizer, RaceWhenASemaphoreWaitIsMissing) {
  for (bool wait : {true, false}) {
    Builder b("sem");
    auto y = b.output("y", {128, 64});
    auto t = b.sbuf("t", {128, 64}), u = b.sbuf("u", {128, 64});
    b.add(InstructionType::Memset, {}, {b.ap(t.all())})
        .memset_mode(isa::MemsetMode::Const)
        .constant(1.0)
        .engine(Engine::DVE)
        .inst()
        .updates.push_back(isa::SemUpdate{3, isa::SemUpdate::Mode::Inc, 1});
    auto r = b.add(InstructionType::Activation, {b.ap(t.all())}, {b.ap(u.all())});
    r.act_func(isa::ActivationFunctionType::Identity).engine(Engine::Activation);
    r.inst().updates.push_back(isa::SemUpdate{4, isa::SemUpdate::Mode::Inc, 1});
    if (wait) r.inst().waits.push_back(isa::SemWait{3, isa::SemWait::Mode::GeImm, 1, ""});
    auto s = b.add(InstructionType::Save, {b.ap(u.all())}, {b.ap(y.all())});
    s.engine(Engine::SP).inst().waits.push_back(isa::SemWait{4, isa::SemWait::Mode::GeImm, 1, ""});
    const isa::Program p = b.finish();
    for (bool timing : {false, true}) {
      const auto f = sanitize(p, timing);
      if (wait) {
        EXPECT_EQ(lines(f), "");
        continue;
      }
      ASSERT_EQ(f.size(), 1u) << lines(f);
      EXPECT_EQ(f[0].kind, "race");
      EXPECT_EQ(f[0].first.tensor, "t");
      EXPECT_EQ(f[0].first.range, "[0:128, 0:64]");
      ASSERT_TRUE(f[0].other);
      // Whichever ran first is the other access; both are named with their queues.
      const std::string pair = f[0].first.instruction + "/" + f[0].first.queue + " " + f[0].other->instruction +
                               "/" + f[0].other->queue;
      EXPECT_TRUE(pair == "I-2/ACT I-1/DVE" || pair == "I-1/DVE I-2/ACT") << pair;
    }
  }
}

// Two cores of one logical core (LNC=2) share DRAM: shard s saves its tile to o[64 s : 64 s + 64], then loads the
// other shard's half. Without a barrier each load races with the other core's save; with a Drain (this core's save
// completed) and a CoreBarrier (the other core's too) between them, nothing.
TEST(Sanitizer, CoresSharingDramRaceWithoutTheirBarrier) {
  for (bool barrier : {true, false}) {
    Builder b("shards");
    auto x = b.input("x", {128, 32});
    auto o = b.output("o", {128, 32});
    auto t = b.sbuf("t", {64, 32}), u = b.sbuf("u", {64, 32});
    const Aff mine = Aff::shard(2) * 64, theirs = Aff(64) + Aff::shard(2) * -64;
    b.add(InstructionType::Load, {b.ap(x.tile(mine, 64, 0, 32))}, {b.ap(t.all())});
    b.add(InstructionType::Save, {b.ap(t.all())}, {b.ap(o.tile(mine, 64, 0, 32))});
    if (barrier) {
      b.add(InstructionType::Drain, {}, {}).engine(Engine::SP);
      b.add(InstructionType::CoreBarrier, {}, {}).engine(Engine::SP);
    }
    b.add(InstructionType::Load, {b.ap(o.tile(theirs, 64, 0, 32))}, {b.ap(u.all())});
    const isa::Program p = b.finish();
    sim::RunOptions opt;
    opt.arch = "trn2";
    opt.sanitize = true;
    sim::Device d(p, opt, 2, 2);
    const sim::DeviceResult r = d.run();
    const auto &f = r.cores[0].findings;
    if (barrier) {
      EXPECT_EQ(lines(f), "");
      continue;
    }
    // Each core's load races with the other core's save: two findings, one per half of o.
    ASSERT_EQ(f.size(), 2u) << lines(f);
    std::set<std::string> halves;
    for (const auto &x : f) {
      EXPECT_EQ(x.kind, "race");
      EXPECT_EQ(x.first.tensor, "o");
      ASSERT_TRUE(x.other);
      EXPECT_NE(x.first.core, x.other->core);
      EXPECT_EQ(x.first.range, x.other->range);
      halves.insert(x.first.range);
    }
    EXPECT_EQ(halves, (std::set<std::string>{"[0:64, 0:32]", "[64:128, 0:32]"}));
  }
}

// An encoder's output that drops one semaphore wait (the use `neuronsim validate --sanitize` is for): the program
// Load -> TensorScalarPtr -> Save lowered to bundle streams (to_stream_form writes each inferred dependency as a
// wait on the producer queue's semaphore), written and read back as bundles. As encoded, the streams run clean;
// with the TensorScalarPtr's wait on the Load's DMA queue removed before encoding, the Load's write of t and the
// TensorScalarPtr's read of it are unordered: one race, naming both.
TEST(Sanitizer, BundleStreamWithADroppedWaitRaces) {
  Builder b("enc");
  auto a = b.input("a", {128, 64});
  auto y = b.output("y", {128, 64});
  auto t = b.sbuf("t", {128, 64}), u = b.sbuf("u", {128, 64});
  b.add(InstructionType::Load, {b.ap(a.all())}, {b.ap(t.all())});
  b.add(InstructionType::TensorScalarPtr, {b.ap(t.all()), b.imm(1.0)}, {b.ap(u.all())})
      .op0(AluOp::add)
      .op1(AluOp::bypass);
  b.add(InstructionType::Save, {b.ap(u.all())}, {b.ap(y.all())});
  const isa::Program bir = b.finish();
  const engines::ArchParams arch = engines::load_arch("trn1");
  for (bool drop : {false, true}) {
    isa::Program s = sim::to_stream_form(bir, arch);
    if (drop)
      for (auto &in : s.insts)
        if (in.type == InstructionType::TensorScalarPtr) {
          ASSERT_EQ(in.waits.size(), 1u);
          in.waits.clear();
        }
    const std::string dir = neuronsim::testing::temp_dir("bundles");
    isa::write_bundle_dir(s, isa::CoreGen::V2, dir);
    const isa::Program streams = isa::read_bundle_dir(dir);
    const auto f = sanitize(streams, false);
    if (!drop) {
      EXPECT_EQ(lines(f), "");
      continue;
    }
    ASSERT_EQ(f.size(), 1u) << lines(f);
    EXPECT_EQ(f[0].kind, "race");
    EXPECT_EQ(f[0].first.tensor, "t");
    ASSERT_TRUE(f[0].other);
    const std::string pair = f[0].first.opcode + " " + f[0].other->opcode;
    EXPECT_TRUE(pair == "TensorScalarPtr Load" || pair == "Load TensorScalarPtr") << pair;
  }
}

// The stats' "sanitizer" list: every key, null where it does not apply.
TEST(Sanitizer, FindingsJsonHasEveryKey) {
  sim::Finding f;
  f.kind = "uninitialized-read";
  f.first.instruction = "I-2";
  f.first.opcode = "TensorTensor";
  f.first.tensor = "t";
  f.first.range = "[0:1]";
  const nlohmann::json j = sim::findings_json({f});
  ASSERT_EQ(j.size(), 1u);
  for (const char *k : {"kind", "instruction", "opcode", "file", "line", "tensor", "range", "core", "trip", "other"})
    EXPECT_TRUE(j[0].contains(k)) << k;
  EXPECT_TRUE(j[0]["file"].is_null());
  EXPECT_TRUE(j[0]["line"].is_null());
  EXPECT_TRUE(j[0]["trip"].is_null());
  EXPECT_TRUE(j[0]["other"].is_null());
  EXPECT_EQ(j[0]["core"], 0);
  EXPECT_EQ(j[0]["range"], "[0:1]");
}

} // namespace test_sanitizer
