// The extension of the `neuronsim` Python package (project issue 15), neuronsim._core, re-exported by
// python/neuronsim/__init__.py: run kernels on numpy arrays and get outputs, statistics
// and the timeline, in process. The functions are in python/run.cpp and python/tools.cpp; docs/python.md is
// the guide.
#include <cstdlib>
#include <systemc>

#include <pybind11/stl.h>

#include "api.hpp"
#include "float_dtypes.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "convert.hpp"
#include "errors.hpp"

#include "neuronsim/isa/names.hpp"
#include "neuronsim/sim/version.hpp"

namespace py = pybind11;
using namespace neuronsim::python;

// libsystemc's main() calls sc_main, so the shared library refers to it and an extension that links it must
// define it to load (Python resolves every symbol at import). It is never called: Python has its own main().
extern "C" __attribute__((visibility("default"))) int sc_main(int, char **) {
  return 0;
}

namespace {

const char *kModuleDoc = R"(neuronsim: a cycle-level simulator of an AWS NeuronCore, in process.

    import neuronsim, numpy as np
    r = neuronsim.run("workloads/kernel1", {"a": np.ones((10, 10), np.float32)})
    r.outputs["b"], r.stats["engines"]["DVE"], r.total_ns

run() takes a BIR JSON file, a workload folder (one *.bir.json, inputs/, expected/, tolerance.json) or a bundle
stream folder written by encode(), exactly as `neuronsim run` does, and gives the same outputs and statistics.
bf16 and fp8 tensors are held as their raw bits (uint16 / uint8): to_float32() and from_float32() convert.
Errors raise neuronsim.InvalidInput, SimulationError or UsageError (all neuronsim.Error) with the CLI's messages.
sweep() runs many kernels on many architectures on a Dask cluster (local, or a scheduler's address).
)";

const char *kRunDoc = R"(Runs a kernel and returns a Result.

kernel       a BIR JSON path, a workload folder, a bundle-stream folder, or a Kernel from load()
inputs       dict of input tensor name -> numpy array (under the rules of a .npy --input: bf16/fp8 as
             uint16/uint8 raw bits) or .npy path, or a folder of <name>.npy. Inputs not given come from the
             workload's inputs/, else are generated deterministically (floats uniform in [-1, 1), seeded by the
             tensor name). With several ranks (cores / lnc > 1), a dict or folder is every rank's (a folder's
             rank<r>/ subfolders hold rank r's own files), or a list of them, one per rank.
arch         "trn1", "trn2" or "trn3", or an architecture file (a path ending in .json or holding a '/', str or
             os.PathLike; `neuronsim arch --show trn2` prints one to start from); None: trn1, or the
             generation of bundle streams
timing_only  the timeline and statistics only: no numerics, no outputs
expect       dict of output name -> expected array (only those are compared), or a folder of <name>.npy (every
             output compared); None: the workload's expected/ when it has one. Result.mismatches lists the outputs
             outside |got - want| <= atol + rtol * |want| (empty when all agree).
rtol, atol   the tolerance; neither given: the workload's tolerance.json, else 1e-5 / 1e-6
kernel_sim   the program that runs CustomOp / BIRKernel instructions (as --kernel-sim)
trace        write the Perfetto timeline (as --trace) to this path; Result.trace_path names it
max_instructions  the run stops with an error naming the instruction when it would execute more dynamic
             instructions or loop trips than this (as --max-instructions; default 1e9)
cores, lnc   NeuronCores in the run and physical cores per logical core (as --cores / --lnc; docs/multicore.md
             ; None: the workload's run.json, else what the kernel's replica groups, peers and
             ShardIDKind ub name, else 1): total_ns and dynamic_instructions are then the device's, stats holds
             "cores" (one document per core) and "device". Each rank has its own DRAM: with several ranks
             every output is the ranks' arrays stacked, outputs["y"][r] rank r's; an expect folder's rank<r>/
             subfolders hold rank r's expected outputs, and mismatches name "rank<r>/<tensor>"
schedule     "auto" (default), "whole" or "streamed", as --schedule (docs/cli.md "Long kernels"): how the run holds
             its dynamic schedule; every result is the same either way. auto streams a timing-only run without
             a trace of a program without data-dependent branches, so that long kernels run in bounded memory
strict       an output element no instruction wrote raises SimulationError (as --strict); otherwise it is a
             UserWarning, and Result.unwritten counts them per output
set          dict of architecture parameter -> value set over arch (as --set KEY=VALUE; `neuronsim arch
             --keys`): {"dma_latency_ns": 425} runs on "trn1+{dma_latency_ns=425}", the name Result.arch and stats give
seed         seed of the generated inputs (as --seed; default 0, the documented draw)
save_inputs  a folder: every input as used (given or generated) written there as <tensor>.npy before the run
             (as --save-inputs; rank r's under rank<r>/ with several ranks); Result.saved_inputs lists the files
progress     a callable progress(done, total, simulated_ns), called about five times a second while the kernel
             runs (done / total: engine instructions issued / in the run); an exception it raises stops the
             run and is raised by run(). None: on a terminal, the CLI's progress line on stderr for runs over 1 s
report       write the run's HTML report (as --report; docs/profiling.md) to this path, timeline included
sanitize     check the run for uninitialized reads, loop-carried dependencies of NKI affine_range loops and
             races (as --sanitize; docs/sanitizer.md): Result.findings lists what it found (empty: nothing),
             as the stats' "sanitizer" list; None when not sanitizing

The GIL is released while the kernel runs; Ctrl-C stops the run with KeyboardInterrupt.

Example:
    >>> import neuronsim
    >>> r = neuronsim.run("workloads/kernel1", timing_only=True, arch="trn2", set={"dma_latency_ns": 425})
    >>> r.arch, r.verdict
    ('trn2+{dma_latency_ns=425}', 'DMA latency-bound (...)')
    >>> print(r.summary())       # the CLI's summary: per-engine table, critical path, verdict)";

std::string tensor_repr(const TensorInfo &t) {
  std::string shape;
  for (auto s : t.shape)
    shape += (shape.empty() ? "" : ", ") + text_of(s);
  if (t.shape.size() == 1)
    shape += ",";
  return "TensorInfo(name='" + t.name + "', shape=(" + shape + "), dtype=" + text_of(t.dtype) +
         ", bir_dtype='" + t.bir_dtype + "', kind='" + t.kind + "', memory='" + t.memory + "')";
}

} // namespace

PYBIND11_MODULE(_core, m) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0); // a simulator's output should be its own
  try {
    py::module_::import("numpy");  // arrays in and out, and the dtypes of load()
  } catch (py::error_already_set &) {
    throw py::import_error("neuronsim needs numpy: apt install python3-numpy (Debian's python3), or pip install "
                           "numpy in a virtual environment");
  }
  m.doc() = kModuleDoc;
  m.attr("__version__") = neuronsim::sim::version();
  // The limits the NKI front end bounds its tracing by, as the run and the BIR reader bound theirs: the default
  // max_instructions (docs/bad-input.md "Limits") and the most instructions a BIR program holds.
  m.attr("DEFAULT_MAX_INSTRUCTIONS") = neuronsim::sim::kDefaultMaxInstructions;
  m.attr("MAX_STATIC_INSTRUCTIONS") = neuronsim::isa::kMaxStaticInstructions;
  register_errors(m);

  py::class_<TensorInfo>(m, "TensorInfo", "A tensor of a kernel.")
      .def_readonly("name", &TensorInfo::name)
      .def_readonly("shape", &TensorInfo::shape)
      .def_readonly("dtype", &TensorInfo::dtype,
                    "the numpy dtype its arrays have (bf16 -> uint16, fp8 -> uint8)")
      .def_readonly("bir_dtype", &TensorInfo::bir_dtype, "its dtype in the BIR: 'bfloat16', 'float32', ...")
      .def_readonly("kind", &TensorInfo::kind, "'ExternalInput', 'ExternalOutput', 'Internal', ...")
      .def_readonly("memory", &TensorInfo::memory, "'DRAM', 'SB' or 'PSUM'")
      .def("__repr__", &tensor_repr);

  py::class_<KernelInfo>(m, "Kernel", "A kernel read by load(); run() takes it in place of a path.")
      .def_property_readonly("path", [](const KernelInfo &k) { return k.kernel->path; })
      .def_property_readonly(
          "label", [](const KernelInfo &k) { return k.kernel->label; },
          "how runs name it: the BIR file, or 'DIR (bundle streams, v3)'")
      .def_property_readonly(
          "streams",
          [](const KernelInfo &k) -> py::object {
            if (!k.kernel->streams)
              return py::none();
            return py::str(neuronsim::isa::core_gen_name(*k.kernel->streams));
          },
          "the generation of a bundle-stream folder ('v2', 'v3', 'v4'), else None")
      .def_property_readonly(
          "inputs", [](const KernelInfo &k) { return k.tensors(true, false); },
          "the input tensors run() fills (list of TensorInfo)")
      .def_property_readonly(
          "outputs", [](const KernelInfo &k) { return k.tensors(false, true); },
          "the output tensors (list of TensorInfo)")
      .def_property_readonly(
          "tensors", [](const KernelInfo &k) { return k.tensors(false, false); },
          "every tensor, SBUF and PSUM ones included")
      .def_property_readonly("instructions", &KernelInfo::instructions,
                             "static instructions by type: {'TensorScalarPtr': 1, ...}")
      .def_property_readonly(
          "dynamic_instructions", [](const KernelInfo &k) { return k.kernel->program.dynamic_count(); },
          "instructions a run executes (loops unrolled)")
      .def("__repr__", [](const KernelInfo &k) {
        return "<neuronsim.Kernel " + k.kernel->label + ": " +
               std::to_string(k.kernel->program.insts.size()) + " instructions>";
      });

  py::class_<MismatchInfo>(m, "Mismatch", "An output outside the tolerance: its worst element.")
      .def_readonly("tensor", &MismatchInfo::tensor)
      .def_readonly("index", &MismatchInfo::index,
                    "flat index of the worst element; -1 for a missing tensor or a "
                    "shape error (see message)")
      .def_readonly("got", &MismatchInfo::got)
      .def_readonly("want", &MismatchInfo::want)
      .def_readonly("message", &MismatchInfo::message)
      .def("__str__", [](const MismatchInfo &x) { return x.line; })
      .def("__repr__", [](const MismatchInfo &x) { return "<neuronsim.Mismatch " + x.line + ">"; });

  py::class_<Result>(m, "Result", "What run() returns.")
      .def_readonly("outputs", &Result::outputs, "output name -> numpy array (empty after a timing-only run)")
      .def_property_readonly("stats", &result_stats, "the statistics, as `neuronsim run --stats` writes them")
      .def_readonly("total_ns", &Result::total_ns, "simulated time until the last result is visible, ns")
      .def_readonly("trace_path", &Result::trace_path,
                    "where the Perfetto timeline was written (trace=), or None")
      .def_readonly("mismatches", &Result::mismatches,
                    "when outputs were compared: the list of Mismatch (empty: all agree); else None")
      .def_readonly("arch", &Result::arch)
      .def_readonly("kernel", &Result::kernel)
      .def_readonly("dynamic_instructions", &Result::dynamic_instructions)
      .def_readonly("device_prints", &Result::device_prints, "DevicePrint lines, in order")
      .def_readonly("unwritten", &Result::unwritten,
                    "output name -> elements no instruction wrote (they hold the 0xFF fill); empty when none")
      .def_property_readonly(
          "ok", [](const Result &r) { return r.mismatches.is_none() || py::len(r.mismatches) == 0; },
          "no mismatch (True when nothing was compared)")
      .def_readonly("saved_inputs", &Result::saved_inputs, "the files save_inputs= wrote, in order")
      .def_readonly("findings", &Result::findings,
                    "a sanitized run's findings (sanitize=True; docs/sanitizer.md): a list of dicts with the keys "
                    "of the\nstats' \"sanitizer\" list, empty when it found nothing; None when not sanitizing")
      .def_readonly("finding_lines", &Result::finding_lines,
                    "the findings as the CLI prints them on stderr, one \"sanitizer: KIND: ...\" line each")
      .def(
          "summary", [](const Result &r) { return r.summary_text; },
          "The run's summary as `neuronsim run` prints it: simulated time, a line per engine and DMA queue, "
          "the\n"
          "critical path's shares, the bottleneck and the verdict.\n\nExample:\n"
          "    >>> print(neuronsim.run(\"workloads/kernel1\", timing_only=True).summary())")
      .def(
          "top",
          [](const Result &r, int n) {
            py::list out;
            if (n < 0)
              throw neuronsim::UsageError("top(n) needs n >= 0, got " + std::to_string(n));
            const py::dict stats = result_stats(r);
            const py::dict profile = stats.contains("profile") ? py::dict(stats["profile"]) : py::dict();
            if (!profile.contains("critical_path"))
              return out;
            const py::list rows = py::dict(profile["critical_path"])["instructions"];
            for (size_t i = 0; i < rows.size() && static_cast<int>(i) < n; ++i)
              out.append(rows[i]);
            return out;
          },
          "The n static instructions that hold the critical path longest (as --top N), each the stats' "
          "profile\n"
          "row: name, opcode, engine, file/line, executions, busy_ns, wait_ns, "
          "critical_path_ns.\n\nExample:\n"
          "    >>> [(x[\"name\"], x[\"critical_path_ns\"]) for x in r.top(3)]",
          py::arg("n") = 10)
      .def_property_readonly(
          "verdict",
          [](const Result &r) { return r.verdict; },
          "the run's verdict, e.g. 'DMA latency-bound (fixed latency 64% of DMA critical time)' (the stats'\n"
          "analysis.verdict; docs/profiling.md)")
      .def("report", &write_report,
           "Writes the run's HTML report (docs/profiling.md): verdict, engine timeline (from the run's "
           "trace=\n"
           "file, when it wrote one; run(report=...) always has it), busy / wait / idle bars, critical path, "
           "top\n"
           "instructions. One self-contained file: no network.\n\nExample:\n"
           "    >>> neuronsim.run(\"workloads/kernel1\", timing_only=True, "
           "trace=\"t.json\").report(\"k1.html\")",
           py::arg("path"))
      .def("__repr__", [](const Result &r) {
        std::string outs;
        for (const auto &[name, a] : r.outputs)
          outs += (outs.empty() ? "" : ", ") + text_of(name);
        return "<neuronsim.Result " + r.kernel + " on " + r.arch + ": " + std::to_string(r.total_ns) +
               " ns, outputs [" + outs + "]>";
      });

  py::class_<Report>(m, "Report", "What validate() returns: agreement, or the first divergence.")
      .def_property_readonly("ok", [](const Report &r) { return r.report.agree; })
      .def_property_readonly(
          "summary", [](const Report &r) { return r.report.summary; },
          "one line: 'validate: OK ...' or 'validate: DIFFER: <first problem>'")
      .def_property_readonly(
          "divergence",
          [](const Report &r) -> py::object {
            if (r.report.divergence.empty())
              return py::none();
            return py::str(r.report.divergence);
          },
          "the first instruction (BIR order) or output whose data differ, or None")
      .def_property_readonly("lint", [](const Report &r) { return r.report.lint; })
      .def_property_readonly("lint_errors", [](const Report &r) { return r.report.lint_errors; })
      .def_property_readonly("notes", [](const Report &r) { return r.report.notes; })
      .def("__bool__", [](const Report &r) { return r.report.agree; })
      .def(
          "__str__", [](const Report &r) { return neuronsim::sim::report_text(r.report); },
          "the report as `neuronsim validate` prints it")
      .def("__repr__", [](const Report &r) { return "<neuronsim.Report " + r.report.summary + ">"; });

  m.def("run", &run, kRunDoc, py::arg("kernel"), py::arg("inputs") = py::none(), py::kw_only(),
        py::arg("arch") = py::none(), py::arg("timing_only") = false, py::arg("expect") = py::none(),
        py::arg("rtol") = py::none(), py::arg("atol") = py::none(), py::arg("kernel_sim") = py::none(),
        py::arg("trace") = py::none(), py::arg("max_instructions") = neuronsim::sim::kDefaultMaxInstructions,
        py::arg("cores") = py::none(), py::arg("lnc") = py::none(), py::arg("schedule") = "auto",
        py::arg("strict") = false, py::arg("set") = py::none(), py::arg("seed") = 0,
        py::arg("save_inputs") = py::none(), py::arg("progress") = py::none(), py::arg("report") = py::none(),
        py::arg("sanitize") = false);
  m.def(
      "did_you_mean",
      [](const std::string &given, const std::vector<std::string> &candidates) {
        return neuronsim::isa::did_you_mean(given, candidates);
      },
      "\" (did you mean 'X'?)\" for the candidate nearest to `given` (case-insensitive, then edit distance), "
      "or \"\": "
      "the\nrule of every 'unknown name' message (isa/names.hpp).",
      py::arg("given"), py::arg("candidates"));
  m.def("run_config", &run_config,
        "A workload folder's run.json as a dict ({} when it has none): cores, lnc, arch, rtol, atol, checked "
        "as a run\nchecks them (docs/bad-input.md).\n\nExample:\n"
        "    >>> neuronsim.run_config(\"workloads/multicore/tp_mlp_4ranks\")\n"
        "    {'cores': 4, 'lnc': 1, 'arch': 'trn2'}",
        py::arg("kernel"));
  m.def("output_kind", &output_kind,
        "What an output path names, under the rule of every output neuronsim writes: 'absent', 'regular' "
        "(replaced "
        "whole)\nor 'device' (written in place); InvalidInput for a FIFO, socket, block device or directory.",
        py::arg("path"));
  m.def("check_output_paths", &check_output_paths,
        "The rule of every output neuronsim writes, for the package's own writers: each of outputs may be\n"
        "written (a regular file or a character device, its folder there and writable) and is none of inputs\n"
        "(the files the same run reads) nor another output; InvalidInput naming the path otherwise.",
        py::arg("outputs"), py::arg("inputs") = py::none());
  m.def("write_output", &write_output,
        "check_output_paths([path], inputs), then text written to path whole (a temporary renamed into place;\n"
        "a device written in place, every write error reported as InvalidInput naming the path).",
        py::arg("path"), py::arg("text"), py::arg("inputs") = py::none());
  m.def("load", &load,
        "Reads a kernel (BIR JSON path, workload folder, bundle-stream folder) into a Kernel.\n\nExample:\n"
        "    >>> k = neuronsim.load(\"workloads/kernel1\")\n    >>> [t.name for t in k.inputs]\n    ['a']",
        py::arg("kernel"));
  m.def(
      "arch_params", &arch_params,
      "The parameters of an architecture: a built-in name ('trn2') or an architecture file (a path ending "
      "in .json\nor holding a '/'), checked as --arch checks it, as {'name': ..., '<key>': value, ...} "
      "(the keys of\narch_params.def; `neuronsim arch --show NAME` prints them with their sources). Settings "
      "as\n\"trn2+{dma_latency_ns=425}\" are applied.\n\nExample:\n"
      "    >>> neuronsim.arch_params(\"trn2\")[\"dma_latency_ns\"]\n    850.0",
      py::arg("arch"));
  m.def("isa", &isa,
        "Every ISA table the simulator knows: the `neuronsim isa --json` document as a dict.\n\nExample:\n"
        "    >>> len(neuronsim.isa()[\"instruction_types\"])");
  m.def("encode", &encode,
        "Lowers a BIR kernel and encodes it as 64-byte bundle streams for gen 'v2', 'v3' or 'v4' (as "
        "`neuronsim\n"
        "encode`): returns {'manifest.json': bytes, '<engine>.bin': bytes, ...}. arch: the architecture "
        "lowered for\n"
        "(default: the generation's). outdir: also write the files there, as the CLI does. cores, lnc: as "
        "`encode --cores N\n"
        "--lnc L`, one bundle set per physical core i (shard i % lnc, rank i // lnc): {'cores.json': bytes,\n"
        "'core0/manifest.json': bytes, 'core0/<engine>.bin': bytes, ..., 'core<N-1>/...'} (lnc alone: that "
        "many "
        "cores).\n\nExample:\n    >>> files = neuronsim.encode(\"workloads/kernel1\", \"v3\")\n"
        "    >>> sorted(files)[:2]",
        py::arg("kernel"), py::arg("gen"), py::kw_only(), py::arg("arch") = py::none(),
        py::arg("outdir") = py::none(), py::arg("cores") = py::none(), py::arg("lnc") = py::none());
  m.def(
      "validate", &validate,
      "Runs a BIR kernel and the bundle streams encoded from it (a folder, or the dict encode() returns) "
      "on the\n"
      "same inputs, compares what every instruction wrote and lints the streams, as `neuronsim validate`.\n"
      "A multi-core folder or dict (encode(cores=)) runs on its cores, each core compared (cores, lnc: None, "
      "or the\n"
      "folder's, as --cores / --lnc). Returns a Report.\n\nExample:\n"
      "    >>> rep = neuronsim.validate(\"workloads/kernel1\", neuronsim.encode(\"workloads/kernel1\", "
      "\"v2\"))\n"
      "    >>> rep.ok\n    True",
      py::arg("kernel"), py::arg("bundles"), py::kw_only(), py::arg("inputs") = py::none(),
      py::arg("arch") = py::none(), py::arg("rtol") = 0.0, py::arg("atol") = 0.0,
      py::arg("cores") = py::none(), py::arg("lnc") = py::none());
  bind_builder(m);
  m.def("_bfloat16", &bfloat16_type,
        "The scalar type neuronsim.bfloat16, numpy's bfloat16 dtype where ml_dtypes is not installed (registered "
        "on\nthe first call; neuronsim.nki.dtypes calls it only then). np.dtype(it).name == 'bfloat16'.");
  m.def("_float8_types", &float8_types,
        "{'float8_e4m3': neuronsim.float8_e4m3, 'float8_e5m2': ..., 'float8_e4m3fn': ...}: numpy's fp8 dtypes where "
        "ml_dtypes\nis not installed (registered on the first call, with bfloat16 and the casts between the four; "
        "neuronsim.nki.dtypes\ncalls it only then), values rounded by the simulator's own conversions.");
  m.def("to_float32", &to_float32,
        "The values of an array of BIR dtype `dtype` ('bfloat16', 'float8e4', 'float16', 'int32', ...), held "
        "in its\n"
        "container (bf16 as uint16, fp8 as uint8 raw bits), as float32: the simulator's own conversion.\n\n"
        "Example:\n    >>> neuronsim.to_float32(np.array([0x3f80], np.uint16), \"bfloat16\")\n"
        "    array([1.], dtype=float32)",
        py::arg("array"), py::arg("dtype"));
  m.def("from_float32", &from_float32,
        "float32 values (other arrays are cast to float32 first) stored as BIR dtype `dtype`, in its "
        "container:\n"
        "the simulator's rounding (round to nearest even, fp8 overflow rules, integer "
        "saturation).\n\nExample:\n"
        "    >>> neuronsim.from_float32(np.array([1.0]), \"bfloat16\")\n    array([16256], dtype=uint16)",
        py::arg("array"), py::arg("dtype"));
}
