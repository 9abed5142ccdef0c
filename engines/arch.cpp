#include "neuronsim/engines/arch.hpp"

#include <map>

#include <nlohmann/json.hpp>

namespace neuronsim::engines {

// Generated from sim/arch/*.json by CMake (each number there carries its source).
const std::map<std::string, std::string> &arch_json_texts();

std::vector<std::string> arch_names() {
  std::vector<std::string> names;
  for (const auto &kv : arch_json_texts()) names.push_back(kv.first);
  return names;
}

ArchParams builtin_arch(const std::string &name) {
  const auto &texts = arch_json_texts();
  auto it = texts.find(name);
  if (it == texts.end()) {
    std::string known;
    for (const auto &kv : texts) known += (known.empty() ? "" : ", ") + kv.first;
    throw InputError({}, "unknown architecture '" + name + "' (known: " + known + ")");
  }
  const nlohmann::json j = nlohmann::json::parse(it->second);
  ArchParams a;
  a.name = j.at("name").get<std::string>();
  auto num = [&](const char *key) { return j.at(key).at("value"); };
  a.gen = static_cast<isa::CoreGen>(num("core_gen").get<int>());
  a.pe_ghz = num("pe_ghz").get<double>();
  a.act_ghz = num("act_ghz").get<double>();
  a.pool_ghz = num("pool_ghz").get<double>();
  a.dve_ghz = num("dve_ghz").get<double>();
  a.sp_ghz = num("sp_ghz").get<double>();
  a.partitions = num("partitions").get<int64_t>();
  a.sbuf_bytes_per_partition = num("sbuf_bytes_per_partition").get<int64_t>();
  a.psum_bytes_per_partition = num("psum_bytes_per_partition").get<int64_t>();
  a.psum_banks = num("psum_banks").get<int64_t>();
  a.dma_engines = num("dma_engines").get<int>();
  a.dma_queues = num("dma_queues").get<int>();
  a.dma_engine_bytes_per_ns = num("dma_engine_bytes_per_ns").get<double>();
  a.dma_fixed_ns = num("dma_fixed_ns").get<double>();
  a.hbm_bytes_per_ns = num("hbm_bytes_per_ns").get<double>();
  a.min_ii_cycles = num("min_ii_cycles").get<int64_t>();
  a.pe_mm_init_cycles = num("pe_mm_init_cycles").get<int64_t>();
  a.pool_startup_cycles = num("pool_startup_cycles").get<int64_t>();
  a.dependent_overhead_cycles = num("dependent_overhead_cycles").get<int64_t>();
  a.sbuf_access_startup_cycles = num("sbuf_access_startup_cycles").get<int64_t>();
  a.dve_pool_shared_sbuf_port = num("dve_pool_shared_sbuf_port").get<bool>();
  return a;
}

} // namespace neuronsim::engines
