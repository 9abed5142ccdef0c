// The DVE partition reorganizers (reference neuronx-cc/bir/sim-elementwise-datamove.md 5.3). Both move raw
// elements (no cast: source and destination dtypes must match).
//   StreamShuffle   within each 32-partition block, output partition i takes input partition mask[i]; 255
//                   leaves output partition i untouched; `mask` has 32 entries, each < 32 or 255.
//                   ins[0] source, outs[0] destination (same partitions x free shape).
//   StreamTranspose the 32x32 blocked partition <-> element swap: element (p, e) of the [P, N] source goes to
//                   flat destination index (p&31 | e&~31) + out_elems * (p&~31 | e&31), out_elems = the
//                   destination's free size.
#include <cstring>

#include "engines/ops/common.hpp"

namespace neuronsim::engines::ops {

void exec_stream_shuffle(const DynInst &d, Memory &m, EngineState &) {
  const Access &src = in_ap(d, m, 0);
  const Access &dst = out_ap(d, m, 0);
  if (src.dtype != dst.dtype) unsupported(m, "outs[0]", "StreamShuffle does not support cast");
  const auto &mask = d.inst->f.mask;
  if (mask.size() != 32) unsupported(m, "mask", "StreamShuffle mask must have 32 entries");
  const int64_t esz = isa::dtype_size(src.dtype), row = src.free_elements() * esz;
  // The destination may have more partitions than the source (NKI nc_stream_shuffle broadcasting one source
  // partition with mask entries 0); each selected partition blk + k must lie in the source (checked below).
  if (dst.free_elements() != src.free_elements())
    unsupported(m, "outs[0]", "StreamShuffle output must have the source's free size");
  std::vector<uint8_t> s(static_cast<size_t>(elems(src) * esz)), o(static_cast<size_t>(elems(dst) * esz));
  m.read_raw(src, s.data());
  m.read_raw(dst, o.data());  // entries 255 keep what the destination holds
  for (int64_t blk = 0; blk < dst.partitions(); blk += 32)
    for (int64_t i = 0; i < 32 && blk + i < dst.partitions(); ++i) {
      const int64_t k = mask[static_cast<size_t>(i)];
      if (k == 255) continue;
      if (k < 0 || k >= 32) unsupported(m, "mask", "StreamShuffle Mask entry must be <32");
      if (blk + k >= src.partitions()) unsupported(m, "mask", "mask selects a partition outside the source");
      std::memcpy(o.data() + (blk + i) * row, s.data() + (blk + k) * row, static_cast<size_t>(row));
    }
  m.write_raw(dst, o.data());
}

void exec_stream_transpose(const DynInst &d, Memory &m, EngineState &) {
  const Access &src = in_ap(d, m, 0);
  const Access &dst = out_ap(d, m, 0);
  if (src.dtype != dst.dtype) unsupported(m, "outs[0]", "StreamTranspose does not support cast");
  require_same_count(m, src, dst, "outs[0]");
  const int64_t P = src.partitions(), N = src.free_elements(), out_elems = dst.free_elements();
  std::vector<int64_t> src_of_dst(static_cast<size_t>(P * N), -1);
  for (int64_t p = 0; p < P; ++p)
    for (int64_t e = 0; e < N; ++e) {
      const int64_t di = ((p & 31) | (e & ~int64_t(31))) + out_elems * ((p & ~int64_t(31)) | (e & 31));
      if (di < 0 || di >= P * N) unsupported(m, "outs[0]", "StreamTranspose index outside the destination");
      src_of_dst[static_cast<size_t>(di)] = p * N + e;
    }
  for (int64_t v : src_of_dst)
    if (v < 0) unsupported(m, "outs[0]", "StreamTranspose shapes leave destination elements unwritten");
  move_elements(m, src, dst, &src_of_dst);
}

} // namespace neuronsim::engines::ops
