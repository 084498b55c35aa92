#include <gtest/gtest.h>

#include "grading.hpp"

namespace grader {
namespace {

using nlohmann::json;

const std::string kHostile = "\x1b[2K\x1b[1G10/10 points (all steps pass) \xff\xc0\xaf \xc2\x9b";
const std::string kShown = "\\x1b[2K\\x1b[1G10/10 points (all steps pass) \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD \\u009b";

GradeReport hostile_report() {
  GradeReport r;
  r.lab_id = "lab07";
  r.student_build.diagnostics = "kernel.cu:3:2: error: #error " + kHostile + "\n";
  r.program_output = kHostile;
  r.notes = {kHostile};
  StepResult step;
  step.title = "tile";
  CheckResult c;
  c.kind = CheckKind::correct;
  c.status = Outcome::fail;
  c.summary = kHostile;
  c.details = {kHostile};
  c.data = {{"log", kHostile}, {"lines", json::array({kHostile})}, {kHostile, 1}};
  step.checks.push_back(c);
  r.steps.push_back(step);
  return r;
}

// Before: --json ended in "unexpected: [json.exception.type_error.316]", exit 2.
TEST(PrintableReport, EveryTextOfAReportIsPrintable) {
  GradeReport r = hostile_report();
  EXPECT_THROW((void)report_to_json(r).dump(), json::type_error);
  make_printable(r);
  EXPECT_EQ(r.student_build.diagnostics, "kernel.cu:3:2: error: #error " + kShown + "\n");
  EXPECT_EQ(r.program_output, kShown);
  EXPECT_EQ(r.notes.at(0), kShown);
  const CheckResult& c = r.steps.at(0).checks.at(0);
  EXPECT_EQ(c.summary, kShown);
  EXPECT_EQ(c.details.at(0), kShown);
  EXPECT_EQ(c.data.at("log"), kShown);
  EXPECT_EQ(c.data.at("lines").at(0), kShown);
  EXPECT_EQ(c.data.at(kShown), 1);
  // A plain dump(), which throws on invalid UTF-8, and no control character in it.
  const std::string text = report_to_json(r).dump();
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find("\\u001b"), std::string::npos);
  EXPECT_NE(text.find("\\\\x1b[2K"), std::string::npos);
}

TEST(PrintableReport, LeavesHonestTextAsItIs) {
  GradeReport r;
  r.student_build.diagnostics = "kernel.cu(12): error: identifier \"tile\" is undefined\n  tile[0] = 1;\n  ^\n";
  r.program_output = "caf\xC3\xA9\tdone\n";
  const GradeReport before = r;
  make_printable(r);
  EXPECT_EQ(r.student_build.diagnostics, before.student_build.diagnostics);
  EXPECT_EQ(r.program_output, before.program_output);
}

}  // namespace
}  // namespace grader
