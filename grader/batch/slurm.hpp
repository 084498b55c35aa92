// Batch grading on a Slurm cluster: `grader batch --slurm` writes a job array
// (one task per submission) under OUT/slurm/ and submits it; each task runs
// `grader batch-task OUT INDEX`, which grades one submission exactly as
// `grader batch` does (grade_submission: an isolated child grader) and writes
// OUT/results/<id>.json; `grader collect OUT` turns the results into the same
// gradebooks. The course folder, OUT and the grader binary must be on a
// filesystem every node sees at the same path.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "batch.hpp"
#include "gradebook.hpp"

namespace grader {

struct SlurmJobSettings {
  std::string partition, account, time;  // empty: the cluster's defaults
  std::string gres = "gpu:1";            // "none": no --gres line
  std::string job_name;
  // nvcc builds two programs per grade: cluster defaults (often 1 CPU and a
  // little memory) make a task slow or kill it.
  int cpus_per_task = 4;
  std::string mem = "16G";  // per task; "" leaves it to the cluster
  int max_running = 8;      // array throttle (%N); 0: no limit
};

// Everything a task needs, written to OUT/slurm/batch.json
// (schema cuda-memory-labs/slurm-batch/1) so a task depends on nothing else.
struct SlurmBatch {
  std::filesystem::path out;          // absolute
  std::filesystem::path course_root;  // absolute
  std::filesystem::path grader_exe;   // absolute, run by every task
  std::filesystem::path submissions_dir;
  std::string lab, lab_id, arch;  // arch empty: each node builds for its own GPU
  IsolationAsked isolation = IsolationAsked::automatic;
  double timeout_s = 1800;
  double hint_penalty = 0;
  bool all_steps = false;
  SlurmJobSettings job;
  std::vector<Submission> submissions;  // task i grades submissions[i]
};

nlohmann::json slurm_batch_to_json(const SlurmBatch& b);
// Throws std::runtime_error naming the file when it is missing or malformed.
SlurmBatch load_slurm_batch(const std::filesystem::path& out);

// Checks a --time / --gres / --partition / --account / --mem / --cpus-per-task /
// --max-running value; "" when fine, else why not.
std::string check_slurm_settings(const SlurmJobSettings& s);

// Every task reads the course, the submissions and the grader and writes OUT
// at the same paths on its compute node: a warning for each of these paths
// that lies on a file system local to this machine (ext4, xfs, tmpfs, ...),
// which other nodes cannot see. Network and cluster file systems (NFS,
// Lustre, GPFS, BeeGFS, CephFS, ...) and unknown ones give no warning.
std::vector<std::string> local_path_warnings(const SlurmBatch& b);

// The job array script (text of OUT/slurm/job.sbatch).
std::string slurm_job_script(const SlurmBatch& b);
// One submission per line (the path graded by task i on line i+1).
std::string slurm_task_list(const SlurmBatch& b);

// Writes OUT/slurm/{batch.json,tasks.txt,job.sbatch} atomically and creates
// OUT/slurm/logs/ and OUT/results/. Returns the script's path.
std::filesystem::path write_slurm_batch(const SlurmBatch& b);

// Runs `sbatch --parsable SCRIPT`; returns the job id and records it in
// OUT/slurm/job_id. Throws EnvironmentError with sbatch's message on failure.
std::string submit_slurm_batch(const SlurmBatch& b, const std::filesystem::path& script);

// Task index: the one given, else $SLURM_ARRAY_TASK_ID. Throws CourseError
// when neither is a valid index of b.
std::size_t slurm_task_index(const SlurmBatch& b, const std::string& given);

// The row of a submission whose task wrote no result: status "not_graded" (no
// score, never a 0), with the task's Slurm log when there is one.
BatchRow missing_slurm_row(const SlurmBatch& b, std::size_t index);

// The rows of every submission, in the order of b.submissions: its
// results/<id>.json when present and for this lab, else missing_slurm_row.
std::vector<BatchRow> collect_slurm_rows(const SlurmBatch& b, std::size_t* missing = nullptr);

// grades.csv, junit.xml and gradescope/<id>/results.json under out, atomically.
void write_gradebooks(const std::filesystem::path& out, const std::vector<BatchRow>& rows, const GradebookInfo& info);

}  // namespace grader
