// Bundle codec tests: round trips for every covered instruction type and generation, header bytes, the ALU wire
// contract of spec 000, hand-written bundles from the reference pages, and the stream directory format.
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "neuronsim/isa/bundle.hpp"
#include "isa/bundle_test_util.hpp"
#include "support/temp_dir.hpp"

using namespace neuronsim;
using namespace neuronsim::isa;

namespace {

// A program with non-overlapping placements: SBUF tensors a, b, c, m (128 x 64 fp32 or bf16), a PSUM tile and
// two DRAM tensors.
Program make_prog() {
  Program p;
  p.file = "test";
  auto add = [&](const std::string &name, MemoryType mem, Dtype dt, int64_t parts, int64_t free, int64_t addr,
                 int64_t base = 0) {
    Tensor t;
    t.name = name;
    t.mem = mem;
    t.dtype = dt;
    t.shape = {parts, free};
    t.partitions = parts;
    t.bytes_per_partition = free * dtype_size(dt);
    t.addr = addr;
    t.base_partition = base;
    t.allocated = true;
    p.tensors.push_back(t);
  };
  add("a", MemoryType::SB, Dtype::float32, 128, 64, 0);          // 0
  add("b", MemoryType::SB, Dtype::float32, 128, 64, 256);        // 1
  add("c", MemoryType::SB, Dtype::bfloat16, 128, 64, 512);       // 2
  add("m", MemoryType::SB, Dtype::int32, 128, 64, 1024);         // 3
  add("ps", MemoryType::PSUM, Dtype::float32, 128, 128, 0);      // 4
  add("d_in", MemoryType::DRAM, Dtype::float32, 128, 64, 0);     // 5
  add("d_out", MemoryType::DRAM, Dtype::float32, 128, 64, 0);    // 6
  return p;
}

using bundletest::ap;
// A [partitions x n] on-chip tile of tensor t (64 elements per partition).
Arg tile(int tensor, Dtype dt, int64_t parts = 128, int64_t n = 64, int64_t start = 0) {
  return ap(tensor, dt, {{64, parts}, {1, n}}, start);
}
Arg imm(double v) {
  Arg a;
  a.kind = ArgKind::Immediate;
  a.dtype = Dtype::float32;
  a.imm = v;
  return a;
}
Inst make(InstructionType t, Engine e, std::vector<Arg> ins, std::vector<Arg> outs) {
  Inst in;
  in.type = t;
  in.engine = e;
  in.ins = std::move(ins);
  in.outs = std::move(outs);
  return in;
}

void expect_round_trip(const Inst &in, const Program &p, CoreGen g, std::optional<InstructionType> hint = {}) {
  SCOPED_TRACE(std::string(inst_type_name(in.type)) + " on " + core_gen_name(g));
  auto bundles = encode(in, p, g);
  ASSERT_FALSE(bundles.empty());
  DecodeState st;
  std::optional<Inst> got;
  for (size_t i = 0; i < bundles.size(); ++i) {
    const auto &b = bundles[i];
    EXPECT_EQ(b[1], 0x10);
    EXPECT_EQ(b[2], 0);
    EXPECT_EQ(b[3], 0);
    auto d = decode(b.data(), g, static_cast<int>(in.engine), p, &st, hint ? hint : std::optional(in.type));
    EXPECT_EQ(d.complete, i + 1 == bundles.size());
    if (d.complete) got = d.inst;
    EXPECT_FALSE(disasm_line(b.data(), g).empty());
  }
  ASSERT_TRUE(got.has_value());
  std::string why;
  EXPECT_TRUE(same_bundle_content(in, *got, &why)) << why;
}

// One instance of every covered instruction type (for generation g).
std::vector<Inst> corpus(CoreGen g) {
  std::vector<Inst> v;
  {
    Inst in = make(InstructionType::TensorTensor, Engine::DVE, {tile(0, Dtype::float32), tile(1, Dtype::float32)},
                   {tile(2, Dtype::bfloat16)});
    in.f.op = AluOp::is_gt;
    v.push_back(in);
    Inst bv = make(InstructionType::TensorTensor, Engine::DVE, {tile(3, Dtype::int32), tile(3, Dtype::int32, 128, 32, 32)},
                   {tile(3, Dtype::int32, 64, 16)});
    bv.ins[1].ap = {{64, 64}, {2, 16}};
    bv.ins[0].ap = {{64, 64}, {1, 16}};
    bv.f.op = AluOp::bitwise_xor;
    v.push_back(bv);
  }
  {
    Inst in = make(InstructionType::TensorScalarPtr, Engine::DVE, {tile(0, Dtype::float32), imm(2.5), imm(-1.0)},
                   {tile(1, Dtype::float32)});
    in.f.op0 = AluOp::mult;
    in.f.op1 = AluOp::subtract;
    in.f.reverse1 = true;
    v.push_back(in);
    Inst t = in;
    t.ins.pop_back();
    t.f.op1 = AluOp::bypass;
    t.f.apply_transpose = true;
    v.push_back(t);
    Inst r = in;
    r.f.acc = EngineAccumulationType::ZeroAccumulate;
    v.push_back(r);
  }
  {
    Inst in = make(InstructionType::TensorScalar, Engine::DVE, {tile(0, Dtype::float32), imm(4.0)},
                   {tile(1, Dtype::float32)});
    in.f.op0 = AluOp::add;
    v.push_back(in);
  }
  {
    Inst in = make(InstructionType::TensorScalarCache, Engine::DVE, {tile(0, Dtype::float32), imm(0.0)},
                   {tile(1, Dtype::float32)});
    in.f.op0 = AluOp::add;
    in.f.tsc_mode = TSCMode::TensorScan;
    in.f.acc = EngineAccumulationType::AddAccumulate;
    v.push_back(in);
    Inst r = in;
    r.f.tsc_mode = TSCMode::Reduce;
    v.push_back(r);
  }
  {
    Inst in = make(InstructionType::TensorCopy, Engine::DVE, {tile(0, Dtype::float32)}, {tile(2, Dtype::bfloat16)});
    v.push_back(in);
    Inst same = make(InstructionType::TensorCopy, Engine::DVE, {ap(0, Dtype::float32, {{64, 4}, {8, 2}, {2, 4}, {1, 2}})},
                     {tile(1, Dtype::float32, 4, 16)});
    v.push_back(same);
  }
  {
    Inst in = make(InstructionType::Activation, Engine::Activation, {tile(0, Dtype::float32)}, {tile(2, Dtype::bfloat16)});
    in.f.act_func = ActivationFunctionType::Gelu;
    in.f.scale = 0.5;
    in.f.alpha = 0.25;
    in.f.acc = EngineAccumulationType::LoadAccumulate;
    v.push_back(in);
    Inst mz = in;
    mz.f.act_func = ActivationFunctionType::Mish;  // a neuronsim func code
    v.push_back(mz);
  }
  {
    Inst tr = make(InstructionType::TensorReduce, Engine::Pool, {tile(0, Dtype::float32)},
                   {ap(1, Dtype::float32, {{64, 128}}, 0)});
    tr.f.op = AluOp::max;
    tr.f.axis = AxisListType::X;
    tr.f.negate = true;
    v.push_back(tr);
    Inst cr = make(InstructionType::TensorReduce, Engine::Pool, {tile(0, Dtype::float32)},
                   {tile(1, Dtype::float32)});
    cr.f.op = AluOp::average;
    cr.f.axis = AxisListType::C;
    v.push_back(cr);
    Inst crt = cr;
    crt.f.op = AluOp::bitwise_or;
    crt.f.apply_transpose = true;
    crt.f.axis = AxisListType::XYZWC;
    crt.ins[0].dtype = Dtype::int32;
    crt.ins[0].tensor = 3;
    v.push_back(crt);
  }
  {
    Inst ms = make(InstructionType::Memset, Engine::DVE, {}, {tile(1, Dtype::float32)});
    ms.f.constant = 7;
    v.push_back(ms);
    Inst rnd = ms;
    rnd.f.memset_mode = MemsetMode::Random;
    rnd.f.constant = 0;
    v.push_back(rnd);
  }
  {
    Inst io = make(InstructionType::Iota, Engine::DVE, {}, {tile(3, Dtype::int32)});
    io.f.base = -3;
    io.f.channel_multiplier = 64;
    io.f.pattern = {{1, 64}};
    v.push_back(io);
  }
  {
    Inst mm = make(InstructionType::Matmult, Engine::PE, {tile(0, Dtype::float32, 128, 64), tile(1, Dtype::float32, 128, 32)},
                   {ap(4, Dtype::float32, {{128, 64}, {1, 32}})});
    mm.f.start_tensor_calc = true;
    mm.f.stop_tensor_calc = true;
    SemWait w;
    w.sem = 3;
    w.value = 2;
    mm.waits.push_back(w);
    SemUpdate u;
    u.sem = 9;
    u.mode = SemUpdate::Mode::Inc;
    mm.updates.push_back(u);
    v.push_back(mm);
  }
  {
    Inst ld = make(InstructionType::Load, Engine::DMA, {ap(5, Dtype::float32, {{64, 128}, {1, 64}})},
                   {tile(0, Dtype::float32)});
    v.push_back(ld);
    Inst sv = make(InstructionType::Save, Engine::DMA, {tile(1, Dtype::float32, 128, 32, 8)},
                   {ap(6, Dtype::float32, {{64, 128}, {2, 32}}, 1)});
    SemUpdate u;
    u.sem = 200;
    u.mode = SemUpdate::Mode::Set;
    u.value = 77;
    sv.updates.push_back(u);
    v.push_back(sv);
    Inst cp = make(InstructionType::DMACopy, Engine::DMA, {ap(5, Dtype::float32, {{64, 128}, {1, 64}})},
                   {ap(6, Dtype::float32, {{64, 128}, {1, 64}})});
    v.push_back(cp);
  }
  {
    Inst es = make(InstructionType::EventSemaphore, Engine::SP, {}, {});
    SemWait w0, w1;
    w0.sem = 1, w0.value = 5;
    w1.sem = 2, w1.mode = SemWait::Mode::GeReg, w1.reg = "r7", w1.value = 0;
    es.waits = {w0, w1};
    SemUpdate u;
    u.sem = 4, u.mode = SemUpdate::Mode::Add, u.value = 3;
    es.updates = {u};
    v.push_back(es);
    Inst nop = make(InstructionType::NoOp, Engine::SP, {}, {});
    SemWait w;
    w.sem = 10, w.value = 4;
    nop.waits = {w};
    SemUpdate d;
    d.sem = 11, d.mode = SemUpdate::Mode::Dec;
    nop.updates = {d};
    v.push_back(nop);
  }
  if (g == CoreGen::V4) {
    Inst ex = make(InstructionType::Exponential, Engine::DVE, {tile(0, Dtype::float32)}, {tile(1, Dtype::float32)});
    ex.f.reduce_cmd = EngineAccumulationType::ZeroAccumulate;
    v.push_back(ex);
  }
  {
    Inst rc = make(InstructionType::Reciprocal, Engine::DVE, {tile(0, Dtype::float32)}, {tile(1, Dtype::float32)});
    v.push_back(rc);
    Inst pl = make(InstructionType::Pool, Engine::Pool, {ap(0, Dtype::float32, {{64, 128}, {8, 4}, {2, 4}, {1, 2}})},
                   {ap(1, Dtype::float32, {{64, 128}, {1, 4}})});
    pl.f.pool_func = PoolFunctionType::Avg;
    v.push_back(pl);
  }
  {
    Inst cp = make(InstructionType::CopyPredicated, Engine::DVE, {tile(3, Dtype::int32), tile(0, Dtype::float32)},
                   {tile(1, Dtype::float32)});
    v.push_back(cp);
    Inst cast = cp;
    cast.outs[0] = tile(2, Dtype::bfloat16);
    v.push_back(cast);
  }
  {
    Inst sel = make(InstructionType::TensorScalarAffineSelect, Engine::DVE, {tile(0, Dtype::float32)},
                    {tile(1, Dtype::float32)});
    sel.f.compare_op = AluOp::is_ge;
    sel.f.pattern = {{-1, 64}};
    sel.f.base = 5;
    sel.f.channel_multiplier = 1;
    sel.f.fill_value = -1e9f;
    v.push_back(sel);
  }
  return v;
}

} // namespace

TEST(Bundle, RoundTripEveryCoveredTypeEveryGeneration) {
  const Program p = make_prog();
  for (CoreGen g : kCoreGens) {
    auto v = corpus(g);
    for (const Inst &in : v) expect_round_trip(in, p, g);
  }
}

TEST(Bundle, HeaderIsOpcode10_0_0) {
  const Program p = make_prog();
  Inst in = make(InstructionType::TensorTensor, Engine::DVE, {tile(0, Dtype::float32), tile(1, Dtype::float32)},
                 {tile(1, Dtype::float32)});
  in.f.op = AluOp::add;
  auto b = encode(in, p, CoreGen::V2);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0][0], 0x41);
  EXPECT_EQ(b[0][1], 0x10);
  EXPECT_EQ(b[0][2], 0x00);
  EXPECT_EQ(b[0][3], 0x00);
  // Activation renumbers at V4 (spec 003): 0x21 -> 0x25.
  Inst act = make(InstructionType::Activation, Engine::Activation, {tile(0, Dtype::float32)}, {tile(1, Dtype::float32)});
  EXPECT_EQ(encode(act, p, CoreGen::V3)[0][0], 0x21);
  EXPECT_EQ(encode(act, p, CoreGen::V4)[0][0], 0x25);
  // Matmult emits LoadStationary 0x01 then MatMul 0x02.
  Inst mm = make(InstructionType::Matmult, Engine::PE, {tile(0, Dtype::float32), tile(1, Dtype::float32)},
                 {ap(4, Dtype::float32, {{128, 128}, {1, 64}})});
  auto mb = encode(mm, p, CoreGen::V3);
  ASSERT_EQ(mb.size(), 2u);
  EXPECT_EQ(mb[0][0], 0x01);
  EXPECT_EQ(mb[1][0], 0x02);
  EXPECT_EQ(mb[1][0x24], 0);  // perf mode None
  // DoubleColumn (ordinal 2) in the perf-opt byte +0x24, the weights zero point 7 in LoadStationary's +0x27, the
  // ifmap zero point 128 in MatMul's +0x29 (docs/bundle-layout.md: neuronsim's bytes).
  mm.f.perf_mode = MatmultPerfMode::DoubleColumn;
  mm.f.weights_quant_offset = 7;
  mm.f.ifmap_quant_offset = 128;
  mb = encode(mm, p, CoreGen::V3);
  EXPECT_EQ(mb[1][0x24], 2);
  EXPECT_EQ(mb[0][0x27], 7);
  EXPECT_EQ(mb[1][0x29], 128);
}

TEST(Bundle, ComparisonOpsUseTheReorderedBytes) {
  const Program p = make_prog();
  const std::pair<AluOp, uint8_t> cases[] = {{AluOp::is_equal, 0x12}, {AluOp::not_equal, 0x18}, {AluOp::is_gt, 0x13},
                                             {AluOp::is_ge, 0x14},    {AluOp::is_lt, 0x16},     {AluOp::is_le, 0x15}};
  for (CoreGen g : kCoreGens)
    for (auto [op, byte] : cases) {
      Inst in = make(InstructionType::TensorTensor, Engine::DVE, {tile(0, Dtype::float32), tile(1, Dtype::float32)},
                     {tile(1, Dtype::float32)});
      in.f.op = op;
      auto b = encode(in, p, g);
      EXPECT_EQ(b[0][0x0E], byte) << alu_name(op);  // reference tensortensor-encoding.md: ALU byte at +0x0E
      auto d = decode(b[0].data(), g, static_cast<int>(Engine::DVE), p);
      EXPECT_EQ(d.inst.f.op, op);
    }
}

TEST(Bundle, AverageAndElemwiseMulRefusedOnTheAluPath) {
  const Program p = make_prog();
  for (AluOp op : {AluOp::average, AluOp::elemwise_mul}) {
    Inst in = make(InstructionType::TensorTensor, Engine::DVE, {tile(0, Dtype::float32), tile(1, Dtype::float32)},
                   {tile(1, Dtype::float32)});
    in.f.op = op;
    try {
      encode(in, p, CoreGen::V4);
      FAIL() << "expected an error";
    } catch (const SemanticError &e) {
      EXPECT_NE(std::string(e.what()).find("Invalid enum variant for enum AluOpType"), std::string::npos) << e.what();
    }
  }
  // average does reach the wire through the cross-lane reduce command (a dedicated path, not the ALU byte).
  Inst cr = make(InstructionType::TensorReduce, Engine::Pool, {tile(0, Dtype::float32)}, {tile(1, Dtype::float32)});
  cr.f.op = AluOp::average;
  cr.f.axis = AxisListType::C;
  EXPECT_EQ(encode(cr, p, CoreGen::V2)[0][0x23], 1);
}

TEST(Bundle, ModIntIsC8OnV4AndAbsentBefore) {
  const Program p = make_prog();
  Inst in = make(InstructionType::TensorTensor, Engine::DVE, {tile(3, Dtype::int32), tile(3, Dtype::int32)},
                 {tile(3, Dtype::int32)});
  in.f.op = AluOp::mod_int;
  auto b = encode(in, p, CoreGen::V4);
  EXPECT_EQ(b[0][0x0E], 0xC8);
  EXPECT_EQ(decode(b[0].data(), CoreGen::V4, 5, p).inst.f.op, AluOp::mod_int);
  EXPECT_THROW(encode(in, p, CoreGen::V2), SemanticError);
}

TEST(Bundle, DecodeErrorsNameOffsetAndField) {
  const Program p = make_prog();
  uint8_t b[64] = {};
  b[0] = 0xFB;  // no instruction type uses it
  b[1] = 0x10;
  try {
    decode(b, CoreGen::V3, 5, p);
    FAIL();
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("+0x00"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown opcode byte 0xfb"), std::string::npos) << e.what();
  }
  b[0] = 0x41;
  b[1] = 0x11;  // not the 16-dword length
  EXPECT_THROW(decode(b, CoreGen::V3, 5, p), InputError);
  // An ALU byte no op maps to: 0x20 (abs_max) exists only from V4 on.
  Inst in = make(InstructionType::TensorTensor, Engine::DVE, {tile(0, Dtype::float32), tile(1, Dtype::float32)},
                 {tile(1, Dtype::float32)});
  auto e4 = encode(in, p, CoreGen::V2)[0];
  e4[0x0E] = 0x20;
  try {
    decode(e4.data(), CoreGen::V2, 5, p);
    FAIL();
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("op (+0x0e)"), std::string::npos) << e.what();
  }
  // A partition count of 0 (num_active_partitions, +0x0f) would run the instruction on nothing.
  auto z = encode(in, p, CoreGen::V2)[0];
  z[0x0F] = 0;
  try {
    decode(z.data(), CoreGen::V2, 5, p);
    FAIL();
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("(+0x0f)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("partition count byte is 0"), std::string::npos) << e.what();
  }
  // 0x9A is TensorScalar(Ptr)'s fused reduce and TensorScalarCache's Reduce ([col]): no hint, no decode.
  Inst ts = make(InstructionType::TensorScalarCache, Engine::DVE, {tile(0, Dtype::float32), imm(1)}, {tile(1, Dtype::float32)});
  auto tb = encode(ts, p, CoreGen::V2)[0];
  EXPECT_EQ(tb[0], 0x9A);
  EXPECT_THROW(decode(tb.data(), CoreGen::V2, 5, p), InputError);
  EXPECT_EQ(decode(tb.data(), CoreGen::V2, 5, p, nullptr, InstructionType::TensorScalarCache).inst.type,
            InstructionType::TensorScalarCache);
}

TEST(Bundle, SplitSelectors) {
  const Program p = make_prog();
  Inst cp = make(InstructionType::TensorCopy, Engine::DVE, {tile(0, Dtype::float32)}, {tile(1, Dtype::float32)});
  EXPECT_EQ(encode(cp, p, CoreGen::V3)[0][0], 0x46);
  cp.outs[0] = tile(2, Dtype::bfloat16);
  EXPECT_EQ(encode(cp, p, CoreGen::V3)[0][0], 0x47);
  Inst ms = make(InstructionType::Memset, Engine::DVE, {}, {tile(1, Dtype::float32)});
  EXPECT_EQ(encode(ms, p, CoreGen::V3)[0][0], 0x49);
  ms.f.memset_mode = MemsetMode::Random;
  EXPECT_EQ(encode(ms, p, CoreGen::V3)[0][0], 0x4D);
  Inst tr = make(InstructionType::TensorReduce, Engine::Pool, {tile(3, Dtype::int32)}, {tile(3, Dtype::int32)});
  tr.f.op = AluOp::bitwise_and;
  EXPECT_EQ(encode(tr, p, CoreGen::V3)[0][0], 0x7D);
  tr.f.axis = AxisListType::C;
  EXPECT_EQ(encode(tr, p, CoreGen::V3)[0][0], 0x52);
  tr.f.apply_transpose = true;
  EXPECT_EQ(encode(tr, p, CoreGen::V3)[0][0], 0x84);
  // A field no form carries is refused rather than silently dropped.
  Inst tt = make(InstructionType::TensorTensor, Engine::DVE, {tile(0, Dtype::float32), tile(1, Dtype::float32)},
                 {tile(1, Dtype::float32)});
  tt.f.negate = true;
  EXPECT_THROW(encode(tt, p, CoreGen::V3), SemanticError);
}

// Hand-written bundles from the reference pages' worked examples.
TEST(Bundle, ReferenceExampleTensorDescriptorBytes) {
  // reference isa/tensor-descriptors.md worked example: strides {64, 1} then counts {16, 32} after the ADDR4
  // word, "40 00 01 00 10 00 20 00" (two arrays, never interleaved). Placed in the first two slots of a
  // TENSOR3D (third slot unit-filled {1, 1}). The page lists the outer dim first, while the packer loop it
  // documents writes the innermost free dim to slot 0; we follow the loop (docs/bundle-layout.md), so these bytes
  // read back as inner [64 x 16], outer [1 x 32].
  const Program p = make_prog();
  Bundle b{};
  b[0] = 0x41, b[1] = 0x10;
  b[0x0C] = 0xAA;  // in0 | in1 float32
  b[0x0D] = 0x0A;  // out float32
  b[0x0F] = 1;     // one partition
  const uint8_t desc[16] = {0, 0, 0, 0, 0x40, 0x00, 0x01, 0x00, 0x01, 0x00, 0x10, 0x00, 0x20, 0x00, 0x01, 0x00};
  for (int k = 0; k < 3; ++k) std::copy(desc, desc + 16, b.begin() + 0x10 + 16 * k);
  auto d = decode(b.data(), CoreGen::V2, 5, p);
  ASSERT_TRUE(d.complete);
  const Arg &o = d.inst.outs[0];
  EXPECT_EQ(o.tensor, 0);  // ADDR4 0 = SBUF partition 0 byte 0 = tensor a
  ASSERT_EQ(o.ap.size(), 3u);
  EXPECT_EQ(o.ap[0].num, 1);
  EXPECT_EQ(o.ap[1].step, 1);
  EXPECT_EQ(o.ap[1].num, 32);
  EXPECT_EQ(o.ap[2].step, 64);
  EXPECT_EQ(o.ap[2].num, 16);
  // and encoding it back gives the page's bytes
  auto e = encode(d.inst, p, CoreGen::V2)[0];
  EXPECT_TRUE(std::equal(desc, desc + 16, e.begin() + 0x10));
}

TEST(Bundle, ReferenceExampleEventSemaphore) {
  // reference isa/sp-sync-encoding.md section 2: wait0 GE-imm 0x05 @+0x04 idx @+0x05 value @+0x08; update
  // mode @+0x22 (sem-inc 0x13), idx @+0x23, value skipped for inc.
  const Program p = make_prog();
  Bundle b{};
  b[0] = 0xA0, b[1] = 0x10;
  b[0x04] = 0x05, b[0x05] = 12, b[0x08] = 3;
  b[0x22] = 0x13, b[0x23] = 40;
  auto d = decode(b.data(), CoreGen::V2, static_cast<int>(Engine::SP), p);
  ASSERT_EQ(d.inst.type, InstructionType::EventSemaphore);
  ASSERT_EQ(d.inst.waits.size(), 1u);
  EXPECT_EQ(d.inst.waits[0].sem, 12);
  EXPECT_EQ(d.inst.waits[0].value, 3);
  EXPECT_EQ(d.inst.waits[0].mode, SemWait::Mode::GeImm);
  ASSERT_EQ(d.inst.updates.size(), 1u);
  EXPECT_EQ(d.inst.updates[0].mode, SemUpdate::Mode::Inc);
  EXPECT_EQ(d.inst.updates[0].sem, 40);
  // The raw reading (isa-enum-ordinals.md ENUM 14) places the BIR ordinal (sem-inc = 3) instead.
  CodecOptions raw;
  raw.update_mode = UpdateModeReading::Raw;
  b[0x22] = 3;
  EXPECT_EQ(decode(b.data(), CoreGen::V2, 6, p, nullptr, {}, raw).inst.updates.at(0).mode, SemUpdate::Mode::Inc);
  EXPECT_THROW(decode(b.data(), CoreGen::V2, 6, p), InputError);  // 0x03 is no LUT byte
}

TEST(Bundle, ReferenceExampleDmaSave) {
  // reference isa/dma-encoding.md worked example: a static SB -> DRAM Save; 0xD4, sync_command 3 at +0x0F, ADDR8
  // mode 0x10 at +0x17 and +0x2F, element spans at +0x24 / +0x3C, dtypes at +0x3E / +0x3F.
  const Program p = make_prog();
  Inst sv = make(InstructionType::Save, Engine::DMA, {tile(0, Dtype::float32)}, {ap(6, Dtype::float32, {{64, 128}, {1, 64}})});
  auto b = encode(sv, p, CoreGen::V2)[0];
  EXPECT_EQ(b[0], 0xD4);
  EXPECT_EQ(b[0x0F], 3);
  EXPECT_EQ(b[0x17], 0x10);
  EXPECT_EQ(b[0x2F], 0x10);
  EXPECT_EQ(b[0x24] | (b[0x25] << 8), 256);  // 64 fp32
  EXPECT_EQ(b[0x3C] | (b[0x3D] << 8), 256);
  EXPECT_EQ(b[0x3E], 0x0A);
  EXPECT_EQ(b[0x3F], 0x0A);
  EXPECT_EQ(decode(b.data(), CoreGen::V2, 4, p).inst.type, InstructionType::Save);  // direction separates 0xD4
}

TEST(Bundle, StreamDirRoundTripAndTruncation) {
  const Program base = make_prog();
  Program p = base;
  auto v = corpus(CoreGen::V3);
  for (auto &in : v) {
    in.index = static_cast<int>(p.insts.size());
    in.name = "I-" + std::to_string(in.index);
    p.insts.push_back(in);
  }
  const std::string dir = neuronsim::testing::temp_dir("bundles");
  write_bundle_dir(p, CoreGen::V3, dir);
  EXPECT_TRUE(std::filesystem::exists(dir + "/DVE.bin"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/manifest.json"));
  CoreGen g = CoreGen::V2;
  Program q = read_bundle_dir(dir, &g);
  EXPECT_EQ(g, CoreGen::V3);
  ASSERT_EQ(q.insts.size(), p.insts.size());
  ASSERT_EQ(q.tensors.size(), p.tensors.size());
  for (size_t i = 0; i < p.insts.size(); ++i) {
    std::string why;
    EXPECT_TRUE(same_bundle_content(p.insts[i], q.insts[i], &why)) << p.insts[i].name << ": " << why;
    EXPECT_EQ(q.insts[i].name, p.insts[i].name);
  }
  // Truncate the DVE stream by 10 bytes.
  const auto size = std::filesystem::file_size(dir + "/DVE.bin");
  std::filesystem::resize_file(dir + "/DVE.bin", size - 10);
  try {
    read_bundle_dir(dir);
    FAIL();
  } catch (const InputError &e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("DVE.bin"), std::string::npos) << m;
    EXPECT_NE(m.find("byte offset " + std::to_string(size - 64)), std::string::npos) << m;
  }
  std::filesystem::remove_all(dir);
}

TEST(Bundle, FormsAgreeWithInstructionWireTable) {
  // bundle_fields.def is cross-checked on first use; every non-EXTRA form must list a type and generation.
  auto forms = bundle_forms();
  EXPECT_GT(forms.size(), 30u);
  for (const auto &f : forms) {
    EXPECT_FALSE(f.types.empty()) << f.name;
    // The EXTRA forms, each documented in bundle_fields.def: the plain CopyPredicated bytes, the accumulator
    // drains appended to two-output reduces, and BNBackprop2's 0x65 data bundle.
    static const std::set<std::string> extra = {"CPRED", "CPRED_CAST", "DRAIN_TS", "DRAIN_RS", "DRAIN_ACT",
                                                "BNBP2_DATA"};
    if (f.extra) {
      EXPECT_TRUE(extra.count(f.name)) << f.name;
    }
  }
}
