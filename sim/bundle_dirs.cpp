// Writing and reading folders of bundle streams (bundle_dirs.hpp).
#include "neuronsim/sim/bundle_dirs.hpp"

#include <filesystem>
#include <fstream>
#include <optional>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

namespace fs = std::filesystem;

namespace {
// A directory `encode` may write into: missing, empty, or a previous encode output (manifest.json with our
// format tag, and nothing but *.bin files besides). Anything else may be a user's data: refuse.
void prepare_encode_dir(const std::string &dir) {
  fs::path d = dir;
  if (!fs::exists(d))
    return;
  if (!fs::is_directory(d))
    throw InputError({dir, -1, "", ""}, "exists and is not a directory");
  std::vector<fs::path> ours;
  bool manifest = false;
  for (const auto &e : fs::directory_iterator(d)) {
    const std::string n = e.path().filename().string();
    if (n == "manifest.json" && e.is_regular_file()) {
      std::ifstream is(e.path());
      nlohmann::json m = nlohmann::json::parse(is, nullptr, false);
      manifest = !m.is_discarded() && m.is_object() && m.value("format", "") == "neuronsim-bundles";
      ours.push_back(e.path());
    } else if (e.is_regular_file() && e.path().extension() == ".bin") {
      ours.push_back(e.path());
    } else {
      manifest = false;
      ours.clear();
      break;
    }
  }
  if (ours.empty() && fs::is_empty(d))
    return;
  if (!manifest)
    throw InputError(
        {dir, -1, "", ""},
        "directory is not empty and is not a previous `neuronsim encode` output; refusing to write there");
  for (const auto &p : ours)
    fs::remove(p);
}
} // namespace

namespace {
// A directory `encode --cores` may write into: missing, empty, or a previous multi-core encode output (cores.json
// with our format tag, and core<i> folders that are each a previous encode output). Those are removed.
void prepare_cores_dir(const std::string &dir) {
  const fs::path d = dir;
  if (!fs::exists(d)) return;
  if (!fs::is_directory(d)) throw InputError({dir, -1, "", ""}, "exists and is not a directory");
  if (fs::is_empty(d)) return;
  bool ours = false;
  std::vector<fs::path> cores;
  for (const auto &e : fs::directory_iterator(d)) {
    const std::string n = e.path().filename().string();
    if (n == kCoresManifest && e.is_regular_file()) {
      std::ifstream is(e.path());
      const nlohmann::json m = nlohmann::json::parse(is, nullptr, false);
      ours = !m.is_discarded() && m.is_object() && m.value("format", "") == kCoresFormat;
    } else if (n.rfind("core", 0) == 0 && e.is_directory() && !e.is_symlink()) {
      cores.push_back(e.path());
    } else {
      ours = false;
      break;
    }
  }
  if (!ours)
    throw InputError({dir, -1, "", ""},
                     "directory is not empty and is not a previous `neuronsim encode --cores` output; refusing to "
                     "write there");
  for (const auto &c : cores) prepare_encode_dir(c.string());  // refuses a core folder holding anything else
  for (const auto &c : cores) fs::remove(c);
  fs::remove(d / kCoresManifest);
}
} // namespace

std::vector<EncodeSummary> encode_kernel_cores(const Kernel &k, isa::CoreGen gen, const std::string &arch,
                                               const std::string &outdir, int cores, int lnc,
                                               const CoreSettingNames &names) {
  const engines::ArchParams ap = engines::load_arch(arch);
  if (cores < 1 || cores > kMaxCores)
    throw UsageError("--cores takes 1 to " + std::to_string(kMaxCores) + " cores, got " + std::to_string(cores));
  if (lnc < 1 || lnc > ap.lnc_max)
    throw UsageError("arch " + ap.name + " has logical cores of at most " + std::to_string(ap.lnc_max) +
                     " physical cores (lnc_max), got LNC=" + std::to_string(lnc));
  if (cores % lnc != 0)
    throw UsageError(std::to_string(cores) + " cores do not make logical cores of " + std::to_string(lnc));
  check_kernel_cores(k.program, cores, lnc, names);
  if (has_data_dependent_control(k.program)) {  // the same rule as a run (the streams must run where they go)
    ErrorContext where;
    const std::string why = multicore_control_flow_refusal(k.program, lnc, &where);
    if (!why.empty()) throw InputError(where, why);
  }
  // Every core is lowered before anything is written: a kernel that does not lower leaves no folder behind.
  std::vector<EncodeSummary> out(static_cast<size_t>(cores));
  std::vector<isa::Program> low;
  for (int i = 0; i < cores; ++i) {
    StreamFormOptions lo;
    lo.shard = i % lnc;
    lo.rank = i / lnc;
    low.push_back(to_stream_form(k.program, ap, lo, &out[static_cast<size_t>(i)].stream_form));
  }
  prepare_cores_dir(outdir);
  fs::create_directories(outdir);
  nlohmann::json index = {{"format", kCoresFormat}, {"generation", isa::core_gen_name(gen)}, {"arch", arch},
                          {"cores", cores}, {"lnc", lnc}, {"dirs", nlohmann::json::array()}};
  for (int i = 0; i < cores; ++i) {
    const std::string name = "core" + std::to_string(i);
    const fs::path cd = fs::path(outdir) / name;
    isa::write_bundle_dir(low[static_cast<size_t>(i)], gen, cd.string());
    std::ifstream ms(cd / "manifest.json");
    out[static_cast<size_t>(i)].manifest = nlohmann::json::parse(ms);
    index["dirs"].push_back(name);
  }
  isa::AtomicFile f((fs::path(outdir) / kCoresManifest).string());
  f.write(index.dump(1) + "\n");
  f.commit();
  return out;
}

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

EncodeSummary encode_kernel(const Kernel &k, isa::CoreGen gen, const std::string &arch,
                            const std::string &outdir, const CoreSettingNames &names) {
  EncodeSummary s;
  // One bundle set is one core's: a kernel written for several is refused, naming what says so (core_needs).
  check_kernel_cores(k.program, 1, 1, names);
  const isa::Program low = to_stream_form(k.program, engines::load_arch(arch), {}, &s.stream_form);
  prepare_encode_dir(outdir);
  isa::write_bundle_dir(low, gen, outdir);
  std::ifstream ms(fs::path(outdir) / "manifest.json");
  s.manifest = nlohmann::json::parse(ms);
  return s;
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
