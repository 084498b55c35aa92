// Whether a grade gave a fixture the verdict its header states
// (model/fixture_expectation.hpp): the course tests and `grader check` judge
// with these same rules.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "fixture_expectation.hpp"
#include "grading.hpp"

namespace grader {

// "" when the grade matches, messages included, else why not, with what the
// grade did appended.
std::string verdict_mismatch(const GradeReport& report, const FixtureExpectation& e);
// The same for a grade without a GPU: a static expectation must hold exactly
// (with its messages); any other must not be contradicted by the static checks
// (no step fails before the one expected to, and for "all pass" none fails at all).
std::string static_verdict_mismatch(const GradeReport& report, const FixtureExpectation& e);

// The same, for what another grader process printed with --json and the exit
// code it ended with: a document that is not a grade report (an error's) is a
// mismatch that shows it.
std::string verdict_mismatch(const nlohmann::json& printed, int exit_code, const FixtureExpectation& e);
std::string static_verdict_mismatch(const nlohmann::json& printed, int exit_code, const FixtureExpectation& e);

}  // namespace grader
