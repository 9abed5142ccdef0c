// The input/output rules of sim/io.cpp, called as the CLI and the Python module call them: exact shapes and
// dtypes for arrays given in memory or as files, tensor names as file names, output paths checked before a run,
// files written in full or not at all, regular files only, bounded JSON.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "neuronsim/engines/memory.hpp"
#include "neuronsim/isa/bir_json.hpp"
#include "neuronsim/isa/file_input.hpp"
#include "neuronsim/isa/file_output.hpp"
#include "neuronsim/sim/io.hpp"
#include "neuronsim/engines/npy_dtype.hpp"
#include "neuronsim/io/npy.hpp"

using namespace neuronsim;
namespace fs = std::filesystem;

namespace {

const std::string kSample = std::string(NEURONSIM_SOURCE_DIR) + "/tests/isa/data/kernel1.bir.json";

// A fresh directory under the system temp dir, removed at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "neuronsim-io-XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string &f) const { return path + "/" + f; }
};

std::string message_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

io::NpyArray f32_array(std::vector<int64_t> shape, float v = 1.0f) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return engines::npy_from_f32(std::vector<float>(static_cast<size_t>(n), v), shape);
}

} // namespace

// kernel1: input a [10, 10] float32, output b [10, 10] float32.
TEST(IoRules, ArraysMustHaveTheTensorsExactShape) {
  const isa::Program p = isa::read_bir_file(kSample);
  const isa::Tensor &a = p.tensors[static_cast<size_t>(sim::input_tensor(p, "a", "test"))];
  EXPECT_NO_THROW(sim::check_array(a, {10, 10}, isa::Dtype::float32, "x.npy", "input"));
  // Same element count, other shape: refused, both shapes shown.
  EXPECT_EQ(message_of([&] { sim::check_array(a, {100}, isa::Dtype::float32, "x.npy", "input"); }),
            "x.npy: field 'shape': input 'a' has shape [100], the kernel declares [10, 10] (shapes must match "
            "exactly; reshape the array)");
  EXPECT_NE(message_of([&] { sim::check_array(a, {10, 10, 1}, isa::Dtype::float32, "x.npy", "input"); }), "");
  // float16 and the raw-bits rules of npy.hpp are dtypes the tensor takes; int32 is not.
  EXPECT_NO_THROW(sim::check_array(a, {10, 10}, isa::Dtype::float16, "x.npy", "input"));
  EXPECT_NE(message_of([&] { sim::check_array(a, {10, 10}, isa::Dtype::int32, "x.npy", "input"); })
                .find("an array of dtype int32 (<i4) cannot be used for a float32 tensor"),
            std::string::npos);
}

TEST(IoRules, TensorNamesResolveWithTheValidNamesListed) {
  const isa::Program p = isa::read_bir_file(kSample);
  EXPECT_EQ(message_of([&] { sim::input_tensor(p, "b", "--input"); }),
            "--input: 'b' is an output, not an input (its inputs: 'a')");
  EXPECT_EQ(message_of([&] { sim::input_tensor(p, "z", "--input"); }),
            "--input: the kernel has no input tensor named 'z' (its inputs: 'a')");
  EXPECT_EQ(message_of([&] { sim::output_tensor(p, "a", "x"); }), "x: 'a' is an input, not an output (its outputs: 'b')");
  EXPECT_GE(sim::output_tensor(p, "b_set", "x"), 0);  // the set name resolves too
}

TEST(IoRules, InMemoryInputsAndExpectationsUseTheSameChecks) {
  const isa::Program p = isa::read_bir_file(kSample);
  engines::Memory mem(p, engines::builtin_arch("trn1"));
  const int a = sim::input_tensor(p, "a", "t"), b = sim::output_tensor(p, "b", "t");
  EXPECT_NE(message_of([&] { sim::load_input(p, mem, a, f32_array({5, 20}), "inputs['a']"); }).find("shape [5, 20]"),
            std::string::npos);
  sim::load_input(p, mem, a, f32_array({10, 10}, 2.5f), "inputs['a']");
  EXPECT_EQ(sim::tensor_f32(p, mem, a)[99], 2.5f);
  // The output b as written by hand: 1.0 everywhere; compared with 1.0 (match) and 1.5 (worst element 0).
  std::vector<float> ones(100, 1.0f);
  mem.dram(b).resize(400);
  std::memcpy(mem.dram(b).data(), ones.data(), 400);
  EXPECT_FALSE(sim::compare_output(p, mem, b, f32_array({10, 10}, 1.0f), 0, 0, "want").has_value());
  const auto m = sim::compare_output(p, mem, b, f32_array({10, 10}, 1.5f), 0, 0.25, "want");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->index, 0);
  EXPECT_EQ(m->want, 1.5);
  EXPECT_NE(message_of([&] { sim::compare_output(p, mem, b, f32_array({100}), 0, 0, "want"); }).find("expected 'b'"),
            std::string::npos);
}

TEST(IoRules, TensorFileNamesNeverLeaveTheirDirectory) {
  EXPECT_EQ(sim::tensor_file_name("b"), "b.npy");
  EXPECT_EQ(sim::tensor_file_name("../escape"), ".._escape.npy");
  EXPECT_EQ(sim::tensor_file_name("/etc/passwd"), "_etc_passwd.npy");
  EXPECT_EQ(sim::tensor_file_name(".."), "_...npy");
  EXPECT_EQ(sim::tensor_file_name(""), "_.npy");
  EXPECT_EQ(sim::tensor_file_name(std::string("a\0b", 3)), "a_b.npy");
  EXPECT_EQ(sim::tensor_file_name("fn/x"), "fn_x.npy");
  EXPECT_THROW(sim::tensor_file_name(std::string(300, 'n')), InputError);
}

TEST(IoRules, OutputPathsAreCheckedBeforeARun) {
  TempDir d;
  std::ofstream(d / "kernel.json") << "{}";
  // An output that is an input (directly, or through a symlink) is refused; nothing is created or truncated.
  EXPECT_NE(message_of([&] { sim::prepare_output_paths({d / "out"}, {d / "kernel.json"}, {d / "kernel.json"}); })
                .find("an output would overwrite the input file"),
            std::string::npos);
  fs::create_symlink(d / "kernel.json", d / "link.json");
  EXPECT_THROW(sim::prepare_output_paths({}, {d / "link.json"}, {d / "kernel.json"}), InputError);
  EXPECT_FALSE(fs::exists(d / "out"));
  EXPECT_EQ(fs::file_size(d / "kernel.json"), 2u);
  // Two outputs naming one file; a directory named as a file; a directory under a regular file.
  EXPECT_THROW(sim::prepare_output_paths({}, {d / "s.json", d.path + "/./s.json"}, {}), InputError);
  EXPECT_NE(message_of([&] { sim::prepare_output_paths({}, {d.path}, {}); }).find("is a directory"), std::string::npos);
  EXPECT_NE(message_of([&] { sim::prepare_output_paths({d / "kernel.json/out"}, {}, {}); })
                .find("cannot create the output directory"),
            std::string::npos);
  // A file output's directory must exist; the output directory is created (and no probe file is left).
  EXPECT_NE(message_of([&] { sim::prepare_output_paths({}, {d / "stats/s.json"}, {}); }).find("does not exist"),
            std::string::npos);
  fs::create_directory(d / "stats");
  sim::prepare_output_paths({d / "out/deep"}, {d / "stats/s.json"}, {d / "kernel.json"});
  EXPECT_TRUE(fs::is_directory(d / "out/deep"));
  EXPECT_TRUE(fs::is_empty(d / "stats"));
  EXPECT_TRUE(fs::is_empty(d / "out/deep"));
}

TEST(IoRules, OutputFilesOfTheProgramCollideOrNot) {
  isa::Program p = isa::read_bir_file(kSample);
  const auto files = sim::output_files(p, "/o");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].second, "/o/b.npy");
  isa::Tensor t = p.tensors[static_cast<size_t>(files[0].first)];
  t.name = "b";  // a second output with the same file name
  t.set_name = "b2_set";
  p.tensors.push_back(t);
  EXPECT_NE(message_of([&] { sim::output_files(p, "/o"); }).find("would both be written as b.npy"), std::string::npos);
}

TEST(IoRules, AtomicFilesAreWrittenInFullOrNotAtAll) {
  TempDir d;
  std::ofstream(d / "f.txt") << "old";
  {
    isa::AtomicFile f(d / "f.txt");
    f.write(std::string("new content"));
    // Not committed (a run that failed): the destination keeps its content, the temporary goes.
  }
  std::ifstream in(d / "f.txt");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(s, "old");
  int files = 0;
  for (const auto &e : fs::directory_iterator(d.path)) ++files, (void)e;
  EXPECT_EQ(files, 1);
  isa::write_file_atomic(d / "f.txt", "new");
  std::ifstream in2(d / "f.txt");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>()), "new");
  EXPECT_NE(message_of([&] { isa::write_file_atomic(d / "f.txt/x", "y"); }).find("cannot create"), std::string::npos);
}

TEST(IoRules, OnlyRegularFilesAreRead) {
  TempDir d;
  ASSERT_EQ(::mkfifo((d / "fifo.npy").c_str(), 0644), 0);
  EXPECT_EQ(message_of([&] { io::read_npy(d / "fifo.npy"); }),
            d / "fifo.npy" + ": .npy file is a FIFO (named pipe), not a regular file");
  fs::create_symlink("/dev/zero", d / "zero.bir.json");
  EXPECT_NE(message_of([&] { isa::read_bir_file(d / "zero.bir.json"); }).find("kernel is a character device"),
            std::string::npos);
  EXPECT_NE(message_of([&] { io::read_npy(d.path); }).find("is a directory"), std::string::npos);
  // A file larger than the bound given (an input's tensor size) is refused before it is read.
  io::write_npy(d / "big.npy", f32_array({100, 100}));
  EXPECT_NE(message_of([&] { io::read_npy(d / "big.npy", 1000); }).find("more than the 1000"), std::string::npos);
}

TEST(IoRules, JsonIsParsedWithABoundedDepthAndNamedErrors) {
  EXPECT_EQ(isa::parse_json_text("[[[1]]]", "f", 3), nlohmann::json::parse("[[[1]]]"));
  EXPECT_EQ(message_of([&] { isa::parse_json_text("[[[[1]]]]", "f", 3); }),
            "f: field '[0][0][0]': JSON nested deeper than 3 levels (a deeper document is refused before it is read)");
  EXPECT_NE(message_of([&] { isa::parse_json_text(std::string(100000, '['), "f"); }).find("nested deeper than 512"),
            std::string::npos);  // no recursion on the input's depth: 10^5 levels are refused, not a stack overflow
  EXPECT_EQ(message_of([&] { isa::parse_json_text(R"({"a": [1, {"b": 1e400}]})", "f"); }),
            "f: field 'a[1].b': number '1e400' overflows a double (byte 21)");  // bytes read through the token
  EXPECT_NE(message_of([&] { isa::parse_json_text(R"({"a": })", "f"); }).find("malformed JSON (byte"), std::string::npos);
}

TEST(IoRules, TolerancesAreFiniteAndNonNegative) {
  EXPECT_NO_THROW(sim::check_tolerances(0, 1e-3, "t"));
  EXPECT_THROW(sim::check_tolerances(std::nan(""), 0, "t"), InputError);
  EXPECT_THROW(sim::check_tolerances(0, -1, "t"), InputError);
  EXPECT_THROW(sim::check_tolerances(INFINITY, 0, "t"), InputError);
}

// Expected files are checked from their headers before a run: shape, dtype, regular file, data size.
TEST(IoRules, ExpectedFilesAreCheckedBeforeTheRun) {
  TempDir d;
  const isa::Program p = isa::read_bir_file(kSample);
  io::write_npy(d / "b.npy", f32_array({10, 10}));
  const io::NpyArray head = io::read_npy_header(d / "b.npy");
  EXPECT_EQ(head.shape, (std::vector<int64_t>{10, 10}));
  EXPECT_EQ(head.dtype, isa::Dtype::float32);
  EXPECT_TRUE(head.data.empty());
  EXPECT_NO_THROW(sim::check_expected_files(p, d.path));
  io::write_npy(d / "b.npy", f32_array({100}));
  EXPECT_NE(message_of([&] { sim::check_expected_files(p, d.path); }).find("expected 'b' has shape [100]"),
            std::string::npos);
  // A header promising more data than the file holds is refused from the header read as from the full read.
  fs::resize_file(d / "b.npy", fs::file_size(d / "b.npy") - 4);
  EXPECT_NE(message_of([&] { io::read_npy_header(d / "b.npy"); }).find("truncated .npy data"), std::string::npos);
  fs::remove(d / "b.npy");
  EXPECT_NO_THROW(sim::check_expected_files(p, d.path));  // a missing expected file is a mismatch after the run
}
