// A run's settings: checked, completed from the kernel, parsed (run_settings.hpp).
#include "neuronsim/sim/run_settings.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/names.hpp"
#include "neuronsim/sim/device.hpp"
#include "neuronsim/sim/ranks.hpp"
#include "neuronsim/sim/stream_form.hpp"

namespace neuronsim::sim {

namespace fs = std::filesystem;

SettingNames cli_setting_names() {
  return {"--input/--inputs",
          "--inputs",
          "--expect",
          "--rtol",
          "--atol",
          "--timing-only",
          "--max-instructions",
          CoreSettingNames{"--cores", "--lnc"},
          "--arch",
          "--set"};
}
SettingNames python_setting_names() {
  return {"inputs", "inputs",      "expect",           "rtol",
          "atol",   "timing_only", "max_instructions", CoreSettingNames{"cores", "lnc"},
          "arch",   "set"};
}

void check_dir_setting(const std::string &dir, const std::string &setting) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError(setting + " " + dir + ": " + (fs::exists(dir, ec) ? "not a directory" : "no such directory"));
}

void check_tolerance_setting(double value, const std::string &setting) {
  if (!std::isfinite(value) || value < 0) {
    std::ostringstream os;
    os << value;
    throw UsageError(setting + " needs a finite number >= 0, got " + os.str());
  }
}

void check_settings(const RunSettings &s) {
  const SettingNames &n = s.names;
  // Folders given must exist (a misspelt one would silently mean "no inputs").
  if (!s.inputs.dir.empty())
    check_dir_setting(s.inputs.dir, n.inputs_dir);
  if (s.expect && !s.expect->dir.empty())
    check_dir_setting(s.expect->dir, n.expect);
  if (s.rtol)
    check_tolerance_setting(*s.rtol, n.rtol);
  if (s.atol)
    check_tolerance_setting(*s.atol, n.atol);
  if (s.options.max_instructions < 1)
    throw UsageError(n.max_instructions + " needs an integer >= 1, got " + std::to_string(s.options.max_instructions));
  // A timing-only run does no numerics: data and expectations given for it would be silently ignored.
  const bool data = !s.inputs.files.empty() || !s.inputs.dir.empty() || !s.inputs.arrays.empty() ||
                    !s.rank_input_list.empty();
  const bool expectations = s.expect || s.rtol || s.atol;
  if (s.options.timing_only && (data || expectations))
    throw UsageError(n.timing_only + " runs no numerics: " +
                     (expectations ? n.expect + "/" + n.rtol + "/" + n.atol : n.inputs) + " cannot be used with it");
}

void resolve_cores(const Kernel &k, RunSettings &s) {
  const CoreSettingNames &n = s.names.cores;
  if (s.cores < 0 || s.lnc < 0 || s.cores > kMaxCores || s.lnc > kMaxCores)
    throw UsageError(n.cores + " and " + n.lnc + " take 1 to " + std::to_string(kMaxCores));
  // Bundle streams are lowered per core (shard ids resolved): a multi-core folder runs on its own cores (--cores /
  // --lnc, when given, must say the same), a single-core folder on one core.
  if (!k.core_programs.empty()) {
    const int cn = static_cast<int>(k.core_programs.size());
    if (s.cores == 0 && s.lnc == 0) {
      s.cores = cn;
      s.lnc = k.core_lnc;
    } else if (std::max(s.cores, s.lnc) != cn || std::max(s.lnc, 1) != k.core_lnc) {
      throw InputError({k.path, -1, "", "cores"},
                       "holds the bundle streams of " + std::to_string(cn) +
                           " cores with LNC=" + std::to_string(k.core_lnc) +
                           " (cores.json); the run asks for " + std::to_string(std::max(s.cores, s.lnc)) +
                           " cores with LNC=" + std::to_string(std::max(s.lnc, 1)));
    }
    for (const auto &p : k.core_programs)
      check_kernel_cores(p, s.cores, s.lnc, n);
    return;
  }
  if (k.streams && (s.cores > 1 || s.lnc > 1))
    throw InputError({k.path, -1, "", "cores"},
                     "holds one core's bundle streams (manifest.json, shard 0 and rank 0 resolved); a run of " +
                         std::to_string(std::max(s.cores, s.lnc)) +
                         " cores needs the streams of each: neuronsim encode KERNEL --cores N [--lnc L]");
  const CoreNeeds need = core_needs(k.program);
  const engines::ArchParams arch = engines::load_arch(s.options.arch);
  const bool given = s.cores > 0 || s.lnc > 0;
  if (!given && (k.run_config.cores || k.run_config.lnc)) {
    s.lnc = k.run_config.lnc.value_or(1);
    s.cores = k.run_config.cores.value_or(s.lnc);
    s.cores_from = "run.json";
  } else if (!given && !k.streams) {
    // Nothing says how many cores: the kernel's own needs (its ShardIDKind ub, the cores and ranks it names).
    s.lnc = std::max(need.lnc, 1);
    s.cores = need.min_cores(s.lnc);
    if (need.lnc > 1 && need.lnc > arch.lnc_max) {
      std::string with;  // the built-in architectures that have such logical cores (their lnc_max)
      for (const auto &name : engines::arch_names())
        if (engines::builtin_arch(name).lnc_max >= need.lnc) with += (with.empty() ? "" : " or ") + name;
      throw InputError(need.lnc_at, "ShardIDKind with ub " + std::to_string(need.lnc) +
                                        ": the kernel is written for LNC=" + std::to_string(need.lnc) +
                                        ", which " + arch.name + " does not have (lnc_max " +
                                        std::to_string(arch.lnc_max) + ")" +
                                        (with.empty() ? "" : ": run it with " + s.names.arch + " " + with));
    }
    const bool by_cores = need.cores >= int64_t(need.ranks) * s.lnc;  // which of the two sets the count
    if (s.cores > kMaxCores) {
      throw InputError(by_cores ? need.cores_at : need.ranks_at,
                       std::string("names ") + (by_cores ? "core " + std::to_string(need.highest_core)
                                                         : "rank " + std::to_string(need.highest_rank)) +
                           ": a run has at most " + std::to_string(kMaxCores) + " cores");
    }
    if (s.cores > 1)
      s.cores_from = "the kernel's " + (need.lnc > 1 ? std::string("ShardIDKind ub")
                                        : by_cores      ? need.cores_at.field
                                                        : need.ranks_at.field);
  } else {
    // Given: --lnc L alone runs L cores.
    if (s.lnc == 0)
      s.lnc = 1;
    if (s.cores == 0)
      s.cores = s.lnc;
  }
  check_kernel_cores(k.program, s.cores, s.lnc, n);
}

void complete_settings(const Kernel &k, RunSettings &s) {
  check_settings(s);
  const bool timing_only = s.options.timing_only;
  if (s.options.arch.empty() && k.run_config.arch)
    s.options.arch = *k.run_config.arch;
  if (s.options.arch.empty())
    s.options.arch = k.streams ? arch_for_gen(*k.streams) : "trn1";
  if (!s.arch_sets.empty()) {
    s.options.arch = with_arch_sets(s.options.arch, s.arch_sets, s.names.arch_set);
    engines::load_arch(
        s.options.arch); // the whole checked now (cross-checks such as PSUM banks), before any work
    s.arch_sets.clear();
  }
  resolve_cores(k, s);
  if (s.inputs.dir.empty())
    s.inputs.dir = k.inputs_dir;
  if (!s.rank_input_list.empty() && static_cast<int>(s.rank_input_list.size()) != run_ranks(s))
    throw UsageError(s.names.inputs + " gives " + std::to_string(s.rank_input_list.size()) +
                     " input sets (one per rank), the run has " + std::to_string(run_ranks(s)) + " rank" +
                     (run_ranks(s) == 1 ? "" : "s") + " (cores / lnc)");
  for (auto &spec : s.rank_input_list) {
    if (!spec.dir.empty()) check_dir_setting(spec.dir, s.names.inputs_dir);
    if (spec.dir.empty()) spec.dir = k.inputs_dir;
  }
  if (!s.expect && !k.expected_dir.empty() && !timing_only) {
    // A workload's expected/ that holds no output's file (nor rank folders) expects nothing: the run says so
    // instead of reporting every output as a mismatch.
    if (expected_files(k.program, k.expected_dir).empty() && !has_rank_dirs(k.expected_dir, run_ranks(s)))
      s.no_expected = k.expected_dir;
    else
      s.expect = ExpectSpec{k.expected_dir, {}};
  }
  if (!s.rtol && !s.atol && !timing_only && k.run_config.rtol) {
    s.rtol = k.run_config.rtol; // run.json's tolerance (read_run_config checked it)
    s.atol = k.run_config.atol;
  } else if (s.rtol || s.atol || timing_only || k.tolerance_file.empty()) {
    if (!s.rtol)
      s.rtol = kDefaultRtol;
    if (!s.atol)
      s.atol = kDefaultAtol;
  } else {
    // A workload states the tolerance its dtypes justify (workloads/<name>/README.md explains it).
    const nlohmann::json t = isa::read_json_file(k.tolerance_file, "tolerance file");
    for (const char *key : {"rtol", "atol"})
      if (!t.is_object() || !t.contains(key) || !t.at(key).is_number())
        throw InputError({k.tolerance_file, -1, "", key}, "the tolerance file needs a number under this key");
    s.rtol = t.at("rtol").get<double>();
    s.atol = t.at("atol").get<double>();
    check_tolerances(*s.rtol, *s.atol, k.tolerance_file);
  }
  // Expected files and arrays are checked now (shape, dtype, regular file): a wrong one is reported before the run.
  if (s.expect)
    for (int r = 0; r < run_ranks(s); ++r) check_expected(k.program, rank_expect(*s.expect, r, run_ranks(s)));
}

void prepare_run_outputs(const Kernel &k, const RunSettings &s, const std::string &outdir,
                         const std::vector<std::string> &files) {
  // Every output path is checked (and the output directory created) before the run: a path that cannot be
  // written fails now, not after the simulation, and no output may overwrite the kernel, an input or an
  // expected file (--expect equal to --outdir would rewrite the expectations before comparing them).
  std::vector<std::string> out_files, read_files = run_read_files(k, s);
  const int ranks = run_ranks(s);
  if (!s.options.timing_only) {
    // The outputs' file names are checked even when none is written (the Python module), so that a kernel the
    // CLI refuses is refused there too.
    for (int r = 0; r < ranks; ++r) {
      const auto outputs = output_files(k.program, rank_outdir(outdir, r, ranks));
      if (!outdir.empty())
        for (const auto &[t, path] : outputs)
          out_files.push_back(path), (void)t;
    }
  }
  for (const auto &f : files)
    if (!f.empty())
      out_files.push_back(f);
  if (!s.save_inputs.empty()) {
    // Several ranks: each rank's inputs in DIR/rank<r>/, the per-rank layout --inputs reads (docs/multicore.md "Per-rank
    // data"), so that the folder fed back as --inputs gives every rank the same data.
    for (int r = 0; r < ranks; ++r) {
      const std::string dir = rank_outdir(s.save_inputs, r, ranks);
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) throw InputError({dir, -1, "", "--save-inputs"}, "cannot create the directory: " + ec.message());
      for (const auto &[t, path] : saved_input_files(k.program, dir))
        out_files.push_back(path), (void)t;
    }
  }
  std::vector<std::string> dirs;
  if (!s.options.timing_only && !outdir.empty()) {
    dirs.push_back(outdir);
    for (int r = 0; ranks > 1 && r < ranks; ++r) dirs.push_back(rank_outdir(outdir, r, ranks));
  }
  prepare_output_paths(dirs, out_files, read_files);
}

std::vector<std::string> run_read_files(const Kernel &k, const RunSettings &s) {
  std::vector<std::string> read_files = k.files;
  const int ranks = run_ranks(s);
  for (int r = 0; r < ranks; ++r) {
    for (const auto &f : input_files(k.program, run_rank_inputs(k.program, s, r, ranks)))
      read_files.push_back(f);
    if (s.expect)
      for (const auto &f : expected_files(k.program, rank_expect(*s.expect, r, ranks).dir))
        read_files.push_back(f);
  }
  if (!k.tolerance_file.empty())
    read_files.push_back(k.tolerance_file);
  return read_files;
}

int run_ranks(const RunSettings &s) {
  const int lnc = std::max(s.lnc, 1);
  return std::max(std::max(s.cores, s.lnc), 1) / lnc;
}

InputSpec run_rank_inputs(const isa::Program &p, const RunSettings &s, int rank, int ranks) {
  if (s.rank_input_list.empty()) return ranks > 1 ? rank_inputs(p, s.inputs, rank, ranks) : s.inputs;
  return rank_inputs(p, s.rank_input_list.at(static_cast<size_t>(rank)), rank, ranks);
}

ScheduleMode parse_schedule(const std::string &value, const std::string &option) {
  if (value == "auto") return ScheduleMode::Auto;
  if (value == "whole") return ScheduleMode::Whole;
  if (value == "streamed") return ScheduleMode::Streamed;
  throw UsageError(option + " takes auto, whole or streamed, got '" + value + "'" +
                   isa::did_you_mean(value, {"auto", "whole", "streamed"}));
}

std::string parse_arch(const std::string &value, const std::string &option) {
  engines::ArchSpec spec;
  try {
    spec = engines::split_arch_spec(value);
  } catch (const InputError &e) {
    throw UsageError(option + " " + value + ": " + e.message());
  }
  // A file is read and checked now, so that a bad one is reported before any work (InputError, exit 3).
  if (engines::names_arch_file(spec.base)) {
    engines::load_arch(spec.base);
  } else {
    const std::vector<std::string> names = engines::arch_names();
    if (std::find(names.begin(), names.end(), spec.base) == names.end()) {
      std::string known;
      for (const auto &n : names)
        known += (known.empty() ? "" : ", ") + n;
      throw UsageError(option + " takes " + known + " or an architecture FILE.json, got '" + spec.base + "'" +
                       isa::did_you_mean(spec.base, names));
    }
  }
  if (spec.sets.empty())
    return value;
  std::vector<std::pair<std::string, std::string>> sets;
  for (const auto &[key, v] : spec.sets)
    sets.push_back(parse_arch_set(key + "=" + v, option + " " + value));
  spec.sets.clear();
  const std::string text = with_arch_sets(engines::arch_spec_text(spec), sets, option);
  engines::load_arch(text);
  return text;
}

std::pair<std::string, std::string> parse_arch_set(const std::string &setting, const std::string &option) {
  const auto eq = setting.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == setting.size())
    throw UsageError(option + " takes KEY=VALUE (a parameter of `neuronsim arch --keys`), got '" + setting +
                     "'");
  const std::string key = setting.substr(0, eq);
  try {
    return {key, engines::arch_setting_value(option, key, setting.substr(eq + 1))};
  } catch (const InputError &e) {
    throw UsageError(option + " " + setting + ": " + e.message());
  }
}

std::string with_arch_sets(const std::string &arch,
                           const std::vector<std::pair<std::string, std::string>> &sets,
                           const std::string &option) {
  engines::ArchSpec spec = engines::split_arch_spec(arch);
  for (const auto &[key, value] : sets) {
    for (const auto &kv : spec.sets)
      if (kv.first == key)
        throw UsageError(option + " " + key + "=" + value + ": " + key + " is set twice (" + arch + ")");
    spec.sets.emplace_back(key, value);
  }
  return engines::arch_spec_text(spec);
}

isa::CoreGen parse_gen(const std::string &value, const std::string &option) {
  if (value == "v2" || value == "V2")
    return isa::CoreGen::V2;
  if (value == "v3" || value == "V3")
    return isa::CoreGen::V3;
  if (value == "v4" || value == "V4")
    return isa::CoreGen::V4;
  // The generations' trn names are hints: `--gen trn2` means v3.
  throw UsageError(
      option + " takes v2, v3 or v4, got '" + value + "'" +
      isa::did_you_mean(value, {"v2", "v3", "v4"}, {{"trn1", "v2"}, {"trn2", "v3"}, {"trn3", "v4"}}));
}

} // namespace neuronsim::sim
