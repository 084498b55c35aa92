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
  c.kind = check_kind_traits(kind)->kind;
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

// A step a tool could not grade on this machine, with nothing failed: the
// footer says to grade again, not that the student is stuck on it.
TEST(ReportFooter, AStepNotGradedSaysToGradeAgainNotStuck) {
  GradeReport r = report({step(2, "pass", {check("speedup", "pass", json::object())}),
                          step(3, "skipped", {check("ncu", "skipped", json::object())})});
  r.exit_code = kExitEnvironment;
  r.current_step = 3;
  std::string text = printed(r);
  EXPECT_NE(text.find("step 3 was not graded"), std::string::npos) << text;
  EXPECT_NE(text.find("grade lab07 again"), std::string::npos) << text;
  EXPECT_EQ(text.find("Stuck?"), std::string::npos) << text;
  r.steps[1] = step(3, "fail", {check("ncu", "fail", json::object())});
  r.exit_code = kExitStepFailed;
  text = printed(r);
  EXPECT_NE(text.find("Current step: 3.  Stuck?"), std::string::npos) << text;
  EXPECT_EQ(text.find("not graded"), std::string::npos) << text;
}

// A step this GPU cannot grade (it needs a newer compute capability): the footer
// says so and where to grade it, not to grade again here.
TEST(ReportFooter, AStepForANewerGpuSaysWhereToGradeIt) {
  json why = {{"not_graded", "needs compute capability 9.0; this GPU is 8.0"}};
  GradeReport r = report({step(2, "pass", {check("speedup", "pass", json::object())}),
                          step(3, "skipped", {check("ncu", "skipped", why), check("correct", "skipped", why)})});
  r.exit_code = kExitEnvironment;
  r.current_step = 3;
  const std::string text = printed(r);
  EXPECT_NE(text.find("Step 3 is not graded on this machine (needs compute capability 9.0; this GPU is 8.0)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("again"), std::string::npos) << text;
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

// `grader check` reads its child grades back: what it reads is what was written.
TEST(ReportJson, AReportReadsBackAsItWasWritten) {
  GradeReport r = report({step(2, "pass", {check("speedup", "pass", session(1200))}),
                          step(4, "fail", {check("correct", "fail", {{"case", "33x4097"}})}), step(5, "locked", {})});
  r.steps[1].checks[0].symptom = Symptom::mismatch;
  r.steps[1].symptom_hint = "look at the edges";
  r.seed = 1234567890123ull;
  r.notes = {"a note"};
  r.program_output = "printed";
  r.student_build.diagnostics = "none";
  const GradeReport back = report_from_json(report_to_json(r));
  EXPECT_EQ(report_to_json(back), report_to_json(r));
  EXPECT_EQ(back.current_step, 4);
  EXPECT_EQ(back.exit_code, kExitStepFailed);
  EXPECT_EQ(back.steps[1].checks[0].status, Outcome::fail);
  EXPECT_EQ(back.steps[2].status, Outcome::locked);

  json missing = report_to_json(r);
  missing["steps"][0]["checks"][0].erase("status");
  EXPECT_ANY_THROW(report_from_json(missing));
  json other = report_to_json(r);
  other["schema"] = "cuda-memory-labs/batch/1";
  EXPECT_ANY_THROW(report_from_json(other));
  json no_gpu = report_to_json(r);
  no_gpu["gpu"] = nullptr;
  no_gpu["no_gpu_reason"] = "no driver";
  EXPECT_FALSE(report_from_json(no_gpu).device.present);
  EXPECT_EQ(report_from_json(no_gpu).device.reason, "no driver");
}

}  // namespace
}  // namespace grader
