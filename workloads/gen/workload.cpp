// Registry, folder writer and the small numeric helpers of the workload generator (see workload.hpp).
#include "workload.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "neuronsim/isa/bir_json.hpp"

namespace neuronsim::workloads {

namespace fs = std::filesystem;

const std::vector<std::pair<std::string, Generator>> &registry() {
  static const std::vector<std::pair<std::string, Generator>> r = {
      {"tensor_add", make_tensor_add},
      {"matmul_tiled", make_matmul_tiled},
      {"matmul_hoisted", make_matmul_hoisted},
      {"matmul_blocked_free", make_matmul_blocked_free},
      {"matmul_blocked_mnk", make_matmul_blocked_mnk},
      {"softmax", make_softmax},
      {"rmsnorm", make_rmsnorm},
      {"attention", make_attention},
      {"transpose", make_transpose},
      {"layernorm", make_layernorm},
      {"cumsum", make_cumsum},
      {"matmul_lnc2", make_matmul_lnc2},
      {"collectives", make_collectives},
      {"tp_mlp", make_tp_mlp},
      {"tp_mlp_2ranks", [](Size, bool d) { return make_tp_mlp_ranks(2, d); }},
      {"tp_mlp_4ranks", [](Size, bool d) { return make_tp_mlp_ranks(4, d); }},
      {"tp_mlp_8ranks", [](Size, bool d) { return make_tp_mlp_ranks(8, d); }},
  };
  return r;
}

const Generator *find_generator(const std::string &name) {
  for (const auto &e : registry())
    if (e.first == name) return &e.second;
  return nullptr;
}

uint16_t bf16_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  // Round to nearest, ties to even, on the 16 dropped bits.
  const uint32_t lsb = (u >> 16) & 1u;
  u += 0x7FFFu + lsb;
  return static_cast<uint16_t>(u >> 16);
}

float bf16_value(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

io::NpyArray npy_f32(const std::vector<float> &v, const std::vector<int64_t> &shape) {
  io::NpyArray a;
  a.dtype = isa::Dtype::float32;
  a.shape = shape;
  a.data.resize(v.size() * 4);
  std::memcpy(a.data.data(), v.data(), a.data.size());  // little-endian host (x86-64 / aarch64)
  return a;
}

io::NpyArray npy_f32(const std::vector<double> &v, const std::vector<int64_t> &shape) {
  std::vector<float> f(v.begin(), v.end());
  return npy_f32(f, shape);
}

io::NpyArray npy_bf16(const std::vector<float> &v, const std::vector<int64_t> &shape) {
  io::NpyArray a;
  a.dtype = isa::Dtype::bfloat16;
  a.shape = shape;
  a.data.resize(v.size() * 2);
  for (size_t i = 0; i < v.size(); ++i) {
    const uint16_t b = bf16_bits(v[i]);
    std::memcpy(a.data.data() + 2 * i, &b, 2);
  }
  return a;
}

int64_t sbuf_buffers(int64_t trips, int64_t slot_bytes, int64_t fixed_bytes) {
  for (int64_t n : {4, 2})
    if (trips % n == 0 && trips >= n && fixed_bytes + n * slot_bytes <= kUsableSbufBytes) return n;
  return 1;
}

int64_t psum_buffers(int64_t trips, int64_t banks_per_tile, int64_t other_banks) {
  constexpr int64_t kBanks = 8;  // reference neuron-arch.md 1.4: 8 PSUM banks per partition
  for (int64_t n : {8, 4, 2})
    if (trips % n == 0 && trips >= n && other_banks + n * banks_per_tile <= kBanks) return n;
  return 1;
}

Rotating rotating_sbuf(builder::Builder &b, const std::string &name, int64_t rows, int64_t cols, isa::Dtype dt,
                       int64_t buffers) {
  return Rotating{b.sbuf(name, {rows, buffers * cols}, dt), rows, cols, buffers};
}

Rotating rotating_psum(builder::Builder &b, const std::string &name, int64_t rows, int64_t cols, isa::Dtype dt,
                       int64_t buffers) {
  return Rotating{b.psum(name, {rows, buffers * cols}, dt), rows, cols, buffers};
}

void pipelined_loop(builder::Builder &b, const std::string &var, int64_t trips, int64_t buffers,
                    const std::function<void(builder::Aff, int64_t)> &load,
                    const std::function<void(builder::Aff, int64_t)> &body) {
  const int64_t B = buffers;
  if (B == 1) {  // one buffer: nothing to run ahead
    b.loop(var, 0, trips, 1, [&](builder::Aff i) {
      load(i, 0);
      body(i, 0);
    });
    return;
  }
  for (int64_t k = 0; k + 1 < B; ++k) load(builder::Aff(k), k);
  auto group = [&](builder::Aff base, bool last) {
    for (int64_t k = 0; k < B; ++k) {
      const builder::Aff i = base + builder::Aff(k);
      if (!last || k == 0) load(i + builder::Aff(B - 1), (k + B - 1) % B);
      body(i, k);
    }
  };
  if (trips / B > 1) b.loop(var, 0, trips / B - 1, 1, [&](builder::Aff i0) { group(i0 * B, false); });
  group(builder::Aff(trips - B), true);
}

void pipelined_loop_first(builder::Builder &b, const std::string &var, int64_t trips, int64_t buffers,
                          const std::function<void(builder::Aff, int64_t)> &load,
                          const std::function<void(builder::Aff, int64_t, bool)> &body) {
  const int64_t B = buffers, groups = trips / B;
  if (B == 1) {  // one buffer: tile 0 peeled, then a plain loop
    load(builder::Aff(0), 0);
    body(builder::Aff(0), 0, true);
    if (trips > 1)
      b.loop(var, 1, trips, 1, [&](builder::Aff i) {
        load(i, 0);
        body(i, 0, false);
      });
    return;
  }
  for (int64_t k = 0; k + 1 < B; ++k) load(builder::Aff(k), k);
  auto group = [&](builder::Aff base, bool first, bool last) {
    for (int64_t k = 0; k < B; ++k) {
      const builder::Aff i = base + builder::Aff(k);
      if (!last || k == 0) load(i + builder::Aff(B - 1), (k + B - 1) % B);
      body(i, k, first && k == 0);
    }
  };
  group(builder::Aff(0), true, groups == 1);
  if (groups > 2) b.loop(var, 1, groups - 1, 1, [&](builder::Aff i0) { group(i0 * B, false, false); });
  if (groups > 1) group(builder::Aff(trips - B), false, true);
}

builder::InstRef load(builder::Builder &b, const builder::Ap &src, const builder::Ap &dst) {
  return b.add(isa::InstructionType::Load, {b.ap(src)}, {b.ap(dst)}).engine(isa::Engine::SP).queue("qSyncIO0");
}

builder::InstRef store(builder::Builder &b, const builder::Ap &src, const builder::Ap &dst) {
  return b.add(isa::InstructionType::Save, {b.ap(src)}, {b.ap(dst)}).engine(isa::Engine::SP).queue("qSyncIO1");
}

std::string lowering_note(int64_t buffers) {
  return " Lowered as the compiler lowers it (workloads/gen/workload.hpp): the loop-local tiles rotate over " +
         std::to_string(buffers) + " buffers and the loads (SP, queue qSyncIO0) run " + std::to_string(buffers - 1) +
         " tiles ahead of the compute that consumes them; the stores go on qSyncIO1.";
}

std::string bir_text(const Workload &w) { return isa::to_bir_json(w.program).dump(1) + "\n"; }

// trn2: LNC=2 and 8 cores a device begin with Trainium2 (sim/arch/trn2.json lnc_max, device_cores).
std::string run_json_text(const Workload &w) {
  if (w.cores <= 1)
    return "";
  return nlohmann::json{{"arch", "trn2"}, {"cores", w.cores}, {"lnc", w.lnc}}.dump() + "\n";
}

namespace {

std::string fmt(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

std::string readme(const Workload &w) {
  std::ostringstream o;
  o << "# " << w.name << "\n\n"
    << "Generated by `neuronsim_workload_gen " << w.name << " --size small -o workloads/" << w.name
    << "` (source: `workloads/gen/`); do not edit by hand -- the test suite checks that regenerating "
       "reproduces "
       "these files.\n\n"
    << "## What it computes\n\n"
    << w.summary << "\n\n"
    << "## Sizes\n\n"
    << w.sizes << "\n\n"
    << "## Tolerance\n\n"
    << "`|got - want| <= atol + rtol * |want|` with rtol = " << fmt(w.rtol) << ", atol = " << fmt(w.atol)
    << ".\n\n"
    << w.tolerance << "\n\n"
    << "## Run\n\n```sh\nbuild/neuronsim run workloads/" << (w.cores > 1 ? "multicore/" : "") << w.name
    << (w.cores > 1 ? " --arch trn2 --cores " + std::to_string(w.cores) + " --lnc " + std::to_string(w.lnc)
                    : "")
    << " --rtol " << fmt(w.rtol) << " --atol " << fmt(w.atol) << "\n```\n\n"
    << (w.cores > 1
            ? "`run.json` holds the arch, cores and LNC above, so `neuronsim run workloads/multicore/" +
                  w.name +
                  "` (and sweep, and `neuronsim.run` in Python) needs none of these flags; "
                  "tolerance.json holds the tolerance.\n\n"
            : "")
    << "Inputs are drawn from a fixed-seed SplitMix64 stream; expected outputs come from an independent "
       "double-precision reference in `workloads/gen/` that shares no code with `engines/`. bf16 tensors are "
       "stored as raw `uint16` bit patterns (the io/npy.hpp convention).\n";
  return o.str();
}

void write_text(const fs::path &p, const std::string &s) {
  std::ofstream f(p, std::ios::binary);
  if (!f) throw std::runtime_error("cannot write " + p.string());
  f << s;
}

}  // namespace

void write_workload(const Workload &w, const std::string &dir) {
  const fs::path d(dir);
  fs::create_directories(d / "inputs");
  fs::create_directories(d / "expected");
  write_text(d / (w.name + ".bir.json"), bir_text(w));
  for (const auto &[n, a] : w.inputs) io::write_npy((d / "inputs" / (n + ".npy")).string(), a);
  for (size_t r = 0; r < w.rank_inputs.size(); ++r) {
    const fs::path rd = d / "inputs" / ("rank" + std::to_string(r));
    fs::create_directories(rd);
    for (const auto &[n, a] : w.rank_inputs[r]) io::write_npy((rd / (n + ".npy")).string(), a);
  }
  for (const auto &[n, a] : w.expected) io::write_npy((d / "expected" / (n + ".npy")).string(), a);
  write_text(d / "README.md", readme(w));
  // `neuronsim run workloads/<name>` compares with expected/ using these unless --rtol/--atol are given.
  write_text(d / "tolerance.json", nlohmann::json{{"rtol", w.rtol}, {"atol", w.atol}}.dump() + "\n");
  if (w.cores > 1)
    write_text(d / "run.json", run_json_text(w)); // sim/run_config.hpp
}

}  // namespace neuronsim::workloads
