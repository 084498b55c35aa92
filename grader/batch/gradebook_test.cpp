#include "gradebook.hpp"

#include <gtest/gtest.h>

#include <cmath>

using nlohmann::json;
using namespace grader;

namespace {

GradebookInfo lab_info() {
  const json m = json::parse(R"({
    "format_version": 1, "id": "lab07", "title": "Bank conflicts", "timeout_s": 20,
    "steps": [
      {"id": 1, "title": "Tile", "points": 3, "checks": [{"kind": "ptx", "kernel": "k", "must_contain": ["ld.shared"]},
                                                       {"kind": "correct", "cases": ["1x1"]}]},
      {"id": 2, "title": "Fast", "points": 2, "checks": [{"kind": "speedup", "case": "8192x8192", "min": 2.5}]},
      {"id": 3, "title": "Peak", "checks": [{"kind": "fraction_of_peak", "case": "8192x8192", "min": 0.7}]}
    ]})");
  return GradebookInfo::from_manifest(parse_manifest(m, "lab.json"), "lab07-bank-conflicts");
}

CheckResult check(const std::string& kind, const std::string& status, const std::string& summary,
                  json data = json::object()) {
  CheckResult c;
  c.kind = check_kind_traits(kind)->kind;
  c.status = json(status).get<Outcome>();
  c.summary = summary;
  c.data = std::move(data);
  return c;
}

StepResult step(int id, const std::string& status, std::vector<CheckResult> checks) {
  StepResult st;
  st.id = id;
  st.status = json(status).get<Outcome>();
  st.checks = std::move(checks);
  return st;
}

// A graded row as a batch reads it back: the report as a child grader prints it.
BatchRow row_of(const std::string& id, const GradeReport& g) {
  BatchRow r;
  r.id = id;
  r.status = RowStatus::graded;
  set_report(r, report_to_json(g));
  return r;
}

GradeReport graded_report(const std::string& s1, const std::string& s2, const std::string& s3) {
  GradeReport g;
  g.seed = 7;
  g.device.present = true;
  g.student_build.ok = true;
  g.steps.push_back(step(1, s1,
                         {check("ptx", "pass", "k PTX: ld.shared"),
                          check("correct", s1, s1 == "pass" ? "matches" : "mismatch at 1x1 <b>")}));
  g.steps.push_back(step(
      2, s2,
      s2 == "locked" ? std::vector<CheckResult>{}
                     : std::vector<CheckResult>{check("speedup", s2, "3.8× needs 2.5",
                                                      {{"speedup", {{"median", 3.8126}, {"lo", 3.7}, {"hi", 3.9}}}})}));
  g.steps.push_back(step(3, s3,
                         s3 == "locked" ? std::vector<CheckResult>{}
                                        : std::vector<CheckResult>{check("fraction_of_peak", s3, "needs a GPU")}));
  g.exit_code = s1 == "pass" && s2 == "pass" && s3 == "pass" ? kExitPass : 1;
  return g;
}

BatchRow graded_row(const std::string& id, const std::string& s1, const std::string& s2, const std::string& s3) {
  return row_of(id, graded_report(s1, s2, s3));
}

}  // namespace

TEST(Gradebook, PointsComeFromTheManifestDefaultOne) {
  const auto info = lab_info();
  EXPECT_EQ(info.total_points(), 6);
  EXPECT_EQ(earned_points(graded_row("a", "pass", "pass", "pass"), info), 6);
  EXPECT_EQ(earned_points(graded_row("a", "pass", "fail", "locked"), info), 3);
  EXPECT_EQ(earned_points(graded_row("a", "fail", "locked", "locked"), info), 0);
  EXPECT_EQ(earned_points(graded_row("a", "pass", "skipped", "skipped"), info), 3);
}

TEST(Gradebook, HintPenaltyNeverBelowZero) {
  EXPECT_DOUBLE_EQ(final_score(6, 2, 0.5), 5);
  EXPECT_DOUBLE_EQ(final_score(3, 10, 1), 0);
  EXPECT_DOUBLE_EQ(final_score(3, 0, 2), 3);
  EXPECT_DOUBLE_EQ(final_score(3, 4, 0), 3);
  EXPECT_DOUBLE_EQ(final_score(3, -2, 1), 3);  // a damaged count adds nothing
  EXPECT_DOUBLE_EQ(final_score(3, 1, -1), 3);  // nor does a negative penalty
}

TEST(Gradebook, CsvQuoting) {
  EXPECT_EQ(csv_field("alice"), "alice");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field(" padded"), "\" padded\"");
  EXPECT_EQ(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
  EXPECT_EQ(csv_field("-1", false), "-1");
  EXPECT_EQ(csv_field("@sum"), "'@sum");
}

TEST(Gradebook, NumbersAreShort) {
  EXPECT_EQ(format_number(3), "3");
  EXPECT_EQ(format_number(2.5), "2.5");
  EXPECT_EQ(format_number(1.0 / 3), "0.333");
  EXPECT_EQ(format_number(-0.0001), "0");
  EXPECT_EQ(format_number(std::nan("")), "");
}

TEST(Gradebook, CsvRowsAndColumns) {
  auto info = lab_info();
  info.hint_penalty = 0.5;
  auto a = graded_row("alice", "pass", "pass", "skipped");
  a.hints_used = 3;
  BatchRow b;
  b.id = "bob,jr";
  b.status = RowStatus::rejected;
  b.reason = "empty: kernel.cu has no content";
  const std::string csv = grades_csv({a, b}, info);
  EXPECT_EQ(csv,
            "id,step1,step2,step3,points,total,step 2 speedup 8192x8192,step 3 fraction_of_peak "
            "8192x8192,hints_used (self-reported),notes\r\n"
            "alice,1,1,0,3.5,6,3.813,,3,GPU checks skipped\r\n"
            "\"bob,jr\",0,0,0,0,6,,,0,rejected: empty: kernel.cu has no content\r\n");
}

TEST(Gradebook, GradescopeLayout) {
  auto info = lab_info();
  info.environment = {{"gpu", "NVIDIA H100 80GB HBM3"}, {"driver", "13.0"}, {"cuda", "13.0.88"}};
  info.hint_penalty = 1;
  auto r = graded_row("alice", "pass", "fail", "locked");
  r.hints_used = 1;
  const json g = gradescope_result(r, info);
  EXPECT_DOUBLE_EQ(g["score"].get<double>(), 2);
  ASSERT_EQ(g["tests"].size(), 3u);
  EXPECT_EQ(g["tests"][0]["name"], "step 1: Tile");
  EXPECT_EQ(g["tests"][0]["score"], 3);
  EXPECT_EQ(g["tests"][0]["max_score"], 3);
  EXPECT_EQ(g["tests"][0]["status"], "passed");
  EXPECT_EQ(g["tests"][0]["visibility"], "visible");
  EXPECT_EQ(g["tests"][1]["status"], "failed");
  EXPECT_EQ(g["tests"][1]["score"], 0);
  EXPECT_NE(g["tests"][1]["output"].get<std::string>().find("fail speedup: 3.8× needs 2.5"), std::string::npos);
  EXPECT_EQ(g["tests"][2]["max_score"], 1);
  EXPECT_NE(g["tests"][2]["output"].get<std::string>().find("earlier step failed"), std::string::npos);
  EXPECT_EQ(g["extra_data"]["gpu"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g["extra_data"]["driver"], "13.0");
  EXPECT_EQ(g["extra_data"]["cuda"], "13.0.88");
  EXPECT_NE(g["output"].get<std::string>().find("1 points off"), std::string::npos);
}

// An upload's hint count is its own .grader/progress.json: every export says it is the student's word.
TEST(Gradebook, HintCountsAreMarkedSelfReported) {
  auto info = lab_info();
  info.hint_penalty = 1;
  auto r = graded_row("alice", "pass", "fail", "locked");
  r.hints_used = 2;
  const json g = gradescope_result(r, info);
  EXPECT_EQ(g["extra_data"]["hints_used"], 2);
  EXPECT_EQ(g["extra_data"]["hints_source"], "self-reported");
  EXPECT_NE(g["output"].get<std::string>().find("hint penalty: 2 hints (self-reported) × 1"), std::string::npos)
      << g["output"];
  EXPECT_EQ(row_json(r, info)["hints_source"], "self-reported");
  EXPECT_NE(grades_csv({r}, info).find(",hints_used (self-reported),"), std::string::npos);
  EXPECT_NE(junit_xml({r}, info).find("<property name=\"hints_source\" value=\"self-reported\"/>"), std::string::npos);
  EXPECT_EQ(self_reported_hints_note(0), "");
  const std::string note = self_reported_hints_note(0.5);
  EXPECT_NE(note.find(".grader/progress.json"), std::string::npos) << note;
  EXPECT_NE(note.find("honour system"), std::string::npos) << note;
}

TEST(Gradebook, GradescopeRejectedSubmissionScoresZero) {
  BatchRow r;
  r.id = "x";
  r.status = RowStatus::rejected;
  r.reason = "binary: kernel.cu holds NUL bytes, not source code";
  const json g = gradescope_result(r, lab_info());
  EXPECT_EQ(g["score"], 0);
  for (const auto& t : g["tests"]) {
    EXPECT_EQ(t["status"], "failed");
    EXPECT_NE(t["output"].get<std::string>().find("NUL bytes"), std::string::npos);
  }
}

TEST(Gradebook, XmlEscaping) {
  EXPECT_EQ(xml_escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
  EXPECT_EQ(xml_escape(std::string("bell\x07here\ttab")), "bell?here\ttab");
  EXPECT_EQ(xml_escape("× ≥"), "× ≥");
}

TEST(Gradebook, JunitOneSuitePerStudentOneCasePerStep) {
  const auto info = lab_info();
  auto a = graded_row("al<ice>", "fail", "locked", "locked");
  BatchRow b;
  b.id = "bob";
  b.status = RowStatus::error;
  b.reason = "the grader did not finish (timed out)";
  const std::string x = junit_xml({a, b}, info);
  EXPECT_NE(x.find("<testsuites name=\"lab07\" tests=\"6\" failures=\"1\" errors=\"3\" skipped=\"2\">"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<testsuite name=\"al&lt;ice&gt;\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"2\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<failure message=\"correct: mismatch at 1x1 &lt;b&gt;\" type=\"correct\">"), std::string::npos)
      << x;
  EXPECT_NE(x.find("<skipped message=\"locked: an earlier step failed\"/>"), std::string::npos);
  EXPECT_NE(x.find("<error message=\"not graded: the grader did not finish (timed out)\"/>"), std::string::npos);
  EXPECT_EQ(x.find("<ice>"), std::string::npos);
}

// A row not graded (no GPU, a tool's own failure) is neither a 0 nor a failure:
// its points are empty and its steps skipped, with the reason.
TEST(Gradebook, JunitShowsANotGradedRowAsNotGraded) {
  const auto info = lab_info();
  BatchRow r;
  r.id = "carol";
  r.status = RowStatus::not_graded;
  r.reason = "no GPU (no CUDA device)";
  const std::string x = junit_xml({r}, info);
  EXPECT_NE(x.find("<property name=\"points\" value=\"\"/>"), std::string::npos) << x;
  EXPECT_EQ(x.find("<property name=\"points\" value=\"0\"/>"), std::string::npos) << x;
  EXPECT_NE(x.find("tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"3\""), std::string::npos) << x;
  EXPECT_NE(x.find("<skipped message=\"not graded: no GPU (no CUDA device)\"/>"), std::string::npos) << x;
}

TEST(Gradebook, BuildFailureIsStepOnesFailure) {
  const auto info = lab_info();
  GradeReport g = graded_report("locked", "locked", "locked");
  g.student_build = {};
  g.student_build.stage = "kernel";
  g.student_build.diagnostics = "kernel.cu:3: error: expected ';'\nmore";
  g.steps[0].checks.clear();
  const BatchRow r = row_of("c", g);
  const std::string x = junit_xml({r}, info);
  EXPECT_NE(
      x.find("<failure message=\"build failed (kernel): kernel.cu:3: error: expected &apos;;&apos;\" type=\"build\">"),
      std::string::npos)
      << x;
  const std::string csv = grades_csv({r}, info);
  EXPECT_EQ(csv.substr(csv.find("\r\n") + 2),
            "c,0,0,0,0,6,,,0,build failed (kernel): kernel.cu:3: error: expected ';'\r\n");
}
