// The verdict a known-wrong (or known-right) submission in
// tests/fixtures/<lab>/*.cu must get, stated in its header:
//
//   // expect: build fails
//   // expect: all pass
//   // expect: step N fails: KIND
//   // expect: step N fails: KIND (SYMPTOM)
//
// KIND is a check kind of step N (manifest.hpp), SYMPTOM what the failing
// check reports (docs/json-output.md). Any number of lines
//
//   // message: TEXT
//
// name text the failure must show (case-sensitive): in the failing check's
// summary or details, or for "build fails" in the compiler's diagnostics. The
// course tests and `grader check` read it with the same parser and judge a
// grade report with the same rules.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "manifest.hpp"
#include "symptom.hpp"

namespace grader {

struct FixtureExpectation {
  enum Kind { all_pass, build_fails, step_fails } kind = all_pass;
  int step = 0;
  std::string check, symptom;
  std::string text;                   // what follows "// expect: "
  std::vector<std::string> messages;  // each "// message: " line, in order
  // Verdicts that need no GPU: a build failure, or a failing static check.
  bool is_static() const;
};

class ExpectationError : public std::runtime_error {
  using runtime_error::runtime_error;
};

// Reads the first "// expect: " line of a fixture's source and every
// "// message: " line; source_name prefixes error messages. Throws
// ExpectationError when there is no expectation, it does not follow the
// grammar, a message is empty, or messages come with "all pass" (nothing fails
// that could show them).
FixtureExpectation parse_expectation(const std::string& source, const std::string& source_name);
FixtureExpectation read_expectation(const std::filesystem::path& file);

// "" when the expectation fits the lab: the step exists, it has a check of
// that kind, the symptom is one a check can report; else what does not.
std::string expectation_problem(const FixtureExpectation& e, const Manifest& manifest);

// Judging a grade report (report_to_json's document) and its exit code.
// "" when it matches, messages included, else why not, with the report appended.
std::string verdict_mismatch(const nlohmann::json& report, int exit_code, const FixtureExpectation& e);
// The same for a grade without a GPU: a static expectation must hold exactly
// (with its messages);
// any other must not be contradicted by the static checks (no step fails
// before the one expected to, and for "all pass" none fails at all).
std::string static_verdict_mismatch(const nlohmann::json& report, int exit_code, const FixtureExpectation& e);

}  // namespace grader
