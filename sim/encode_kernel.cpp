// `neuronsim encode`: a kernel put in the stream form and written as bundle streams, one core's or one set per
// core (encode_kernel.hpp).
#include "neuronsim/sim/encode_kernel.hpp"

#include <filesystem>
#include <fstream>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/sim/bundle_dirs.hpp"
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

} // namespace neuronsim::sim
