// `grader calibrate`: on this GPU, grade every lab's solution, its honest
// alternatives (the `alt_*` fixtures, "expect: all pass") and the fixtures
// expected to fail a timed check, read each timed check's median from those
// grades, and choose each threshold for this card (threshold_rule.hpp). The
// result is a calibration (model/calibration.hpp) the course commits as
// calibration/<gpu model>.json, or a student keeps for self-study.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibration.hpp"
#include "course_lint.hpp"
#include "grading.hpp"

namespace grader {

struct Session;

// One lab's grades on this card.
struct LabCalibrationGrades {
  std::optional<GradeReport> solution;
  std::string solution_error;                 // why there is no report
  std::map<std::string, GradeReport> honest;  // fixture stem -> its grade (all steps)
  struct Failing {
    FixtureExpectation expectation;
    GradeReport report;
  };
  std::map<std::string, Failing> failing;  // fixture stem -> its grade
};

// Each timed check's median in a grade (timed_check_id -> median), read from
// the timing report its case's first timed check carries.
std::map<std::string, double> timed_medians(const Manifest& m, const GradeReport& report);

// The lab's timed checks on this card. `design` is the design card's
// calibration of this lab (its references scale the design values), absent on
// the design card or where none was made. A check the grades give no reference
// for is left out, and `problems` says why.
std::map<std::string, CalibratedCheck> calibrate_lab(const Manifest& m, const LabCalibrationGrades& grades,
                                                     const std::map<std::string, CalibratedCheck>* design,
                                                     bool design_card, std::vector<std::string>& problems);

// Whether a fixture's grade says anything about the timed checks: an honest one
// (all pass) about every one, a wrong one about the check it must fail.
bool calibrates_with(const FixtureExpectation& e, const Manifest& m);

struct CalibrateResult {
  Calibration calibration;
  std::vector<std::string> problems;  // checks left out, grades that failed
};

// Grades every lab given on this GPU, several at once as `grader check` does,
// and calibrates each. Needs a GPU and the course's solutions.
CalibrateResult calibrate_labs(Session& session, const std::vector<LabSources>& labs, const GpuLintOptions& options);

// One line per timed check: its design value, this card's value and why, the
// reference's margin over it, the lowest honest and highest wrong median.
std::vector<std::string> calibration_table(const Calibration& c);

// Writes `fresh` to `file` (atomically), keeping the labs a calibration
// already there holds for the same GPU and toolkit that `fresh` does not.
void write_calibration(const std::filesystem::path& file, Calibration fresh);

// Self-study: a grade of a lab the course has no calibration of for this GPU
// (no file for the card, or one without the lab), in a course with its
// solutions, and not yet calibrated for this lab by this user, calibrates the
// lab once first and keeps it as this user's (user_calibration_file), merged
// with the labs calibrated before.
bool needs_self_study_calibration(const Session& session, const LabInfo& lab);
// Whether it wrote a calibration of the lab.
bool calibrate_lab_for_self_study(Session& session, const LabInfo& lab);

// The calibration as a class copy carries it: the thresholds, without the
// names and medians of the course's fixtures.
Calibration published_calibration(Calibration c);

}  // namespace grader
