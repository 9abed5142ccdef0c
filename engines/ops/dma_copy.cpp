// DMACopy: the CopyMode multiplexer (reference neuronx-cc/bir/sim-elementwise-datamove.md 5.2).
//   Copy      -> the plain doCopy (cast-on-copy, arbitrary strides).
//   Transpose -> axes relabelled by transpose_op over the "WZYX" labels of the source pattern (padded to 4 dims
//                with leading unit dims); transpose_op None is the identity copy, as in doDMATranspose.
//   Replicate -> 2-dim patterns; destination partition r takes source partition r % src_partitions
//                (replCount = dst partitions / src partitions, doDMAReplicate).
//   CCE       -> doDMACCE: every input access is widened to fp32 and folded elementwise with `cce_op`: add
//                accumulates into a zeroed accumulator, acc += constants[i] * in_i (or in_i without `constants`);
//                max / min fold the inputs in order through the ALU's max / min, seeded with the first input
//                (INFERRED: the reference's "zeroed accumulator" is only meaningful for add).
// Dynamic (indirect) mode is not implemented: SemanticError naming `mode`.
// The DMADescriptor family (reference sim-bn-rng-collective-dma.md 5: descriptors are re-dispatched to the same
// do* bodies) runs as plain AP -> AP operations: DMADescriptor follows its `mode` like DMACopy,
// DMADescriptorCopy / CCE / Transpose / Replicate force theirs.
#include <string>

#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

namespace {

void dma_transpose(const DynInst &d, Memory &m) {
  const Access &src = in_ap(d, m, 0);
  const Access &dst = out_ap(d, m, 0);
  const auto top = d.inst->f.transpose_op;
  if (top == isa::TransposeOps::None) {
    move_elements(m, src, dst, nullptr);
    return;
  }
  if (src.ap.size() > 4) unsupported(m, "ins[0].ap", "a DMA transpose source has at most 4 dims (W, Z, Y, X)");
  // Source dims as [W, Z, Y, X], padded with leading unit dims.
  int64_t dim[4] = {1, 1, 1, 1};
  for (size_t i = 0; i < src.ap.size(); ++i) dim[4 - src.ap.size() + i] = src.ap[i].num;
  const std::string order = isa::enum_name(top);  // e.g. "WZXY": output axis k is input axis order[k]
  int perm[4];
  for (int k = 0; k < 4; ++k) {
    const char c = order[static_cast<size_t>(k)];
    perm[k] = c == 'W' ? 0 : c == 'Z' ? 1 : c == 'Y' ? 2 : 3;
  }
  const int64_t stride[4] = {dim[1] * dim[2] * dim[3], dim[2] * dim[3], dim[3], 1};
  std::vector<int64_t> src_of_dst;
  src_of_dst.reserve(static_cast<size_t>(dim[0] * dim[1] * dim[2] * dim[3]));
  int64_t c[4];
  for (c[0] = 0; c[0] < dim[perm[0]]; ++c[0])
    for (c[1] = 0; c[1] < dim[perm[1]]; ++c[1])
      for (c[2] = 0; c[2] < dim[perm[2]]; ++c[2])
        for (c[3] = 0; c[3] < dim[perm[3]]; ++c[3]) {
          int64_t s = 0;
          for (int k = 0; k < 4; ++k) s += c[k] * stride[perm[k]];
          src_of_dst.push_back(s);
        }
  move_elements(m, src, dst, &src_of_dst);
}

void dma_replicate(const DynInst &d, Memory &m) {
  const Access &src = in_ap(d, m, 0);
  const Access &dst = out_ap(d, m, 0);
  if (src.ap.size() != 2 || dst.ap.size() != 2)
    unsupported(m, "mode", "Replicate needs 2-dim source and destination patterns (doDMAReplicate)");
  const int64_t sp = src.partitions(), dp = dst.partitions(), f = src.free_elements();
  if (sp <= 0 || dp % sp != 0 || dst.free_elements() != f)
    unsupported(m, "outs[0]",
                "Replicate needs dst partitions a multiple of src partitions (" + std::to_string(dp) + " vs " +
                    std::to_string(sp) + ") and equal free sizes");
  std::vector<int64_t> src_of_dst(static_cast<size_t>(dp * f));
  for (int64_t r = 0; r < dp; ++r)
    for (int64_t j = 0; j < f; ++j) src_of_dst[static_cast<size_t>(r * f + j)] = (r % sp) * f + j;
  move_elements(m, src, dst, &src_of_dst);
}

void dma_cce(const DynInst &d, Memory &m) {
  const Access &out = out_ap(d, m, 0);
  const int64_t n = elems(out);
  // DMACopy names the reduction `cce_op`, DMADescriptorCCE names it `op` (reference bir-json.md 2.2).
  const bool descriptor = d.inst->type == isa::InstructionType::DMADescriptorCCE;
  const auto op = descriptor ? d.inst->f.op : d.inst->f.cce_op;
  if (op != isa::AluOp::add && op != isa::AluOp::max && op != isa::AluOp::min)
    unsupported(m, descriptor ? "op" : "cce_op",
                std::string("DMA CCE reduces with add, max or min, not '") + isa::alu_name(op) + "'");
  const auto &consts = d.inst->f.constants;
  std::vector<float> acc(static_cast<size_t>(n), 0.0f), x(static_cast<size_t>(n));
  size_t k = 0;
  for (size_t i = 0; i < d.ins.size(); ++i) {
    if (!has_in_ap(d, i)) continue;
    const Access &a = d.ins[i];
    require_same_count(m, out, a, ("ins[" + std::to_string(i) + "]").c_str());
    m.read_f32(a, x.data());
    if (op == isa::AluOp::add) {
      if (!consts.empty()) {
        if (k >= consts.size()) unsupported(m, "constants", "one constant per CCE input");
        alu_vs(isa::AluOp::mult, x.data(), float(consts[k]), x.data(), n);
      }
      alu_vv(op, acc.data(), x.data(), acc.data(), n);
    } else if (k == 0) {
      acc = x;
    } else {
      alu_vv(op, acc.data(), x.data(), acc.data(), n);
    }
    ++k;
  }
  if (k == 0) unsupported(m, "ins[0]", "a CCE copy needs at least one input access");
  m.write_f32(out, acc.data());
}

void run_mode(const DynInst &d, Memory &m, isa::CopyMode mode) {
  switch (mode) {
  case isa::CopyMode::Copy:
    move_elements(m, in_ap(d, m, 0), out_ap(d, m, 0), nullptr);
    return;
  case isa::CopyMode::Transpose:
    dma_transpose(d, m);
    return;
  case isa::CopyMode::Replicate:
    dma_replicate(d, m);
    return;
  case isa::CopyMode::CCE:
    dma_cce(d, m);
    return;
  default:
    unsupported(m, "mode", std::string("DMACopy mode '") + isa::enum_name(mode) + "' is not implemented");
  }
}

} // namespace

void exec_dma_descriptor(const DynInst &d, Memory &m, EngineState &) {
  using IT = isa::InstructionType;
  switch (d.inst->type) {
  case IT::DMADescriptorCopy: return run_mode(d, m, isa::CopyMode::Copy);
  case IT::DMADescriptorCCE: return run_mode(d, m, isa::CopyMode::CCE);
  case IT::DMADescriptorTranspose: return run_mode(d, m, isa::CopyMode::Transpose);
  case IT::DMADescriptorReplicate: return run_mode(d, m, isa::CopyMode::Replicate);
  default: return run_mode(d, m, d.inst->f.copy_mode);
  }
}

void exec_dma_copy(const DynInst &d, Memory &m, EngineState &) {
  run_mode(d, m, d.inst->f.copy_mode);
}

} // namespace neuronsim::engines::ops
