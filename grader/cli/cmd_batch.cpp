// grader batch SUBMISSIONS --lab LAB — grade a whole class and write the gradebooks.
#include <sched.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "app.hpp"
#include "batch.hpp"
#include "gradebook.hpp"
#include "json_text.hpp"
#include "session.hpp"
#include "slurm.hpp"
#include "terminal.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

struct BatchCommandOptions {
  std::string submissions, lab, out, isolation = "auto";
  int jobs = 0;
  double hint_penalty = 0;
  double timeout_s = 1800;
  bool all = false;
  bool slurm = false, no_submit = false;
  SlurmJobSettings job;
};

// The cores this process may use (as nproc counts them), not the machine's.
int usable_cores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::string row_line(const BatchRow& r, const GradebookInfo& info) {
  std::string s = r.id + "  ";
  if (r.status == RowStatus::graded)
    s += format_number(final_score(earned_points(r, info), r.hints_used, info.hint_penalty), 2) + "/" +
         format_number(info.total_points(), 2) + " points";
  const std::string notes = row_notes(r, info);
  if (!notes.empty()) s += (r.status == RowStatus::graded ? "  (" + notes + ")" : notes);
  if (r.reused) s += "  [kept from an earlier run]";
  return s;
}

// --slurm: no grading here (the login node may have neither GPU nor nvcc);
// the job array grades, `grader collect` writes the gradebooks.
int run_slurm_batch_command(const BatchCommandOptions& o, const GlobalOptions& g) {
  if (const std::string why = check_slurm_settings(o.job); !why.empty()) throw CourseError(why);
  const Course course = Course::discover(g.root);
  const LabInfo& lab = course.resolve(o.lab);
  load_manifest(lab.dir / "lab.json");  // a broken manifest fails here, not in every task
  SlurmBatch b;
  b.submissions_dir = fs::absolute(o.submissions).lexically_normal();
  try {
    b.submissions = discover_submissions(b.submissions_dir);
  } catch (const std::runtime_error& e) {
    throw CourseError(e.what());
  }
  if (b.submissions.empty()) throw CourseError("no submissions in " + b.submissions_dir.string());
  b.out = fs::absolute(o.out.empty() ? "grades-" + lab.id : o.out).lexically_normal();
  for (const char c : b.out.string())
    if (c == ' ' || c == '\t' || c == '\n' || c == '\'' || c == '"' || c == '#' || c == '\\' || c == '%')
      throw CourseError(
          "--out " + b.out.string() +
          ": Slurm's #SBATCH --output cannot hold spaces, quotes, '#', '%' or '\\'; choose another folder");
  b.course_root = course.root();
  b.grader_exe = fs::read_symlink("/proc/self/exe");
  b.lab = lab.folder;
  b.lab_id = lab.id;
  b.arch = g.arch;
  b.isolation = isolation_asked_named(o.isolation);
  b.timeout_s = o.timeout_s;
  b.hint_penalty = o.hint_penalty;
  b.all_steps = o.all;
  b.job = o.job;
  const std::vector<std::string> warnings = local_path_warnings(b);
  const fs::path script = write_slurm_batch(b);
  const std::string collect = "grader collect " + b.out.string() + " --lab " + lab.id;
  std::string job_id;
  if (!o.no_submit) job_id = submit_slurm_batch(b, script);
  if (g.json) {
    std::cout << json_text(json{{"schema", "cuda-memory-labs/slurm-submit/1"},
                                {"lab", lab.folder},
                                {"out", b.out.string()},
                                {"script", script.string()},
                                {"tasks", b.submissions.size()},
                                {"submitted", !o.no_submit},
                                {"job_id", job_id.empty() ? json(nullptr) : json(job_id)},
                                {"collect", collect},
                                {"warnings", warnings},
                                {"exit_code", kExitPass}})
              << "\n";
  } else {
    for (const auto& w : warnings) std::cerr << Style::yellow("warning: ") << w << "\n";
    std::cout << "wrote " << script.string() << " (" << b.submissions.size() << " array tasks, one per line of "
              << (b.out / "slurm" / "tasks.txt").string() << ")\n";
    if (o.no_submit)
      std::cout << "not submitted (--no-submit): sbatch " << script.string() << "\n";
    else
      std::cout << "submitted Slurm job " << job_id << "; watch it with: squeue -j " << job_id << "\n";
    std::cout << "when it has finished: " << collect << "\n";
  }
  return kExitPass;
}

// Refused before anything is built.
void check_batch_options(const BatchCommandOptions& o) {
  (void)isolation_asked_named(o.isolation);
  std::error_code ec;
  if (!o.out.empty() && fs::exists(o.out, ec) && !fs::is_directory(o.out, ec))
    throw CourseError("--out " + o.out + " is a file: give a folder for the class's results");
}

// A Slurm job's settings without --slurm would be silently ignored: refused.
void refuse_slurm_only_options(const BatchCommandOptions& o) {
  const SlurmJobSettings defaults;
  if (o.no_submit || !o.job.partition.empty() || !o.job.account.empty() || !o.job.time.empty() ||
      o.job.gres != defaults.gres || o.job.cpus_per_task != defaults.cpus_per_task || o.job.mem != defaults.mem ||
      o.job.max_running != defaults.max_running)
    throw CourseError(
        "--partition, --account, --time, --gres, --cpus-per-task, --mem, --max-running and --no-submit need --slurm");
}

// The class's files, each written atomically: grades.csv, junit.xml and one
// Gradescope results.json per submission.
void write_class_files(const fs::path& out, const std::vector<BatchRow>& rows, const GradebookInfo& info) {
  write_file_atomically(out / "grades.csv", grades_csv(rows, info));
  write_file_atomically(out / "junit.xml", junit_xml(rows, info));
  for (const auto& r : rows)
    write_file_atomically(out / "gradescope" / result_file_stem(r.id) / "results.json",
                          json_text(gradescope_result(r, info)) + "\n");
}

// Each submission's row as `grader --json batch` lists it.
json rows_json(const std::vector<BatchRow>& rows, const GradebookInfo& info) {
  json jrows = json::array();
  for (const auto& r : rows) {
    json row = row_json(r, info);
    row["reused"] = r.reused;
    jrows.push_back(std::move(row));
  }
  return jrows;
}

// `grader --json batch`'s document.
json batch_json(const std::string& lab_folder, const fs::path& out, const BatchEnvironment& env,
                const GradebookInfo& info, const std::vector<BatchRow>& rows, int code) {
  const BatchCounts n = count_rows(rows);
  return {
      {"schema", "cuda-memory-labs/batch/1"},
      {"lab", lab_folder},
      {"out", out.string()},
      {"total_points", info.total_points()},
      {"hint_penalty", info.hint_penalty},
      {"isolation", memlabs::name_of(env.isolation.mode)},
      {"isolation_note", env.isolation_note},
      {"environment", env.environment},
      {"counts", {{"graded", n.graded}, {"rejected", n.rejected}, {"error", n.errors}, {"not_graded", n.not_graded}}},
      {"rows", rows_json(rows, info)},
      {"exit_code", code}};
}

// The lines after the rows: how many ended each way, and the files written.
void print_batch_summary(const std::vector<BatchRow>& rows, const fs::path& out, const std::string& no_gpu_reason) {
  const BatchCounts n = count_rows(rows);
  if (n.not_graded > 0 && !no_gpu_reason.empty())
    std::cout << "not graded: no GPU (" << no_gpu_reason << "): no score was recorded\n";
  else if (n.not_graded > 0)
    std::cout << n.not_graded << " not graded: a step a tool could not grade (each row says which); no score was "
              << "recorded for them, and the next run grades them again\n";
  std::cout << n.graded << " graded, " << n.rejected << " rejected, " << n.errors
            << " errors (retried on the next run)\n"
            << "wrote " << (out / "grades.csv").string() << ", " << (out / "junit.xml").string() << ", "
            << (out / "gradescope").string() << "/<id>/results.json\n";
}

int run_batch_command(const BatchCommandOptions& o, const GlobalOptions& g) {
  check_batch_options(o);
  if (o.slurm) return run_slurm_batch_command(o, g);
  refuse_slurm_only_options(o);
  Session session = Session::open(g);
  const LabInfo& lab = session.course.resolve(o.lab);
  const Manifest manifest = load_manifest(lab.dir / "lab.json");
  const fs::path submissions = fs::absolute(o.submissions);
  std::vector<Submission> subs;
  try {
    subs = discover_submissions(submissions);
  } catch (const std::runtime_error& e) {
    throw CourseError(e.what());
  }
  const fs::path out = fs::absolute(o.out.empty() ? "grades-" + lab.id : o.out);
  fs::create_directories(out);
  BatchEnvironment env = prepare_batch_environment(session, isolation_asked_named(o.isolation), {submissions, out});

  // The referee and common objects built once here, so parallel children find
  // them in the cache instead of all compiling them at once.
  if (session.device.present)
    session.builder->build({{lab.dir, lab.dir / manifest.student_file, "kernel.cu", manifest.link}});

  BatchSettings settings = batch_settings(session, lab.folder, lab.id, out, env.isolation, o.all);
  settings.jobs = o.jobs > 0 ? o.jobs : usable_cores();
  settings.timeout_s = o.timeout_s;

  GradebookInfo info = GradebookInfo::from_manifest(manifest, lab.folder);
  info.hint_penalty = o.hint_penalty;
  info.environment = env.environment;

  if (!g.json) {
    std::cout << "grading " << subs.size() << " submissions of " << lab.folder << " with " << settings.jobs
              << " parallel builds; GPU runs one at a time\n"
              << "isolation: " << env.isolation_note << "\n";
    if (const std::string note = self_reported_hints_note(info.hint_penalty); !note.empty())
      std::cout << Style::yellow("note: ") << note << "\n";
  }
  std::size_t done = 0;
  const auto rows = run_batch(subs, settings, [&](const BatchRow& r) {
    ++done;
    if (!g.json) std::cout << "[" << done << "/" << subs.size() << "] " << row_line(r, info) << std::endl;
  });

  write_class_files(out, rows, info);
  const BatchCounts n = count_rows(rows);
  // No GPU: nothing was graded, and a caller must not take the files for grades.
  const int code = n.not_graded > 0 ? kExitEnvironment : kExitPass;
  if (g.json)
    std::cout << json_text(batch_json(lab.folder, out, env, info, rows, code)) << "\n";
  else
    print_batch_summary(rows, out, session.device.reason);
  return code;
}

}  // namespace

Command batch_command() {
  return {
      "batch", "Grade a folder of submissions and write gradebooks (CSV, Gradescope, JUnit)",
      [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
        auto o = std::make_shared<BatchCommandOptions>();
        sub.add_option("submissions", o->submissions, "folder of submissions: <id>/kernel.cu or <id>.cu")->required();
        sub.add_option("--lab", o->lab, "the lab they are for: lab07, 7, bank-conflicts")->required();
        sub.add_option("--jobs,-j", o->jobs, "parallel builds (default: the number of CPU cores)")
            ->check(CLI::Range(1, 1024));
        sub.add_option("--out", o->out, "where results and gradebooks go (default: ./grades-LAB)");
        sub.add_option("--hint-penalty", o->hint_penalty, "points off per hint used, never below 0 (default 0)")
            ->check(points_per_hint());
        sub.add_option("--isolation", o->isolation, "auto (bwrap when it works), bwrap or rlimits");
        sub.add_option("--timeout", o->timeout_s, "seconds per submission, all steps together (default 1800)")
            ->check(number_between(1, 86400, "seconds"));
        sub.add_flag("--all", o->all, "grade every step, also after one fails");
        sub.add_flag("--slurm", o->slurm, "write a Slurm job array (one task per submission) and submit it");
        sub.add_option("--partition", o->job.partition, "--slurm: the partition (default: the cluster's)");
        sub.add_option("--account", o->job.account, "--slurm: the account to charge");
        sub.add_option("--time", o->job.time, "--slurm: time limit per task, HH:MM:SS");
        sub.add_option("--gres", o->job.gres, "--slurm: GRES per task (default gpu:1; none: no GRES)");
        sub.add_option("--cpus-per-task", o->job.cpus_per_task, "--slurm: CPUs per task, for nvcc (default 4)");
        sub.add_option("--mem", o->job.mem, "--slurm: memory per task, e.g. 16G (default 16G)");
        sub.add_option("--max-running", o->job.max_running,
                       "--slurm: at most this many tasks at once (array throttle; default 8, 0: no limit)");
        sub.add_flag("--no-submit", o->no_submit, "--slurm: write the job script, do not run sbatch");
        return [o, &g] { return run_batch_command(*o, g); };
      }};
}

}  // namespace grader
