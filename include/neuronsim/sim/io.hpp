// Tensors in and out of a run: .npy inputs (or deterministic generated ones), .npy outputs, comparison with
// expected tensors, and the stats document.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/engines/memory.hpp"
#include "neuronsim/sim/npy.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

struct InputSpec {
  std::map<std::string, std::string> files;  // tensor name -> .npy path (--input NAME=FILE)
  std::string dir;                           // --inputs DIR: <tensor name>.npy for every input found there
  // Arrays held in memory (the Python module's inputs=), under the same rules as a file; named "inputs['NAME']"
  // in messages. They take precedence over `files` and `dir`.
  std::map<std::string, NpyArray> arrays;
};

// The source name of an in-memory array in messages: "inputs['a']", "expect['b']".
std::string array_source(const std::string &what, const std::string &name);

// Fills every input tensor of the program; returns one line per tensor saying where its data came from.
// Inputs not given are generated deterministically: floats uniform in [-1, 1), signed integers in [-8, 8),
// unsigned in [0, 16), from a 64-bit Mersenne Twister seeded with the FNV-1a hash of the tensor name.
std::vector<std::string> load_inputs(const isa::Program &p, engines::Memory &mem, const InputSpec &spec);

// Writes <outdir>/<tensor>.npy for every ExternalOutput (atomically); returns the paths written.
std::vector<std::string> write_outputs(const isa::Program &p, const engines::Memory &mem, const std::string &outdir);

struct Mismatch {
  std::string tensor;
  int64_t index = -1;      // flat element index of the worst element, -1 for a missing/shape error
  double got = 0, want = 0;
  std::string message;
};
// Compares every output with <dir>/<tensor>.npy: |got - want| <= atol + rtol * |want| element-wise (NaN equals
// NaN). Returns one entry per output that differs (the worst element), empty when all agree.
std::vector<Mismatch> compare_outputs(const isa::Program &p, const engines::Memory &mem, const std::string &dir,
                                      double rtol, double atol, std::vector<std::string> *checked = nullptr);

// The expected outputs of a run: a folder (--expect DIR), where every output must have its <tensor>.npy, or
// arrays held in memory (the Python module's expect=), where exactly the outputs given are compared.
struct ExpectSpec {
  std::string dir;
  std::map<std::string, NpyArray> arrays;  // output name -> expected values; named "expect['NAME']" in messages
};
// InputError for an array of `e` that names no output tensor (before a run, so that a typo does not cost one).
void check_expected_tensors(const isa::Program &p, const ExpectSpec &e);
// Compares as above with each expected tensor of `e`: a folder's missing file is a Mismatch, an array naming no
// output tensor an InputError.
std::vector<Mismatch> compare_outputs(const isa::Program &p, const engines::Memory &mem, const ExpectSpec &e,
                                      double rtol, double atol, std::vector<std::string> *checked = nullptr);

// Output tensor values as fp32 (for comparisons and tests).
std::vector<float> tensor_f32(const isa::Program &p, const engines::Memory &mem, int tensor);

// How much of the critical path each engine (and the DMA queues together, as "DMA") accounts for: the time from
// each critical-path instruction's start to the next one's, in ns. The bottleneck is the largest share.
std::vector<std::pair<std::string, double>> critical_path_shares(const RunResult &r, const Schedule &s);

nlohmann::json stats_json(const RunResult &r, const Schedule &s, const isa::Program &p);
nlohmann::json trace_json(const RunResult &r, const Schedule &s, const isa::Program &p);

} // namespace neuronsim::sim
