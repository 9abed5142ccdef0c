// A workload folder's run.json (include/neuronsim/sim/run_config.hpp).
#include "neuronsim/sim/run_config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/names.hpp"
#include "neuronsim/sim/device.hpp"

namespace neuronsim::sim {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kKeys = {"cores", "lnc", "arch", "tolerance"};
const std::vector<std::string> kToleranceKeys = {"rtol", "atol"};

} // namespace

RunConfig read_run_config(const std::string &path) {
  const nlohmann::json j = isa::read_json_file(path, "run configuration");
  auto bad = [&](const std::string &key, const std::string &what) {
    return InputError({path, -1, "", key}, what);
  };
  if (!j.is_object())
    throw bad("", "run.json is a JSON object: {\"cores\": N, \"lnc\": L, \"arch\": A, \"tolerance\": {...}}");
  for (const auto &kv : j.items())
    if (std::find(kKeys.begin(), kKeys.end(), kv.key()) == kKeys.end())
      throw bad(kv.key(), isa::unknown_name("key", kv.key(), kKeys));
  RunConfig c;
  c.file = path;
  auto count = [&](const char *key, int lo, int hi) -> std::optional<int> {
    if (!j.contains(key))
      return std::nullopt;
    const auto &v = j.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
      throw bad(key, "needs a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                         ", got " + v.dump());
    return v.get<int>();
  };
  c.cores = count("cores", 1, kMaxCores);
  c.lnc = count("lnc", 1, kMaxCores);
  if (c.cores && c.lnc && *c.cores % *c.lnc != 0)
    throw bad("lnc",
              std::to_string(*c.cores) + " cores do not make logical cores of " + std::to_string(*c.lnc));
  if (j.contains("arch")) {
    const auto &v = j.at("arch");
    if (!v.is_string() || v.get<std::string>().empty())
      throw bad("arch", "needs an architecture name or file, got " + v.dump());
    std::string a = v.get<std::string>();
    if (engines::names_arch_file(a)) {
      if (fs::path(a).is_relative())
        a = (fs::path(path).parent_path() / a).string();
      engines::load_arch(a); // a bad file is refused now, naming it and its key
    } else {
      const auto names = engines::arch_names();
      if (std::find(names.begin(), names.end(), a) == names.end())
        throw bad("arch", isa::unknown_name("architecture", a, names) + " (or an architecture FILE.json)");
    }
    c.arch = a;
  }
  if (j.contains("tolerance")) {
    const auto &t = j.at("tolerance");
    if (!t.is_object())
      throw bad("tolerance", "needs {\"rtol\": R, \"atol\": A}, got " + t.dump());
    for (const auto &kv : t.items())
      if (std::find(kToleranceKeys.begin(), kToleranceKeys.end(), kv.key()) == kToleranceKeys.end())
        throw bad("tolerance." + kv.key(), isa::unknown_name("key", kv.key(), kToleranceKeys));
    for (const auto &key : kToleranceKeys) {
      if (!t.contains(key) || !t.at(key).is_number() || !std::isfinite(t.at(key).get<double>()) ||
          t.at(key).get<double>() < 0)
        throw bad("tolerance." + key,
                  "needs a finite number >= 0" +
                      (t.contains(key) ? ", got " + t.at(key).dump() : std::string(", missing")));
    }
    c.rtol = t.at("rtol").get<double>();
    c.atol = t.at("atol").get<double>();
  }
  return c;
}

} // namespace neuronsim::sim
