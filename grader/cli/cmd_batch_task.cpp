// grader batch-task OUT [INDEX] — one array task of `grader batch --slurm`
// (hidden: job.sbatch runs it). Grades submission INDEX (default
// $SLURM_ARRAY_TASK_ID) of OUT/slurm/batch.json and writes OUT/results/<id>.json,
// signed with OUT/slurm/key (result_signature.hpp).
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

#include "app.hpp"
#include "batch.hpp"
#include "json_text.hpp"
#include "result_signature.hpp"
#include "session.hpp"
#include "slurm.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

struct BatchTaskOptions {
  std::string out, index;
};

std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string("?");
}

// A resubmitted array keeps what already finished for the same bytes, as
// `grader batch` does: true when `file` holds such a result.
bool finished_before(const fs::path& file, const SlurmBatch& b, const std::string& hash, const std::string& key) {
  if (!fs::exists(file)) return false;
  try {
    std::ifstream in(file, std::ios::binary);
    const json j = json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
    const BatchRow old = row_from_json(j);
    if (signature_holds(j, key) && j.value("lab", "") == b.lab_id && old.hash == hash &&
        old.status != RowStatus::error && old.status != RowStatus::not_graded) {
      std::cout << "kept from an earlier run: " << name_of(old.status) << "\n";
      return true;
    }
  } catch (const std::exception&) {
  }
  return false;
}

// A row that is not a grade: the submission was rejected, or this node could not grade it.
BatchRow row_without_grade(const Submission& s, const SlurmBatch& b, const std::string& hash, RowStatus status,
                           const std::string& reason) {
  BatchRow row;
  row.id = s.id;
  row.status = status;
  row.reason = reason;
  row.hash = hash;
  row.hints_used = hints_used(s.folder, b.lab_id);
  return row;
}

// Grades one submission on this node as `grader batch` would, in one job slot.
BatchRow grade_on_this_node(const Submission& s, const SlurmBatch& b, const GlobalOptions& g, std::string& isolation) {
  GlobalOptions task = g;
  task.json = true;
  if (task.root.empty()) task.root = b.course_root;
  if (task.arch.empty()) task.arch = b.arch;
  Session session = Session::open(task);
  BatchEnvironment env = prepare_batch_environment(session, b.isolation, {b.submissions_dir, b.out});
  isolation = memlabs::name_of(env.isolation.mode);
  std::cout << "isolation: " << env.isolation_note << std::endl;
  BatchSettings settings = batch_settings(session, b.lab, b.lab_id, b.out, env.isolation, b.all_steps);
  settings.jobs = 1;
  settings.timeout_s = b.timeout_s;
  return grade_submission(s, settings);
}

int run_batch_task(const BatchTaskOptions& o, const GlobalOptions& g) {
  SlurmBatch b;
  try {
    b = load_slurm_batch(fs::absolute(o.out));
  } catch (const std::runtime_error& e) {
    throw CourseError(e.what());
  }
  const std::size_t i = slurm_task_index(b, o.index);
  const Submission& s = b.submissions[i];
  const fs::path file = b.out / "results" / (result_file_stem(s.id) + ".json");
  const std::string hash = submission_hash(s.source);
  // SLURM_JOB_ID is the task's own id; the array's id and index name its log.
  const char* array_job = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* array_task = std::getenv("SLURM_ARRAY_TASK_ID");
  const std::string job = array_job && array_task ? std::string(array_job) + "_" + array_task : "";
  std::cout << "task " << i << ": " << s.id << " (" << (s.source.empty() ? b.submissions_dir / s.id : s.source).string()
            << ") on " << host_name() << (job.empty() ? "" : ", Slurm job " + job) << std::endl;
  const std::string key = read_result_key(b.out);
  if (finished_before(file, b, hash, key)) return kExitPass;

  BatchRow row;
  std::string isolation = name_of(b.isolation);
  int code = kExitPass;
  const std::string problem = s.problem.empty() ? check_submission_file(s.source) : s.problem;
  if (!problem.empty()) {
    row = row_without_grade(s, b, hash, RowStatus::rejected, problem);
  } else {
    try {
      row = grade_on_this_node(s, b, g, isolation);
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception& e) {
      // The gradebook says why instead of only "no result".
      row = row_without_grade(s, b, hash, RowStatus::error, "cannot grade on " + host_name() + ": " + e.what());
      code = kExitEnvironment;
    }
  }
  // Written after every process of the submission has ended (grade_submission waits for
  // its child grader, whose seal swept them), signed so that `collect` takes nothing else.
  write_file_atomically(file, json_text(signed_result(row_to_json(row, b.lab_id, isolation), key)) + "\n");
  std::cout << name_of(row.status) << (row.reason.empty() ? "" : ": " + row.reason) << "\nwrote " << file.string()
            << "\n";
  // A row without a grade (no GPU on this node, a tool's own failure) is the
  // node's failure: exit 4, as a grade does, so the array shows it.
  if (row.status == RowStatus::not_graded) code = kExitEnvironment;
  return code;
}

}  // namespace

Command batch_task_command() {
  return {"batch-task", "", [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
            auto o = std::make_shared<BatchTaskOptions>();
            sub.group("");  // run by job.sbatch, not by people
            sub.add_option("out", o->out, "the --out folder of `grader batch --slurm`")->required();
            sub.add_option("index", o->index,
                           "the submission's line in tasks.txt, from 0 (default: $SLURM_ARRAY_TASK_ID)");
            return [o, &g] { return run_batch_task(*o, g); };
          }};
}

}  // namespace grader
