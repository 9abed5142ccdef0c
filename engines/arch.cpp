#include "neuronsim/engines/arch.hpp"

namespace neuronsim::engines {

// Figures: reference neuron-arch.md 1.2 (clocks), 1.4 (SBUF/PSUM), 1.5 (DMA). sim/arch/*.json carries the same
// numbers with their sources and overrides these when present.
ArchParams builtin_arch(const std::string &name) {
  ArchParams a;
  if (name == "trn1") return a;
  if (name == "trn2") {
    a.name = "trn2";
    a.gen = isa::CoreGen::V3;
    a.pe_ghz = 2.4, a.act_ghz = 1.2, a.pool_ghz = 1.2, a.dve_ghz = 0.96, a.sp_ghz = 1.2;
    a.sbuf_bytes_per_partition = 229376;  // 224 KiB
    a.dma_engine_bytes_per_ns = 23.0;
    a.hbm_bytes_per_ns = 360.0;
    a.dve_pool_shared_sbuf_port = false;
    return a;
  }
  if (name == "trn3") {
    a.name = "trn3";
    a.gen = isa::CoreGen::V4;
    a.pe_ghz = 2.4, a.act_ghz = 1.2, a.pool_ghz = 1.2, a.dve_ghz = 1.2, a.sp_ghz = 1.2;
    a.sbuf_bytes_per_partition = 262144;  // 256 KiB
    a.dma_engine_bytes_per_ns = 33.0;
    a.hbm_bytes_per_ns = 600.0;
    a.dve_pool_shared_sbuf_port = false;
    return a;
  }
  throw InputError({}, "unknown architecture '" + name + "' (expected trn1, trn2 or trn3)");
}

} // namespace neuronsim::engines
