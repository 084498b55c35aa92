#include "fixture_verdict.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <utility>
#include <vector>

namespace grader {
namespace {

using nlohmann::json;

CheckResult check(CheckKind kind, Outcome status, std::optional<Symptom> symptom = std::nullopt,
                  const std::string& summary = "", std::vector<std::string> details = {}) {
  CheckResult c;
  c.kind = kind;
  c.status = status;
  c.symptom = symptom;
  c.summary = summary;
  c.details = std::move(details);
  return c;
}

// A grade that ended with `exit_code`; a step fails when one of its checks does.
GradeReport graded(int exit_code, std::vector<std::pair<int, std::vector<CheckResult>>> steps) {
  GradeReport r;
  r.exit_code = exit_code;
  for (auto& [id, checks] : steps) {
    StepResult st;
    st.id = id;
    st.status = Outcome::pass;
    for (const auto& c : checks)
      if (c.status == Outcome::fail) st.status = Outcome::fail;
    st.checks = std::move(checks);
    r.steps.push_back(std::move(st));
  }
  return r;
}

constexpr auto pass = Outcome::pass;
constexpr auto fail = Outcome::fail;

TEST(FixtureVerdict, JudgesAReport) {
  const auto e = parse_expectation("// expect: step 2 fails: correct (canary)\n", "f");
  const std::vector<std::pair<int, std::vector<CheckResult>>> steps = {
      {1, {check(CheckKind::ptx, pass)}}, {2, {check(CheckKind::correct, fail, Symptom::canary)}}};
  EXPECT_EQ(verdict_mismatch(graded(1, steps), e), "");
  EXPECT_NE(verdict_mismatch(graded(0, steps), e), "");
  const auto other_symptom =
      graded(1, {{1, {check(CheckKind::ptx, pass)}}, {2, {check(CheckKind::correct, fail, Symptom::mismatch)}}});
  EXPECT_NE(verdict_mismatch(other_symptom, e).find("not with correct (canary)"), std::string::npos);
  const auto earlier = graded(1, {{1, {check(CheckKind::ptx, fail)}}});
  EXPECT_NE(verdict_mismatch(earlier, e).find("expected step 2 to fail first"), std::string::npos);
  EXPECT_EQ(verdict_mismatch(graded(3, {}), parse_expectation("// expect: build fails\n", "f")), "");
  EXPECT_EQ(verdict_mismatch(graded(0, {{1, {check(CheckKind::ptx, pass)}}}), FixtureExpectation{}), "");
  // A check without a symptom never fits one the fixture names.
  EXPECT_NE(verdict_mismatch(graded(1, {{2, {check(CheckKind::correct, fail)}}}), e), "");
  // Without a symptom named, any failing check of the kind fits.
  EXPECT_EQ(verdict_mismatch(graded(1, {{2, {check(CheckKind::correct, fail)}}}),
                             parse_expectation("// expect: step 2 fails: correct\n", "f")),
            "");
}

TEST(FixtureVerdict, JudgesAStaticReport) {
  const auto gpu_only = parse_expectation("// expect: step 2 fails: correct (canary)\n", "f");
  // Without a GPU: nothing fails, the GPU checks were skipped.
  EXPECT_EQ(static_verdict_mismatch(graded(4, {{1, {check(CheckKind::ptx, pass)}}}), gpu_only), "");
  // A static failure before the expected step contradicts it.
  EXPECT_NE(static_verdict_mismatch(graded(1, {{1, {check(CheckKind::ptx, fail)}}}), gpu_only), "");
  EXPECT_NE(static_verdict_mismatch(graded(3, {}), gpu_only).find("does not"), std::string::npos);
  const auto ptx = parse_expectation("// expect: step 1 fails: ptx\n", "f");
  EXPECT_EQ(static_verdict_mismatch(graded(1, {{1, {check(CheckKind::ptx, fail)}}}), ptx), "");
  EXPECT_NE(static_verdict_mismatch(graded(4, {{1, {check(CheckKind::ptx, pass)}}}), ptx), "");
  EXPECT_NE(static_verdict_mismatch(graded(1, {{1, {check(CheckKind::ptx, fail)}}}), FixtureExpectation{}), "");
}

TEST(FixtureVerdict, MessagesMustAppearInTheFailingCheck) {
  const auto e = parse_expectation(
      "// expect: step 1 fails: correct (cuda_error)\n// message: illegal memory access\n// message: (case 1x1)\n",
      "f");
  const auto with = [](const std::string& summary, std::vector<std::string> details = {}) {
    return graded(1, {{1,
                       {check(CheckKind::ptx, pass),
                        check(CheckKind::correct, fail, Symptom::cuda_error, summary, std::move(details))}}});
  };
  EXPECT_EQ(verdict_mismatch(with("illegal memory access in your kernel (case 1x1): a thread ..."), e), "");
  // Split between the summary and a detail is fine: both are what the student reads.
  EXPECT_EQ(verdict_mismatch(with("illegal memory access", {"first seen in (case 1x1)"}), e), "");
  const std::string why = verdict_mismatch(with("illegal memory access (case 33x4097)"), e);
  EXPECT_NE(why.find("does not say \"(case 1x1)\""), std::string::npos) << why;
  EXPECT_NE(why.find("case 33x4097"), std::string::npos) << why;  // shows what it did say
  // Case matters: a message is an exact substring.
  EXPECT_NE(verdict_mismatch(with("Illegal memory access (case 1x1)"), e), "");
  // Another check of the step saying it does not count.
  const auto elsewhere = graded(1, {{1,
                                     {check(CheckKind::ptx, fail, std::nullopt, "illegal memory access (case 1x1)"),
                                      check(CheckKind::correct, fail, Symptom::cuda_error, "a crash")}}});
  EXPECT_NE(verdict_mismatch(elsewhere, e), "");
  // Any one of two checks of the verdict may show them.
  const auto two =
      graded(1, {{1,
                  {check(CheckKind::correct, fail, Symptom::cuda_error, "nothing useful"),
                   check(CheckKind::correct, fail, Symptom::cuda_error, "illegal memory access (case 1x1)")}}});
  EXPECT_EQ(verdict_mismatch(two, e), "");
}

TEST(FixtureVerdict, BuildMessagesMustAppearInTheDiagnostics) {
  const auto e = parse_expectation("// expect: build fails\n// message: launch_dot(float*\n", "f");
  GradeReport r = graded(3, {});
  r.student_build.diagnostics = "launch_dot(float*, float const*) is called but never defined";
  EXPECT_EQ(verdict_mismatch(r, e), "");
  r.student_build.diagnostics = "kernel.cu(3): error: expected a \";\"";
  EXPECT_NE(verdict_mismatch(r, e).find("do not contain \"launch_dot(float*\""), std::string::npos);
  EXPECT_NE(verdict_mismatch(graded(3, {}), e), "");  // no diagnostics at all
}

TEST(FixtureVerdict, StaticGradesCheckMessagesOnlyForStaticVerdicts) {
  const auto ptx = parse_expectation("// expect: step 1 fails: ptx\n// message: no bar.sync\n", "f");
  const auto ptx_says = [](const std::string& summary) {
    return graded(1, {{1, {check(CheckKind::ptx, fail, std::nullopt, summary)}}});
  };
  EXPECT_EQ(static_verdict_mismatch(ptx_says("k PTX: no bar.sync"), ptx), "");
  EXPECT_NE(static_verdict_mismatch(ptx_says("k PTX: no ld.shared"), ptx), "");
  // A GPU verdict's messages cannot show without a GPU: only the static checks are judged.
  const auto gpu = parse_expectation("// expect: step 1 fails: sanitizer (race)\n// message: racecheck\n", "f");
  EXPECT_EQ(static_verdict_mismatch(
                graded(4, {{1, {check(CheckKind::ptx, pass), check(CheckKind::sanitizer, Outcome::skipped)}}}), gpu),
            "");
}

TEST(FixtureVerdict, MismatchFitsItsRefinementsButNotTheOtherWayRound) {
  const auto saw = [](Symptom s) { return graded(1, {{1, {check(CheckKind::correct, fail, s)}}}); };
  const auto mismatch = parse_expectation("// expect: step 1 fails: correct (mismatch)\n", "f.cu");
  EXPECT_EQ(verdict_mismatch(saw(Symptom::edge_mismatch), mismatch), "");
  EXPECT_EQ(verdict_mismatch(saw(Symptom::nondeterministic), mismatch), "");
  EXPECT_NE(verdict_mismatch(saw(Symptom::canary), mismatch), "");
  const auto edge = parse_expectation("// expect: step 1 fails: correct (edge_mismatch)\n", "f.cu");
  EXPECT_NE(verdict_mismatch(saw(Symptom::mismatch), edge), "");
}

// What another grader process printed is read as a report, every key required.
TEST(FixtureVerdict, APrintedDocumentIsJudgedAsTheReportItHolds) {
  const auto ptx = parse_expectation("// expect: step 1 fails: ptx\n", "f");
  GradeReport r = graded(1, {{1, {check(CheckKind::ptx, fail)}}});
  const json printed = report_to_json(r);
  EXPECT_EQ(verdict_mismatch(printed, 1, ptx), "");
  EXPECT_EQ(static_verdict_mismatch(printed, 1, ptx), "");
  // The process ended otherwise than its report says: something is wrong with the grade itself.
  EXPECT_NE(verdict_mismatch(printed, 0, ptx).find("the report says exit 1, the grader exited 0"), std::string::npos);
  // An error's document (a grade that never finished) is no report.
  const json error = {{"schema", "cuda-memory-labs/error/1"}, {"error", "no nvcc"}, {"exit_code", 2}};
  const std::string why = verdict_mismatch(error, 2, ptx);
  EXPECT_NE(why.find("no grade report (exit 2"), std::string::npos) << why;
  EXPECT_NE(why.find("no nvcc"), std::string::npos) << why;
  json missing = printed;
  missing["steps"][0]["checks"][0].erase("status");
  EXPECT_NE(static_verdict_mismatch(missing, 1, ptx).find("no grade report"), std::string::npos);
}

}  // namespace
}  // namespace grader
