// default_engine: where an "Unassigned" instruction runs, one row per instruction type. Source: the public NKI ISA
// documentation as summarised in reference neuron-arch.md 3.3 ("Engines: PE = TensorE, DVE = VectorE,
// ACT = ScalarE, POOL = GpSimdE"): nc_matmul / nc_transpose -> PE; activation (and its accumulator reads) -> ACT;
// tensor_tensor, tensor_scalar, tensor_reduce, tensor_copy, bn_stats/bn_aggr, select, stream shuffle/transpose,
// max8 family, dropout, rng, reciprocal -> DVE; iota, affine_select, pool, local_gather / nc_n_gather,
// nonzero_with_count, rand state -> POOL (GpSimd); dma_copy, load/save and every DMA/collective form -> SP (the
// engine that drives the DMA queues in this model); control, register and sync instructions -> SP.
// Exponential is grouped with the activation opcodes (reference neuronx-cc/bir/sim-activation-pwp.md 1 lists it
// among the activation-engine opcodes), although NKI's v4 `exponential` runs on DVE.
#include <array>

#include "engines/ops/common.hpp"

namespace neuronsim::engines {

namespace {

using IT = isa::InstructionType;
using E = isa::Engine;

struct EngineRow {
  IT type;
  E engine;
};

constexpr EngineRow kEngineRows[] = {
    // PE
    {IT::MatmultBase, E::PE}, {IT::Matmult, E::PE}, {IT::MatmultSparse, E::PE}, {IT::MatmultMx, E::PE},
    // ACT
    {IT::Activation, E::Activation}, {IT::ReadActivationAccumulator, E::Activation},
    {IT::LoadActFuncSet, E::Activation}, {IT::ActivationReadAccumulator, E::Activation},
    {IT::Exponential, E::Activation}, {IT::GenericRelu, E::Activation},
    // DVE
    {IT::Generic, E::DVE}, {IT::GenericCopy, E::DVE}, {IT::AbstractCopy, E::DVE}, {IT::TensorCopy, E::DVE},
    {IT::TensorCopyDynamicSrc, E::DVE}, {IT::TensorCopyDynamicDst, E::DVE}, {IT::TensorReduce, E::DVE},
    {IT::TensorScalar, E::DVE}, {IT::TensorScalarPtr, E::DVE}, {IT::TensorScalarCache, E::DVE},
    {IT::TensorTensor, E::DVE}, {IT::BNStats, E::DVE}, {IT::BNStatsAggregate, E::DVE}, {IT::BNGradients, E::DVE},
    {IT::BNBackprop, E::DVE}, {IT::BNBackprop2, E::DVE}, {IT::StreamShuffle, E::DVE},
    {IT::StreamTranspose, E::DVE}, {IT::Select, E::DVE}, {IT::CopyPredicated, E::DVE}, {IT::Memset, E::DVE},
    {IT::Reciprocal, E::DVE}, {IT::RangeSelect, E::DVE}, {IT::Dropout, E::DVE}, {IT::Rand, E::DVE},
    {IT::Rand2, E::DVE}, {IT::Rng, E::DVE}, {IT::Max, E::DVE}, {IT::MaxIndex, E::DVE}, {IT::MatchReplace, E::DVE},
    {IT::MaxIndexAndMatchReplace, E::DVE}, {IT::QuantizeMx, E::DVE}, {IT::DveReadAccumulator, E::DVE},
    {IT::TongaReduceMacroSymbolic, E::DVE},
    // POOL (GpSimd)
    {IT::Iota, E::Pool}, {IT::TensorScalarAffineSelect, E::Pool}, {IT::Pool, E::Pool}, {IT::Gather, E::Pool},
    {IT::IndirectCopy, E::Pool}, {IT::GPSIMDSB2SB, E::Pool}, {IT::NonzeroWithCount, E::Pool},
    {IT::GetRandState, E::Pool}, {IT::SetRandState, E::Pool}, {IT::RandSetState, E::Pool},
    {IT::RandGetState, E::Pool}, {IT::CustomOp, E::Pool},
    // nki.isa.sequence_bounds runs on GpSimd (public NKI docs; KLR's default engine table, bir-json.md:
    // "sequenceBounds -> pool").
    {IT::GetSequenceBounds, E::Pool},
};

const std::array<E, isa::kNumInstructionTypes> &engine_of_type() {
  static const std::array<E, isa::kNumInstructionTypes> t = [] {
    std::array<E, isa::kNumInstructionTypes> a;
    a.fill(E::SP);  // DMA, collective, control, register and sync instructions
    for (const auto &r : kEngineRows) a[static_cast<size_t>(r.type)] = r.engine;
    return a;
  }();
  return t;
}

} // namespace

isa::Engine default_engine(isa::InstructionType t) {
  const auto i = static_cast<size_t>(t);
  return i < engine_of_type().size() ? engine_of_type()[i] : E::SP;
}

} // namespace neuronsim::engines
