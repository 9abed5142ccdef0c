// What the files of the `neuronsim` command share (sim/cli/): the argument parsers, the option tables of the
// subcommands and the subcommands themselves, one file per group; main.cpp only dispatches. Calls public
// headers only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "neuronsim/error.hpp"
#include "neuronsim/isa/program.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/kernel.hpp"

namespace neuronsim::cli {

// The value after option a[i] (i moves onto it); UsageError "option X needs a value" when there is none.
std::string need_value(const std::vector<std::string> &a, size_t &i);
// A number as the option's value; UsageError naming the option otherwise.
double parse_double(const std::string &opt, const std::string &v);
// --rtol / --atol / --fail-if-slower: a finite number >= 0 (a NaN tolerance would pass every comparison).
double parse_tolerance(const std::string &opt, const std::string &v);
// --top N and the like: a whole number from 1 to 1000000.
int parse_count(const std::string &opt, const std::string &v);
// --cores / --lnc: a whole number from 1 to sim::kMaxCores.
int parse_cores(const std::string &opt, const std::string &v);
// A path-valued option's value: an empty one is a usage error, not "the current directory".
std::string need_path(const std::string &opt, const std::string &v);
// --input NAME=FILE.npy: both parts non-empty, each NAME once.
void add_input(sim::InputSpec &spec, const std::string &v);
// What the reader ignored (unknown keys), one line each on stderr before the run.
void print_warnings(const isa::Program &p);

// One option of a subcommand's table: its spelling, the name of its value ("" for a flag), one help line, and
// what it does with the value. A subcommand's options are one table, so that parsing, the "did you mean" of
// an unknown option and the option list of its --help come from the same rows.
struct Option {
  std::string name;  // "--cores"
  std::string value; // "N"; "" for a flag
  std::string help;  // one line
  std::function<void(const std::string &value)> apply;
};
// Parses `a` by `table`: each option applied in command-line order, every other word handed to `positional`.
// An unknown option is a UsageError naming the nearest one of the table; "--help" / "-h" returns false at
// once (the caller prints its help).
bool parse_options(const std::vector<std::string> &a, const std::vector<Option> &table,
                   const std::function<void(const std::string &)> &positional);
// The table as --help lists it: "  --cores N              <help>", one line each.
std::string options_help(const std::vector<Option> &table);

// `neuronsim run` (run.cpp) and what calls it for another command: `neuronsim nki` runs the BIR it traced as
// `run` would, naming the kernel FILE.py::FUNCTION and the command `nki`.
struct RunFrom {
  std::string command = "run";             // in the run header, "neuronsim <command>: <label>"
  std::string label;                       // the kernel's name in the header and the stats (default: the file)
  std::vector<std::string> command_line;   // as the stats record it (default: neuronsim run ARGS)
  std::vector<std::string> sources;        // files the kernel was made from (nki's FILE.py): no output replaces one
};
int cmd_run(const std::vector<std::string> &a, const RunFrom &from);
// run's option table (run.cpp) without its actions: its names, values and help, for `nki`, which forwards
// them to run.
std::vector<Option> run_option_rows();
// `neuronsim nki FILE.py::FUNCTION [options]` (nki.cpp): an NKI kernel traced by the Python package, then run.
int cmd_nki(const std::vector<std::string> &a);
// An NKI kernel file traced to BIR by the Python package into a temporary folder (removed with it), as `neuronsim
// nki` traces it: for the commands that take FILE.py::FUNCTION where they take a kernel (compare). trace_args: the
// tracer's options (--shape, --input, --kwarg, --grid, --arch). When the tracer fails it has printed why:
// AlreadyReported carries its exit code.
struct AlreadyReported {
  int code;
};
class TracedNki {
public:
  TracedNki(const std::string &target, const std::vector<std::string> &trace_args);
  ~TracedNki();
  TracedNki(const TracedNki &) = delete;
  TracedNki &operator=(const TracedNki &) = delete;
  // FILE.py::FUNCTION given as a kernel (the tracer refuses a FILE.py that is not there).
  static bool names_nki(const std::string &target);
  const std::string &bir() const { return bir_; }
  int lnc() const { return lnc_; }            // the cores of an nl.nc(n) launch grid (1 without)
  sim::Kernel load() const;                   // the traced kernel, named FILE.py::FUNCTION, its file a source
  [[noreturn]] void rethrow(const Error &e) const;  // the same error, naming FILE.py::FUNCTION, not the BIR

private:
  std::string target_, dir_, bir_;
  int lnc_ = 1;
};
// The interpreter of the Python package (NEURONSIM_PYTHON overrides the build's), this build's package put first
// on PYTHONPATH (sweep.cpp); UsageError when the build has no Python package.
std::string python_interpreter();

// The other subcommands, each returning its exit code: `neuronsim compare A B` (compare.cpp), `neuronsim
// arch` (arch.cpp), `neuronsim isa` (isa.cpp), `neuronsim encode`, `disasm` and `validate` (bundles.cpp),
// `neuronsim report` (report.cpp) and `neuronsim sweep` (sweep.cpp: it execs the Python package's sweep and
// returns only when the interpreter cannot be started).
int cmd_compare(const std::vector<std::string> &a);
int cmd_arch(const std::vector<std::string> &a);
int cmd_isa(const std::vector<std::string> &a);
int cmd_encode(const std::vector<std::string> &a);
int cmd_disasm(const std::vector<std::string> &a);
int cmd_validate(const std::vector<std::string> &a);
int cmd_report(const std::vector<std::string> &a);
int cmd_sweep(const std::vector<std::string> &a);
int cmd_tune(const std::vector<std::string> &a);

} // namespace neuronsim::cli
