// include/neuronsim/sim/session.hpp (the headers it includes): what `neuronsim run|encode|validate` and the
// Python module share. kernel1 is real compiler output computing b = a - 1.0 on a [10, 10] fp32 tile
// (workloads/kernel1); tensor_add states rtol = atol = 0 in its tolerance.json.
#include <gtest/gtest.h>

#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "neuronsim/error.hpp"
#include "neuronsim/engines/npy_dtype.hpp"
#include "neuronsim/io/npy.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/sim/session.hpp"

// The helpers below live in namespace test_session, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_session {

namespace fs = std::filesystem;
using namespace neuronsim;

namespace {

const std::string kK1 = std::string(NEURONSIM_SOURCE_DIR) + "/workloads/kernel1";

struct TempDir {
  std::string path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "neuronsim-session-XXXXXX").string();
    path = mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

template <typename F> std::string error_of(F f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

TEST(Session, KernelFormsAndTheirFolders) {
  const sim::Kernel k = sim::load_kernel(kK1);
  EXPECT_EQ(k.label, kK1 + "/kernel1.bir.json");
  EXPECT_EQ(k.inputs_dir, kK1 + "/inputs");
  EXPECT_EQ(k.expected_dir, kK1 + "/expected");
  EXPECT_EQ(k.tolerance_file, "");
  EXPECT_FALSE(k.streams);
  EXPECT_EQ(k.program.insts.size(), 3u); // Load, TensorScalarPtr, Save

  TempDir d;
  const std::string s = d.path + "/s";
  sim::encode_kernel(k, isa::CoreGen::V3, "trn2", s);
  const sim::Kernel streams = sim::load_kernel(s);
  ASSERT_TRUE(streams.streams);
  EXPECT_EQ(*streams.streams, isa::CoreGen::V3);
  EXPECT_EQ(streams.label, s + " (bundle streams, v3)");
  EXPECT_EQ(error_of([&] { sim::load_kernel(s, sim::KernelForms::BirOnly); }),
            s + ": a workload directory must hold exactly one *.bir.json file (found 0)");
  EXPECT_EQ(error_of([&] { sim::load_kernel(d.path + "/none"); }),
            d.path + "/none: no such file or directory");
}

TEST(Session, SettingsComeFromTheKernelUnlessGiven) {
  const sim::Kernel k1 = sim::load_kernel(kK1);
  sim::RunSettings s;
  s.options.arch.clear();
  sim::complete_settings(k1, s);
  EXPECT_EQ(s.options.arch, "trn1");
  EXPECT_EQ(s.inputs.dir, kK1 + "/inputs");
  ASSERT_TRUE(s.expect);
  EXPECT_EQ(s.expect->dir, kK1 + "/expected");
  EXPECT_EQ(*s.rtol, 1e-5);
  EXPECT_EQ(*s.atol, 1e-6);

  const sim::Kernel add = sim::load_kernel(std::string(NEURONSIM_SOURCE_DIR) + "/workloads/tensor_add");
  sim::RunSettings t;
  sim::complete_settings(add, t);
  EXPECT_EQ(*t.rtol, 0.0); // tolerance.json
  EXPECT_EQ(*t.atol, 0.0);
  sim::RunSettings u;
  u.rtol = 1e-3; // one given: the file is not read, the other is the default
  sim::complete_settings(add, u);
  EXPECT_EQ(*u.rtol, 1e-3);
  EXPECT_EQ(*u.atol, 1e-6);

  TempDir d;
  sim::encode_kernel(k1, isa::CoreGen::V4, "trn3", d.path + "/s");
  sim::RunSettings v;
  v.options.arch.clear();
  sim::complete_settings(sim::load_kernel(d.path + "/s"), v);
  EXPECT_EQ(v.options.arch, "trn3"); // v4 = trn3
  EXPECT_FALSE(v.expect);            // no expected/ next to streams
}

TEST(Session, InputsAndExpectedValuesInMemory) {
  const sim::Kernel k = sim::load_kernel(kK1 + "/kernel1.bir.json");
  // The refusals first: an exception after a SystemC run in the process trips CI's ASan pass (.ci/run).
  sim::RunSettings wrong;
  wrong.inputs.arrays["a"] = engines::npy_from_f32(std::vector<float>(25), {5, 5});
  sim::complete_settings(k, wrong);
  EXPECT_EQ(error_of([&] { sim::run_kernel(k, wrong); }),
            "inputs['a']: field 'shape': input 'a' has shape [5, 5], the kernel declares [10, 10] (shapes must "
            "match exactly; reshape the array)");
  sim::RunSettings typo;
  typo.expect = sim::ExpectSpec{"", {{"c", engines::npy_from_f32({1}, {1})}}};
  EXPECT_EQ(error_of([&] { sim::complete_settings(k, typo); }),
            "expect['c']: the kernel has no output tensor named 'c' (its outputs: 'b')");

  std::vector<float> a(100);
  for (int i = 0; i < 100; ++i)
    a[static_cast<size_t>(i)] = static_cast<float>(i);
  sim::RunSettings s;
  s.inputs.arrays["a"] = engines::npy_from_f32(a, {10, 10});
  std::vector<float> want(100);
  for (int i = 0; i < 100; ++i)
    want[static_cast<size_t>(i)] = static_cast<float>(i) - 1.0f; // b = a - 1
  want[42] += 0.5f;
  s.expect = sim::ExpectSpec{"", {{"b", engines::npy_from_f32(want, {10, 10})}}};
  sim::complete_settings(k, s);
  sim::Run r = sim::run_kernel(k, s);
  EXPECT_EQ(r.input_lines, (std::vector<std::string>{"a: inputs['a']"}));
  std::vector<std::string> checked;
  const auto bad = sim::check_outputs(k, r, s, &checked);
  EXPECT_EQ(checked, (std::vector<std::string>{"b"}));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].index, 42);
  EXPECT_EQ(bad[0].got, 41.0);  // 42 - 1
  EXPECT_EQ(bad[0].want, 41.5); // the planted error
  EXPECT_EQ(sim::mismatch_line(bad[0], *s.rtol, *s.atol),
            "MISMATCH b[42]: got 41, expected 41.5 (rtol 1e-05, atol 1e-06)");
}

TEST(Session, Texts) {
  EXPECT_EQ(error_of([] { sim::parse_arch("trn9", "--arch"); }),
            "--arch takes trn1, trn2, trn3 or an architecture FILE.json, got 'trn9' (did you mean 'trn1'?)");
  EXPECT_EQ(error_of([] { sim::parse_gen("v5", "gen"); }),
            "gen takes v2, v3 or v4, got 'v5' (did you mean 'v2'?)");
  EXPECT_EQ(sim::parse_gen("V3", "--gen"), isa::CoreGen::V3);
  try {
    sim::parse_arch("x", "--arch");
  } catch (const Error &e) {
    EXPECT_EQ(e.exit_code(), 2); // UsageError
  }
  EXPECT_EQ(sim::one_line("a\nb\xff\xc3\xa9"), "a\\x0Ab\\xFF\xc3\xa9"); // é (C3 A9) is valid UTF-8: kept
  sim::Mismatch missing{"b", -1, 0, 0, "no expected file x/b.npy"};
  EXPECT_EQ(sim::mismatch_line(missing, 0, 0), "MISMATCH b: no expected file x/b.npy");
  sim::ValidateReport r;
  r.lint = {"lint: one"};
  r.notes = {"two"};
  r.divergence = "three";
  r.summary = "validate: DIFFER: four";
  EXPECT_EQ(sim::report_text(r), "lint: one\nnote: two\ndivergence: three\nvalidate: DIFFER: four\n");
}

namespace {
// Every event of a trace document, each as its compact JSON text (keys sorted by nlohmann), sorted: two traces
// with the same events compare equal whatever order they were written in.
std::vector<std::string> trace_events(const nlohmann::json &doc) {
  std::vector<std::string> v;
  for (const auto &e : doc.at("traceEvents")) v.push_back(e.dump());
  std::sort(v.begin(), v.end());
  return v;
}
} // namespace

// --trace is written as the run goes (sim::TraceWriter on RunOptions::on_event / on_dma_slices). Its events are the
// ones trace_json() builds after a run that kept all its events and DMA-engine slices (the two share the writer,
// but the streamed one sees the events and slices interleaved as the core fixes them). matmul_blocked_mnk has
// loops, 16 DMA queues and round-robin DMA-engine slices.
TEST(Session, TheStreamedTraceHasTheEventsOfTheWholeRun) {
  const sim::Kernel k = sim::load_kernel(std::string(NEURONSIM_SOURCE_DIR) + "/workloads/matmul_blocked_mnk");
  TempDir d;
  sim::RunSettings s;
  s.options.timing_only = true;
  sim::complete_settings(k, s);
  s.trace = d.path + "/t.json";
  const sim::Run streamed = sim::run_kernel(k, s);
  EXPECT_TRUE(streamed.result.dma_slices.empty());  // they went to the trace as the run fixed them
  std::ifstream f(s.trace);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find('\n'), text.size() - 1);  // compact: one line
  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc.at("displayTimeUnit"), "ns");

  sim::RunOptions o = s.options;
  o.record_dma_engine_slices = true;
  sim::Simulator whole(k.program, o);
  const sim::RunResult r = whole.run();
  ASSERT_FALSE(r.dma_slices.empty());
  EXPECT_EQ(r.total_ns, streamed.result.total_ns);
  const auto want = trace_events(sim::trace_json(r, whole.schedule(), k.program));
  EXPECT_EQ(trace_events(doc), want);
  size_t engine_slices = 0, flows = 0;
  for (const auto &e : doc["traceEvents"]) {
    engine_slices += e["ph"] == "X" && e["tid"].get<int>() >= 10000;
    flows += e["ph"] == "s";
  }
  EXPECT_EQ(engine_slices, r.dma_slices.size());
  EXPECT_GT(flows, 0u);
}

// A run that fails leaves neither the trace nor the temporary it was being streamed into: one stopped by
// --max-instructions while its run-time branches are followed (before the core starts), and one that deadlocks in
// the core after recording events (the bundle streams of tests/cli/bad_inputs/bundle_deadlock).
TEST(Session, ARunStoppedByTheInstructionLimitLeavesNoTraceFile) {
  const sim::Kernel k =
      sim::load_kernel(std::string(NEURONSIM_SOURCE_DIR) + "/tests/cli/bad_inputs/max_instructions_runaway_branch.bir.json");
  TempDir d;
  sim::RunSettings s;
  s.options.timing_only = true;
  s.options.max_instructions = 1000;
  sim::complete_settings(k, s);
  s.trace = d.path + "/t.json";
  EXPECT_NE(error_of([&] { sim::run_kernel(k, s); }).find("more than 1000 dynamic instructions"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(d.path));
}

TEST(Session, ADeadlockedRunLeavesNoTraceFile) {
  const sim::Kernel k = sim::load_kernel(std::string(NEURONSIM_SOURCE_DIR) + "/tests/cli/bad_inputs/bundle_deadlock");
  TempDir d;
  sim::RunSettings s;
  s.options.timing_only = true;
  sim::complete_settings(k, s);
  // The core records events before it starves: the trace had begun.
  sim::RunOptions o = s.options;
  int recorded = 0;
  o.on_event = [&](const sim::TraceEvent &, const sim::ScheduledInst &, const sim::RunResult &) { ++recorded; };
  EXPECT_NE(error_of([&] { sim::Simulator(k.program, o).run(); }).find("deadlock"), std::string::npos);
  EXPECT_GT(recorded, 0);
  s.trace = d.path + "/t.json";
  EXPECT_NE(error_of([&] { sim::run_kernel(k, s); }).find("deadlock"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(d.path));
}

// --max-instructions / max_instructions=: at least 1, named as the caller spells it.
TEST(Session, TheInstructionLimitIsAtLeastOne) {
  sim::RunSettings s;
  s.options.max_instructions = 0;
  EXPECT_EQ(error_of([&] { sim::check_settings(s); }), "--max-instructions needs an integer >= 1, got 0");
  s.names = sim::python_setting_names();
  EXPECT_EQ(error_of([&] { sim::check_settings(s); }), "max_instructions needs an integer >= 1, got 0");
}

}  // namespace test_session
