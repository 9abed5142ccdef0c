#include "neuronsim/sim/session.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <new>
#include <sstream>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/bundle.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/isa/names.hpp"
#include "neuronsim/sim/analysis.hpp"
#include "neuronsim/sim/stats.hpp"

namespace neuronsim::sim {

namespace fs = std::filesystem;

Kernel load_kernel(const std::string &path, KernelForms forms) {
  Kernel k;
  k.path = path;
  const fs::path p = path;
  // A folder written by `neuronsim encode` (manifest.json + <engine>.bin) runs its streams.
  // (Any manifest.json counts: one that is not a regular file is refused by the reader, naming it.)
  std::error_code mec;
  // A multi-core bundle folder (encode --cores N): one stream folder per core.
  if (forms == KernelForms::Any && fs::is_directory(p, mec) && fs::exists(p / kCoresManifest, mec)) {
    isa::CoreGen gen = isa::CoreGen::V2;
    k.core_programs = read_core_bundles(path, &k.core_lnc, &gen);
    k.program = k.core_programs[0];
    k.streams = gen;
    k.label = path + " (bundle streams of " + std::to_string(k.core_programs.size()) + " cores, " +
              isa::core_gen_name(gen) + ")";
    std::error_code ec;
    for (const auto &e : fs::recursive_directory_iterator(p, ec))
      k.files.push_back(e.path().string());
    return k;
  }
  if (forms == KernelForms::Any && fs::is_directory(p, mec) && fs::exists(p / "manifest.json", mec)) {
    isa::CoreGen gen = isa::CoreGen::V2;
    k.program = isa::read_bundle_dir(path, &gen);
    k.streams = gen;
    k.label = path + " (bundle streams, " + isa::core_gen_name(gen) + ")";
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(p, ec))
      k.files.push_back(e.path().string());
    return k;
  }
  if (!fs::exists(p))
    throw InputError({path, -1, "", ""}, "no such file or directory");
  std::string bir = path;
  if (fs::is_directory(p)) {
    // Every *.bir.json entry counts, whatever it is: a FIFO beside the kernel makes two (refused), never a
    // folder read as the other one alone (the sweeps' folder rule is the same, python/neuronsim/sweeps.py).
    std::vector<fs::path> birs;
    for (const auto &e : fs::directory_iterator(p)) {
      const std::string n = e.path().filename().string();
      if (n.size() > 9 && n.substr(n.size() - 9) == ".bir.json")
        birs.push_back(e.path());
    }
    std::sort(birs.begin(), birs.end());
    if (birs.size() != 1) {
      std::string names;
      for (const auto &b : birs)
        names += (names.empty() ? ": " : ", ") + b.filename().string();
      throw InputError({path, -1, "", ""},
                       "a workload directory must hold exactly one *.bir.json file (found " +
                           std::to_string(birs.size()) + names + ")");
    }
    bir = birs[0].string();
    if (fs::is_directory(p / "inputs"))
      k.inputs_dir = (p / "inputs").string();
    if (fs::is_directory(p / "expected"))
      k.expected_dir = (p / "expected").string();
    if (fs::is_regular_file(p / "tolerance.json"))
      k.tolerance_file = (p / "tolerance.json").string();
    std::error_code rec;
    if (fs::exists(p / kRunConfigFile, rec)) { // one that is not a regular file is refused by the reader
      k.run_config = read_run_config((p / kRunConfigFile).string());
      if (k.run_config.rtol && !k.tolerance_file.empty())
        throw InputError({k.run_config.file, -1, "", "tolerance"},
                         "the folder gives its tolerance twice (run.json and tolerance.json): keep one");
    }
  }
  k.program = isa::read_bir_file(bir);
  k.label = bir;
  k.files.push_back(bir);
  return k;
}

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
  std::vector<std::string> out_files, read_files = k.files;
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
  for (int r = 0; r < ranks; ++r) {
    for (const auto &f : input_files(k.program, run_rank_inputs(k.program, s, r, ranks)))
      read_files.push_back(f);
    if (s.expect)
      for (const auto &f : expected_files(k.program, rank_expect(*s.expect, r, ranks).dir))
        read_files.push_back(f);
  }
  if (!k.tolerance_file.empty())
    read_files.push_back(k.tolerance_file);
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

int run_ranks(const RunSettings &s) {
  const int lnc = std::max(s.lnc, 1);
  return std::max(std::max(s.cores, s.lnc), 1) / lnc;
}

bool has_rank_dirs(const std::string &dir, int ranks) {
  if (dir.empty() || ranks <= 1) return false;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  bool any = false;
  for (const auto &e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.size() < 5 || n.compare(0, 4, "rank") != 0 || !e.is_directory()) continue;
    if (n.find_first_not_of("0123456789", 4) != std::string::npos) continue;
    any = true;
    if (n.size() > 9 || std::stoi(n.substr(4)) >= ranks || (n.size() > 5 && n[4] == '0'))
      throw InputError({e.path().string(), -1, "", ""},
                       "the run has " + std::to_string(ranks) + " ranks: per-rank folders are rank0 to rank" +
                           std::to_string(ranks - 1));
  }
  if (!any) return false;
  for (int r = 0; r < ranks; ++r) {
    const fs::path d = fs::path(dir) / ("rank" + std::to_string(r));
    if (!fs::is_directory(d, ec))
      throw InputError({d.string(), -1, "", ""},
                       "no such directory: the run has " + std::to_string(ranks) +
                           " ranks and the folder has per-rank folders, one for each rank");
  }
  return true;
}

InputSpec rank_inputs(const isa::Program &p, const InputSpec &spec, int rank, int ranks) {
  InputSpec r = spec;
  if (!has_rank_dirs(spec.dir, ranks)) return r;
  const fs::path d = fs::path(spec.dir) / ("rank" + std::to_string(rank));
  for (const auto &t : p.tensors) {
    if (!t.is_input() || !t.is_dram() || spec.files.count(t.name) || spec.arrays.count(t.name)) continue;
    const fs::path f = d / tensor_file_name(t.name);
    std::error_code ec;
    if (fs::exists(f, ec)) r.files[t.name] = f.string();
  }
  return r;
}

InputSpec run_rank_inputs(const isa::Program &p, const RunSettings &s, int rank, int ranks) {
  if (s.rank_input_list.empty()) return ranks > 1 ? rank_inputs(p, s.inputs, rank, ranks) : s.inputs;
  return rank_inputs(p, s.rank_input_list.at(static_cast<size_t>(rank)), rank, ranks);
}

ExpectSpec rank_expect(const ExpectSpec &e, int rank, int ranks) {
  ExpectSpec r = e;
  if (has_rank_dirs(e.dir, ranks)) r.dir = (fs::path(e.dir) / ("rank" + std::to_string(rank))).string();
  return r;
}

std::string rank_outdir(const std::string &outdir, int rank, int ranks) {
  if (ranks <= 1 || outdir.empty()) return outdir;
  return (fs::path(outdir) / ("rank" + std::to_string(rank))).string();
}

std::vector<std::pair<int, std::string>> saved_input_files(const isa::Program &p, const std::string &dir) {
  std::vector<std::pair<int, std::string>> files;
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const auto &t = p.tensors[i];
    if (t.is_input() && t.is_dram()) files.emplace_back(static_cast<int>(i), (fs::path(dir) / tensor_file_name(t.name)).string());
  }
  return files;
}

Run run_kernel(const Kernel &k, const RunSettings &s) {
  Run r;
  RunOptions options = s.options;
  // The trace file is written as the run goes; the simulator's hook owns the writer, so that a run that throws
  // destroys it with the simulator (which removes the temporary).
  std::shared_ptr<TraceWriter> trace;
  if (!s.trace.empty()) {
    trace = TraceWriter::to_file(s.trace, k.program, engines::load_arch(options.arch),
                                 s.cores > 1 || s.lnc > 1 ? 0 : -1);
    options.record_dma_engine_slices = true;  // the trace shows the DMA engines' activity
    options.on_event = [trace](const TraceEvent &e, const ScheduledInst &si, const RunResult &res) {
      trace->event(e, si, res);
    };
    options.on_dma_slices = [trace](std::vector<engines::DmaSlice> &sl) { trace->slices(sl); };
  }
  if (!k.core_programs.empty()) {  // a multi-core bundle folder: core i runs its own streams
    std::vector<const isa::Program *> programs;
    for (const auto &p : k.core_programs) programs.push_back(&p);
    r.device = std::make_unique<Device>(programs, options, s.lnc);
    r.simulator = r.device->release_primary();
  } else if (s.cores > 1 || s.lnc > 1) {
    r.device = std::make_unique<Device>(k.program, options, std::max(s.cores, s.lnc), s.lnc);
    r.simulator = r.device->release_primary();  // core 0: its memory holds the device's DRAM
  } else {
    r.simulator = std::make_unique<Simulator>(k.program, options);
  }
  if (!s.options.timing_only) {
    const int ranks = r.ranks();
    for (int rank = 0; rank < ranks; ++rank) {  // each rank's DRAM gets its inputs (docs/multicore.md)
      const auto lines = load_inputs(k.program, r.rank_memory(rank), run_rank_inputs(k.program, s, rank, ranks));
      for (const auto &l : lines) r.input_lines.push_back(ranks > 1 ? "rank" + std::to_string(rank) + " " + l : l);
    }
  }
  if (!s.save_inputs.empty() && !s.options.timing_only) {
    const int ranks = r.ranks();
    for (int rank = 0; rank < ranks; ++rank)  // rank r's as it reads them: DIR/rank<r>/ (one rank: DIR/)
      for (const auto &[t, path] : saved_input_files(k.program, rank_outdir(s.save_inputs, rank, ranks))) {
        const auto &tensor = k.program.tensors[static_cast<size_t>(t)];
        io::NpyArray a;
        a.dtype = tensor.dtype;
        a.shape = tensor.shape;
        a.data = r.rank_memory(rank).dram(t);
        io::write_npy(path, a);
        r.saved_inputs.push_back(path);
      }
  }
  if (r.device) {
    r.device_result = r.device->run();
    r.result = r.device_result.cores[0];
    if (trace)  // one track group per core: core 0's streamed, the others' from their results
      for (int i = 1; i < r.device->cores(); ++i)
        trace->add_core(r.device_result.cores[static_cast<size_t>(i)], r.device->core(i).schedule(), k.program, i);
  } else {
    r.result = r.simulator->run();
  }
  if (trace) trace->finish(r.result);
  if (!s.options.timing_only) {
    const int ranks = r.ranks();
    for (int rank = 0; rank < ranks; ++rank)
      for (size_t t = 0; t < k.program.tensors.size(); ++t) {
        const int64_t n = r.rank_memory(rank).unwritten_elements(static_cast<int>(t));
        if (n > 0)
          r.unwritten.push_back({rank, k.program.tensors[t].name, n, k.program.tensors[t].num_elements()});
      }
  }
  return r;
}

std::string unwritten_line(const UnwrittenOutput &u, int ranks) {
  return "output '" + (ranks > 1 ? "rank" + std::to_string(u.rank) + "/" : std::string()) + u.tensor +
         "': " + std::to_string(u.unwritten) + " of " + std::to_string(u.elements) +
         " elements were written by no instruction (they hold the 0xFF fill, NaN as a float): the kernel "
         "misses "
         "part of its output, or runs on fewer cores than it is written for";
}

std::vector<Mismatch> check_outputs(const Kernel &k, Run &run, const RunSettings &s,
                                    std::vector<std::string> *checked) {
  if (!s.expect || s.options.timing_only)
    return {};
  const int ranks = run.ranks();
  if (ranks == 1)
    return compare_outputs(k.program, run.simulator->memory(), *s.expect, s.rtol.value_or(kDefaultRtol),
                           s.atol.value_or(kDefaultAtol), checked);
  std::vector<Mismatch> bad;
  for (int r = 0; r < ranks; ++r) {
    std::vector<std::string> names;
    for (auto m : compare_outputs(k.program, run.rank_memory(r), rank_expect(*s.expect, r, ranks),
                                  s.rtol.value_or(kDefaultRtol), s.atol.value_or(kDefaultAtol), &names)) {
      m.tensor = "rank" + std::to_string(r) + "/" + m.tensor;
      bad.push_back(std::move(m));
    }
    if (checked)
      for (const auto &n : names) checked->push_back("rank" + std::to_string(r) + "/" + n);
  }
  return bad;
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

ValidateReport validate_kernel(const Kernel &k, const std::string &bundle_dir, ValidateOptions options) {
  if (options.inputs.dir.empty())
    options.inputs.dir = k.inputs_dir;
  std::error_code ec;
  const int want_cores = std::max(options.cores, options.lnc), want_lnc = std::max(options.lnc, 1);
  if (fs::exists(fs::path(bundle_dir) / kCoresManifest, ec)) {
    // A multi-core folder: its cores.json says how many cores; --cores / --lnc, when given, must agree.
    int lnc = 1;
    isa::CoreGen gen = isa::CoreGen::V2;
    const int cores = static_cast<int>(read_core_bundles(bundle_dir, &lnc, &gen).size());
    if (want_cores > 0 && (want_cores != cores || want_lnc != lnc))
      throw InputError({bundle_dir, -1, "", "cores"},
                       "holds the bundle streams of " + std::to_string(cores) + " cores with LNC=" +
                           std::to_string(lnc) + " (cores.json); validate asks for " + std::to_string(want_cores) +
                           " cores with LNC=" + std::to_string(want_lnc));
    (void)has_rank_dirs(options.inputs.dir, cores / lnc);  // InputError naming a missing or extra rank folder
    check_kernel_cores(k.program, cores, lnc, options.names);
    return validate_device_bundles(k.program, bundle_dir, cores, lnc, options);
  }
  check_kernel_cores(k.program, 1, 1, options.names);
  if (want_cores > 1)
    throw InputError({bundle_dir, -1, "", "cores"},
                     "holds one core's bundle streams (manifest.json); validating " + std::to_string(want_cores) +
                         " cores needs the streams of each: neuronsim encode KERNEL --cores N [--lnc L]");
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

std::string summary_text(Run &run, const nlohmann::json &doc, bool why) {
  std::ostringstream out;
  if (run.device) {
    for (int c = 0; c < run.device->cores(); ++c) {
      const nlohmann::json &a = doc["cores"][static_cast<size_t>(c)]["analysis"];
      out << "core " << c << " (shard " << c % run.device->lnc() << ", rank " << c / run.device->lnc()
          << "):\n";
      print_summary(out, run.device_result.cores[static_cast<size_t>(c)], run.device->core(c).schedule(), &a);
      if (why)
        print_why(out, a);
    }
    print_device_summary(out, *run.device, run.device_result);
  } else {
    print_summary(out, run.result, run.simulator->schedule(), &doc["analysis"]);
    if (why)
      print_why(out, doc["analysis"]);
  }
  return out.str();
}

nlohmann::json run_stats(Run &run, const isa::Program &p, const std::vector<std::string> &command_line,
                         bool with_profile) {
  return run.device ? device_stats_json(*run.device, run.device_result, command_line, with_profile)
                    : stats_json(run.result, run.simulator->schedule(), p, command_line, with_profile);
}

std::string ProgressLine::line(int64_t done, int64_t total, double sim_ns) {
  return line_at(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(), done, total,
                 sim_ns);
}

std::string ProgressLine::line_at(double wall, int64_t done, int64_t total, double sim_ns) {
  const double frac = total > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : 0.0;
  if (!based_)
    based_ = true, base_wall_ = wall, base_frac_ = frac;
  if (wall < 1.0 || (shown_ && wall - last_ < 0.2))
    return "";
  last_ = wall;
  shown_ = true;
  char text[200];
  const int n = std::snprintf(text, sizeof text, "%lld/%lld instructions (%.0f%%), simulated %s, wall %.1f s",
                              static_cast<long long>(done), static_cast<long long>(total), 100.0 * frac,
                              human_time(sim_ns).c_str(), wall);
  const double rate = wall - base_wall_ > 0 ? (frac - base_frac_) / (wall - base_wall_) : 0.0;
  if (frac >= 0.1 && wall - base_wall_ >= 1.0 && rate > 0 && n > 0 && static_cast<size_t>(n) < sizeof text)
    std::snprintf(text + n, sizeof text - static_cast<size_t>(n), ", ETA %.1f s", (1.0 - frac) / rate);
  return text;
}

const std::vector<HeadlineParameter> &headline_parameters() {
  // The parameters a performance engineer can ask a hardware or compiler change for, each made 2x better: a
  // rate or clock doubled, a latency or overhead halved (arch_params.def names and units).
  static const std::vector<HeadlineParameter> kTable = {
      {"DMA rate x2", "dma_engine_bytes_per_ns", 2.0},
      {"DMA write rate x2", "dma_engine_write_bytes_per_ns", 2.0},
      {"DMA latency /2", "dma_latency_ns", 0.5},
      {"DMA descriptor cost /2", "dma_queue_descriptor_ns", 0.5},
      {"DMA transfer overhead /2", "dma_transfer_overhead_ns", 0.5},
      {"HBM rate x2", "hbm_bytes_per_ns", 2.0},
      {"PE clock x2", "pe_ghz", 2.0},
      {"ACT clock x2", "act_ghz", 2.0},
      {"POOL clock x2", "pool_ghz", 2.0},
      {"DVE clock x2", "dve_ghz", 2.0},
      {"SP clock x2", "sp_ghz", 2.0},
  };
  return kTable;
}

std::vector<Sensitivity> sensitivity(const Kernel &k, const RunSettings &s, double base_ns,
                                     const std::function<void(size_t, size_t)> &progress) {
  const engines::ArchParams base = engines::load_arch(s.options.arch);
  const auto &table = headline_parameters();
  std::vector<Sensitivity> out;
  for (size_t i = 0; i < table.size(); ++i) {
    const HeadlineParameter &h = table[i];
    if (progress)
      progress(i, table.size());
    char value[64];
    std::snprintf(value, sizeof value, "%.15g", engines::arch_param_value(base, h.key) * h.factor);
    RunSettings r;
    r.options = s.options;
    r.options.timing_only = true;
    r.options.schedule = ScheduleMode::Auto;
    r.options.device_print = nullptr;
    r.options.progress = nullptr;
    r.options.on_event = nullptr;
    r.options.after_instruction = nullptr;
    r.options.record_dma_engine_slices = false;
    r.cores = s.cores, r.lnc = s.lnc;
    // The setting replaces the run's own value of that key, if it set one.
    engines::ArchSpec spec = engines::split_arch_spec(s.options.arch);
    spec.sets.erase(
        std::remove_if(spec.sets.begin(), spec.sets.end(), [&](const auto &kv) { return kv.first == h.key; }),
        spec.sets.end());
    spec.sets.emplace_back(h.key, engines::arch_setting_value(s.options.arch, h.key, value));
    r.options.arch = engines::arch_spec_text(spec);
    Run run = run_kernel(k, r);
    const double t = run.device ? run.device_result.total_ns : run.result.total_ns;
    out.push_back({h.label, r.options.arch, t, t > 0 ? base_ns / t : 0.0});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Sensitivity &a, const Sensitivity &b) { return a.speedup > b.speedup; });
  return out;
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
  isa::write_file_atomic(path, j.dump(1) + "\n");
}

void rethrow_as_error() {
  try {
    throw;
  } catch (const Error &) {
    throw;
  } catch (const RunCancelled &) {
    throw;
  } catch (const fs::filesystem_error &e) {
    // A file-system call on a user's path (a directory listing, a permission): the path and the OS reason.
    throw InputError({e.path1().string(), -1, "", ""}, e.code().message());
  } catch (const nlohmann::json::exception &e) {
    // A JSON value of the wrong type in a document read without a schema (a manifest entry).
    throw InputError({}, std::string("invalid JSON value: ") + e.what());
  } catch (const std::bad_alloc &) {
    throw SimulationError({}, "out of host memory");
  } catch (const std::exception &e) {
    throw SimulationError({}, std::string("internal error: ") + e.what());
  }
}

} // namespace neuronsim::sim
