// The course lint behind `grader check`: what an instructor runs before
// publishing. Each lab gets a list of items, each of which holds, fails, is
// skipped (with the reason) or warns. The pieces that read only text are
// separate functions so that each rule can be tested on a small made-up lab;
// lint_lab_builds drives nvcc through grade_lab, and lint_labs_gpu the GPU
// through child `grader grade --fresh` runs, so a lint verdict is the verdict a
// student would get.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "course.hpp"
#include "fixture_expectation.hpp"
#include "manifest.hpp"

namespace grader {

struct Session;

// A lint item's verdict: it holds (pass), it does not (fail), it could not be
// checked here (skip: no GPU, no solution), or it holds with a caution (warn).
enum class LintStatus { pass, fail, skip, warn };
// As `grader check` prints it and --json writes it: "pass", "fail", "skip", "warn".
const char* name_of(LintStatus status);
void to_json(nlohmann::json& j, LintStatus status);

struct LintItem {
  std::string id;  // stable: "files", "lesson_sections", "fixture:off_by_one", "margin:step3:speedup:8192x8192"
  LintStatus status = LintStatus::pass;
  std::string summary;  // one line
  std::vector<std::string> details;
};

struct LabLint {
  std::string lab;  // folder
  std::vector<LintItem> items;
  bool manifest_error = false;  // lab.json missing or malformed
};

// Inputs the text-only rules share, read once per lab.
struct LabSources {
  LabInfo lab;
  std::filesystem::path course_root;
  std::optional<Manifest> manifest;  // absent when lab.json does not load
  std::string manifest_error;
  std::optional<std::string> readme, skeleton;
  std::optional<std::filesystem::path> solution_path;  // absent in a published copy
  std::optional<std::string> solution;                 // absent when the file is missing
  bool published = false;                              // the course has no solutions/ at all
  std::vector<std::filesystem::path> fixtures;         // tests/fixtures/<lab>/*.cu, sorted
};

LabSources read_lab_sources(const Course& course, const LabInfo& lab);

// The files every lab folder holds (docs/architecture.md, "A lab").
const std::vector<std::string>& required_lab_files();
// The lesson's level-2 sections, in this order.
const std::vector<std::string>& required_lesson_sections();

// One item of a lint report.
inline LintItem make_item(const std::string& id, LintStatus status, const std::string& summary,
                          std::vector<std::string> details = {}) {
  return {id, status, summary, std::move(details)};
}

LintItem lint_files(const std::filesystem::path& lab_dir);
LintItem lint_solution_present(const LabSources& s);
LintItem lint_manifest(const LabSources& s);
LintItem lint_symptom_hints(const Manifest& m);
// Each step's hints: at least 3, one naming the command that shows the step's
// evidence, the last one guiding without pasting the answer.
LintItem lint_hints(const Manifest& m);
LintItem lint_lesson_sections(const std::string& readme);
LintItem lint_lesson_thresholds(const std::string& readme, const Manifest& manifest);
// Markers well formed, each naming a step that exists; with a solution, each
// marker's region changed by it (so the step "needs code"). Two items:
// "todo_markers" and "todo_solution" (skipped without a solution).
std::vector<LintItem> lint_todo_markers(const std::string& skeleton, const std::optional<std::string>& solution,
                                        const Manifest& manifest);
LintItem lint_stray_hunks(const std::string& skeleton, const std::string& solution);
// No file of the lab folder (its lab.json without the paid hints) and no free
// symptom hint holds a step's fix (step_fixes.hpp). Skipped without a solution.
LintItem lint_given_fixes(const LabSources& s);
// The header parses and fits the lab. On success *out holds it.
LintItem lint_fixture_header(const std::filesystem::path& fixture, const Manifest& manifest,
                             FixtureExpectation* out = nullptr);

// Everything above for one lab, without a compiler.
LabLint lint_lab_sources(const LabSources& s);

// With nvcc (no GPU is used even when one is visible): both kernels build,
// the solution passes every static check, what the skeleton's static checks
// say, and every fixture's static verdict. Appends to `out`.
void lint_lab_builds(Session& session, const LabSources& s, LabLint& out);

struct GpuLintOptions {
  double cap_s = 3.0;  // timing per case, as `grader grade --cap`
  double required_margin = 1.25;
  // Grades at once. Each runs in a grader process of its own; their timings
  // still take the GPU one at a time, the rest of their work shares it.
  std::size_t jobs = default_gpu_lint_jobs();
  static std::size_t default_gpu_lint_jobs(std::size_t gpus = 1);  // half the cores, 2 to 8 a GPU
  // The GPUs the grades spread over, as CUDA_VISIBLE_DEVICES entries (check_gpus);
  // fewer than two: every grade on the GPU this process sees.
  std::vector<std::string> gpus;
};
// The GPUs a check may spread its grades over: one CUDA_VISIBLE_DEVICES entry
// each. `visible` is this process's CUDA_VISIBLE_DEVICES (null when unset): a
// child must name a GPU the way the driver reads it, not by its index among
// the visible ones. `devices` is how many the driver reports.
std::vector<std::string> check_gpus(int devices, const char* visible);
// On the GPU, for every lab given: the skeleton fails its first step, the
// solution passes every step, the reference clears each timed threshold by
// the margin, every fixture gets its verdict. Appends to each lab's lint, in
// that order, whatever order the grades finish in.
void lint_labs_gpu(Session& session, const std::vector<std::pair<const LabSources*, LabLint*>>& labs,
                   const GpuLintOptions& options);

struct GradeReport;
// Each timed case's timing report in a grade (its first timed check's data, which holds the rounds).
std::map<std::string, const nlohmann::json*> timings_by_case(const Manifest& m, const GradeReport& report);
// One program graded on the GPU by a child grader, as `grader check` grades.
struct GpuProgramGrade {
  const LabSources* lab = nullptr;  // with its manifest
  std::filesystem::path submission;
  std::string name;  // for its work folder
  enum How {
    first_failure,  // up to its first failing check
    every_step,     // every step, also past a failing one (each timed case timed)
    solution,       // every step, each timing decided at threshold × required margin too
  } how = first_failure;
  bool timed_only = false;              // grade only the timed checks (grader calibrate)
  std::shared_ptr<GradeReport> report;  // null when the grade gave none
  std::string error;                    // why
};
// Grades them all, options.jobs at a time over options.gpus; work folders under work_dir.
void grade_on_gpu(Session& session, std::vector<GpuProgramGrade>& grades, const GpuLintOptions& options,
                  const std::filesystem::path& work_dir);

// "step 1 fails: ptx (transpose_kernel PTX: no ld.shared)" for each failing check.
std::vector<std::string> failing_checks(const GradeReport& report);
// A compiler's (or a grade's) text as lines: the first `max_lines`, and how many more.
std::vector<std::string> diagnostics_lines(const std::string& text, std::size_t max_lines = 12);

// The margin rule on its own: median over threshold; fraction_of_peak only
// warns below the margin (a near-peak fraction cannot always clear 1.25×).
LintItem margin_item(int step, const Check& check, double median, double required_margin);
// margin_item for every timed threshold of the lab (a fallback's too), each
// from the solution's grade (graded with --decide-margin): any timed check
// on a case carries that case's whole timing report. A threshold whose case
// it did not time (no report: nullptr) fails.
std::vector<LintItem> margin_items(const Manifest& m, const GradeReport* solution, double required_margin);

struct CourseLint {
  std::string root;
  bool published = false, static_only = false;
  std::string arch;    // what nvcc built for; empty without nvcc
  nlohmann::json gpu;  // DeviceInfo raw, or null
  std::vector<LabLint> labs;
  std::vector<std::pair<std::string, std::string>> skipped;  // what, why
  int exit_code = 0;
};

// 2 when a manifest is malformed, else 1 when an item fails, else 4 when
// `not_all_checked` (no toolkit, or no GPU for the GPU checks that were not
// declined with --static-only: what ran held, but it was not the whole check),
// else 0.
int lint_exit_code(const CourseLint& c, bool not_all_checked);
nlohmann::json lint_to_json(const CourseLint& c);

}  // namespace grader
