// neuronsim.load and neuronsim.run.
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "api.hpp"
#include "convert.hpp"
#include "errors.hpp"
#include "interrupt.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/report.hpp"
#include "neuronsim/sim/stats.hpp"

namespace py = pybind11;

namespace neuronsim::python {

std::mutex &core_mutex() {
  static std::mutex m;
  return m;
}

std::shared_ptr<const sim::Kernel> kernel_arg(py::handle kernel, sim::KernelForms forms) {
  if (py::isinstance<KernelInfo>(kernel)) {
    auto k = kernel.cast<const KernelInfo &>().kernel;
    if (forms == sim::KernelForms::BirOnly && k->streams)
      throw InputError({k->path, -1, "", ""},
                       "bundle streams given where BIR is needed (a .json file or a workload "
                       "folder)");
    return k;
  }
  const std::string path = path_arg(kernel, "kernel");
  auto k = guarded([&] {
    py::gil_scoped_release nogil;
    return std::make_shared<const sim::Kernel>(sim::load_kernel(path, forms));
  });
  // What the reader ignored (unknown keys), as the CLI prints it on stderr: one warning each.
  for (const auto &w : k->program.warnings)
    if (PyErr_WarnEx(PyExc_UserWarning, ("neuronsim: " + sim::one_line(w)).c_str(), 1) != 0)
      throw py::error_already_set();
  return k;
}

KernelInfo load(py::handle kernel) {
  return KernelInfo{kernel_arg(kernel, sim::KernelForms::Any)};
}

py::list KernelInfo::tensors(bool inputs, bool outputs) const {
  py::list l;
  for (const auto &t : kernel->program.tensors) {
    if (inputs && !(t.is_input() && t.is_dram()))
      continue; // the tensors run() fills
    if (outputs && !t.is_output())
      continue;
    py::tuple shape(t.shape.size());
    for (size_t k = 0; k < t.shape.size(); ++k)
      shape[k] = py::int_(t.shape[k]);
    l.append(TensorInfo{t.name, shape, numpy_dtype(t.dtype), isa::enum_name(t.dtype), isa::enum_name(t.kind),
                        isa::enum_name(t.mem)});
  }
  return l;
}

py::dict KernelInfo::instructions() const {
  std::map<std::string, int64_t> counts;
  for (const auto &inst : kernel->program.insts)
    ++counts[isa::inst_type_name(inst.type)];
  py::dict d;
  for (const auto &[name, n] : counts)
    d[py::str(name)] = n;
  return d;
}

sim::InputSpec inputs_arg(py::handle inputs, const isa::Program *program) {
  sim::InputSpec spec;
  if (inputs.is_none())
    return spec;
  if (is_path(inputs)) {
    spec.dir = path_arg(inputs, "inputs");
    return spec;
  }
  if (!py::isinstance<py::dict>(inputs))
    throw py::type_error(
        "inputs must be a dict of tensor name -> numpy array or .npy path, or a folder of <name>.npy; got " +
        type_name(inputs));
  for (const auto &[key, value] : py::reinterpret_borrow<py::dict>(inputs)) {
    if (!py::isinstance<py::str>(key))
      throw py::type_error("inputs keys must be tensor names (str), got " + type_name(key) + " " +
                           text_of(py::repr(key)));
    const std::string name = key.cast<std::string>();
    const std::string source = sim::array_source("inputs", name);
    if (is_path(value)) {
      spec.files[name] = path_arg(value, source); // as --input NAME=FILE.npy
      continue;
    }
    // The tensor it is for, so that its shape and dtype are checked before the array is copied.
    const isa::Tensor *t = nullptr;
    if (program)
      t = &program->tensors[static_cast<size_t>(
          guarded([&] { return sim::input_tensor(*program, name, source); }))];
    spec.arrays.emplace(name, guarded([&] { return array_arg(value, source, t, "input"); }));
  }
  return spec;
}

Result run(py::handle kernel, py::handle inputs, py::handle arch, py::handle timing_only, py::handle expect,
           py::handle rtol, py::handle atol, py::handle kernel_sim, py::handle trace,
           py::handle max_instructions, py::handle cores, py::handle lnc, py::handle schedule,
           py::handle strict, py::handle set, py::handle seed_arg, py::handle save_inputs, py::handle progress,
           py::handle report, py::handle sanitize) {
  const std::shared_ptr<const sim::Kernel> k = kernel_arg(kernel, sim::KernelForms::Any);
  sim::RunSettings s;
  s.names = sim::python_setting_names();
  s.options.arch.clear(); // unset: the kernel decides (run.json, trn1, or the bundle streams' generation)
  if (!arch.is_none())
    s.options.arch = guarded([&] { return sim::parse_arch(arch_arg(arch), "arch"); });
  if (!set.is_none()) {
    // set={"dma_latency_ns": 425}: as --set KEY=VALUE, each checked by the arch loader's rules.
    if (!py::isinstance<py::dict>(set))
      throw py::type_error("set must be a dict of architecture parameter -> value, got " + type_name(set));
    for (const auto &[key, value] : py::reinterpret_borrow<py::dict>(set)) {
      if (!py::isinstance<py::str>(key))
        throw py::type_error("set keys must be parameter names (str)");
      const std::string text = py::isinstance<py::bool_>(value) ? (value.cast<bool>() ? "true" : "false")
                                                                : py::str(value).cast<std::string>();
      s.arch_sets.push_back(
          guarded([&] { return sim::parse_arch_set(key.cast<std::string>() + "=" + text, "set"); }));
    }
  }
  if (!save_inputs.is_none())
    s.save_inputs = path_arg(save_inputs, "save_inputs");
  s.options.timing_only = bool_arg(timing_only, "timing_only");
  s.strict = bool_arg(strict, "strict");
  s.options.sanitize = bool_arg(sanitize, "sanitize");
  s.options.max_instructions = int_arg(max_instructions, "max_instructions");
  const int64_t seed_value = int_arg(seed_arg, "seed");
  if (seed_value < 0)
    throw py::value_error("seed must be 0 or more, got " + std::to_string(seed_value));
  const uint64_t seed = static_cast<uint64_t>(seed_value);
  // As the CLI's --schedule, default auto: nothing here reads the schedule's entries or the events after the run
  // (the stats document, the outputs and the trace are the same either way).
  s.options.schedule = sim::parse_schedule(str_arg(schedule, "schedule"), "schedule");
  // None: run.json's, else what the kernel needs (sim::resolve_cores), as the CLI without --cores / --lnc.
  s.cores = count_arg(cores, "cores");
  s.lnc = count_arg(lnc, "lnc");
  if (!kernel_sim.is_none())
    s.options.kernel_sim = path_arg(kernel_sim, "kernel_sim");
  if (py::isinstance<py::list>(inputs) || py::isinstance<py::tuple>(inputs)) {
    // One input set per rank (docs/multicore.md); complete_settings checks the count.
    for (const auto &item : inputs) {
      if (!(item.is_none() || is_path(item) || py::isinstance<py::dict>(item)))
        throw py::type_error(
            "inputs as a list holds one dict (or folder) of inputs per rank, got an item of type " +
            type_name(item));
      s.rank_input_list.push_back(inputs_arg(item, &k->program));
    }
    if (s.rank_input_list.empty()) throw UsageError("inputs is an empty list: give one input set per rank");
  } else {
    s.inputs = inputs_arg(inputs, &k->program);
  }
  s.inputs.seed = seed; // as --seed N: every rank's generated inputs
  for (auto &spec : s.rank_input_list)
    spec.seed = seed;
  if (!expect.is_none()) {
    sim::ExpectSpec e;
    if (is_path(expect))
      e.dir = path_arg(expect, "expect");
    else
      e.arrays = guarded([&] { return arrays_arg(expect, "expect", &k->program, "expected"); });
    s.expect = std::move(e);
  }
  s.rtol = number_arg(rtol, "rtol", true);
  s.atol = number_arg(atol, "atol", true);
  const std::string trace_file = trace.is_none() ? "" : path_arg(trace, "trace");
  s.trace = trace_file;  // as the CLI: streamed as the run goes, with the DMA engines' slices
  const std::string report_file = report.is_none() ? "" : path_arg(report, "report");
  if (!report_file.empty() && s.options.schedule == sim::ScheduleMode::Auto)
    s.options.schedule = sim::ScheduleMode::Whole; // the report's timeline needs the run's events
  if (!report_file.empty())
    s.options.record_dma_engine_slices = true; // and the DMA engines' rows
  // progress=: called with (done, total, simulated ns) at most five times a second (with the GIL); None on a
  // terminal: the CLI's progress line on stderr for a run over a second.
  const bool tty = progress.is_none() &&
                   PyObject_IsTrue(py::module_::import("sys").attr("stderr").attr("isatty")().ptr()) == 1;
  py::object callback = progress.is_none() ? py::object() : py::reinterpret_borrow<py::object>(progress);
  if (!progress.is_none() && !PyCallable_Check(progress.ptr()))
    throw py::type_error("progress must be callable");
  sim::ProgressLine line;
  std::chrono::steady_clock::time_point last{};
  std::exception_ptr callback_error;
  if (tty) {
    s.options.progress = [&line](int64_t done, int64_t total, double sim_ns) {
      const std::string l = line.line(done, total, sim_ns);
      if (!l.empty())
        std::fprintf(stderr, "\r  %s\033[K", l.c_str()), std::fflush(stderr);
    };
  } else if (callback) {
    s.options.progress = [&](int64_t done, int64_t total, double sim_ns) {
      const auto now = std::chrono::steady_clock::now();
      if (callback_error || now - last < std::chrono::milliseconds(200))
        return;
      last = now;
      py::gil_scoped_acquire gil;
      try {
        callback(done, total, sim_ns);
      } catch (...) {
        callback_error = std::current_exception(); // the run stops (cancelled below) and re-raises it
      }
    };
  }
  std::vector<std::string> prints;
  s.options.device_print = [&prints](const std::string &line) { prints.push_back(line); };

  sim::Run r;
  std::vector<std::string> read_files;
  nlohmann::json stats;
  std::string summary, verdict;
  bool lazy = false;  // the stats document is left to stats_doc (Result::records)
  std::vector<sim::Mismatch> bad;
  {
    SigintWatch watch;
    s.options.cancelled = [hook = watch.hook(), &callback_error] { return callback_error || hook(); };
    guarded([&] {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(core_mutex());
      sim::complete_settings(*k, s);
      sim::prepare_run_outputs(*k, s, "", {trace_file, report_file});
      read_files = sim::run_read_files(*k, s);
      try {
        r = sim::run_kernel(*k, s);
      } catch (const sim::RunCancelled &) {
        if (!callback_error)
          throw;
      }
      if (callback_error)
        return;
      // A single-core streamed run keeps what its stats document is made from instead (Result::records); its
      // summary's verdict line is the document's (sim::summary_analysis_json).
      lazy = !r.device && r.result.streamed && report_file.empty() && !r.result.sanitized;
      if (lazy) {
        const nlohmann::json a = sim::summary_analysis_json(r.result, r.simulator->schedule(), k->program);
        std::ostringstream os;
        sim::print_summary(os, r.result, r.simulator->schedule(), &a);
        summary = os.str();
        verdict = a["verdict"].value("text", std::string());
      } else {
        stats = sim::run_stats(r, k->program, {});
        summary = sim::summary_text(r, stats);
        if (stats.contains("analysis")) verdict = stats["analysis"]["verdict"].value("text", std::string());
      }
      if (!report_file.empty()) {
        const nlohmann::json timeline = !trace_file.empty() ? isa::read_json_file(trace_file, "trace file")
                                        : r.device || r.simulator->schedule().insts.empty()
                                            ? nlohmann::json()
                                            : sim::trace_json(r.result, r.simulator->schedule(), k->program);
        isa::write_file_atomic(report_file,
                               sim::run_report_html(stats, timeline.is_null() ? nullptr : &timeline, "",
                                                    trace_file));
      }
      bad = sim::check_outputs(*k, r, s);
    });
  }
  if (tty && line.shown())
    std::fprintf(stderr, "\r\033[K"), std::fflush(stderr);
  if (callback_error)
    std::rethrow_exception(callback_error);
  // A SIGINT that came while the schedule was built (which is not polled) or after the last poll.
  if (PyErr_CheckSignals() != 0)
    throw py::error_already_set();

  Result out;
  out.kernel = k->label;
  out.arch = r.result.arch;
  out.total_ns = r.device ? r.device_result.total_ns : r.result.total_ns;  // several cores: the device's
  out.dynamic_instructions = r.device ? r.device_result.dynamic_instructions : r.result.dynamic_instructions;
  out.summary_text = summary;
  if (r.result.sanitized) out.findings = to_python(sim::findings_json(r.result.findings));
  for (const auto &f : r.result.findings) out.finding_lines.append(sim::one_line(sim::finding_line(f)));
  out.verdict = verdict;
  if (lazy) {
    auto rec = std::make_shared<RunRecords>();
    rec->kernel = k;
    rec->schedule = r.simulator->schedule();  // a streamed run's: its summary, no entries
    rec->schedule.arena.reset();
    rec->result = std::move(r.result);
    out.records = std::move(rec);
  } else {
    out.doc = std::make_shared<const nlohmann::json>(std::move(stats));
  }
  out.read_files = std::move(read_files);
  for (const auto &f : r.saved_inputs)
    out.saved_inputs.append(f);
  if (!trace_file.empty())
    out.trace_path = py::str(trace_file);
  for (const auto &line : prints)
    out.device_prints.append(line);
  // Output elements no instruction wrote: a warning each (Python's warnings), or with strict=True the run's
  // SimulationError, as `neuronsim run --strict`.
  for (const auto &u : r.unwritten) {
    const std::string line = sim::one_line(k->label + ": " + sim::unwritten_line(u, r.ranks()));
    if (s.strict)
      throw SimulationError({}, line + " (strict=True" +
                                    (r.unwritten.size() > 1
                                         ? "; " + std::to_string(r.unwritten.size() - 1) + " more output" +
                                               (r.unwritten.size() > 2 ? "s" : "") + " alike"
                                         : std::string()) +
                                    ")");
    if (PyErr_WarnEx(PyExc_UserWarning, ("neuronsim: " + line).c_str(), 1) != 0)
      throw py::error_already_set();
  }
  for (const auto &u : r.unwritten)
    out.unwritten[py::str(r.ranks() > 1 ? "rank" + std::to_string(u.rank) + "/" + u.tensor : u.tensor)] =
        u.unwritten;
  if (!s.options.timing_only) {
    const auto &p = k->program;
    for (size_t i = 0; i < p.tensors.size(); ++i) {
      if (!p.tensors[i].is_output()) continue;
      if (r.ranks() == 1) {
        out.outputs[py::str(p.tensors[i].name)] =
            tensor_array(p.tensors[i], r.simulator->memory().dram(static_cast<int>(i)));
        continue;
      }
      // Several ranks: each has its own DRAM; the output is every rank's, stacked on a leading rank axis.
      py::list per_rank;
      for (int rank = 0; rank < r.ranks(); ++rank)
        per_rank.append(tensor_array(p.tensors[i], r.rank_memory(rank).dram(static_cast<int>(i))));
      out.outputs[py::str(p.tensors[i].name)] = py::module_::import("numpy").attr("stack")(per_rank);
    }
    if (s.expect) {
      py::list l;
      for (const auto &m : bad)
        l.append(MismatchInfo{m.tensor, m.index, m.got, m.want, m.message,
                              sim::mismatch_line(m, *s.rtol, *s.atol)});
      out.mismatches = l;
    }
  }
  return out;
}

const nlohmann::json &stats_doc(const Result &r) {
  if (!r.doc) {
    const std::shared_ptr<const RunRecords> rec = r.records;  // kept alive by this copy while the GIL is released
    if (!rec) {
      static const nlohmann::json none = nlohmann::json::object();
      return none;
    }
    nlohmann::json doc = guarded([&] {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(core_mutex());
      return sim::stats_json(rec->result, rec->schedule, rec->kernel->program, {});
    });
    if (!r.doc) {  // another thread may have built it meanwhile: the same document
      r.doc = std::make_shared<const nlohmann::json>(std::move(doc));
      r.records.reset();
    }
  }
  return *r.doc;
}

py::dict result_stats(const Result &r) {
  if (r.stats_cache.is_none())
    r.stats_cache = r.doc || r.records ? to_python(stats_doc(r)) : py::dict();
  return r.stats_cache;
}

void write_report(const Result &r, py::handle path) {
  const std::string file = path_arg(path, "path");
  const std::string trace_file = r.trace_path.is_none() ? std::string() : r.trace_path.cast<std::string>();
  const nlohmann::json &doc = stats_doc(r);
  guarded([&] {
    // The output rule of every writer: the page replaces none of the files the run read, nor its trace.
    std::vector<std::string> reads = r.read_files;
    if (!trace_file.empty())
      reads.push_back(trace_file);
    sim::prepare_output_paths({}, {file}, reads);
    std::optional<nlohmann::json> trace;
    if (!trace_file.empty())
      trace = isa::read_json_file(trace_file, "trace file");
    isa::write_file_atomic(file, sim::run_report_html(doc, trace ? &*trace : nullptr, "", trace_file));
  });
}

} // namespace neuronsim::python
