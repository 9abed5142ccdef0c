#include "neuronsim/sim/session.hpp"

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/bundle.hpp"

namespace neuronsim::sim {

namespace fs = std::filesystem;

Kernel load_kernel(const std::string &path, KernelForms forms) {
  Kernel k;
  k.path = path;
  const fs::path p = path;
  // A folder written by `neuronsim encode` (manifest.json + <engine>.bin) runs its streams.
  if (forms == KernelForms::Any && fs::is_regular_file(p / "manifest.json")) {
    isa::CoreGen gen = isa::CoreGen::V2;
    k.program = isa::read_bundle_dir(path, &gen);
    k.streams = gen;
    k.label = path + " (bundle streams, " + isa::core_gen_name(gen) + ")";
    return k;
  }
  if (!fs::exists(p))
    throw InputError({path, -1, "", ""}, "no such file or directory");
  std::string bir = path;
  if (fs::is_directory(p)) {
    std::vector<fs::path> birs;
    for (const auto &e : fs::directory_iterator(p)) {
      const std::string n = e.path().filename().string();
      if (e.is_regular_file() && n.size() > 9 && n.substr(n.size() - 9) == ".bir.json")
        birs.push_back(e.path());
    }
    if (birs.size() != 1)
      throw InputError({path, -1, "", ""},
                       "a workload directory must hold exactly one *.bir.json file (found " +
                           std::to_string(birs.size()) + ")");
    bir = birs[0].string();
    if (fs::is_directory(p / "inputs"))
      k.inputs_dir = (p / "inputs").string();
    if (fs::is_directory(p / "expected"))
      k.expected_dir = (p / "expected").string();
    if (fs::is_regular_file(p / "tolerance.json"))
      k.tolerance_file = (p / "tolerance.json").string();
  }
  k.program = isa::read_bir_file(bir);
  k.label = bir;
  return k;
}

void complete_settings(const Kernel &k, RunSettings &s) {
  if (s.options.arch.empty())
    s.options.arch = k.streams ? arch_for_gen(*k.streams) : "trn1";
  if (s.inputs.dir.empty())
    s.inputs.dir = k.inputs_dir;
  if (!s.expect && !k.expected_dir.empty())
    s.expect = ExpectSpec{k.expected_dir, {}};
  if (s.expect)
    check_expected_tensors(k.program, *s.expect);
  if (s.rtol || s.atol) {
    if (!s.rtol)
      s.rtol = kDefaultRtol;
    if (!s.atol)
      s.atol = kDefaultAtol;
    return;
  }
  s.rtol = kDefaultRtol, s.atol = kDefaultAtol;
  if (k.tolerance_file.empty())
    return;
  // A workload states the tolerance its dtypes justify (workloads/<name>/README.md explains it).
  try {
    std::ifstream f(k.tolerance_file);
    const nlohmann::json t = nlohmann::json::parse(f);
    s.rtol = t.at("rtol").get<double>();
    s.atol = t.at("atol").get<double>();
  } catch (const std::exception &e) {
    throw InputError({k.tolerance_file, -1, "", "rtol/atol"},
                     std::string("cannot read the tolerance: ") + e.what());
  }
}

Run run_kernel(const Kernel &k, const RunSettings &s) {
  Run r;
  r.simulator = std::make_unique<Simulator>(k.program, s.options);
  if (!s.options.timing_only)
    r.input_lines = load_inputs(k.program, r.simulator->memory(), s.inputs);
  r.result = r.simulator->run();
  return r;
}

std::vector<Mismatch> check_outputs(const Kernel &k, Run &run, const RunSettings &s,
                                    std::vector<std::string> *checked) {
  if (!s.expect || s.options.timing_only)
    return {};
  return compare_outputs(k.program, run.simulator->memory(), *s.expect, s.rtol.value_or(kDefaultRtol),
                         s.atol.value_or(kDefaultAtol), checked);
}

std::string mismatch_line(const Mismatch &m, double rtol, double atol) {
  std::ostringstream os;
  os << std::setprecision(6);
  if (m.index < 0)
    os << "MISMATCH " << m.tensor << ": " << m.message;
  else
    os << "MISMATCH " << m.tensor << "[" << m.index << "]: got " << m.got << ", expected " << m.want
       << " (rtol " << rtol << ", atol " << atol << ")";
  return os.str();
}

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

EncodeSummary encode_kernel(const Kernel &k, isa::CoreGen gen, const std::string &arch,
                            const std::string &outdir) {
  EncodeSummary s;
  const isa::Program low = lower_to_stream(k.program, engines::builtin_arch(arch), {}, &s.lowered);
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
    std::ifstream is(e.path(), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
    if (is.bad())
      throw InputError({e.path().string(), -1, "", ""}, "read error");
    files.emplace(n, std::move(bytes));
  }
  return files;
}

ValidateReport validate_kernel(const Kernel &k, const std::string &bundle_dir, ValidateOptions options) {
  if (options.inputs.dir.empty())
    options.inputs.dir = k.inputs_dir;
  return validate_bundles(k.program, bundle_dir, options);
}

std::string report_text(const ValidateReport &r) {
  std::string s;
  for (const auto &l : r.lint)
    s += l + "\n";
  for (const auto &l : r.notes)
    s += "note: " + l + "\n";
  if (!r.divergence.empty())
    s += "divergence: " + r.divergence + "\n";
  return s + r.summary + "\n";
}

std::string parse_arch(const std::string &value, const std::string &option) {
  if (value != "trn1" && value != "trn2" && value != "trn3")
    throw UsageError(option + " takes trn1, trn2 or trn3, got '" + value + "'");
  return value;
}

isa::CoreGen parse_gen(const std::string &value, const std::string &option) {
  if (value == "v2" || value == "V2")
    return isa::CoreGen::V2;
  if (value == "v3" || value == "V3")
    return isa::CoreGen::V3;
  if (value == "v4" || value == "V4")
    return isa::CoreGen::V4;
  throw UsageError(option + " takes v2, v3 or v4, got '" + value + "'");
}

std::string one_line(const std::string &m) {
  static const char *hex = "0123456789ABCDEF";
  std::string s;
  for (size_t i = 0; i < m.size();) {
    const unsigned char c = static_cast<unsigned char>(m[i]);
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 1;
    for (size_t k = 1; k < n; ++k)
      if (i + k >= m.size() || (static_cast<unsigned char>(m[i + k]) & 0xC0) != 0x80)
        n = 0;
    if (n > 1) {
      s.append(m, i, n);
      i += n;
      continue;
    }
    if (c >= 0x20 && c < 0x7F)
      s += static_cast<char>(c);
    else
      s += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    ++i;
  }
  return s;
}

void write_json_file(const std::string &path, const nlohmann::json &j) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    if (!f)
      throw InputError({path, -1, "", ""}, "cannot write");
    f << j.dump(1) << "\n";
    if (!f)
      throw InputError({path, -1, "", ""}, "write failed");
  }
  fs::rename(tmp, path);
}

} // namespace neuronsim::sim
