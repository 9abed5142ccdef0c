// isa::reread_program (isa/bir/writer.cpp, how neuronsim.builder's Kernel is read): the module written with each
// instruction's place held by its index, each instruction's JSON made when the reader comes to it. It must give
// what parse_bir(to_bir_json(p)) gives -- the same program, warnings and errors -- since it is the same reader.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "isa/bir_json_support.hpp"
#include "neuronsim/isa/file_input.hpp"

using namespace neuronsim;
using namespace neuronsim::isa;
using namespace bir_json_test;
using json = nlohmann::json;

namespace {

// Both readings of p: the whole document, and one instruction at a time. Each is the program or the error message.
struct Both {
  std::string whole_error, reread_error;
  Program whole, reread;
};

Both read_both(const Program &p) {
  Both b;
  try {
    b.whole = parse_bir(to_bir_json(p), "built.json");
  } catch (const Error &e) {
    b.whole_error = e.what();
  }
  try {
    b.reread = reread_program(p, "built.json");
  } catch (const Error &e) {
    b.reread_error = e.what();
  }
  return b;
}

void expect_same_reading(const Program &p, const std::string &what) {
  const Both b = read_both(p);
  EXPECT_EQ(b.whole_error, b.reread_error) << what;
  if (!b.whole_error.empty() || !b.reread_error.empty())
    return;
  expect_same_program(b.whole, b.reread);
  // Every field: the two programs write the same document, and carry the same warnings and loop variables.
  EXPECT_EQ(to_bir_json(b.whole), to_bir_json(b.reread)) << what;
  EXPECT_EQ(b.whole.warnings, b.reread.warnings) << what;
  EXPECT_EQ(b.whole.loop_vars, b.reread.loop_vars) << what;
  EXPECT_EQ(b.whole.file, b.reread.file) << what;
}

} // namespace

// Every valid BIR of the fuzz corpus and the workloads (loops, calls, DMA blocks and triggers, branches, register
// starts, collectives): read, then re-read both ways.
TEST(BirReread, SameProgramAsTheWholeDocument) {
  const std::string root = NEURONSIM_SOURCE_DIR;
  std::vector<std::string> files;
  for (const char *dir : {"/tests/fuzz/corpus/fuzz_bir_json", "/workloads", "/tests/cli/data"})
    for (const auto &e : std::filesystem::recursive_directory_iterator(root + dir))
      if (e.is_regular_file() && e.path().extension() == ".json" && e.path().filename() != "run.json")
        files.push_back(e.path().string());
  int read = 0;
  for (const auto &f : files) {
    Program p;
    try {
      p = read_bir_file(f);
    } catch (const Error &) {
      continue; // a corpus file the reader refuses (its own tests check the message)
    }
    ++read;
    expect_same_reading(p, f);
  }
  EXPECT_GE(read, 30); // the corpus and the workloads were found and read
}

// A built program the reader refuses is refused with the same message, naming the same instruction.
TEST(BirReread, SameErrorAsTheWholeDocument) {
  Program p = read_bir_file(kKernel1);
  ASSERT_GE(p.insts.size(), 2u);
  Program wrong_engine = p;
  wrong_engine.insts[1].engine = Engine::PE; // not an engine this type runs on
  const Both b = read_both(wrong_engine);
  EXPECT_NE(b.whole_error, "");
  EXPECT_NE(b.whole_error.find(p.insts[1].name), std::string::npos) << b.whole_error;
  EXPECT_EQ(b.whole_error, b.reread_error);

  Program bad_dependency = p;
  bad_dependency.insts[0].dependencies = {"no-such-instruction"};
  const Both d = read_both(bad_dependency);
  EXPECT_NE(d.whole_error.find("unknown dependency 'no-such-instruction'"), std::string::npos) << d.whole_error;
  EXPECT_EQ(d.whole_error, d.reread_error);
}
