// One run of a kernel and the check of its outputs (run_kernel.hpp).
#include "neuronsim/sim/run_kernel.hpp"

#include <algorithm>
#include <memory>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/io/npy.hpp"
#include "neuronsim/sim/ranks.hpp"

namespace neuronsim::sim {

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

} // namespace neuronsim::sim
