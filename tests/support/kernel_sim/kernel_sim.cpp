// neuronsim_test_kernel_sim: a stand-in for the compiler's external `kernel_sim` program, for the CustomOp /
// BIRKernel tests (engines/ops/kernel.cpp documents the protocol). Run as `neuronsim_test_kernel_sim CONFIG`: it
// reads the JSON config, runs the kernel named by "kernel_name" on the .npy inputs and writes the .npy outputs.
//
//   add_one          out0 = in0 + 1                    (elementwise, any shape; out0 in its own dtype)
//   sum_rows         out0[p] = sum of row p of in0     (in0 [P, ...] -> out0 with P elements)
//   add_lower_bound  out0 = in0 + fields.lower_bound   (a BIRKernel attribute, read from "fields")
//   fail3            writes a line to stdout and "kernel_sim: deliberate failure" to stderr, exits 3
//   no_output        exits 0 without writing anything
//   wrong_shape      writes out0 with shape [1]
//   wrong_dtype      writes out0 as int32 values 7
//
// When the environment variable NEURONSIM_TEST_KERNEL_LOG names a file, the config is appended to it as one JSON
// line (the tests read what neuronsim sent, and check that its directory is gone afterwards).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/error.hpp"
#include "neuronsim/engines/npy_dtype.hpp"
#include "neuronsim/io/npy.hpp"

using json = nlohmann::json;
using namespace neuronsim;

namespace {

std::vector<float> input(const json &cfg, size_t i) {
  return engines::npy_to_f32(io::read_npy(cfg.at("inputs").at(i).at("path").get<std::string>()));
}

void output(const json &cfg, size_t i, const std::vector<float> &v) {
  const json &o = cfg.at("outputs").at(i);
  const isa::Dtype dt = isa::parse_dtype(o.at("dtype").get<std::string>());
  io::write_npy(o.at("path").get<std::string>(), engines::npy_from_f32(v, o.at("shape").get<std::vector<int64_t>>(), dt));
}

int run(const std::string &config) {
  std::ifstream f(config);
  const json cfg = json::parse(f);
  if (const char *log = std::getenv("NEURONSIM_TEST_KERNEL_LOG")) {
    std::ofstream l(log, std::ios::app);
    l << cfg.dump() << "\n";
  }
  const std::string k = cfg.at("kernel_name").get<std::string>();
  if (k == "add_one" || k == "add_lower_bound") {
    std::vector<float> x = input(cfg, 0);
    const float c = k == "add_one" ? 1.0f : cfg.at("fields").at("lower_bound").get<float>();
    for (float &e : x) e += c;
    output(cfg, 0, x);
    return 0;
  }
  if (k == "sum_rows") {
    const std::vector<float> x = input(cfg, 0);
    const auto shape = cfg.at("inputs").at(0).at("shape").get<std::vector<int64_t>>();
    const size_t rows = static_cast<size_t>(shape.at(0)), cols = rows ? x.size() / rows : 0;
    std::vector<float> s(rows, 0.0f);
    for (size_t r = 0; r < rows; ++r)
      for (size_t c = 0; c < cols; ++c) s[r] += x[r * cols + c];
    output(cfg, 0, s);
    return 0;
  }
  if (k == "fail3") {
    std::cout << "kernel_sim: this line goes to stdout" << std::endl;
    std::cerr << "kernel_sim: starting\nkernel_sim: deliberate failure\n";
    return 3;
  }
  if (k == "no_output") return 0;
  if (k == "wrong_shape") {
    io::write_npy(cfg.at("outputs").at(0).at("path").get<std::string>(), engines::npy_from_f32({0.0f}, {1}));
    return 0;
  }
  if (k == "wrong_dtype") {
    const json &o = cfg.at("outputs").at(0);
    const auto shape = o.at("shape").get<std::vector<int64_t>>();
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    io::write_npy(o.at("path").get<std::string>(),
                   engines::npy_from_f32(std::vector<float>(static_cast<size_t>(n), 7.0f), shape, isa::Dtype::int32));
    return 0;
  }
  std::cerr << "kernel_sim: unknown kernel '" << k << "'\n";
  return 2;
}

} // namespace

// The .npy code comes from neuronsim_engines, which links the SystemC library; that library wants an sc_main, which
// this program never starts (as the fuzz targets do).
extern "C" int sc_main(int, char **) { return 0; }

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: neuronsim_test_kernel_sim CONFIG.json\n";
    return 2;
  }
  try {
    return run(argv[1]);
  } catch (const std::exception &e) {
    std::cerr << "kernel_sim: " << e.what() << "\n";
    return 2;
  }
}
