// The verdict a known-wrong (or known-right) submission in
// tests/fixtures/<lab>/*.cu must get, stated in its header:
//
//   // expect: build fails
//   // expect: all pass
//   // expect: step N fails: KIND
//   // expect: step N fails: KIND (SYMPTOM)
//
// KIND is a check kind of step N (manifest.hpp), SYMPTOM what the failing
// check reports (reports/symptom.hpp); both are read into their enums, so a
// name nothing knows is refused where it is read. Any number of lines
//
//   // message: TEXT
//
// name text the failure must show (case-sensitive): in the failing check's
// summary or details, or for "build fails" in the compiler's diagnostics. The
// course tests and `grader check` read it with the same parser and judge a
// grade report with the same rules (grading/fixture_verdict.hpp).
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "manifest.hpp"
#include "symptom.hpp"

namespace grader {

struct FixtureExpectation {
  enum Kind { all_pass, build_fails, step_fails } kind = all_pass;
  int step = 0;
  CheckKind check = CheckKind::correct;  // of step_fails
  std::optional<Symptom> symptom;        // of step_fails, when the line names one
  std::string text;                      // what follows "// expect: "
  std::vector<std::string> messages;     // each "// message: " line, in order
  // Verdicts that need no GPU: a build failure, or a failing static check.
  bool is_static() const;
  // How a failure of step_fails reads: "correct (canary)".
  std::string verdict() const;
};

class ExpectationError : public std::runtime_error {
  using runtime_error::runtime_error;
};

// Reads the first "// expect: " line of a fixture's source and every
// "// message: " line; source_name prefixes error messages. Throws
// ExpectationError when there is no expectation, it does not follow the
// grammar, names a check kind or a symptom nothing knows, a message is empty,
// or messages come with "all pass" (nothing fails that could show them).
FixtureExpectation parse_expectation(const std::string& source, const std::string& source_name);
FixtureExpectation read_expectation(const std::filesystem::path& file);

// "" when the expectation fits the lab: the step exists and has a check of
// that kind; else what does not.
std::string expectation_problem(const FixtureExpectation& e, const Manifest& manifest);

}  // namespace grader
