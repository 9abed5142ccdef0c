// CustomOp / BIRKernel (the external kernel program) and DevicePrint (the print sink): engines/ops/kernel.cpp.
// The external program is tests/support/kernel_sim/kernel_sim.cpp (add_one, sum_rows, add_lower_bound and its
// failure kernels). Every expected value is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/cli_run.hpp"
#include "engines/program_builder.hpp"
#include "neuronsim/engines/cost.hpp"
#include "neuronsim/engines/host.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/engines/npy_dtype.hpp"
#include "neuronsim/io/npy.hpp"
#include "neuronsim/sim/simulator.hpp"

using namespace neuronsim;
using namespace neuronsim::testing;
using isa::AluOp;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

using V = std::vector<float>;
const std::string kKernelSim = NEURONSIM_TEST_KERNEL_SIM;



sim::RunOptions kernel_opts(const std::string &prog = kKernelSim) {
  sim::RunOptions o;
  o.kernel_sim = prog;
  return o;
}

// The kernel program appends each config it gets to $NEURONSIM_TEST_KERNEL_LOG (one JSON per line).
struct ConfigLog {
  std::string path;
  ConfigLog() {
    path = clitest::temp_dir() + "/configs.jsonl";
    setenv("NEURONSIM_TEST_KERNEL_LOG", path.c_str(), 1);
  }
  ~ConfigLog() { unsetenv("NEURONSIM_TEST_KERNEL_LOG"); }
  std::vector<json> configs() const {
    std::vector<json> r;
    std::ifstream f(path);
    for (std::string l; std::getline(f, l);) r.push_back(json::parse(l));
    return r;
  }
};

// x [2, 3] in SBUF; CustomOp `kernel` reads x, writes y (same shape, dtype `out_dt`).
struct CustomProgram {
  isa::Program p;
  TensorHandle x, y;
  explicit CustomProgram(const std::string &kernel, Dtype out_dt = Dtype::float32) {
    Builder b("custom.bir.json");
    x = b.sbuf("x", {2, 3});
    y = b.sbuf("y", {2, 3}, out_dt);
    b.add(InstructionType::CustomOp, {P(x.all())}, {P(y.all())})
        .op_function_name(kernel)
        .op_lib_file("libtestkernels.so")
        .engine(isa::Engine::Pool);
    p = b.finish();
  }
};

const V kX = {1, 2, 3, 4, 5, 6};

} // namespace

// add_one: y = x + 1 = 2 3 4 / 5 6 7, through the Simulator. The config names the kernel, its library, the operand
// files with their shape and dtype; its directory is gone after the run.
TEST(OpsKernel, CustomOpAddOneThroughTheSimulator) {
  ConfigLog log;
  CustomProgram c("add_one");
  sim::Simulator s(c.p, kernel_opts());
  write(s, c.x, kX);
  write(s, c.y, {0, 0, 0, 0, 0, 0});
  s.run();
  EXPECT_EQ(read(s, c.y), (V{2, 3, 4, 5, 6, 7}));
  const auto cfgs = log.configs();
  ASSERT_EQ(cfgs.size(), 1u);
  const json &j = cfgs[0];
  EXPECT_EQ(j["format"], "neuronsim-kernel-sim-1");
  EXPECT_EQ(j["opcode"], "CustomOp");
  EXPECT_EQ(j["kernel_name"], "add_one");
  EXPECT_EQ(j["lib_file"], "libtestkernels.so");
  EXPECT_EQ(j["instruction"]["name"], "I-1");
  EXPECT_EQ(j["instruction"]["index"], 0);
  EXPECT_EQ(j["instruction"]["file"], "custom.bir.json");
  ASSERT_EQ(j["inputs"].size(), 1u);
  EXPECT_EQ(j["inputs"][0]["shape"], json::array({2, 3}));
  EXPECT_EQ(j["inputs"][0]["dtype"], "float32");
  EXPECT_EQ(j["inputs"][0]["descr"], "<f4");
  EXPECT_EQ(j["outputs"][0]["shape"], json::array({2, 3}));
  EXPECT_EQ(j["fields"]["opFunctionName"], "add_one");
  const fs::path in0 = j["inputs"][0]["path"].get<std::string>();
  EXPECT_EQ(in0.filename(), "in0.npy");
  EXPECT_EQ(fs::path(j["outputs"][0]["path"].get<std::string>()).filename(), "out0.npy");
  EXPECT_EQ(in0.parent_path().filename().string().rfind("neuronsim-kernel-", 0), 0u);
  EXPECT_FALSE(fs::exists(in0.parent_path())) << "the temporary directory is removed";
}

// Two kernels in a row, the second reading the first's output: y = x + 1 = 2 3 4 / 5 6 7, then sum_rows into
// s [2, 1]: 2+3+4 = 9, 5+6+7 = 18. A bf16 output: add_one writes 2..7 (exact in bf16) as raw bits.
TEST(OpsKernel, CustomOpSumRowsAfterAddOneAndABf16Output) {
  Builder b("two.bir.json");
  auto x = b.sbuf("x", {2, 3}), y = b.sbuf("y", {2, 3}), r = b.sbuf("r", {2, 1});
  auto z = b.sbuf("z", {2, 3}, Dtype::bfloat16);
  b.add(InstructionType::CustomOp, {P(x.all())}, {P(y.all())}).op_function_name("add_one");
  b.add(InstructionType::CustomOp, {P(y.all())}, {P(r.all())}).op_function_name("sum_rows");
  b.add(InstructionType::CustomOp, {P(x.all())}, {P(z.all())}).op_function_name("add_one");
  isa::Program p = b.finish();
  sim::Simulator s(p, kernel_opts());
  write(s, x, kX);
  s.run();
  EXPECT_EQ(read(s, y), (V{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(read(s, r), (V{9, 18}));
  EXPECT_EQ(read(s, z), (V{2, 3, 4, 5, 6, 7}));
}

// BIRKernel: srcs_shape [[6]] and dsts_shape [[3, 2]] reshape the operands; its attribute lower_bound 0.5 reaches the
// kernel in "fields": out = x + 0.5 = 1.5 .. 6.5 in walk order.
TEST(OpsKernel, BIRKernelReshapesOperandsAndPassesItsAttributes) {
  ConfigLog log;
  Builder b("birkernel.bir.json");
  auto x = b.sbuf("x", {2, 3}), y = b.sbuf("y", {2, 3});
  b.add(InstructionType::BIRKernel, {P(x.all())}, {P(y.all())})
      .kernel_name("add_lower_bound")
      .srcs_shape({{6}})
      .dsts_shape({{3, 2}})
      .lower_bound(0.5)
      .is_causal(true);
  isa::Program p = b.finish();
  sim::Simulator s(p, kernel_opts());
  write(s, x, kX);
  s.run();
  EXPECT_EQ(read(s, y), (V{1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f}));
  const auto cfgs = log.configs();
  ASSERT_EQ(cfgs.size(), 1u);
  EXPECT_EQ(cfgs[0]["opcode"], "BIRKernel");
  EXPECT_EQ(cfgs[0]["kernel_name"], "add_lower_bound");
  EXPECT_EQ(cfgs[0]["inputs"][0]["shape"], json::array({6}));
  EXPECT_EQ(cfgs[0]["outputs"][0]["shape"], json::array({3, 2}));
  EXPECT_EQ(cfgs[0]["fields"]["lower_bound"], 0.5);
  EXPECT_EQ(cfgs[0]["fields"]["is_causal"], true);
  EXPECT_EQ(cfgs[0]["fields"]["dsts_shape"], json::parse("[[3, 2]]"));
}

// Without --kernel-sim the run is refused before it starts, naming the instruction and the kernel-name field; the
// engine semantics on their own say the same.
TEST(OpsKernel, MissingKernelSimIsRefusedBeforeTheRun) {
  CustomProgram c("add_one");
  try {
    sim::Simulator s(c.p, {});
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().file, "custom.bir.json");
    EXPECT_EQ(e.context().inst_index, 0);
    EXPECT_EQ(e.context().inst_name, "I-1");
    EXPECT_EQ(e.context().field, "opFunctionName");
    EXPECT_EQ(e.message(), "CustomOp 'add_one' runs an external kernel: pass --kernel-sim PROG");
    EXPECT_EQ(e.exit_code(), 3);
  }
  Harness h;
  auto x = h.b.sbuf("x", {1, 2});
  h.b.add(InstructionType::BIRKernel, {P(x.all())}, {P(x.all())}).kernel_name("k");
  h.place();
  try {
    h.run();
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "kernel_name");
    EXPECT_EQ(e.message(), "BIRKernel 'k' runs an external kernel: pass --kernel-sim PROG");
  }
  // Last: once SystemC has run in this process, an exception thrown afterwards trips ASan's stack bookkeeping
  // (Debian's SystemC coroutines carry no sanitizer annotations; .ci/run).
  sim::RunOptions timing;
  timing.timing_only = true;
  EXPECT_EQ(sim::Simulator(c.p, timing).run().dynamic_instructions, 1);  // timing needs no kernel program
}

TEST(OpsKernel, KernelProgramThatDoesNotExistIsRefusedBeforeTheRun) {
  CustomProgram c("add_one");
  for (const std::string prog : {"/nonexistent/kernel_sim", "neuronsim-no-such-kernel-sim"}) {
    try {
      sim::Simulator s(c.p, kernel_opts(prog));
      FAIL() << prog;
    } catch (const SemanticError &e) {
      EXPECT_EQ(e.context().field, "opFunctionName");
      EXPECT_NE(e.message().find("'" + prog + "'"), std::string::npos) << e.message();
    }
  }
}

// The failure kernels: each is a SimulationError (exit 4) naming the instruction and field, the output is left as it
// was, and the temporary directory is removed.
TEST(OpsKernel, KernelProgramFailuresAreReportedAndCleanedUp) {
  struct Case {
    std::string kernel, field, message;
  };
  const Case cases[] = {
      {"fail3", "opFunctionName",
       "CustomOp 'fail3': the kernel program '" + kKernelSim + "' exited with code 3: kernel_sim: deliberate failure"},
      {"no_output", "outs[0]",
       "CustomOp 'no_output': the kernel program '" + kKernelSim + "' exited 0 but wrote no out0.npy"},
      {"wrong_shape", "outs[0]", "CustomOp 'wrong_shape': out0.npy has shape [1], expected [2, 3] (the output access)"},
      {"wrong_dtype", "outs[0]", "CustomOp 'wrong_dtype': out0.npy: "},
  };
  for (const auto &k : cases) {
    SCOPED_TRACE(k.kernel);
    ConfigLog log;
    CustomProgram c(k.kernel);
    sim::Simulator s(c.p, kernel_opts());
    write(s, c.x, kX);
    write(s, c.y, {9, 9, 9, 9, 9, 9});
    try {
      s.run();
      FAIL();
    } catch (const SimulationError &e) {
      EXPECT_EQ(e.exit_code(), 4);
      EXPECT_EQ(e.context().file, "custom.bir.json");
      EXPECT_EQ(e.context().inst_index, 0);
      EXPECT_EQ(e.context().inst_name, "I-1");
      EXPECT_EQ(e.context().field, k.field);
      EXPECT_EQ(e.message().substr(0, k.message.size()), k.message) << e.message();
    }
    EXPECT_EQ(read(s, c.y), (V{9, 9, 9, 9, 9, 9}));
    const auto cfgs = log.configs();
    ASSERT_EQ(cfgs.size(), 1u);
    EXPECT_FALSE(fs::exists(fs::path(cfgs[0]["inputs"][0]["path"].get<std::string>()).parent_path()));
  }
}

// An int32 file for a float32 output: the dtype rule of npy.hpp names both dtypes.
TEST(OpsKernel, WrongOutputDtypeNamesBothDtypes) {
  CustomProgram c("wrong_dtype");
  sim::Simulator s(c.p, kernel_opts());
  write(s, c.x, kX);
  try {
    s.run();
    FAIL();
  } catch (const SimulationError &e) {
    EXPECT_NE(e.message().find("int32"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("float32"), std::string::npos) << e.message();
  }
}

// srcsShape must describe as many elements as the operand accesses (6 here, not 4).
TEST(OpsKernel, DeclaredShapeWithTheWrongElementCountIsRefused) {
  Harness h;
  h.arch = engines::builtin_arch("trn1");
  auto x = h.b.sbuf("x", {2, 3});
  h.b.add(InstructionType::CustomOp, {P(x.all())}, {P(x.all())}).op_function_name("add_one").srcs_shape_custom({{2, 2}});
  h.place();
  engines::HostEnv host;
  host.kernel_sim = kKernelSim;
  h.mem->set_host(&host);
  try {
    h.run();
    FAIL();
  } catch (const SemanticError &e) {
    EXPECT_EQ(e.context().field, "srcsShape[0]");
    EXPECT_EQ(e.message(), "[2, 2] holds 4 elements but ins[0] accesses 6");
  }
}

// The CLI: a BIR JSON file with a DRAM input x, Load -> CustomOp add_one -> Save into the output y.
TEST(OpsKernel, CustomOpThroughTheCli) {
  Builder b("cli");
  auto x = b.input("x", {2, 3}), y = b.output("y", {2, 3});
  auto t = b.sbuf("t", {2, 3}), u = b.sbuf("u", {2, 3});
  b.add(InstructionType::Load, {P(x.all())}, {P(t.all())});
  b.add(InstructionType::CustomOp, {P(t.all())}, {P(u.all())}).op_function_name("add_one");
  b.add(InstructionType::Save, {P(u.all())}, {P(y.all())});
  const isa::Program p = b.finish();
  const std::string dir = clitest::temp_dir();
  {
    std::ofstream f(dir + "/k.bir.json");
    f << isa::to_bir_json(p).dump(1);
  }
  io::write_npy(dir + "/x.npy", engines::npy_from_f32(kX, {2, 3}));
  const std::string base = dir + "/k.bir.json --input x=" + dir + "/x.npy --outdir " + dir + "/out";
  auto r = clitest::run("run " + base + " --kernel-sim " + kKernelSim);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(engines::npy_to_f32(io::read_npy(dir + "/out/y.npy")), (V{2, 3, 4, 5, 6, 7}));

  r = clitest::run("run " + base);
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "neuronsim: " + dir +
                       "/k.bir.json: instruction 1 'I-2' field 'opFunctionName': CustomOp 'add_one' runs an external "
                       "kernel: pass --kernel-sim PROG\n");
  r = clitest::run("run " + base + " --kernel-sim");
  EXPECT_EQ(r.code, 2) << r.err;
  fs::remove_all(dir);
}

// x = 1 2.5 -3 / 4 0.1 6: one line, the prefix, the values nested by [2, 3] (0.1 in its shortest fp32 form), the
// instruction name, dtype and shape.
TEST(OpsDevicePrint, PrintsPrefixValuesNameAndShapeToTheSink) {
  Builder b("print");
  auto x = b.sbuf("x", {2, 3});
  auto n = b.sbuf("n", {1, 3}, Dtype::int32);
  b.add(InstructionType::DevicePrint, {P(x.all())}, {}).prefix("x =");
  b.add(InstructionType::DevicePrint, {P(n.all())}, {}).prefix("n:");
  b.add(InstructionType::DevicePrint, {P(n.tile(0, 1, 1, 1))}, {});  // no prefix
  isa::Program p = b.finish();
  std::vector<std::string> lines;
  sim::RunOptions o;
  o.device_print = [&](const std::string &l) { lines.push_back(l); };
  sim::Simulator s(p, o);
  write(s, x, {1, 2.5f, -3, 4, 0.1f, 6});
  write(s, n, {1, -2, 3});
  s.run();
  EXPECT_EQ(lines, (std::vector<std::string>{"x = [[1, 2.5, -3], [4, 0.1, 6]] (I-1: float32 [2, 3])",
                                             "n: [[1, -2, 3]] (I-2: int32 [1, 3])",
                                             "[[-2]] (I-3: int32 [1, 1])"}));

  // Positional for decimal exponents in [-4, 16), scientific outside (Python's repr rule), fewest digits that
  // read back: 10 and 1200 whole (not 1e+01, 1.2e+03), 0.0001 (exponent -4), 1e-05 (-5), 16777216 = 2^24
  // exactly, 1e+16 (exponent 16), and 0.1f's 9-digit value is not needed: "0.1" reads back as it.
  lines.clear();
  {
    Builder c("print");
    auto y = c.sbuf("y", {1, 7});
    c.add(InstructionType::DevicePrint, {P(y.all())}, {});
    isa::Program q = c.finish();
    sim::Simulator u(q, o);
    write(u, y, {10, 1200, 0.0001f, 0.00001f, 16777216.0f, 1e16f, -0.1f});
    u.run();
  }
  EXPECT_EQ(lines, (std::vector<std::string>{"[[10, 1200, 0.0001, 1e-05, 16777216, 1e+16, -0.1]] (I-1: float32 [1, 7])"}));
  lines.clear();

  // Timing-only runs execute no semantics: nothing is printed.
  lines.clear();
  o.timing_only = true;
  sim::Simulator t(p, o);
  t.run();
  EXPECT_TRUE(lines.empty());
}

// In a loop over the 2 rows of x (1 2 3 / 4 5 6), one line per iteration, in order.
TEST(OpsDevicePrint, OneLinePerIterationOfALoop) {
  Builder b("print_loop");
  auto x = b.sbuf("x", {2, 3});
  b.loop("i", 0, 2, 1, [&](builder::Aff i) { b.add(InstructionType::DevicePrint, {P(x.tile(i, 1, 0, 3))}, {}).prefix("row"); });
  isa::Program p = b.finish();
  std::vector<std::string> lines;
  sim::RunOptions o;
  o.device_print = [&](const std::string &l) { lines.push_back(l); };
  sim::Simulator s(p, o);
  write(s, x, kX);
  s.run();
  EXPECT_EQ(lines, (std::vector<std::string>{"row [[1, 2, 3]] (I-1: float32 [1, 3])",
                                             "row [[4, 5, 6]] (I-1: float32 [1, 3])"}));
}

// The CLI prints the lines on stdout after the run header and before the summary, or into --device-print FILE.
TEST(OpsDevicePrint, CliStdoutOrFile) {
  Builder b("cli_print");
  auto x = b.input("x", {2, 3}), y = b.output("y", {2, 3});
  auto t = b.sbuf("t", {2, 3});
  b.add(InstructionType::Load, {P(x.all())}, {P(t.all())});
  b.add(InstructionType::DevicePrint, {P(t.all())}, {}).prefix("t");
  b.add(InstructionType::Save, {P(t.all())}, {P(y.all())});
  const isa::Program p = b.finish();
  const std::string dir = clitest::temp_dir();
  {
    std::ofstream f(dir + "/k.bir.json");
    f << isa::to_bir_json(p).dump(1);
  }
  io::write_npy(dir + "/x.npy", engines::npy_from_f32(kX, {2, 3}));
  const std::string base = "run " + dir + "/k.bir.json --input x=" + dir + "/x.npy --outdir " + dir + "/out";
  const std::string line = "t [[1, 2, 3], [4, 5, 6]] (I-2: float32 [2, 3])\n";
  auto r = clitest::run(base);
  ASSERT_EQ(r.code, 0) << r.err;
  // The run header is printed when the run starts (issue 16), the lines as they happen, then the summary.
  EXPECT_EQ(r.out.rfind("neuronsim run:", 0), 0u) << r.out;
  EXPECT_LT(r.out.find(line), r.out.find("simulated time:")) << r.out;
  EXPECT_NE(r.out.find(line), std::string::npos) << r.out;

  r = clitest::run(base + " --device-print " + dir + "/prints.txt");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("[[1, 2, 3]"), std::string::npos) << r.out;
  EXPECT_EQ(clitest::read_file(dir + "/prints.txt"), line);

  // --timing-only takes no --input (it would ignore it): the same kernel without one.
  r = clitest::run("run " + dir + "/k.bir.json --timing-only");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("[[1, 2, 3]"), std::string::npos) << r.out;

  r = clitest::run(base + " --device-print " + dir + "/no/such/dir/p.txt");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.err.find("no/such/dir/p.txt"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// The estimate of engines/cost/cost.cpp on trn1 (DMA 16 x 17 = 272 B/ns, latency 850 ns, Pool 1.4 GHz): a CustomOp
// moving 24 + 24 bytes occupies Pool 850 + 48/272 ns; a DevicePrint of 24 bytes occupies SP 850 + 24/272 ns.
TEST(OpsKernel, CostEstimateIsOneDmaTransferOfTheOperands) {
  Harness h;
  h.arch = engines::builtin_arch("trn1");
  auto x = h.b.sbuf("x", {2, 3}), y = h.b.sbuf("y", {2, 3});
  h.b.add(InstructionType::CustomOp, {P(x.all())}, {P(y.all())}).op_function_name("add_one");
  h.b.add(InstructionType::DevicePrint, {P(x.all())}, {}).prefix("x");
  h.place();
  const auto c = engines::instruction_cost(dyn(h.prog, 0), isa::Engine::Pool, h.arch, *h.mem);
  EXPECT_DOUBLE_EQ(c.ns, 850.0 + 48.0 / 272.0);
  EXPECT_EQ(c.cycles, static_cast<int64_t>((850.0 + 48.0 / 272.0) * 1.4 + 0.5));
  EXPECT_GT(c.latency_ns, 0.0);
  const auto p = engines::instruction_cost(dyn(h.prog, 1), isa::Engine::SP, h.arch, *h.mem);
  EXPECT_DOUBLE_EQ(p.ns, 850.0 + 24.0 / 272.0);
  EXPECT_EQ(p.latency_ns, 0.0);
}

// `neuronsim isa --json` says the three types execute.
TEST(OpsKernel, IsaDumpSaysTheyExecute) {
  for (auto t : {InstructionType::CustomOp, InstructionType::BIRKernel, InstructionType::DevicePrint})
    EXPECT_TRUE(engines::executes(t)) << isa::inst_type_name(t);
  auto r = clitest::run("isa --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  for (int i : {53, 54, 57}) EXPECT_EQ(j["instruction_types"][i]["executes"], true) << i;
}
