// Scalar registers and rank ids (reference neuronx-cc/bir/sim-dispatch-state.md 5.1 RegState; the per-opcode
// bodies are not in the reference, so the operand conventions below are ours). Registers live in
// EngineState::regs by name (a register argument's `reg`), 64-bit signed; reading an unset register is a
// SimulationError (birsim initialises physical registers to 0xFFFFFFFF; a name-keyed file has no such slot).
//
//   RegisterMove  outs[0] = ins[0] (register, immediate or the first element of an access)
//   RegisterAlu   outs[0] = ins[0] op ins[1] in the int32 ALU lane (alu_apply_i32; spec 000 operand order
//                 acc op x). is_64bit is refused: the ALU has no 64-bit lane.
//   TensorLoad    outs[0] (register) = the first element of ins[0] (an access), as an integer
//   TensorSave    outs[0] (an access) = ins[0] (register or immediate), every element of the access
//   ReadVarAddr   outs[0] = the byte address of ins[0]'s first element: SBUF/PSUM placement address + the
//                 in-partition byte offset; DRAM: the byte offset in its tensor (INFERRED: the reference lists
//                 it as "DMA only" with no body)
//   GetGlobalRankId, GetCurProcessingRankID
//                 outs[0] = the core's rank; GetCurProcessingRankID the rank a ring iteration processes (below).
//                 One NeuronCore is rank 0 (birsim's InstVisitor+0xDE8 is ctor-initialised to 0)
// An output may be a register or an access pattern (every element receives the value).
#include <functional>

#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

namespace {

void write_scalar(const DynInst &d, Memory &m, EngineState &st, int64_t v) {
  if (d.inst->outs.empty()) unsupported(m, "outs[0]", "missing output");
  const isa::Arg &o = d.inst->outs[0];
  if (o.kind == isa::ArgKind::Register) return reg_write(st, o.reg, v);
  const Access &a = out_ap(d, m, 0);
  std::vector<int32_t> buf(static_cast<size_t>(elems(a)), static_cast<int32_t>(v));
  if (is_int_dtype(a.dtype)) {
    m.write_i32(a, buf.data());
  } else {
    std::vector<float> f(buf.size(), float(v));
    m.write_f32(a, f.data());
  }
}

} // namespace

void exec_register_move(const DynInst &d, Memory &m, EngineState &st) { write_scalar(d, m, st, scalar_int(d, m, st, 0)); }

void exec_register_alu(const DynInst &d, Memory &m, EngineState &st) {
  if (d.inst->f.is_64bit) unsupported(m, "is_64bit", "64-bit register arithmetic is not implemented (int32 lane only)");
  const int32_t a = static_cast<int32_t>(scalar_int(d, m, st, 0));
  const int32_t b = static_cast<int32_t>(scalar_int(d, m, st, 1));
  write_scalar(d, m, st, alu_apply_i32(d.inst->f.op, a, b));
}

void exec_tensor_load(const DynInst &d, Memory &m, EngineState &st) {
  in_ap(d, m, 0);
  write_scalar(d, m, st, scalar_int(d, m, st, 0));
}

void exec_tensor_save(const DynInst &d, Memory &m, EngineState &st) {
  out_ap(d, m, 0);
  write_scalar(d, m, st, scalar_int(d, m, st, 0));
}

void exec_read_var_addr(const DynInst &d, Memory &m, EngineState &st) {
  const Access &a = in_ap(d, m, 0);
  const isa::Tensor &t = m.program().tensors.at(static_cast<size_t>(a.tensor));
  const int64_t esz = isa::dtype_size(a.dtype);
  int64_t addr = a.start * esz;
  if (!t.is_dram()) {
    const int64_t row = t.partitions > 0 ? t.num_elements() / t.partitions : 0;
    addr = m.placed_addr(a.tensor) + (row > 0 ? a.start % row : 0) * esz;
  }
  write_scalar(d, m, st, addr);
}

// GetGlobalRankId: the core's rank on the device (birsim writes a driver-set value, 0 by default; reference
// neuronx-cc/bir/sim-bn-rng-collective-dma.md 4.3).
// GetCurProcessingRankID: birsim maps (iter_id, channel_id, replica group) through a runtime permutation table the
// reference does not give (4.3). neuronsim follows NKI's collective_permute_implicit_current_processing_rank_id
// (public NKI docs: "the rank ID of the data to be processed in the current ring iteration"), with the ring of
// collective_permute_implicit (each rank receives from its predecessor in the replica-group rank list): at
// iteration 0 the core's own rank, at iteration k the rank whose data has come k steps around the ring,
// group[(pos - k) mod n]. iter_id is a number or an expression (MaybeAffine<uint>, reference
// neuronx-cc/bir/json-schema-catalog.md) of the core's shard id and registers. A core in no group (one core) is
// its own ring of one.
void exec_rank_id(const DynInst &d, Memory &m, EngineState &st) {
  int64_t r = m.rank();
  if (d.inst->type == isa::InstructionType::GetCurProcessingRankID) {
    int64_t k = d.inst->f.iter_id;
    if (!d.inst->iter_id_expr.empty()) {
      isa::Expr e = d.inst->iter_id_expr[0];
      std::function<void(isa::Expr &)> subst = [&](isa::Expr &x) {
        if (x.kind == isa::Expr::Kind::Register) x = isa::Expr::constant(reg_read(m, st, x.regref, "iter_id"));
        for (auto &c : x.kids) subst(c);
      };
      subst(e);
      k = e.eval(nullptr, m.shard());
    }
    if (k < 0) unsupported(m, "iter_id", "iter_id is " + std::to_string(k) + " (an unsigned iteration number)");
    for (const auto &g : d.inst->f.replica_groups)
      for (size_t i = 0; i < g.size(); ++i)
        if (static_cast<int64_t>(g[i]) == m.rank()) {
          const int64_t n = static_cast<int64_t>(g.size());
          r = g[static_cast<size_t>(((static_cast<int64_t>(i) - k % n) % n + n) % n)];
        }
  }
  write_scalar(d, m, st, r);
}

} // namespace neuronsim::engines::ops
