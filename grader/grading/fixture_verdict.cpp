#include "fixture_verdict.hpp"

#include <algorithm>

using nlohmann::json;

namespace grader {
namespace {

const StepResult* first_failing_step(const GradeReport& report) {
  const auto s = std::find_if(report.steps.begin(), report.steps.end(),
                              [](const StepResult& st) { return st.status == Outcome::fail; });
  return s == report.steps.end() ? nullptr : &*s;
}

// "mismatch" also fits the two kinds of mismatch the grader tells apart
// (wrong only at the edges, different every run): a fixture written as
// "wrong values" stays right when the grader learns to say more about them.
bool symptom_fits(Symptom expected, const std::optional<Symptom>& seen) {
  if (!seen) return false;
  if (expected == *seen) return true;
  return expected == Symptom::mismatch && (*seen == Symptom::edge_mismatch || *seen == Symptom::nondeterministic);
}

// What a grade did, briefly: each step's status and every check that did not
// pass with what it showed (a whole report, ncu's counters included, is too
// long for a test log to keep the part that matters).
std::string what_it_did(const GradeReport& report) {
  std::string s = "exit " + std::to_string(report.exit_code);
  for (const auto& step : report.steps) {
    s += "\nstep " + std::to_string(step.id) + ": " + name_of(step.status);
    for (const auto& c : step.checks)
      if (c.status != Outcome::pass)
        s += "\n  " + name_of(c.kind) + " " + name_of(c.status) + " (" + (c.symptom ? name_of(*c.symptom) : "") +
             "): " + c.summary.substr(0, 800);
  }
  return s;
}

// What a failing check shows a student: its summary, then its details.
std::string shown_by(const CheckResult& check) {
  std::string s = check.summary;
  for (const auto& d : check.details) s += "\n" + d;
  return s;
}

// The first expected message `text` lacks, or "" when it has them all.
std::string missing_message(const std::string& text, const std::vector<std::string>& messages) {
  for (const auto& m : messages)
    if (text.find(m) == std::string::npos) return m;
  return "";
}

std::string step_mismatch(const GradeReport& report, const FixtureExpectation& e) {
  const std::string code = std::to_string(report.exit_code);
  if (report.exit_code != 1) return "expected exit 1, got " + code + ": " + what_it_did(report);
  const StepResult* step = first_failing_step(report);
  if (!step || step->id != e.step)
    return "expected step " + std::to_string(e.step) + " to fail first: " + what_it_did(report);
  bool matched = false;
  std::string lacks, seen;
  for (const auto& c : step->checks) {
    if (c.status != Outcome::fail || c.kind != e.check || (e.symptom && !symptom_fits(*e.symptom, c.symptom))) continue;
    // Any one check of the verdict showing every message will do.
    matched = true;
    seen = shown_by(c);
    lacks = missing_message(seen, e.messages);
    if (lacks.empty()) return "";
  }
  if (matched)
    return "step " + std::to_string(e.step) + " failed with " + e.verdict() + ", but it does not say \"" + lacks +
           "\":\n" + seen;
  return "step " + std::to_string(e.step) + " failed, but not with " + e.verdict() + ": " + what_it_did(report);
}

// A grader's --json document as a report, or why it is none.
std::string read_printed(const json& printed, int exit_code, GradeReport& report) {
  try {
    report = report_from_json(printed);
  } catch (const std::exception& x) {
    return "no grade report (exit " + std::to_string(exit_code) + ", " + x.what() +
           "): " + printed.dump(1).substr(0, 6000);
  }
  if (report.exit_code != exit_code)
    return "the report says exit " + std::to_string(report.exit_code) + ", the grader exited " +
           std::to_string(exit_code);
  return "";
}

}  // namespace

std::string verdict_mismatch(const GradeReport& report, const FixtureExpectation& e) {
  const std::string code = std::to_string(report.exit_code);
  switch (e.kind) {
    case FixtureExpectation::all_pass:
      return report.exit_code == 0 ? "" : "expected every step to pass, got exit " + code + ": " + what_it_did(report);
    case FixtureExpectation::build_fails: {
      if (report.exit_code != 3)
        return "expected a build failure (exit 3), got exit " + code + ": " + what_it_did(report);
      const std::string& diagnostics = report.student_build.diagnostics;
      const std::string lacks = missing_message(diagnostics, e.messages);
      if (!lacks.empty())
        return "the build failed, but its diagnostics do not contain \"" + lacks + "\":\n" + diagnostics;
      return "";
    }
    case FixtureExpectation::step_fails:
      return step_mismatch(report, e);
  }
  return "unknown expectation";
}

std::string static_verdict_mismatch(const GradeReport& report, const FixtureExpectation& e) {
  if (e.is_static()) return verdict_mismatch(report, e);
  const int code = report.exit_code;
  if (code == 3) return "expected it to build, but it does not: " + what_it_did(report);
  const StepResult* step = first_failing_step(report);
  if (step && e.kind == FixtureExpectation::all_pass)
    return "expected every step to pass, but step " + std::to_string(step->id) +
           " fails a static check: " + what_it_did(report);
  if (step && step->id < e.step)
    return "expected step " + std::to_string(e.step) + " to fail first (on a GPU), but step " +
           std::to_string(step->id) + " already fails a static check: " + what_it_did(report);
  if (step && code != 1)
    return "a step fails, yet the exit code is " + std::to_string(code) + ": " + what_it_did(report);
  if (!step && code != 0 && code != 4)
    return "no step fails, yet the exit code is " + std::to_string(code) + ": " + what_it_did(report);
  return "";
}

std::string verdict_mismatch(const json& printed, int exit_code, const FixtureExpectation& e) {
  GradeReport report;
  const std::string unread = read_printed(printed, exit_code, report);
  return unread.empty() ? verdict_mismatch(report, e) : unread;
}

std::string static_verdict_mismatch(const json& printed, int exit_code, const FixtureExpectation& e) {
  GradeReport report;
  const std::string unread = read_printed(printed, exit_code, report);
  return unread.empty() ? static_verdict_mismatch(report, e) : unread;
}

}  // namespace grader
