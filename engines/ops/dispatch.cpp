// The one InstructionType -> semantics table (DESIGN.md 4: tables, not switch chains). An instruction's semantics
// are one row here plus its engines/ops/<family>.cpp; the other places a new instruction goes (its table rows, engine,
// cost rule, bundle forms) are listed in docs/architecture.md, "Adding an instruction", and
// tests/engines/test_instruction_completeness.cpp fails naming a type that misses one.
#include <array>

#include "engines/ops/common.hpp"

namespace neuronsim::engines {

namespace {

using ops::OpFn;
using IT = isa::InstructionType;

struct Row {
  IT type;
  OpFn fn;
};

constexpr Row kRows[] = {
    // data movement
    {IT::Load, ops::exec_copy},
    {IT::Save, ops::exec_copy},
    {IT::TensorCopy, ops::exec_copy},
    {IT::GenericCopy, ops::exec_copy},
    {IT::AbstractCopy, ops::exec_copy},
    {IT::DMACopy, ops::exec_dma_copy},
    {IT::Memset, ops::exec_memset},
    {IT::Iota, ops::exec_iota},
    {IT::TensorScalarAffineSelect, ops::exec_affine_select},
    {IT::Select, ops::exec_select},
    {IT::CopyPredicated, ops::exec_copy_predicated},
    // elementwise / reduce
    {IT::TensorTensor, ops::exec_tensor_tensor},
    {IT::TensorScalar, ops::exec_tensor_scalar},
    {IT::TensorScalarPtr, ops::exec_tensor_scalar},
    {IT::TensorReduce, ops::exec_tensor_reduce},
    {IT::TongaReduceMacroSymbolic, ops::exec_tonga_reduce},  // neuronsim's reading (SPECULATIVE): tonga_reduce.cpp
    {IT::Pool, ops::exec_pool},
    // activation engine
    {IT::Activation, ops::exec_activation},
    {IT::Reciprocal, ops::exec_reciprocal},
    {IT::Exponential, ops::exec_exponential},
    // PE
    {IT::Matmult, ops::exec_matmult},
    {IT::MatmultSparse, ops::exec_matmult_sparse},
    {IT::MatmultMx, ops::exec_matmult_mx},
    {IT::QuantizeMx, ops::exec_quantize_mx},
    // accumulator registers
    {IT::ReadActivationAccumulator, ops::exec_read_accumulator},
    {IT::ActivationReadAccumulator, ops::exec_read_accumulator},
    {IT::DveReadAccumulator, ops::exec_read_accumulator},
    {IT::TensorScalarCache, ops::exec_tensor_scalar_cache},
    // batch norm
    {IT::BNStats, ops::exec_bn_stats},
    {IT::BNStatsAggregate, ops::exec_bn_stats_aggregate},
    {IT::BNGradients, ops::exec_bn_gradients},
    {IT::BNBackprop, ops::exec_bn_backprop},
    {IT::BNBackprop2, ops::exec_bn_backprop2},
    // selection and search
    {IT::RangeSelect, ops::exec_range_select},
    {IT::Max, ops::exec_max8},
    {IT::MaxIndex, ops::exec_max_index},
    {IT::MatchReplace, ops::exec_match_replace},
    {IT::MaxIndexAndMatchReplace, ops::exec_match_replace},
    {IT::NonzeroWithCount, ops::exec_nonzero_with_count},
    {IT::GetSequenceBounds, ops::exec_get_sequence_bounds},
    // random
    {IT::Rand, ops::exec_rand},
    {IT::Rand2, ops::exec_rand2},
    {IT::Rng, ops::exec_rng},
    {IT::Dropout, ops::exec_dropout},
    {IT::SetRandState, ops::exec_set_rand_state},
    {IT::RandSetState, ops::exec_set_rand_state},
    {IT::GetRandState, ops::exec_get_rand_state},
    {IT::RandGetState, ops::exec_get_rand_state},
    // partition reorganizers
    {IT::StreamShuffle, ops::exec_stream_shuffle},
    {IT::StreamTranspose, ops::exec_stream_transpose},
    {IT::GPSIMDSB2SB, ops::exec_copy},  // SBUF -> SBUF copy on GpSimd (no JSON fields; INFERRED plain copy)
    // indirect and dynamic
    {IT::Gather, ops::exec_gather},
    {IT::IndirectCopy, ops::exec_indirect_load},
    {IT::IndirectLoad, ops::exec_indirect_load},
    {IT::IndirectSave, ops::exec_indirect_save},
    {IT::IndirectSaveAccumulate, ops::exec_indirect_save},
    {IT::GenericIndirectLoad, ops::exec_generic_indirect_load},
    {IT::GenericIndirectSave, ops::exec_generic_indirect_save},
    {IT::TensorCopyDynamicSrc, ops::exec_copy_dynamic},
    {IT::TensorCopyDynamicDst, ops::exec_copy_dynamic},
    {IT::DMADescriptor, ops::exec_dma_descriptor},
    {IT::DMADescriptorCopy, ops::exec_dma_descriptor},
    {IT::DMADescriptorCCE, ops::exec_dma_descriptor},
    {IT::DMADescriptorTranspose, ops::exec_dma_descriptor},
    {IT::DMADescriptorReplicate, ops::exec_dma_descriptor},
    // registers and ranks
    {IT::RegisterAlu, ops::exec_register_alu},
    {IT::RegisterMove, ops::exec_register_move},
    {IT::ReadVarAddr, ops::exec_read_var_addr},
    {IT::TensorLoad, ops::exec_tensor_load},
    {IT::TensorSave, ops::exec_tensor_save},
    {IT::GetGlobalRankId, ops::exec_rank_id},
    {IT::GetCurProcessingRankID, ops::exec_rank_id},
    // collectives (single rank)
    {IT::CollectiveCompute, ops::exec_collective_compute},
    {IT::CollectiveSend, ops::exec_collective_send_recv},
    {IT::CollectiveRecv, ops::exec_collective_send_recv},
    {IT::CoreBarrier, ops::exec_core_barrier},
    // external kernels and debug output, through the host services (engines/host.hpp, kernel.cpp)
    {IT::CustomOp, ops::exec_external_kernel},
    {IT::BIRKernel, ops::exec_external_kernel},
    {IT::DevicePrint, ops::exec_device_print},
    // no memory effect
    {IT::NoOp, ops::exec_noop},
    {IT::EventSemaphore, ops::exec_noop},
    {IT::AllEngineBarrier, ops::exec_noop},
    {IT::Drain, ops::exec_noop},
    {IT::Halt, ops::exec_noop},
    {IT::LoadActFuncSet, ops::exec_noop},
    {IT::BranchHint, ops::exec_noop},
    {IT::TensorCompletion, ops::exec_noop},  // a production-complete marker (birsim: empty body)
    // Control transfer: the scheduler (sim/schedule.cpp) picks the successor block the way birsim's CFG driver
    // does (reference neuronx-cc/bir/sim-control-sync-customop.md section 2); the instructions themselves touch
    // no memory.
    {IT::CompareAndBranch, ops::exec_noop},
    {IT::UnconditionalBranch, ops::exec_noop},
    {IT::Return, ops::exec_noop},
    {IT::Exit, ops::exec_noop},
    {IT::Break, ops::exec_noop},
    // Calls, DMA block triggering and semaphore groups act through the scheduler and the core: Call / NKIKernel run
    // their callee's blocks and DMATrigger its next DMABlock's descriptors (sim/schedule.cpp), Switch- /
    // ResetQueueInstance rewind trigger cursors there, and GroupResetSemaphores / SwitchQueueInstance zero their
    // semaphore group when they complete (sim/core.cpp). Reference neuronx-cc/bir/sim-control-sync-customop.md
    // 2.4, 5.1, 5.2, 6.2; sim-bn-rng-collective-dma.md (DMATrigger -> DMABlock -> descriptors).
    {IT::Call, ops::exec_noop},
    {IT::NKIKernel, ops::exec_noop},
    {IT::DMATrigger, ops::exec_noop},
    {IT::DMABlock, ops::exec_noop},
    {IT::SwitchQueueInstance, ops::exec_noop},
    {IT::ResetQueueInstance, ops::exec_noop},
    {IT::GroupResetSemaphores, ops::exec_noop},
};

const std::array<OpFn, isa::kNumInstructionTypes> &table() {
  static const std::array<OpFn, isa::kNumInstructionTypes> t = [] {
    std::array<OpFn, isa::kNumInstructionTypes> a{};
    for (const auto &r : kRows) a[static_cast<size_t>(r.type)] = r.fn;
    return a;
  }();
  return t;
}

} // namespace

// Regions (Loop, DynamicForLoop, DoWhile) run through the scheduler (sim/schedule.cpp walks their bodies); every
// other type through its row above.
bool executes(isa::InstructionType t) {
  if (t == IT::Loop || t == IT::DynamicForLoop || t == IT::DoWhile) return true;
  const auto i = static_cast<size_t>(t);
  return i < table().size() && table()[i] != nullptr;
}

bool reads_or_writes_data(isa::InstructionType t) {
  const auto i = static_cast<size_t>(t);
  // CoreBarrier only waits (its cores are its field, not operands).
  return i < table().size() && table()[i] != nullptr && table()[i] != &ops::exec_noop &&
         table()[i] != &ops::exec_core_barrier;
}

const char *not_executed_reason(isa::InstructionType t) {
  if (executes(t)) return "";
  switch (t) {
  case IT::MatmultBase: case IT::DMA: case IT::Collective: case IT::Terminator:
    return "an abstract base type: compiled BIR carries its concrete leaves";
  case IT::Generic: case IT::GenericRelu:
    return "lowered away by the compiler before BIR is emitted; birsim does not execute it either";
  case IT::NKIKLIRKernel:
    return "carries a compiled KLIR binary, not BIR; birsim skips it too (its 'skip + note' base handler)";
  case IT::InlineASMBytes:
    return "raw instruction bytes with no fixed meaning; birsim skips it";
  default:
    return "not implemented";
  }
}

void execute(const DynInst &d, Memory &mem, EngineState &st) {
  if (!d.inst) throw SimulationError(mem.context(), "execute() without an instruction");
  const auto i = static_cast<size_t>(d.inst->type);
  const OpFn fn = i < table().size() ? table()[i] : nullptr;
  if (!fn && executes(d.inst->type))
    throw SemanticError(ops::ctx_field(mem, "opcode"),
                        std::string(isa::inst_type_name(d.inst->type)) +
                            " is a region: give it as a loop with its body (the scheduler walks it), not as an instruction");
  if (!fn)
    throw SemanticError(ops::ctx_field(mem, "opcode"),
                        std::string("instruction type '") + isa::inst_type_name(d.inst->type) +
                            "' is not executed: " + not_executed_reason(d.inst->type));
  fn(d, mem, st);
}

} // namespace neuronsim::engines
