// docs/bir-format.md stays true: its hand-written example is docs/examples/scale_shift.bir.json and computes
// what the page says; its tables of instruction keys and operand roles are rows of `neuronsim isa --keys` /
// `--roles` (isa/tables/inst_keys.def), its `--explain` example the command's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.hpp"
#include "neuronsim/engines/npy_dtype.hpp"
#include "neuronsim/io/npy.hpp"

using clitest::run;

namespace {
const std::string kDoc = clitest::src("docs/bir-format.md");
const std::string kExample = clitest::src("docs/examples/scale_shift.bir.json");

// The text between the line starting with `open` and the line `close`, without either.
std::string section(const std::string &text, const std::string &open, const std::string &close) {
  const auto a = text.find(open);
  if (a == std::string::npos) return "(no " + open + ")";
  const auto from = text.find('\n', a) + 1;
  const auto to = text.find(close, from);
  return to == std::string::npos ? "(no " + close + ")" : text.substr(from, to - from);
}
} // namespace

TEST(BirFormatDoc, TheExampleOnThePageIsTheFile) {
  const std::string doc = clitest::read_file(kDoc);
  EXPECT_EQ(section(doc, "<!-- example:", "<!-- /example -->"),
            "```json\n" + clitest::read_file(kExample) + "```\n");
}

TEST(BirFormatDoc, TheKeyRowsAreRowsOfTheIsaTable) {
  auto r = run("isa --keys");
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream table(r.out), page(section(clitest::read_file(kDoc), "<!-- keys:", "<!-- /keys -->"));
  std::string line, header;
  std::getline(table, header);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2 + 110);  // header, rule, the 110 types
  int rows = 0;
  while (std::getline(page, line)) {
    if (rows++ < 2) continue;  // the page's own header and rule
    EXPECT_NE(r.out.find("\n" + line + "\n"), std::string::npos) << "not a row of `neuronsim isa --keys`: " << line;
  }
  EXPECT_GE(rows, 2 + 5);
  // And the rows come from the same table as `isa --json`: TensorScalar's six required keys.
  const auto j = nlohmann::json::parse(run("isa --json").out);
  for (const auto &t : j["instruction_types"]) {
    if (t["name"] == "TensorScalar") {
      EXPECT_EQ(t["required_keys"], (nlohmann::json{"op0", "const0", "reverse0", "op1", "const1", "reverse1"}));
    }
  }
}

// The operand roles on the page are rows of `neuronsim isa --roles` (inst_keys.def's roles, which the engines
// read their operands by), and the Activation example is `isa --explain Activation` verbatim.
TEST(BirFormatDoc, TheRoleRowsAreRowsOfTheIsaTable) {
  auto r = run("isa --roles");
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream page(section(clitest::read_file(kDoc), "<!-- roles:", "<!-- /roles -->"));
  std::string line;
  int rows = 0;
  while (std::getline(page, line)) {
    if (rows++ < 2)
      continue;
    EXPECT_NE(r.out.find("\n" + line + "\n"), std::string::npos)
        << "not a row of `neuronsim isa --roles`: " << line;
  }
  EXPECT_GE(rows, 2 + 8);
  // The row the page's warning is about: Activation's scale comes before its bias.
  EXPECT_NE(
      r.out.find("| Activation | `data`, `scale?`, `bias?`, `alpha?`, `acc_seed?` | `dst`, `acc_out?` |"),
      std::string::npos)
      << r.out;
}

TEST(BirFormatDoc, TheExplainBlockIsTheCommandsOutput) {
  auto r = run("isa --explain Activation");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(section(clitest::read_file(kDoc), "<!-- explain:", "<!-- /explain -->"),
            "```\n" + r.out + "```\n");
}

TEST(BirFormatDoc, TheExampleComputesTwoXPlusOne) {
  const std::string dir = clitest::temp_dir();
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  neuronsim::io::write_npy(dir + "/x.npy", neuronsim::engines::npy_from_f32(x, {4, 8}, neuronsim::isa::Dtype::float32));
  auto r = run("run " + kExample + " --input x=" + dir + "/x.npy --outdir " + dir + "/out --stats " + dir +
               "/stats.json");
  ASSERT_EQ(r.code, 0) << r.err;
  const neuronsim::io::NpyArray y = neuronsim::io::read_npy(dir + "/out/y.npy");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{4, 8}));
  const float *v = reinterpret_cast<const float *>(y.data.data());
  for (int i = 0; i < 32; ++i) EXPECT_EQ(v[i], 2.0f * static_cast<float>(i) + 1.0f) << i;  // y = 2x + 1, exact
  // One DVE instruction of MIN_II = 64 cycles (sim/arch/trn1.json min_ii_cycles), at its source line 6.
  const auto s = nlohmann::json::parse(clitest::read_file(dir + "/stats.json"));
  EXPECT_EQ(s["engines"]["DVE"]["cycles"], 64);
  EXPECT_EQ(s["engines"]["DVE"]["instructions"], 1);
  bool found = false;
  for (const auto &row : s["profile"]["instructions"])
    if (row["name"] == "scale_shift") {
      found = true;
      EXPECT_EQ(row["file"], "scale_shift.py");
      EXPECT_EQ(row["line"], 6);
    }
  EXPECT_TRUE(found);
}
