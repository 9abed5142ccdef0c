// Bundle codec, control and out-of-line values: the 0xA9 branch bundles checked byte by byte (block-table targets,
// the [col] split between CompareAndBranch and UnconditionalBranch by the comp_op byte), the GroupResetSemaphores
// range and bitmask forms, the stream pool and block table through a stream directory, and the errors a bad
// index gives (file, bundle offset, field).
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "isa/bundle_test_util.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "support/temp_dir.hpp"

// The helpers below live in namespace test_bundle_control, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_bundle_control {

using namespace neuronsim;
using namespace neuronsim::isa;
using IT = InstructionType;

namespace {

Program make_prog() {
  Program p;
  p.file = "control";
  Tensor a;
  a.name = "a", a.mem = MemoryType::SB, a.dtype = Dtype::float32, a.shape = {128, 64}, a.partitions = 128;
  a.bytes_per_partition = 256, a.allocated = true;
  p.tensors.push_back(a);
  Tensor d = a;
  d.name = "d", d.mem = MemoryType::DRAM;
  p.tensors.push_back(d);
  p.blocks = {{"entry", 0}, {"loop", 0}, {"exit", 0}};
  return p;
}
Arg reg(const std::string &r) {
  Arg a;
  a.kind = ArgKind::Register, a.dtype = Dtype::int32, a.reg = r;
  return a;
}
Arg imm(double v) {
  Arg a;
  a.kind = ArgKind::Immediate, a.dtype = Dtype::int32, a.imm = v;
  return a;
}
Inst branch() {
  Inst in;
  in.type = IT::CompareAndBranch, in.engine = Engine::SP;
  in.ins = {reg("r1"), imm(5)};
  in.f.comp_op = BranchCompareOp::IS_GTIMM, in.f.on_true = "loop", in.f.on_false = "exit";
  SemWait w;
  w.sem = 2, w.value = 7;
  in.waits.push_back(w);
  return in;
}
Bundle bytes(std::initializer_list<std::pair<int, uint8_t>> set) {
  Bundle b{};
  for (auto [off, v] : set) b[static_cast<size_t>(off)] = v;
  return b;
}

} // namespace

TEST(BundleControl, CompareAndBranchBytes) {
  const Program p = make_prog();
  const auto got = encode(branch(), p, CoreGen::V3);
  ASSERT_EQ(got.size(), 1u);
  // reference isa/sp-sync-encoding.md 3: header A9 10 00 00; wait GE_IMM (0x05) on semaphore 2, value 7 at +0x08;
  // comp_op IS_GTIMM -> LUT 0x06; LHS dtype int32 -> tag 0x08; operand kind 3; RHS immediate 5 at +0x10; LHS r1
  // at +0x20. neuronsim: RHS dtype +0x0F; on_true = block 1 ("loop") stored as 2 at +0x30, on_false = block 2
  // ("exit") stored as 3 at +0x38.
  const Bundle want = bytes({{0x00, 0xA9}, {0x01, 0x10}, {0x04, 0x05}, {0x05, 0x02}, {0x08, 0x07}, {0x0C, 0x06},
                             {0x0D, 0x08}, {0x0E, 0x03}, {0x0F, 0x08}, {0x10, 0x05}, {0x20, 0x01}, {0x30, 0x02},
                             {0x38, 0x03}});
  for (int i = 0; i < 64; ++i) EXPECT_EQ(got[0][static_cast<size_t>(i)], want[static_cast<size_t>(i)]) << "byte +" << i;
  // The hand-written bundle decodes, without a hint, to the same branch.
  auto d = decode(want.data(), CoreGen::V3, static_cast<int>(Engine::SP), p);
  ASSERT_TRUE(d.complete);
  EXPECT_EQ(d.inst.type, IT::CompareAndBranch);
  EXPECT_EQ(d.inst.f.on_true, "loop");
  EXPECT_EQ(d.inst.f.on_false, "exit");
  std::string why;
  EXPECT_TRUE(same_bundle_content(branch(), d.inst, &why)) << why;
}

TEST(BundleControl, RegisterCompareAndUnconditionalBranchBytes) {
  const Program p = make_prog();
  Inst r = branch();
  r.waits.clear();
  r.ins[1] = reg("r9");
  r.f.comp_op = BranchCompareOp::IS_EQREG, r.f.on_true = "entry", r.f.on_false = "";
  const Bundle rw = bytes({{0x00, 0xA9}, {0x01, 0x10}, {0x0C, 0x0B}, {0x0D, 0x08}, {0x0E, 0x03}, {0x0F, 0x08},
                           {0x20, 0x01}, {0x21, 0x09}, {0x30, 0x01}});  // EQREG -> 0x0B; on_false "" -> 0 (next)
  EXPECT_EQ(encode(r, p, CoreGen::V2)[0], rw);
  Inst u;
  u.type = IT::UnconditionalBranch, u.engine = Engine::SP, u.f.target = "exit";
  const Bundle uw = bytes({{0x00, 0xA9}, {0x01, 0x10}, {0x0E, 0x03}, {0x30, 0x03}});  // comp_op 0 = always
  EXPECT_EQ(encode(u, p, CoreGen::V4)[0], uw);
  // 0xA9 is shared ([col]): the comp_op byte alone tells the two types apart.
  EXPECT_EQ(decode(uw.data(), CoreGen::V4, static_cast<int>(Engine::SP), p).inst.type, IT::UnconditionalBranch);
  auto d = decode(rw.data(), CoreGen::V2, static_cast<int>(Engine::SP), p);
  EXPECT_EQ(d.inst.type, IT::CompareAndBranch);
  EXPECT_EQ(d.inst.ins[1].reg, "r9");
  EXPECT_EQ(d.inst.f.on_false, "");
}

TEST(BundleControl, BranchErrorsNameTheField) {
  const Program p = make_prog();
  Inst in = branch();
  in.f.on_false = "nowhere";
  try {
    encode(in, p, CoreGen::V3);
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "on_false");
    EXPECT_NE(std::string(e.what()).find("no basic block named 'nowhere'"), std::string::npos) << e.what();
  }
  in = branch();
  in.ins[1] = reg("r2");  // an IMM-family comp_op with a register right-hand side
  EXPECT_THROW(encode(in, p, CoreGen::V3), SemanticError);
  // A block index past the table: bundle offset and field named.
  Bundle b = encode(branch(), p, CoreGen::V3)[0];
  b[0x38] = 9;
  try {
    decode(b.data(), CoreGen::V3, static_cast<int>(Engine::SP), p, nullptr, std::nullopt, {},
           ErrorContext{"SP.bin @128", 2, "br", ""});
    FAIL();
  } catch (const InputError &e) {
    EXPECT_EQ(e.context().file, "SP.bin @128");
    EXPECT_EQ(e.context().field, "on_false (+0x38)");
    EXPECT_NE(std::string(e.what()).find("block index 8 past the block table (3 blocks)"), std::string::npos) << e.what();
  }
}

TEST(BundleControl, GroupResetSemaphoresRangeAndBitmask) {
  const Program p = make_prog();
  Inst in;
  in.type = IT::GroupResetSemaphores, in.engine = Engine::SP;
  in.f.clear_mode = "SemaphoreZero", in.f.sema_group = {6, 4, 5};
  // reference isa/sp-sync-encoding.md 6b: mode 0x01, range_first 4 at +0x0D, range_last 6 at +0x0E.
  EXPECT_EQ(encode(in, p, CoreGen::V3)[0], bytes({{0x00, 0xB0}, {0x01, 0x10}, {0x0C, 0x01}, {0x0D, 4}, {0x0E, 6}}));
  EXPECT_EQ(bundletest::round_trip(in, p, CoreGen::V3), "");  // the group is a set: order not kept
  in.f.sema_group = {4, 6};
  EXPECT_THROW(encode(in, p, CoreGen::V3), SemanticError);  // not contiguous: the range would clear 5 too
  in.f.clear_mode = "SemaphoreZeroBitmask", in.f.sema_group = {0, 33, 255};
  // mask[id >> 5] |= 1 << (id & 31), little-endian words from +0x20.
  EXPECT_EQ(encode(in, p, CoreGen::V3)[0],
            bytes({{0x00, 0xB0}, {0x01, 0x10}, {0x0C, 0x02}, {0x20, 0x01}, {0x24, 0x02}, {0x3F, 0x80}}));
  in.f.sema_group = {3, 3};
  EXPECT_THROW(encode(in, p, CoreGen::V3), SemanticError);
  in.f.clear_mode = "Sideways";
  in.f.sema_group = {3};
  EXPECT_THROW(encode(in, p, CoreGen::V3), SemanticError);
}

TEST(BundleControl, InlineNamesAndPoolIndices) {
  const Program p = make_prog();
  Inst t;
  t.type = IT::DMATrigger, t.engine = Engine::DMA, t.f.queue = "q0", t.f.dma_blocks = {"b0", "b1"};
  BundlePool pool;
  const Bundle b = encode(t, p, CoreGen::V2, {}, &pool)[0];
  // reference isa/dma-encoding.md: queue name asciiz at +0x0C; neuronsim: the block list's pool index at +0x30.
  EXPECT_EQ(b, bytes({{0x00, 0xC1}, {0x01, 0x10}, {0x0C, 'q'}, {0x0D, '0'}}));
  ASSERT_EQ(pool.entries.size(), 1u);
  EXPECT_EQ(pool.entries[0].texts, (std::vector<std::string>{"b0", "b1"}));
  EXPECT_EQ(pool_to_json(pool), R"([{"texts":["b0","b1"]}])");
  // Equal values share one entry.
  EXPECT_EQ(encode(t, p, CoreGen::V2, {}, &pool)[0], b);
  EXPECT_EQ(pool.entries.size(), 1u);
  // A name longer than its slot, and a pool value without a pool, are refused.
  Inst longq = t;
  longq.f.queue = std::string(32, 'q');
  EXPECT_THROW(encode(longq, p, CoreGen::V2, {}, &pool), SemanticError);
  EXPECT_THROW(encode(t, p, CoreGen::V2), SemanticError);
  // An index past the pool names the field.
  Bundle bad = b;
  bad[0x30] = 5;
  try {
    decode(bad.data(), CoreGen::V2, static_cast<int>(Engine::DMA), p, nullptr, std::nullopt, {}, {}, &pool);
    FAIL();
  } catch (const InputError &e) {
    EXPECT_EQ(e.context().field, "dma_blocks (+0x30)");
    EXPECT_NE(std::string(e.what()).find("pool index 5 past the stream pool (1 entries)"), std::string::npos) << e.what();
  }
  // An entry of the wrong kind.
  BundlePool wrong;
  PoolEntry e;
  e.text = "b0";
  wrong.entries.push_back(e);
  EXPECT_THROW(decode(b.data(), CoreGen::V2, static_cast<int>(Engine::DMA), p, nullptr, std::nullopt, {}, {}, &wrong),
               InputError);
}

TEST(BundleControl, StreamDirKeepsBlockTableAndPool) {
  Program p = make_prog();
  auto add = [&](Inst in) {
    in.index = static_cast<int>(p.insts.size());
    in.name = "i" + std::to_string(in.index);
    Node n;
    n.inst = in.index;
    p.body.push_back(n);
    p.insts.push_back(in);
  };
  Inst mv;
  mv.type = IT::RegisterMove, mv.engine = Engine::SP, mv.ins = {imm(3)}, mv.outs = {reg("r1")};
  add(mv);
  Inst call;
  call.type = IT::Call, call.engine = Engine::SP, call.f.target = "callee", call.f.table_id = 1;
  call.ins = {bundletest::ap(1, Dtype::float32, {{64, 128}, {1, 64}})};
  call.outs = {bundletest::ap(0, Dtype::float32, {{64, 128}, {1, 64}})};
  add(call);
  add(branch());
  Inst u;
  u.type = IT::UnconditionalBranch, u.engine = Engine::SP, u.f.target = "entry";
  add(u);
  p.blocks = {{"entry", 0}, {"loop", 1}, {"exit", 3}};
  const std::string dir = neuronsim::testing::temp_dir("bundles");
  write_bundle_dir(p, CoreGen::V3, dir);
  const Program q = read_bundle_dir(dir);
  ASSERT_EQ(q.blocks.size(), 3u);
  EXPECT_EQ(q.blocks[1].name, "loop");
  EXPECT_EQ(q.blocks[2].first, 3u);
  ASSERT_EQ(q.insts.size(), p.insts.size());
  for (size_t i = 0; i < p.insts.size(); ++i) {
    std::string why;
    EXPECT_TRUE(same_bundle_content(p.insts[i], q.insts[i], &why)) << i << ": " << why;
  }
  // A manifest whose pool lost its entry: the decode error names the stream file, the bundle offset and the row.
  const std::string mpath = dir + "/manifest.json";
  nlohmann::json m;
  std::ifstream(mpath) >> m;
  m["pool"] = nlohmann::json::array();
  std::ofstream(mpath) << m.dump();
  try {
    read_bundle_dir(dir);
    FAIL();
  } catch (const InputError &e) {
    EXPECT_NE(e.context().file.find("SP.bin @64"), std::string::npos) << e.context().file;
    EXPECT_EQ(e.context().field, "args (+0x34)");
  }
  // A block table entry past the instructions.
  m["pool"] = nlohmann::json::parse(R"([{"ins":[{"tensor":1,"dtype":"float32","start":0,"ap":[[64,128],[1,64]]}],
                                        "outs":[{"tensor":0,"dtype":"float32","start":0,"ap":[[64,128],[1,64]]}]}])");
  m["blocks"][2]["first"] = 99;
  std::ofstream(mpath) << m.dump();
  try {
    read_bundle_dir(dir);
    FAIL();
  } catch (const InputError &e) {
    EXPECT_EQ(e.context().field, "blocks[2]");
  }
  // A pool operand naming no tensor.
  m["blocks"][2]["first"] = 3;
  m["pool"][0]["ins"][0]["tensor"] = 7;
  std::ofstream(mpath) << m.dump();
  try {
    read_bundle_dir(dir);
    FAIL();
  } catch (const InputError &e) {
    EXPECT_EQ(e.context().field, "pool[0]");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace test_bundle_control
