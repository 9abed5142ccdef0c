// Issue 6 round-trip requirement: for every InstructionType the simulator executes (engines::executes) and every
// generation on which instruction_wire.def gives it an opcode, a representative instruction -- operands and fields
// as its engines/ops/*.cpp convention reads them -- survives Inst -> bundles -> Inst. A type that executes but
// cannot be encoded fails the test unless it is on the short exception list below, with its reason.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "neuronsim/engines/ops.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "isa/bundle_test_util.hpp"
#include "neuronsim/isa/dump.hpp"

// The helpers below live in namespace test_bundle_coverage, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_bundle_coverage {

using namespace neuronsim;
using namespace neuronsim::isa;
using IT = InstructionType;

namespace {

// Executable types with an opcode that have no bundle layout yet. Keep this short; each entry says why. Empty:
// every executable type with an opcode round-trips (issue 6). Branch targets, names and lists that no bundle holds
// inline go through the stream's block table and pool (docs/bundle-layout.md).
const std::map<IT, const char *> kExceptions = {};

enum T : int { A, B, C, M, PS, DIN, DOUT, S1, V8, ST, S2, BN6, G3, U8X, kNumT };

Program make_prog() {
  Program p;
  p.file = "coverage";
  int64_t addr = 0;
  auto add = [&](const std::string &name, MemoryType mem, Dtype dt, int64_t parts, int64_t free) {
    Tensor t;
    t.name = name;
    t.mem = mem;
    t.dtype = dt;
    t.shape = {parts, free};
    t.partitions = parts;
    t.bytes_per_partition = free * dtype_size(dt);
    if (mem == MemoryType::SB) {
      t.addr = addr;
      addr += t.bytes_per_partition;
    }
    t.allocated = true;
    p.tensors.push_back(t);
  };
  add("a", MemoryType::SB, Dtype::float32, 128, 64);       // A
  add("b", MemoryType::SB, Dtype::float32, 128, 64);       // B
  add("c", MemoryType::SB, Dtype::bfloat16, 128, 64);      // C
  add("m", MemoryType::SB, Dtype::int32, 128, 64);         // M
  add("ps", MemoryType::PSUM, Dtype::float32, 128, 128);   // PS
  add("d_in", MemoryType::DRAM, Dtype::float32, 128, 64);  // DIN
  add("d_out", MemoryType::DRAM, Dtype::float32, 128, 64); // DOUT
  add("s1", MemoryType::SB, Dtype::float32, 128, 1);       // S1: per-partition scalars
  add("v8", MemoryType::SB, Dtype::float32, 128, 8);       // V8: top-8 values
  add("st", MemoryType::SB, Dtype::uint32, 128, 24);       // ST: random state
  add("s2", MemoryType::SB, Dtype::float32, 128, 2);       // S2
  add("bn6", MemoryType::SB, Dtype::float32, 128, 6);      // BN6
  add("g3", MemoryType::SB, Dtype::float32, 128, 3);       // G3
  add("u8x", MemoryType::SB, Dtype::uint32, 128, 8);       // U8X: top-8 indices
  p.blocks = {{"entry", 0}, {"loop", 0}, {"exit", 0}};    // branch targets
  return p;
}

using bundletest::ap;
Arg tile(int tensor, Dtype dt, int64_t parts = 128, int64_t n = 64) { return ap(tensor, dt, {{64, parts}, {1, n}}); }
// A [P, 1] per-partition scalar pointer, as the BIR writes it.
Arg ptr(int64_t parts = 128, int64_t start = 0) { return ap(S1, Dtype::float32, {{1, parts}, {1, 1}}, start); }
Arg col(int tensor, Dtype dt, int64_t n, int64_t parts = 128) { return ap(tensor, dt, {{n, parts}, {1, n}}); }
Arg imm(double v, Dtype dt = Dtype::float32) {
  Arg a;
  a.kind = ArgKind::Immediate;
  a.dtype = dt;
  a.imm = v;
  return a;
}
Arg reg(const std::string &r) {
  Arg a;
  a.kind = ArgKind::Register;
  a.dtype = Dtype::int32;
  a.reg = r;
  return a;
}
Engine engine_of(IT t) {
  const auto &e = inst_type_info(t).engines;
  return e.empty() ? Engine::SP : e[0];
}
Inst make(IT t, std::vector<Arg> ins, std::vector<Arg> outs) {
  Inst in;
  in.type = t;
  in.engine = engine_of(t);
  in.ins = std::move(ins);
  in.outs = std::move(outs);
  return in;
}

// Representative instances of type t on generation g (several when the type has [split] forms worth covering).
std::vector<Inst> representatives(IT t, CoreGen g) {
  const Dtype F = Dtype::float32;
  std::vector<Inst> v;
  switch (t) {
  case IT::Load: v.push_back(make(t, {ap(DIN, F, {{64, 128}, {1, 64}})}, {tile(A, F)})); break;
  case IT::Save: v.push_back(make(t, {tile(B, F)}, {ap(DOUT, F, {{64, 128}, {1, 64}})})); break;
  case IT::DMACopy: {
    Inst in = make(t, {ap(DIN, F, {{64, 128}, {1, 64}})}, {ap(DOUT, F, {{64, 128}, {1, 64}})});
    v.push_back(in);
    in.f.copy_mode = CopyMode::Transpose;
    in.f.transpose_op = static_cast<TransposeOps>(1);
    v.push_back(in);
    break;
  }
  case IT::TensorCopy: v.push_back(make(t, {tile(A, F)}, {tile(C, Dtype::bfloat16)})); break;
  case IT::GPSIMDSB2SB: v.push_back(make(t, {tile(A, F)}, {tile(B, F)})); break;
  case IT::Memset: {
    Inst in = make(t, {}, {tile(B, F)});
    in.f.constant = 0.5;
    v.push_back(in);
    Inst i2 = make(t, {}, {tile(M, Dtype::int32)});
    i2.f.constant = -3;
    v.push_back(i2);
    Inst r = make(t, {}, {tile(B, F)});
    r.f.memset_mode = MemsetMode::Random;
    v.push_back(r);
    break;
  }
  case IT::Iota: {
    Inst in = make(t, {}, {tile(M, Dtype::int32)});
    in.f.base = -3, in.f.channel_multiplier = 64, in.f.pattern = {{1, 64}};
    v.push_back(in);
    break;
  }
  case IT::TensorScalarAffineSelect: {
    Inst in = make(t, {tile(A, F)}, {tile(B, F)});
    in.f.compare_op = AluOp::is_ge, in.f.pattern = {{-1, 64}}, in.f.base = 5, in.f.channel_multiplier = 1;
    in.f.fill_value = -1e9;
    v.push_back(in);
    break;
  }
  case IT::CopyPredicated: v.push_back(make(t, {tile(M, Dtype::int32), tile(A, F)}, {tile(B, F)})); break;
  case IT::TensorTensor: {
    Inst in = make(t, {tile(A, F), tile(B, F)}, {tile(C, Dtype::bfloat16)});
    in.f.op = AluOp::add;
    v.push_back(in);
    break;
  }
  case IT::TensorScalar: {
    Inst in = make(t, {tile(A, F), imm(2.0)}, {tile(B, F)});
    in.f.op0 = AluOp::mult;
    v.push_back(in);
    Inst c = make(t, {tile(A, F)}, {tile(B, F)});  // const0 / const1 fields
    c.f.op0 = AluOp::add, c.f.op1 = AluOp::mult, c.f.const0 = 1.5, c.f.const1 = -2;
    v.push_back(c);
    break;
  }
  case IT::TensorScalarPtr: {
    Inst in = make(t, {tile(A, F), ptr(), imm(-1.0)}, {tile(B, F)});
    in.f.op0 = AluOp::subtract, in.f.op1 = AluOp::mult, in.f.reverse1 = true;
    v.push_back(in);
    Inst scan = make(t, {tile(A, F), tile(B, F), imm(0.0)}, {tile(C, Dtype::bfloat16)});
    scan.f.is_tensor_tensor_scan = true, scan.f.op0 = AluOp::mult, scan.f.op1 = AluOp::add;
    v.push_back(scan);
    Inst stt = make(t, {tile(A, F), ptr(), tile(B, F)}, {tile(C, Dtype::bfloat16)});
    stt.f.is_scalar_tensor_tensor = true, stt.f.op0 = AluOp::mult, stt.f.op1 = AluOp::add;
    v.push_back(stt);
    Inst addr = make(t, {tile(A, F), ptr(), ptr(128, 0)}, {tile(B, F)});
    addr.f.is_tensor_scalar_addr = true, addr.f.op0 = AluOp::add, addr.f.op1 = AluOp::max;
    v.push_back(addr);
    Inst red = make(t, {tile(A, F), imm(2.0)}, {tile(B, F), ap(S1, F, {{1, 128}})});
    red.f.op0 = AluOp::mult, red.f.op1 = AluOp::add, red.f.acc = EngineAccumulationType::ZeroAccumulate;
    red.f.negate_second_output = true;
    v.push_back(red);
    break;
  }
  case IT::TensorScalarCache: {
    Inst in = make(t, {tile(A, F), imm(0.0)}, {tile(B, F)});
    in.f.op0 = AluOp::add, in.f.tsc_mode = TSCMode::Cumulative, in.f.acc = EngineAccumulationType::ZeroAccumulate;
    v.push_back(in);
    Inst d = make(t, {tile(A, F), ptr()}, {ap(B, F, {{64, 128}}), ap(S1, F, {{1, 128}})});
    d.f.op0 = AluOp::mult, d.f.op1 = AluOp::add, d.f.acc = EngineAccumulationType::ZeroAccumulate;
    v.push_back(d);
    break;
  }
  case IT::TensorReduce: {
    Inst in = make(t, {tile(A, F)}, {ap(B, F, {{64, 128}})});
    in.f.op = AluOp::max, in.f.negate = true;
    v.push_back(in);
    break;
  }
  case IT::Pool: v.push_back(make(t, {ap(A, F, {{64, 128}, {8, 4}, {1, 2}})}, {ap(B, F, {{64, 128}, {1, 4}})})); break;
  case IT::Activation: {
    Inst in = make(t, {tile(A, F), imm(0.5), ptr(), imm(0.25)}, {tile(C, Dtype::bfloat16)});
    in.f.act_func = ActivationFunctionType::Exp;
    v.push_back(in);
    Inst f = make(t, {tile(A, F)}, {tile(B, F)});  // scale / alpha fields, accumulator drain
    f.f.act_func = ActivationFunctionType::Prelu, f.f.scale = 2.0, f.f.alpha = 0.125;
    f.f.acc = EngineAccumulationType::ZeroAccumulate;
    f.outs.push_back(ap(S1, F, {{1, 128}}));
    v.push_back(f);
    break;
  }
  case IT::Reciprocal: v.push_back(make(t, {tile(A, F)}, {tile(B, F)})); break;
  case IT::Exponential: {
    Inst in = make(t, {tile(A, F), ptr()}, {tile(B, F), ap(S1, F, {{1, 128}})});
    in.f.reduce_cmd = EngineAccumulationType::ZeroAccumulate;
    v.push_back(in);
    break;
  }
  case IT::Matmult: {
    Inst in = make(t, {tile(A, F, 128, 64), tile(B, F, 128, 32)}, {ap(PS, F, {{128, 64}, {1, 32}})});
    in.f.stop_tensor_calc = true;
    v.push_back(in);
    Inst tr = in;
    tr.f.is_transpose = true;
    v.push_back(tr);
    Inst t1 = make(t, {tile(A, F, 128, 64)}, {ap(PS, F, {{128, 64}, {1, 128}})});
    t1.f.is_transpose = true;
    v.push_back(t1);
    // A perf mode and both zero points (uint8 offsets).
    Inst pm = in;
    pm.f.perf_mode = MatmultPerfMode::DoubleRow;
    pm.f.weights_quant_offset = 3;
    pm.f.ifmap_quant_offset = 250;
    pm.given.set(static_cast<size_t>(Field::perf_mode));
    pm.given.set(static_cast<size_t>(Field::weights_quant_offset));
    pm.given.set(static_cast<size_t>(Field::ifmap_quant_offset));
    v.push_back(pm);
    break;
  }
  case IT::MatmultSparse:
    v.push_back(make(t, {tile(A, F, 128, 64), tile(B, F, 128, 32), tile(M, Dtype::int32, 128, 64)},
                     {ap(PS, F, {{128, 64}, {1, 32}})}));
    break;
  case IT::MatmultMx:
    v.push_back(make(t, {tile(A, Dtype::float8e4, 128, 16), tile(B, Dtype::float8e4, 128, 8),
                         ap(M, Dtype::uint8, {{64, 16}, {1, 16}}), ap(M, Dtype::uint8, {{64, 16}, {1, 8}}, 32)},
                     {ap(PS, F, {{128, 64}, {1, 8}})}));
    break;
  case IT::QuantizeMx:
    v.push_back(make(t, {tile(A, F, 128, 64)}, {tile(B, Dtype::float8e4, 128, 16), ap(M, Dtype::uint8, {{64, 16}, {1, 16}})}));
    break;
  case IT::ReadActivationAccumulator:
  case IT::ActivationReadAccumulator:
  case IT::DveReadAccumulator: {
    Inst in = make(t, {}, {ap(S1, F, {{1, 128}})});
    in.f.negate = t == IT::DveReadAccumulator;
    v.push_back(in);
    break;
  }
  case IT::BNStats: v.push_back(make(t, {tile(A, F)}, {col(BN6, F, 6)})); break;
  case IT::BNStatsAggregate: v.push_back(make(t, {col(BN6, F, 6)}, {col(S2, F, 2)})); break;
  case IT::BNGradients: v.push_back(make(t, {tile(A, F), tile(B, F), ptr(), ptr()}, {col(G3, F, 3)})); break;
  case IT::BNBackprop: {
    Inst in = make(t, {tile(A, F), tile(B, F), col(G3, F, 3), ptr()}, {tile(C, Dtype::bfloat16)});
    in.f.total_elements = 64;
    v.push_back(in);
    break;
  }
  case IT::BNBackprop2: {
    Inst in = make(t, {tile(A, F), tile(B, F), ap(S1, F, {{1, 128}}), col(S2, F, 2), ptr()}, {tile(C, Dtype::bfloat16)});
    in.f.total_elements = 64;
    v.push_back(in);
    break;
  }
  case IT::RangeSelect: {
    Inst in = make(t, {tile(A, F), imm(3.0), ptr()}, {tile(B, F)});
    in.f.compare_op0 = AluOp::is_ge, in.f.compare_op1 = AluOp::is_lt, in.f.base = 2, in.f.fill_value = -1e9;
    v.push_back(in);
    Inst d = in;
    d.outs.push_back(ap(S1, F, {{1, 128}}));
    d.f.reduce_cmd = EngineAccumulationType::ZeroAccumulate;
    v.push_back(d);
    break;
  }
  case IT::Max: v.push_back(make(t, {tile(A, F)}, {col(V8, F, 8)})); break;
  case IT::MaxIndex: v.push_back(make(t, {col(V8, F, 8), tile(A, F)}, {col(U8X, Dtype::uint32, 8)})); break;
  case IT::MatchReplace: {
    Inst in = make(t, {col(V8, F, 8), tile(A, F)}, {tile(B, F)});
    in.f.imm_value = -0.5;
    v.push_back(in);
    break;
  }
  case IT::MaxIndexAndMatchReplace:
    v.push_back(make(t, {col(V8, F, 8), tile(A, F), imm(-1.0)}, {tile(B, F), col(U8X, Dtype::uint32, 8)}));
    break;
  case IT::NonzeroWithCount:
    v.push_back(make(t, {tile(A, F), imm(4, Dtype::int32), imm(-1, Dtype::int32)}, {tile(M, Dtype::int32)}));
    break;
  case IT::GetSequenceBounds:
    v.push_back(make(t, {ap(A, F, {{64, 1}, {1, 32}})}, {ap(M, Dtype::int32, {{64, 1}, {1, 64}})}));
    break;
  case IT::Rand2: v.push_back(make(t, {imm(-1.0), imm(1.0)}, {tile(B, F)})); break;
  case IT::Rng: v.push_back(make(t, {}, {tile(M, Dtype::int32)})); break;
  case IT::Dropout: {
    Inst in = make(t, {tile(A, F), imm(0.25)}, {tile(B, F)});
    in.f.is_keep_threshold = true;
    v.push_back(in);
    break;
  }
  case IT::SetRandState:
  case IT::RandSetState: {
    v.push_back(make(t, {col(ST, Dtype::uint32, 24)}, {}));
    v.push_back(make(t, {imm(12345.0)}, {}));
    if (t == IT::SetRandState && g != CoreGen::V2) {  // Pool -> 0x78 (V3+)
      Inst p = make(t, {col(ST, Dtype::uint32, 24)}, {});
      p.engine = Engine::Pool;
      v.push_back(p);
    }
    break;
  }
  case IT::GetRandState:
  case IT::RandGetState:
    v.push_back(make(t, {}, {col(ST, Dtype::uint32, 24)}));
    v.push_back(make(t, {col(ST, Dtype::uint32, 24)}, {ap(M, Dtype::int32, {{64, 128}, {1, 24}})}));
    break;
  case IT::StreamShuffle: {
    Inst in = make(t, {tile(A, F, 32)}, {tile(B, F, 32)});
    for (int i = 0; i < 32; ++i) in.f.mask.push_back(i == 7 ? 255 : (i ^ 1));
    v.push_back(in);
    break;
  }
  case IT::StreamTranspose: v.push_back(make(t, {tile(A, F, 32, 32)}, {tile(B, F, 32, 32)})); break;
  case IT::Gather: v.push_back(make(t, {tile(A, F), tile(M, Dtype::int32)}, {tile(B, F)})); break;
  case IT::IndirectCopy: {
    Inst in = make(t, {tile(A, F), ap(M, Dtype::int32, {{64, 128}, {1, 16}})}, {tile(B, F)});
    in.f.num_valid_indices = 10;
    v.push_back(in);
    break;
  }
  case IT::IndirectLoad:
    v.push_back(make(t, {ap(DIN, F, {{64, 128}, {1, 64}}), ap(M, Dtype::int32, {{64, 128}})}, {tile(A, F)}));
    break;
  case IT::IndirectSave:
  case IT::IndirectSaveAccumulate: {
    Inst in = make(t, {tile(A, F), ap(M, Dtype::int32, {{64, 128}})}, {ap(DOUT, F, {{64, 128}, {1, 64}})});
    if (t == IT::IndirectSaveAccumulate) in.f.num_indices = 5, in.f.entry_step_elements = 64;
    v.push_back(in);
    if (t == IT::IndirectSaveAccumulate) {  // an explicit reduction op
      in.f.op = AluOp::add;
      in.given.set(static_cast<size_t>(Field::op));
      v.push_back(in);
    }
    break;
  }
  case IT::RegisterMove: v.push_back(make(t, {reg("r3")}, {reg("r4")})); break;
  case IT::RegisterAlu: {
    Inst in = make(t, {reg("r1"), imm(5, Dtype::int32)}, {reg("r2")});
    in.f.op = AluOp::add;
    v.push_back(in);
    break;
  }
  case IT::TensorLoad: v.push_back(make(t, {ap(M, Dtype::int32, {{64, 1}})}, {reg("r5")})); break;
  case IT::TensorSave: v.push_back(make(t, {reg("r5")}, {tile(M, Dtype::int32)})); break;
  case IT::ReadVarAddr: v.push_back(make(t, {ap(DIN, F, {{64, 128}, {1, 64}})}, {reg("r6")})); break;
  case IT::GetGlobalRankId: v.push_back(make(t, {}, {reg("r7")})); break;
  case IT::GetCurProcessingRankID: {
    Inst in = make(t, {}, {reg("r8")});
    in.f.iter_id = 1, in.f.channel_id = 2;
    v.push_back(in);
    break;
  }
  case IT::CollectiveSend: v.push_back(make(t, {ap(DIN, F, {{64, 128}, {1, 64}})}, {})); break;
  case IT::CollectiveRecv:
    v.push_back(make(t, {ap(DIN, F, {{64, 128}, {1, 64}})}, {ap(DOUT, F, {{64, 128}, {1, 64}})}));
    v.push_back(make(t, {}, {ap(DOUT, F, {{64, 128}, {1, 64}})}));
    break;
  case IT::CoreBarrier: {
    Inst in = make(t, {}, {});
    in.f.barrier_id = 3, in.f.cores = {0, 1};
    v.push_back(in);
    break;
  }
  case IT::LoadActFuncSet: {
    Inst in = make(t, {}, {});
    in.f.act_func_set_id = 2;
    v.push_back(in);
    break;
  }
  case IT::NoOp:
  case IT::Return:
  case IT::Exit:
  case IT::TensorCompletion:
  case IT::AllEngineBarrier:
  case IT::Drain:
  case IT::Halt:
  case IT::BranchHint: {
    Inst in = make(t, {}, {});
    SemWait w;
    w.sem = 4, w.value = 2;
    in.waits.push_back(w);
    v.push_back(in);
    break;
  }
  case IT::UnconditionalBranch: {
    Inst in = make(t, {}, {});
    in.f.target = "exit";
    SemWait w;
    w.sem = 2, w.value = 7;
    in.waits.push_back(w);
    v.push_back(in);
    v.push_back(make(t, {}, {}));  // no target: falls through
    break;
  }
  case IT::CompareAndBranch: {
    Inst in = make(t, {reg("r1"), imm(0, Dtype::int32)}, {});
    in.f.comp_op = BranchCompareOp::IS_GTIMM, in.f.on_true = "loop", in.f.on_false = "exit";
    v.push_back(in);
    Inst neg = make(t, {reg("r1"), imm(-5, Dtype::int32)}, {});
    neg.f.comp_op = BranchCompareOp::IS_LEIMM, neg.f.on_true = "entry";
    v.push_back(neg);
    Inst r = make(t, {reg("r1"), reg("r2")}, {});
    r.f.comp_op = BranchCompareOp::IS_NEREG, r.f.on_true = "exit", r.f.on_false = "loop";
    v.push_back(r);
    break;
  }
  case IT::GroupResetSemaphores: {
    Inst in = make(t, {}, {});
    in.f.clear_mode = "SemaphoreZero", in.f.sema_group = {4, 5, 6};
    v.push_back(in);
    Inst m = make(t, {}, {});
    m.f.clear_mode = "SemaphoreZeroBitmask", m.f.sema_group = {0, 31, 200, 255};
    v.push_back(m);
    Inst n = make(t, {}, {});
    n.f.sema_group = {7};
    v.push_back(n);
    break;
  }
  case IT::SwitchQueueInstance: {
    Inst in = make(t, {}, {});
    in.f.queue = "qSyncIO_0", in.f.instance_name = "blk1", in.f.no_rearm = true, in.f.sema_group = {3, 9};
    v.push_back(in);
    break;
  }
  case IT::ResetQueueInstance: {
    Inst in = make(t, {}, {});
    in.f.queue = "qSyncIO_0", in.f.instance_name = "blk1";
    v.push_back(in);
    break;
  }
  case IT::DMATrigger: {
    Inst in = make(t, {}, {});
    in.f.queue = "qSyncIO_0", in.f.dma_blocks = {"blk0", "blk1"};
    v.push_back(in);
    break;
  }
  case IT::Call: {
    Inst in = make(t, {ap(DIN, F, {{64, 128}, {1, 64}})}, {tile(A, F)});
    in.f.target = "callee_fn", in.f.table_id = 2;
    v.push_back(in);
    break;
  }
  case IT::CustomOp: {
    Inst in = make(t, {ap(DIN, F, {{64, 128}, {1, 64}}), tile(A, F)}, {tile(B, F)});
    in.f.op_function_name = "my_kernel", in.f.op_lib_file = "libmy_kernel.so";
    in.f.ulib_to_ucode_version = "1.2", in.f.ulib_to_isa_version = "3.4";
    in.f.srcs_shape_custom = {{128, 64}, {128, 64}}, in.f.dsts_shape_custom = {{128, 64}};
    in.f.is_builtin = true;
    v.push_back(in);
    break;
  }
  case IT::CollectiveCompute: {
    Inst in = make(t, {ap(DIN, F, {{64, 128}, {1, 64}})}, {ap(DOUT, F, {{64, 128}, {1, 64}})});
    in.f.collective_kind = "AllGather", in.f.replica_groups = {{0}};
    v.push_back(in);
    Inst r = make(t, {tile(A, F)}, {tile(B, F)});
    r.f.op = AluOp::add;  // AllReduce, the default kind
    v.push_back(r);
    break;
  }
  case IT::EventSemaphore: {
    Inst in = make(t, {}, {});
    SemUpdate u;
    u.sem = 4, u.mode = SemUpdate::Mode::Set, u.value = 9;
    in.updates.push_back(u);
    v.push_back(in);
    break;
  }
  default: break;
  }
  return v;
}

using bundletest::round_trip;

} // namespace

TEST(BundleCoverage, EveryExecutableTypeRoundTripsOnEveryGeneration) {
  const Program p = make_prog();
  std::map<CoreGen, int> ok, total;
  for (int i = 0; i < kNumInstructionTypes; ++i) {
    const IT t = static_cast<IT>(i);
    if (!engines::executes(t)) continue;
    for (CoreGen g : kCoreGens) {
      if (!inst_type_info(t).encoded_on(g)) continue;
      ++total[g];
      SCOPED_TRACE(std::string(inst_type_name(t)) + " on " + core_gen_name(g));
      const bool excepted = kExceptions.count(t) != 0;
      const auto reps = representatives(t, g);
      if (reps.empty()) {
        EXPECT_TRUE(excepted) << "executable and encoded on this generation, but no representative instruction "
                                 "(add one, or an exception with its reason)";
        continue;
      }
      bool all = true;
      for (size_t k = 0; k < reps.size(); ++k) {
        const std::string err = round_trip(reps[k], p, g);
        if (!err.empty()) all = false;
        if (!excepted) {
          EXPECT_EQ(err, "") << "representative #" << k;
        }
      }
      if (all) ++ok[g];
      if (excepted) {
        EXPECT_FALSE(all) << "encodes now: remove it from kExceptions";
      }
    }
  }
  for (CoreGen g : kCoreGens)
    std::printf("[ coverage ] %s: %d of %d executable types with an opcode round-trip\n", core_gen_name(g), ok[g],
                total[g]);
}

TEST(BundleCoverage, ExceptionsAreExecutableTypesWithAnOpcode) {
  for (const auto &[t, why] : kExceptions) {
    EXPECT_TRUE(engines::executes(t)) << inst_type_name(t);
    bool any = false;
    for (CoreGen g : kCoreGens) any = any || inst_type_info(t).encoded_on(g);
    EXPECT_TRUE(any) << inst_type_name(t);
    EXPECT_GT(std::string(why).size(), 10u);
  }
}

TEST(BundleCoverage, IsaDumpFlagsEachTypesBundleLayout) {
  const auto j = isa_tables_json([](IT t) { return engines::executes(t); });
  const auto &its = j["instruction_types"];
  auto find = [&](IT t) { return its[static_cast<size_t>(t)]; };
  EXPECT_EQ(find(IT::Activation)["bundle"]["encodable"], true);
  EXPECT_EQ(find(IT::Activation)["bundle"]["layout"], "mixed");
  EXPECT_EQ(find(IT::TensorTensor)["bundle"]["layout"], "reference");
  EXPECT_EQ(find(IT::Max)["bundle"]["layout"], "neuronsim");
  EXPECT_EQ(find(IT::CollectiveCompute)["bundle"]["encodable"], true);
  EXPECT_EQ(find(IT::CollectiveCompute)["bundle"]["layout"], "neuronsim");
  EXPECT_EQ(find(IT::CompareAndBranch)["bundle"]["layout"], "mixed");
  EXPECT_TRUE(find(IT::Generic)["bundle"]["layout"].is_null());
  // Every executable type with an opcode is encodable, except the documented exceptions.
  for (const auto &it : its) {
    const IT t = static_cast<IT>(it["ordinal"].get<int>());
    bool has_opcode = false;
    for (CoreGen g : kCoreGens) has_opcode = has_opcode || inst_type_info(t).encoded_on(g);
    if (it["executes"].get<bool>() && has_opcode && !kExceptions.count(t)) {
      EXPECT_EQ(it["bundle"]["encodable"], true) << it["name"];
    }
  }
}

// The types whose fields other sessions make executable (GroupResetSemaphores, the queue-instance ops, DMATrigger,
// Call, CustomOp) and the branches and collectives: their representatives round-trip on every generation whether
// or not engines::executes() says yes yet, with and without the type hint (0xA9 is shared by both branches).
TEST(BundleCoverage, ControlQueueCallAndCustomRepresentativesRoundTrip) {
  const Program p = make_prog();
  for (IT t : {IT::UnconditionalBranch, IT::CompareAndBranch, IT::GroupResetSemaphores, IT::SwitchQueueInstance,
               IT::ResetQueueInstance, IT::DMATrigger, IT::Call, IT::CustomOp, IT::CollectiveCompute})
    for (CoreGen g : kCoreGens) {
      SCOPED_TRACE(std::string(inst_type_name(t)) + " on " + core_gen_name(g));
      const auto reps = representatives(t, g);
      ASSERT_FALSE(reps.empty());
      for (size_t k = 0; k < reps.size(); ++k) EXPECT_EQ(round_trip(reps[k], p, g, true), "") << "representative #" << k;
    }
}

// IndirectSaveAccumulate's op: add round-trips (the representative above); an explicit bypass (overwrite) would
// decode as an absent op (add), so encoding refuses it and names the field.
TEST(BundleCoverage, IndirectSaveAccumulateExplicitBypassIsRefused) {
  const Program p = make_prog();
  Inst in = representatives(IT::IndirectSaveAccumulate, CoreGen::V3).at(0);
  in.f.op = AluOp::bypass;
  in.given.set(static_cast<size_t>(Field::op));
  try {
    encode(in, p, CoreGen::V3);
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "op");
  }
}

}  // namespace test_bundle_coverage
