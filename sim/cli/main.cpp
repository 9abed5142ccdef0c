// The `neuronsim` command (DESIGN.md section 5). Calls public headers only.
// Exit codes: 0 success; 1 outputs differ from --expect / validation divergence; 2 usage; 3 invalid input;
// 4 simulation error.
// Each subcommand lives in its own file (cli.hpp); this one holds the overall help and the dispatch.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <systemc>
#include <vector>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/names.hpp"
#include "neuronsim/sim/front_end_errors.hpp"
#include "neuronsim/sim/version.hpp"

#include "cli.hpp"

using namespace neuronsim;
using namespace neuronsim::cli;

namespace {

// SystemC prints its banner from its own main() before sc_main; a simulator's output should be its own.
const bool kQuietSystemC = [] { return setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0; }();

const char *kHelp = R"(neuronsim - cycle-level simulator of an AWS NeuronCore (PE, ACT, POOL, DVE, SP)

usage:
  neuronsim run [KERNEL] [options]    run a BIR JSON kernel (file, or a workload directory)
  neuronsim run DIR [options]         run the bundle streams of DIR (written by `neuronsim encode`)
  neuronsim encode KERNEL --gen v2|v3|v4 -o DIR [--cores N --lnc L]   BIR -> per-engine 64-byte bundle streams
                                      (--cores: one set per core, DIR/core<i>)
  neuronsim disasm FILE_OR_DIR [--gen v2|v3|v4]    bundles -> one readable line per bundle
  neuronsim validate --bir KERNEL --bundles DIR [options]   run both, compare, lint the streams
  neuronsim isa [--json | --keys | --roles | --explain TYPE]
                                      print every ISA table the simulator knows (--keys: each instruction
                                      type's BIR JSON keys, required and optional; --roles: what each ins[i] /
                                      outs[i] is; --explain TYPE: one type in full; docs/bir-format.md)
  neuronsim arch --list | --keys | --show NAME   the built-in architectures; the parameters --set takes;
                                      one's JSON (a start for --arch FILE.json)
  neuronsim sweep KERNEL_OR_DIR... [--arch trn1,trn2,trn3] [--scheduler tcp://HOST:PORT] [--workers N]
                  [-o RESULTS.csv] [--resume] [--rank-by COLUMN] [--numeric]
                                      one run per (kernel, arch) on Dask: a local cluster, or a scheduler's
                                      workers; a row of results per run (neuronsim sweep --help)
  neuronsim nki FILE.py::FUNCTION [--input NAME=X.npy | --shape NAME=128x512[:DTYPE]]... [--kwarg NAME=VALUE]...
                  [--emit-bir FILE] [run options]   an NKI kernel file traced to BIR and run (neuronsim nki --help)
  neuronsim tune FILE.py::FUNCTION --param NAME=V1,V2,... [--reference FILE.py::FUNCTION] [--out DIR] [--resume]
                                      an NKI kernel's parameters searched on Dask: every candidate timed (and
                                      checked), ranked (neuronsim tune --help; docs/tuning.md)
  neuronsim compare A B [--fail-if-slower PCT] [--top N] [--arch NAME|FILE.json] [--set KEY=VALUE]
                  [--arch-b NAME|FILE.json] [--set-b KEY=VALUE]
                                      two --stats files (or two kernels, run timing-only; or one kernel on two
                                      machines) side by side
  neuronsim report STATS.json [TRACE.json] | RESULTS.csv -o FILE.html
                                      one self-contained HTML page of a run or a sweep (docs/profiling.md)
  neuronsim --version | --help

Each command's options: neuronsim COMMAND --help (neuronsim run --help, ...).

`neuronsim sweep` and `neuronsim tune` are the Python package's (Dask): they run `python3 -m neuronsim sweep ARGS`
(tune ARGS) with the interpreter the package was built for (NEURONSIM_PYTHON overrides it), the build's package first
on PYTHONPATH. They need Debian's python3-distributed.

exit codes: 0 ok, 1 outputs differ, 2 usage, 3 invalid input, 4 simulation error (deadlock, fault)
)";

// stdout is an output like any file: a write error there (a full disk, /dev/full, a closed pipe) is an error
// naming the stream, never an exit 0 with the output lost. std::cout buffers, so the error shows at the
// flush.
int finish_stdout(int code) {
  errno = 0;
  std::cout.flush();
  if (std::cout.good() && std::fflush(stdout) == 0)
    return code;
  const int err = errno;
  if (code != 0)
    return code; // the command's own error was already reported
  std::cerr << "neuronsim: stdout: write failed"
            << (err ? std::string(": ") + std::strerror(err) : std::string())
            << " (the command's output is incomplete)\n";
  return 3;
}

int run_command(const std::vector<std::string> &args);

} // namespace

int sc_main(int argc, char **argv) {
  // SIGPIPE would end the process silently on a closed pipe (`neuronsim isa --json | head -1`): the write
  // error is reported instead.
  std::signal(SIGPIPE, SIG_IGN);
  return finish_stdout(run_command(std::vector<std::string>(argv + 1, argv + argc)));
}

namespace {

int run_command(const std::vector<std::string> &args) {
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      std::cout << kHelp;
      return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version") {
      std::cout << "neuronsim " << sim::version() << "\n";
      return 0;
    }
    std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "run") return cmd_run(rest, RunFrom{});
    if (args[0] == "nki") return cmd_nki(rest);
    if (args[0] == "isa") return cmd_isa(rest);
    if (args[0] == "arch") return cmd_arch(rest);
    if (args[0] == "compare") return cmd_compare(rest);
    if (args[0] == "encode") return cmd_encode(rest);
    if (args[0] == "disasm") return cmd_disasm(rest);
    if (args[0] == "validate") return cmd_validate(rest);
    if (args[0] == "sweep") return cmd_sweep(rest);
    if (args[0] == "tune") return cmd_tune(rest);
    if (args[0] == "report")
      return cmd_report(rest);
    throw UsageError("unknown command '" + args[0] + "'" +
                     isa::did_you_mean(args[0], {"run", "nki", "isa", "arch", "compare", "encode", "disasm",
                                                 "validate", "sweep", "tune", "report"}) +
                     " (try --help)");
  } catch (const Error &e) {  // UsageError included (exit 2)
    std::cerr << "neuronsim: " << sim::one_line(e.what()) << "\n";
    return e.exit_code();
  } catch (const std::exception &) {
    // Any other failure as the library reports it (sim::rethrow_as_error): a file-system error on a user's path
    // or a JSON value of the wrong type (exit 3), out of host memory or an internal error (exit 4).
    try {
      sim::rethrow_as_error();
    } catch (const Error &e) {
      std::cerr << "neuronsim: " << sim::one_line(e.what()) << "\n";
      return e.exit_code();
    } catch (const std::exception &e) {
      std::cerr << "neuronsim: internal error: " << sim::one_line(e.what()) << "\n";
      return 4;
    }
  }
}

} // namespace
