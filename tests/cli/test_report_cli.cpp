// `neuronsim report` and `run --report` (docs/profiling.md): the page embeds the run's analysis and timeline
// and nothing from the network; a sweep's CSV becomes its table's data; what cannot be drawn is refused by
// name. (The pages are loaded in a real browser by tests/python/test_report.py.)
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

// The helpers below live in namespace test_report_cli, so this file shares a unity batch with
// the other tests of its target without its file-local names clashing with theirs
// (docs/dev/build-time.md).
namespace test_report_cli {

using clitest::run;
using nlohmann::json;

namespace {
const std::string kKernel1 = clitest::src("workloads/kernel1");

// The JSON the page carries (between its data script's tags; "<\/" back to "</").
json page_data(const std::string &html) {
  const std::string open = "<script type=\"application/json\" id=\"data\">";
  const auto a = html.find(open) + open.size(), b = html.find("</script>", a);
  std::string text = html.substr(a, b - a);
  for (size_t p; (p = text.find("<\\/")) != std::string::npos;)
    text.replace(p, 3, "</");
  return json::parse(text);
}
} // namespace

TEST(ReportCli, ARunsPageCarriesItsAnalysisTimelineAndTopInstructions) {
  const std::string dir = clitest::temp_dir();
  auto r = run("run " + kKernel1 + " --timing-only --report " + dir + "/k.html --stats " + dir +
               "/s.json --trace " + dir + "/t.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("report: " + dir + "/k.html"), std::string::npos) << r.out;
  const std::string html = clitest::read_file(dir + "/k.html");
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos); // no script or image loaded from anywhere
  const json d = page_data(html);
  EXPECT_EQ(d["kind"], "run");
  EXPECT_EQ(d["analysis"]["verdict"]["kind"], "dma-latency");
  // The five engines (idle ones too), the two DMA queues' ring slots -- the load's on SP's qSyncIO0, the store's
  // on GpSimd's qGpSimdIO1 (a store naming no engine triggers from GpSimd, docs/timing-model.md 2.4) -- and the
  // two DMA engines that worked (rows 0-7 and 8-9 of the [10, 10] tile); 9 slices: 2 triggers (SP, POOL), DVE,
  // 2 transfers, and 2 per transfer on the engines.
  EXPECT_EQ(d["timeline"]["tracks"], (json{"PE", "ACT", "POOL", "DVE", "SP", "qSyncIO0 ring 0",
                                           "qGpSimdIO1 ring 0", "DMA engine 0", "DMA engine 1"}));
  EXPECT_EQ(d["timeline"]["slices"].size(), 9u);
  EXPECT_EQ(d["top"][0]["file"], "/home/ec2-user/bug/kernel1.py");
  // The same page from the files: the same data.
  auto again = run("report " + dir + "/s.json " + dir + "/t.json -o " + dir + "/k2.html");
  ASSERT_EQ(again.code, 0) << again.err;
  json d2 = page_data(clitest::read_file(dir + "/k2.html"));
  EXPECT_EQ(d2["timeline"], d["timeline"]);
  EXPECT_EQ(d2["analysis"], d["analysis"]);
}

TEST(ReportCli, ASweepsCsvBecomesTheTablesData) {
  const std::string dir = clitest::temp_dir();
  std::ofstream(dir + "/r.csv") << "kernel,path,arch,status,total_ns,bottleneck\n"
                                   "\"a,1\",/x,trn1,ok,1000.5,DMA\n"
                                   "\"a,1\",/x,\"trn2+{pe_ghz=3,sp_ghz=2}\",error,,\n";
  auto r = run("report " + dir + "/r.csv -o " + dir + "/s.html");
  ASSERT_EQ(r.code, 0) << r.err;
  const json d = page_data(clitest::read_file(dir + "/s.html"));
  EXPECT_EQ(d["archs"], (json{"trn1", "trn2+{pe_ghz=3,sp_ghz=2}"}));
  EXPECT_EQ(d["baseline"], "trn1");
  EXPECT_EQ(d["runs"][0]["kernel"], "a,1");
  EXPECT_EQ(d["runs"][0]["total_ns"], 1000.5);
  EXPECT_TRUE(d["runs"][1]["total_ns"].is_null());
  auto base = run("report " + dir + "/r.csv -o " + dir + "/s.html --baseline trn3");
  EXPECT_EQ(base.code, 2);
  EXPECT_NE(base.err.find("--baseline trn3 is not an arch of"), std::string::npos) << base.err;
  std::ofstream(dir + "/bad.csv") << "kernel,arch,status,total_ns\na,trn1,ok\n";
  auto bad = run("report " + dir + "/bad.csv -o " + dir + "/b.html");
  EXPECT_EQ(bad.code, 3);
  EXPECT_NE(bad.err.find("row 2 has 3 fields, the header 4"), std::string::npos) << bad.err;
}

TEST(ReportCli, RefusesWhatItCannotDraw) {
  const std::string dir = clitest::temp_dir();
  std::ofstream(dir + "/x.json") << "{\"total_ns\": 1}";
  auto old = run("report " + dir + "/x.json -o " + dir + "/x.html");
  EXPECT_EQ(old.code, 3);
  EXPECT_NE(old.err.find("not a --stats document of this version"), std::string::npos) << old.err;
  EXPECT_EQ(run("report -o " + dir + "/x.html").code, 2);
  EXPECT_EQ(run("report " + dir + "/x.json").code, 2); // no -o
  auto over = run("report " + dir + "/x.json -o " + dir + "/x.json");
  EXPECT_EQ(over.code, 3);
  EXPECT_EQ(clitest::read_file(dir + "/x.json"), "{\"total_ns\": 1}"); // the input is untouched
}

}  // namespace test_report_cli
