// `neuronsim nki FILE.py::FUNCTION [options]`: an NKI kernel file, as published, traced and run in one
// command. The Python package traces it (`python3 -m neuronsim nki-trace`, python/neuronsim/nki/cli.py: the
// kernel called on symbolic tensors, lowered to BIR) into a temporary folder; the BIR then runs exactly as
// `neuronsim run` runs it, with every run option, the kernel named FILE.py::FUNCTION and the profile in the
// kernel file's lines (the BIR's debug information). Exit codes as `run`: 3 when the kernel cannot be traced
// (the message names its file:line).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/sim/io.hpp"

#include "cli.hpp"

namespace fs = std::filesystem;

namespace neuronsim::cli {

namespace {

const char *kNkiHelp =
    R"(usage: neuronsim nki FILE.py::FUNCTION [--input NAME=X.npy | --shape NAME=128x512[:DTYPE]]...
                     [--kwarg NAME=VALUE]... [--grid DIMS] [--emit-bir OUT.bir.json] [run options]

Runs an NKI kernel file (nki.language / nki.isa, the neuronxcc.nki or nki namespace, unmodified) on the simulator:
the kernel is traced once on symbolic tensors into BIR (docs/nki-lowering.md), then run as `neuronsim run` runs BIR.
  FILE.py::FUNCTION      the kernel (a plain function or an @nki.jit one)
  --input NAME=X.npy     data for parameter NAME; its shape and dtype come from the file
  --inputs DIR           the data of every parameter not given otherwise, as `run --inputs` reads it: rank r's
                         DIR/rank<r>/NAME.npy, else DIR/NAME.npy (several ranks: --cores N --lnc L, N / L ranks)
  --shape NAME=DIMS[:DTYPE]   a parameter by shape (128x512, dtype float32 unless given: bfloat16, float16, int32,
                         ...); its data is generated as `run` generates inputs. With --input, the dtype of the file's
                         bits (a bf16 array is held as uint16)
  --kwarg NAME=VALUE     a compile-time parameter of the function (repeatable): VALUE a Python literal (512, 0.5,
                         True, None, (128, 512), a string in quotes: NAME="'text'"); a NAME the function does not
                         take is exit 3, naming its parameters
  --grid DIMS            the launch grid kernel[...] runs with: 4x2 (the instances one after the other on one core)
                         or nc2 (an nl.nc(2) axis: 2 cores of one logical core, --lnc 2, trn2 unless --arch)
  --emit-bir FILE        also write the traced BIR JSON there
Every `neuronsim run` option applies (--arch, --set, --timing-only, --stats, --trace, --top, --why, --sensitivity,
--report, --json, --quiet, --seed, --expect, --rtol/--atol, --outdir, --save-inputs, --max-instructions, --schedule,
--device-print, --cores, --lnc); --max-instructions also bounds the loop trips the tracer unrolls and the
launch-grid instances it traces. No output may replace FILE.py or an --input (checked before tracing).
Outputs are named after the kernel's variables (`c = nl.ndarray(...)` -> c.npy). `neuronsim.nki.install()` serves the
neuronxcc.nki / nki imports when no real package of that name is importable.
exit codes: as run (0 ok, 1 outputs differ, 2 usage, 3 the kernel cannot be traced or read, 4 simulation error)
)";

// A fresh folder under the system's temporary directory, removed with what it holds when it goes out of
// scope.
class TempDir {
public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "neuronsim-nki-XXXXXX").string();
    if (!mkdtemp(t.data()))
      throw SimulationError(ErrorContext{},
                            "cannot create a temporary directory: " + std::string(std::strerror(errno)));
    path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const fs::path &path() const { return path_; }

private:
  fs::path path_;
};

// Runs the command and returns its exit code (stdout and stderr are the caller's); 4 when it dies of a
// signal.
int run_process(std::vector<std::string> words) {
  std::vector<char *> argv;
  for (auto &w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  std::cout << std::flush;
  std::cerr << std::flush;
  const pid_t pid = fork();
  if (pid < 0)
    throw SimulationError(ErrorContext{}, std::string("cannot start Python: ") + std::strerror(errno));
  if (pid == 0) {
    execvp(argv[0], argv.data());
    std::fprintf(stderr,
                 "neuronsim: nki: cannot start %s: %s (NEURONSIM_PYTHON names the Python interpreter)\n",
                 argv[0], std::strerror(errno));
    _exit(2);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw SimulationError(ErrorContext{}, std::string("waitpid: ") + std::strerror(errno));
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 4;
}

// An error about the traced BIR names the kernel as the user gave it (FILE.py::FUNCTION; the instruction's kernel
// line is in its source), never neuronsim's temporary file: the same error, the path replaced.
[[noreturn]] void rethrow_for_kernel(const Error &e, const std::string &bir, const std::string &target) {
  const auto replaced = [&](std::string s) {
    for (size_t at = 0; (at = s.find(bir, at)) != std::string::npos; at += target.size())
      s.replace(at, bir.size(), target);
    return s;
  };
  ErrorContext c = e.context();
  c.file = replaced(c.file);
  const std::string m = replaced(e.message());
  if (dynamic_cast<const UsageError *>(&e))
    throw UsageError(m);
  if (dynamic_cast<const SimulationError *>(&e))
    throw SimulationError(c, m);
  if (dynamic_cast<const SemanticError *>(&e))
    throw SemanticError(c, m);
  throw InputError(c, m);
}

std::string read_text(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream o;
  o << f.rdbuf();
  return o.str();
}

} // namespace

bool TracedNki::names_nki(const std::string &target) {
  const auto at = target.rfind("::");
  if (at == std::string::npos || at == 0 || at + 2 == target.size())
    return false;
  const std::string file = target.substr(0, at);
  return file.size() > 3 && file.compare(file.size() - 3, 3, ".py") == 0; // a missing file: the tracer says so
}

TracedNki::TracedNki(const std::string &target, const std::vector<std::string> &trace_args) : target_(target) {
  std::string t = (fs::temp_directory_path() / "neuronsim-nki-XXXXXX").string();
  if (!mkdtemp(t.data()))
    throw SimulationError(ErrorContext{}, "cannot create a temporary directory: " + std::string(std::strerror(errno)));
  dir_ = t;
  bir_ = (fs::path(dir_) / "kernel.bir.json").string();
  std::vector<std::string> words = {python_interpreter(), "-m", "neuronsim", "nki-trace", target, "-o", bir_};
  words.insert(words.end(), trace_args.begin(), trace_args.end());
  if (const int rc = run_process(words); rc != 0) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw AlreadyReported{rc}; // the tracer printed why
  }
  const std::string placement = read_text(fs::path(dir_) / "run.json");
  const auto colon = placement.find(':');
  lnc_ = colon == std::string::npos ? 1 : std::max(1, std::atoi(placement.c_str() + colon + 1));
}

TracedNki::~TracedNki() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

sim::Kernel TracedNki::load() const {
  try {
    sim::Kernel k = sim::load_kernel(bir_);
    for (auto &w : k.program.warnings)
      for (size_t at = 0; (at = w.find(k.program.file, at)) != std::string::npos; at += target_.size())
        w.replace(at, k.program.file.size(), target_);
    k.label = target_;
    k.program.file = target_;
    k.files.push_back(target_.substr(0, target_.rfind("::")));
    return k;
  } catch (const Error &e) {
    rethrow(e);
  }
}

void TracedNki::rethrow(const Error &e) const { rethrow_for_kernel(e, bir_, target_); }

int cmd_nki(const std::vector<std::string> &a) {
  std::string target, emit;
  std::vector<std::string> trace_args, run_args;
  // nki's own options, then every option of run's table forwarded to run as given: one table, so that an
  // unknown option names the nearest of both (cli.hpp).
  std::vector<Option> options = {
      {"--shape", "NAME=DIMS[:DTYPE]", "a parameter by shape",
       [&](const std::string &v) { trace_args.insert(trace_args.end(), {"--shape", v}); }},
      {"--kwarg", "NAME=VALUE", "a compile-time parameter of the function (a Python literal)",
       [&](const std::string &v) { trace_args.insert(trace_args.end(), {"--kwarg", v}); }},
      {"--grid", "DIMS", "the launch grid",
       [&](const std::string &v) { trace_args.insert(trace_args.end(), {"--grid", v}); }},
      {"--input", "NAME=X.npy", "data for parameter NAME (the tracer reads its shape, the run its data)",
       [&](const std::string &v) {
         trace_args.insert(trace_args.end(), {"--input", v});
         run_args.insert(run_args.end(), {"--input", v});
       }},
      {"--emit-bir", "FILE", "also write the traced BIR JSON there",
       [&](const std::string &v) { emit = need_path("--emit-bir", v); }},
  };
  for (Option row : run_option_rows()) {
    if (row.name == "--input")
      continue;
    if (row.name == "--inputs") {  // the run reads each rank's data, the tracer rank 0's shapes (docs/multicore.md)
      row.apply = [&](const std::string &v) {
        trace_args.insert(trace_args.end(), {"--inputs", v});
        run_args.insert(run_args.end(), {"--inputs", v});
      };
      options.push_back(std::move(row));
      continue;
    }
    const bool flag = row.value.empty();
    row.apply = [&run_args, name = row.name, flag](const std::string &v) {
      run_args.push_back(name);
      if (!flag)
        run_args.push_back(v);
    };
    options.push_back(std::move(row));
  }
  if (!parse_options(a, options, [&](const std::string &o) {
        if (o.empty())
          throw UsageError("FILE.py::FUNCTION is empty");
        if (!target.empty())
          throw UsageError("more than one FILE.py::FUNCTION given ('" + target + "', '" + o + "')");
        target = o;
      })) {
    std::cout << kNkiHelp;
    return 0;
  }
  if (target.empty())
    throw UsageError("nki needs FILE.py::FUNCTION (try neuronsim nki --help)");
  const std::string py_file = target.substr(0, target.rfind("::"));
  // Before any work: the kernel file and every --input are regular files (a FIFO would block the tracer's read),
  // and the outputs known now (--emit-bir, --stats, --trace, --report, --device-print) pass the rule of every
  // output (sim::prepare_output_paths): none may replace the kernel file or an input, a FIFO, socket or directory
  // is refused. The run checks its --outdir the same way once the trace names its outputs.
  std::vector<std::string> reads = {py_file}, outs, input_args;
  for (size_t i = 0; i + 1 < trace_args.size(); i += 2) {
    const std::string &v = trace_args[i + 1];
    const auto eq = v.find('=');
    if (trace_args[i] != "--input" || eq == std::string::npos || eq + 1 == v.size())
      continue; // not NAME=FILE: the tracer's usage error says so
    input_args.push_back(v);
    reads.push_back(v.substr(eq + 1));
  }
  // The architecture the run takes is the one the kernel is traced for (nisa.get_nc_version()).
  const auto arch_at = std::find(run_args.begin(), run_args.end(), "--arch");
  if (arch_at != run_args.end() && arch_at + 1 != run_args.end())
    trace_args.insert(trace_args.end(), {"--arch", *(arch_at + 1)});
  std::string max_instructions;
  for (size_t i = 0; i + 1 < run_args.size(); ++i) {
    const std::string &o = run_args[i];
    if (o == "--stats" || o == "--trace" || o == "--report" || o == "--device-print")
      outs.push_back(run_args[i + 1]);
    if (o == "--max-instructions")
      max_instructions = run_args[i + 1];
  }
  if (!emit.empty())
    outs.push_back(emit);
  sim::prepare_output_paths({}, outs, reads);
  if (target.rfind("::") != std::string::npos && !py_file.empty())
    isa::require_regular_file(py_file, "kernel file");
  for (const auto &v : input_args)
    isa::require_regular_file(v.substr(v.find('=') + 1), "--input " + v.substr(0, v.find('=')));
  TempDir tmp;
  const std::string bir = (tmp.path() / "kernel.bir.json").string();
  std::vector<std::string> words = {python_interpreter(), "-m", "neuronsim", "nki-trace", target, "-o", bir};
  words.insert(words.end(), trace_args.begin(), trace_args.end());
  // Unrolled loops and launch-grid instances are counted against the run's budget while tracing.
  if (!max_instructions.empty())
    words.insert(words.end(), {"--max-instructions", max_instructions});
  const int rc = run_process(words);
  if (rc != 0)
    return rc; // the tracer printed why
  if (!emit.empty()) {
    isa::AtomicFile f(emit);
    f.write(read_text(bir));
    f.commit();
  }
  // The placement the trace asks for (run.json): an nl.nc(n) launch grid runs on n cores of one logical core,
  // on trn2 unless --arch says otherwise; --cores / --lnc given on the command line win.
  const auto given = [&](const char *opt) {
    return std::find(run_args.begin(), run_args.end(), opt) != run_args.end();
  };
  const std::string placement = read_text(tmp.path() / "run.json");
  const auto colon = placement.find(':');
  const int lnc = colon == std::string::npos ? 1 : std::atoi(placement.c_str() + colon + 1);
  if (lnc > 1 && !given("--lnc") && !given("--cores")) {
    run_args.insert(run_args.end(), {"--lnc", std::to_string(lnc)});
    if (!given("--arch"))
      run_args.insert(run_args.end(), {"--arch", "trn2"});
  }
  std::vector<std::string> args = {bir};
  // nl.shared_constant data the tracer wrote beside the BIR (<name>.const.npy): inputs of the run (a
  // timing-only run takes none).
  if (std::find(run_args.begin(), run_args.end(), "--timing-only") == run_args.end()) {
    std::vector<std::string> consts;
    for (const auto &e : fs::directory_iterator(tmp.path())) {
      const std::string f = e.path().filename().string();
      const std::string suffix = ".const.npy";
      if (f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0)
        consts.push_back(f.substr(0, f.size() - suffix.size()) + "=" + e.path().string());
    }
    std::sort(consts.begin(), consts.end());
    for (const auto &c : consts)
      args.insert(args.end(), {"--input", c});
  }
  args.insert(args.end(), run_args.begin(), run_args.end());
  RunFrom from;
  from.command = "nki";
  from.label = target;
  from.command_line = {"neuronsim", "nki"};
  from.command_line.insert(from.command_line.end(), a.begin(), a.end());
  from.sources = {py_file};
  try {
    return cmd_run(args, from);
  } catch (const Error &e) {
    rethrow_for_kernel(e, bir, target);
  }
}

} // namespace neuronsim::cli
