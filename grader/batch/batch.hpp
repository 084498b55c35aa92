// Batch grading: a folder of submissions, each graded by its own `grader grade`
// child process in a private temporary folder, with a scrubbed environment and
// the submission's code isolated (sandbox.hpp): its build in the sandbox, its
// program started by the referee in it. The child's grade comes back through a
// pipe, never a file the submission could reach. A crash, hang, hostile
// submission or odd folder name costs one row, never the batch; finished rows
// are kept, so a rerun resumes. Without a GPU nothing is graded: every row says
// so and the batch exits non-zero.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "atomic_file.hpp"
#include "grading.hpp"
#include "sandbox.hpp"

namespace grader {

inline constexpr std::uint64_t kMaxSubmissionBytes = 1u << 20;

struct Submission {
  std::string id;                // folder name, or file stem of <id>.cu
  std::filesystem::path source;  // the kernel.cu to grade (may not exist)
  std::filesystem::path folder;  // the submission's folder; empty for a lone <id>.cu
  std::string problem;           // why it cannot be graded; empty when it can (so far)
};

// The file a row is kept in under results/ (and gradescope/): the id itself
// when it is a plain name, else a name made from its hash, so no folder name
// (too long, control characters, a leading dash) can break the batch.
std::string result_file_stem(const std::string& id);

// Each entry of dir is a folder holding kernel.cu or a file <id>.cu; anything
// else becomes a submission with a problem. Hidden entries (".x") are skipped.
// Sorted by id; a repeated id is a problem for the later entry.
std::vector<Submission> discover_submissions(const std::filesystem::path& dir);

// Empty when the file can be graded, else why not: missing, a symbolic link,
// empty, larger than kMaxSubmissionBytes, or not UTF-8 text.
std::string check_submission_file(const std::filesystem::path& file);

// Content hash of a submission's file ("" when it cannot be read): a finished
// row is reused only for the same bytes.
std::string submission_hash(const std::filesystem::path& file);

// Hints the student asked for in this lab, from <folder>/.grader/progress.json
// (0 when absent or unreadable; the file is only read, never repaired).
int hints_used(const std::filesystem::path& folder, const std::string& lab_id);
// What that count is: the upload's own file, which the student writes and can
// edit or delete, so it is the student's word; every export says so
// (hints_source; docs/security.md).
inline constexpr const char* kHintsSource = "self-reported";

struct BatchSettings {
  std::filesystem::path course_root;
  std::filesystem::path grader_exe;  // the grader binary the children run (normally /proc/self/exe)
  std::string lab;                   // as the user typed it; passed to the children
  std::string lab_id;                // "lab07": what progress.json files are keyed by
  std::string arch;                  // passed on, so every child builds the same code
  std::filesystem::path out;         // results go to out/results/<id>.json
  int jobs = 1;
  double timeout_s = 1800;  // per submission, whole grade (builds + queueing for the GPU + runs)
  bool all_steps = false;
  IsolationSettings isolation;  // mode, hidden folders, GPU lock
  std::string no_gpu_reason;    // not empty: there is no GPU, so nothing is graded
};

// One row of a batch: what results/<id>.json holds (schema cuda-memory-labs/batch-result/1).
// How a row of a batch ended: a verdict (graded), a bad submission
// (rejected), a grade that did not finish (error), or no verdict for want of
// the machinery (not_graded: no GPU here, or a step a tool could not grade),
// where no score is recorded.
enum class RowStatus { graded, rejected, error, not_graded };
inline constexpr RowStatus kEveryRowStatus[] = {RowStatus::graded, RowStatus::rejected, RowStatus::error,
                                                RowStatus::not_graded};
// As results/<id>.json, the gradebooks and the terminal write it: "graded", ...
const char* name_of(RowStatus status);
void to_json(nlohmann::json& j, RowStatus status);
void from_json(const nlohmann::json& j, RowStatus& status);  // throws on another name

struct BatchRow {
  std::string id;
  RowStatus status = RowStatus::error;
  std::string reason;  // rejected/error: why
  std::string hash;
  int hints_used = 0;
  int grader_exit_code = -1;
  // The grade/1 document as the child grader printed it (its phases too), which
  // the row's file keeps, and the same document read as a GradeReport, which
  // every reader of the row uses; null and nothing for a row without a grade.
  // set_report sets both.
  nlohmann::json report_document;
  std::optional<GradeReport> report;
  double seconds = 0;
  bool reused = false;  // read back from an earlier run (not written to the file)
};

nlohmann::json row_to_json(const BatchRow& row, const std::string& lab_id, const std::string& isolation);

// Why a finished grade/1 document is no verdict, or nothing when it is one. A
// grade that exits 4 left a step skipped for a reason of its own (ncu failing
// twice on the program, a tool missing): scoring it would count the step as
// failed for a measurement that never happened, so the row is not scored and a
// rerun of the batch grades it again.
std::optional<std::string> not_graded_reason(const GradeReport& grade);
// Sets the row's report from a grade/1 document; throws when it does not read
// as this grader's (report_from_json), leaving the row without one.
void set_report(BatchRow& row, nlohmann::json document);
void clear_report(BatchRow& row);
BatchRow row_from_json(const nlohmann::json& j);

struct Session;

// What a batch needs from the grading machine: the isolation it can give and the
// facts a gradebook records (GPU, driver, CUDA).
// The settings every grade of a batch shares, from this session: its course,
// this grader binary, the architecture it builds for, the isolation, and why
// nothing is graded when there is no GPU. jobs and timeout_s are the caller's.
BatchSettings batch_settings(const Session& session, const std::string& lab, const std::string& lab_id,
                             const std::filesystem::path& out, const IsolationSettings& isolation, bool all_steps);

// How many rows ended each way.
struct BatchCounts {
  int graded = 0, rejected = 0, errors = 0, not_graded = 0;
};
BatchCounts count_rows(const std::vector<BatchRow>& rows);

struct BatchEnvironment {
  IsolationSettings isolation;
  std::string isolation_note;  // how submissions are isolated, and why no more than that
  nlohmann::json environment;  // {gpu, driver, cuda, isolation}
};
// The isolation a batch is asked for (--isolation, and a Slurm batch's file), by
// name: "auto" (bwrap when it works here, else the seal and rlimits), "bwrap"
// (or nothing graded) or "rlimits".
enum class IsolationAsked { automatic, bwrap, rlimits };
inline constexpr IsolationAsked kEveryIsolationAsked[] = {IsolationAsked::automatic, IsolationAsked::bwrap,
                                                          IsolationAsked::rlimits};
const char* name_of(IsolationAsked asked);
// The one of that name; throws CourseError naming the three for any other text.
IsolationAsked isolation_asked_named(const std::string& name);

// asked: bwrap throws EnvironmentError when it does not work here. hidden: folders the
// runner must not see besides the course's solutions/ and .grader/, $HOME and /tmp.
BatchEnvironment prepare_batch_environment(const Session& session, IsolationAsked asked,
                                           const std::vector<std::filesystem::path>& hidden);

// Grades one submission (already checked) in its own child grader.
BatchRow grade_submission(const Submission& s, const BatchSettings& settings);

// Grades every submission, jobs at a time, writing each row as it finishes;
// rows whose result file exists for the same lab and bytes are read back.
// progress(row) is called for every row, from one thread at a time.
std::vector<BatchRow> run_batch(const std::vector<Submission>& submissions, const BatchSettings& settings,
                                const std::function<void(const BatchRow&)>& progress = {});

}  // namespace grader
