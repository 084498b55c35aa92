// The human report's timing charts: which checks get one, and where.
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

#include "grading.hpp"

using namespace grader;
using nlohmann::json;

namespace {

json session(double candidate_gbps) {
  return {{"rounds", 30},
          {"baseline_gbps", 400.0},
          {"candidate_gbps", candidate_gbps},
          {"memcpy_gbps", 3200.0},
          {"speedup", {{"median", candidate_gbps / 400}, {"lo", 1.0}, {"hi", 9.0}, {"n", 30}}}};
}

CheckResult check(const std::string& kind, const std::string& status, json data) {
  CheckResult c;
  c.kind = kind;
  c.status = json(status).get<Outcome>();
  c.summary = kind + " summary";
  c.details = {kind + " detail"};
  c.data = std::move(data);
  return c;
}

StepResult step(int id, const std::string& status, std::vector<CheckResult> checks) {
  StepResult s;
  s.id = id;
  s.title = "step title " + std::to_string(id);
  s.status = json(status).get<Outcome>();
  s.checks = std::move(checks);
  return s;
}

GradeReport report(std::vector<StepResult> steps) {
  GradeReport r;
  r.lab_folder = "lab07-bank-conflicts";
  r.lab_id = "lab07";
  r.title = "Bank conflicts";
  r.arch = "sm_90";
  r.device.present = true;
  r.device.name = "GPU";
  r.student_build.ok = true;
  r.steps = std::move(steps);
  r.exit_code = kExitStepFailed;
  r.current_step = 4;
  return r;
}

std::string printed(const GradeReport& r) {
  std::ostringstream out;
  std::streambuf* old = std::cout.rdbuf(out.rdbuf());
  print_report(r, false);
  std::cout.rdbuf(old);
  return out.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const std::string kRoofline = "│  3200 GB/s  100.0 %";

}  // namespace

TEST(ReportCharts, OneSessionSharedBySeveralStepsIsChartedOnceUnderTheLast) {
  const json a = session(1600);
  const std::string text =
      printed(report({step(2, "pass", {check("speedup", "pass", a)}), step(3, "pass", {check("speedup", "pass", a)}),
                      step(4, "fail", {check("fraction_of_peak", "fail", a)})}));
  EXPECT_EQ(count(text, kRoofline), 1u) << text;
  EXPECT_GT(text.find(kRoofline), text.find("step 4")) << text;
  EXPECT_NE(text.find("          yours     "), std::string::npos) << text;
}

TEST(ReportCharts, EachDistinctSessionGetsItsOwnChart) {
  const json a = session(1600), b = session(2400);
  const std::string text =
      printed(report({step(2, "pass", {check("speedup", "pass", b)}),
                      step(4, "fail", {check("speedup", "fail", a), check("fraction_of_library", "fail", a)})}));
  EXPECT_EQ(count(text, kRoofline), 2u) << text;
  const auto first = text.find(kRoofline);
  EXPECT_GT(first, text.find("step 2"));
  EXPECT_LT(first, text.find("step 4"));
  EXPECT_NE(text.find("2400 GB/s"), std::string::npos);
  EXPECT_NE(text.find("1600 GB/s"), std::string::npos);
}

TEST(ReportCharts, TheChartFollowsTheChecksAndComesBeforeTheHint) {
  StepResult s = step(4, "fail", {check("speedup", "fail", session(1600)), check("ptx", "pass", json::object())});
  s.symptom_hint = "look at the padding";
  const std::string text = printed(report({s}));
  const auto chart = text.find(kRoofline);
  ASSERT_NE(chart, std::string::npos) << text;
  EXPECT_GT(chart, text.find("ptx summary"));
  EXPECT_LT(chart, text.find("look at the padding"));
}

TEST(ReportCharts, NoChartWithoutATimingSession) {
  const std::string text = printed(report({
      step(2, "skipped", {check("speedup", "skipped", session(1600))}),  // not decided
      step(3, "fail", {check("speedup", "fail", json::object())}),       // wrong result: never timed
      step(4, "fail", {check("correct", "fail", session(1600))}),        // not a timed check
  }));
  EXPECT_EQ(text.find("│"), std::string::npos) << text;
  EXPECT_EQ(text.find("GB/s"), std::string::npos) << text;
}

namespace grader {
namespace {

// A report names outcomes and kinds, as docs/json-output.md says: never numbers.
TEST(ReportJson, OutcomesAreNames) {
  const json j =
      report_to_json(report({step(2, "pass", {check("speedup", "pass", json::object())}),
                             step(3, "skipped", {check("ncu", "skipped", json::object())}),
                             step(4, "fail", {check("correct", "fail", json::object())}), step(5, "locked", {})}));
  ASSERT_EQ(j["steps"].size(), 4u);
  EXPECT_EQ(j["steps"][0]["status"], "pass");
  EXPECT_EQ(j["steps"][0]["checks"][0]["status"], "pass");
  EXPECT_EQ(j["steps"][1]["checks"][0]["status"], "skipped");
  EXPECT_EQ(j["steps"][2]["status"], "fail");
  EXPECT_EQ(j["steps"][2]["checks"][0]["kind"], "correct");
  EXPECT_EQ(j["steps"][3]["status"], "locked");
  EXPECT_EQ(name_of(Outcome::skipped), "skipped");
}

}  // namespace
}  // namespace grader
