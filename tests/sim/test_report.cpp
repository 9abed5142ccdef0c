// The report pages of sim/report.cpp robust to any text and any document: names that would end the page's
// script or comment it out are carried as escaped JSON (the page's data reads back as the same strings), and a
// malformed stats, trace or results document is an InputError naming the file and the key -- never a read past
// the document (this test runs in the sanitizer build too).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "neuronsim/error.hpp"
#include "neuronsim/sim/report.hpp"

using nlohmann::json;
using neuronsim::InputError;
using neuronsim::sim::run_report_html;
using neuronsim::sim::sweep_report_html;

namespace test_report {

// A --stats document as `neuronsim run --stats` writes it, cut down to the keys the page reads.
json stats_doc(const std::string &kernel) {
  return {{"kernel", kernel},
          {"arch", "trn1"},
          {"total_ns", 100.0},
          {"bottleneck", "DVE"},
          {"critical_path_ns", {{"DVE", 60.0}}},
          {"analysis", {{"verdict", {{"text", "compute-bound"}}}}},
          {"profile",
           {{"critical_path",
             {{"instructions",
               {{{"name", kernel}, {"opcode", "TensorTensor"}, {"engine", "DVE"}, {"executions", 1},
                 {"busy_ns", 60.0}, {"wait_total_ns", 0.0}, {"critical_path_ns", 60.0}, {"file", kernel},
                 {"line", 3}, {"dma_trigger", false}}}}}}}}};
}

json trace_doc() {
  return {{"traceEvents",
           {{{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", 3}, {"args", {{"name", "DVE"}}}},
            {{"ph", "X"}, {"name", "I-4"}, {"pid", 1}, {"tid", 3}, {"ts", 0.01}, {"dur", 0.06}}}}};
}

// The page's data element read back: the text between <script type="application/json" id="data"> and the
// first "</script>" after it.
json page_data(const std::string &html) {
  const std::string open = "<script type=\"application/json\" id=\"data\">";
  const auto at = html.find(open);
  EXPECT_NE(at, std::string::npos);
  const auto end = html.find("</script>", at);
  return json::parse(html.substr(at + open.size(), end - at - open.size()));
}

std::string error_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const InputError &e) {
    return e.what();
  }
  return "no error";
}

TEST(ReportPage, NamesThatWouldEndTheScriptReadBackWhole) {
  for (const std::string name : {"a</script><script>alert(1)</script>", "k<!--x", "k@DATA@x", "a&amp;<b>"}) {
    const std::string html = run_report_html(stats_doc(name), nullptr);
    const json d = page_data(html);
    EXPECT_EQ(d.at("kernel"), name);                      // the data parses whole
    EXPECT_EQ(d.at("top").at(0).at("name"), name);
    EXPECT_EQ(d.at("title"), "neuronsim report: " + name + " on trn1");
    EXPECT_EQ(html.find("<!--"), std::string::npos) << name;  // no comment opened anywhere in the page
    EXPECT_NE(html.find("<title>neuronsim report</title>"), std::string::npos);
    // The data element holds no '<', '>' or '&' at all: each is written as its \u escape.
    const auto at = html.find("id=\"data\">"), end = html.find("</script>", at);
    EXPECT_EQ(html.substr(at + 10, end - at - 10).find_first_of("<>&"), std::string::npos) << name;
  }
}

TEST(ReportPage, SweepPageNamesAndCells) {
  const std::string csv = "kernel,arch,status,total_ns\n</script>@DATA@,trn1,ok,12\n";
  const json d = page_data(sweep_report_html(csv, "r.csv", ""));
  EXPECT_EQ(d.at("runs").at(0).at("kernel"), "</script>@DATA@");
  EXPECT_EQ(d.at("runs").at(0).at("total_ns"), 12.0);
  // A cell that is not wholly a number is refused, not read as its leading digits.
  for (const std::string cell : {"12abc", " 12", "nan", "-3", "1e999", "0x10q"}) {
    const std::string e = error_of([&] {
      sweep_report_html("kernel,arch,status,total_ns\nk,trn1,ok," + cell + "\n", "r.csv", "");
    });
    EXPECT_NE(e.find("r.csv: field 'total_ns': row 2: '" + cell + "' is not a time in ns"), std::string::npos) << e;
  }
}

TEST(ReportPage, MalformedStatsNamesFileAndKey) {
  json s = stats_doc("k");
  s["profile"].erase("critical_path");
  EXPECT_NE(error_of([&] { run_report_html(s, nullptr, "s.json"); })
                .find("s.json: field 'profile.critical_path': missing"),
            std::string::npos);
  s = stats_doc("k");
  s["profile"]["critical_path"]["instructions"][0]["line"] = "ten";
  EXPECT_NE(error_of([&] { run_report_html(s, nullptr, "s.json"); })
                .find("field 'profile.critical_path.instructions[0].line': a --stats document needs a whole number "
                      "here, got \"ten\""),
            std::string::npos);
  s = stats_doc("k");
  s["kernel"] = 5;
  EXPECT_NE(error_of([&] { run_report_html(s, nullptr, "s.json"); }).find("field 'kernel'"), std::string::npos);
  s = stats_doc("k");
  s["analysis"]["dma_queues"] = {{{"name", "q"}, {"achieved_gbps", "fast"}, {"allowed_gbps", 1.0}}};
  EXPECT_NE(error_of([&] { run_report_html(s, nullptr, "s.json"); })
                .find("field 'analysis.dma_queues[0].achieved_gbps': a --stats document needs a number"),
            std::string::npos);
}

TEST(ReportPage, MalformedTraceNamesFileAndKey) {
  const json s = stats_doc("k");
  json t = trace_doc();
  t["traceEvents"][0].erase("args");
  EXPECT_NE(error_of([&] { run_report_html(s, &t, "s.json", "t.json"); })
                .find("t.json: field 'traceEvents[0].args': missing"),
            std::string::npos);
  t = trace_doc();
  t["traceEvents"][1]["tid"] = "3";
  EXPECT_NE(error_of([&] { run_report_html(s, &t, "s.json", "t.json"); })
                .find("field 'traceEvents[1].tid': a --trace document needs a whole number here"),
            std::string::npos);
  t = trace_doc();
  t["traceEvents"][1].erase("ts");
  EXPECT_NE(error_of([&] { run_report_html(s, &t, "s.json", "t.json"); }).find("field 'traceEvents[1].ts'"),
            std::string::npos);
  t = {{"events", json::array()}};
  EXPECT_NE(error_of([&] { run_report_html(s, &t, "s.json", "t.json"); }).find("field 'traceEvents': missing"),
            std::string::npos);
  // The well-formed pair draws one DVE track with its one slice (0.01 us -> 10 ns).
  t = trace_doc();
  const json d = page_data(run_report_html(s, &t, "s.json", "t.json"));
  EXPECT_EQ(d.at("timeline").at("tracks"), json({"DVE"}));
  EXPECT_EQ(d.at("timeline").at("slices").at(0).at(1), 10.0);
}

} // namespace test_report
