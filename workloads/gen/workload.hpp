// The workload generator's shared vocabulary: a Workload (BIR program + inputs + independent expected outputs +
// the comparison tolerance and its justification), a fixed-seed RNG, bf16 rounding and the writer of a
// workload folder (<name>.bir.json, inputs/*.npy, expected/*.npy, README.md).
//
// Independence: nothing here (or in the per-family files) calls into engines/. Expected outputs are computed
// in plain C++ in double precision; the only "hardware" rule the references apply is rounding an input to bf16
// where the kernel stores that input in bf16 (RNE, written out below), so both sides start from the same values.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "neuronsim/builder.hpp"
#include "neuronsim/io/npy.hpp"
#include "neuronsim/lowering.hpp"

namespace neuronsim::workloads {

enum class Size { Small, Full };

struct Workload {
  std::string name;
  isa::Program program;
  std::map<std::string, io::NpyArray> inputs;    // tensor name -> data
  std::map<std::string, io::NpyArray> expected;  // output tensor name -> reference
  // A run of several ranks: rank r's own inputs (inputs/rank<r>/<t>.npy; `inputs` holds those every rank reads).
  std::vector<std::map<std::string, io::NpyArray>> rank_inputs;
  double rtol = 0.0, atol = 0.0;                  // |got - want| <= atol + rtol * |want|
  std::string summary;    // one paragraph: what it computes, instruction structure, source it mirrors
  std::string sizes;      // the sizes used at this Size
  std::string tolerance;  // why rtol/atol are what they are
  int cores = 1, lnc = 1;  // the run it needs (sim/device.hpp): several cores, cores per logical core
};

// with_data = false skips inputs and references (a full-size matmul reference is ~10^11 multiply-adds);
// timing-only runs need only the BIR.
using Generator = std::function<Workload(Size, bool with_data)>;

// Every workload, by name, in the order the fidelity table lists them.
const std::vector<std::pair<std::string, Generator>> &registry();
const Generator *find_generator(const std::string &name);

// Writes DIR/<name>.bir.json, DIR/inputs/<t>.npy (and DIR/inputs/rank<r>/<t>.npy), DIR/expected/<t>.npy and
// DIR/README.md (DIR is created).
void write_workload(const Workload &w, const std::string &dir);
// The exact text write_workload puts in <name>.bir.json (so a test can compare bytes).
std::string bir_text(const Workload &w);
// The run.json write_workload puts in the folder of a workload of several cores (sim/run_config.hpp: its
// cores, LNC and arch, so that `neuronsim run workloads/multicore/<name>` needs no flags); "" for a
// single-core one, which has none.
std::string run_json_text(const Workload &w);

// SplitMix64 (Steele, Lea, Flood 2014): a fixed, portable sequence (std:: distributions are not portable
// across standard libraries, so values are drawn from the raw 64-bit stream).
class Rng {
public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi), from the top 53 bits; rounded to fp32 (inputs are fp32 or narrower).
  float uniform(double lo, double hi) {
    const double u = static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
    return static_cast<float>(lo + (hi - lo) * u);
  }
  std::vector<float> uniform_vec(size_t n, double lo, double hi) {
    std::vector<float> v(n);
    for (auto &x : v) x = uniform(lo, hi);
    return v;
  }

private:
  uint64_t s_;
};

// fp32 -> bf16 bits, round to nearest even (finite inputs; the generators only make finite values).
uint16_t bf16_bits(float x);
float bf16_value(uint16_t bits);
inline float round_bf16(float x) { return bf16_value(bf16_bits(x)); }

// .npy arrays built without engines/: fp32 values as <f4, or bf16 bit patterns as <u2 (io/npy.hpp convention).
io::NpyArray npy_f32(const std::vector<float> &v, const std::vector<int64_t> &shape);
io::NpyArray npy_f32(const std::vector<double> &v, const std::vector<int64_t> &shape);  // rounded to fp32
io::NpyArray npy_bf16(const std::vector<float> &v, const std::vector<int64_t> &shape);   // v must be bf16 values

// ---- Lowering as the compiler lowers NKI: the shared lowering library (neuronsim/lowering.hpp), also used by the
// NKI front end.
using lowering::kUsableSbufBytes;
using lowering::load;
using lowering::lowering_note;
using lowering::pipelined_loop;
using lowering::pipelined_loop_first;
using lowering::psum_buffers;
using lowering::Rotating;
using lowering::rotating_psum;
using lowering::rotating_sbuf;
using lowering::sbuf_buffers;
using lowering::store;

// Family entry points (one .cpp each).
Workload make_tensor_add(Size s, bool with_data);
Workload make_matmul_tiled(Size s, bool with_data);
Workload make_matmul_lnc2(Size s, bool with_data);
Workload make_collectives(Size s, bool with_data);
Workload make_tp_mlp(Size s, bool with_data);
Workload make_tp_mlp_ranks(int ranks, bool with_data);  // tp_mlp_<N>ranks: one rank per core (--cores N --lnc 1)
Workload make_matmul_hoisted(Size s, bool with_data);
Workload make_matmul_blocked_free(Size s, bool with_data);
Workload make_matmul_blocked_mnk(Size s, bool with_data);
Workload make_softmax(Size s, bool with_data);
Workload make_rmsnorm(Size s, bool with_data);
Workload make_attention(Size s, bool with_data);
Workload make_transpose(Size s, bool with_data);
Workload make_layernorm(Size s, bool with_data);  // needs BNStats / BNStatsAggregate semantics
Workload make_cumsum(Size s, bool with_data);     // needs TensorScalarPtr is_tensor_tensor_scan

}  // namespace neuronsim::workloads
