// DMACopy: the CopyMode multiplexer (reference neuronx-cc/bir/sim-elementwise-datamove.md 5.2).
//   Copy      -> the plain doCopy (cast-on-copy, arbitrary strides).
//   Transpose -> axes relabelled by transpose_op over the "WZYX" labels of the source pattern (padded to 4 dims
//                with leading unit dims); transpose_op None is the identity copy, as in doDMATranspose.
//   Replicate -> 2-dim patterns; destination partition r takes source partition r % src_partitions
//                (replCount = dst partitions / src partitions, doDMAReplicate).
// CCE and Dynamic (indirect) modes are not implemented: SemanticError naming `mode`.
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

} // namespace

void exec_dma_copy(const DynInst &d, Memory &m, EngineState &) {
  switch (d.inst->f.copy_mode) {
  case isa::CopyMode::Copy:
    move_elements(m, in_ap(d, m, 0), out_ap(d, m, 0), nullptr);
    return;
  case isa::CopyMode::Transpose:
    dma_transpose(d, m);
    return;
  case isa::CopyMode::Replicate:
    dma_replicate(d, m);
    return;
  default:
    unsupported(m, "mode", std::string("DMACopy mode '") + isa::enum_name(d.inst->f.copy_mode) +
                               "' is not implemented");
  }
}

} // namespace neuronsim::engines::ops
