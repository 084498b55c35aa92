// The grading loop for one lab: build the submission's program and the lab's referee,
// then grade the manifest's steps in order with the checks each names.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "builder.hpp"
#include "calibration.hpp"
#include "course.hpp"
#include "manifest.hpp"
#include "session.hpp"
#include "symptom.hpp"

namespace grader {

struct GradeOptions {
  std::optional<std::filesystem::path> submission;  // default: the lab's kernel.cu
  std::optional<std::uint64_t> seed;                // default: fresh every grade
  bool all_steps = false;                           // grade past the first failing step
  double cap_s = 3.0;                               // timing cap per case
  bool sanitize = false;  // add a compute-sanitizer check to every step that checks correctness
  // Reuse the ncu and compute-sanitizer reports of the very same program from an
  // earlier grade (kept_tool_runs.hpp): `grader grade` and `grader watch` without --fresh.
  bool reuse_tool_runs = false;
  // Start the tool runs and the first timing beside the correctness run, before
  // any step needs them: one grade ends sooner. Off (`--one-step-at-a-time`),
  // each run starts when its step is graded, so a failing step leaves nothing
  // running that no check reads: many grades side by side (`grader check`) end
  // sooner. Either way the same checks run and decide the same verdict.
  bool overlap_runs = true;
  // In a failing step, start no run of its own (compute-sanitizer, ncu, a
  // timing) once a check has failed, taking the checks cheapest first (the
  // compiler's evidence and the correctness run's checks, which always run,
  // then compute-sanitizer, ncu, the timings); those left out are reported as
  // not run. The verdict (exit code, first failing step) is the same; what the
  // checks left out would have said is not known. `grader check` grades its
  // skeletons and fixtures so (`--first-failure-only`), and again in full
  // where the failure it expected is among the checks not run.
  bool first_failure_only = false;
  // Time each timed case until its intervals are also clear of every threshold
  // times this (1: the thresholds alone). The verdict still reads the
  // threshold; `grader check` grades the solution so, and reads the
  // reference's margin over each threshold from the same timing.
  double decide_margin = 1.0;
  // Also read a calibration `grader calibrate --self-study` kept for this user
  // (grader grade and watch without --fresh); a batch, Gradescope and `grader
  // check` read the course's calibration/ alone.
  bool use_user_calibration = false;
  // Only the timed checks, in every step (`grader calibrate` reads their medians
  // and nothing else): no compiler evidence, correctness run or tool run is graded.
  bool timed_only = false;
};

// A check's or a step's outcome; a report writes its name (name_of).
enum class Outcome { pass, fail, skipped, locked };
const std::string& name_of(Outcome outcome);
// In JSON an outcome is its name, never its number.
void to_json(nlohmann::json& j, Outcome outcome);
void from_json(const nlohmann::json& j, Outcome& outcome);

struct CheckResult {
  CheckKind kind = CheckKind::correct;
  Outcome status = Outcome::pass;  // pass, fail or skipped
  std::string summary;             // one line
  std::vector<std::string> details;
  std::optional<Symptom> symptom;  // what a failing check saw, when it can say
  nlohmann::json data = nlohmann::json::object();
  // Skipped only because an optional tool (ncu) cannot run here: the step's
  // other checks decide it, and the report says what was not measured.
  bool advisory = false;
};

// The checks of a step in the order --first-failure-only takes them: cheapest first.
// Those with a run of their own (compute-sanitizer, ncu, a timing) are what it leaves out.
bool has_a_run_of_its_own(CheckKind kind);
std::vector<std::size_t> cheapest_first(const std::vector<Check>& checks);
// A check that --first-failure-only left out (CheckResult::data["not_run"]).
bool not_run_after_a_failure(const CheckResult& c);

struct StepResult {
  int id = 0;
  std::string title;
  int points = 0;
  Outcome status = Outcome::locked;
  std::vector<CheckResult> checks;
  std::string symptom_hint;  // the manifest's hint for what was seen, when it has one
};

struct GradeReport {
  std::string lab_folder, lab_id, title, submission, arch;
  std::uint64_t seed = 0;
  DeviceInfo device;
  RunnerBuild student_build;  // the submission's program and the lab's referee
  std::vector<StepResult> steps;
  std::optional<int> current_step;  // the first step not passed
  std::vector<std::string> notes;
  CalibrationUse calibration;  // which thresholds the timed checks used
  std::string program_output;  // what the student's program printed, truncated
  double seconds = 0;
  int exit_code = 0;
};

GradeReport grade_lab(Session& session, const LabInfo& lab, const Manifest& manifest, const GradeOptions& options);

// Every text of `report` made printable (printable.hpp: controls shown as
// escapes, invalid UTF-8 replaced). A grade hands out its report only through
// this (printable_report.cpp), so what a submission made its compiler, its
// program or a tool print reaches every writer of a report as data.
void make_printable(GradeReport& report);

// The hint for what the failing checks of `step` measured: the step's own
// symptom_hints first, then the lab's; "" when none matches.
std::string symptom_hint(const Manifest& manifest, const Step& step, const std::vector<CheckResult>& checks);

// The manifest with only its timed checks (an ncu check's timed fallback
// stands in for it), each step keeping its place: what a --timed-only grade grades.
Manifest timed_checks_only(Manifest manifest);

// The manifest with a compute-sanitizer check added to every step that checks
// correctness and has none (grade --sanitize).
Manifest with_sanitizer_checks(Manifest manifest);

// A value the referee read from a submission's output, for a message: a
// number, or "nan", "inf", "-inf" (JSON has neither; memlabs::value_json).
std::string value_text(const nlohmann::json& v);

// The compute capability an arch names, as major * 10 + minor: 90 for "sm_90"
// and "sm_90a", 100 for "sm_100"; nothing for a name it cannot read.
std::optional<int> compute_capability_of(const std::string& arch);

// Why `step` is not graded with this GPU and this build: it needs a newer
// compute capability (Step::min_compute_capability) than the GPU has ("needs
// compute capability 9.0; this GPU is 8.0") or, with no GPU or one new enough,
// than the code is built for (--arch sm_80: "needs compute capability 9.0;
// building for sm_80"). Nothing when the step needs none or both suffice; an
// arch it cannot read is not held against the step.
std::optional<std::string> compute_capability_shortfall(const Step& step, const DeviceInfo& device,
                                                        const std::string& arch);

// Every check of a step this GPU or build does not grade, skipped saying why
// (data "not_graded"): not advisory, so the step is skipped and scores nothing.
std::vector<CheckResult> checks_not_graded(const Step& step, const std::string& why);

nlohmann::json report_to_json(const GradeReport& report);
// A report as report_to_json wrote it (another grader process's, e.g. a child
// grade of `grader check`). Every key it reads is required; throws
// nlohmann::json::exception or std::invalid_argument naming what is wrong.
GradeReport report_from_json(const nlohmann::json& j);
void print_report(const GradeReport& report, bool verbose);

}  // namespace grader
