// Reading folders of bundle streams back (bundle_dirs.hpp).
#include "neuronsim/sim/bundle_dirs.hpp"

#include <filesystem>
#include <optional>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/sim/device.hpp"

namespace neuronsim::sim {

namespace fs = std::filesystem;

std::vector<isa::Program> read_core_bundles(const std::string &dir, int *lnc, isa::CoreGen *gen) {
  const std::string mpath = (fs::path(dir) / kCoresManifest).string();
  const nlohmann::json m = isa::read_json_file(mpath, "multi-core bundle index");
  auto bad = [&](const std::string &field, const std::string &what) {
    return InputError({mpath, -1, "", field}, what);
  };
  if (!m.is_object() || m.value("format", "") != kCoresFormat)
    throw bad("format", std::string("not a multi-core bundle index (format \"") + kCoresFormat + "\")");
  if (!m.contains("cores") || !m["cores"].is_number_integer() || m["cores"].get<int64_t>() < 1 ||
      m["cores"].get<int64_t>() > kMaxCores)
    throw bad("cores", "needs a whole number of cores from 1 to " + std::to_string(kMaxCores));
  if (!m.contains("lnc") || !m["lnc"].is_number_integer() || m["lnc"].get<int64_t>() < 1 ||
      m["cores"].get<int64_t>() % m["lnc"].get<int64_t>() != 0)
    throw bad("lnc", "needs a whole number >= 1 that divides cores");
  const int n = m["cores"].get<int>();
  if (lnc) *lnc = m["lnc"].get<int>();
  std::vector<isa::Program> progs;
  std::optional<isa::CoreGen> first;
  for (int i = 0; i < n; ++i) {
    const fs::path cd = fs::path(dir) / ("core" + std::to_string(i));
    std::error_code ec;
    if (!fs::is_directory(cd, ec) || !fs::exists(cd / "manifest.json", ec))
      throw InputError({cd.string(), -1, "", ""},
                       "missing: " + std::string(kCoresManifest) + " names " + std::to_string(n) +
                           " cores, and core" + std::to_string(i) + " has no bundle streams (manifest.json)");
    isa::CoreGen g = isa::CoreGen::V2;
    progs.push_back(isa::read_bundle_dir(cd.string(), &g));
    if (first && g != *first)
      throw InputError({cd.string(), -1, "", "generation"},
                       "streams of " + std::string(isa::core_gen_name(g)) + ", core0's are " +
                           isa::core_gen_name(*first));
    first = g;
  }
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("core", 0) != 0 || name.size() == 4 || !e.is_directory()) continue;
    const std::string num = name.substr(4);
    if (num.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoll(num.substr(0, 6)) >= n)
      throw InputError({e.path().string(), -1, "", ""},
                       "extra core folder: " + std::string(kCoresManifest) + " names " + std::to_string(n) +
                           " cores (core0 to core" + std::to_string(n - 1) + ")");
  }
  if (gen) *gen = *first;
  return progs;
}

std::map<std::string, std::vector<uint8_t>> read_bundle_files(const std::string &dir) {
  std::map<std::string, std::vector<uint8_t>> files;
  for (const auto &e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (!e.is_regular_file() || (n != "manifest.json" && e.path().extension() != ".bin"))
      continue;
    files.emplace(n, isa::read_regular_file_bytes(e.path().string(), isa::kMaxInputFileBytes, "bundle stream"));
  }
  return files;
}

} // namespace neuronsim::sim
